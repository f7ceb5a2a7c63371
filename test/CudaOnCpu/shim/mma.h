// nvcuda::wmma on the CPU: a plain reference of the warp-level matrix multiply. On a GPU a
// fragment is spread over the warp's 32 threads in an unspecified layout; here every thread
// holds the whole tile, and load, store, fill and mma_sync act on all of it. Code that only uses
// those calls (as the kernels must: the GPU's layout is unspecified) computes the same values.
// A store writes the lane's share only, and a load is the warp's at once (detail::load).
// Products accumulate in f32 in k order (the tensor cores' order differs within the suite's
// tolerance).
#ifndef ZRT_CUDA_ON_CPU_MMA_H
#define ZRT_CUDA_ON_CPU_MMA_H

#include "cuda_bf16.h"

// UBSan's array-bounds and pointer-overflow checks put a branch at each index of the tile loops
// below and keep them scalar under the sanitizers (the tiles' indices are fixed by the template; ASan
// still checks every load and store).
#if defined(__clang__)
#define ZRT_WMMA_UNCHECKED __attribute__((no_sanitize("bounds", "pointer-overflow")))
#else
#define ZRT_WMMA_UNCHECKED
#endif

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K> struct FragmentShape;
template <int M, int N, int K> struct FragmentShape<matrix_a, M, N, K> { static constexpr int rows = M, cols = K; };
template <int M, int N, int K> struct FragmentShape<matrix_b, M, N, K> { static constexpr int rows = K, cols = N; };
template <int M, int N, int K> struct FragmentShape<accumulator, M, N, K> { static constexpr int rows = M, cols = N; };

/// The tile, row-major: element (r, c) is x[r * cols + c] whatever the layout it was loaded from.
template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
  static constexpr int rows = FragmentShape<Use, M, N, K>::rows, cols = FragmentShape<Use, M, N, K>::cols;
  static constexpr int num_elements = rows * cols;
  T x[num_elements];
};

template <class Use, int M, int N, int K, class T, class Layout, class V>
void fill_fragment(fragment<Use, M, N, K, T, Layout> &f, const V &value) {
  for (T &e : f.x)
    e = T(value);
}

namespace detail {
/// A load is the warp's at once: no lane may store over the tile before every lane has read it
/// (accumulateRowsTimesTile loads, adds and stores back in place).
template <class Frag, class P> ZRT_WMMA_UNCHECKED void load(Frag &f, const P *p, unsigned ldm, bool rowMajor) {
  for (int r = 0; r < Frag::rows; ++r)
    for (int c = 0; c < Frag::cols; ++c)
      f.x[r * Frag::cols + c] = rowMajor ? p[size_t(r) * ldm + c] : p[size_t(c) * ldm + r];
  zrt::cudaoncpu::warpBarrier();
}
} // namespace detail

/// matrix_a and matrix_b: the layout is the fragment's.
template <class Use, int M, int N, int K, class T, class P>
void load_matrix_sync(fragment<Use, M, N, K, T, row_major> &f, const P *p, unsigned ldm) {
  detail::load(f, p, ldm, true);
}
template <class Use, int M, int N, int K, class T, class P>
void load_matrix_sync(fragment<Use, M, N, K, T, col_major> &f, const P *p, unsigned ldm) {
  detail::load(f, p, ldm, false);
}
/// The accumulator: the layout is the call's.
template <int M, int N, int K, class T, class P>
void load_matrix_sync(fragment<accumulator, M, N, K, T> &f, const P *p, unsigned ldm, layout_t layout) {
  detail::load(f, p, ldm, layout == mem_row_major);
}
/// The lane that holds element (r, c) of a 16 x 16 accumulator on sm_80 and sm_90: two m16n8 tiles
/// of PTX's mma.sync, lane 4g + q holding rows g and g + 8, columns 2q, 2q + 1 and those + 8.
constexpr uint32_t accumulatorLane(int r, int c) { return 4 * uint32_t(r % 8) + uint32_t(c % 8) / 2; }

/// Each lane writes its own share of the tile, as on the GPU each writes its registers: a lane that
/// reads the tile before a __syncwarp reads the other lanes' shares unwritten.
template <int M, int N, int K, class T, class P>
void store_matrix_sync(P *p, const fragment<accumulator, M, N, K, T> &f, unsigned ldm, layout_t layout) {
  static_assert(M == 16 && N == 16, "only the 16 x 16 accumulator's lanes are modelled");
  const auto w = zrt::cudaoncpu::warpPlace();
  const uint32_t lane = w.fiber - w.first;
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c)
      if (accumulatorLane(r, c) == lane)
        (layout == mem_row_major ? p[size_t(r) * ldm + c] : p[size_t(c) * ldm + r]) = f.x[r * N + c];
}

/// d = a x b + c, in f32. Each lane computes the whole tile (its copy is the fragment), so the 32
/// lanes of a warp repeat it: the operands are widened once and the inner loop runs over a row of
/// the tile, which the compiler vectorizes (the CUDA conformance suite's bf16 attention spent most
/// of its time here). Each element still adds its products to c in k order.
template <int M, int N, int K, class TA, class LA, class TB, class LB, class TC>
ZRT_WMMA_UNCHECKED void mma_sync(fragment<accumulator, M, N, K, TC> &d, const fragment<matrix_a, M, N, K, TA, LA> &a,
              const fragment<matrix_b, M, N, K, TB, LB> &b, const fragment<accumulator, M, N, K, TC> &c) {
  float wideA[M * K], wideB[K * N], sum[M * N];
  for (int e = 0; e < M * K; ++e)
    wideA[e] = float(a.x[e]);
  for (int e = 0; e < K * N; ++e)
    wideB[e] = float(b.x[e]);
  for (int e = 0; e < M * N; ++e)
    sum[e] = float(c.x[e]);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const float aik = wideA[i * K + k];
      for (int j = 0; j < N; ++j)
        sum[i * N + j] += aik * wideB[k * N + j];
    }
  for (int e = 0; e < M * N; ++e)
    d.x[e] = TC(sum[e]);
}

} // namespace nvcuda::wmma

#endif // ZRT_CUDA_ON_CPU_MMA_H
