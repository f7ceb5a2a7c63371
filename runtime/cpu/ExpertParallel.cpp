// Expert parallelism's exchanges for the CPU backend (zrt_abi.def: zrt_ep_counts, zrt_ep_dispatch,
// zrt_ep_combine; the compiler's side: passes/ExpertParallel.cpp). Rank r of an expert group of
// R holds experts [r E / R, (r + 1) E / R). A rank's dispatched rows are grouped by expert, so
// its rows for rank p's experts are one block; the receiving rank lays out what it receives by
// local expert, each expert's rows in source-rank order, which is what its grouped products
// read (local offsets).
#include "zrt/zrt.h"

#include <cstring>
#include <vector>

#include "core/Error.h"
#include "core/Trace.h"

namespace zrt::cpu {
void meshAllGather(int32_t axis, const float *send, float *recv, int64_t count); // Runtime.cpp
void meshAllToAllv(int32_t axis, const char *call, const void *send, const int64_t *sendRows, void *recv,
                   const int64_t *recvRows, int64_t rowBytes);                  // Runtime.cpp
} // namespace zrt::cpu

using namespace zrt;

namespace {

/// One expert group's routing: `all` [ranks, experts + 1], every rank's offsets.
struct Exchange {
  const int32_t *all;
  int64_t experts, ranks, me;
  int64_t local() const { return experts / ranks; }
  /// Rows rank `s` dispatched to expert `e`.
  int64_t rows(int64_t s, int64_t e) const { return all[s * (experts + 1) + e + 1] - all[s * (experts + 1) + e]; }
  /// Rows expert `e` receives from the whole group.
  int64_t toExpert(int64_t e) const {
    int64_t n = 0;
    for (int64_t s = 0; s < ranks; ++s)
      n += rows(s, e);
    return n;
  }
  /// Rows rank `s` sends rank `p` (its rows of p's experts: one block).
  int64_t block(int64_t s, int64_t p) const {
    return all[s * (experts + 1) + (p + 1) * local()] - all[s * (experts + 1) + p * local()];
  }
  /// The received layout, in order: for each local expert j, each source rank s's rows of it,
  /// `fn(s, n)` with their count n (ep_dispatch writes them so, ep_combine reads them back).
  template <class Fn> void forEachReceivedRun(Fn fn) const {
    for (int64_t j = 0; j < local(); ++j)
      for (int64_t s = 0; s < ranks; ++s)
        fn(s, rows(s, me * local() + j));
  }
  /// Where each source rank's block starts among `perSource` rows (the rows by source, in order).
  static std::vector<int64_t> blockStarts(const std::vector<int64_t> &perSource) {
    std::vector<int64_t> at(perSource.size(), 0);
    for (size_t p = 1; p < perSource.size(); ++p)
      at[p] = at[p - 1] + perSource[p - 1];
    return at;
  }
  /// What this rank sends each rank (its rows of their experts), and receives from each (their
  /// rows of its experts): ep_dispatch's counts, and reversed ep_combine's.
  std::vector<int64_t> outgoing() const {
    std::vector<int64_t> n(ranks);
    for (int64_t p = 0; p < ranks; ++p)
      n[p] = block(me, p);
    return n;
  }
  std::vector<int64_t> incoming() const {
    std::vector<int64_t> n(ranks);
    for (int64_t p = 0; p < ranks; ++p)
      n[p] = block(p, me);
    return n;
  }
  /// The rows this rank dispatched (its offsets' last).
  int64_t dispatched() const { return all[me * (experts + 1) + experts]; }
  /// Rows the experts of rank `p` receive in all.
  int64_t received(int64_t p) const {
    int64_t n = 0;
    for (int64_t s = 0; s < ranks; ++s)
      n += block(s, p);
    return n;
  }
};

Exchange exchangeOf(const char *call, const void *all, int64_t experts, int64_t ranks) {
  if (experts < 1 || ranks < 1 || experts % ranks != 0)
    fatal(call, "%lld experts over %lld expert-parallel ranks: they must divide", static_cast<long long>(experts),
          static_cast<long long>(ranks));
  if (zrt_mesh_size(ZRT_AXIS_EXPERT) != ranks)
    fatal(call, "compiled for %lld expert-parallel ranks, the mesh's expert groups have %d",
          static_cast<long long>(ranks), zrt_mesh_size(ZRT_AXIS_EXPERT));
  return Exchange{static_cast<const int32_t *>(all), experts, ranks, zrt_mesh_rank(ZRT_AXIS_EXPERT)};
}

size_t elementBytes(const char *call, int32_t dtype) {
  if (dtype != ZRT_DTYPE_F32 && dtype != ZRT_DTYPE_BF16)
    fatal(call, "unknown dtype %d (0 = f32, 1 = bf16)", dtype);
  return dtype == ZRT_DTYPE_F32 ? 4 : 2;
}

} // namespace

extern "C" {

void zrt_ep_counts(const void *offsets, void *all, void *localOffsets, int64_t experts, int64_t ranks, int64_t rows,
                   int64_t maxRows) {
  const char *call = "zrt_ep_counts";
  TraceScope trace(call, TraceTrack::Compute);
  Exchange x = exchangeOf(call, all, experts, ranks);
  // Offsets are int32: gathered bit for bit as 32-bit words.
  cpu::meshAllGather(ZRT_AXIS_EXPERT, static_cast<const float *>(offsets), static_cast<float *>(all), experts + 1);
  // Every rank of the group checks every rank's routing, so all reach the same verdict and stop
  // together, before any row moves.
  for (int64_t s = 0; s < ranks; ++s) {
    const int32_t *o = x.all + s * (experts + 1);
    for (int64_t e = 0; e < experts; ++e)
      if (o[0] != 0 || o[e + 1] < o[e])
        fatal(call, "expert-parallel rank %lld's offsets do not run from 0 without decreasing (expert %lld: %d to %d)",
              static_cast<long long>(s), static_cast<long long>(e), o[e], o[e + 1]);
  }
  for (int64_t e = 0; e < experts && maxRows > 0; ++e) {
    const int64_t got = x.toExpert(e);
    if (got > maxRows)
      fatal(call,
            "expert %lld received %lld rows in one routing, over the %lld the memory plan holds "
            "(zcc --moe-max-tokens-per-expert): compile with a larger bound, or without it (the worst case)",
            static_cast<long long>(e), static_cast<long long>(got), static_cast<long long>(maxRows));
  }
  for (int64_t p = 0; p < ranks; ++p)
    if (x.received(p) > rows)
      fatal(call, "expert-parallel rank %lld's experts receive %lld rows, over the plan's %lld (a corrupt routing)",
            static_cast<long long>(p), static_cast<long long>(x.received(p)), static_cast<long long>(rows));
  auto *local = static_cast<int32_t *>(localOffsets);
  local[0] = 0;
  for (int64_t j = 0; j < x.local(); ++j)
    local[j + 1] = static_cast<int32_t>(local[j] + x.toExpert(x.me * x.local() + j));
}

void zrt_ep_dispatch(int32_t dtype, const void *xs, const void *all, void *xr, int64_t localRows, int64_t cols,
                     int64_t experts, int64_t ranks, int64_t rows) {
  const char *call = "zrt_ep_dispatch";
  const size_t rowBytes = elementBytes(call, dtype) * static_cast<size_t>(cols);
  Exchange x = exchangeOf(call, all, experts, ranks);
  const std::vector<int64_t> sendRows = x.outgoing(), recvRows = x.incoming();
  const int64_t total = x.received(x.me);
  if (x.dispatched() > localRows || total > rows)
    fatal(call, "the routing's rows (%lld sent, %lld received) exceed the tensors' %lld and %lld rows",
          static_cast<long long>(x.dispatched()), static_cast<long long>(total), static_cast<long long>(localRows),
          static_cast<long long>(rows));
  // Received by source rank, then laid out by local expert, each expert's rows by source.
  std::vector<char> bySource(static_cast<size_t>(total) * rowBytes);
  cpu::meshAllToAllv(ZRT_AXIS_EXPERT, call, xs, sendRows.data(), bySource.data(), recvRows.data(),
                     static_cast<int64_t>(rowBytes));
  TraceScope trace("zrt_ep_dispatch layout", TraceTrack::Compute);
  char *out = static_cast<char *>(xr);
  std::vector<int64_t> sourceAt = Exchange::blockStarts(recvRows);
  int64_t at = 0;
  x.forEachReceivedRun([&](int64_t s, int64_t n) {
    if (n > 0) // none received: no buffer to copy from (memcpy's pointers must not be null)
      std::memcpy(out + at * rowBytes, bySource.data() + sourceAt[s] * rowBytes, n * rowBytes);
    sourceAt[s] += n, at += n;
  });
  std::memset(out + at * rowBytes, 0, (rows - at) * rowBytes);
}

void zrt_ep_combine(int32_t dtype, const void *yr, const void *all, void *ys, int64_t localRows, int64_t cols,
                    int64_t experts, int64_t ranks, int64_t rows) {
  const char *call = "zrt_ep_combine";
  const size_t rowBytes = elementBytes(call, dtype) * static_cast<size_t>(cols);
  Exchange x = exchangeOf(call, all, experts, ranks);
  // Back to where they came from: ep_dispatch's counts reversed.
  const std::vector<int64_t> sendRows = x.incoming(), recvRows = x.outgoing();
  const int64_t total = x.received(x.me), mine = x.dispatched();
  if (mine > localRows || total > rows)
    fatal(call, "the routing's rows (%lld sent back, %lld received) exceed the tensors' %lld and %lld rows",
          static_cast<long long>(total), static_cast<long long>(mine), static_cast<long long>(rows),
          static_cast<long long>(localRows));
  // The experts' rows in source order again (ep_dispatch's layout undone), then home.
  std::vector<char> bySource(static_cast<size_t>(total) * rowBytes);
  {
    TraceScope trace("zrt_ep_combine layout", TraceTrack::Compute);
    const char *in = static_cast<const char *>(yr);
    std::vector<int64_t> sourceAt = Exchange::blockStarts(sendRows);
    int64_t at = 0;
    x.forEachReceivedRun([&](int64_t s, int64_t n) {
      if (n > 0)
        std::memcpy(bySource.data() + sourceAt[s] * rowBytes, in + at * rowBytes, n * rowBytes);
      sourceAt[s] += n, at += n;
    });
  }
  cpu::meshAllToAllv(ZRT_AXIS_EXPERT, call, bySource.data(), sendRows.data(), ys, recvRows.data(),
                     static_cast<int64_t>(rowBytes));
  std::memset(static_cast<char *>(ys) + mine * rowBytes, 0, (localRows - mine) * rowBytes);
}

} // extern "C"
