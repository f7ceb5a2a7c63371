// The extern "C" entry points of zrt_abi.def for the CUDA backend: the same contract as
// runtime/cpu (a train.bin compiled with --target=cuda links this instead), on device
// memory. This file: start-up, the arena, inputs and the kernels' entry points, which run on
// the compute stream. Collectives (Collectives.cu) run through NCCL on the communication
// stream, ordered with compute by events (a wait never blocks the host); step graphs are in
// StepGraphs.cu, --trace in GpuTrace.cu, the vocabulary-parallel loss in VocabParallel.cu.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "core/Communicator.h"
#include "core/Error.h"
#include "core/RotaryDims.h"
#include "core/Tiers.h"
#include "core/Trace.h"
#include "cpu/Bucket.h"
#include "cuda/CudaCheck.h"
#include "cuda/Kernels.h"
#include "cuda/Matmul.h"
#include "cuda/RuntimeState.h"

using namespace zrt;
using namespace zrt::cuda;

namespace zrt::cuda::abi {

CudaRuntime *rt = nullptr;

CudaRuntime &current(const char *call) {
  if (!rt)
    fatal(call, "zrt_init was not called");
  return *rt;
}
cudaStream_t compute() {
  CudaRuntime &r = current("zrt");
  joinHostWork(r);
  return r.device->compute();
}

namespace {

void checkDataErrors() {
  CudaRuntime &r = current("zrt_read_loss");
  int flags[4] = {0, 0, 0, 0};
  ZRT_CUDA_CHECK(cudaMemcpy(flags, r.errors, sizeof flags, cudaMemcpyDeviceToHost));
  if (flags[0])
    fatal("zrt_cross_entropy", "a label is outside [0, classes) in this step's batch");
  if (flags[1])
    fatal("zrt_embedding", "a token id is outside [0, vocabulary) in this step's batch");
  if (flags[3])
    fatal("zrt_moe", "a Mixture-of-Experts routing's rows or offsets lie outside its dispatched rows (a corrupt "
                     "routing): the kernels wrote nothing through them");
}

} // namespace

double readLossAfter(const void *loss) {
  float value = 0;
  ZRT_CUDA_CHECK(cudaStreamSynchronize(compute()));
  ZRT_CUDA_CHECK(cudaStreamSynchronize(rt->device->comm()));
  resolveTrace();
  checkDataErrors();
  ZRT_CUDA_CHECK(cudaMemcpy(&value, loss, sizeof value, cudaMemcpyDeviceToHost));
  return value;
}

} // namespace zrt::cuda::abi

using namespace zrt::cuda::abi;

extern "C" {

void *zrt_init(int64_t expectedWorldSize, int64_t arenaBytes) {
  if (rt)
    fatal("zrt_init", "called twice");
  rt = new CudaRuntime();
  rt->mpi = launchedByMpi();
  std::unique_ptr<Communicator> control = rt->mpi ? createMpiCommunicator(nullptr, nullptr) : createLocalCommunicator();
  rt->rank = control->rank();
  rt->ranks = control->size();
  rt->meshRank[ZRT_AXIS_DATA] = rt->rank; // until zrt_set_mesh splits the world
  rt->meshSize[ZRT_AXIS_DATA] = rt->ranks;
  if (expectedWorldSize != rt->ranks) {
    std::fprintf(stderr,
                 "zrt: rank %d: zrt_init: this program was compiled for %lld ranks but started with %d; run it "
                 "with mpirun -np %lld\n",
                 rt->rank, static_cast<long long>(expectedWorldSize), rt->ranks,
                 static_cast<long long>(expectedWorldSize));
    control->finalize();
    std::exit(1);
  }
  rt->device = std::make_unique<Device>(arenaBytes, rt->mpi); // stops with a clear message without a GPU
  // [2]: zrt_arena_all_finite's flag, [3]: a MoE routing's row outside its rows (MoeAbi.cu)
  ZRT_CUDA_CHECK(cudaMalloc(&rt->errors, 4 * sizeof(int)));
  ZRT_CUDA_CHECK(cudaMemset(rt->errors, 0, 4 * sizeof(int)));
  startCommunicator(*rt, std::move(control));
  rt->counters.arena_bytes = arenaBytes;
  return rt->device->arena();
}

void zrt_finalize() {
  CudaRuntime &r = current("zrt_finalize");
  ZRT_CUDA_CHECK(cudaDeviceSynchronize());
  tiers().nvme.drain(); // no transfer still reads or writes the staging freed below
  unpinHostTier(r);
  releaseSwapStaging(r);
  tiers().release();
  resolveTrace();
  trace::write(r.rank);
  for (auto &entry : r.inFlight)
    cudaEventDestroy(entry.second);
  for (auto &g : r.graphs)
    if (g.exec)
      cudaGraphExecDestroy(g.exec);
  if (r.slots.host)
    cudaFreeHost(r.slots.host);
  if (r.slots.device)
    cudaFree(r.slots.device);
  for (cudaEvent_t e : r.pool)
    cudaEventDestroy(e);
  for (void *p : r.inputs)
    cudaFree(p);
  for (auto &entry : r.constants)
    cudaFree(entry.second);
  cudaFree(r.errors);
  if (r.finiteFlags)
    cudaFree(r.finiteFlags);
  finalizeMesh(r);
  r.comm->finalize();
  r.device.reset();
  delete rt;
  rt = nullptr;
}

// The CUDA backend's collectives are enqueued, not run by a host thread: the watchdog
// is the CPU backend's; here NCCL's own timeout (NCCL_TIMEOUT) applies.
void zrt_set_comm_timeout(double) {}

int32_t zrt_rank() { return current("zrt_rank").rank; }
int32_t zrt_world_size() { return current("zrt_world_size").ranks; }

void *zrt_arena_ptr(int64_t offset, int64_t bytes) {
  CudaRuntime &r = current("zrt_arena_ptr");
  if (offset < 0 || bytes < 0 || offset + bytes > r.device->arenaBytes())
    fatal("zrt_arena_ptr", "[%lld, %lld) is outside the arena of %lld bytes", static_cast<long long>(offset),
          static_cast<long long>(offset + bytes), static_cast<long long>(r.device->arenaBytes()));
  r.counters.arena_high_water = std::max(r.counters.arena_high_water, offset + bytes);
  return r.device->arena() + offset;
}

void zrt_get_counters(void *out) {
  zrt_counters c = current("zrt_get_counters").counters;
  // The NVMe store's transfers (the swap schedule's) beside the host tier's copies.
  c.swap_read_bytes += tiers().nvme.bytesRead;
  c.swap_write_bytes += tiers().nvme.bytesWritten;
  c.swap_wait_seconds += tiers().nvme.waitSeconds;
  std::memcpy(out, &c, sizeof c);
}

void zrt_describe_backend(void *text, int64_t capacity) {
  CudaRuntime &r = current("zrt_describe_backend");
  cudaDeviceProp prop;
  ZRT_CUDA_CHECK(cudaGetDeviceProperties(&prop, r.device->id()));
  const std::string shared = describeDeviceShare(r.device->share(), r.device->id());
  if (capacity > 0)
    std::snprintf(static_cast<char *>(text), static_cast<size_t>(capacity),
                  "cuda: device %d %s (sm_%d%d, %.1f GiB%s%s), cuBLASLt matmuls, %s collectives", r.device->id(),
                  prop.name, prop.major, prop.minor, prop.totalGlobalMem / double(1 << 30), shared.empty() ? "" : "; ",
                  shared.c_str(), r.commDescription.c_str());
}

// cuBLASLt's heuristic picks each shape's algorithm when the shape first runs (cuda/Matmul.cu):
// nothing is timed here, so there is nothing to record either.
void zrt_plan_matmuls(const void *, int64_t rows, const void *, void *text, int64_t capacity) {
  current("zrt_plan_matmuls");
  if (capacity > 0)
    std::snprintf(static_cast<char *>(text), static_cast<size_t>(capacity),
                  "%lld product shape(s): cuBLASLt's heuristic (first algorithm), not timed",
                  static_cast<long long>(rows));
}
int64_t zrt_matmul_plan_text(void *text, int64_t capacity) {
  if (capacity > 0)
    static_cast<char *>(text)[0] = '\0';
  return 0;
}

// Host access happens between steps: the device is idle first (the streams are
// non-blocking, a plain cudaMemcpy would not wait for them).
void zrt_arena_write(int64_t offset, const void *src, int64_t bytes) {
  void *p = zrt_arena_ptr(offset, bytes);
  ZRT_CUDA_CHECK(cudaDeviceSynchronize());
  ZRT_CUDA_CHECK(cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice));
}
void zrt_arena_read(int64_t offset, void *dst, int64_t bytes) {
  void *p = zrt_arena_ptr(offset, bytes);
  ZRT_CUDA_CHECK(cudaDeviceSynchronize());
  ZRT_CUDA_CHECK(cudaMemcpy(dst, p, bytes, cudaMemcpyDeviceToHost));
}
void zrt_arena_fill(int64_t offset, int32_t byte, int64_t bytes) {
  ZRT_CUDA_CHECK(cudaMemsetAsync(zrt_arena_ptr(offset, bytes), byte, bytes, compute()));
}
int32_t zrt_arena_all_finite(int32_t dtype, int64_t offset, int64_t count) {
  const void *p = zrt_arena_ptr(offset, count * (dtype == 1 ? 2 : 4));
  int *flag = current("zrt_arena_all_finite").errors + 2;
  ZRT_CUDA_CHECK(cudaMemsetAsync(flag, 0, sizeof(int), compute()));
  nonFinite(dtype, p, count, flag, compute());
  int bad = 0;
  ZRT_CUDA_CHECK(cudaStreamSynchronize(compute()));
  ZRT_CUDA_CHECK(cudaMemcpy(&bad, flag, sizeof bad, cudaMemcpyDeviceToHost));
  return bad ? 0 : 1;
}
int64_t zrt_arena_first_nonfinite(int64_t count, const void *offsets, const void *elements, const void *dtypes) {
  CudaRuntime &r = current("zrt_arena_first_nonfinite");
  if (count <= 0)
    return -1;
  if (static_cast<int64_t>(r.finiteFlagCount) < count) { // once, at the first check
    if (r.finiteFlags)
      ZRT_CUDA_CHECK(cudaFree(r.finiteFlags));
    ZRT_CUDA_CHECK(cudaMalloc(&r.finiteFlags, count * sizeof(int)));
    r.finiteFlagCount = static_cast<size_t>(count);
  }
  ZRT_CUDA_CHECK(cudaMemsetAsync(r.finiteFlags, 0, count * sizeof(int), compute()));
  for (int64_t i = 0; i < count; ++i) {
    const int32_t dtype = static_cast<const int32_t *>(dtypes)[i];
    const int64_t n = static_cast<const int64_t *>(elements)[i];
    nonFinite(dtype, zrt_arena_ptr(static_cast<const int64_t *>(offsets)[i], n * (dtype == 1 ? 2 : 4)), n,
              r.finiteFlags + i, compute());
  }
  std::vector<int> flags(count);
  ZRT_CUDA_CHECK(cudaStreamSynchronize(compute()));
  ZRT_CUDA_CHECK(cudaMemcpy(flags.data(), r.finiteFlags, count * sizeof(int), cudaMemcpyDeviceToHost));
  for (int64_t i = 0; i < count; ++i)
    if (flags[i])
      return i;
  return -1;
}
/// The norm's device scalars ([local, total, kept norm], zeroed) and the f64 sum, at the first
/// add or reduce (eager: nothing allocates in a capture).
static void allocateGradNormScalars(CudaRuntime &r) {
  if (r.gradNormScalars)
    return;
  ZRT_CUDA_CHECK(cudaMalloc(&r.gradNormScalars, 3 * sizeof(float)));
  ZRT_CUDA_CHECK(cudaMemsetAsync(r.gradNormScalars, 0, 3 * sizeof(float), compute()));
  ZRT_CUDA_CHECK(cudaMalloc(&r.gradNormSum, sizeof(double)));
}
void zrt_grad_norm(int64_t count, const void *grads, const void *numels, const void *dtypes, const void *weights,
                   double maxNorm, void *norm, void *coef) {
  if (maxNorm < 0)
    fatal("zrt_grad_norm", "max_norm %g must be non-negative", maxNorm);
  zrt_grad_norm_add(count, grads, numels, dtypes, weights);
  zrt_grad_norm_reduce();
  zrt_grad_norm_finish(maxNorm, norm, coef);
}
void zrt_grad_norm_add(int64_t count, const void *grads, const void *numels, const void *dtypes,
                       const void *weights) {
  CudaRuntime &r = current("zrt_grad_norm_add");
  if (count < 0)
    fatal("zrt_grad_norm_add", "count %lld must be non-negative", static_cast<long long>(count));
  const size_t partials = static_cast<size_t>(std::max<int64_t>(count, 1)) * kGradNormBlocks;
  if (r.gradNormPartialCount < partials) { // at the first (eager) update: nothing allocates in a capture
    if (r.capturing >= 0)
      fatal("zrt_grad_norm", "the update's tensors changed inside a captured update");
    // Another program of the rank (an interleaved pipeline rank's first chunk) may have queued
    // its sums into the old buffer: they run before it goes. CUDA's cudaFree waits for the device
    // by itself; the CPU stand-in's (HIP-CPU) does not, and the queued kernels wrote freed memory.
    ZRT_CUDA_CHECK(cudaStreamSynchronize(compute()));
    if (r.gradNormPartials)
      ZRT_CUDA_CHECK(cudaFree(r.gradNormPartials));
    ZRT_CUDA_CHECK(cudaMalloc(&r.gradNormPartials, partials * sizeof(double)));
    r.gradNormPartialCount = partials;
  }
  allocateGradNormScalars(r);
  GpuScope trace("zrt_grad_norm", compute());
  for (int64_t i = 0; i < count; ++i)
    sumOfSquares(static_cast<int32_t>(static_cast<const int64_t *>(dtypes)[i]), static_cast<const void *const *>(grads)[i],
                 static_cast<const int64_t *>(numels)[i], static_cast<const double *>(weights)[i],
                 r.gradNormPartials + i * kGradNormBlocks, compute());
  sumPartials(r.gradNormPartials, count * kGradNormBlocks, /*first=*/!r.gradNormAdding, r.gradNormSum,
              r.gradNormScalars, compute());
  r.gradNormAdding = true;
  r.gradNormReduced = false;
}
void zrt_grad_norm_reduce() {
  CudaRuntime &r = current("zrt_grad_norm_reduce");
  allocateGradNormScalars(r);
  if (!r.gradNormAdding) // no add since the last reduce: the rank's sum is 0
    ZRT_CUDA_CHECK(cudaMemsetAsync(r.gradNormScalars, 0, sizeof(float), compute()));
  // Every rank of the mesh holds other pieces: the whole gradient's sum over all of them.
  zrt_all_reduce_on(ZRT_AXIS_WORLD, ZRT_DTYPE_F32, r.gradNormScalars, r.gradNormScalars + 1, 1, 0);
  r.gradNormAdding = false;
  r.gradNormReduced = true;
}
void zrt_grad_norm_finish(double maxNorm, void *norm, void *coef) {
  CudaRuntime &r = current("zrt_grad_norm_finish");
  if (maxNorm < 0)
    fatal("zrt_grad_norm_finish", "max_norm %g must be non-negative", maxNorm);
  if (!r.gradNormReduced)
    fatal("zrt_grad_norm_finish", "no zrt_grad_norm_reduce since the last zrt_grad_norm_add: the ranks' sum is "
                                  "not there yet");
  gradNormFinish(r.gradNormScalars + 1, maxNorm, static_cast<float *>(norm), static_cast<float *>(coef),
                 r.gradNormScalars + 2, compute());
  r.gradNormComputed = true;
}
double zrt_last_grad_norm() {
  CudaRuntime &r = current("zrt_last_grad_norm");
  if (!r.gradNormComputed)
    return std::nan("");
  float norm = 0;
  ZRT_CUDA_CHECK(cudaStreamSynchronize(compute()));
  ZRT_CUDA_CHECK(cudaMemcpy(&norm, r.gradNormScalars + 2, sizeof norm, cudaMemcpyDeviceToHost));
  return norm;
}
void *zrt_input_buffer(int64_t index, int64_t bytes) {
  CudaRuntime &r = current("zrt_input_buffer");
  if (index < 0 || bytes < 0)
    fatal("zrt_input_buffer", "index %lld and size %lld must be non-negative", static_cast<long long>(index),
          static_cast<long long>(bytes));
  if (static_cast<int64_t>(r.inputs.size()) <= index) {
    r.inputs.resize(index + 1, nullptr);
    r.inputBytes.resize(index + 1, 0);
  }
  if (r.inputBytes[index] < bytes) { // once, at start-up
    if (r.inputs[index])
      ZRT_CUDA_CHECK(cudaFree(r.inputs[index]));
    ZRT_CUDA_CHECK(cudaMalloc(&r.inputs[index], bytes > 0 ? bytes : 1));
    r.inputBytes[index] = bytes;
  }
  return r.inputs[index];
}
void zrt_input_write(int64_t index, const void *src, int64_t bytes) {
  CudaRuntime &r = current("zrt_input_write");
  if (index < 0 || index >= static_cast<int64_t>(r.inputs.size()) || bytes > r.inputBytes[index])
    fatal("zrt_input_write", "input %lld has no buffer of %lld bytes", static_cast<long long>(index),
          static_cast<long long>(bytes));
  // Pageable source: the copy is staged before this returns, so the caller may refill it.
  ZRT_CUDA_CHECK(cudaMemcpyAsync(r.inputs[index], src, bytes, cudaMemcpyHostToDevice, compute()));
}
void zrt_set_step_gates(int64_t count, const void *values) {
  CudaRuntime &r = current("zrt_set_step_gates");
  if (count < 0 || (count > 0 && !values))
    fatal("zrt_set_step_gates", "%lld values at %p", static_cast<long long>(count), values);
  if (r.capturing >= 0)
    fatal("zrt_set_step_gates", "called inside a captured region: the gates are set before the step");
  if (count > r.stepGateCapacity) { // once, at start-up
    if (r.stepGates)
      ZRT_CUDA_CHECK(cudaFree(r.stepGates));
    ZRT_CUDA_CHECK(cudaMalloc(&r.stepGates, count * sizeof(float)));
    r.stepGateCapacity = count;
  }
  r.stepGateCount = count;
  // Pageable source: staged before this returns; ordered before the step's kernels on the stream.
  if (count > 0)
    ZRT_CUDA_CHECK(cudaMemcpyAsync(r.stepGates, values, count * sizeof(float), cudaMemcpyHostToDevice, compute()));
}
void zrt_step_gate(int64_t index, void *out) {
  CudaRuntime &r = current("zrt_step_gate");
  if (index < 0 || index >= r.stepGateCount)
    fatal("zrt_step_gate", "gate %lld was never set (%lld set by zrt_set_step_gates)", static_cast<long long>(index),
          static_cast<long long>(r.stepGateCount));
  ZRT_CUDA_CHECK(cudaMemcpyAsync(out, r.stepGates + index, sizeof(float), cudaMemcpyDeviceToDevice, compute()));
}
void *zrt_constant(const void *data, int64_t bytes) {
  CudaRuntime &r = current("zrt_constant");
  auto it = r.constants.find(data);
  if (it != r.constants.end())
    return it->second;
  if (bytes < 0)
    fatal("zrt_constant", "size %lld must be non-negative", static_cast<long long>(bytes));
  if (r.capturing >= 0) // a capture may not allocate or copy synchronously; the eager run did
    fatal("zrt_constant", "a constant first used inside a captured region");
  void *device = nullptr;
  ZRT_CUDA_CHECK(cudaMalloc(&device, bytes > 0 ? bytes : 1));
  ZRT_CUDA_CHECK(cudaMemcpy(device, data, bytes, cudaMemcpyHostToDevice));
  r.constants.emplace(data, device);
  return device;
}
double zrt_read_loss(const void *loss) {
  CudaRuntime &r = current("zrt_read_loss");
  if (r.capturing >= 0) { // inside a capture: zrt_graph_end reads it once the graph ran
    r.capturedLoss = loss;
    return 0.0;
  }
  return readLossAfter(loss);
}
// --- Compute -------------------------------------------------------------------------------
void zrt_add(int32_t dt, const void *a, const void *b, void *o, int64_t n) {
  GpuScope trace("zrt_add", compute());
  add(dt, a, b, o, n, compute());
}
void zrt_sub(int32_t dt, const void *a, const void *b, void *o, int64_t n) {
  GpuScope trace("zrt_sub", compute());
  sub(dt, a, b, o, n, compute());
}
void zrt_mul(int32_t dt, const void *a, const void *b, void *o, int64_t n) {
  GpuScope trace("zrt_mul", compute());
  mul(dt, a, b, o, n, compute());
}
void zrt_scale(int32_t dt, const void *x, void *o, int64_t n, double f) {
  GpuScope trace("zrt_scale", compute());
  scale(dt, x, o, n, f, compute());
}
void zrt_cast(int32_t sdt, const void *src, int32_t ddt, void *dst, int64_t n) {
  GpuScope trace("zrt_cast", compute());
  cast(sdt, src, ddt, dst, n, compute());
}
void zrt_fill_zero(int32_t dt, void *x, int64_t n) {
  GpuScope trace("zrt_fill_zero", compute());
  fillZero(dt, x, n, compute());
}
void zrt_copy(int32_t dt, const void *src, void *dst, int64_t n) {
  GpuScope trace("zrt_copy", compute());
  copy(dt, src, dst, n, compute());
}
void zrt_take_shard(int32_t axis, int32_t dt, const void *whole, void *part, int64_t count) {
  GpuScope trace("zrt_take_shard", compute());
  const int64_t eb = dt == 1 ? 2 : 4;
  copy(dt, static_cast<const char *>(whole) + zrt_mesh_rank(axis) * count * eb, part, count, compute());
}
void zrt_bias_add(int32_t dt, const void *x, const void *bias, void *o, int64_t rows, int64_t cols) {
  GpuScope trace("zrt_bias_add", compute());
  biasAdd(dt, x, bias, o, rows, cols, compute());
}
void zrt_relu(int32_t dt, const void *x, void *o, int64_t n) {
  GpuScope trace("zrt_relu", compute());
  relu(dt, x, o, n, compute());
}
void zrt_relu_grad(int32_t dt, const void *dy, const void *x, void *dx, int64_t n) {
  GpuScope trace("zrt_relu_grad", compute());
  reluGrad(dt, dy, x, dx, n, compute());
}
void zrt_gelu(int32_t dt, const void *x, void *o, int64_t n) {
  GpuScope trace("zrt_gelu", compute());
  gelu(dt, x, o, n, compute());
}
void zrt_gelu_grad(int32_t dt, const void *dy, const void *x, void *dx, int64_t n) {
  GpuScope trace("zrt_gelu_grad", compute());
  geluGrad(dt, dy, x, dx, n, compute());
}
void zrt_gelu_erf(int32_t dt, const void *x, void *o, int64_t n) {
  GpuScope trace("zrt_gelu_erf", compute());
  geluErf(dt, x, o, n, compute());
}
void zrt_gelu_erf_grad(int32_t dt, const void *dy, const void *x, void *dx, int64_t n) {
  GpuScope trace("zrt_gelu_erf_grad", compute());
  geluErfGrad(dt, dy, x, dx, n, compute());
}
void zrt_silu(int32_t dt, const void *x, void *o, int64_t n) {
  GpuScope trace("zrt_silu", compute());
  silu(dt, x, o, n, compute());
}
void zrt_swiglu(int32_t dt, const void *g, const void *u, void *o, int64_t n) {
  GpuScope trace("zrt_swiglu", compute());
  swiglu(dt, g, u, o, n, compute());
}
void zrt_swiglu_grad(int32_t dt, const void *dy, const void *g, const void *u, void *dg, void *du, int64_t n) {
  GpuScope trace("zrt_swiglu_grad", compute());
  swigluGrad(dt, dy, g, u, dg, du, n, compute());
}
void zrt_silu_grad(int32_t dt, const void *dy, const void *x, void *dx, int64_t n) {
  GpuScope trace("zrt_silu_grad", compute());
  siluGrad(dt, dy, x, dx, n, compute());
}
void zrt_softmax(int32_t dt, const void *x, void *y, int64_t rows, int64_t cols) {
  GpuScope trace("zrt_softmax", compute());
  softmax(dt, x, y, rows, cols, compute());
}
void zrt_softmax_grad(int32_t dt, const void *dy, const void *y, void *dx, int64_t rows, int64_t cols) {
  GpuScope trace("zrt_softmax_grad", compute());
  softmaxGrad(dt, dy, y, dx, rows, cols, compute());
}
void zrt_layernorm(int32_t dt, const void *x, const void *g, const void *b, void *y, int64_t rows, int64_t cols,
                   double eps) {
  GpuScope trace("zrt_layernorm", compute());
  layernorm(dt, x, g, b, y, rows, cols, eps, compute());
}
void zrt_add_layernorm(int32_t dt, const void *a, const void *b, const void *g, const void *beta, void *sum, void *y,
                       int64_t rows, int64_t cols, double eps) {
  GpuScope trace("zrt_add_layernorm", compute());
  addLayernorm(dt, a, b, g, beta, sum, y, rows, cols, eps, compute());
}
void zrt_layernorm_grad_add(int32_t dt, const void *dy, const void *x, const void *g, const void *residual, void *dx,
                            void *dg, void *db, int64_t rows, int64_t cols, double eps) {
  GpuScope trace("zrt_layernorm_grad_add", compute());
  layernormGradAdd(dt, dy, x, g, residual, dx, dg, db, rows, cols, eps, compute());
}
void zrt_rmsnorm(int32_t dt, const void *x, const void *g, void *y, int64_t rows, int64_t cols, double eps,
                 double gainOffset) {
  GpuScope trace("zrt_rmsnorm", compute());
  rmsnorm(dt, x, g, y, rows, cols, eps, gainOffset, compute());
}
void zrt_rmsnorm_grad(int32_t dt, const void *dy, const void *x, const void *g, void *dx, void *dg, int64_t rows,
                      int64_t cols, double eps, double gainOffset) {
  GpuScope trace("zrt_rmsnorm_grad", compute());
  rmsnormGrad(dt, dy, x, g, dx, dg, rows, cols, eps, gainOffset, compute());
}
void zrt_rotary(int32_t dt, const void *x, void *y, int64_t batch, int64_t time, int64_t channels, int64_t heads,
                double theta, int32_t inverse, int64_t rotaryDims) {
  GpuScope trace("zrt_rotary", compute());
  checkRotaryDims("zrt_rotary", channels, heads, rotaryDims);
  rotary(dt, x, y, batch, time, channels, heads, theta, inverse != 0, rotaryDims, compute());
}
void zrt_layernorm_grad(int32_t dt, const void *dy, const void *x, const void *g, void *dx, void *dg, void *db,
                        int64_t rows, int64_t cols, double eps) {
  GpuScope trace("zrt_layernorm_grad", compute());
  layernormGrad(dt, dy, x, g, dx, dg, db, rows, cols, eps, compute());
}
void zrt_causal_attention(int32_t dt, const void *q, const void *k, const void *v, void *o, int64_t batch,
                          int64_t time, int64_t channels, int64_t heads, int64_t kvHeads, double scale, double softcap,
                          int64_t window) {
  GpuScope trace("zrt_causal_attention", compute());
  causalAttention(dt, q, k, v, o, batch, time, channels, heads, kvHeads, AttentionVariant{scale, softcap, window},
                  compute());
}
void zrt_causal_attention_grad(int32_t dt, const void *dout, const void *q, const void *k, const void *v, void *dq,
                               void *dk, void *dv, int64_t batch, int64_t time, int64_t channels, int64_t heads,
                               int64_t kvHeads, double scale, double softcap, int64_t window) {
  GpuScope trace("zrt_causal_attention_grad", compute());
  causalAttentionGrad(dt, dout, q, k, v, dq, dk, dv, batch, time, channels, heads, kvHeads,
                      AttentionVariant{scale, softcap, window}, compute());
}
void zrt_matmul(int32_t dt, const void *a, const void *b, void *c, int64_t batch, int64_t m, int64_t n, int64_t k,
                int32_t ta, int32_t tb, int32_t shared) {
  GpuScope trace("zrt_matmul", compute());
  matmul(dt, a, b, c, batch, m, n, k, ta != 0, tb != 0, shared != 0, compute());
}
void zrt_matmul_bias(int32_t dt, const void *a, const void *b, const void *bias, void *c, int64_t batch, int64_t m,
                     int64_t n, int64_t k, int32_t ta, int32_t tb, int32_t shared) {
  GpuScope trace("zrt_matmul_bias", compute());
  matmulEpilogue(Epilogue::Bias, dt, a, b, bias, nullptr, c, batch, m, n, k, ta != 0, tb != 0, shared != 0, compute());
}
void zrt_matmul_bias_gelu(int32_t dt, const void *a, const void *b, const void *bias, void *pre, void *o, int64_t batch,
                          int64_t m, int64_t n, int64_t k, int32_t ta, int32_t tb, int32_t shared) {
  GpuScope trace("zrt_matmul_bias_gelu", compute());
  matmulEpilogue(Epilogue::BiasGelu, dt, a, b, bias, pre, o, batch, m, n, k, ta != 0, tb != 0, shared != 0, compute());
}
void zrt_matmul_dgelu_bgrad(int32_t dt, const void *a, const void *b, const void *pre, void *dpre, void *dbias,
                            int64_t batch, int64_t m, int64_t n, int64_t k, int32_t ta, int32_t tb, int32_t shared) {
  GpuScope trace("zrt_matmul_dgelu_bgrad", compute());
  matmulEpilogue(Epilogue::DgeluBgrad, dt, a, b, dbias, const_cast<void *>(pre), dpre, batch, m, n, k, ta != 0,
                 tb != 0, shared != 0, compute());
}
void zrt_embedding(int32_t dt, const void *table, const void *ids, void *o, int64_t count, int64_t vocab,
                   int64_t channels) {
  GpuScope trace("zrt_embedding", compute());
  embedding(dt, table, static_cast<const int32_t *>(ids), o, count, VocabSlice{0, vocab, vocab}, channels, current("zrt_embedding").errors + 1,
            compute());
}
void zrt_embedding_grad(int32_t dt, const void *dy, const void *ids, void *dtable, int64_t count, int64_t vocab,
                        int64_t channels) {
  GpuScope trace("zrt_embedding_grad", compute());
  embeddingGrad(dt, dy, static_cast<const int32_t *>(ids), dtable, count, VocabSlice{0, vocab, vocab}, channels,
                compute());
}
void zrt_cross_entropy(int32_t dt, const void *logits, const void *labels, void *loss, int64_t rows, int64_t classes,
                       double softcap) {
  GpuScope trace("zrt_cross_entropy", compute());
  crossEntropy(dt, logits, static_cast<const int32_t *>(labels), static_cast<float *>(loss), rows, classes, softcap,
               current("zrt_cross_entropy").errors, compute());
}
void zrt_cross_entropy_grad(int32_t dt, const void *dloss, const void *logits, const void *labels, void *dlogits,
                            int64_t rows, int64_t classes, double softcap) {
  GpuScope trace("zrt_cross_entropy_grad", compute());
  crossEntropyGrad(dt, static_cast<const float *>(dloss), logits, static_cast<const int32_t *>(labels), dlogits, rows,
                   classes, softcap, current("zrt_cross_entropy_grad").errors, compute());
}
void zrt_matmul_cross_entropy(int32_t dt, const void *x, const void *w, const void *labels, const void *dloss,
                              void *loss, void *dx, void *dw, void *workspace, int64_t rows, int64_t classes,
                              int64_t channels, int32_t transW, int64_t chunkRows, double softcap) {
  GpuScope trace("zrt_matmul_cross_entropy", compute());
  matmulCrossEntropy(dt, x, w, static_cast<const int32_t *>(labels), static_cast<const float *>(dloss),
                     static_cast<float *>(loss), dx, dw, workspace, rows, classes, channels, transW != 0, chunkRows,
                     softcap, current("zrt_matmul_cross_entropy").errors, compute());
}
void zrt_matmul_cross_entropy_loss(int32_t dt, const void *x, const void *w, const void *labels, void *loss,
                                   void *workspace, int64_t rows, int64_t classes, int64_t channels, int32_t transW,
                                   int64_t chunkRows, double softcap) {
  GpuScope trace("zrt_matmul_cross_entropy_loss", compute());
  matmulCrossEntropyLoss(dt, x, w, static_cast<const int32_t *>(labels), static_cast<float *>(loss), workspace, rows,
                         classes, channels, transW != 0, chunkRows, softcap,
                         current("zrt_matmul_cross_entropy_loss").errors,
                         compute());
}
void zrt_mse(int32_t dt, const void *pred, const void *target, void *loss, int64_t n) {
  GpuScope trace("zrt_mse", compute());
  mse(dt, pred, target, static_cast<float *>(loss), n, compute());
}
void zrt_mse_grad(int32_t dt, const void *dloss, const void *pred, const void *target, void *dpred, int64_t n) {
  GpuScope trace("zrt_mse_grad", compute());
  mseGrad(dt, static_cast<const float *>(dloss), pred, target, dpred, n, compute());
}
void zrt_quantize(int32_t dt, const void *x, void *o, int64_t rows, int64_t cols, int64_t block, int32_t bits) {
  GpuScope trace("zrt_quantize", compute());
  quantize(dt, x, o, rows, cols, block, bits, compute());
}
void zrt_fake_quantize(int32_t dt, const void *x, const void *gate, void *y, int64_t n, int64_t groups, int64_t width,
                       int32_t bits, int32_t asymmetric) {
  GpuScope trace("zrt_fake_quantize", compute());
  if (bits < 2 || bits > 8 || n < 0 || groups < 1 || n % groups || width < 1 || (n / groups) % width)
    fatal("zrt_fake_quantize", "%lld values in %lld groups of runs of %lld at %d bits: groups must divide the values, "
          "runs a group, bits 2 to 8", static_cast<long long>(n), static_cast<long long>(groups),
          static_cast<long long>(width), bits);
  fakeQuantize(dt, x, gate, y, n, groups, width, bits, asymmetric != 0, compute());
}
void zrt_apply_mask(int32_t dt, const void *x, const void *gate, const void *mask, void *y, int64_t n, int64_t dim,
                    int64_t inner) {
  GpuScope trace("zrt_apply_mask", compute());
  if (n < 0 || !gate || !mask || dim < 1 || inner < 1)
    fatal("zrt_apply_mask", "%lld values, gate %p, mask %p of %lld values of %lld each", static_cast<long long>(n),
          gate, mask, static_cast<long long>(dim), static_cast<long long>(inner));
  applyMask(dt, x, gate, mask, y, n, dim, inner, compute());
}
void zrt_dequantize(int32_t dt, const void *q, void *y, int64_t rows, int64_t cols, int64_t block, int32_t bits) {
  GpuScope trace("zrt_dequantize", compute());
  dequantize(dt, q, y, rows, cols, block, bits, compute());
}
void zrt_reduce_sum(int32_t dt, const void *x, void *o, const void *shape, int32_t rank, int32_t mask) {
  GpuScope trace("zrt_reduce_sum", compute());
  reduceSum(dt, x, o, static_cast<const int64_t *>(shape), rank, mask, compute());
}
void zrt_transpose(int32_t dt, const void *x, void *o, const void *shape, int32_t rank, const void *perm) {
  GpuScope trace("zrt_transpose", compute());
  transpose(dt, x, o, static_cast<const int64_t *>(shape), rank, static_cast<const int64_t *>(perm), compute());
}
void zrt_slice(int32_t dt, const void *x, const void *xShape, void *o, const void *outShape, int32_t rank,
               const void *offsets) {
  GpuScope trace("zrt_slice", compute());
  slice(dt, x, static_cast<const int64_t *>(xShape), o, static_cast<const int64_t *>(outShape), rank,
        static_cast<const int64_t *>(offsets), compute());
}
void zrt_insert(int32_t dt, const void *box, const void *boxShape, void *dst, const void *dstShape, int32_t rank,
                const void *offsets) {
  GpuScope trace("zrt_insert", compute());
  insert(dt, box, static_cast<const int64_t *>(boxShape), dst, static_cast<const int64_t *>(dstShape), rank,
         static_cast<const int64_t *>(offsets), compute());
}
void zrt_pack(int32_t dt, int64_t count, const void *inputs, const void *numels, int64_t ranks, void *o) {
  GpuScope trace("zrt_pack", compute());
  const size_t eb = dt == 1 ? 2 : 4;
  const void *const *in = static_cast<const void *const *>(inputs);
  char *bucket = static_cast<char *>(o);
  cudaStream_t s = compute();
  cpu::forEachBucketRun(
      count, static_cast<const int64_t *>(numels), ranks,
      [&](int64_t i, int64_t from, int64_t at, int64_t n) {
        // cudaMemcpyDefault: a shard --offload-param cpu keeps in the (page-locked) host tier is
        // fetched by the copy engine, as the gather's input.
        ZRT_CUDA_CHECK(cudaMemcpyAsync(bucket + at * eb, static_cast<const char *>(in[i]) + from * eb, n * eb,
                                       cudaMemcpyDefault, s));
      },
      [&](int64_t at, int64_t n) { ZRT_CUDA_CHECK(cudaMemsetAsync(bucket + at * eb, 0, n * eb, s)); });
}
void zrt_unpack(int32_t dt, int64_t count, const void *i, const void *numels, int64_t ranks, const void *outputs) {
  GpuScope trace("zrt_unpack", compute());
  const size_t eb = dt == 1 ? 2 : 4;
  void *const *out = static_cast<void *const *>(outputs);
  const char *bucket = static_cast<const char *>(i);
  cudaStream_t s = compute();
  cpu::forEachBucketRun(
      count, static_cast<const int64_t *>(numels), ranks,
      [&](int64_t t, int64_t to, int64_t at, int64_t n) {
        ZRT_CUDA_CHECK(cudaMemcpyAsync(static_cast<char *>(out[t]) + to * eb, bucket + at * eb, n * eb,
                                       cudaMemcpyDeviceToDevice, s));
      },
      [](int64_t, int64_t) {});
}
void zrt_adamw(void *param, int32_t gdt, const void *grad, void *m, void *v, void *paramBf16, int64_t n, double lr,
               double beta1, double beta2, double eps, double weightDecay, int64_t step, const void *gradScale) {
  CudaRuntime &r = current("zrt_adamw");
  if (inHostTier(m)) { // ZeRO-Offload: the CPU updates it (HostOffload.cu)
    if (step < 1)
      fatal("zrt_adamw", "step %lld: steps count from 1", static_cast<long long>(step));
    HostUpdateChunk u;
    u.param = static_cast<float *>(param);
    u.gradDtype = gdt;
    u.grad = grad;
    u.m = static_cast<float *>(m);
    u.v = static_cast<float *>(v);
    u.paramBf16 = paramBf16;
    u.n = n;
    u.lr = lr, u.beta1 = beta1, u.beta2 = beta2, u.eps = eps, u.weightDecay = weightDecay, u.step = step;
    u.gradScale = static_cast<const float *>(gradScale);
    enqueueHostUpdate(r, "zrt_adamw", u);
    return;
  }
  GpuScope trace("zrt_adamw", compute());
  if (r.capturing >= 0) { // the constants from device memory: zrt_graph_scalars rewrites them per step
    auto &u = r.slots; // allocated by zrt_graph_begin: a capture may not allocate
    if (static_cast<int>(u.hyper.size()) >= u.kCapacity)
      fatal("zrt_adamw", "more than %d AdamW calls in one captured update; run with --cuda-graphs off", u.kCapacity);
    if (!u.copyCaptured) {
      ZRT_CUDA_CHECK(cudaMemcpyAsync(u.device, u.host, u.kCapacity * sizeof(math::AdamWStep),
                                     cudaMemcpyHostToDevice, compute()));
      u.copyCaptured = true;
    }
    const size_t k = u.hyper.size();
    u.hyper.push_back({beta1, beta2, eps, weightDecay});
    if (step < 1)
      fatal("zrt_adamw", "step %lld: steps count from 1", static_cast<long long>(step));
    u.host[k] = math::adamwStep(lr, beta1, beta2, eps, weightDecay, step); // this run's, read at the first launch
    adamwFrom(static_cast<float *>(param), gdt, grad, static_cast<float *>(m), static_cast<float *>(v), paramBf16, n,
              u.device + k, static_cast<const float *>(gradScale), compute());
    return;
  }
  adamw(static_cast<float *>(param), gdt, grad, static_cast<float *>(m), static_cast<float *>(v), paramBf16, n, lr,
        beta1, beta2, eps, weightDecay, step, static_cast<const float *>(gradScale), compute());
}
void zrt_sgd_momentum(void *param, int32_t gdt, const void *grad, void *buf, void *paramBf16, int64_t n, double lr,
                      double momentum, double weightDecay, const void *gradScale) {
  if (inHostTier(buf)) { // ZeRO-Offload: the CPU updates it (HostOffload.cu)
    HostUpdateChunk u;
    u.adamw = false;
    u.param = static_cast<float *>(param);
    u.gradDtype = gdt;
    u.grad = grad;
    u.m = static_cast<float *>(buf);
    u.paramBf16 = paramBf16;
    u.n = n;
    u.lr = lr, u.momentum = momentum, u.weightDecay = weightDecay;
    u.gradScale = static_cast<const float *>(gradScale);
    enqueueHostUpdate(current("zrt_sgd_momentum"), "zrt_sgd_momentum", u);
    return;
  }
  GpuScope trace("zrt_sgd_momentum", compute());
  current("zrt_sgd_momentum").captureReplayable = false; // lr is a kernel argument
  sgdMomentum(static_cast<float *>(param), gdt, grad, static_cast<float *>(buf), paramBf16, n, lr, momentum,
              weightDecay, static_cast<const float *>(gradScale), compute());
}

} // extern "C"
