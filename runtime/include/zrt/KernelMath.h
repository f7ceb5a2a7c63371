// The per-element math of the kernels, shared by the CPU and CUDA backends (`ZRT_HD`:
// __host__ __device__ under nvcc): the CPU kernels loop over these, the CUDA kernels
// call them per thread, so the CPU test suite checks the math both backends run.
#ifndef ZRT_KERNELMATH_H
#define ZRT_KERNELMATH_H

#include <cmath>
#include <cstdint>
#include <cstring>

#include "zrt/bf16.h"

#if defined(__clang__) && !defined(__CUDA_ARCH__)
#define ZRT_EXP_UNCHECKED __attribute__((no_sanitize("float-cast-overflow", "shift", "signed-integer-overflow")))
#else
#define ZRT_EXP_UNCHECKED
#endif

namespace zrt::math {
// Built into the CPU backend's per-ISA objects (cpu/IsaKernels.cpp), these templates take that
// level's inline namespace as the kernels there do: a lambda the compiler keeps out of line is
// then a symbol of its own level, never merged with the generic build's (isa_symbols.sh).
#ifdef ZRT_ISA
inline namespace ZRT_ISA {
#endif


/// exp for f32 in plain arithmetic (Cephes' range reduction and polynomial, about
/// 1 ulp), so CPU loops vectorize (glibc's expf is a call) and both backends agree.
/// Inputs below -87 give exp(-87) = 1.6e-38, the smallest result that is still a normal
/// float: Cephes' bound of -87.34 let results fall to subnormals, and each subnormal operand
/// costs a CPU microcode assist (see vtanh). No caller can tell exp(-87) from a smaller
/// value: tanh and softmax add it to 1 or to the row's largest term.
///
/// Without UBSan's checks of the exponent's conversion and shift: they cannot fire (the clamp
/// leaves n in [-126, 127], so (n + 127) << 23 fits), but their branches kept every loop calling
/// vexp scalar in the sanitizer build (GELU's gradient 10x slower there; GELU a fifth of a GPT step's
/// time); ASan still checks those loops' loads and stores.
ZRT_EXP_UNCHECKED ZRT_HD float vexp(float x) {
  x = fminf(88.3762626647949f, fmaxf(-87.0f, x));
  float n = floorf(x * 1.44269504088896341f + 0.5f);
  float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}
ZRT_HD double vexp(double x) { return ::exp(x); }

/// tanh(u) = 1 - 2 / (exp(2u) + 1): exact limits at +-inf, absolute error ~1e-7. |u| is
/// clamped at 10, where tanh is +-1 in f32 already (1 - tanh(10) = 4e-9 < half an ulp):
/// the same results, but 2 / (exp(2u) + 1) no longer falls to a subnormal for u near 44
/// (GELU of inputs above 10), each of which costs a microcode assist.
ZRT_HD float vtanh(float u) {
  u = fminf(10.0f, fmaxf(-10.0f, u));
  return 1.0f - 2.0f / (vexp(2.0f * u) + 1.0f);
}
ZRT_HD double vtanh(double u) { return ::tanh(u); }

/// GELU, tanh form (GPT-2): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
template <class A> ZRT_HD A geluValue(A x) {
  const A s = A(0.7978845608028654), c = A(0.044715);
  return A(0.5) * x * (A(1) + vtanh(s * (x + c * x * x * x)));
}
template <class A> ZRT_HD A geluDerivative(A x) {
  const A s = A(0.7978845608028654), c = A(0.044715);
  A t = vtanh(s * (x + c * x * x * x));
  return A(0.5) * (A(1) + t) + A(0.5) * x * (A(1) - t * t) * s * (A(1) + A(3) * c * x * x);
}

/// GELU, exact form (PyTorch's default `gelu`, Pythia's `hidden_act: gelu`): 0.5 x (1 + erf(x / sqrt 2)),
/// and its derivative 0.5 (1 + erf(x / sqrt 2)) + x phi(x), phi the normal density.
ZRT_HD float verf(float u) { return erff(u); }
ZRT_HD double verf(double u) { return ::erf(u); }
template <class A> ZRT_HD A geluErfValue(A x) { return A(0.5) * x * (A(1) + verf(x * A(0.7071067811865476))); }
template <class A> ZRT_HD A geluErfDerivative(A x) {
  return A(0.5) * (A(1) + verf(x * A(0.7071067811865476))) + x * A(0.3989422804014327) * vexp(A(-0.5) * x * x);
}

/// SiLU (Llama's MLP activation): x sigmoid(x), and its derivative s (1 + x (1 - s)).
/// vexp's clamp keeps exp(-x) finite: sigmoid of inputs below -87 is exp(-87)-small, not 0/0.
template <class A> ZRT_HD A sigmoidValue(A x) { return A(1) / (A(1) + vexp(-x)); }
template <class A> ZRT_HD A siluValue(A x) { return x * sigmoidValue(x); }
template <class A> ZRT_HD A siluDerivative(A x) {
  A s = sigmoidValue(x);
  return s * (A(1) + x * (A(1) - s));
}

template <class A> ZRT_HD A reluValue(A x) { return x > A(0) ? x : A(0); }
template <class A> ZRT_HD A reluGradValue(A dy, A x) { return x > A(0) ? dy : A(0); }

/// One AdamW step's constants (torch.optim.AdamW), computed once per tensor on the host.
struct AdamWStep {
  float decay, stepSize, invSqrtBias2, beta1, beta2, eps;
};
inline AdamWStep adamwStep(double lr, double beta1, double beta2, double eps, double weightDecay, int64_t step) {
  const double bias1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bias2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  return {static_cast<float>(1.0 - lr * weightDecay), static_cast<float>(lr / bias1),
          static_cast<float>(1.0 / std::sqrt(bias2)), static_cast<float>(beta1), static_cast<float>(beta2),
          static_cast<float>(eps)};
}
/// p *= 1 - lr*wd; m, v moments; p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps).
ZRT_HD float adamwElement(float p, float g, float &m, float &v, const AdamWStep &s) {
  p *= s.decay;
  m = s.beta1 * m + (1.0f - s.beta1) * g;
  v = s.beta2 * v + (1.0f - s.beta2) * g * g;
  return p - s.stepSize * m / (sqrtf(v) * s.invSqrtBias2 + s.eps);
}

/// torch.nn.utils.clip_grad_norm_'s coefficient: max_norm / (norm + 1e-6), at most 1 (f32, as
/// PyTorch computes it on f32 gradients); 1 when max_norm is 0 (no clipping).
ZRT_HD float gradClipCoefficient(float norm, double maxNorm) {
  if (maxNorm <= 0)
    return 1.0f;
  const float coef = static_cast<float>(maxNorm) / (norm + 1e-6f);
  return coef < 1.0f ? coef : 1.0f;
}

/// torch.optim.SGD(momentum, weight_decay, dampening=0, nesterov=False).
ZRT_HD float sgdElement(float p, float g, float &buf, float lr, float momentum, float weightDecay) {
  g += weightDecay * p;
  buf = momentum * buf + g;
  return p - lr * buf;
}

// --- Row-wise math: one row of a normalization, a softmax or a loss, in the order the
// CPU backend sums (a CUDA thread runs the same loop, so both agree to the last bit
// where their exp/log/sqrt do).

/// The sum over j < n of term(j) as 16 interleaved partial sums, then the partials in order. A
/// running sum is a serial chain of adds the compiler may not reorder (one add per 4 cycles:
/// the normalizations' rows ran at about 10 GB/s); 16 lanes vectorize at every ISA level, and
/// the order is fixed by the code, not by the vector width.
constexpr int kLanes = 16;
template <class A, class Term> ZRT_HD A laneSum(int64_t n, Term term) {
  A part[kLanes];
  for (int l = 0; l < kLanes; ++l)
    part[l] = A(0);
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l)
      part[l] += term(j + l);
  for (int l = 0; j < n; ++j, ++l)
    part[l] += term(j);
  A sum = 0;
  for (int l = 0; l < kLanes; ++l)
    sum += part[l];
  return sum;
}

ZRT_HD float mexp(float x) { return ::expf(x); }
ZRT_HD double mexp(double x) { return ::exp(x); }
ZRT_HD float mlog(float x) { return ::logf(x); }
ZRT_HD double mlog(double x) { return ::log(x); }
ZRT_HD float msqrt(float x) { return ::sqrtf(x); }
ZRT_HD double msqrt(double x) { return ::sqrt(x); }

template <class A> struct LogSumExp {
  A max, logSum;
};

/// Gemma 2's final-logit soft-cap: the loss reads `cap tanh(z / cap)` for each logit z, and
/// a logit's gradient is the capped one's times the slope 1 - tanh^2. cap 0: the logit as is.
template <class A> struct LogitCap {
  A cap = 0;
  ZRT_HD bool on() const { return cap > A(0); }
  ZRT_HD A value(A z) const { return on() ? cap * vtanh(z / cap) : z; }
  /// The capped value and (in `slope`) its derivative, one tanh.
  ZRT_HD A value(A z, A &slope) const {
    if (!on()) {
      slope = A(1);
      return z;
    }
    A t = vtanh(z / cap);
    slope = A(1) - t * t;
    return cap * t;
  }
};

/// max and log(sum(exp(z - max))) over the row's (capped) logits. tanh is increasing, so
/// the capped maximum is the cap of the raw one.
template <class A, class T>
ZRT_HD LogSumExp<A> rowLogSumExp(const T *row, int64_t classes, LogitCap<A> cap = {}) {
  A maxValue = static_cast<A>(row[0]);
  for (int64_t c = 1; c < classes; ++c)
    maxValue = static_cast<A>(row[c]) > maxValue ? static_cast<A>(row[c]) : maxValue;
  A sum = 0;
  if (!cap.on()) {
    for (int64_t c = 0; c < classes; ++c)
      sum += mexp(static_cast<A>(row[c]) - maxValue);
    return {maxValue, mlog(sum)};
  }
  maxValue = cap.value(maxValue);
  for (int64_t c = 0; c < classes; ++c)
    sum += mexp(cap.value(static_cast<A>(row[c])) - maxValue);
  return {maxValue, mlog(sum)};
}

template <class A, class T> ZRT_HD void rowMoments(const T *xr, int64_t cols, double eps, A &mean, A &rstd) {
  mean = laneSum<A>(cols, [&](int64_t c) { return static_cast<A>(xr[c]); }) / A(cols);
  const A m = mean;
  A var = laneSum<A>(cols, [&](int64_t c) {
    A d = static_cast<A>(xr[c]) - m;
    return d * d;
  });
  var /= A(cols);
  rstd = A(1) / msqrt(var + A(eps));
}

template <class A, class T>
ZRT_HD void layernormRow(const T *xr, const T *gamma, const T *beta, T *yr, int64_t cols, double eps) {
  A mean, rstd;
  rowMoments<A>(xr, cols, eps, mean, rstd);
  for (int64_t c = 0; c < cols; ++c)
    yr[c] = T((static_cast<A>(xr[c]) - mean) * rstd * static_cast<A>(gamma[c]) + static_cast<A>(beta[c]));
}

/// dx of one row; returns the row's mean and rstd for the parameter gradients.
template <class A, class T>
ZRT_HD void layernormGradRow(const T *dyr, const T *xr, const T *gamma, T *dxr, int64_t cols, double eps, A &mean,
                             A &rstd) {
  rowMoments<A>(xr, cols, eps, mean, rstd);
  const A m = mean, r = rstd;
  A meanDxhat = laneSum<A>(cols, [&](int64_t c) { return static_cast<A>(dyr[c]) * static_cast<A>(gamma[c]); });
  A meanDxhatXhat = laneSum<A>(cols, [&](int64_t c) {
    return static_cast<A>(dyr[c]) * static_cast<A>(gamma[c]) * ((static_cast<A>(xr[c]) - m) * r);
  });
  meanDxhat /= A(cols);
  meanDxhatXhat /= A(cols);
  for (int64_t c = 0; c < cols; ++c) {
    A xhat = (static_cast<A>(xr[c]) - mean) * rstd;
    A dxhat = static_cast<A>(dyr[c]) * static_cast<A>(gamma[c]);
    dxr[c] = T(rstd * (dxhat - meanDxhat - xhat * meanDxhatXhat));
  }
}

/// 1 / sqrt(mean(x^2) + eps) of one row (RMSNorm).
template <class A, class T> ZRT_HD A rowRstdRms(const T *xr, int64_t cols, double eps) {
  A sumSquares = laneSum<A>(cols, [&](int64_t c) { return static_cast<A>(xr[c]) * static_cast<A>(xr[c]); });
  return A(1) / msqrt(sumSquares / A(cols) + A(eps));
}

template <class A, class T>
ZRT_HD void rmsnormRow(const T *xr, const T *gamma, T *yr, int64_t cols, double eps, A gainOffset = A(0)) {
  const A rstd = rowRstdRms<A>(xr, cols, eps);
  for (int64_t c = 0; c < cols; ++c)
    yr[c] = T(static_cast<A>(xr[c]) * rstd * (static_cast<A>(gamma[c]) + gainOffset));
}

/// dx of one RMSNorm row, r (mean(g n) n subtracted from g = dy gamma, n = x r); returns r
/// for the gain's gradient.
template <class A, class T>
ZRT_HD A rmsnormGradRow(const T *dyr, const T *xr, const T *gamma, T *dxr, int64_t cols, double eps,
                        A gainOffset = A(0)) {
  const A rstd = rowRstdRms<A>(xr, cols, eps);
  A meanGN = laneSum<A>(cols, [&](int64_t c) {
    return static_cast<A>(dyr[c]) * (static_cast<A>(gamma[c]) + gainOffset) * static_cast<A>(xr[c]) * rstd;
  });
  meanGN /= A(cols);
  for (int64_t c = 0; c < cols; ++c) {
    A n = static_cast<A>(xr[c]) * rstd;
    dxr[c] = T(rstd * (static_cast<A>(dyr[c]) * (static_cast<A>(gamma[c]) + gainOffset) - n * meanGN));
  }
  return rstd;
}

/// dgamma[c] of RMSNorm: the sum over the rows of dy x r, given each row's r.
template <class A, class T>
ZRT_HD void rmsnormParamGradColumn(const T *dy, const T *x, const A *rstds, int64_t rows, int64_t cols, int64_t c,
                                   T *dgamma) {
  A dg = 0;
  for (int64_t r = 0; r < rows; ++r)
    dg += static_cast<A>(dy[r * cols + c]) * static_cast<A>(x[r * cols + c]) * rstds[r];
  dgamma[c] = T(dg);
}

/// Context parallelism's layout (Megatron-LM's, for causal balance): a sequence is 2 x `ranks`
/// chunks and context rank r holds chunk r, then chunk 2 ranks - 1 - r, so under causal
/// attention every rank has the same work. The sequence chunk of rank `rank`'s half `half`.
ZRT_HD int64_t contextChunk(int64_t ranks, int64_t rank, int64_t half) {
  return half == 0 ? rank : 2 * ranks - 1 - rank;
}
/// The position in the whole sequence of local token t of the `tokens` (two chunks) rank `rank` holds.
ZRT_HD int64_t contextPosition(int64_t ranks, int64_t rank, int64_t t, int64_t tokens) {
  const int64_t chunkTokens = tokens / 2;
  return contextChunk(ranks, rank, t / chunkTokens) * chunkTokens + t % chunkTokens;
}

/// The channels of a head of `headDim` a rotary embedding turns: `rotaryDims` (zc.rotary's
/// rotary_dims, GPT-NeoX's rotary_pct), or the whole head for 0.
ZRT_HD int64_t rotatedChannels(int64_t headDim, int64_t rotaryDims) { return rotaryDims > 0 ? rotaryDims : headDim; }

/// Rotary embedding's angle for position `t` and frequency `i` of a head of `headDim`
/// channels, computed as Hugging Face's LlamaRotaryEmbedding computes it in f32:
/// inv_freq = 1 / theta^(2i / D), then t * inv_freq.
ZRT_HD float rotaryAngle(int64_t t, int64_t i, int64_t headDim, double theta) {
  float invFreq = 1.0f / powf(static_cast<float>(theta), static_cast<float>(2 * i) / static_cast<float>(headDim));
  return static_cast<float>(t) * invFreq;
}

/// Pair i of one head's rotation (half-split layout: x1 = x[i], x2 = x[i + half]):
/// (x1 cos - x2 sin, x2 cos + x1 sin), sin negated for the inverse. In place is allowed.
template <class A, class T>
ZRT_HD void rotaryPair(const T *x, T *y, int64_t i, int64_t half, float cosine, float sine, bool inverse) {
  A c = A(cosine), s = inverse ? -A(sine) : A(sine);
  A x1 = static_cast<A>(x[i]), x2 = static_cast<A>(x[i + half]);
  y[i] = T(x1 * c - x2 * s);
  y[i + half] = T(x2 * c + x1 * s);
}
template <class A, class T>
ZRT_HD void rotaryHead(const T *x, T *y, const float *cosines, const float *sines, int64_t half, bool inverse) {
  for (int64_t i = 0; i < half; ++i)
    rotaryPair<A>(x, y, i, half, cosines[i], sines[i], inverse);
}

/// dgamma[c], dbeta[c]: sums over the rows, given each row's mean and rstd.
template <class A, class T>
ZRT_HD void layernormParamGradColumn(const T *dy, const T *x, const A *means, const A *rstds, int64_t rows,
                                     int64_t cols, int64_t c, T *dgamma, T *dbeta) {
  A dg = 0, db = 0;
  for (int64_t r = 0; r < rows; ++r) {
    A g = static_cast<A>(dy[r * cols + c]);
    dg += g * (static_cast<A>(x[r * cols + c]) - means[r]) * rstds[r];
    db += g;
  }
  dgamma[c] = T(dg);
  dbeta[c] = T(db);
}

template <class A, class T> ZRT_HD void softmaxRow(const T *xr, T *yr, int64_t cols) {
  LogSumExp<A> lse = rowLogSumExp<A>(xr, cols);
  for (int64_t c = 0; c < cols; ++c)
    yr[c] = T(mexp((static_cast<A>(xr[c]) - lse.max) - lse.logSum));
}

template <class A, class T> ZRT_HD void softmaxGradRow(const T *dyr, const T *yr, T *dxr, int64_t cols) {
  A dot = 0;
  for (int64_t c = 0; c < cols; ++c)
    dot += static_cast<A>(dyr[c]) * static_cast<A>(yr[c]);
  for (int64_t c = 0; c < cols; ++c)
    dxr[c] = T(static_cast<A>(yr[c]) * (static_cast<A>(dyr[c]) - dot));
}

/// Cross-entropy of one row: log-sum-exp minus the label's logit (both capped by `cap`).
template <class A, class T>
ZRT_HD A crossEntropyRow(const T *row, int32_t label, int64_t classes, LogitCap<A> cap = {}) {
  LogSumExp<A> lse = rowLogSumExp<A>(row, classes, cap);
  return (lse.max - cap.value(static_cast<A>(row[label]))) + lse.logSum;
}

/// The gradient of the mean cross-entropy for one row, `g` = dloss / rows: g (softmax - onehot)
/// of the capped logits, times the cap's slope.
template <class A, class T>
ZRT_HD void crossEntropyGradRow(const T *row, int32_t label, T *drow, int64_t classes, A g, LogitCap<A> cap = {}) {
  LogSumExp<A> lse = rowLogSumExp<A>(row, classes, cap);
  for (int64_t c = 0; c < classes; ++c) {
    A slope;
    A p = mexp((cap.value(static_cast<A>(row[c]), slope) - lse.max) - lse.logSum);
    drow[c] = T(g * (p - (c == label ? A(1) : A(0))) * slope);
  }
}

/// One row's cross-entropy (returned) and its gradient, written over the row: the fused
/// language-model head's per-row step, with crossEntropyRow's and crossEntropyGradRow's
/// arithmetic and one log-sum-exp.
template <class A, class T>
ZRT_HD A crossEntropyRowAndGrad(T *row, int32_t label, int64_t classes, A g, LogitCap<A> cap = {}) {
  LogSumExp<A> lse = rowLogSumExp<A>(row, classes, cap);
  A loss = (lse.max - cap.value(static_cast<A>(row[label]))) + lse.logSum;
  for (int64_t c = 0; c < classes; ++c) {
    A slope;
    A p = mexp((cap.value(static_cast<A>(row[c]), slope) - lse.max) - lse.logSum);
    row[c] = T(g * (p - (c == label ? A(1) : A(0))) * slope);
  }
  return loss;
}

#ifdef ZRT_ISA
} // namespace ZRT_ISA
#endif
} // namespace zrt::math

#endif // ZRT_KERNELMATH_H
