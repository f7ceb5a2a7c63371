// Context parallelism's data movement on the CUDA backend: the CPU backend's layout and steps
// (runtime/cpu/ContextParallel.cpp) as strided device copies on the compute stream, and the
// all-to-all on NCCL between them.
//
// Layout (Megatron-LM's, for causal balance): with cp ranks, the sequence is 2 cp chunks and
// context rank r holds chunk r then chunk 2 cp - 1 - r.
#include "core/Error.h"
#include "cuda/CudaCheck.h"
#include "cuda/RuntimeState.h"
#include "cuda/Scratch.h"

using namespace zrt;
using namespace zrt::cuda;
using namespace zrt::cuda::abi;

namespace {

int64_t chunkOf(int64_t ranks, int64_t r, int h) { return h == 0 ? r : 2 * ranks - 1 - r; }

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
    char *wholeAt = w + chunkOf(ranks, rank, h) * run, *partAt = p + h * run;
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
        copyRows(out + chunkOf(ranks, s, h) * half * group, sequencePitch, recv + s * block + h * half * group,
                 tokens * group, half * group, batch);
  } else {
    for (int64_t s = 0; s < ranks; ++s)
      for (int h = 0; h < 2; ++h)
        copyRows(send + s * block + h * half * group, tokens * group, in + chunkOf(ranks, s, h) * half * group,
                 sequencePitch, half * group, batch);
    runBlocking(args(Collective::AllToAll, dtype, send, recv, block / eb, 0, 0, -1, axis));
    for (int64_t q = 0; q < ranks; ++q)
      copyRows(out + q * group, width, recv + q * block, group, group, batch * tokens);
  }
}

} // extern "C"

// Ring attention (--cp-mode ring) has no CUDA kernels yet: zcc refuses --cp-mode ring with
// --target cuda, and a train.bin that calls these anyway stops with the reason.
extern "C" {

int64_t zrt_ring_exchange_start(int32_t, const void *, void *, int64_t, int32_t, int32_t) {
  fatal("zrt_ring_exchange_start", "ring attention is not implemented on the CUDA backend: use --cp-mode ulysses");
}
void zrt_ring_attention(int32_t, const void *, const void *, const void *, void *, int64_t, int64_t, int64_t, int64_t,
                        int64_t, int32_t) {
  fatal("zrt_ring_attention", "ring attention is not implemented on the CUDA backend: use --cp-mode ulysses");
}
void zrt_ring_attention_grad(int32_t, const void *, const void *, const void *, const void *, void *, void *, void *,
                             int64_t, int64_t, int64_t, int64_t, int64_t, int32_t) {
  fatal("zrt_ring_attention_grad", "ring attention is not implemented on the CUDA backend: use --cp-mode ulysses");
}
void zrt_rotary_context(int32_t, int32_t, const void *, void *, int64_t, int64_t, int64_t, int64_t, double, int32_t) {
  fatal("zrt_rotary_context", "ring attention is not implemented on the CUDA backend: use --cp-mode ulysses");
}

} // extern "C"
