// Sums over the rows of a [rows, cols] matrix, per column, for the CUDA kernels that need them
// (the normalizations' parameter gradients, reduce_sum over leading axes: the bias gradients).
// One thread per column alone would leave the GPU idle (768 columns: 3 blocks, each thread
// reading every row), so: stage one, a block per (column tile, chunk of rows) writes the chunk's
// partial sums; stage two adds a column's chunks in chunk order. Enough blocks to fill the GPU at
// any row count, and the same order on every run. Chunks of 64 rows, longer when the rows would
// need more than the grid's 65535 chunks along y.
#ifndef ZRT_CUDA_COLUMN_SUMS_CUH
#define ZRT_CUDA_COLUMN_SUMS_CUH

#include <algorithm>
#include <cstdint>

#include "cuda/Dispatch.h"

namespace zrt::cuda {

struct ColumnChunks {
  int64_t rows, chunkRows, count;
  static ColumnChunks of(int64_t rows) {
    const int64_t chunkRows = std::max<int64_t>(64, (rows + 65534) / 65535);
    return {rows, chunkRows, (rows + chunkRows - 1) / chunkRows};
  }
  dim3 grid(int64_t cols, int threads) const {
    return dim3(static_cast<unsigned>((cols + threads - 1) / threads), static_cast<unsigned>(count));
  }
};

/// partial[k * partStride + chunk * cols + c] (k < Parts) = the chunk's sum over rows of term(row, c).
template <int Parts, class Term>
__device__ void columnChunkSums(ColumnChunks chunks, int64_t cols, float *partial, int64_t partStride, Term term) {
  const int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, chunk = blockIdx.y;
  if (c >= cols)
    return;
  float sums[Parts] = {};
  const int64_t begin = chunk * chunks.chunkRows;
  const int64_t end = begin + chunks.chunkRows < chunks.rows ? begin + chunks.chunkRows : chunks.rows;
  for (int64_t r = begin; r < end; ++r)
    term(r, c, sums);
  for (int k = 0; k < Parts; ++k)
    partial[k * partStride + chunk * cols + c] = sums[k];
}

/// Stage one of a plain column sum: partial[chunk * cols + c] = the chunk's sum of x[r, c].
template <class T> __global__ void columnChunkPartials(const T *x, ColumnChunks chunks, int64_t cols, float *partial) {
  columnChunkSums<1>(chunks, cols, partial, 0,
                     [&](int64_t r, int64_t c, float *s) { s[0] += static_cast<float>(x[r * cols + c]); });
}

/// Stage two: out[c] = the column's chunk partials added in chunk order.
template <class T> __global__ void sumColumnChunks(const float *partial, int64_t chunks, int64_t cols, T *out) {
  ZRT_FOR_EACH(c, cols) {
    float sum = 0;
    for (int64_t k = 0; k < chunks; ++k)
      sum += partial[k * cols + c];
    out[c] = T(sum);
  }
}

} // namespace zrt::cuda

#endif // ZRT_CUDA_COLUMN_SUMS_CUH
