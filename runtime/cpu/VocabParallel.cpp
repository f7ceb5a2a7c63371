// The vocabulary-parallel embedding and cross-entropy of the CPU backend (tensor parallelism):
// this rank's slice of the vocabulary is [r V, (r+1) V) of T V on tensor rank r of T. The loss
// and its gradient each combine the rows' maxima (an all-gather of one float per row) and the
// sums of exponentials with the labels' logits (one all-reduce of two floats per row) over the
// tensor axis; the backward recomputes both rather than keeping them from the forward, so the
// ops stay free of hidden state.
#include "zrt/zrt.h"

#include <vector>

#include "core/Error.h"
#include "core/Trace.h"
#include "cpu/Dispatch.h"
#include "cpu/Embedding.h"
#include "cpu/Loss.h"

namespace zrt::cpu {
void meshAllGather(int32_t axis, const float *send, float *recv, int64_t count); // Runtime.cpp
void meshAllReduce(int32_t axis, float *buffer, int64_t count);
} // namespace zrt::cpu

using namespace zrt;
using namespace zrt::cpu;

namespace {

/// This rank's classes of the tensor axis' vocabulary.
VocabRows vocabShard(const char *call, int64_t local) {
  if (local <= 0)
    fatal(call, "the vocabulary slice must be positive, got %lld", static_cast<long long>(local));
  const int64_t rank = zrt_mesh_rank(ZRT_AXIS_TENSOR), ranks = zrt_mesh_size(ZRT_AXIS_TENSOR);
  return VocabRows{rank * local, local, ranks * local};
}

/// The row maxima over the whole vocabulary, and (summed over the axis) each row's sum of
/// exp(logit - max) and its label's logit.
struct RowStatistics {
  std::vector<float> maxima, sums, labelLogits;
};

template <class T>
RowStatistics rowStatistics(const char *call, const T *logits, const int32_t *labels, int64_t rows,
                            VocabRows vocab, math::LogitCap<float> cap) {
  checkLabels(call, labels, rows, vocab.total);
  const int64_t ranks = vocab.total / vocab.rows;
  RowStatistics s;
  std::vector<float> mine(rows), all(rows * ranks);
  rowMaxima(logits, mine.data(), rows, vocab.rows, cap);
  meshAllGather(ZRT_AXIS_TENSOR, mine.data(), all.data(), rows);
  s.maxima.assign(rows, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    float m = all[r];
    for (int64_t k = 1; k < ranks; ++k)
      m = all[k * rows + r] > m ? all[k * rows + r] : m;
    s.maxima[r] = m;
  }
  std::vector<float> both(2 * rows); // sums, then the labels' logits: one collective
  sumExpAndLabelLogit(logits, labels, s.maxima.data(), both.data(), both.data() + rows, rows, vocab.rows,
                      vocab.first, cap);
  meshAllReduce(ZRT_AXIS_TENSOR, both.data(), 2 * rows);
  s.sums.assign(both.begin(), both.begin() + rows);
  s.labelLogits.assign(both.begin() + rows, both.end());
  return s;
}

} // namespace

extern "C" {

void zrt_embedding_vocab_shard(int32_t dtype, const void *table, const void *ids, void *o, int64_t count,
                               int64_t vocabLocal, int64_t channels) {
  const char *call = "zrt_embedding_vocab_shard";
  TraceScope trace(call, TraceTrack::Compute);
  VocabRows vocab = vocabShard(call, vocabLocal);
  ZRT_TYPED(call, dtype, embedding(in<T>(table), in<int32_t>(ids), out<T>(o), count, vocab, channels, call));
}

void zrt_embedding_grad_vocab_shard(int32_t dtype, const void *dy, const void *ids, void *dtable, int64_t count,
                                    int64_t vocabLocal, int64_t channels) {
  const char *call = "zrt_embedding_grad_vocab_shard";
  TraceScope trace(call, TraceTrack::Compute);
  VocabRows vocab = vocabShard(call, vocabLocal);
  ZRT_TYPED(call, dtype, embeddingGrad(in<T>(dy), in<int32_t>(ids), out<T>(dtable), count, vocab, channels, call));
}

void zrt_cross_entropy_vocab_shard(int32_t dtype, const void *logits, const void *labels, void *loss, int64_t rows,
                                   int64_t classesLocal, double softcap) {
  const char *call = "zrt_cross_entropy_vocab_shard";
  TraceScope trace(call, TraceTrack::Compute);
  VocabRows vocab = vocabShard(call, classesLocal);
  ZRT_TYPED(call, dtype, {
    RowStatistics s = rowStatistics(call, in<T>(logits), in<int32_t>(labels), rows, vocab, {float(softcap)});
    *out<float>(loss) = vocabParallelLoss(s.maxima.data(), s.sums.data(), s.labelLogits.data(), rows);
  });
}

void zrt_cross_entropy_grad_vocab_shard(int32_t dtype, const void *dloss, const void *logits, const void *labels,
                                        void *dlogits, int64_t rows, int64_t classesLocal, double softcap) {
  const char *call = "zrt_cross_entropy_grad_vocab_shard";
  TraceScope trace(call, TraceTrack::Compute);
  VocabRows vocab = vocabShard(call, classesLocal);
  ZRT_TYPED(call, dtype, {
    const math::LogitCap<float> cap{float(softcap)};
    RowStatistics s = rowStatistics(call, in<T>(logits), in<int32_t>(labels), rows, vocab, cap);
    vocabParallelGrad(*in<float>(dloss), in<T>(logits), in<int32_t>(labels), s.maxima.data(), s.sums.data(),
                      out<T>(dlogits), rows, vocab.rows, vocab.first, cap);
  });
}

} // extern "C"
