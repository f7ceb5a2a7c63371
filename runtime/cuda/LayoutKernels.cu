// Layout kernels of the CUDA backend: reductions over axes, transposes, boxes cut out of
// and written into tensors. Shapes travel by value (at most 8 axes); one thread per
// output element, except the sums over leading axes (column sums in row chunks) and boxes
// narrower along one axis alone (strided copies).
#include <cuda_bf16.h>

#include <optional>

#include "core/Error.h"
#include "cuda/ColumnSums.cuh"
#include "cuda/CudaCheck.h"
#include "cuda/Dispatch.h"
#include "cuda/Kernels.h"
#include "cuda/Scratch.h"
#include "zrt/bf16.h"

namespace zrt::cuda {
namespace {

constexpr int kMaxRank = 8, kThreads = 256;
struct Dims {
  int64_t v[kMaxRank];
};

int blocks(int64_t n) { return gridStrideBlocks(n, kThreads); }

Dims dims(const char *call, const int64_t *values, int rank) {
  if (rank < 0 || rank > kMaxRank)
    fatal(call, "rank %d is outside [0, %d]", rank, kMaxRank);
  Dims d{};
  for (int i = 0; i < rank; ++i)
    d.v[i] = values[i];
  return d;
}
int64_t numel(const Dims &d, int rank) {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i)
    n *= d.v[i];
  return n;
}

template <class T>
__global__ void reduceSumKernel(const T *x, T *out, Dims shape, int rank, int32_t mask, int64_t outCount) {
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < outCount; o += int64_t(gridDim.x) * blockDim.x) {
    // Coordinates of o over the kept axes, then every reduced coordinate in row-major order.
    int64_t keptIndex[kMaxRank] = {}, rest = o;
    for (int i = rank - 1; i >= 0; --i)
      if (!(mask & (1 << i))) {
        keptIndex[i] = rest % shape.v[i];
        rest /= shape.v[i];
      }
    int64_t redCount = 1;
    for (int i = 0; i < rank; ++i)
      if (mask & (1 << i))
        redCount *= shape.v[i];
    float sum = 0;
    for (int64_t r = 0; r < redCount; ++r) {
      int64_t index[kMaxRank], rr = r;
      for (int i = rank - 1; i >= 0; --i) {
        if (mask & (1 << i)) {
          index[i] = rr % shape.v[i];
          rr /= shape.v[i];
        } else {
          index[i] = keptIndex[i];
        }
      }
      int64_t offset = 0;
      for (int i = 0; i < rank; ++i)
        offset = offset * shape.v[i] + index[i];
      sum += static_cast<float>(x[offset]);
    }
    out[o] = T(sum);
  }
}

template <class T> __global__ void transposeKernel(const T *x, T *out, Dims shape, Dims perm, int rank, int64_t n) {
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < n; o += int64_t(gridDim.x) * blockDim.x) {
    // out axis i = x axis perm[i]
    int64_t rest = o, index[kMaxRank];
    for (int i = rank - 1; i >= 0; --i) {
      int64_t extent = shape.v[perm.v[i]];
      index[perm.v[i]] = rest % extent;
      rest /= extent;
    }
    int64_t offset = 0;
    for (int i = 0; i < rank; ++i)
      offset = offset * shape.v[i] + index[i];
    out[o] = x[offset];
  }
}

/// Box (shape `box`) at `offsets` of a tensor of shape `whole`: element e of the box
/// is element wholeOffset(e) of the tensor.
__device__ int64_t wholeOffset(int64_t e, const Dims &box, const Dims &whole, const Dims &offsets, int rank) {
  int64_t index[kMaxRank];
  for (int i = rank - 1; i >= 0; --i) {
    index[i] = e % box.v[i] + offsets.v[i];
    e /= box.v[i];
  }
  int64_t offset = 0;
  for (int i = 0; i < rank; ++i)
    offset = offset * whole.v[i] + index[i];
  return offset;
}
template <class T>
__global__ void sliceKernel(const T *x, Dims whole, T *out, Dims box, Dims offsets, int rank, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
    out[e] = x[wholeOffset(e, box, whole, offsets, rank)];
}
template <class T>
__global__ void insertKernel(const T *boxData, Dims box, T *dst, Dims whole, Dims offsets, int rank, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
    dst[wholeOffset(e, box, whole, offsets, rank)] = boxData[e];
}

/// A box that differs from its tensor along one axis alone is `height` runs of `width` bytes,
/// `pitch` bytes apart, the first `offset` bytes into the tensor: one strided copy (the copy
/// engine's cudaMemcpy2DAsync) instead of a thread per element working out its coordinates.
/// That is the attention's q/k/v split and its gradients' concatenation: 23 ms of a GPT-2 124M
/// step on an H200 as kernels.
struct StridedRuns {
  int64_t height, width, pitch, offset;
};
std::optional<StridedRuns> asStridedRuns(const Dims &box, const Dims &whole, const Dims &offsets, int rank,
                                         int64_t elementBytes) {
  int axis = 0; // the one axis where the box is narrower (0 when it is the whole tensor)
  int differing = 0;
  for (int i = 0; i < rank; ++i)
    if (box.v[i] != whole.v[i]) {
      axis = i;
      ++differing;
    }
  if (differing > 1)
    return std::nullopt;
  int64_t height = 1, inner = elementBytes;
  for (int i = 0; i < axis; ++i)
    height *= whole.v[i];
  for (int i = axis + 1; i < rank; ++i)
    inner *= whole.v[i];
  const int64_t extent = rank > 0 ? box.v[axis] : 1, wholeExtent = rank > 0 ? whole.v[axis] : 1,
                at = rank > 0 ? offsets.v[axis] : 0;
  return StridedRuns{height, extent * inner, wholeExtent * inner, at * inner};
}

void checkBox(const char *call, const Dims &box, const Dims &whole, const Dims &offsets, int rank) {
  for (int i = 0; i < rank; ++i)
    if (offsets.v[i] < 0 || offsets.v[i] + box.v[i] > whole.v[i])
      fatal(call, "axis %d: [%lld, %lld) is outside [0, %lld)", i, static_cast<long long>(offsets.v[i]),
            static_cast<long long>(offsets.v[i] + box.v[i]), static_cast<long long>(whole.v[i]));
}

} // namespace

void reduceSum(int32_t dtype, const void *x, void *out, const int64_t *shape, int rank, int32_t axesMask,
               cudaStream_t s) {
  Dims d = dims("zrt_reduce_sum", shape, rank);
  int64_t outCount = 1;
  for (int i = 0; i < rank; ++i)
    if (!(axesMask & (1 << i)))
      outCount *= d.v[i];
  // The leading axes reduced, the trailing ones kept: a [rows, outCount] matrix's column sums
  // (the bias gradients), in row chunks over the whole GPU (ColumnSums.cuh). One thread per
  // output, reading every row, took 5 ms a GPT-2 bias gradient on an H200.
  int leading = 0;
  while (leading < rank && (axesMask & (1 << leading)))
    ++leading;
  if (leading > 0 && (axesMask >> leading) == 0) {
    const int64_t rows = numel(d, leading);
    const ColumnChunks chunks = ColumnChunks::of(rows);
    float *partial = scratchFloats(chunks.count * outCount);
    typed("zrt_reduce_sum", dtype, [&](auto *tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      columnChunkPartials<T><<<chunks.grid(outCount, kThreads), kThreads, 0, s>>>(static_cast<const T *>(x),
                                                                                chunks, outCount, partial);
      sumColumnChunks<T><<<blocks(outCount), kThreads, 0, s>>>(partial, chunks.count, outCount, static_cast<T *>(out));
    });
    ZRT_CUDA_CHECK(cudaGetLastError());
    return;
  }
  typed("zrt_reduce_sum", dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    reduceSumKernel<<<blocks(outCount), kThreads, 0, s>>>(static_cast<const T *>(x), static_cast<T *>(out), d, rank,
                                                          axesMask, outCount);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

void transpose(int32_t dtype, const void *x, void *out, const int64_t *shape, int rank, const int64_t *perm,
               cudaStream_t s) {
  Dims d = dims("zrt_transpose", shape, rank), p = dims("zrt_transpose", perm, rank);
  int64_t n = numel(d, rank);
  typed("zrt_transpose", dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    transposeKernel<<<blocks(n), kThreads, 0, s>>>(static_cast<const T *>(x), static_cast<T *>(out), d, p, rank, n);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

void slice(int32_t dtype, const void *x, const int64_t *xShape, void *out, const int64_t *outShape, int rank,
           const int64_t *offsets, cudaStream_t s) {
  Dims whole = dims("zrt_slice", xShape, rank), box = dims("zrt_slice", outShape, rank),
       at = dims("zrt_slice", offsets, rank);
  checkBox("zrt_slice", box, whole, at, rank);
  int64_t n = numel(box, rank);
  if (n == 0)
    return;
  if (auto runs = dtype == 0 || dtype == 1 ? asStridedRuns(box, whole, at, rank, dtype == 1 ? 2 : 4)
                                           : std::nullopt) {
    ZRT_CUDA_CHECK(cudaMemcpy2DAsync(out, runs->width, static_cast<const char *>(x) + runs->offset, runs->pitch,
                                     runs->width, runs->height, cudaMemcpyDeviceToDevice, s));
    return;
  }
  typed("zrt_slice", dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    sliceKernel<<<blocks(n), kThreads, 0, s>>>(static_cast<const T *>(x), whole, static_cast<T *>(out), box, at, rank,
                                               n);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

void insert(int32_t dtype, const void *boxData, const int64_t *boxShape, void *dst, const int64_t *dstShape, int rank,
            const int64_t *offsets, cudaStream_t s) {
  Dims whole = dims("zrt_insert", dstShape, rank), box = dims("zrt_insert", boxShape, rank),
       at = dims("zrt_insert", offsets, rank);
  checkBox("zrt_insert", box, whole, at, rank);
  int64_t n = numel(box, rank);
  if (n == 0)
    return;
  if (auto runs = dtype == 0 || dtype == 1 ? asStridedRuns(box, whole, at, rank, dtype == 1 ? 2 : 4)
                                           : std::nullopt) {
    ZRT_CUDA_CHECK(cudaMemcpy2DAsync(static_cast<char *>(dst) + runs->offset, runs->pitch, boxData, runs->width,
                                     runs->width, runs->height, cudaMemcpyDeviceToDevice, s));
    return;
  }
  typed("zrt_insert", dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    insertKernel<<<blocks(n), kThreads, 0, s>>>(static_cast<const T *>(boxData), box, static_cast<T *>(dst), whole, at,
                                                rank, n);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

} // namespace zrt::cuda
