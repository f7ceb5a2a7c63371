// The 1F1B schedule of a pipeline stage (PipeDream-Flush, as Megatron-LM and DeepSpeed's
// PipelineEngine run it): stage s of P first runs the forwards of min(P - s - 1, K) micro-batches
// (warm-up), then alternates one forward and one backward, then runs the backwards left. At most
// P - s micro-batches are in flight, so a stage keeps that many inputs (slots).
#ifndef ZRT_MAIN_PIPELINESCHEDULE_H
#define ZRT_MAIN_PIPELINESCHEDULE_H

#include <cstdint>
#include <vector>

namespace zrt::train {

struct PipelineAction {
  bool forward;       // forward ("F"), else the step: recomputed forward and backward ("B")
  int64_t microBatch; // which of the step's K
  int64_t slot;       // which kept input it reads (microBatch % slots)
};

/// Stage `stage` of `stages`'s work for `microBatches` micro-batches, in order.
std::vector<PipelineAction> oneForwardOneBackward(int64_t stage, int64_t stages, int64_t microBatches);

/// The micro-batches stage `stage` keeps in flight (its input slots).
inline int64_t pipelineSlots(int64_t stage, int64_t stages, int64_t microBatches) {
  return microBatches < stages - stage ? microBatches : stages - stage;
}

} // namespace zrt::train

#endif // ZRT_MAIN_PIPELINESCHEDULE_H
