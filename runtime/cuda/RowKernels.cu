// Row-wise, loss and embedding kernels of the CUDA backend. The row kernels (softmax, the
// normalizations, cross-entropy) run one block per row (RowReduce.cuh: coalesced reads, a fixed
// reduction tree, so a row gives the same bits on every run); the parameter gradients sum column
// partials over row chunks in a fixed order. Elementwise math is the CPU backend's
// (zrt/KernelMath.h). Attention is in RowAttention.cu and FlashAttention.cu.
#include <cuda_bf16.h>

#include "core/Error.h"
#include "cuda/ColumnSums.cuh"
#include "cuda/CudaCheck.h"
#include "cuda/Dispatch.h"
#include "cuda/Kernels.h"
#include "cuda/Matmul.h"
#include "cuda/RowReduce.cuh"
#include "cuda/Scratch.h"
#include "zrt/KernelMath.h"
#include "zrt/MatmulCrossEntropy.h"

#include <algorithm>
#include <climits>

namespace zrt::cuda {
namespace {

constexpr int kThreads = 128;
int blocks(int64_t n) { return gridStrideBlocks(n, kThreads); }


/// The row a block reduces, checked against the grid's limit by rowGrid().
#define ZRT_ROW(r) const int64_t r = blockIdx.x

dim3 rowGrid(const char *call, int64_t rows) {
  if (rows < 1 || rows > INT32_MAX)
    fatal(call, "%lld rows: a grid holds 1 to %d blocks", static_cast<long long>(rows), INT32_MAX);
  return dim3(static_cast<unsigned>(rows));
}

template <class T> __global__ void softmaxRows(const T *x, T *y, int64_t cols) {
  ZRT_ROW(r);
  const T *xr = x + r * cols;
  T *yr = y + r * cols;
  float m = -INFINITY;
  ZRT_ROW_COLUMNS(c, cols) m = fmaxf(m, float(xr[c]));
  m = blockMax(m);
  float sum = 0;
  ZRT_ROW_COLUMNS(c, cols) sum += math::mexp(float(xr[c]) - m);
  const float logSum = math::mlog(blockSum(sum));
  ZRT_ROW_COLUMNS(c, cols) yr[c] = T(math::mexp((float(xr[c]) - m) - logSum));
}
template <class T> __global__ void softmaxGradRows(const T *dy, const T *y, T *dx, int64_t cols) {
  ZRT_ROW(r);
  const T *dyr = dy + r * cols, *yr = y + r * cols;
  float dot = 0;
  ZRT_ROW_COLUMNS(c, cols) dot += float(dyr[c]) * float(yr[c]);
  dot = blockSum(dot);
  ZRT_ROW_COLUMNS(c, cols) dx[r * cols + c] = T(float(yr[c]) * (float(dyr[c]) - dot));
}

/// mean and 1 / sqrt(var + eps) of the block's row.
template <class T> __device__ void rowMoments(const T *xr, int64_t cols, double eps, float &mean, float &rstd) {
  float sum = 0;
  ZRT_ROW_COLUMNS(c, cols) sum += float(xr[c]);
  mean = blockSum(sum) / float(cols);
  float squares = 0;
  ZRT_ROW_COLUMNS(c, cols) {
    float d = float(xr[c]) - mean;
    squares += d * d;
  }
  rstd = 1.0f / math::msqrt(blockSum(squares) / float(cols) + float(eps));
}
template <class T>
__global__ void layernormRows(const T *x, const T *g, const T *b, T *y, int64_t cols, double eps) {
  ZRT_ROW(r);
  const T *xr = x + r * cols;
  float mean, rstd;
  rowMoments(xr, cols, eps, mean, rstd);
  ZRT_ROW_COLUMNS(c, cols) y[r * cols + c] = T((float(xr[c]) - mean) * rstd * float(g[c]) + float(b[c]));
}
/// sum = a + b (stored, rounded to T) and the layernorm of that stored sum.
template <class T>
__global__ void addLayernormRows(const T *a, const T *b, const T *g, const T *beta, T *sum, T *y, int64_t cols,
                                 double eps) {
  ZRT_ROW(r);
  T *sr = sum + r * cols;
  ZRT_ROW_COLUMNS(c, cols) sr[c] = T(float(a[r * cols + c]) + float(b[r * cols + c]));
  // Each thread reads back only the columns it wrote: no synchronization needed before.
  float mean, rstd;
  rowMoments(static_cast<const T *>(sr), cols, eps, mean, rstd);
  ZRT_ROW_COLUMNS(c, cols) y[r * cols + c] = T((float(sr[c]) - mean) * rstd * float(g[c]) + float(beta[c]));
}
template <class T>
__global__ void layernormGradRows(const T *dy, const T *x, const T *g, T *dx, float *means, float *rstds, int64_t cols,
                                  double eps) {
  ZRT_ROW(r);
  const T *xr = x + r * cols, *dyr = dy + r * cols;
  float mean, rstd;
  rowMoments(xr, cols, eps, mean, rstd);
  float dxhat = 0, dxhatXhat = 0;
  ZRT_ROW_COLUMNS(c, cols) {
    float d = float(dyr[c]) * float(g[c]);
    dxhat += d;
    dxhatXhat += d * ((float(xr[c]) - mean) * rstd);
  }
  const float meanDxhat = blockSum(dxhat) / float(cols), meanDxhatXhat = blockSum(dxhatXhat) / float(cols);
  ZRT_ROW_COLUMNS(c, cols) {
    float xhat = (float(xr[c]) - mean) * rstd;
    dx[r * cols + c] = T(rstd * (float(dyr[c]) * float(g[c]) - meanDxhat - xhat * meanDxhatXhat));
  }
  if (threadIdx.x == 0) {
    means[r] = mean;
    rstds[r] = rstd;
  }
}
template <class T> __device__ float rowRstdRms(const T *xr, int64_t cols, double eps) {
  float squares = 0;
  ZRT_ROW_COLUMNS(c, cols) squares += float(xr[c]) * float(xr[c]);
  return 1.0f / math::msqrt(blockSum(squares) / float(cols) + float(eps));
}
template <class T>
__global__ void rmsnormRows(const T *x, const T *g, T *y, int64_t cols, double eps, float gainOffset) {
  ZRT_ROW(r);
  const T *xr = x + r * cols;
  const float rstd = rowRstdRms(xr, cols, eps);
  ZRT_ROW_COLUMNS(c, cols) y[r * cols + c] = T(float(xr[c]) * rstd * (float(g[c]) + gainOffset));
}
template <class T>
__global__ void rmsnormGradRows(const T *dy, const T *x, const T *g, T *dx, float *rstds, int64_t cols, double eps,
                                float gainOffset) {
  ZRT_ROW(r);
  const T *xr = x + r * cols, *dyr = dy + r * cols;
  const float rstd = rowRstdRms(xr, cols, eps);
  float gn = 0;
  ZRT_ROW_COLUMNS(c, cols) gn += float(dyr[c]) * (float(g[c]) + gainOffset) * float(xr[c]) * rstd;
  const float meanGN = blockSum(gn) / float(cols);
  ZRT_ROW_COLUMNS(c, cols) {
    float n = float(xr[c]) * rstd;
    dx[r * cols + c] = T(rstd * (float(dyr[c]) * (float(g[c]) + gainOffset) - n * meanGN));
  }
  if (threadIdx.x == 0)
    rstds[r] = rstd;
}

template <class T>
__global__ void layernormColumnChunks(const T *dy, const T *x, const float *means, const float *rstds,
                                      ColumnChunks chunks, int64_t cols, float *partial) {
  columnChunkSums<2>(chunks, cols, partial, chunks.count * cols, [&](int64_t r, int64_t c, float *s) {
    float g = float(dy[r * cols + c]);
    s[0] += g * (float(x[r * cols + c]) - means[r]) * rstds[r];
    s[1] += g;
  });
}
template <class T>
__global__ void rmsnormColumnChunks(const T *dy, const T *x, const float *rstds, ColumnChunks chunks, int64_t cols,
                                    float *partial) {
  columnChunkSums<1>(chunks, cols, partial, 0, [&](int64_t r, int64_t c, float *s) {
    s[0] += float(dy[r * cols + c]) * float(x[r * cols + c]) * rstds[r];
  });
}
template <class T>
__global__ void addResidualRows(const T *residual, T *dx, int64_t n) {
  ZRT_FOR_EACH(i, n) dx[i] = T(float(residual[i]) + float(dx[i]));
}
/// One thread per (row, head, frequency) of the `dims` rotated channels of each head: the angle,
/// then the pair it rotates; and one per channel passed through (the head's others: copied).
/// Token t is at position t, or, with `contextRanks` > 0, at its place in the whole sequence as
/// context rank `contextRank` holds it (math::contextPosition).
template <class T>
__global__ void rotaryKernel(const T *x, T *y, int64_t rows, int64_t time, int64_t channels, int64_t heads,
                             int64_t dims, double theta, bool inverse, int64_t contextRank, int64_t contextRanks) {
  const int64_t headDim = channels / heads, half = dims / 2, perHead = half + (headDim - dims);
  ZRT_FOR_EACH(k, rows * heads * perHead) {
    const int64_t i = k % perHead, h = (k / perHead) % heads, row = k / (perHead * heads), t = row % time;
    const int64_t head = row * channels + h * headDim;
    if (i >= half) { // a pass-through channel
      y[head + dims + (i - half)] = x[head + dims + (i - half)];
      continue;
    }
    const int64_t position = contextRanks > 0 ? math::contextPosition(contextRanks, contextRank, t, time) : t;
    float angle = math::rotaryAngle(position, i, dims, theta), c = cosf(angle), s = sinf(angle);
    math::rotaryPair<float>(x + head, y + head, i, half, c, s, inverse);
  }
}

/// max and log(sum(exp(x - max))) of the block's row, its logits capped by `cap` (the capped
/// maximum is the cap of the raw one: tanh is increasing).
template <class T>
__device__ void rowLogSumExp(const T *row, int64_t classes, float &max, float &logSum, math::LogitCap<float> cap = {}) {
  float m = -INFINITY;
  ZRT_ROW_COLUMNS(c, classes) m = fmaxf(m, float(row[c]));
  max = cap.value(blockMax(m));
  float sum = 0;
  ZRT_ROW_COLUMNS(c, classes) sum += math::mexp(cap.value(float(row[c])) - max);
  logSum = math::mlog(blockSum(sum));
}
/// The block's row's label, or -1 (and *bad set) when it is out of range.
__device__ int32_t rowLabel(const int32_t *labels, int64_t r, int64_t classes, int *bad) {
  int32_t label = labels[r];
  if (label < 0 || label >= classes) {
    if (threadIdx.x == 0)
      *bad = 1;
    return -1;
  }
  return label;
}
template <class T>
__global__ void crossEntropyRows(const T *logits, const int32_t *labels, float *perRow, int64_t classes, int *bad,
                                 math::LogitCap<float> cap) {
  ZRT_ROW(r);
  const int32_t label = rowLabel(labels, r, classes, bad);
  if (label < 0) { // the whole block takes this branch: no reduction is left half-entered
    if (threadIdx.x == 0)
      perRow[r] = 0;
    return;
  }
  const T *row = logits + r * classes;
  float max, logSum;
  rowLogSumExp(row, classes, max, logSum, cap);
  if (threadIdx.x == 0)
    perRow[r] = (max - cap.value(float(row[label]))) + logSum;
}
/// The mean in the CPU backend's order: a double sum, row after row.
__global__ void meanKernel(const float *values, int64_t n, float *out) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += values[i];
  *out = static_cast<float>(sum / static_cast<double>(n));
}
template <class T>
__global__ void crossEntropyGradRows(const float *dloss, const T *logits, const int32_t *labels, T *dlogits,
                                     int64_t rows, int64_t classes, int *bad, math::LogitCap<float> cap) {
  ZRT_ROW(r);
  const int32_t label = rowLabel(labels, r, classes, bad);
  if (label < 0)
    return;
  const T *row = logits + r * classes;
  float max, logSum;
  rowLogSumExp(row, classes, max, logSum, cap);
  const float g = *dloss / float(rows);
  ZRT_ROW_COLUMNS(c, classes) {
    float slope;
    float p = math::mexp((cap.value(float(row[c]), slope) - max) - logSum);
    dlogits[r * classes + c] = T(g * (p - (c == label ? 1.0f : 0.0f)) * slope);
  }
}
/// The fused head's rows: each row's loss, and its gradient written over its logits
/// (g = dloss / meanRows).
template <class T>
__global__ void crossEntropyChunkRows(T *logits, const int32_t *labels, const float *dloss, int64_t meanRows,
                                      float *perRow, int64_t classes, int *bad, math::LogitCap<float> cap) {
  ZRT_ROW(r);
  const int32_t label = rowLabel(labels, r, classes, bad);
  if (label < 0) {
    if (threadIdx.x == 0)
      perRow[r] = 0;
    return;
  }
  T *row = logits + r * classes;
  // Read before the reductions: their barriers order it before any thread overwrites the row.
  const float target = cap.value(float(row[label]));
  float max, logSum;
  rowLogSumExp(static_cast<const T *>(row), classes, max, logSum, cap);
  const float g = *dloss / float(meanRows);
  ZRT_ROW_COLUMNS(c, classes) {
    float slope;
    float p = math::mexp((cap.value(float(row[c]), slope) - max) - logSum);
    row[c] = T(g * (p - (c == label ? 1.0f : 0.0f)) * slope);
  }
  if (threadIdx.x == 0)
    perRow[r] = (max - target) + logSum;
}
/// bf16 weight gradient over several chunks: sum = c (the first chunk's product), then per chunk
/// sum += part and c = the rounded sum.
__global__ void startSumKernel(const zrt::bf16 *c, float *sum, int64_t n) {
  ZRT_FOR_EACH(i, n) sum[i] = static_cast<float>(c[i]);
}
__global__ void addPartKernel(const zrt::bf16 *part, float *sum, zrt::bf16 *c, int64_t n) {
  ZRT_FOR_EACH(i, n) {
    sum[i] += static_cast<float>(part[i]);
    c[i] = zrt::bf16(sum[i]);
  }
}
template <class T> __global__ void mseKernel(const T *pred, const T *target, float *loss, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = static_cast<double>(static_cast<float>(pred[i])) - static_cast<double>(static_cast<float>(target[i]));
    sum += d * d;
  }
  *loss = static_cast<float>(sum / static_cast<double>(n));
}
template <class T>
__global__ void mseGradKernel(const float *dloss, const T *pred, const T *target, T *dpred, int64_t n) {
  ZRT_FOR_EACH(i, n) {
    float g = 2.0f * *dloss / float(n);
    dpred[i] = T(g * (static_cast<float>(pred[i]) - static_cast<float>(target[i])));
  }
}

/// The table holds rows [first, first + rows) of a `total`-row vocabulary (all of it without
/// tensor parallelism); an id of another rank's rows reads zeros.
template <class T>
__global__ void embeddingKernel(const T *table, const int32_t *ids, T *out, int64_t count, int64_t first,
                                int64_t rows, int64_t total, int64_t channels, int *bad) {
  ZRT_FOR_EACH(i, count * channels) {
    int64_t token = i / channels, c = i % channels;
    int32_t id = ids[token];
    if (id < 0 || id >= total)
      *bad = 1;
    out[i] = id >= first && id < first + rows ? table[(int64_t(id) - first) * channels + c] : T(0.0f);
  }
}
/// The table's gradient, one block per table row (grid-stride over the rows): the block scans the
/// token ids a chunk at a time and, where some match its row, adds those tokens' rows of dy in
/// token order, each thread to its own columns: the CPU backend's order and rounding, no atomics.
/// (One thread per table cell scanning every token read vocabulary x channels x tokens ids: 131 ms
/// of a 455 ms GPT-2 124M step on an H200.)
template <class T>
__global__ void embeddingGradRows(const T *dy, const int32_t *ids, T *dtable, int64_t count, int64_t first,
                                  int64_t rows, int64_t channels) {
  __shared__ int hit[kRowThreads];
  __shared__ int anyHit;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t v = first + row;
    T *out = dtable + row * channels;
    ZRT_ROW_COLUMNS(c, channels) out[c] = T(0.0f);
    for (int64_t base = 0; base < count; base += kRowThreads) {
      if (threadIdx.x == 0)
        anyHit = 0;
      __syncthreads();
      const int64_t i = base + threadIdx.x;
      const int match = i < count && ids[i] == v;
      hit[threadIdx.x] = match;
      if (match)
        anyHit = 1;
      __syncthreads();
      if (anyHit)
        for (int j = 0; j < kRowThreads; ++j)
          if (hit[j]) {
            const T *d = dy + (base + j) * channels;
            ZRT_ROW_COLUMNS(c, channels) out[c] = T(float(out[c]) + static_cast<float>(d[c]));
          }
      __syncthreads(); // hit and anyHit are read before the next chunk writes them
    }
  }
}

/// The loss kernels' soft-cap (0: none), as the CPU backend's f32 rows apply it.
math::LogitCap<float> logitCap(double softcap) { return {static_cast<float>(softcap)}; }

// The vocabulary-parallel cross-entropy's steps (VocabParallel.cu runs the collectives between
// them), one block per row: the row's maximum over this rank's classes; given every rank's
// maxima, the whole row's maximum, this rank's sum of exp(logit - max) and the label's logit
// where this rank holds it; then the loss or the gradient from the sums over the ranks.
template <class T>
__global__ void vocabRowMaxRows(const T *logits, float *maxima, int64_t classes, math::LogitCap<float> cap) {
  ZRT_ROW(r);
  float m = -INFINITY;
  ZRT_ROW_COLUMNS(c, classes) m = fmaxf(m, static_cast<float>(logits[r * classes + c]));
  m = cap.value(blockMax(m));
  if (threadIdx.x == 0)
    maxima[r] = m;
}
template <class T>
__global__ void vocabSumExpRows(const T *logits, const int32_t *labels, const float *gathered, int ranks,
                                float *maxima, float *sums, float *labelLogits, int64_t rows, int64_t classes,
                                int64_t first, int64_t total, int *bad, math::LogitCap<float> cap) {
  ZRT_ROW(r);
  float m = gathered[r];
  for (int k = 1; k < ranks; ++k)
    m = fmaxf(m, gathered[k * rows + r]);
  float sum = 0;
  ZRT_ROW_COLUMNS(c, classes) sum += expf(cap.value(static_cast<float>(logits[r * classes + c])) - m);
  sum = blockSum(sum);
  if (threadIdx.x != 0)
    return;
  const int32_t label = labels[r];
  if (label < 0 || label >= total)
    *bad = 1;
  const int64_t local = int64_t(label) - first;
  maxima[r] = m;
  sums[r] = sum;
  labelLogits[r] = local >= 0 && local < classes ? cap.value(static_cast<float>(logits[r * classes + local])) : 0.0f;
}
__global__ void vocabLossKernel(const float *maxima, const float *sums, const float *labelLogits, int64_t rows,
                                float *loss) {
  double total = 0;
  for (int64_t r = 0; r < rows; ++r)
    total += (maxima[r] - labelLogits[r]) + logf(sums[r]);
  *loss = static_cast<float>(total / static_cast<double>(rows));
}
template <class T>
__global__ void vocabGradRows(const float *dloss, const T *logits, const int32_t *labels, const float *maxima,
                              const float *sums, T *dlogits, int64_t rows, int64_t classes, int64_t first,
                              math::LogitCap<float> cap) {
  ZRT_ROW(r);
  const float g = *dloss / float(rows), logSum = logf(sums[r]);
  const int64_t label = int64_t(labels[r]) - first;
  ZRT_ROW_COLUMNS(c, classes) {
    float slope;
    float p = expf((cap.value(static_cast<float>(logits[r * classes + c]), slope) - maxima[r]) - logSum);
    dlogits[r * classes + c] = T(g * (p - (c == label ? 1.0f : 0.0f)) * slope);
  }
}

} // namespace

void softmax(int32_t dtype, const void *x, void *y, int64_t rows, int64_t cols, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_softmax", dtype,
                 (softmaxRows<<<rowGrid("zrt_softmax", rows), kRowThreads, 0, s>>>(static_cast<const T *>(x),
                                                                                    static_cast<T *>(y), cols)));
}
void softmaxGrad(int32_t dtype, const void *dy, const void *y, void *dx, int64_t rows, int64_t cols, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_softmax_grad", dtype,
                 (softmaxGradRows<<<rowGrid("zrt_softmax_grad", rows), kRowThreads, 0, s>>>(
                     static_cast<const T *>(dy), static_cast<const T *>(y), static_cast<T *>(dx), cols)));
}
void layernorm(int32_t dtype, const void *x, const void *gamma, const void *beta, void *y, int64_t rows,
               int64_t cols, double eps, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_layernorm", dtype,
                 (layernormRows<<<rowGrid("zrt_layernorm", rows), kRowThreads, 0, s>>>(
                     static_cast<const T *>(x), static_cast<const T *>(gamma), static_cast<const T *>(beta),
                     static_cast<T *>(y), cols, eps)));
}
void layernormGrad(int32_t dtype, const void *dy, const void *x, const void *gamma, void *dx, void *dgamma,
                   void *dbeta, int64_t rows, int64_t cols, double eps, cudaStream_t s) {
  const ColumnChunks chunks = ColumnChunks::of(rows);
  float *stats = scratchFloats(2 * rows + 2 * chunks.count * cols), *partial = stats + 2 * rows;
  ZRT_CUDA_TYPED("zrt_layernorm_grad", dtype, ({
                   layernormGradRows<<<rowGrid("zrt_layernorm_grad", rows), kRowThreads, 0, s>>>(
                       static_cast<const T *>(dy), static_cast<const T *>(x), static_cast<const T *>(gamma),
                       static_cast<T *>(dx), stats, stats + rows, cols, eps);
                   layernormColumnChunks<<<chunks.grid(cols, kThreads), kThreads, 0, s>>>(
                       static_cast<const T *>(dy), static_cast<const T *>(x), stats, stats + rows, chunks, cols,
                       partial);
                   sumColumnChunks<T><<<blocks(cols), kThreads, 0, s>>>(partial, chunks.count, cols,
                                                                     static_cast<T *>(dgamma));
                   sumColumnChunks<T><<<blocks(cols), kThreads, 0, s>>>(partial + chunks.count * cols, chunks.count,
                                                                     cols, static_cast<T *>(dbeta));
                 }));
}
void addLayernorm(int32_t dtype, const void *a, const void *b, const void *gamma, const void *beta, void *sum, void *y,
                  int64_t rows, int64_t cols, double eps, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_add_layernorm", dtype,
                 (addLayernormRows<<<rowGrid("zrt_add_layernorm", rows), kRowThreads, 0, s>>>(
                     static_cast<const T *>(a), static_cast<const T *>(b), static_cast<const T *>(gamma),
                     static_cast<const T *>(beta), static_cast<T *>(sum), static_cast<T *>(y), cols, eps)));
}
void layernormGradAdd(int32_t dtype, const void *dy, const void *x, const void *gamma, const void *residual, void *dx,
                      void *dgamma, void *dbeta, int64_t rows, int64_t cols, double eps, cudaStream_t s) {
  layernormGrad(dtype, dy, x, gamma, dx, dgamma, dbeta, rows, cols, eps, s);
  ZRT_CUDA_TYPED("zrt_layernorm_grad_add", dtype,
                 (addResidualRows<<<blocks(rows * cols), kThreads, 0, s>>>(static_cast<const T *>(residual),
                                                                           static_cast<T *>(dx), rows * cols)));
}
void rmsnorm(int32_t dtype, const void *x, const void *gamma, void *y, int64_t rows, int64_t cols, double eps,
             double gainOffset, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_rmsnorm", dtype,
                 (rmsnormRows<<<rowGrid("zrt_rmsnorm", rows), kRowThreads, 0, s>>>(
                     static_cast<const T *>(x), static_cast<const T *>(gamma), static_cast<T *>(y), cols, eps,
                     static_cast<float>(gainOffset))));
}
void rmsnormGrad(int32_t dtype, const void *dy, const void *x, const void *gamma, void *dx, void *dgamma, int64_t rows,
                 int64_t cols, double eps, double gainOffset, cudaStream_t s) {
  const ColumnChunks chunks = ColumnChunks::of(rows);
  float *rstds = scratchFloats(rows + chunks.count * cols), *partial = rstds + rows;
  ZRT_CUDA_TYPED("zrt_rmsnorm_grad", dtype, ({
                   rmsnormGradRows<<<rowGrid("zrt_rmsnorm_grad", rows), kRowThreads, 0, s>>>(
                       static_cast<const T *>(dy), static_cast<const T *>(x), static_cast<const T *>(gamma),
                       static_cast<T *>(dx), rstds, cols, eps, static_cast<float>(gainOffset));
                   rmsnormColumnChunks<<<chunks.grid(cols, kThreads), kThreads, 0, s>>>(
                       static_cast<const T *>(dy), static_cast<const T *>(x), rstds, chunks, cols, partial);
                   sumColumnChunks<T><<<blocks(cols), kThreads, 0, s>>>(partial, chunks.count, cols,
                                                                     static_cast<T *>(dgamma));
                 }));
}
/// Threads of rotaryKernel: a pair of each head's rotated channels, or one passed through.
static int64_t rotaryItems(int64_t rows, int64_t channels, int64_t heads, int64_t dims) {
  return rows * heads * (dims / 2 + (channels / heads - dims));
}
void rotary(int32_t dtype, const void *x, void *y, int64_t batch, int64_t time, int64_t channels, int64_t heads,
            double theta, bool inverse, int64_t rotaryDims, cudaStream_t s) {
  rotaryDims = math::rotatedChannels(channels / heads, rotaryDims);
  const int64_t items = rotaryItems(batch * time, channels, heads, rotaryDims);
  ZRT_CUDA_TYPED("zrt_rotary", dtype,
                 (rotaryKernel<<<blocks(items), kThreads, 0, s>>>(static_cast<const T *>(x), static_cast<T *>(y),
                                                                  batch * time, time, channels, heads, rotaryDims,
                                                                  theta, inverse, 0, 0)));
}
void rotaryContext(int32_t dtype, const void *x, void *y, int64_t batch, int64_t time, int64_t channels, int64_t heads,
                   double theta, bool inverse, int64_t rotaryDims, int64_t rank, int64_t ranks, cudaStream_t s) {
  rotaryDims = math::rotatedChannels(channels / heads, rotaryDims);
  if (time <= 0 || time % 2 != 0 || ranks < 1 || rank < 0 || rank >= ranks)
    fatal("zrt_rotary_context", "%lld local tokens are not two equal chunks of context rank %lld of %lld",
          static_cast<long long>(time), static_cast<long long>(rank), static_cast<long long>(ranks));
  const int64_t items = rotaryItems(batch * time, channels, heads, rotaryDims);
  ZRT_CUDA_TYPED("zrt_rotary_context", dtype,
                 (rotaryKernel<<<blocks(items), kThreads, 0, s>>>(static_cast<const T *>(x), static_cast<T *>(y),
                                                                  batch * time, time, channels, heads, rotaryDims,
                                                                  theta, inverse, rank, ranks)));
}
void crossEntropy(int32_t dtype, const void *logits, const int32_t *labels, float *loss, int64_t rows,
                  int64_t classes, double softcap, int *badLabel, cudaStream_t s) {
  float *perRow = scratchFloats(rows);
  ZRT_CUDA_TYPED("zrt_cross_entropy", dtype,
                 (crossEntropyRows<<<rowGrid("zrt_cross_entropy", rows), kRowThreads, 0, s>>>(
                     static_cast<const T *>(logits), labels, perRow, classes, badLabel, logitCap(softcap))));
  meanKernel<<<1, 1, 0, s>>>(perRow, rows, loss);
  ZRT_CUDA_CHECK(cudaGetLastError());
}
void crossEntropyGrad(int32_t dtype, const float *dloss, const void *logits, const int32_t *labels, void *dlogits,
                      int64_t rows, int64_t classes, double softcap, int *badLabel, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_cross_entropy_grad", dtype,
                 (crossEntropyGradRows<<<rowGrid("zrt_cross_entropy_grad", rows), kRowThreads, 0, s>>>(
                     dloss, static_cast<const T *>(logits), labels, static_cast<T *>(dlogits), rows, classes, badLabel,
                     logitCap(softcap))));
}
/// The sizes both heads (with and without their backward) are called with.
static void checkHeadSizes(const char *call, int64_t rows, int64_t classes, int64_t channels, int64_t chunkRows) {
  if (rows < 1 || classes < 1 || channels < 1 || chunkRows < 1 || chunkRows > rows)
    fatal(call, "bad sizes: %lld rows in chunks of %lld, %lld classes, %lld channels", static_cast<long long>(rows),
          static_cast<long long>(chunkRows), static_cast<long long>(classes), static_cast<long long>(channels));
}
void matmulCrossEntropy(int32_t dtype, const void *x, const void *w, const int32_t *labels, const float *dloss,
                        float *loss, void *dx, void *dw, void *workspace, int64_t rows, int64_t classes,
                        int64_t channels, bool transW, int64_t chunkRows, double softcap, int *badLabel,
                        cudaStream_t s) {
  checkHeadSizes("zrt_matmul_cross_entropy", rows, classes, channels, chunkRows);
  const int64_t elementBytes = dtype == 1 ? 2 : 4;
  const auto layout = MatmulCrossEntropyLayout::of(rows, classes, classes * channels, chunkRows, elementBytes);
  char *ws = static_cast<char *>(workspace);
  float *perRow = reinterpret_cast<float *>(ws + layout.rowLossOffset);
  void *chunk = ws + layout.chunkOffset;
  float *sum = reinterpret_cast<float *>(ws + layout.sumOffset);
  auto *part = reinterpret_cast<zrt::bf16 *>(ws + layout.partOffset);
  const int64_t weightElements = classes * channels;
  for (int64_t r0 = 0; r0 < rows; r0 += chunkRows) {
    const int64_t n = std::min(chunkRows, rows - r0);
    const char *xRows = static_cast<const char *>(x) + r0 * channels * elementBytes;
    matmul(dtype, xRows, w, chunk, 1, n, classes, channels, false, transW, false, s);
    ZRT_CUDA_TYPED("zrt_matmul_cross_entropy", dtype,
                   (crossEntropyChunkRows<<<rowGrid("zrt_matmul_cross_entropy", n), kRowThreads, 0, s>>>(
                       static_cast<T *>(chunk), labels + r0, dloss, rows, perRow + r0, classes, badLabel,
                       logitCap(softcap))));
    matmul(dtype, chunk, w, static_cast<char *>(dx) + r0 * channels * elementBytes, 1, n, channels, classes, false,
           !transW, false, s);
    const void *lhs = transW ? chunk : static_cast<const void *>(xRows);
    const void *rhs = transW ? static_cast<const void *>(xRows) : chunk;
    const int64_t m = transW ? classes : channels, cols = transW ? channels : classes;
    if (r0 == 0 || !layout.sumsInF32) { // f32: beta = 1 after the first chunk
      matmul(dtype, lhs, rhs, dw, 1, m, cols, n, true, false, false, s, /*accumulate=*/r0 > 0);
      continue;
    }
    if (r0 == chunkRows)
      startSumKernel<<<blocks(weightElements), kThreads, 0, s>>>(static_cast<const zrt::bf16 *>(dw), sum,
                                                                 weightElements);
    matmul(dtype, lhs, rhs, part, 1, m, cols, n, true, false, false, s);
    addPartKernel<<<blocks(weightElements), kThreads, 0, s>>>(part, sum, static_cast<zrt::bf16 *>(dw),
                                                              weightElements);
    ZRT_CUDA_CHECK(cudaGetLastError());
  }
  meanKernel<<<1, 1, 0, s>>>(perRow, rows, loss);
  ZRT_CUDA_CHECK(cudaGetLastError());
}
void matmulCrossEntropyLoss(int32_t dtype, const void *x, const void *w, const int32_t *labels, float *loss,
                            void *workspace, int64_t rows, int64_t classes, int64_t channels, bool transW,
                            int64_t chunkRows, double softcap, int *badLabel, cudaStream_t s) {
  checkHeadSizes("zrt_matmul_cross_entropy_loss", rows, classes, channels, chunkRows);
  const int64_t elementBytes = dtype == 1 ? 2 : 4;
  const auto layout = MatmulCrossEntropyLayout::forLoss(rows, classes, chunkRows, elementBytes);
  char *ws = static_cast<char *>(workspace);
  float *perRow = reinterpret_cast<float *>(ws + layout.rowLossOffset);
  void *chunk = ws + layout.chunkOffset;
  for (int64_t r0 = 0; r0 < rows; r0 += chunkRows) {
    const int64_t n = std::min(chunkRows, rows - r0);
    const char *xRows = static_cast<const char *>(x) + r0 * channels * elementBytes;
    matmul(dtype, xRows, w, chunk, 1, n, classes, channels, false, transW, false, s);
    ZRT_CUDA_TYPED("zrt_matmul_cross_entropy_loss", dtype,
                   (crossEntropyRows<<<rowGrid("zrt_matmul_cross_entropy_loss", n), kRowThreads, 0, s>>>(
                       static_cast<const T *>(chunk), labels + r0, perRow + r0, classes, badLabel,
                       logitCap(softcap))));
  }
  meanKernel<<<1, 1, 0, s>>>(perRow, rows, loss);
  ZRT_CUDA_CHECK(cudaGetLastError());
}
void mse(int32_t dtype, const void *pred, const void *target, float *loss, int64_t n, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_mse", dtype,
                 (mseKernel<<<1, 1, 0, s>>>(static_cast<const T *>(pred), static_cast<const T *>(target), loss, n)));
}
void mseGrad(int32_t dtype, const float *dloss, const void *pred, const void *target, void *dpred, int64_t n,
             cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_mse_grad", dtype,
                 (mseGradKernel<<<blocks(n), kThreads, 0, s>>>(dloss, static_cast<const T *>(pred),
                                                               static_cast<const T *>(target), static_cast<T *>(dpred), n)));
}
void embedding(int32_t dtype, const void *table, const int32_t *ids, void *out, int64_t count, VocabSlice vocab,
               int64_t channels, int *badId, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_embedding", dtype,
                 (embeddingKernel<<<blocks(count * channels), kThreads, 0, s>>>(
                     static_cast<const T *>(table), ids, static_cast<T *>(out), count, vocab.first, vocab.rows,
                     vocab.total, channels, badId)));
}
void embeddingGrad(int32_t dtype, const void *dy, const int32_t *ids, void *dtable, int64_t count, VocabSlice vocab,
                   int64_t channels, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_embedding_grad", dtype,
                 (embeddingGradRows<T><<<static_cast<unsigned>(std::clamp<int64_t>(vocab.rows, 1, 65535)),
                                         kRowThreads, 0, s>>>(
                     static_cast<const T *>(dy), ids, static_cast<T *>(dtable), count, vocab.first, vocab.rows,
                     channels)));
}
void vocabRowMaxima(int32_t dtype, const void *logits, float *maxima, int64_t rows, int64_t classes, double softcap,
                    cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_cross_entropy_vocab_shard", dtype,
                 (vocabRowMaxRows<<<rowGrid("zrt_cross_entropy_vocab_shard", rows), kRowThreads, 0, s>>>(
                     static_cast<const T *>(logits), maxima, classes, logitCap(softcap))));
}
void vocabSumExp(int32_t dtype, const void *logits, const int32_t *labels, const float *gathered, int ranks,
                 VocabRowStats stats, int64_t rows, VocabSlice vocab, double softcap, int *badLabel, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_cross_entropy_vocab_shard", dtype,
                 (vocabSumExpRows<<<rowGrid("zrt_cross_entropy_vocab_shard", rows), kRowThreads, 0, s>>>(
                     static_cast<const T *>(logits), labels, gathered, ranks, stats.maxima, stats.sums,
                     stats.labelLogits, rows, vocab.rows, vocab.first, vocab.total, badLabel,
                     logitCap(softcap))));
}
void vocabLoss(VocabRowStats stats, int64_t rows, float *loss, cudaStream_t s) {
  vocabLossKernel<<<1, 1, 0, s>>>(stats.maxima, stats.sums, stats.labelLogits, rows, loss);
  ZRT_CUDA_CHECK(cudaGetLastError());
}
void vocabGrad(int32_t dtype, const float *dloss, const void *logits, const int32_t *labels, VocabRowStats stats,
               void *dlogits, int64_t rows, VocabSlice vocab, double softcap, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_cross_entropy_grad_vocab_shard", dtype,
                 (vocabGradRows<<<rowGrid("zrt_cross_entropy_grad_vocab_shard", rows), kRowThreads, 0, s>>>(
                     dloss, static_cast<const T *>(logits), labels, stats.maxima, stats.sums,
                     static_cast<T *>(dlogits), rows, vocab.rows, vocab.first, logitCap(softcap))));
}
} // namespace zrt::cuda
