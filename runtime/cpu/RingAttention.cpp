// Ring attention on the CPU backend (context parallelism, --cp-mode ring): each context rank
// keeps its queries and passes key/value blocks around the ring, merging each block's
// contribution with the online softmax (Liu et al. 2023, Megatron-Core's context parallelism);
// the gradient recomputes the forward's row statistics, then passes the blocks around again
// with their key/value gradients, which end back on the rank that owns them.
//
// Tokens are in zrt_context_chunks' layout: rank r holds chunks r and 2 cp - 1 - r of the
// 2 cp chunks, so every rank computes the same number of visible (query chunk, key chunk)
// pairs: causal attention's work is balanced. A pair is skipped when every key follows every
// query, masked on its diagonal, whole otherwise.
#include "zrt/zrt.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/Error.h"
#include "core/RotaryDims.h"
#include "core/Trace.h"
#include "zrt/KernelMath.h"
#include "cpu/Parallel.h"
#include "cpu/RingAttention.h"
#include "cpu/Rotary.h"
#include "cpu/Sgemm.h"

using namespace zrt;
using namespace zrt::cpu;

namespace {

std::atomic<int64_t> scoresComputed{0};

/// This rank's place in the ring and the chunk layout of its `tokens` local tokens.
struct Ring {
  int32_t axis;
  int64_t ranks, rank, half; // half: tokens per chunk
  int64_t chunk(int64_t r, int h) const { return math::contextChunk(ranks, r, h); }
  int64_t next() const { return (rank + 1) % ranks; }
  int64_t previous() const { return (rank + ranks - 1) % ranks; }
};

Ring ringOf(const char *call, int32_t axis, int64_t tokens) {
  Ring ring{axis, zrt_mesh_size(axis), zrt_mesh_rank(axis), tokens / 2};
  if (tokens <= 0 || tokens % 2 != 0)
    fatal(call, "%lld local tokens are not two equal chunks", static_cast<long long>(tokens));
  return ring;
}

struct Shape {
  int64_t B, L, C, H, G, D, Ckv;
  Shape(const char *call, int64_t B, int64_t L, int64_t C, int64_t H, int64_t G)
      : B(B), L(L), C(C), H(H), G(G), D(H > 0 ? C / H : 0), Ckv(H > 0 ? G * (C / H) : 0) {
    if (B < 0 || H <= 0 || G <= 0 || C % H != 0 || H % G != 0)
      fatal(call, "%lld channels, %lld heads and %lld key/value heads do not fit", static_cast<long long>(C),
            static_cast<long long>(H), static_cast<long long>(G));
  }
  int64_t group() const { return H / G; }
};

/// Rows [row0, row0 + rows) of one head's D columns (starting at column `col`) of a [L, width]
/// matrix of T, as floats.
template <class T> void load(const T *x, int64_t width, int64_t col, int64_t row0, int64_t rows, int64_t D, float *out) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t d = 0; d < D; ++d)
      out[i * D + d] = static_cast<float>(x[(row0 + i) * width + col + d]);
}

/// Query rows per block: a block's scores (kRows x a chunk's keys) stay in cache between the
/// GEMMs and the softmax.
constexpr int64_t kRows = 64;

/// The scaled scores of `rows` queries against `keys` keys: s is rows x keys. On a diagonal
/// pair (query and key chunk the same) row i of a block at i0 sees keys 0..i0 + i only, so the
/// block needs keys = i0 + rows of them.
void scores(const float *q, const float *k, int64_t rows, int64_t keys, int64_t D, float scale, float *s) {
  scoresComputed.fetch_add(rows * keys, std::memory_order_relaxed);
  sgemm("zrt_ring_attention", false, true, rows, keys, D, q, D, k, D, 0.0f, s, keys);
#pragma omp simd
  for (int64_t i = 0; i < rows * keys; ++i)
    s[i] *= scale;
}

/// The forward over every key/value block of the ring: per (batch, head, local token) the
/// running maximum m, sum l and unnormalized output acc [B, H, L, D]; at the end acc holds the
/// output and lse the log-sum-exp (m + log l).
template <class T>
void ringForward(const Ring &ring, const Shape &s, const T *q, const T *k, const T *v, std::vector<float> &acc,
                 std::vector<float> &lse) {
  const int64_t kvElements = s.B * s.L * s.Ckv, half = ring.half, D = s.D;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  acc.assign(s.B * s.H * s.L * D, 0.0f);
  std::vector<float> m(s.B * s.H * s.L, -std::numeric_limits<float>::infinity()), l(s.B * s.H * s.L, 0.0f);
  // Two blocks of [k | v]: the one computed on, the one arriving.
  std::vector<T> blocks[2] = {std::vector<T>(2 * kvElements), std::vector<T>(2 * kvElements)};
  std::memcpy(blocks[0].data(), k, kvElements * sizeof(T));
  std::memcpy(blocks[0].data() + kvElements, v, kvElements * sizeof(T));
  for (int64_t step = 0; step < ring.ranks; ++step) {
    const int64_t source = (ring.rank - step + ring.ranks) % ring.ranks;
    std::vector<T> &current = blocks[step % 2], &arriving = blocks[(step + 1) % 2];
    int64_t handle = -1;
    if (step + 1 < ring.ranks) // the next block travels while this one is computed
      handle = zrt_ring_exchange_start(ring.axis, current.data(), arriving.data(),
                                       static_cast<int64_t>(current.size() * sizeof(T)),
                                       static_cast<int32_t>(ring.next()), static_cast<int32_t>(ring.previous()));
    const T *kb = current.data(), *vb = current.data() + kvElements;
    parallelFor(s.B * s.G, 1, [&](int64_t bg) {
      const int64_t b = bg / s.G, g = bg % s.G;
      // This block's keys and values of the group's head, both chunks, loaded once.
      std::vector<float> qh(half * D), kh(2 * half * D), vh(2 * half * D), p(kRows * half);
      load(kb + b * s.L * s.Ckv, s.Ckv, g * D, 0, 2 * half, D, kh.data());
      load(vb + b * s.L * s.Ckv, s.Ckv, g * D, 0, 2 * half, D, vh.data());
      for (int64_t h = g * s.group(); h < (g + 1) * s.group(); ++h)
        for (int qa = 0; qa < 2; ++qa) {
          load(q + b * s.L * s.C, s.C, h * D, qa * half, half, D, qh.data());
          for (int ka = 0; ka < 2; ++ka) {
            const int64_t qc = ring.chunk(ring.rank, qa), kc = ring.chunk(source, ka);
            if (kc > qc)
              continue; // every key after every query
            const bool diagonal = kc == qc;
            for (int64_t i0 = 0; i0 < half; i0 += kRows) {
            const int64_t rows = std::min(kRows, half - i0), keys = diagonal ? i0 + rows : half;
            scores(qh.data() + i0 * D, kh.data() + ka * half * D, rows, keys, D, scale, p.data());
            const int64_t row0 = (b * s.H + h) * s.L + qa * half + i0;
            for (int64_t i = 0; i < rows; ++i) {
              float *pr = p.data() + i * keys;
              const int64_t visible = diagonal ? i0 + i + 1 : half;
              float blockMax = -std::numeric_limits<float>::infinity();
              for (int64_t j = 0; j < visible; ++j)
                blockMax = std::max(blockMax, pr[j]);
              const float mOld = m[row0 + i], mNew = std::max(mOld, blockMax);
              const float alpha = std::exp(mOld - mNew); // 0 for the first block seen
              float sum = 0;
#pragma omp simd reduction(+ : sum)
              for (int64_t j = 0; j < visible; ++j) {
                pr[j] = math::vexp(pr[j] - mNew);
                sum += pr[j];
              }
              for (int64_t j = visible; j < keys; ++j)
                pr[j] = 0;
              m[row0 + i] = mNew;
              l[row0 + i] = l[row0 + i] * alpha + sum;
              float *a = acc.data() + (row0 + i) * D;
              for (int64_t d = 0; d < D; ++d)
                a[d] *= alpha;
            }
            sgemm("zrt_ring_attention", false, false, rows, D, keys, p.data(), keys, vh.data() + ka * half * D, D,
                  1.0f, acc.data() + row0 * D, D);
            }
          }
        }
    });
    if (handle >= 0)
      zrt_wait(handle);
  }
  lse.resize(m.size());
  parallelFor(static_cast<int64_t>(m.size()), 1024, [&](int64_t row) {
    const float inv = 1.0f / l[row];
    for (int64_t d = 0; d < D; ++d)
      acc[row * D + d] *= inv;
    lse[row] = m[row] + std::log(l[row]);
  });
}

template <class T>
void forward(const Ring &ring, const Shape &s, const T *q, const T *k, const T *v, T *out) {
  std::vector<float> acc, lse;
  ringForward(ring, s, q, k, v, acc, lse);
  parallelFor(s.B * s.L, 64, [&](int64_t row) {
    const int64_t b = row / s.L, t = row % s.L;
    for (int64_t h = 0; h < s.H; ++h)
      for (int64_t d = 0; d < s.D; ++d)
        out[row * s.C + h * s.D + d] = static_cast<T>(acc[((b * s.H + h) * s.L + t) * s.D + d]);
  });
}

template <class T>
void backward(const Ring &ring, const Shape &s, const T *dout, const T *q, const T *k, const T *v, T *dq, T *dk,
              T *dv) {
  const int64_t half = ring.half, D = s.D, kvElements = s.B * s.L * s.Ckv;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // The forward's output and row statistics again, then delta = rowsum(dO * O).
  std::vector<float> out, lse;
  ringForward(ring, s, q, k, v, out, lse);
  std::vector<float> delta(s.B * s.H * s.L), dqAcc(s.B * s.H * s.L * D, 0.0f);
  parallelFor(s.B * s.H * s.L, 1024, [&](int64_t row) {
    const int64_t b = row / (s.H * s.L), h = row / s.L % s.H, t = row % s.L;
    float dot = 0;
    for (int64_t d = 0; d < D; ++d)
      dot += static_cast<float>(dout[(b * s.L + t) * s.C + h * D + d]) * out[row * D + d];
    delta[row] = dot;
  });
  // A travelling block: [dk | dv] as floats (the sums over every rank's queries), then [k | v].
  const size_t bytes = 2 * kvElements * sizeof(float) + 2 * kvElements * sizeof(T);
  std::vector<char> blocks[2] = {std::vector<char>(bytes, 0), std::vector<char>(bytes, 0)};
  std::memcpy(blocks[0].data() + 2 * kvElements * sizeof(float), k, kvElements * sizeof(T));
  std::memcpy(blocks[0].data() + 2 * kvElements * sizeof(float) + kvElements * sizeof(T), v, kvElements * sizeof(T));
  for (int64_t step = 0; step < ring.ranks; ++step) {
    const int64_t source = (ring.rank - step + ring.ranks) % ring.ranks;
    std::vector<char> &current = blocks[step % 2];
    auto *dkb = reinterpret_cast<float *>(current.data()), *dvb = dkb + kvElements;
    auto *kb = reinterpret_cast<const T *>(dvb + kvElements), *vb = kb + kvElements;
    parallelFor(s.B * s.G, 1, [&](int64_t bg) {
      const int64_t b = bg / s.G, g = bg % s.G;
      std::vector<float> qh(half * D), gh(half * D), kh(half * D), vh(half * D), p(kRows * half), ds(kRows * half);
      std::vector<float> dkh(half * D), dvh(half * D);
      for (int ka = 0; ka < 2; ++ka) {
        const int64_t kc = ring.chunk(source, ka);
        load(kb + b * s.L * s.Ckv, s.Ckv, g * D, ka * half, half, D, kh.data());
        load(vb + b * s.L * s.Ckv, s.Ckv, g * D, ka * half, half, D, vh.data());
        std::fill(dkh.begin(), dkh.end(), 0.0f);
        std::fill(dvh.begin(), dvh.end(), 0.0f);
        for (int64_t h = g * s.group(); h < (g + 1) * s.group(); ++h)
          for (int qa = 0; qa < 2; ++qa) {
            const int64_t qc = ring.chunk(ring.rank, qa);
            if (kc > qc)
              continue;
            load(q + b * s.L * s.C, s.C, h * D, qa * half, half, D, qh.data());
            load(dout + b * s.L * s.C, s.C, h * D, qa * half, half, D, gh.data());
            const bool diagonal = kc == qc;
            for (int64_t i0 = 0; i0 < half; i0 += kRows) {
            const int64_t rows = std::min(kRows, half - i0), keys = diagonal ? i0 + rows : half;
            const float *qb = qh.data() + i0 * D, *gb = gh.data() + i0 * D;
            scores(qb, kh.data(), rows, keys, D, scale, p.data());
            const int64_t row0 = (b * s.H + h) * s.L + qa * half + i0;
            // P = exp(S - lse), zero where masked; dP = dO V^T; dS = P (dP - delta) scale.
            sgemm("zrt_ring_attention_grad", false, true, rows, keys, D, gb, D, vh.data(), D, 0.0f, ds.data(), keys);
            for (int64_t i = 0; i < rows; ++i) {
              const int64_t visible = diagonal ? i0 + i + 1 : half;
              float *pr = p.data() + i * keys, *dr = ds.data() + i * keys;
              const float rowLse = lse[row0 + i], rowDelta = delta[row0 + i];
#pragma omp simd
              for (int64_t j = 0; j < visible; ++j) {
                pr[j] = math::vexp(pr[j] - rowLse);
                dr[j] = pr[j] * (dr[j] - rowDelta) * scale;
              }
              for (int64_t j = visible; j < keys; ++j)
                pr[j] = dr[j] = 0.0f;
            }
            // dQ += dS K; dK += dS^T Q; dV += P^T dO (the block's keys only).
            sgemm("zrt_ring_attention_grad", false, false, rows, D, keys, ds.data(), keys, kh.data(), D, 1.0f,
                  dqAcc.data() + row0 * D, D);
            sgemm("zrt_ring_attention_grad", true, false, keys, D, rows, ds.data(), keys, qb, D, 1.0f, dkh.data(), D);
            sgemm("zrt_ring_attention_grad", true, false, keys, D, rows, p.data(), keys, gb, D, 1.0f, dvh.data(), D);
            }
          }
        for (int64_t i = 0; i < half; ++i)
          for (int64_t d = 0; d < D; ++d) {
            const int64_t at = (b * s.L + ka * half + i) * s.Ckv + g * D + d;
            dkb[at] += dkh[i * D + d];
            dvb[at] += dvh[i * D + d];
          }
      }
    });
    // The block and its gradients move on; after ranks steps each is home.
    std::vector<char> &arriving = blocks[(step + 1) % 2];
    zrt_wait(zrt_ring_exchange_start(ring.axis, current.data(), arriving.data(), static_cast<int64_t>(bytes),
                                     static_cast<int32_t>(ring.next()), static_cast<int32_t>(ring.previous())));
  }
  const auto *home = reinterpret_cast<const float *>(blocks[ring.ranks % 2].data());
  parallelFor(kvElements, kElementGrain, [&](int64_t i) {
    dk[i] = static_cast<T>(home[i]);
    dv[i] = static_cast<T>(home[kvElements + i]);
  });
  parallelFor(s.B * s.L, 64, [&](int64_t row) {
    const int64_t b = row / s.L, t = row % s.L;
    for (int64_t h = 0; h < s.H; ++h)
      for (int64_t d = 0; d < D; ++d)
        dq[row * s.C + h * D + d] = static_cast<T>(dqAcc[((b * s.H + h) * s.L + t) * D + d]);
  });
}

} // namespace

int64_t zrt::cpu::ringAttentionScores() { return scoresComputed.load(); }

extern "C" {

void zrt_ring_attention(int32_t dtype, const void *q, const void *k, const void *v, void *out, int64_t batch,
                        int64_t tokens, int64_t channels, int64_t heads, int64_t kvHeads, int32_t axis) {
  TraceScope trace("zrt_ring_attention", TraceTrack::Compute);
  const Ring ring = ringOf("zrt_ring_attention", axis, tokens);
  const Shape s("zrt_ring_attention", batch, tokens, channels, heads, kvHeads);
  if (dtype == ZRT_DTYPE_BF16)
    forward(ring, s, static_cast<const bf16 *>(q), static_cast<const bf16 *>(k), static_cast<const bf16 *>(v),
            static_cast<bf16 *>(out));
  else if (dtype == ZRT_DTYPE_F32)
    forward(ring, s, static_cast<const float *>(q), static_cast<const float *>(k), static_cast<const float *>(v),
            static_cast<float *>(out));
  else
    fatal("zrt_ring_attention", "unknown dtype %d (0 = f32, 1 = bf16)", dtype);
}

void zrt_ring_attention_grad(int32_t dtype, const void *dout, const void *q, const void *k, const void *v, void *dq,
                             void *dk, void *dv, int64_t batch, int64_t tokens, int64_t channels, int64_t heads,
                             int64_t kvHeads, int32_t axis) {
  TraceScope trace("zrt_ring_attention_grad", TraceTrack::Compute);
  const Ring ring = ringOf("zrt_ring_attention_grad", axis, tokens);
  const Shape s("zrt_ring_attention_grad", batch, tokens, channels, heads, kvHeads);
  if (dtype == ZRT_DTYPE_BF16)
    backward(ring, s, static_cast<const bf16 *>(dout), static_cast<const bf16 *>(q), static_cast<const bf16 *>(k),
             static_cast<const bf16 *>(v), static_cast<bf16 *>(dq), static_cast<bf16 *>(dk), static_cast<bf16 *>(dv));
  else if (dtype == ZRT_DTYPE_F32)
    backward(ring, s, static_cast<const float *>(dout), static_cast<const float *>(q), static_cast<const float *>(k),
             static_cast<const float *>(v), static_cast<float *>(dq), static_cast<float *>(dk),
             static_cast<float *>(dv));
  else
    fatal("zrt_ring_attention_grad", "unknown dtype %d (0 = f32, 1 = bf16)", dtype);
}

void zrt_rotary_context(int32_t axis, int32_t dtype, const void *x, void *y, int64_t batch, int64_t time,
                        int64_t channels, int64_t heads, double theta, int32_t inverse, int64_t rotaryDims) {
  TraceScope trace("zrt_rotary_context", TraceTrack::Compute);
  const Ring ring = ringOf("zrt_rotary_context", axis, time);
  checkRotaryDims("zrt_rotary_context", channels, heads, rotaryDims);
  std::vector<int64_t> positions(time);
  for (int64_t t = 0; t < time; ++t)
    positions[t] = math::contextPosition(ring.ranks, ring.rank, t, time);
  if (dtype == ZRT_DTYPE_BF16)
    rotary(static_cast<const bf16 *>(x), static_cast<bf16 *>(y), batch, time, channels, heads, theta, inverse != 0,
           positions.data(), rotaryDims);
  else if (dtype == ZRT_DTYPE_F32)
    rotary(static_cast<const float *>(x), static_cast<float *>(y), batch, time, channels, heads, theta, inverse != 0,
           positions.data(), rotaryDims);
  else
    fatal("zrt_rotary_context", "unknown dtype %d (0 = f32, 1 = bf16)", dtype);
}

} // extern "C"
