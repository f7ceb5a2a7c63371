// cuDNN's fused attention (runtime/cuda/CudnnAttention.h) where cuDNN cannot run: the attention
// cuDNN's SDPA graphs compute, on the CPU, read and written through the SdpaProblem's dims and
// strides exactly as a graph built from them would (queued on the stream, as
// CpuMatmul.cpp stands in for cuBLASLt). So the conformance suite checks on the CPU what zcc
// hands cuDNN: the layouts and strides over zcc's tensors, the grouped-query head map, the causal
// band and the window's left bound, the scale, the statistics the backward reads, and the dispatch
// and scratch around them, against the CPU backend's attention. cuDNN's own kernels and plans are
// the GPU run's to check (scripts/gpu-check.sh).
//
// Semantics (cudnn-frontend's SDPA, io bf16, compute f32): S = scale Q K^T over the keys query i
// sees (j <= i, and j > i - left bound when there is one); Stats_i = max_j S_ij + log sum_j
// exp(S_ij - max); O = softmax(S) V, rounded to bf16. Backward: P = exp(S - Stats),
// D_i = dO_i . O_i, dV = P^T dO, dS = P (dO V^T - D), dQ = scale dS K, dK = scale dS^T Q, the
// key/value gradients of a group's query heads summed into their key/value head. Sums here run
// in double: the suite's bf16 tolerance covers cuDNN's f32 order.
#include "cuda/CudnnAttention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/Error.h"
#include "cuda/CudaCheck.h"
#include "zrt/bf16.h"

namespace zrt::cuda {
namespace {

void requireBf16(const SdpaProblem &p) {
  if (p.dtype != 1)
    fatal("zrt_causal_attention", "cuda-on-cpu: cuDNN's stand-in was handed dtype %d: the dispatch must refuse it",
          p.dtype);
}

double at(const void *base, const SdpaTensor &t, int64_t b, int64_t h, int64_t s, int64_t d) {
  return static_cast<float>(static_cast<const bf16 *>(base)[t.at(b, h, s, d)]);
}

void put(void *base, const SdpaTensor &t, int64_t b, int64_t h, int64_t s, int64_t d, double value) {
  static_cast<bf16 *>(base)[t.at(b, h, s, d)] = bf16(value);
}

/// Row i's scaled scores over keys 0..i (those the band hides: -inf).
std::vector<double> scores(const SdpaProblem &p, const void *q, const void *k, int64_t b, int64_t h, int64_t i) {
  std::vector<double> s(i + 1, -std::numeric_limits<double>::infinity());
  const int64_t g = p.kvHeadOf(h);
  for (int64_t j = 0; j <= i; ++j) {
    if (!p.sees(i, j))
      continue;
    double dot = 0;
    for (int64_t d = 0; d < p.headDim; ++d)
      dot += at(q, p.q, b, h, i, d) * at(k, p.kv, b, g, j, d);
    s[j] = p.scale * dot;
  }
  return s;
}

} // namespace

CudnnSupport cudnnSupport() { return {9, 91000}; } // a Hopper with cuDNN 9.10: every variant the dispatch passes

void cudnnAttentionForward(const SdpaProblem &problem, const void *q, const void *k, const void *v, void *out,
                           float *stats, cudaStream_t s) {
  requireBf16(problem);
  // Queued on the stream, as cuDNN's graph would be.
  cudaoncpu::enqueue(s, [=, p = problem] {
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t h = 0; h < p.heads; ++h)
        for (int64_t i = 0; i < p.time; ++i) {
          std::vector<double> row = scores(p, q, k, b, h, i);
          double max = -std::numeric_limits<double>::infinity(), sum = 0;
          for (double x : row)
            max = std::max(max, x);
          for (double &x : row)
            sum += (x = std::exp(x - max));
          stats[p.stats.at(b, h, i, 0)] = static_cast<float>(max + std::log(sum));
          for (int64_t d = 0; d < p.headDim; ++d) {
            double o = 0;
            for (int64_t j = 0; j <= i; ++j)
              o += row[j] * at(v, p.kv, b, p.kvHeadOf(h), j, d);
            put(out, p.q, b, h, i, d, o / sum);
          }
        }
  });
}

void cudnnAttentionBackward(const SdpaProblem &problem, const void *q, const void *k, const void *v, const void *out,
                            const void *dout, const float *stats, void *dq, void *dk, void *dv, cudaStream_t s) {
  requireBf16(problem);
  // Queued on the stream, as cuDNN's graph would be.
  cudaoncpu::enqueue(s, [=, p = problem] {
    const int64_t D = p.headDim;
    for (int64_t b = 0; b < p.batch; ++b) {
      // Key/value gradients in double until every query head of their group has added to them.
      std::vector<double> gk(p.kvHeads * p.time * D), gv(p.kvHeads * p.time * D);
      for (int64_t h = 0; h < p.heads; ++h) {
        const int64_t g = p.kvHeadOf(h);
        for (int64_t i = 0; i < p.time; ++i) {
          std::vector<double> prob = scores(p, q, k, b, h, i);
          const double lse = stats[p.stats.at(b, h, i, 0)];
          double delta = 0;
          for (int64_t d = 0; d < D; ++d)
            delta += at(dout, p.q, b, h, i, d) * at(out, p.q, b, h, i, d);
          std::vector<double> gq(D, 0.0);
          for (int64_t j = 0; j <= i; ++j) {
            const double pij = std::exp(prob[j] - lse); // 0 where the band hides j
            if (pij == 0)
              continue;
            double dp = 0;
            for (int64_t d = 0; d < D; ++d) {
              dp += at(dout, p.q, b, h, i, d) * at(v, p.kv, b, g, j, d);
              gv[(g * p.time + j) * D + d] += pij * at(dout, p.q, b, h, i, d);
            }
            const double ds = pij * (dp - delta) * p.scale;
            for (int64_t d = 0; d < D; ++d) {
              gq[d] += ds * at(k, p.kv, b, g, j, d);
              gk[(g * p.time + j) * D + d] += ds * at(q, p.q, b, h, i, d);
            }
          }
          for (int64_t d = 0; d < D; ++d)
            put(dq, p.q, b, h, i, d, gq[d]);
        }
      }
      for (int64_t g = 0; g < p.kvHeads; ++g)
        for (int64_t j = 0; j < p.time; ++j)
          for (int64_t d = 0; d < D; ++d) {
            put(dk, p.kv, b, g, j, d, gk[(g * p.time + j) * D + d]);
            put(dv, p.kv, b, g, j, d, gv[(g * p.time + j) * D + d]);
          }
    }
  });
}

} // namespace zrt::cuda
