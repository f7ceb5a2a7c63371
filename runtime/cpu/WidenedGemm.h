// The widened bf16 GEMM (cpu/WidenedMatmul.h): C (bf16) = op(A) op(B), A and B bf16, every
// product and sum in f32, C rounded to nearest even once. bf16 is widened where the operands
// are packed (a copy every GEMM makes anyway, so widening costs nothing extra), the
// micro-kernel multiplies f32 panels in registers, and the last K block rounds its f32 sums to
// bf16 in registers: no f32 copy of A, B or C exists outside the packing buffers and, when K
// spans several blocks, an f32 partial sum of the rows in flight.
//
// Blocking is BLIS's: B packed in NR-column panels (all of K for a block of columns, shared by
// the thread team), A packed in MR-row panels (a block of rows and K per thread), and an
// MR x NR micro-kernel whose B panel stays near L1 while it walks the A panels of its block.
// MR x NR per ISA level fill the vector registers (AVX-512: 12 x 32 in 24 of 32 zmm; AVX2 and
// SSE2: 6 x 2 vectors in 12 of 16). One thread of a Sapphire Rapids core: the micro-kernel at
// 170 GF/s (90% of the FMA peak); whole products at the GEMM shapes of the 10.7M GPT's and
// GPT-2 124M's steps, operands cold, at 0.83-0.96x oneDNN's f32 GEMM (1.1x on the 1536x384x2048
// weight gradient); both capped at AVX2, 0.96-1.03x.
//
// Compiled once per ISA level (cpu/IsaKernels.cpp) with GCC/Clang vector types, so the same
// code is SSE2, AVX2 + FMA or AVX-512 according to the level's -march.
#ifndef ZRT_CPU_WIDENEDGEMM_H
#define ZRT_CPU_WIDENEDGEMM_H

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "cpu/Parallel.h"
#include "cpu/WidenTiles.h"
#include "zrt/bf16.h"

// Full unrolling of a loop with a constant trip count (GCC and Clang both read this one).
#define ZRT_UNROLL _Pragma("GCC unroll 32")

namespace zrt::cpu {
inline namespace ZRT_ISA {
namespace widened_gemm {

#if defined(__AVX512F__)
constexpr int kW = 16, kMR = 12;
#elif defined(__AVX2__)
constexpr int kW = 8, kMR = 6;
#else
constexpr int kW = 4, kMR = 6;
#endif
constexpr int kNV = 2;         // vectors per micro-tile row
constexpr int kNR = kW * kNV;  // columns of a micro-tile

typedef float VF __attribute__((vector_size(kW * 4)));
typedef float VFu __attribute__((vector_size(kW * 4), aligned(4)));
typedef uint32_t VU __attribute__((vector_size(kW * 4)));
typedef uint16_t VH __attribute__((vector_size(kW * 2)));
typedef uint16_t VHu __attribute__((vector_size(kW * 2), aligned(2)));

inline float widen(bf16 x) { return bf16::toFloat(x.bits); }

/// x in every lane. Not `VF{} + x`: x + 0 is not x for x = -0, so that add stays in the loop
/// (a vaddss before every broadcast halved the micro-kernel's rate); x - 0 is x for every x,
/// and folds away.
inline VF splat(float x) { return x - VF{}; }

/// bf16::fromFloat on a vector: round to nearest even, NaN kept quiet.
inline VH roundToBf16(VF x) {
  const VU u = (VU)x;
  const VU rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const VU quietNaN = (u >> 16) | 0x40u;
  const VU isNaN = (VU)((u & 0x7fffffffu) > 0x7f800000u);
  return __builtin_convertvector((rounded & ~isNaN) | (quietNaN & isNaN), VH);
}

/// Grow-only, 64-byte aligned f32 buffer; one per role and thread, so the steady state
/// allocates nothing. Not std::vector: see Scratch in cpu/Parallel.h.
class PackBuffer {
public:
  ~PackBuffer() { std::free(data_); }
  float *get(int64_t floats) {
    if (floats > capacity_) {
      std::free(data_);
      const int64_t bytes = (floats * 4 + 63) / 64 * 64;
      data_ = static_cast<float *>(std::aligned_alloc(64, bytes));
      if (!data_)
        fatal("zrt_matmul", "widened bf16 GEMM: out of memory for %lld bytes of packing buffer",
              static_cast<long long>(bytes));
      capacity_ = floats;
    }
    return data_;
  }

private:
  float *data_ = nullptr;
  int64_t capacity_ = 0;
};

/// W bf16 values at src, widened (exact: the bf16 bits become the f32's high half).
inline VF widenVector(const bf16 *src) {
  VH h;
  __builtin_memcpy(&h, src, sizeof(h));
  return (VF)(__builtin_convertvector(h, VU) << 16);
}

/// One round of a W x W transpose: rows r and r + H (r & H == 0) exchange their H-lane blocks.
template <int H, int... L> inline VF transposeLo(VF a, VF b, std::integer_sequence<int, L...>) {
  return __builtin_shufflevector(a, b, ((L & H) ? kW + L - H : L)...);
}
template <int H, int... L> inline VF transposeHi(VF a, VF b, std::integer_sequence<int, L...>) {
  return __builtin_shufflevector(a, b, ((L & H) ? kW + L : L + H)...);
}
template <int H> inline void transposeRound(VF (&v)[kW]) {
  for (int r = 0; r < kW; ++r)
    if (!(r & H)) {
      const VF a = v[r], b = v[r + H];
      v[r] = transposeLo<H>(a, b, std::make_integer_sequence<int, kW>());
      v[r + H] = transposeHi<H>(a, b, std::make_integer_sequence<int, kW>());
    }
}
/// v[r][l] becomes v[l][r]: log2(W) rounds of W shuffles.
inline void transpose(VF (&v)[kW]) {
  if constexpr (kW >= 16)
    transposeRound<8>(v);
  if constexpr (kW >= 8)
    transposeRound<4>(v);
  transposeRound<2>(v);
  transposeRound<1>(v);
}

/// dst[p * R + r] = src[r * ld + p] widened, for r < rows and p < kc; zero for rows <= r < R.
/// The packing of A's rows into MR-row panels (R = MR) and of a transposed B's rows into
/// NR-column panels (R = NR): each W x W block of values is transposed in registers (a scalar
/// loop ran at 0.6-0.8 ns a value, 14% of a 2048x384x1536 product).
/// The W x W block of rows [r0, r0 + N) and K values [p, p + W), transposed into dst.
template <int R, int N> inline void packBlock(const bf16 *src, int64_t ld, int r0, int64_t p, float *dst) {
  VF v[kW];
  ZRT_UNROLL
  for (int r = 0; r < kW; ++r)
    v[r] = r < N ? widenVector(src + (r0 + r) * ld + p) : VF{};
  transpose(v);
  ZRT_UNROLL
  for (int l = 0; l < kW; ++l)
    __builtin_memcpy(dst + (p + l) * R + r0, &v[l], sizeof(float) * N);
}

template <int R>
inline void packTransposed(const bf16 *src, int64_t ld, int rows, int64_t kc, float *dst) {
  constexpr int kFullGroups = R / kW, kRest = R % kW; // row groups of W, and the rows left
  int64_t p = 0;
  if (rows == R)
    for (; p + kW <= kc; p += kW) {
      for (int g = 0; g < kFullGroups; ++g)
        packBlock<R, kW>(src, ld, g * kW, p, dst);
      if constexpr (kRest > 0)
        packBlock<R, kRest>(src, ld, kFullGroups * kW, p, dst);
    }
  for (; p < kc; ++p) { // the last K values, and panels of fewer rows
    for (int r = 0; r < rows; ++r)
      dst[p * R + r] = widen(src[r * ld + p]);
    for (int r = rows; r < R; ++r)
      dst[p * R + r] = 0.0f;
  }
}

/// dst[p * R + r] = src[p * ld + r] widened, for r < cols and p < kc; zero for cols <= r < R.
template <int R> inline void packRows(const bf16 *src, int64_t ld, int cols, int64_t kc, float *dst) {
  for (int64_t p = 0; p < kc; ++p) {
    const bf16 *row = src + p * ld;
    float *out = dst + p * R;
    for (int r = 0; r < cols; ++r)
      out[r] = widen(row[r]);
    for (int r = cols; r < R; ++r)
      out[r] = 0.0f;
  }
}

/// Rows [i0, i0 + mc) and K range [p0, p0 + kc) of op(A), widened into MR-row panels:
/// panel q holds rows i0 + q*MR.., as kc columns of MR values (zero past the last row).
inline void packA(const bf16 *a, int64_t lda, bool transA, int64_t i0, int64_t mc, int64_t p0,
                  int64_t kc, float *ap) {
  for (int64_t ir = 0; ir < mc; ir += kMR) {
    const int mr = static_cast<int>(std::min<int64_t>(kMR, mc - ir));
    if (transA) // A stored k x m: each k holds MR consecutive rows
      packRows<kMR>(a + p0 * lda + i0 + ir, lda, mr, kc, ap + ir * kc);
    else
      packTransposed<kMR>(a + (i0 + ir) * lda + p0, lda, mr, kc, ap + ir * kc);
  }
}

/// Panel `panel` (columns j0 + panel*NR..) of the K range [p0, p0 + kc) of op(B), widened:
/// kc rows of NR values (zero past the last column).
inline void packBPanel(const bf16 *b, int64_t ldb, bool transB, int64_t p0, int64_t kc,
                       int64_t j0, int64_t nc, int64_t panel, float *bp) {
  const int64_t jr = panel * kNR;
  const int nr = static_cast<int>(std::min<int64_t>(kNR, nc - jr));
  if (transB) // B stored n x k: each column of op(B) is a row
    packTransposed<kNR>(b + (j0 + jr) * ldb + p0, ldb, nr, kc, bp + jr * kc);
  else
    packRows<kNR>(b + p0 * ldb + j0 + jr, ldb, nr, kc, bp + jr * kc);
}

/// acc = the MR x NR product of one A panel and one B panel over kc.
inline void microKernel(int64_t kc, const float *__restrict ap, const float *__restrict bp,
                        VF (&acc)[kMR][kNV]) {
  // Unrolled by request, not left to the optimizer: rolled, acc lives in memory (seen at -O2
  // where the kernel was inlined into a bigger loop nest: 65 GF/s instead of 150).
  ZRT_UNROLL
  for (int i = 0; i < kMR; ++i)
    ZRT_UNROLL
    for (int v = 0; v < kNV; ++v)
      acc[i][v] = VF{};
  for (int64_t p = 0; p < kc; ++p) {
    VF bv[kNV];
    ZRT_UNROLL
    for (int v = 0; v < kNV; ++v)
      bv[v] = *reinterpret_cast<const VF *>(bp + p * kNR + v * kW);
    ZRT_UNROLL
    for (int i = 0; i < kMR; ++i) {
      const VF av = splat(ap[p * kMR + i]);
      ZRT_UNROLL
      for (int v = 0; v < kNV; ++v)
        acc[i][v] += av * bv[v];
    }
  }
}

/// Where a micro-tile's sums go: the f32 partial sums (first K block, then the next ones
/// added), or C in bf16 (the last K block, the partial sums added when there are some).
enum class Store { Partial, AddPartial, Round, AddPartialRound };

/// Stores an mr x nr corner of acc (MR x NR where the tile is whole) at row stride lds of the
/// partial sums s and ldc of C.
inline void storeTile(VF (&acc)[kMR][kNV], int mr, int nr, Store mode, float *s, int64_t lds,
                      bf16 *c, int64_t ldc) {
  // s is only touched (and may be null) where the mode has partial sums.
  if (mr == kMR && nr == kNR) {
    ZRT_UNROLL
    for (int i = 0; i < kMR; ++i)
      ZRT_UNROLL
      for (int v = 0; v < kNV; ++v) {
        switch (mode) {
        case Store::Partial:
          *reinterpret_cast<VFu *>(s + i * lds + v * kW) = acc[i][v];
          break;
        case Store::AddPartial: {
          VFu *partial = reinterpret_cast<VFu *>(s + i * lds + v * kW);
          *partial = *partial + acc[i][v];
          break;
        }
        case Store::Round:
          *reinterpret_cast<VHu *>(c + i * ldc + v * kW) = roundToBf16(acc[i][v]);
          break;
        case Store::AddPartialRound:
          *reinterpret_cast<VHu *>(c + i * ldc + v * kW) =
              roundToBf16(*reinterpret_cast<const VFu *>(s + i * lds + v * kW) + acc[i][v]);
          break;
        }
      }
    return;
  }
  alignas(64) float tile[kMR][kNR];
  for (int i = 0; i < kMR; ++i)
    for (int v = 0; v < kNV; ++v)
      *reinterpret_cast<VF *>(&tile[i][v * kW]) = acc[i][v];
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) {
      switch (mode) {
      case Store::Partial: s[i * lds + j] = tile[i][j]; break;
      case Store::AddPartial: s[i * lds + j] += tile[i][j]; break;
      case Store::Round: c[i * ldc + j] = bf16(tile[i][j]); break;
      case Store::AddPartialRound: c[i * ldc + j] = bf16(s[i * lds + j] + tile[i][j]); break;
      }
    }
}

} // namespace widened_gemm

/// C (m x n, row stride n) = op(A) op(B) for bf16 A (m x k, k x m when transA) and B (k x n,
/// n x k when transB), dense; see the top of this file.
///
/// Loops: column blocks of C (B packed for the whole K, every thread a share of its panels),
/// then row blocks of A (a thread each), then K blocks. Where K spans several blocks, the
/// sums so far of a row block live in its thread's partial buffer (rows x columns of the
/// block, mostly in L2) until the last K block rounds them into C.
inline void widenedGemm(const bf16 *a, const bf16 *b, bf16 *c, int64_t m, int64_t n, int64_t k,
                        bool transA, bool transB, const WidenTiles &tiles) {
  using namespace widened_gemm;
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) { // an empty sum
    for (int64_t i = 0; i < m * n; ++i)
      c[i].bits = 0;
    return;
  }
  const int64_t lda = transA ? m : k, ldb = transB ? k : n;
  // K blocks of equal size, none above tiles.k: 768 runs as 2 x 384, not 512 + 256.
  const int64_t kBlocks = (k + tiles.k - 1) / tiles.k, kc0 = (k + kBlocks - 1) / kBlocks;
  // Columns of a B block: at most tiles.n, and at most what keeps the packed B (all of K)
  // within tiles.packedB floats.
  const int64_t ncBudget = std::max<int64_t>(kNR, tiles.packedB / k / kNR * kNR);
  const int64_t nc0 = std::min(n, std::min(tiles.n, ncBudget)), mc0 = std::min(m, tiles.m);
  const int64_t ncPadded = (nc0 + kNR - 1) / kNR * kNR;
  thread_local PackBuffer bBuffer; // the calling thread's, shared with its team
  float *bp = bBuffer.get(k * ncPadded);
#pragma omp parallel if (2.0 * m * n * k >= tiles.minParallelFlops)
  {
    thread_local PackBuffer aBuffer, partialBuffer; // this thread's
    float *ap = aBuffer.get((mc0 + kMR - 1) / kMR * kMR * kc0);
    float *partial = kBlocks > 1 ? partialBuffer.get(mc0 * nc0) : nullptr;
    for (int64_t j0 = 0; j0 < n; j0 += nc0) {
      const int64_t nc = std::min(nc0, n - j0), panels = (nc + kNR - 1) / kNR;
      // B's K block starting at p0 is at bp + p0 * ncPadded, panel q at q * NR * kc in it.
#pragma omp for schedule(static)
      for (int64_t job = 0; job < kBlocks * panels; ++job) {
        const int64_t p0 = job / panels * kc0, kc = std::min(kc0, k - p0);
        packBPanel(b, ldb, transB, p0, kc, j0, nc, job % panels, bp + p0 * ncPadded);
      }
#pragma omp for schedule(static)
      for (int64_t i0 = 0; i0 < m; i0 += mc0) {
        const int64_t mc = std::min(mc0, m - i0);
        for (int64_t p0 = 0; p0 < k; p0 += kc0) {
          const int64_t kc = std::min(kc0, k - p0);
          const bool first = p0 == 0, last = p0 + kc >= k;
          const Store mode = first ? (last ? Store::Round : Store::Partial)
                                   : (last ? Store::AddPartialRound : Store::AddPartial);
          packA(a, lda, transA, i0, mc, p0, kc, ap);
          const float *bBlock = bp + p0 * ncPadded;
          for (int64_t jr = 0; jr < nc; jr += kNR) {
            const int nr = static_cast<int>(std::min<int64_t>(kNR, nc - jr));
            for (int64_t ir = 0; ir < mc; ir += kMR) {
              const int mr = static_cast<int>(std::min<int64_t>(kMR, mc - ir));
              VF acc[kMR][kNV];
              microKernel(kc, ap + ir * kc, bBlock + jr * kc, acc);
              storeTile(acc, mr, nr, mode, partial ? partial + ir * nc0 + jr : nullptr, nc0,
                        c + (i0 + ir) * n + j0 + jr, n);
            }
          }
        }
      }
    }
  }
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_WIDENEDGEMM_H
