#include "main/PipelineSchedule.h"

namespace zrt::train {

std::vector<PipelineAction> oneForwardOneBackward(int64_t stage, int64_t stages, int64_t microBatches) {
  const int64_t slots = pipelineSlots(stage, stages, microBatches);
  const int64_t warmUp = slots - 1; // min(P - s - 1, K - 1): the steady state starts with a forward
  std::vector<PipelineAction> actions;
  int64_t forwards = 0, backwards = 0;
  for (; forwards < warmUp; ++forwards)
    actions.push_back({true, forwards, forwards % slots});
  while (backwards < microBatches) {
    if (forwards < microBatches) {
      actions.push_back({true, forwards, forwards % slots});
      ++forwards;
    }
    actions.push_back({false, backwards, backwards % slots});
    ++backwards;
  }
  return actions;
}

} // namespace zrt::train
