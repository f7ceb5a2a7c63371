// DeepSeek-V3's aux-loss-free load balancing (DeepSeek-V3 technical report, section 2.1.2;
// Megatron-Core's --moe-router-enable-expert-bias): a routing chooses its experts by score plus a
// per-expert bias (zc.moe_route's `bias` parameter), which gets no gradient. After each update
// train.bin moves it towards the mean load,
//
//     b_e += rate x sign(mean_e' load_e' - load_e),
//
// load_e being the choices expert e got over the step's micro-batches on every rank (the counted
// routings' only: a recomputed copy is not counted), as Megatron-Core's _update_router_expert_bias
// sums them over the data- and tensor-parallel ranks before the same rule. The tensor-parallel ranks
// of a group count the same tokens: every load is scaled alike, which no sign sees.
#ifndef ZRT_MAIN_EXPERTBIAS_H
#define ZRT_MAIN_EXPERTBIAS_H

#include <vector>

#include "main/ModelInfo.h"

namespace zrt::train {

class ExpertBiases {
public:
  /// Every stage program's bias parameters, in stage and model order, so that every rank (whatever
  /// its stage) takes part in the same reduction. Fatal where a bias has a copy the update would
  /// leave stale (ZeRO++'s secondary shard).
  explicit ExpertBiases(const std::vector<ModelInfo> &stages);

  bool empty() const { return biases.empty(); }

  /// This step's loads, summed over the world (every rank calls it together), and each bias of the
  /// `held` programs moved by `rate`.
  void update(const std::vector<const ModelInfo *> &held, double rate);

  /// A skipped step: its loads are dropped, no bias moves (no collective).
  void discard();

private:
  std::vector<const ParamInfo *> biases;
};

} // namespace zrt::train

#endif // ZRT_MAIN_EXPERTBIAS_H
