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

template <class T>
void embedding(const T *table, const int32_t *ids, T *out, int64_t count, int64_t vocab,
               int64_t channels) {
  checkIds("zrt_embedding", ids, count, vocab);
  parallelFor(count, 64, [&](int64_t i) {
    const T *row = table + static_cast<int64_t>(ids[i]) * channels;
    for (int64_t c = 0; c < channels; ++c)
      out[i * channels + c] = row[c];
  });
}

/// dtable = 0, then dtable[ids[i]] += dy[i] for every position. Parallel over
/// channels so repeated ids never race and every sum has a fixed order.
template <class T>
void embeddingGrad(const T *dy, const int32_t *ids, T *dtable, int64_t count, int64_t vocab,
                   int64_t channels) {
  using A = Acc<T>;
  checkIds("zrt_embedding_grad", ids, count, vocab);
  parallelFor(channels, 16, [&](int64_t c) {
    for (int64_t v = 0; v < vocab; ++v)
      dtable[v * channels + c] = T(A(0));
    for (int64_t i = 0; i < count; ++i) {
      T &cell = dtable[static_cast<int64_t>(ids[i]) * channels + c];
      cell = T(static_cast<A>(cell) + static_cast<A>(dy[i * channels + c]));
    }
  });
}

} // namespace zrt::cpu

#endif // ZRT_CPU_EMBEDDING_H
