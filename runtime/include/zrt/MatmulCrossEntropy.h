// The workspace of zc.matmul_cross_entropy (a language-model head and its loss, forward and
// backward, a chunk of rows at a time) and of zc.matmul_cross_entropy_loss (the loss alone), laid out once: the compiler sizes it so the memory plan
// places it like any other buffer, and both runtimes carve it up the same way.
#ifndef ZRT_MATMULCROSSENTROPY_H
#define ZRT_MATMULCROSSENTROPY_H

#include <cstdint>

namespace zrt {

struct MatmulCrossEntropyLayout {
  static constexpr int64_t kAlignment = 64;

  /// f32 [rows] (f64 for f64): each row's loss, summed in row order once every chunk is done.
  int64_t rowLossOffset = 0;
  /// T [chunkRows, classes]: one chunk's logits, overwritten in place by their gradient.
  int64_t chunkOffset = 0;
  /// Only for 2-byte types over more than one chunk (zero-sized otherwise): the weight
  /// gradient's running f32 sum, and one chunk's contribution to it in T.
  int64_t sumOffset = 0, partOffset = 0;
  int64_t bytes = 0;
  bool sumsInF32 = false;

  static int64_t align(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

  /// `weightElements` = classes x channels; `elementBytes` of T (4 for f32, 2 for bf16, 8 for
  /// the tests' f64).
  static MatmulCrossEntropyLayout of(int64_t rows, int64_t classes, int64_t weightElements, int64_t chunkRows,
                                     int64_t elementBytes) {
    MatmulCrossEntropyLayout l;
    l.chunkOffset = align(rows * (elementBytes == 8 ? 8 : 4));
    int64_t end = l.chunkOffset + align(chunkRows * classes * elementBytes);
    l.sumsInF32 = elementBytes < 4 && chunkRows < rows;
    if (l.sumsInF32) {
      l.sumOffset = end;
      l.partOffset = l.sumOffset + align(weightElements * 4);
      end = l.partOffset + align(weightElements * elementBytes);
    }
    l.bytes = end;
    return l;
  }

  /// zc.matmul_cross_entropy_loss's (the loss alone, a forward-only function's head): each
  /// row's loss and one chunk's logits.
  static MatmulCrossEntropyLayout forLoss(int64_t rows, int64_t classes, int64_t chunkRows, int64_t elementBytes) {
    MatmulCrossEntropyLayout l;
    l.chunkOffset = align(rows * (elementBytes == 8 ? 8 : 4));
    l.bytes = l.chunkOffset + align(chunkRows * classes * elementBytes);
    return l;
  }
};

} // namespace zrt

#endif // ZRT_MATMULCROSSENTROPY_H
