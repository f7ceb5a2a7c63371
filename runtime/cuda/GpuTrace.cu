// --trace on the CUDA backend: timing events around every kernel entry point and transfer
// (GpuScope), turned into trace records on the host clock at the next wait for the device.
// Inside a step graph the events are the graph's event nodes, recorded again by each replay.
#include <cstdlib>
#include <cstring>

#include "cuda/CudaCheck.h"
#include "cuda/RuntimeState.h"

namespace zrt::cuda::abi {

namespace {
bool syncEachScope() {
  static const bool on = [] {
    const char *v = std::getenv("ZRT_CUDA_SYNC");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}
/// Inside a capture a plain record only orders the graph's work; an external record becomes an
/// event node that every replay records, so the trace can time the graph's kernels.
unsigned recordFlags(const CudaRuntime &r) { return r.capturing >= 0 ? cudaEventRecordExternal : cudaEventRecordDefault; }
} // namespace

GpuScope::GpuScope(const char *name, cudaStream_t stream, TraceTrack track, int64_t bytes)
    : name_(name), stream_(stream) {
  if (!trace::enabled.load(std::memory_order_relaxed) || !rt)
    return;
  CudaRuntime &r = *rt;
  if (!r.traceOrigin) {
    if (r.capturing >= 0)
      return; // the origin needs a wait, which a capture may not do; the eager first run set it
    ZRT_CUDA_CHECK(cudaEventCreate(&r.traceOrigin));
    ZRT_CUDA_CHECK(cudaEventRecord(r.traceOrigin, r.device->compute()));
    ZRT_CUDA_CHECK(cudaEventSynchronize(r.traceOrigin));
    r.traceOriginMicros = trace::nowMicros();
  }
  event_ = {name, track, bytes, take(r), take(r)};
  ZRT_CUDA_CHECK(cudaEventRecordWithFlags(event_.begin, stream_, recordFlags(r)));
  active_ = true;
}

GpuScope::~GpuScope() {
  if (syncEachScope() && rt && rt->capturing < 0) {
    cudaError_t status = cudaStreamSynchronize(stream_);
    if (status == cudaSuccess)
      status = cudaGetLastError();
    if (status != cudaSuccess)
      fatal(name_, "a kernel failed (ZRT_CUDA_SYNC): %s", cudaGetErrorString(status));
  }
  if (!active_)
    return;
  ZRT_CUDA_CHECK(cudaEventRecordWithFlags(event_.end, stream_, recordFlags(*rt)));
  rt->traced.push_back(event_);
}

cudaEvent_t GpuScope::take(CudaRuntime &r) {
  cudaEvent_t e;
  if (!r.freeEvents.empty()) {
    e = r.freeEvents.back();
    r.freeEvents.pop_back();
  } else {
    ZRT_CUDA_CHECK(cudaEventCreate(&e)); // timing on: the trace reads elapsed times
  }
  return e;
}

/// Every traced event pair since the last one becomes a trace
/// record on the host clock; eager events go back to the pool, a graph's stay with it.
void resolveTrace() {
  CudaRuntime &r = *rt;
  auto emit = [&](const CudaRuntime::GpuEvent &e) {
    float begin = 0, end = 0;
    if (cudaEventElapsedTime(&begin, r.traceOrigin, e.begin) != cudaSuccess ||
        cudaEventElapsedTime(&end, r.traceOrigin, e.end) != cudaSuccess) {
      // Not recorded yet (a graph captured but not launched). The failed call left its error as
      // the thread's last: clear it, or the next launch's check reports it as its own (it did,
      // "invalid argument", with --trace and graphs on an H200).
      (void)cudaGetLastError();
      return;
    }
    trace::record(e.name, e.track, r.traceOriginMicros + begin * 1e3, r.traceOriginMicros + end * 1e3, e.bytes);
  };
  if (r.capturing >= 0)
    return;
  for (const auto &e : r.traced) {
    emit(e);
    r.freeEvents.push_back(e.begin);
    r.freeEvents.push_back(e.end);
  }
  for (const auto &e : r.tracedReplays)
    emit(e);
  r.traced.clear();
  r.tracedReplays.clear();
}

} // namespace zrt::cuda::abi
