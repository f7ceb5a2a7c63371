// Expert parallelism's exchanges for the CPU backend (zrt_abi.def: zrt_ep_counts, zrt_ep_dispatch,
// zrt_ep_combine; the compiler's side: passes/ExpertParallel.cpp; which rows go where:
// core/ExpertExchange.h, shared with the CUDA backend).
#include "zrt/zrt.h"

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "core/Communicator.h"
#include "core/Error.h"
#include "core/ExpertExchange.h"
#include "core/Trace.h"

namespace zrt::cpu {
void meshAllGather(int32_t axis, const float *send, float *recv, int64_t count); // Runtime.cpp
int64_t meshExchange(int32_t axis, const char *call, const std::vector<int64_t> &sendRows, int64_t rowBytes,
                     std::function<void(Communicator &)> move, bool async); // Runtime.cpp
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

} // extern "C"

namespace {

/// The received layout's runs in order (forEachReceivedRun's source ranks and row counts), read
/// from the counts when the exchange is issued: a started exchange may run after they changed.
std::vector<std::pair<int64_t, int64_t>> receivedRuns(const ExpertExchange &x) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  x.forEachReceivedRun([&](int64_t s, int64_t, int64_t n) { runs.push_back({s, n}); });
  return runs;
}

/// ep_dispatch: received by source rank, then laid out by local expert, each expert's rows by
/// source; the rows past them zero. Inline, or started (the handle).
int64_t dispatch(int32_t dtype, const void *xs, const void *all, void *xr, int64_t localRows, int64_t cols,
                 int64_t experts, int64_t ranks, int64_t rows, bool async) {
  const char *call = async ? "zrt_ep_dispatch_start" : "zrt_ep_dispatch";
  const int64_t rowBytes = static_cast<int64_t>(elementBytes(call, dtype)) * cols;
  const ExpertExchange x = exchangeOf(call, all, experts, ranks);
  const std::vector<int64_t> sendRows = x.outgoing(), recvRows = x.incoming();
  const int64_t total = x.received(x.me);
  checkExchangedRows(call, x.dispatched(), total, localRows, rows);
  const auto runs = receivedRuns(x);
  return cpu::meshExchange(ZRT_AXIS_EXPERT, call, sendRows, rowBytes, [=](Communicator &comm) {
    std::vector<char> bySource(static_cast<size_t>(total * rowBytes));
    comm.allToAllv(xs, sendRows.data(), bySource.data(), recvRows.data(), rowBytes);
    char *out = static_cast<char *>(xr);
    std::vector<int64_t> sourceAt = ExpertExchange::blockStarts(recvRows);
    int64_t at = 0;
    for (auto [s, n] : runs) {
      if (n > 0) // none received: no buffer to copy from (memcpy's pointers must not be null)
        std::memcpy(out + at * rowBytes, bySource.data() + sourceAt[s] * rowBytes, n * rowBytes);
      sourceAt[s] += n, at += n;
    }
    std::memset(out + at * rowBytes, 0, (rows - at) * rowBytes);
  }, async);
}

/// ep_combine: the experts' rows in source order again (ep_dispatch's layout undone), then home;
/// the rows past this rank's dispatched ones zero.
int64_t combine(int32_t dtype, const void *yr, const void *all, void *ys, int64_t localRows, int64_t cols,
                int64_t experts, int64_t ranks, int64_t rows, bool async) {
  const char *call = async ? "zrt_ep_combine_start" : "zrt_ep_combine";
  const int64_t rowBytes = static_cast<int64_t>(elementBytes(call, dtype)) * cols;
  const ExpertExchange x = exchangeOf(call, all, experts, ranks);
  // Back to where they came from: ep_dispatch's counts reversed.
  const std::vector<int64_t> sendRows = x.incoming(), recvRows = x.outgoing();
  const int64_t total = x.received(x.me), mine = x.dispatched();
  checkExchangedRows(call, total, mine, rows, localRows);
  const auto runs = receivedRuns(x);
  return cpu::meshExchange(ZRT_AXIS_EXPERT, call, sendRows, rowBytes, [=](Communicator &comm) {
    std::vector<char> bySource(static_cast<size_t>(total * rowBytes));
    const char *in = static_cast<const char *>(yr);
    std::vector<int64_t> sourceAt = ExpertExchange::blockStarts(sendRows);
    int64_t at = 0;
    for (auto [s, n] : runs) {
      if (n > 0)
        std::memcpy(bySource.data() + sourceAt[s] * rowBytes, in + at * rowBytes, n * rowBytes);
      sourceAt[s] += n, at += n;
    }
    comm.allToAllv(bySource.data(), sendRows.data(), ys, recvRows.data(), rowBytes);
    std::memset(static_cast<char *>(ys) + mine * rowBytes, 0, (localRows - mine) * rowBytes);
  }, async);
}

} // namespace

extern "C" {

void zrt_ep_dispatch(int32_t dtype, const void *xs, const void *all, void *xr, int64_t localRows, int64_t cols,
                     int64_t experts, int64_t ranks, int64_t rows) {
  dispatch(dtype, xs, all, xr, localRows, cols, experts, ranks, rows, /*async=*/false);
}
void zrt_ep_combine(int32_t dtype, const void *yr, const void *all, void *ys, int64_t localRows, int64_t cols,
                    int64_t experts, int64_t ranks, int64_t rows) {
  combine(dtype, yr, all, ys, localRows, cols, experts, ranks, rows, /*async=*/false);
}
int64_t zrt_ep_dispatch_start(int32_t dtype, const void *xs, const void *all, void *xr, int64_t localRows,
                              int64_t cols, int64_t experts, int64_t ranks, int64_t rows) {
  return dispatch(dtype, xs, all, xr, localRows, cols, experts, ranks, rows, /*async=*/true);
}
int64_t zrt_ep_combine_start(int32_t dtype, const void *yr, const void *all, void *ys, int64_t localRows,
                             int64_t cols, int64_t experts, int64_t ranks, int64_t rows) {
  return combine(dtype, yr, all, ys, localRows, cols, experts, ranks, rows, /*async=*/true);
}

} // extern "C"
