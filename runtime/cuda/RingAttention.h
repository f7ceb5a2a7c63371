// Ring attention's kernels on the CUDA backend (context parallelism, --cp-mode ring): one ring
// step's work on the key/value block of one context rank, which zrt_ring_attention
// (ContextParallel.cu) runs once per rank of the ring while the next block travels on NCCL.
// The layout and arithmetic are the CPU backend's (runtime/cpu/RingAttention.cpp): rank r holds
// chunks r and 2 cp - 1 - r of the sequence's 2 cp chunks, a (query chunk, key chunk) pair is
// skipped when every key follows every query, masked on its diagonal, whole otherwise; blocks
// merge by the online softmax; the gradient recomputes the row statistics and sums each block's
// key/value gradients in f32 as the block travels home.
//
// One thread per query row (or, for the key/value gradients, per key row), in f32 with the
// element type's inputs: every head size up to 256 and both dtypes, but no tensor cores yet.
#ifndef ZRT_CUDA_RING_ATTENTION_H
#define ZRT_CUDA_RING_ATTENTION_H

#include <cstdint>
#include <cuda_runtime.h>

namespace zrt::cuda {

/// One context rank's tokens: batch x tokens (its two chunks) of heads x headSize queries and
/// kvHeads x headSize keys and values; its place `rank` in a ring of `ranks`.
struct RingShape {
  int64_t batch, tokens, channels, heads, kvHeads;
  int64_t rank, ranks;
  int64_t headSize() const { return channels / heads; }
  int64_t kvChannels() const { return kvHeads * headSize(); }
  int64_t rows() const { return batch * heads * tokens; }             // query rows over every head
  int64_t kvElements() const { return batch * tokens * kvChannels(); } // one block's keys (or values)
  int32_t next() const { return static_cast<int32_t>((rank + 1) % ranks); }
  int32_t previous() const { return static_cast<int32_t>((rank + ranks - 1) % ranks); }
};

/// Stops with the reason when the shape is not one ring attention takes.
void checkRingShape(const char *call, const RingShape &s);

/// The forward's running state, f32: acc [batch, tokens, channels] (the unnormalized output), and
/// per query row the running maximum m and sum l. Begin resets it; End turns acc into the output
/// (written to `out` in `dtype` as well, when not null) and m into the row's log-sum-exp.
void ringAttentionBegin(const RingShape &s, float *acc, float *m, float *l, cudaStream_t stream);
/// Merges the block of context rank `source` (k, v: [batch, tokens, kvChannels] in `dtype`).
void ringAttentionStep(int32_t dtype, const RingShape &s, const void *q, const void *k, const void *v, int64_t source,
                       float *acc, float *m, float *l, cudaStream_t stream);
void ringAttentionEnd(int32_t dtype, const RingShape &s, float *acc, float *m, const float *l, void *out,
                      cudaStream_t stream);

/// The gradient's per-row delta = dot(dout, out) from the forward's normalized f32 output, and a
/// zeroed f32 dq accumulator [batch, tokens, channels].
void ringAttentionGradBegin(int32_t dtype, const RingShape &s, const void *dout, const float *out, float *delta,
                            float *dq, cudaStream_t stream);
/// The block of context rank `source`: adds its keys' share to this rank's dq, and this rank's
/// queries' share to the block's dk and dv (f32 [batch, tokens, kvChannels], travelling with it).
void ringAttentionGradStep(int32_t dtype, const RingShape &s, const void *dout, const void *q, const void *k,
                           const void *v, const float *lse, const float *delta, int64_t source, float *dq, float *dk,
                           float *dv, cudaStream_t stream);

} // namespace zrt::cuda

#endif // ZRT_CUDA_RING_ATTENTION_H
