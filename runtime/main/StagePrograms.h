// The stage programs a rank runs. Without --pp, the one model zcc emitted; with --pp, the program
// of the rank's pipeline stage; interleaved (zcc --pp-interleave V, --pp-schedule zbv), the rank's
// V chunks, chunk c being virtual stage c P + r on pipeline rank r (ZB-V's second chunk: stage
// 2P - 1 - r; ModelInfo::stageOf). Each program plans its own arena: a rank's
// programs sit one after the other in its arena, each at its own page-aligned base, their
// descriptions placed there (placeInArena) so that whatever reads the arena by offset (weights,
// checkpoints, the overflow check, the high-water mark) reads the program's part.
#ifndef ZRT_MAIN_STAGEPROGRAMS_H
#define ZRT_MAIN_STAGEPROGRAMS_H

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "main/Data.h"
#include "main/ModelInfo.h"
#include "main/PipelineSchedule.h"

extern "C" {
/// One pipeline stage's functions and description, as zcc links them (zcc_stages; zcc/StageLink.h).
struct ZccStage {
  float (*step)(void *, void *const *);
  float (*forward)(void *, void *const *); // null on the last stage
  // The update in two halves, split at the gradient norm (the stage's part of it, then the norm
  // from the mesh's sum, zrt_grad_norm_reduce, and the optimizers).
  void (*updateReduce)(void *, double, int64_t);
  void (*updateApply)(void *, double, int64_t);
  const char *json;
  float (*eval)(void *, void *const *);   // the validation loss; null but on the last stage
  float (*weight)(void *, void *const *); // the weight gradients (W); null but under zero-bubble
};
}

namespace zrt::train {

/// One program a rank runs: its description placed at its base in the rank's arena, its functions,
/// its data and its input slots.
struct StageProgram {
  int64_t stage = 0; // which of zcc_stages (interleaved: the virtual stage, ModelInfo::stageOf)
  // The pipeline ranks of the stages before and after it (-1: none): where its input arrives
  // from and its gradient goes (ZB-V's turn at rank P - 1: the rank itself).
  int64_t prevRank = -1, nextRank = -1;
  ModelInfo model;
  char *arena = nullptr; // the rank's arena + model.arenaBase: where its program's buffers are
  float (*step)(void *, void *const *) = nullptr;
  float (*forward)(void *, void *const *) = nullptr; // null on the last stage
  float (*eval)(void *, void *const *) = nullptr;
  float (*weight)(void *, void *const *) = nullptr;
  std::unique_ptr<DataSource> data, evalData;
  std::vector<std::vector<char>> storage; // the data inputs' host rows
  std::vector<void *> hostRows;
  std::vector<std::vector<void *>> inputBuffers; // each input's buffers, model.inputs[i].slots of them
  std::vector<int64_t> firstBuffer; // zrt_input_buffer's index of input i's buffer 0 (buffer j: + j)
  int64_t activationInput = -1, activationGradInput = -1;
  /// The buffers of micro-batch m's calls: input i's buffer m % its slots.
  std::vector<void *> buffersOf(int64_t m) const;
  /// The bytes of every input buffer allocated (what the plan's in-flight inputs count).
  int64_t inputBufferBytes() const {
    int64_t bytes = 0;
    for (size_t i = 0; i < inputBuffers.size(); ++i)
      bytes += static_cast<int64_t>(inputBuffers[i].size()) * model.inputs[i].bytes;
    return bytes;
  }
  /// zrt_input_buffer's index of input i's buffer for micro-batch m.
  int64_t bufferIndex(int64_t i, int64_t m) const {
    return firstBuffer[i] + m % static_cast<int64_t>(inputBuffers[i].size());
  }
  /// Whether input i comes from the data (not a neighbour's activation or gradient, nor a stash).
  bool fromData(int64_t i) const;
};

/// The arena every rank allocates: the largest rank's, its programs' arenas one after the other.
/// `stages` are every stage program's descriptions (one without --pp), `chunks` per rank.
int64_t rankArenaBytes(const std::vector<ModelInfo> &stages, int64_t chunks);

/// Pipeline rank `pipeRank`'s programs, in chunk order, placed in `arena`. `linked` is zcc_stages
/// (null without --pp: then `step` and `eval` are the one model's).
std::vector<StageProgram> rankPrograms(const std::vector<ModelInfo> &stages, int64_t chunks, int64_t pipeRank,
                                       char *arena, const ZccStage *linked, float (*step)(void *, void *const *),
                                       float (*eval)(void *, void *const *));

/// Each program's data inputs' host rows and its inputs' buffers (zrt_input_buffer; as many as its
/// plan gives each input, model.inputs[i].slots), each program's after the previous one's.
void allocateInputs(std::vector<StageProgram> &programs);

/// A rank's pipeline receives over one step of its table: each started as soon as its buffer is
/// free (zcc::pipeline::bufferFreedAfter: the buffer's previous micro-batch's last work issued) and
/// waited for just before its own work, so the transfer overlaps the work issued between (the
/// CUDA backend's receive stream runs beside the compute; MPI moves the bytes while the rank
/// computes). Started in the table's order: each kind from each peer is received in the order
/// it was sent.
class ReceivesAhead {
public:
  ReceivesAhead(std::vector<StageProgram> &held, const std::vector<zcc::pipeline::Action> &schedule);
  /// Before a step.
  void reset() {
    next_ = 0;
    early_ = 0;
    std::fill(handle_.begin(), handle_.end(), -1);
  }
  /// Before issuing schedule[j]: starts every receive, in order, whose buffer is free by now.
  void startBefore(size_t j);
  /// Waits for schedule[j]'s receive (none for a W, a first stage's F or a last stage's B).
  void wait(size_t j);
  /// How many of the step's receives started before the work just ahead of their own (the last
  /// step's: each step runs the same table), and how many it has.
  int64_t startedEarly() const { return early_; }
  int64_t count() const;

private:
  struct Receive {
    void *buf = nullptr;
    int64_t bytes = 0;
    int32_t peer = -1, kind = 0;
  };
  Receive receiveOf(size_t j) const;
  /// The input schedule[j] receives into (F: the activation, B: its gradient), or -1.
  int64_t inputOf(size_t j) const;
  std::vector<StageProgram> &held_;
  const std::vector<zcc::pipeline::Action> &schedule_;
  std::vector<int64_t> freedAfter_, handle_;
  size_t next_ = 0;
  int64_t early_ = 0;
};

/// A parameter the first and the last of `stages` stages both hold (the tied embedding and head):
/// each has its part of the gradient; both update with the sum (Megatron's embedding group),
/// over the pipeline's end ranks, or within the rank that holds both (ZB-V's rank 0).
void sumTiedGradients(const std::vector<StageProgram> &held, int64_t stages);

/// The trace's name of a piece of a pipeline's work: "F", "B", "W", or on an interleaved rank
/// "F.1" (chunk 1). Names outlive the trace (trace::record keeps the pointer).
const char *workName(char kind, int64_t chunk, bool chunked);

} // namespace zrt::train

#endif // ZRT_MAIN_STAGEPROGRAMS_H
