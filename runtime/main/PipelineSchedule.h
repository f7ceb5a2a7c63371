// A pipeline's schedule: which work each stage runs, in which order, for the K micro-batches of a
// step. One object for everything that needs it: train.bin executes each stage's list, zcc's
// --report predicts the bubble by timing the table, the simulator times it with the cluster's
// costs, and --trace labels each piece of work by it. (C++ only: zcc and the runtime both build it.)
//
// Work kinds. F: a micro-batch's forward through the stage (it sends its output on and keeps
// what the backward reads). B: the backward; under 1F1B the whole of it, under the zero-bubble
// schedules only the input's gradient (sent back to the previous stage at once). W: the weight
// gradients, which nothing downstream waits for, so the schedule defers them into the bubbles.
//
// Schedules (torchtitan's names):
// - "1f1b" (PipeDream-Flush, as Megatron-LM and DeepSpeed's PipelineEngine run it): stage s of P
//   runs min(P - s - 1, K) forwards (warm-up), then alternates one forward and one backward, then
//   runs the backwards left. At most P - s micro-batches are in flight at stage s.
// - "zb-h1" (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, the first handcrafted
//   schedule): 1F1B's forwards and input-gradient backwards, each stage's W deferred into the
//   time it would otherwise wait for its neighbours, with at most min(K, P) micro-batches in flight
//   at any stage (1F1B's peak, that of its first stage). Bubble (P - 1)(F + B - W) against 1F1B's
//   (P - 1)(F + B + W). The table is built by placing each micro-batch's forwards stage by stage
//   and its backwards from the last stage back, putting a stage's pending W's in front of an F or B
//   when memory requires it or when they finish before that work's input arrives (at unit costs).
// - "interleaved-1f1b" (Narayanan et al., SC'21; Megatron-LM's forward_backward_pipelining_with_
//   interleaving): each of the P pipeline ranks holds V chunks of layers, virtual stage j = c P + r
//   being rank r's chunk c (Megatron's assignment), so a micro-batch crosses the ranks V times. A
//   rank runs its K V forwards in groups of P micro-batches per chunk (chunk 0's first P, chunk
//   1's, ..., then chunk 0's next P), its backwards in the same groups from the last chunk down:
//   (P - r - 1) 2 + (V - 1) P warm-up forwards, then one forward and one backward, then the
//   backwards left (all forwards first when K = P). Bubble (P - 1)/V of 1F1B's per chunk's
//   work; K a multiple of P (Megatron's condition).
// - "zbv" (ZB-V, the V-shaped zero-bubble schedule of Qi et al.; PyTorch's
//   ScheduleZBVZeroBubble, torchtitan's ZBVZeroBubble): two chunks per rank placed in a V, rank r
//   holding virtual stages r and 2P - 1 - r, so a micro-batch goes down the ranks and back up and
//   rank 0 holds both the first stage and the last (the loss); rank P - 1 hands its first
//   chunk's output to its second itself. The backward split as zero-bubble's, each rank's order
//   PyTorch's: 2(P - r) - 1 forwards of chunk 0, then r pairs of chunk 1's and chunk 0's forward,
//   then P - r times chunk 1's F, B and W, then chunk 0's F B W and chunk 1's F B W in turn, then
//   the backwards left and their W's. Close to no bubble at the activation memory of 1F1B's
//   first stage.
//
// A micro-batch stays in flight at its stage (its chunk's, when interleaved) from its F to its last
// piece of backward (B under 1F1B, W under zero-bubble); a stage holds each in-flight
// micro-batch's inputs and kept activations in one of its `slots` input slots (interleaved: each
// chunk its own number, the most it holds at once), micro-batch m in slot m % slots (each chunk's
// in-flight micro-batches are consecutive: no two share one). Under zero-bubble an input held
// for a shorter span (Hold: F to B, B to W) has fewer buffers of its own (heldSlots).
#ifndef ZRT_MAIN_PIPELINESCHEDULE_H
#define ZRT_MAIN_PIPELINESCHEDULE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zcc::pipeline {

enum class Schedule { OneFOneB, ZeroBubbleH1, Interleaved1F1B, ZeroBubbleV };

/// "1f1b", "zb-h1", "interleaved-1f1b", "zbv"; nullopt for another name.
std::optional<Schedule> parseSchedule(const std::string &name);
const char *scheduleName(Schedule schedule);
/// The names, for error messages and --help: "1f1b, zb-h1, interleaved-1f1b, zbv".
const char *scheduleNames();
/// Whether the schedule splits the backward into B (input gradient) and W (weight gradient).
inline bool splitsBackward(Schedule schedule) {
  return schedule == Schedule::ZeroBubbleH1 || schedule == Schedule::ZeroBubbleV;
}
/// Whether each rank holds several chunks (virtual stages).
inline bool interleaves(Schedule schedule) {
  return schedule == Schedule::Interleaved1F1B || schedule == Schedule::ZeroBubbleV;
}
/// The chunks per rank the schedule fixes (ZB-V: 2), or 0 where the user chooses (--pp-interleave).
inline int64_t fixedChunks(Schedule schedule) { return schedule == Schedule::ZeroBubbleV ? 2 : 0; }

/// Where the virtual stages sit on the pipeline ranks. Loop (Megatron's): virtual stage j is
/// chunk j / P of rank j mod P. Vee (ZB-V's, two chunks): rank r holds stages r and 2P - 1 - r.
enum class Placement { Loop, Vee };
inline Placement placementOf(Schedule schedule) {
  return schedule == Schedule::ZeroBubbleV ? Placement::Vee : Placement::Loop;
}
/// The pipeline rank of virtual stage `stage` of `ranks` x chunks.
inline int64_t rankOfStage(Placement placement, int64_t stage, int64_t ranks) {
  if (placement == Placement::Vee && stage >= ranks)
    return 2 * ranks - 1 - stage;
  return stage % ranks;
}
/// Which of its rank's chunks virtual stage `stage` is.
inline int64_t chunkOfStage(Placement placement, int64_t stage, int64_t ranks) {
  (void)placement; // both placements: the stages of chunk c are [c P, (c + 1) P)
  return stage / ranks;
}
/// The virtual stage chunk `chunk` of pipeline rank `rank` runs.
inline int64_t stageOf(Placement placement, int64_t rank, int64_t chunk, int64_t ranks) {
  if (placement == Placement::Vee && chunk % 2 == 1)
    return (chunk + 1) * ranks - 1 - rank;
  return chunk * ranks + rank;
}

/// Why the schedule cannot run `microBatches` over `stages` ranks of `chunks` chunks each, or ""
/// (interleaving: at least 2 chunks, 2 ranks, micro-batches a multiple of the ranks; ZB-V: 2
/// chunks, 2 ranks; the others: one chunk).
std::string problem(Schedule schedule, int64_t stages, int64_t microBatches, int64_t chunks = 1);

enum class Work : char { Forward = 'F', Backward = 'B', Weight = 'W' };

struct Action {
  Work work;
  int64_t microBatch; // which of the step's K
  int64_t slot;       // the input slot its micro-batch uses at this stage (microBatch % slots)
  int64_t chunk = 0;  // the rank's chunk it runs (its virtual stage: stageOf(placement, rank, chunk, ranks))
};

/// The micro-batches stage `stage` of `stages` keeps in flight (its input slots; interleaved:
/// those of its chunk `chunk` of `chunks`, each chunk holding its own number). `stage` is the
/// pipeline rank.
int64_t slots(Schedule schedule, int64_t stage, int64_t stages, int64_t microBatches, int64_t chunks = 1,
              int64_t chunk = 0);

/// How long one of a stage's inputs is held for a micro-batch, from the piece of work that first
/// writes it to the last that reads it. Under the zero-bubble schedules a micro-batch's values
/// live for different spans: what only the input-gradient backward reads (a checkpoint under
/// full recomputation) from F to B, what the weight gradients read from the forward (a
/// product's input) from F to W, what they read from B (a product's output gradient, a
/// recomputed input) from B to W, and what one piece of work alone reads (the activation an F
/// receives, the gradient a B receives) only during it. Each kind of input gets the buffers its
/// span needs, so a zero-bubble stage keeps its W's inputs only for the few micro-batches between
/// a B and its W, not for every micro-batch in flight. Without W (1F1B, interleaved) what is not
/// read by one piece of work alone is held from F to B.
enum class Hold { ForwardToBackward, ForwardToWeight, BackwardToWeight, Forward, Backward };
/// "forward-backward", "forward-weight", "backward-weight", "forward", "backward" (train.bin's
/// model JSON, --report).
const char *holdName(Hold hold);
std::optional<Hold> parseHold(const std::string &name);
/// Whether an input held for `hold` is in use during a piece of work of kind `work`.
bool holds(Hold hold, Work work);

/// The buffers one input held for `hold` needs at stage (pipeline rank) `stage`'s chunk `chunk`:
/// the most micro-batches its span covers at once in the rank's list (at least 1); micro-batch m
/// uses buffer m % that (a chunk's F's, B's and W's each come in micro-batch order, so the
/// micro-batches a span covers at once are consecutive). Holding from F to W is slots(). Held
/// during one piece of work: 2 (at most slots()), so the next micro-batch's may be received
/// while one is read.
int64_t heldSlots(Schedule schedule, int64_t stage, int64_t stages, int64_t microBatches, int64_t chunks,
                  int64_t chunk, Hold hold);

/// Every stage's work for `microBatches` micro-batches, in order (stage 0 first); `chunks` per
/// rank when the schedule interleaves. The arguments must pass problem().
std::vector<std::vector<Action>> table(Schedule schedule, int64_t stages, int64_t microBatches, int64_t chunks = 1);

/// When the input that `actions[j]` receives may be received ahead of it, in one rank's list,
/// the input being held for `hold` in `buffers` buffers (heldSlots): the index of the last
/// earlier piece of work of its chunk, of a kind the input is held during, whose micro-batch uses
/// the same buffer (m mod `buffers`; the buffer's previous occupant, which the receive
/// overwrites), or -1 (none: from the step's start). A receive started once that work was issued
/// lands in a free buffer, and overlaps whatever the rank computes between it and its own work.
int64_t bufferFreedAfter(const std::vector<Action> &actions, size_t j, Hold hold, int64_t buffers);

/// "F3" (micro-batch 3), or "F3.1" on chunk 1 of an interleaved schedule: the report's and the
/// trace's name of a piece of work.
std::string actionText(const Action &action, bool chunked);

/// What each kind of work costs at each stage (seconds, or any unit), and what sending its
/// output to the neighbour adds before the neighbour may start (F: to the next stage, B: to the
/// previous). Under 1F1B `weight` is unused (B is the whole backward). Interleaved: one per
/// virtual stage.
struct StageCosts {
  double forward = 0, backward = 0, weight = 0;
  double forwardSend = 0, backwardSend = 0;
};

struct Timed {
  Action action;
  double start = 0, end = 0;
};

struct Timing {
  std::vector<std::vector<Timed>> stages; // each stage's table with start and end times
  double span = 0;                        // the last end: the schedule's length
  /// The fraction of stage-time idle: 1 - (all stages' work) / (stages x span).
  double bubble = 0;
};

/// Times the table: each piece of work starts when its stage is free and its input has arrived
/// (F after the previous stage's F of the micro-batch and its send; B after the next stage's B and
/// its send, at the last stage after its own F; W after its B), stages being virtual stages when
/// the table interleaves (placed by `placement`: under Loop the previous of rank 0's chunk c is
/// rank P - 1's chunk c - 1). Costs are per (virtual) stage; a send to the same rank costs
/// nothing (ZB-V's turn at rank P - 1).
Timing timeTable(const std::vector<std::vector<Action>> &table, const std::vector<StageCosts> &costs,
                 Placement placement = Placement::Loop);

} // namespace zcc::pipeline

#endif // ZRT_MAIN_PIPELINESCHEDULE_H
