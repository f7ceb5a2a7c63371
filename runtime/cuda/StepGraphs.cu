// Step graphs on the CUDA backend (zrt_graph_begin/end/scalars): a region's first run is
// eager (it sizes the scratch, cuBLASLt's workspaces and NCCL's buffers: nothing may allocate
// inside a capture), the second is captured as one CUDA graph, NCCL included, and every later
// run replays it. The update's AdamW constants live in device memory, rewritten per step.
#include "cuda/CudaCheck.h"
#include "cuda/RuntimeState.h"
#include "core/Error.h"

namespace zrt::cuda::abi {
namespace {

CudaRuntime::StepGraph &stepGraph(const char *call, int32_t region) {
  CudaRuntime &r = current(call);
  if (region < 0 || region > 15)
    fatal(call, "region %d is not in [0, 16)", region);
  if (static_cast<int>(r.graphs.size()) <= region)
    r.graphs.resize(region + 1);
  return r.graphs[region];
}

void addCounters(zrt_counters &into, const zrt_counters &delta, int sign) {
  for (size_t k = 0; k < sizeof(into.calls) / sizeof(into.calls[0]); ++k) {
    into.calls[k] += sign * delta.calls[k];
    into.bytes_sent[k] += sign * delta.bytes_sent[k];
  }
  into.ring_attention_scores += sign * delta.ring_attention_scores; // kernels a replay runs again
}

} // namespace
} // namespace zrt::cuda::abi

using namespace zrt;
using namespace zrt::cuda::abi;

extern "C" {

int32_t zrt_graph_begin(int32_t region, int32_t enabled) {
  CudaRuntime &r = current("zrt_graph_begin");
  CudaRuntime::StepGraph &g = stepGraph("zrt_graph_begin", region);
  if (r.capturing >= 0)
    return 1;
  // Work a graph cannot replay marks it eagerOnly (HostOffload.cu); collectives through MPI wait on
  // the host (HostStagedCommunicator.h) and cannot be captured.
  if (!enabled || g.eagerOnly || !r.commCapturable) {
    r.eagerRegion = region;
    return 1;
  }
  if (g.exec)
    return 0; // zrt_graph_end replays it
  if (g.eagerRuns == 0) {
    r.eagerRegion = region;
    return 1;
  }
  if (!r.slots.host) { // the update's AdamW constants (zrt_adamw), before the capture may not allocate
    ZRT_CUDA_CHECK(cudaMallocHost(&r.slots.host, r.slots.kCapacity * sizeof(math::AdamWStep)));
    ZRT_CUDA_CHECK(cudaMalloc(&r.slots.device, r.slots.kCapacity * sizeof(math::AdamWStep)));
  }
  r.beforeCapture = r.counters;
  r.capturedLoss = nullptr;
  r.captureReplayable = true;
  r.slots.copyCaptured = false;
  r.slots.hyper.clear();
  r.tracedAtCapture = r.traced.size();
  ZRT_CUDA_CHECK(cudaStreamBeginCapture(compute(), cudaStreamCaptureModeThreadLocal));
  r.capturing = region;
  return 1;
}
double zrt_graph_end(int32_t region, double hostLoss) {
  CudaRuntime &r = current("zrt_graph_end");
  CudaRuntime::StepGraph &g = stepGraph("zrt_graph_end", region);
  if (r.eagerRegion == region)
    r.eagerRegion = -1;
  if (r.capturing == region) {
    cudaGraph_t graph = nullptr;
    cudaError_t captured = cudaStreamEndCapture(compute(), &graph);
    r.capturing = -1;
    if (captured != cudaSuccess)
      fatal("zrt_graph_end", "capturing the step as a CUDA graph failed (%s); run train.bin with --cuda-graphs off",
            cudaGetErrorString(captured));
    ZRT_CUDA_CHECK(cudaGraphInstantiate(&g.exec, graph, 0));
    ZRT_CUDA_CHECK(cudaGraphDestroy(graph));
    g.loss = r.capturedLoss;
    g.eagerOnly = !r.captureReplayable;
    g.traced.assign(r.traced.begin() + r.tracedAtCapture, r.traced.end()); // the graph's event nodes now
    r.traced.resize(r.tracedAtCapture);
    g.counted = zrt_counters{};
    addCounters(g.counted, r.counters, 1);
    addCounters(g.counted, r.beforeCapture, -1);
    addCounters(r.counters, g.counted, -1); // counted again below, as every replay is
  } else if (!g.exec) {
    ++g.eagerRuns;
    return hostLoss;
  }
  ZRT_CUDA_CHECK(cudaGraphLaunch(g.exec, compute()));
  addCounters(r.counters, g.counted, 1);
  r.tracedReplays.insert(r.tracedReplays.end(), g.traced.begin(), g.traced.end());
  const void *loss = g.loss;
  if (g.eagerOnly) { // right for this run (captured with its arguments), not for the next ones
    ZRT_CUDA_CHECK(cudaStreamSynchronize(compute())); // its one launch done before it goes
    ZRT_CUDA_CHECK(cudaGraphExecDestroy(g.exec));
    g.exec = nullptr;
  }
  return loss ? readLossAfter(loss) : hostLoss; // an update returns nothing and need not wait
}
void zrt_graph_scalars(double lr, int64_t step) {
  CudaRuntime &r = current("zrt_graph_scalars");
  for (size_t k = 0; k < r.slots.hyper.size(); ++k) {
    const auto &h = r.slots.hyper[k];
    r.slots.host[k] = math::adamwStep(lr, h.beta1, h.beta2, h.eps, h.weightDecay, step);
  }
}

} // extern "C"
