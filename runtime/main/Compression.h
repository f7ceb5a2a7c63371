// Compression training in train.bin (zcc --compression): the sparse-pruning masks computed
// from the initial weights (as DeepSpeed's init_compression does), the schedule's gates set
// before every step (DeepSpeed's compression scheduler), and the compressed weights
// --export-weights writes (DeepSpeed's redundancy_clean: quantized, then masked).
#ifndef ZRT_MAIN_COMPRESSION_H
#define ZRT_MAIN_COMPRESSION_H

#include <cstdint>
#include <vector>

#include "main/ModelInfo.h"

namespace zrt::train {

/// Every rank, after the initial weights are stored and before a resume restores the saved
/// masks: each mask state keeps the ceil(keep n) largest magnitudes of its parameter (ties:
/// the lower index first). Collective where ZeRO shards a parameter.
void computePruningMasks(const ModelInfo &model);

/// Sets every zc.step_gate for the step that follows `completedSteps` updates: gate k is on
/// once completedSteps >= model.stepGates[k], as DeepSpeed's scheduler switches a technique on.
void setStepGates(const ModelInfo &model, int64_t completedSteps);

/// Parameter `p`'s whole values, as its forward pass reads them: quantized on its grid, then
/// masked (reads the mask from the arena). Unchanged when `p` is not compressed.
void compressWeights(const ModelInfo &model, const ParamInfo &p, std::vector<float> &values);

} // namespace zrt::train

#endif // ZRT_MAIN_COMPRESSION_H
