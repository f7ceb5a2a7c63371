// Layout kernels on row-major tensors of rank <= 8: reduce_sum over an axis set, transpose,
// and copying boxes out of (slice) and into (insert) a larger tensor.
#ifndef ZRT_CPU_LAYOUT_H
#define ZRT_CPU_LAYOUT_H

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "core/Error.h"
#include "cpu/Parallel.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

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
///
/// Neighbouring axes that are both reduced or both kept are merged first. When
/// the innermost merged axis is kept (bias gradients: [rows, C] -> [C]), whole
/// contiguous rows are added into a column block of accumulators, which
/// vectorizes; otherwise each output sums its inputs one by one.
template <class T>
void reduceSum(const T *x, T *out, const int64_t *shape, int rank, int32_t axesMask) {
  using A = Acc<T>;
  checkRank("zrt_reduce_sum", rank);
  // Merged axes, outermost first.
  Dims dims{};
  std::array<bool, kMaxRank> isReduced{};
  int merged = 0;
  for (int i = 0; i < rank; ++i) {
    bool r = axesMask & (1 << i);
    if (merged > 0 && isReduced[merged - 1] == r) {
      dims[merged - 1] *= shape[i];
    } else {
      dims[merged] = shape[i];
      isReduced[merged++] = r;
    }
  }
  Dims strides = stridesOf(dims.data(), merged);
  Dims keptDims{}, keptStrides{}, redDims{}, redStrides{};
  int kept = 0, reduced = 0;
  int64_t outCount = 1, redCount = 1;
  for (int i = 0; i < merged; ++i) {
    if (isReduced[i]) {
      redDims[reduced] = dims[i];
      redStrides[reduced++] = strides[i];
      redCount *= dims[i];
    } else {
      keptDims[kept] = dims[i];
      keptStrides[kept++] = strides[i];
      outCount *= dims[i];
    }
  }
  auto reducedOffset = [&](int64_t r) {
    int64_t offset = 0;
    for (int i = reduced - 1; i >= 0; --i) {
      offset += (r % redDims[i]) * redStrides[i];
      r /= redDims[i];
    }
    return offset;
  };
  auto keptOffset = [&](int64_t o, int upTo) {
    int64_t offset = 0;
    for (int i = upTo - 1; i >= 0; --i) {
      offset += (o % keptDims[i]) * keptStrides[i];
      o /= keptDims[i];
    }
    return offset;
  };

  if (merged > 0 && !isReduced[merged - 1] && reduced > 0) {
    // Innermost axis kept and contiguous: blocks of columns, rows added in order.
    constexpr int64_t kBlock = 256;
    const int64_t columns = dims[merged - 1], outer = outCount / columns;
    const int64_t blocks = (columns + kBlock - 1) / kBlock;
    parallelFor(outer * blocks, 1, [&](int64_t task) {
      int64_t o = task / blocks, c0 = (task % blocks) * kBlock;
      int64_t width = std::min(kBlock, columns - c0);
      A acc[kBlock] = {};
      const T *base = x + keptOffset(o, kept - 1) + c0;
      for (int64_t r = 0; r < redCount; ++r) {
        const T *row = base + reducedOffset(r);
        for (int64_t c = 0; c < width; ++c)
          acc[c] += static_cast<A>(row[c]);
      }
      for (int64_t c = 0; c < width; ++c)
        out[o * columns + c0 + c] = T(acc[c]);
    });
    return;
  }
  parallelFor(outCount, 64, [&](int64_t o) {
    const T *base = x + keptOffset(o, kept);
    A sum = 0;
    for (int64_t r = 0; r < redCount; ++r)
      sum += static_cast<A>(base[reducedOffset(r)]);
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

/// Calls copy(boxOffset, wholeOffset, count) for every contiguous run of a box
/// of `boxShape` at `offsets` inside a tensor of `wholeShape`, after checking it
/// fits. A run is the box's innermost axis, merged with the axes inside which the
/// box covers the whole tensor.
template <class F>
void forEachBoxRun(const char *call, const int64_t *boxShape, const int64_t *wholeShape, int rank,
                   const int64_t *offsets, F &&copy) {
  checkRank(call, rank);
  for (int i = 0; i < rank; ++i)
    if (offsets[i] < 0 || offsets[i] + boxShape[i] > wholeShape[i])
      fatal(call, "box [%lld, %lld) on axis %d is outside [0, %lld)",
            static_cast<long long>(offsets[i]), static_cast<long long>(offsets[i] + boxShape[i]),
            i, static_cast<long long>(wholeShape[i]));
  Dims wholeStrides = stridesOf(wholeShape, rank);
  // Axes [inner, rank) form one run: the box spans them whole, except the outermost of them.
  int inner = rank;
  int64_t run = 1;
  while (inner > 0) {
    --inner;
    run *= boxShape[inner];
    if (boxShape[inner] != wholeShape[inner])
      break;
  }
  int64_t innerOffset = rank ? offsets[inner] * wholeStrides[inner] : 0;
  int64_t runs = numElements(boxShape, inner);
  parallelFor(runs, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(run, 1)), [&](int64_t b) {
    int64_t offset = innerOffset, rem = b;
    for (int i = inner - 1; i >= 0; --i) {
      offset += (rem % boxShape[i] + offsets[i]) * wholeStrides[i];
      rem /= boxShape[i];
    }
    copy(b * run, offset, run);
  });
}

template <class T>
void slice(const T *x, const int64_t *xShape, T *out, const int64_t *outShape, int rank,
           const int64_t *offsets) {
  forEachBoxRun("zrt_slice", outShape, xShape, rank, offsets,
                [&](int64_t b, int64_t w, int64_t n) { std::memcpy(out + b, x + w, n * sizeof(T)); });
}

template <class T>
void insert(const T *box, const int64_t *boxShape, T *dst, const int64_t *dstShape, int rank,
            const int64_t *offsets) {
  forEachBoxRun("zrt_insert", boxShape, dstShape, rank, offsets,
                [&](int64_t b, int64_t w, int64_t n) { std::memcpy(dst + w, box + b, n * sizeof(T)); });
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_LAYOUT_H
