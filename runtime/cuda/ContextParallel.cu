// Context parallelism on the CUDA backend: the CPU backend's layout and steps
// (runtime/cpu/ContextParallel.cpp) as strided device copies on the compute stream, and the
// all-to-all on NCCL between them (Ulysses); ring attention's exchange of key/value blocks on
// NCCL, overlapped with the kernels of RingAttention.cu (--cp-mode ring).
// The layout is zrt::math::contextChunk's (Megatron-LM's).
#include "core/Error.h"
#include "core/RotaryDims.h"
#include "cuda/CudaCheck.h"
#include "cuda/Kernels.h"
#include "cuda/RingAttention.h"
#include "cuda/RuntimeState.h"
#include "cuda/Scratch.h"

using namespace zrt;
using namespace zrt::cuda;
using namespace zrt::cuda::abi;

namespace {

/// `height` rows of `width` bytes from `src` (rows `srcPitch` apart) to `dst` (`dstPitch` apart).
void copyRows(void *dst, int64_t dstPitch, const void *src, int64_t srcPitch, int64_t width, int64_t height) {
  if (width > 0 && height > 0)
    ZRT_CUDA_CHECK(cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, width, height, cudaMemcpyDeviceToDevice,
                                     compute()));
}

} // namespace

extern "C" {

void zrt_context_chunks(int32_t axis, int64_t elementBytes, const void *whole, void *part, int64_t outer,
                        int64_t length, int64_t inner, int32_t inverse) {
  const int64_t ranks = zrt_mesh_size(axis), rank = zrt_mesh_rank(axis);
  if (length < 0 || length % (2 * ranks) != 0 || elementBytes <= 0 || outer < 0 || inner < 0)
    fatal("zrt_context_chunks", "%lld tokens do not split into 2 x %lld chunks", static_cast<long long>(length),
          static_cast<long long>(ranks));
  GpuScope trace("zrt_context_chunks", compute());
  const int64_t chunk = length / (2 * ranks), run = chunk * inner * elementBytes;
  const int64_t wholePitch = length * inner * elementBytes, partPitch = length / ranks * inner * elementBytes;
  auto *w = static_cast<char *>(const_cast<void *>(whole));
  auto *p = static_cast<char *>(part);
  if (inverse)
    ZRT_CUDA_CHECK(cudaMemsetAsync(w, 0, outer * wholePitch, compute()));
  for (int h = 0; h < 2; ++h) {
    char *wholeAt = w + math::contextChunk(ranks, rank, h) * run, *partAt = p + h * run;
    if (inverse)
      copyRows(wholeAt, wholePitch, partAt, partPitch, run, outer);
    else
      copyRows(partAt, partPitch, wholeAt, wholePitch, run, outer);
  }
}

void zrt_context_exchange(int32_t axis, int32_t dtype, const void *x, void *y, int64_t batch, int64_t tokens,
                          int64_t heads, int64_t headSize, int32_t toHeads) {
  const int64_t ranks = zrt_mesh_size(axis);
  if (tokens % 2 != 0 || heads % ranks != 0)
    fatal("zrt_context_exchange", "%lld tokens (2 chunks) and %lld heads do not split over %lld context ranks",
          static_cast<long long>(tokens), static_cast<long long>(heads), static_cast<long long>(ranks));
  GpuScope trace("zrt_context_exchange", compute());
  const int64_t eb = dtype == ZRT_DTYPE_BF16 ? 2 : 4;
  const int64_t width = heads * headSize * eb, group = width / ranks, half = tokens / 2;
  const int64_t block = batch * tokens * group; // bytes each rank sends each other
  // Two halves of one scratch: the packed blocks sent and received.
  char *send = reinterpret_cast<char *>(scratchFloats((2 * block * ranks + 3) / 4));
  char *recv = send + block * ranks;
  const auto *in = static_cast<const char *>(x);
  auto *out = static_cast<char *>(y);
  const int64_t sequencePitch = tokens * ranks * group; // one batch row of the whole sequence
  if (toHeads) {
    for (int64_t q = 0; q < ranks; ++q) // block q: this rank's tokens, heads group q
      copyRows(send + q * block, group, in + q * group, width, group, batch * tokens);
    runBlocking(args(Collective::AllToAll, dtype, send, recv, block / eb, 0, 0, -1, axis));
    for (int64_t s = 0; s < ranks; ++s) // block s: rank s's two chunks, into sequence order
      for (int h = 0; h < 2; ++h)
        copyRows(out + math::contextChunk(ranks, s, h) * half * group, sequencePitch, recv + s * block + h * half * group,
                 tokens * group, half * group, batch);
  } else {
    for (int64_t s = 0; s < ranks; ++s)
      for (int h = 0; h < 2; ++h)
        copyRows(send + s * block + h * half * group, tokens * group, in + math::contextChunk(ranks, s, h) * half * group,
                 sequencePitch, half * group, batch);
    runBlocking(args(Collective::AllToAll, dtype, send, recv, block / eb, 0, 0, -1, axis));
    for (int64_t q = 0; q < ranks; ++q)
      copyRows(out + q * group, width, recv + q * block, group, group, batch * tokens);
  }
}

} // extern "C"

namespace {

/// Ring attention's buffers, carved from the scratch (only these kernels and the ring's transfers
/// use it during one call): the forward's running state, and two travelling blocks, each
/// [dk | dv] in f32 (the gradient's) then [k | v] in the element type.
struct RingBuffers {
  float *acc, *m, *l, *delta, *dq;
  char *blocks[2];
  int64_t gradientBytes, kvBytes;
  RingBuffers(const RingShape &s, int64_t elementBytes, bool gradient) {
    const int64_t outputs = s.batch * s.tokens * s.channels, rows = s.rows();
    gradientBytes = gradient ? 2 * s.kvElements() * static_cast<int64_t>(sizeof(float)) : 0;
    kvBytes = 2 * s.kvElements() * elementBytes;
    const int64_t blockFloats = (gradientBytes + kvBytes + 3) / 4;
    acc = scratchFloats(outputs * (gradient ? 2 : 1) + rows * (gradient ? 3 : 2) + 2 * blockFloats);
    m = acc + outputs;
    l = m + rows;
    delta = gradient ? l + rows : nullptr;
    dq = gradient ? delta + rows : nullptr;
    blocks[0] = reinterpret_cast<char *>((gradient ? dq + outputs : l + rows));
    blocks[1] = blocks[0] + blockFloats * 4;
  }
  char *keys(int i) const { return blocks[i] + gradientBytes; }
  /// This rank's own keys and values into the first block, where every ring starts.
  void loadOwn(const void *k, const void *v) const {
    ZRT_CUDA_CHECK(cudaMemcpyAsync(keys(0), k, kvBytes / 2, cudaMemcpyDeviceToDevice, compute()));
    ZRT_CUDA_CHECK(cudaMemcpyAsync(keys(0) + kvBytes / 2, v, kvBytes / 2, cudaMemcpyDeviceToDevice, compute()));
  }
};

RingShape ringShape(const char *call, int32_t axis, int64_t batch, int64_t tokens, int64_t channels, int64_t heads,
                    int64_t kvHeads) {
  if (axis != ZRT_AXIS_CONTEXT)
    fatal(call, "the ring runs on the context axis (%d), got axis %d", ZRT_AXIS_CONTEXT, axis);
  RingShape s{batch, tokens, channels, heads, kvHeads, zrt_mesh_rank(axis), zrt_mesh_size(axis)};
  checkRingShape(call, s);
  return s;
}

int64_t elementBytes(const char *call, int32_t dtype) {
  if (dtype != ZRT_DTYPE_F32 && dtype != ZRT_DTYPE_BF16)
    fatal(call, "unknown dtype %d (0 = f32, 1 = bf16)", dtype);
  return dtype == ZRT_DTYPE_BF16 ? 2 : 4;
}

/// The query-key scores one ring step computes (rows x visible keys over both pairs of chunks),
/// the CPU backend's zrt_counters.ring_attention_scores.
int64_t stepScores(const RingShape &s, int64_t source) {
  const int64_t half = s.tokens / 2;
  int64_t pairs = 0;
  for (int qa = 0; qa < 2; ++qa)
    for (int ka = 0; ka < 2; ++ka) {
      const int64_t qc = math::contextChunk(s.ranks, s.rank, qa), kc = math::contextChunk(s.ranks, source, ka);
      pairs += kc > qc ? 0 : kc == qc ? half * (half + 1) / 2 : half * half;
    }
  return s.batch * s.heads * pairs;
}

/// The forward's ring: starting from this rank's own [k | v], each step merges the block it holds
/// while the next one travels from the previous rank; acc, m and l then hold every block's merge
/// (ringAttentionEnd turns them into the output and the log-sum-exp).
void forwardRing(CudaRuntime &r, int32_t dtype, const RingShape &s, const RingBuffers &b, const void *q, const void *k,
                 const void *v) {
  b.loadOwn(k, v);
  ringAttentionBegin(s, b.acc, b.m, b.l, compute());
  for (int64_t step = 0; step < s.ranks; ++step) {
    const int64_t source = (s.rank - step + s.ranks) % s.ranks;
    char *current = b.keys(step % 2);
    const int64_t handle = step + 1 < s.ranks ? zrt_ring_exchange_start(ZRT_AXIS_CONTEXT, current,
                                                                        b.keys((step + 1) % 2), b.kvBytes,
                                                                        s.next(), s.previous())
                                              : -1;
    {
      GpuScope trace("zrt_ring_attention", compute());
      ringAttentionStep(dtype, s, q, current, current + b.kvBytes / 2, source, b.acc, b.m, b.l, compute());
    }
    r.counters.ring_attention_scores += stepScores(s, source);
    if (handle >= 0)
      zrt_wait(handle);
  }
}

} // namespace

extern "C" {

// The ring's step on NCCL: this rank's block to the next rank and the previous rank's into `recv`,
// on the communication stream after the compute so far; zrt_wait makes compute wait for it.
int64_t zrt_ring_exchange_start(int32_t axis, const void *send, void *recv, int64_t bytes, int32_t to, int32_t from) {
  CudaRuntime &r = current("zrt_ring_exchange_start");
  if (axis != ZRT_AXIS_CONTEXT)
    fatal("zrt_ring_exchange_start", "the ring runs on the context axis (5), got axis %d", axis);
  Communicator *group = r.context.get();
  const int ranks = group ? group->size() : 1, rank = group ? group->rank() : 0;
  if (bytes < 0 || to < 0 || to >= ranks || from < 0 || from >= ranks)
    fatal("zrt_ring_exchange_start", "%lld bytes to rank %d from rank %d of a group of %d",
          static_cast<long long>(bytes), to, from, ranks);
  joinHostWork(r);
  r.device->commWaitsForCompute();
  if (to == rank && from == rank) { // a ring of one: the block stays
    ZRT_CUDA_CHECK(cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, r.device->comm()));
  } else {
    r.counters.calls[ZRT_COUNTER_RING] += 1;
    r.counters.bytes_sent[ZRT_COUNTER_RING] += bytes;
    GpuScope transfer("zrt_ring_exchange", r.device->comm(), TraceTrack::Communication, bytes);
    group->sendRecv(send, recv, bytes, to, from);
  }
  return inFlight(r, commDone(r));
}

void zrt_ring_attention(int32_t dtype, const void *q, const void *k, const void *v, void *out, int64_t batch,
                        int64_t tokens, int64_t channels, int64_t heads, int64_t kvHeads, int32_t axis) {
  CudaRuntime &r = current("zrt_ring_attention");
  const RingShape s = ringShape("zrt_ring_attention", axis, batch, tokens, channels, heads, kvHeads);
  const RingBuffers b(s, elementBytes("zrt_ring_attention", dtype), false);
  forwardRing(r, dtype, s, b, q, k, v);
  GpuScope trace("zrt_ring_attention", compute());
  ringAttentionEnd(dtype, s, b.acc, b.m, b.l, out, compute());
}

void zrt_ring_attention_grad(int32_t dtype, const void *dout, const void *q, const void *k, const void *v, void *dq,
                             void *dk, void *dv, int64_t batch, int64_t tokens, int64_t channels, int64_t heads,
                             int64_t kvHeads, int32_t axis) {
  CudaRuntime &r = current("zrt_ring_attention_grad");
  const RingShape s = ringShape("zrt_ring_attention_grad", axis, batch, tokens, channels, heads, kvHeads);
  const RingBuffers b(s, elementBytes("zrt_ring_attention_grad", dtype), true);
  // The forward's output and row statistics again (the CPU backend's order), then the blocks go
  // around once more with their key/value gradients, which end on the rank that owns them.
  forwardRing(r, dtype, s, b, q, k, v);
  {
    GpuScope trace("zrt_ring_attention_grad", compute());
    ringAttentionEnd(dtype, s, b.acc, b.m, b.l, nullptr, compute());
    ringAttentionGradBegin(dtype, s, dout, b.acc, b.delta, b.dq, compute());
    ZRT_CUDA_CHECK(cudaMemsetAsync(b.blocks[0], 0, b.gradientBytes, compute()));
    b.loadOwn(k, v);
  }
  const int64_t kvElements = s.kvElements();
  for (int64_t step = 0; step < s.ranks; ++step) {
    const int64_t source = (s.rank - step + s.ranks) % s.ranks;
    char *current = b.blocks[step % 2];
    auto *dkBlock = reinterpret_cast<float *>(current), *dvBlock = dkBlock + kvElements;
    const char *kBlock = b.keys(step % 2), *vBlock = kBlock + b.kvBytes / 2;
    {
      GpuScope trace("zrt_ring_attention_grad", compute());
      ringAttentionGradStep(dtype, s, dout, q, kBlock, vBlock, b.m, b.delta, source, b.dq, dkBlock, dvBlock,
                            compute());
    }
    r.counters.ring_attention_scores += stepScores(s, source);
    // The block and its gradients move on; after `ranks` steps each is home.
    zrt_wait(zrt_ring_exchange_start(ZRT_AXIS_CONTEXT, current, b.blocks[(step + 1) % 2],
                                     b.gradientBytes + b.kvBytes, s.next(), s.previous()));
  }
  GpuScope trace("zrt_ring_attention_grad", compute());
  const auto *home = reinterpret_cast<const float *>(b.blocks[s.ranks % 2]);
  cast(ZRT_DTYPE_F32, home, dtype, dk, kvElements, compute());
  cast(ZRT_DTYPE_F32, home + kvElements, dtype, dv, kvElements, compute());
  cast(ZRT_DTYPE_F32, b.dq, dtype, dq, s.batch * s.tokens * s.channels, compute());
}

void zrt_rotary_context(int32_t axis, int32_t dtype, const void *x, void *y, int64_t batch, int64_t time,
                        int64_t channels, int64_t heads, double theta, int32_t inverse, int64_t rotaryDims) {
  checkRotaryDims("zrt_rotary_context", channels, heads, rotaryDims);
  GpuScope trace("zrt_rotary_context", compute());
  rotaryContext(dtype, x, y, batch, time, channels, heads, theta, inverse != 0, rotaryDims, zrt_mesh_rank(axis),
                zrt_mesh_size(axis), compute());
}

} // extern "C"
