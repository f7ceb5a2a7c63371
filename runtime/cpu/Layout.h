// Layout kernels on row-major tensors of rank <= 8: reduce_sum over an axis set, transpose,
// and copying boxes out of (slice) and into (insert) a larger tensor.
#ifndef ZRT_CPU_LAYOUT_H
#define ZRT_CPU_LAYOUT_H

#include <array>
#include <cstdint>

#include "core/Error.h"
#include "cpu/Parallel.h"

namespace zrt::cpu {

constexpr int kMaxRank = 8;
using Dims = std::array<int64_t, kMaxRank>;

inline void checkRank(const char *call, int rank) {
  if (rank < 0 || rank > kMaxRank)
    fatal(call, "rank %d is outside [0, %d]", rank, kMaxRank);
}

inline int64_t numElements(const int64_t *shape, int rank) {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i)
    n *= shape[i];
  return n;
}

/// Row-major strides of `shape`.
inline Dims stridesOf(const int64_t *shape, int rank) {
  Dims strides{};
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

/// Sums over the axes whose bit is set in `axesMask`; the output has the
/// remaining axes in order. Each output element sums its inputs in index
/// order, so results do not depend on the thread count.
template <class T>
void reduceSum(const T *x, T *out, const int64_t *shape, int rank, int32_t axesMask) {
  using A = Acc<T>;
  checkRank("zrt_reduce_sum", rank);
  Dims strides = stridesOf(shape, rank);
  Dims keptDims{}, keptStrides{}, redDims{}, redStrides{};
  int kept = 0, reduced = 0;
  int64_t outCount = 1, redCount = 1;
  for (int i = 0; i < rank; ++i) {
    if (axesMask & (1 << i)) {
      redDims[reduced] = shape[i];
      redStrides[reduced++] = strides[i];
      redCount *= shape[i];
    } else {
      keptDims[kept] = shape[i];
      keptStrides[kept++] = strides[i];
      outCount *= shape[i];
    }
  }
  parallelFor(outCount, 64, [&](int64_t o) {
    int64_t base = 0, rem = o;
    for (int i = kept - 1; i >= 0; --i) {
      base += (rem % keptDims[i]) * keptStrides[i];
      rem /= keptDims[i];
    }
    A sum = 0;
    for (int64_t r = 0; r < redCount; ++r) {
      int64_t offset = base, rr = r;
      for (int i = reduced - 1; i >= 0; --i) {
        offset += (rr % redDims[i]) * redStrides[i];
        rr /= redDims[i];
      }
      sum += static_cast<A>(x[offset]);
    }
    out[o] = T(sum);
  });
}

/// out axis i = x axis perm[i].
template <class T>
void transpose(const T *x, T *out, const int64_t *shape, int rank, const int64_t *perm) {
  checkRank("zrt_transpose", rank);
  Dims inStrides = stridesOf(shape, rank), outDims{};
  for (int i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank)
      fatal("zrt_transpose", "permutation entry %d is %lld, outside [0, %d)", i,
            static_cast<long long>(perm[i]), rank);
    outDims[i] = shape[perm[i]];
  }
  parallelFor(numElements(shape, rank), kElementGrain, [&](int64_t o) {
    int64_t offset = 0, rem = o;
    for (int i = rank - 1; i >= 0; --i) {
      offset += (rem % outDims[i]) * inStrides[perm[i]];
      rem /= outDims[i];
    }
    out[o] = x[offset];
  });
}

/// Calls fn(boxIndex, wholeIndex) for every element of a box of `boxShape` at
/// `offsets` inside a tensor of `wholeShape`, after checking it fits.
template <class F>
void forEachBoxElement(const char *call, const int64_t *boxShape, const int64_t *wholeShape,
                       int rank, const int64_t *offsets, F &&fn) {
  checkRank(call, rank);
  for (int i = 0; i < rank; ++i)
    if (offsets[i] < 0 || offsets[i] + boxShape[i] > wholeShape[i])
      fatal(call, "box [%lld, %lld) on axis %d is outside [0, %lld)",
            static_cast<long long>(offsets[i]), static_cast<long long>(offsets[i] + boxShape[i]),
            i, static_cast<long long>(wholeShape[i]));
  Dims wholeStrides = stridesOf(wholeShape, rank);
  parallelFor(numElements(boxShape, rank), kElementGrain, [&](int64_t b) {
    int64_t offset = 0, rem = b;
    for (int i = rank - 1; i >= 0; --i) {
      offset += (rem % boxShape[i] + offsets[i]) * wholeStrides[i];
      rem /= boxShape[i];
    }
    fn(b, offset);
  });
}

template <class T>
void slice(const T *x, const int64_t *xShape, T *out, const int64_t *outShape, int rank,
           const int64_t *offsets) {
  forEachBoxElement("zrt_slice", outShape, xShape, rank, offsets,
                    [&](int64_t b, int64_t w) { out[b] = x[w]; });
}

template <class T>
void insert(const T *box, const int64_t *boxShape, T *dst, const int64_t *dstShape, int rank,
            const int64_t *offsets) {
  forEachBoxElement("zrt_insert", boxShape, dstShape, rank, offsets,
                    [&](int64_t b, int64_t w) { dst[w] = box[b]; });
}

} // namespace zrt::cpu

#endif // ZRT_CPU_LAYOUT_H
