// The vocabulary-parallel embedding and cross-entropy on the CUDA backend (tensor parallelism):
// the CPU backend's steps (runtime/cpu/VocabParallel.cpp) with the kernels of RowKernels.cu and
// NCCL on the tensor axis between them: an all-gather of the rows' maxima, an all-reduce of the
// sums of exponentials and the labels' logits. Everything stays on the streams: no host wait.
#include "core/Error.h"
#include "cuda/CudaCheck.h"
#include "cuda/Kernels.h"
#include "cuda/RuntimeState.h"
#include "cuda/Scratch.h"

using namespace zrt;
using namespace zrt::cuda;
using namespace zrt::cuda::abi;

namespace {

/// This rank's classes of the tensor axis' vocabulary.
VocabSlice vocabShard(const char *call, int64_t local) {
  if (local <= 0)
    fatal(call, "the vocabulary slice must be positive, got %lld", static_cast<long long>(local));
  CudaRuntime &r = current(call);
  const int64_t rank = r.meshRank[ZRT_AXIS_TENSOR], ranks = r.meshSize[ZRT_AXIS_TENSOR];
  return VocabSlice{rank * local, local, ranks * local};
}

/// Steps 1 and 2 and both collectives; the statistics live in the scratch, after the gathered
/// maxima: [ranks x rows gathered | rows own max | rows max | 2 x rows sums, labels' logits].
VocabRowStats rowStatistics(const char *call, int32_t dtype, const void *logits, const int32_t *labels, int64_t rows,
                            VocabSlice vocab, double softcap) {
  CudaRuntime &r = current(call);
  const int ranks = static_cast<int>(vocab.total / vocab.rows);
  float *gathered = scratchFloats((ranks + 4) * rows);
  float *own = gathered + ranks * rows;
  VocabRowStats stats{own + rows, own + 2 * rows, own + 3 * rows};
  vocabRowMaxima(dtype, logits, own, rows, vocab.rows, softcap, compute());
  runBlocking(args(Collective::AllGather, ZRT_DTYPE_F32, own, gathered, rows, 0, 0, -1, ZRT_AXIS_TENSOR));
  vocabSumExp(dtype, logits, labels, gathered, ranks, stats, rows, vocab, softcap, r.errors, compute());
  runBlocking(args(Collective::AllReduce, ZRT_DTYPE_F32, stats.sums, stats.sums, 2 * rows, 0, 0, -1, ZRT_AXIS_TENSOR));
  return stats;
}

} // namespace

extern "C" {

void zrt_embedding_vocab_shard(int32_t dt, const void *table, const void *ids, void *o, int64_t count,
                               int64_t vocabLocal, int64_t channels) {
  const char *call = "zrt_embedding_vocab_shard";
  GpuScope trace(call, compute());
  embedding(dt, table, static_cast<const int32_t *>(ids), o, count, vocabShard(call, vocabLocal), channels,
            current(call).errors + 1, compute());
}
void zrt_embedding_grad_vocab_shard(int32_t dt, const void *dy, const void *ids, void *dtable, int64_t count,
                                    int64_t vocabLocal, int64_t channels) {
  const char *call = "zrt_embedding_grad_vocab_shard";
  GpuScope trace(call, compute());
  embeddingGrad(dt, dy, static_cast<const int32_t *>(ids), dtable, count, vocabShard(call, vocabLocal), channels,
                compute());
}
void zrt_cross_entropy_vocab_shard(int32_t dt, const void *logits, const void *labels, void *loss, int64_t rows,
                                   int64_t classesLocal, double softcap) {
  const char *call = "zrt_cross_entropy_vocab_shard";
  GpuScope trace(call, compute());
  VocabSlice vocab = vocabShard(call, classesLocal);
  VocabRowStats stats = rowStatistics(call, dt, logits, static_cast<const int32_t *>(labels), rows, vocab, softcap);
  vocabLoss(stats, rows, static_cast<float *>(loss), compute());
}
void zrt_cross_entropy_grad_vocab_shard(int32_t dt, const void *dloss, const void *logits, const void *labels,
                                        void *dlogits, int64_t rows, int64_t classesLocal, double softcap) {
  const char *call = "zrt_cross_entropy_grad_vocab_shard";
  GpuScope trace(call, compute());
  VocabSlice vocab = vocabShard(call, classesLocal);
  VocabRowStats stats = rowStatistics(call, dt, logits, static_cast<const int32_t *>(labels), rows, vocab, softcap);
  vocabGrad(dt, static_cast<const float *>(dloss), logits, static_cast<const int32_t *>(labels), stats, dlogits, rows,
            vocab, softcap, compute());
}

} // extern "C"
