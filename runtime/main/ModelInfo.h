// What the compiler tells the executable about the model (the zcc_model_json string the
// lowering emits): parameters with initializers and arena offsets, inputs, arena size.
#ifndef ZRT_MAIN_MODELINFO_H
#define ZRT_MAIN_MODELINFO_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "main/PipelineSchedule.h"

namespace zrt::train {

struct Initializer {
  std::string kind; // zeros | ones | normal | uniform
  double std = 0, mean = 0, low = 0, high = 0;
};

/// Elements [first, first + count) of a flattened tensor.
struct Slice {
  int64_t first = 0, count = 0;
};

struct ParamInfo {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype = "f32"; // of the stored parameter: f32 | bf16
  int64_t offset = 0, gradOffset = 0, bytes = 0;
  int32_t tier = 0; // zrt_tier of the stored parameter (offload: host or NVMe; offset in it)
  /// Mixed precision: the arena offset of the fp32 master copy (an optimizer
  /// state, sharded like the other states); -1 when the parameter is fp32 itself.
  int64_t masterOffset = -1;
  int32_t masterTier = 0; // zrt_tier of the master copy (offload: host or NVMe; offset in it)
  Initializer init;
  // ZeRO layout: `shards` ranks each own `shardElements` of the flattened tensor;
  // a sharded parameter stores only this rank's shard (zero-padded past the end).
  int64_t shards = 1, shardElements = 0, paramStorageBytes = 0, gradStorageBytes = 0;
  bool shardedParam = false;
  bool pipelineTied = false; // held by the first and the last pipeline stage
  bool expertBias = false;   // a routing's aux-loss-free balancing bias: no gradient, moved by the loads
  // Tensor parallelism: `shape` is this rank's part of the whole tensor (`wholeShape`): axis
  // `tpAxis` is consecutive segments (`tpSegments`, whole sizes) and tensor rank t of `tpRanks`
  // holds slice t of each, in order. ZeRO then shards that part over the data-parallel ranks.
  int64_t tpAxis = -1, tpRanks = 1;
  std::vector<int64_t> tpSegments;
  std::vector<int64_t> wholeShape;
  // Expert parallelism (zcc --ep): an expert weight's `shape` is [E / epRanks, ...], expert rank
  // r's consecutive part of axis 0; ZeRO shards it over the ranks holding the same experts.
  int64_t epRanks = 1;
  bool expertParallel() const { return epRanks > 1; }
  /// The zrt_axis its ZeRO shards span: the data axis, or an expert weight's ZRT_AXIS_EXPERT_DATA.
  int32_t shardAxis() const { return expertParallel() ? 10 /*ZRT_AXIS_EXPERT_DATA*/ : 0 /*ZRT_AXIS_DATA*/; }
  /// The index in the whole tensor of element `i` of expert rank `e`'s part.
  int64_t expertWholeIndex(int64_t i, int e) const { return expertParallel() ? e * elements() + i : i; }
  int64_t elements() const { return product(shape); }
  int64_t wholeElements() const { return product(wholeShape); }
  bool tensorParallel() const { return tpAxis >= 0; }
  /// The index in the whole tensor of element `i` of tensor rank `t`'s part.
  int64_t wholeIndex(int64_t i, int t) const {
    if (!tensorParallel())
      return i;
    int64_t inner = 1;
    for (size_t d = tpAxis + 1; d < shape.size(); ++d)
      inner *= shape[d];
    const int64_t local = shape[tpAxis], whole = wholeShape[tpAxis];
    const int64_t outer = i / (inner * local), along = i / inner % local, within = i % inner;
    // The segment `along` falls in: its start in the part and in the whole tensor.
    int64_t partStart = 0, wholeStart = 0;
    for (int64_t segment : tpSegments) {
      const int64_t slice = segment / tpRanks; // of this segment, on one rank
      if (along < partStart + slice)
        return (outer * whole + wholeStart + t * slice + (along - partStart)) * inner + within;
      partStart += slice;
      wholeStart += segment;
    }
    return -1; // not reached: the segments cover the axis
  }
  int64_t elementBytes() const { return dtype == "bf16" ? 2 : 4; }
  bool hasMaster() const { return masterOffset >= 0; }
  /// The elements of the whole tensor this rank stores in the parameter buffer.
  Slice stored(int rank) const { return sliceOf(shardedParam, rank); }
  /// ... and in the master copy (optimizer states are sharded whenever shards > 1).
  Slice storedMaster(int rank) const { return sliceOf(shards > 1, rank); }

private:
  static int64_t product(const std::vector<int64_t> &dims) {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    return n;
  }
  Slice sliceOf(bool sharded, int rank) const {
    if (!sharded)
      return {0, elements()};
    int64_t first = rank * shardElements;
    return {first, first >= elements() ? 0 : std::min(shardElements, elements() - first)};
  }
};

/// An optimizer state tensor (a moment or a master copy) of one parameter, hpZ's secondary
/// shard, or compression training's pruning mask.
struct StateInfo {
  std::string name, param, role; // role: moment | master | secondary | mask
  double keep = 0;                // a mask: the fraction of the initial weights it keeps
  int64_t rows = -1;              // a row mask: the parameter's axis it has one value per index of
  int64_t offset = 0, bytes = 0;
  int32_t tier = 0; // zrt_tier: 0 the arena, 1 host memory, 2 the NVMe store (offset: in it)
};

struct InputInfo {
  std::string role; // tokens | targets | features | labels | values
  std::vector<int64_t> shape; // one rank's micro-batch
  std::string dtype;          // f32 | i32
  int64_t bytes = 0;
  int64_t classes = 0; // ids: the number of distinct values (vocabulary, classes)
  /// A pipeline stage's input: how long a micro-batch holds it (zcc::pipeline::Hold's name) and
  /// its buffers, micro-batch m in buffer m % slots (0 where the model predates them: the
  /// stage's slots, every input held from F to its last work).
  std::string hold = "forward-weight";
  int64_t slots = 0;
};

/// Compression training (zcc --compression): what a parameter's forward pass does to it, and
/// so what --export-weights writes (DeepSpeed's redundancy_clean: quantized, then masked).
struct CompressedParam {
  std::string param, mask; // mask: the state's name, empty when not pruned
  std::string rowMask;     // row pruning's mask (of the weight: a bias names its weight's), or empty
  int64_t rowAxis = 0;     // the parameter's axis the row mask has one value per index of
  int32_t bits = 0;        // 0: not quantized
  int64_t groups = 1;
  bool asymmetric = false;
  bool columns = false;    // groups are blocks of the last axis across every row (zrt/FakeQuantize.h)
};

struct ModelInfo {
  std::string model, optimizer = "adamw";
  int64_t worldSize = 1, microBatches = 1, arenaBytes = 0, persistentBytes = 0;
  /// Where this description's arena starts in the rank's (placeInArena): 0 but for the chunks of
  /// an interleaved pipeline rank after its first, whose programs each plan an arena of their own.
  int64_t arenaBase = 0;
  /// The device mesh: tp x cp x data-parallel ranks x pp (tensor fastest, then context, then
  /// data, then pipeline). The data axis' groups span data x context ranks.
  int64_t tp = 1, pp = 1, cp = 1;
  int64_t ep = 1; // expert-parallel ranks: consecutive data-axis ranks holding different experts
  /// Mixture-of-Experts layers (zc.moe_route per micro-batch) this program runs; 0: none.
  int64_t moeLayers = 0;
  /// ZeRO++ (zcc-zero-pp): the ranks per node the program's hops assume (0: no hierarchy) and
  /// hpZ's group size.
  int64_t ranksPerNode = 0, hpz = 1;
  /// Pipeline stage this description is of (interleaved: the virtual stage, which chunk of which
  /// rank pipelineRank() and chunk() say), the schedule it was compiled for (zcc --pp-schedule),
  /// its input slots there, the chunks per rank (zcc --pp-interleave) and the schedule's
  /// predicted bubble.
  int64_t stage = 0, slots = 1, chunks = 1;
  std::string schedule = "1f1b";
  double predictedBubble = 0;
  /// Where the schedule places the virtual stages on the ranks (Megatron's loop, chunk s / pp of
  /// rank s mod pp, or ZB-V's V); by it, the pipeline rank stage `s` of this pipeline runs on,
  /// which of that rank's chunks it is, and the stage chunk `c` of rank `r` runs.
  zcc::pipeline::Placement placement() const;
  int64_t pipelineRankOf(int64_t s) const;
  int64_t chunkOf(int64_t s) const;
  int64_t stageOf(int64_t r, int64_t c) const;
  int64_t dataParallel() const { return worldSize / (tp * pp); }
  /// Model-state bytes per rank, by kind (the optimizer's wherever its tier is).
  int64_t paramBytes = 0, gradBytes = 0, optimizerBytes = 0;
  /// Offload: the host and NVMe tiers' bytes, the farthest tier (zrt_tier) any stored parameter
  /// and any optimizer state is on, and the compiled default NVMe directory.
  int64_t hostTierBytes = 0, nvmeTierBytes = 0;
  int32_t paramTier = 0, stateTier = 0;
  std::string nvmePath;
  double defaultLr = 1e-3;
  /// zcc --grad-clip: the global gradient norm's bound (0: computed, not clipped; -1: no norm).
  double gradClip = -1;
  std::vector<ParamInfo> params;
  std::vector<StateInfo> states;
  std::vector<InputInfo> inputs;
  /// zc.step_gate's `from` steps in gate order (train.bin sets gate k to step >= stepGates[k]).
  std::vector<int64_t> stepGates;
  std::vector<CompressedParam> compressed;
  /// The products the compiled functions run, as zrt_plan_matmuls takes them: rows of
  /// ZRT_MATMUL_ROW int64s (kind, dtype, then the op's sizes).
  std::vector<int64_t> matmuls;
  /// 0 (replicated), 1, 2 or 3: from the parameters' layout.
  int zeroStage() const {
    int stage = 0;
    for (const ParamInfo &p : params) {
      if (p.shards > 1)
        stage = std::max(stage, 1);
      if (p.shards > 1 && p.gradStorageBytes < p.bytes)
        stage = std::max(stage, 2);
      if (p.shardedParam)
        stage = 3;
    }
    return stage;
  }
  int64_t rowsPerMicroBatch() const { return inputs.empty() ? 0 : inputs[0].shape[0]; }
};

/// Parses the JSON; a malformed description is a fatal error naming the field.
ModelInfo parseModelInfo(const char *json);

/// Moves a description's arena to `base` in the rank's arena: every arena offset it names (the
/// parameters', gradients', master copies' and states' held there, not those in the host or NVMe
/// tiers) gains `base`, so whatever reads the arena by offset (weights, checkpoints, the overflow
/// check, the high-water mark) reads this description's part.
void placeInArena(ModelInfo &model, int64_t base);

} // namespace zrt::train

#endif // ZRT_MAIN_MODELINFO_H
