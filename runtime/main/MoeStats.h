// How a step's Mixture-of-Experts routings divided the tokens among the experts (train.bin's
// log): every rank's routings since the last call (zrt_moe_take_stats), gathered over the world,
// so the line shows the whole mesh's, whichever rank's stage holds the MoE layers.
#ifndef ZRT_MAIN_MOESTATS_H
#define ZRT_MAIN_MOESTATS_H

#include <cstdint>
#include <vector>

#include "main/ModelInfo.h"

namespace zrt::train {

struct MoeStepStats {
  int64_t routings = 0;      // zrt_moe_route calls over the mesh (once per tensor-parallel group)
  int64_t fewest = 0;        // the fewest rows one expert got in one routing
  int64_t most = 0;          // the most
  double mean = 0;           // rows per expert per routing
  int64_t dropped = 0;       // tokens dropped (0: dropless)
};

/// Whether any stage program of this executable routes tokens (every rank links them all, so
/// every rank answers the same and calls gatherMoeStats together).
bool routesTokens(const std::vector<ModelInfo> &stages);

/// This step's routings over every rank, taken and reset (all ranks call it together). The
/// tensor-parallel ranks of a group route the same tokens: counted once.
MoeStepStats gatherMoeStats(int64_t tensorParallel);

} // namespace zrt::train

#endif // ZRT_MAIN_MOESTATS_H
