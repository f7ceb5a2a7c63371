// Buckets (zcc-bucket): several tensors in one buffer so one collective moves them all.
// Layout over `ranks`: tensor i is cut into `ranks` shards of s_i = ceil(n_i / ranks)
// elements (the last zero-padded) and chunk r of the bucket is shard r of every tensor,
// in order. A reduce-scatter of the bucket then leaves each rank its shard of every
// tensor; an all-gather of the chunks rebuilds every whole tensor.
#ifndef ZRT_CPU_BUCKET_H
#define ZRT_CPU_BUCKET_H

#include <cstdint>
#include <cstring>

namespace zrt::cpu {

/// Calls copy(tensor i, element offset in tensor, element offset in bucket, count) for
/// every run of real elements, and pad(offset in bucket, count) for the padding.
template <class Copy, class Pad>
void forEachBucketRun(int64_t count, const int64_t *numels, int64_t ranks, Copy copy, Pad pad) {
  int64_t chunk = 0;
  for (int64_t i = 0; i < count; ++i)
    chunk += (numels[i] + ranks - 1) / ranks;
  for (int64_t r = 0; r < ranks; ++r) {
    int64_t at = r * chunk;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t shard = (numels[i] + ranks - 1) / ranks, first = r * shard;
      const int64_t real = first >= numels[i] ? 0 : (numels[i] - first < shard ? numels[i] - first : shard);
      if (real > 0)
        copy(i, first, at, real);
      if (shard > real)
        pad(at + real, shard - real);
      at += shard;
    }
  }
}

inline void pack(size_t elementBytes, int64_t count, const void *const *inputs, const int64_t *numels,
                 int64_t ranks, void *out) {
  char *bucket = static_cast<char *>(out);
  forEachBucketRun(
      count, numels, ranks,
      [&](int64_t i, int64_t from, int64_t at, int64_t n) {
        std::memcpy(bucket + at * elementBytes, static_cast<const char *>(inputs[i]) + from * elementBytes,
                    n * elementBytes);
      },
      [&](int64_t at, int64_t n) { std::memset(bucket + at * elementBytes, 0, n * elementBytes); });
}

inline void unpack(size_t elementBytes, int64_t count, const void *in, const int64_t *numels, int64_t ranks,
                   void *const *outputs) {
  const char *bucket = static_cast<const char *>(in);
  forEachBucketRun(
      count, numels, ranks,
      [&](int64_t i, int64_t to, int64_t at, int64_t n) {
        std::memcpy(static_cast<char *>(outputs[i]) + to * elementBytes, bucket + at * elementBytes,
                    n * elementBytes);
      },
      [](int64_t, int64_t) {});
}

} // namespace zrt::cpu

#endif // ZRT_CPU_BUCKET_H
