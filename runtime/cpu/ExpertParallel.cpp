// Expert parallelism's exchanges for the CPU backend (zrt_abi.def: zrt_ep_counts, zrt_ep_dispatch,
// zrt_ep_combine; the compiler's side: passes/ExpertParallel.cpp; which rows go where:
// core/ExpertExchange.h, shared with the CUDA backend).
#include "zrt/zrt.h"

#include <cstring>
#include <vector>

#include "core/Error.h"
#include "core/ExpertExchange.h"
#include "core/Trace.h"

namespace zrt::cpu {
void meshAllGather(int32_t axis, const float *send, float *recv, int64_t count); // Runtime.cpp
void meshAllToAllv(int32_t axis, const char *call, const void *send, const int64_t *sendRows, void *recv,
                   const int64_t *recvRows, int64_t rowBytes);                  // Runtime.cpp
} // namespace zrt::cpu

using namespace zrt;

namespace {

ExpertExchange exchangeOf(const char *call, const void *all, int64_t experts, int64_t ranks) {
  return expertExchange(call, all, experts, ranks, zrt_mesh_size(ZRT_AXIS_EXPERT), zrt_mesh_rank(ZRT_AXIS_EXPERT));
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
  ExpertExchange x = exchangeOf(call, all, experts, ranks);
  // Offsets are int32: gathered bit for bit as 32-bit words.
  cpu::meshAllGather(ZRT_AXIS_EXPERT, static_cast<const float *>(offsets), static_cast<float *>(all), experts + 1);
  checkExpertExchange(call, x, rows, maxRows);
  const std::vector<int32_t> local = localExpertOffsets(x);
  std::memcpy(localOffsets, local.data(), local.size() * sizeof(int32_t));
}

void zrt_ep_dispatch(int32_t dtype, const void *xs, const void *all, void *xr, int64_t localRows, int64_t cols,
                     int64_t experts, int64_t ranks, int64_t rows) {
  const char *call = "zrt_ep_dispatch";
  const size_t rowBytes = elementBytes(call, dtype) * static_cast<size_t>(cols);
  ExpertExchange x = exchangeOf(call, all, experts, ranks);
  const std::vector<int64_t> sendRows = x.outgoing(), recvRows = x.incoming();
  const int64_t total = x.received(x.me);
  checkExchangedRows(call, x.dispatched(), total, localRows, rows);
  // Received by source rank, then laid out by local expert, each expert's rows by source.
  std::vector<char> bySource(static_cast<size_t>(total) * rowBytes);
  cpu::meshAllToAllv(ZRT_AXIS_EXPERT, call, xs, sendRows.data(), bySource.data(), recvRows.data(),
                     static_cast<int64_t>(rowBytes));
  TraceScope trace("zrt_ep_dispatch layout", TraceTrack::Compute);
  char *out = static_cast<char *>(xr);
  std::vector<int64_t> sourceAt = ExpertExchange::blockStarts(recvRows);
  int64_t at = 0;
  x.forEachReceivedRun([&](int64_t s, int64_t, int64_t n) {
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
  ExpertExchange x = exchangeOf(call, all, experts, ranks);
  // Back to where they came from: ep_dispatch's counts reversed.
  const std::vector<int64_t> sendRows = x.incoming(), recvRows = x.outgoing();
  const int64_t total = x.received(x.me), mine = x.dispatched();
  checkExchangedRows(call, total, mine, rows, localRows);
  // The experts' rows in source order again (ep_dispatch's layout undone), then home.
  std::vector<char> bySource(static_cast<size_t>(total) * rowBytes);
  {
    TraceScope trace("zrt_ep_combine layout", TraceTrack::Compute);
    const char *in = static_cast<const char *>(yr);
    std::vector<int64_t> sourceAt = ExpertExchange::blockStarts(sendRows);
    int64_t at = 0;
    x.forEachReceivedRun([&](int64_t s, int64_t, int64_t n) {
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
