// Block sizes of the widened bf16 GEMM (cpu/WidenedGemm.h), shared by its callers and the
// ISA levels it is compiled for.
#ifndef ZRT_CPU_WIDENTILES_H
#define ZRT_CPU_WIDENTILES_H

#include <cstdint>

namespace zrt::cpu {

/// m: rows of an A block (a thread's unit of work; its f32 partial sums, m x n floats, stay
/// near L2 while K spans several blocks); n: most columns of a packed B block; k: most of K
/// in a block (a B panel of k x NR floats, 48 KiB on AVX-512 at 384); packedB: most floats of
/// a packed B block, all of K for its columns (8 MiB). Any positive sizes are correct; the
/// tests use small ones to reach every edge.
struct WidenTiles {
  int64_t m = 192, n = 2048, k = 384, packedB = int64_t(2) << 20;
  /// Products of fewer flops run on the calling thread alone: waking the team costs more.
  double minParallelFlops = 1 << 20;
};

} // namespace zrt::cpu

#endif // ZRT_CPU_WIDENTILES_H
