// The arena's measured high-water mark: the scratch region is painted with a canary byte at
// start-up, and the highest byte that no longer holds it is how far the kernels wrote.
#ifndef ZRT_MAIN_WATERMARK_H
#define ZRT_MAIN_WATERMARK_H

#include <cstdint>

#include "main/ModelInfo.h"

namespace zrt::train {

/// Fills the scratch region (past the persistent buffers) with the canary; the description's
/// part of the rank's arena (placeInArena).
void paintScratch(const ModelInfo &m);

/// The arena's highest written byte + 1 (at least the persistent bytes), from the description's
/// own arena base (placeInArena).
int64_t measuredHighWater(const ModelInfo &m);

} // namespace zrt::train

#endif // ZRT_MAIN_WATERMARK_H
