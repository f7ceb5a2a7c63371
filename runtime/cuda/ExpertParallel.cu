// Expert parallelism's exchanges for the CUDA backend (zrt_abi.def: zrt_ep_counts, zrt_ep_dispatch,
// zrt_ep_combine; which rows go where: core/ExpertExchange.h, as the CPU backend's). How many rows
// go to each rank is known only once the routing ran, on the device; NCCL's sends take their
// counts from the host, so each call reads the group's offsets (a few hundred bytes) back first,
// as Megatron-Core's all-to-all dispatcher reads its token counts, and the step runs without CUDA
// graphs (zrt_set_experts). The rows then move as point-to-point messages, one per (local
// expert, source rank) run, straight from the sender's dispatched rows into the receiver's layout
// by local expert: no staging copy on either side (Collectives.cu's exchangeOnAxis).
#include "zrt/zrt.h"

#include <cstring>
#include <vector>

#include "core/Error.h"
#include "core/ExpertExchange.h"
#include "cuda/CudaCheck.h"
#include "cuda/RuntimeState.h"

using namespace zrt;
using namespace zrt::cuda;
using namespace zrt::cuda::abi;

namespace {

/// The group's offsets [ranks, experts + 1] from the device, after the work queued so far.
std::vector<int32_t> groupOffsets(const void *all, int64_t experts, int64_t ranks) {
  std::vector<int32_t> host(static_cast<size_t>(ranks * (experts + 1)));
  ZRT_CUDA_CHECK(cudaStreamSynchronize(compute()));
  ZRT_CUDA_CHECK(cudaMemcpy(host.data(), all, host.size() * sizeof(int32_t), cudaMemcpyDeviceToHost));
  return host;
}

/// `all` on the host (null: only the group checked against the program).
ExpertExchange exchangeOf(const char *call, const int32_t *all, int64_t experts, int64_t ranks) {
  return expertExchange(call, all, experts, ranks, zrt_mesh_size(ZRT_AXIS_EXPERT), zrt_mesh_rank(ZRT_AXIS_EXPERT));
}

int64_t rowBytesOf(const char *call, int32_t dtype, int64_t cols) {
  if (dtype != ZRT_DTYPE_F32 && dtype != ZRT_DTYPE_BF16)
    fatal(call, "unknown dtype %d (0 = f32, 1 = bf16)", dtype);
  if (cols < 0)
    fatal(call, "%lld columns", static_cast<long long>(cols));
  return (dtype == ZRT_DTYPE_F32 ? 4 : 2) * cols;
}

/// This rank's dispatched rows as messages, one per expert with rows, to the rank holding it:
/// ep_dispatch's sends and ep_combine's receives (`rows` is the tensor of dispatched rows).
std::vector<PeerMessage> byExpert(const ExpertExchange &x, const void *rows, int64_t rowBytes) {
  std::vector<PeerMessage> messages;
  for (int64_t e = 0; e < x.experts; ++e)
    if (const int64_t n = x.rows(x.me, e); n > 0)
      messages.push_back({static_cast<const char *>(rows) + x.start(x.me, e) * rowBytes, n,
                          static_cast<int>(e / x.local())});
  return messages;
}

/// The received layout as messages, one per (local expert, source rank) run with rows, from or to
/// that rank: ep_dispatch's receives and ep_combine's sends. Each source's runs come in its
/// experts' order, as byExpert lists them on its side, so the messages pair.
std::vector<PeerMessage> byReceivedRun(const ExpertExchange &x, const void *rows, int64_t rowBytes, int64_t *total) {
  std::vector<PeerMessage> messages;
  int64_t at = 0;
  x.forEachReceivedRun([&](int64_t s, int64_t, int64_t n) {
    if (n > 0)
      messages.push_back({static_cast<const char *>(rows) + at * rowBytes, n, static_cast<int>(s)});
    at += n;
  });
  *total = at;
  return messages;
}

/// ep_dispatch (or, `dispatch` false, ep_combine): the group's offsets read back, the messages
/// from this rank's rows by expert into the receivers' layout by run (or back), the rows past the
/// received ones zero. Blocking, or started (the handle).
int64_t exchange(bool dispatch, bool async, int32_t dtype, const void *in, const void *all, void *out,
                 int64_t localRows, int64_t cols, int64_t experts, int64_t ranks, int64_t rows) {
  const char *call = dispatch ? (async ? "zrt_ep_dispatch_start" : "zrt_ep_dispatch")
                              : (async ? "zrt_ep_combine_start" : "zrt_ep_combine");
  const int64_t rowBytes = rowBytesOf(call, dtype, cols);
  const std::vector<int32_t> host = groupOffsets(all, experts, ranks);
  const ExpertExchange x = exchangeOf(call, host.data(), experts, ranks);
  int64_t received = 0;
  if (dispatch) {
    checkExchangedRows(call, x.dispatched(), x.received(x.me), localRows, rows);
    const std::vector<PeerMessage> recvs = byReceivedRun(x, out, rowBytes, &received);
    return exchangeOnAxis(ZRT_AXIS_EXPERT, call, byExpert(x, in, rowBytes), recvs, rowBytes,
                          static_cast<char *>(out) + received * rowBytes, (rows - received) * rowBytes, async);
  }
  // Back to where they came from: ep_dispatch's messages reversed.
  checkExchangedRows(call, x.received(x.me), x.dispatched(), rows, localRows);
  const std::vector<PeerMessage> sends = byReceivedRun(x, in, rowBytes, &received);
  return exchangeOnAxis(ZRT_AXIS_EXPERT, call, sends, byExpert(x, out, rowBytes), rowBytes,
                        static_cast<char *>(out) + x.dispatched() * rowBytes, (localRows - x.dispatched()) * rowBytes,
                        async);
}

} // namespace

extern "C" {

void zrt_ep_counts(const void *offsets, void *all, void *localOffsets, int64_t experts, int64_t ranks, int64_t rows,
                   int64_t maxRows) {
  const char *call = "zrt_ep_counts";
  exchangeOf(call, nullptr, experts, ranks); // the group checked before anything is sent
  // Offsets are int32: gathered bit for bit as 32-bit words.
  runBlocking(args(Collective::AllGather, ZRT_DTYPE_F32, offsets, all, experts + 1, 0, 0, -1, ZRT_AXIS_EXPERT));
  const std::vector<int32_t> host = groupOffsets(all, experts, ranks);
  const ExpertExchange x = exchangeOf(call, host.data(), experts, ranks);
  checkExpertExchange(call, x, rows, maxRows);
  const std::vector<int32_t> local = localExpertOffsets(x);
  // The compute stream is idle (groupOffsets waited for it): a plain copy is in order.
  ZRT_CUDA_CHECK(cudaMemcpy(localOffsets, local.data(), local.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
}

void zrt_ep_dispatch(int32_t dtype, const void *xs, const void *all, void *xr, int64_t localRows, int64_t cols,
                     int64_t experts, int64_t ranks, int64_t rows) {
  exchange(true, false, dtype, xs, all, xr, localRows, cols, experts, ranks, rows);
}
void zrt_ep_combine(int32_t dtype, const void *yr, const void *all, void *ys, int64_t localRows, int64_t cols,
                    int64_t experts, int64_t ranks, int64_t rows) {
  exchange(false, false, dtype, yr, all, ys, localRows, cols, experts, ranks, rows);
}
int64_t zrt_ep_dispatch_start(int32_t dtype, const void *xs, const void *all, void *xr, int64_t localRows,
                              int64_t cols, int64_t experts, int64_t ranks, int64_t rows) {
  return exchange(true, true, dtype, xs, all, xr, localRows, cols, experts, ranks, rows);
}
int64_t zrt_ep_combine_start(int32_t dtype, const void *yr, const void *all, void *ys, int64_t localRows,
                             int64_t cols, int64_t experts, int64_t ranks, int64_t rows) {
  return exchange(false, true, dtype, yr, all, ys, localRows, cols, experts, ranks, rows);
}

} // extern "C"
