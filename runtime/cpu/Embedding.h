// Embedding lookup and its gradient (a scatter-add); ids are checked, never trusted.
#ifndef ZRT_CPU_EMBEDDING_H
#define ZRT_CPU_EMBEDDING_H

#include <cinttypes>
#include <cstdint>

#include "core/Error.h"
#include "cpu/Parallel.h"

namespace zrt::cpu {

inline void checkIds(const char *call, const int32_t *ids, int64_t count, int64_t vocab) {
  for (int64_t i = 0; i < count; ++i)
    if (ids[i] < 0 || ids[i] >= vocab)
      fatal(call, "id %" PRId32 " at position %" PRId64 " is outside [0, %" PRId64 ")", ids[i], i,
            vocab);
}

/// The table's rows of one vocabulary: all of it, or (tensor parallelism) rows
/// [first, first + rows) of `total`.
struct VocabRows {
  int64_t first, rows, total;
  bool holds(int32_t id) const { return id >= first && id < first + rows; }
};

template <class T>
void embedding(const T *table, const int32_t *ids, T *out, int64_t count, VocabRows vocab, int64_t channels,
               const char *call = "zrt_embedding") {
  checkIds(call, ids, count, vocab.total);
  parallelFor(count, 64, [&](int64_t i) {
    if (!vocab.holds(ids[i])) { // another rank's row: its part of the sum over the group is zero
      for (int64_t c = 0; c < channels; ++c)
        out[i * channels + c] = T(0.0f);
      return;
    }
    const T *row = table + (static_cast<int64_t>(ids[i]) - vocab.first) * channels;
    for (int64_t c = 0; c < channels; ++c)
      out[i * channels + c] = row[c];
  });
}

/// dtable = 0, then dtable[ids[i]] += dy[i] for every position whose row this table
/// holds. Parallel over channels so repeated ids never race and every sum has a fixed order.
template <class T>
void embeddingGrad(const T *dy, const int32_t *ids, T *dtable, int64_t count, VocabRows vocab, int64_t channels,
                   const char *call = "zrt_embedding_grad") {
  using A = Acc<T>;
  checkIds(call, ids, count, vocab.total);
  parallelFor(channels, 16, [&](int64_t c) {
    for (int64_t v = 0; v < vocab.rows; ++v)
      dtable[v * channels + c] = T(A(0));
    for (int64_t i = 0; i < count; ++i) {
      if (!vocab.holds(ids[i]))
        continue;
      T &cell = dtable[(static_cast<int64_t>(ids[i]) - vocab.first) * channels + c];
      cell = T(static_cast<A>(cell) + static_cast<A>(dy[i * channels + c]));
    }
  });
}

} // namespace zrt::cpu

#endif // ZRT_CPU_EMBEDDING_H
