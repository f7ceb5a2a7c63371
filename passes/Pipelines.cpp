//===- Pipelines.cpp - the one pipeline zcc runs -------------------------===//
//
// Passes join this pipeline as their issues land: bucketing, scheduling,
// recomputation and the ZeRO stages 1-3 come next.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines.h"
#include "runtime/main/PipelineSchedule.h"

#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

std::string mlir::zc::checkPipelineOptions(const ZccPipelineOptions &options) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (options.worldSize < 1)
    os << "--world-size must be at least 1, got " << options.worldSize;
  else if (options.tensorParallel < 1 || options.pipelineParallel < 1)
    os << "--tp and --pp must be at least 1, got " << options.tensorParallel << " and " << options.pipelineParallel;
  else if (options.contextParallel < 1)
    os << "--cp must be at least 1, got " << options.contextParallel;
  else if (options.worldSize % (options.tensorParallel * options.pipelineParallel * options.contextParallel) != 0)
    os << "--world-size " << options.worldSize << " is not a multiple of --tp " << options.tensorParallel
       << " x --pp " << options.pipelineParallel
       << (options.contextParallel > 1 ? " x --cp " + std::to_string(options.contextParallel) : std::string());
  else if (options.contextParallelMode != "ulysses" && options.contextParallelMode != "auto" &&
           options.contextParallelMode != "ring")
    os << "--cp-mode must be ulysses, ring or auto, got " << options.contextParallelMode;
  else if (!zcc::pipeline::parseSchedule(options.pipelineSchedule))
    os << "--pp-schedule must be one of " << zcc::pipeline::scheduleNames() << ", got " << options.pipelineSchedule;
  else if (std::string problem = zcc::pipeline::problem(*zcc::pipeline::parseSchedule(options.pipelineSchedule),
                                                        options.pipelineParallel, options.gradAccum,
                                                        options.pipelineChunks);
           (options.pipelineParallel > 1 || options.pipelineChunks > 1 ||
            zcc::pipeline::interleaves(*zcc::pipeline::parseSchedule(options.pipelineSchedule))) &&
           !problem.empty())
    os << problem; // interleaving: at least 2 chunks, 2 ranks, K a multiple of them; the others: one chunk
  else if (options.pipelineChunks > 1 && (options.offloadOptimizer != "none" || options.offloadActivations != "none"))
    os << "--pp-interleave with offload is not supported: each chunk's model state would need its own place in the "
          "host and NVMe tiers";
  else if (options.pipelineSchedule != "1f1b" && options.offloadActivations != "none")
    os << "--pp-schedule " << options.pipelineSchedule
       << " with --offload-activations is not supported: the weight gradients' inputs would wait in host memory "
          "past their backward";
  else if (options.pipelineStage < 0 || options.pipelineStage >= options.pipelineParallel * options.pipelineChunks)
    os << "pipeline-stage must be in [0, --pp x --pp-interleave), got " << options.pipelineStage;
  else if (options.pipelineParallel > 1 && options.zeroStage == 3)
    os << "--pp with --zero-stage 3: parameters gathered for every micro-batch of the pipeline's schedule "
          "is not planned; use ZeRO-1 or 2 over the data-parallel ranks (as DeepSpeed's pipeline engine)";
  else if (options.gradAccum < 1)
    os << "--grad-accum must be at least 1, got " << options.gradAccum;
  else if (options.expertParallel < 1 || dataParallelRanks(options) % options.expertParallel != 0)
    os << "--ep " << options.expertParallel << " must divide the " << dataParallelRanks(options)
       << " data-parallel ranks (--world-size / (--tp x --pp)): an expert group is ep of them";
  else if (!ExpertBound::parse(options.moeMaxTokensPerExpert))
    os << "--moe-max-tokens-per-expert is N (rows) or Fx (F >= 1 times the balanced count), got '"
       << options.moeMaxTokensPerExpert << "'";
  else if (ExpertBound::parse(options.moeMaxTokensPerExpert)->rowsFor(1) > 0 && options.expertParallel == 1)
    os << "--moe-max-tokens-per-expert bounds the rows an expert-parallel rank receives: it needs --ep > 1";
  else if (options.expertParallel > 1 &&
           (options.zeroQuantizedWeights || options.zeroHpzPartitionSize > 1 || options.zeroQuantizedGradients ||
            options.offloadOptimizer != "none" || options.offloadActivations != "none" || !options.compression.empty()))
    os << "--ep with ZeRO++, offload or --compression is not supported yet";
  else if (options.zeroStage < 0 || options.zeroStage > 3)
    os << "--zero-stage must be 0, 1, 2 or 3, got " << options.zeroStage;
  else if ((options.zeroQuantizedWeights || options.zeroHpzPartitionSize > 1) && options.zeroStage != 3)
    os << "--zero-quantized-weights and --zero-hpz-partition-size change ZeRO-3's parameter gathers: they need "
          "--zero-stage 3";
  else if (options.zeroQuantizedGradients && options.zeroStage < 1)
    os << "--zero-quantized-gradients replaces ZeRO's gradient reduce-scatter: it needs --zero-stage 1, 2 or 3";
  else if ((options.zeroQuantizedWeights || options.zeroHpzPartitionSize > 1 || options.zeroQuantizedGradients) &&
           (options.tensorParallel > 1 || options.pipelineParallel > 1 || options.contextParallel > 1))
    os << "ZeRO++ runs on plain data parallelism here: not with --tp, --pp or --cp";
  else if ((options.zeroQuantizedWeights || options.zeroHpzPartitionSize > 1 || options.zeroQuantizedGradients) &&
           options.offloadOptimizer != "none")
    os << "ZeRO++ with --offload-optimizer is not supported";
  else if (options.zeroHpzPartitionSize < 1 || options.worldSize % options.zeroHpzPartitionSize != 0)
    os << "--zero-hpz-partition-size must divide --world-size " << options.worldSize << ", got "
       << options.zeroHpzPartitionSize;
  else if (options.ranksPerNode < 0 || (options.ranksPerNode > 0 && options.worldSize % options.ranksPerNode != 0))
    os << "--ranks-per-node must divide --world-size " << options.worldSize << ", got " << options.ranksPerNode;
  else if (!(options.gradClip >= 0))
    os << "--grad-clip must be >= 0 (0: no clipping), got " << options.gradClip;
  else if (options.persistenceThreshold < 0)
    os << "--param-persistence-threshold must be non-negative, got " << options.persistenceThreshold;
  else if (options.memoryBudget < 0)
    os << "--memory-budget must be positive, got " << options.memoryBudget;
  else if (options.recompute != "none" && options.recompute != "selective" && options.recompute != "op" &&
           options.recompute != "full" && options.recompute != "layer" && options.recompute != "auto")
    os << "--recompute must be none, selective, op, full, layer or auto, got " << options.recompute;
  else if (options.recompute == "auto" && options.memoryBudget <= 0)
    os << "--recompute auto chooses what fits --memory-budget: give one";
  else if (options.prefetch < 0)
    os << "--prefetch must be non-negative, got " << options.prefetch;
  else if (!options.compression.empty() && (options.tensorParallel > 1 || options.pipelineParallel > 1))
    os << "--compression with --tp or --pp is not supported: a quantization group and a pruning mask span the "
          "whole weight";
  else if (options.precision != "fp32" && options.precision != "bf16")
    os << "--precision must be fp32 or bf16, got " << options.precision;
  else if (options.reducePrecision != "fp32" && options.reducePrecision != "bf16")
    os << "--reduce-precision must be fp32 or bf16, got " << options.reducePrecision;
  else if (options.reducePrecision == "fp32" && options.zeroQuantizedGradients)
    os << "--reduce-precision fp32 and --zero-quantized-gradients contradict each other: qgZ reduces int4 "
          "gradients";
  else if (!options.report.empty() && options.report != "text" && options.report != "json")
    os << "--report is text or json, got " << options.report;
  else if (!options.optimizer.empty() && options.optimizer != "adamw" && options.optimizer != "sgd")
    os << "--optimizer must be adamw or sgd, got " << options.optimizer;
  else if (options.offloadOptimizer != "none" && options.offloadOptimizer != "cpu" &&
           options.offloadOptimizer != "nvme")
    os << "--offload-optimizer must be none, cpu or nvme, got " << options.offloadOptimizer;
  else if (options.offloadParam != "none" && options.offloadParam != "cpu" && options.offloadParam != "nvme")
    os << "--offload-param must be none, cpu or nvme, got " << options.offloadParam;
  else if (options.offloadParam != "none" && options.offloadOptimizer == "none")
    os << "--offload-param needs --offload-optimizer (as DeepSpeed's offload_param: a shard is updated where "
          "its optimizer state lives)";
  else if (options.offloadParam != "none" && (options.zeroStage != 3 || dataParallelRanks(options) < 2))
    os << "--offload-param moves ZeRO-3's parameter shards: it needs --zero-stage 3 over at least two "
          "data-parallel ranks";
  else if (options.offloadParam != "none" && !options.overlap)
    os << "--offload-param with --no-overlap: the parameter shards are read ahead of the gathers zcc-schedule "
          "plans; drop --no-overlap";
  else if (options.offloadActivations != "none" && options.offloadActivations != "cpu")
    os << "--offload-activations must be none or cpu, got " << options.offloadActivations;
  else if ((options.offloadOptimizer == "nvme" || options.offloadParam == "nvme") && options.offloadBufferCount < 2)
    os << "--offload-buffer-count must be at least 2 (one slot updating, one reading ahead), got "
       << options.offloadBufferCount;
  else if ((options.offloadOptimizer == "nvme" || options.offloadParam == "nvme") &&
           options.offloadBufferBytes < 3 * 4096)
    os << "--offload-buffer-size must hold at least three 4 KiB blocks, got " << options.offloadBufferBytes;
  return message;
}

namespace {
using namespace mlir::zc;

/// From fusion to the schedule: what turns the step autodiff wrote into the
/// partitioned, bucketed, scheduled training step (and what zcc-recompute's auto
/// policy runs on copies to measure the arena its choices lead to).
void addTrainingStatePasses(OpPassManager &pm, const ZccPipelineOptions &options) {
  // Matmuls with their epilogues (bias, GELU, their backward); the LM head with its loss.
  if (options.fuse)
    pm.addPass(createZccFuse({options.headChunkBytes}));
  // A pipeline stage's forward runs once per micro-batch: its backward reads what the forward
  // kept (after recomputation chose the checkpoints and fusion the ops that read them).
  if (options.pipelineParallel > 1)
    pm.addPass(createZccPipelineKeep());
  ZccOptimizerOptions optimizer;
  optimizer.kind = options.optimizer;
  optimizer.microBatches = options.gradAccum;
  pm.addPass(createZccOptimizer(optimizer));
  // Gradient averaging across ranks: ZeRO stage 0 all-reduces every gradient once
  // per step; stages 1-3 partition the training state (one rank has nothing to
  // partition).
  const int64_t dataRanks = dataParallelRanks(options);
  if (options.zeroStage == 0 || dataRanks == 1)
    pm.addPass(createZccDataParallel({dataRanks, options.gradAccum}));
  else
    pm.addPass(createZccZero({options.zeroStage, dataRanks, options.gradAccum, options.persistenceThreshold}));
  // The bf16 gradients' reductions summed in fp32 (FSDP2's reduce_dtype, Megatron-LM's).
  if (options.reducePrecision == "fp32" && dataRanks > 1)
    pm.addPass(createZccReducePrecision({options.reducePrecision}));
  pm.addPass(createCSEPass());
  // The global gradient norm, and the clipped gradient the optimizers read.
  pm.addPass(createZccGradClip({options.gradClip, dataRanks, options.tensorParallel}));
  // Fewer, larger collectives.
  if (dataRanks > 1)
    pm.addPass(createZccBucket({options.bucketMb, options.gatherBucketMb, options.costModel}));
  // ZeRO++: what crosses nodes, quantized or kept inside them.
  if (options.zeroQuantizedWeights || options.zeroHpzPartitionSize > 1 || options.zeroQuantizedGradients) {
    ZccZeroPlusPlusOptions pp;
    pp.quantizedWeights = options.zeroQuantizedWeights;
    pp.hpz = options.zeroHpzPartitionSize;
    pp.quantizedGradients = options.zeroQuantizedGradients;
    pp.ranksPerNode = options.ranksPerNode;
    pm.addPass(createZccZeroPlusPlus(pp));
  }
  // Transfers in flight while the compute stream works.
  if (options.worldSize > 1 && options.overlap)
    pm.addPass(createZccSchedule({options.prefetch, options.maxLiveMb}));
  // The optimizer state's and the parameter shards' tiers, and the NVMe swap schedule.
  if (options.offloadOptimizer != "none") {
    auto tier = [](StringRef flag) { return flag == "cpu" ? std::string("host") : flag.str(); };
    ZccOffloadOptions offload;
    offload.optimizer = tier(options.offloadOptimizer);
    offload.param = tier(options.offloadParam);
    offload.slots = options.offloadBufferCount;
    offload.paramSlots = std::max<int64_t>(2, options.offloadBufferCount - 1);
    offload.slotBytes = options.offloadBufferBytes;
    offload.nvmePath = options.nvmePath;
    pm.addPass(createZccOffload(offload));
  }
  // Activations the backward pass reads wait in host memory (ZeRO-R's CPU checkpointing), once
  // the schedule has fixed every op's place.
  if (options.offloadActivations == "cpu")
    pm.addPass(createZccOffloadActivations());
  // The zero-bubble schedules' backward in two: the input's gradient (B), sent back at once, and
  // the weights' (W), which the schedule defers; last, once every collective has its place.
  if (options.pipelineParallel > 1 && zcc::pipeline::splitsBackward(*zcc::pipeline::parseSchedule(options.pipelineSchedule)))
    pm.addPass(createZccPipelineSplitBackward());
}
} // namespace

void mlir::zc::buildZccPipeline(OpPassManager &pm, const ZccPipelineOptions &options) {
  // 1. Reject modules that are not a trainable model before any work.
  pm.addPass(createZccVerifyModel());
  // Compression training (DeepSpeed's init_compression): on the user's whole weights, before
  //    any pass splits them, so every later pass sees ordinary ops.
  if (!options.compression.empty())
    pm.addPass(createZccCompress({options.compression}));
  // 2. Megatron's tensor parallelism over the mesh's tensor axis, then each
  //    data-parallel rank's micro-batch of the global batch.
  if (options.tensorParallel > 1)
    pm.addPass(createZccTensorParallel({options.tensorParallel}));
  pm.addPass(createZccShardBatch({batchRanks(options), options.gradAccum}));
  // The pipeline stage this compile is of (zcc compiles each and links them all).
  if (options.pipelineParallel > 1)
    pm.addPass(createZccPipelineStage({options.pipelineParallel * options.pipelineChunks, options.pipelineStage,
                                       options.gradAccum, options.pipelineSchedule, options.pipelineChunks}));
  // Context parallelism: every sequence's tokens split over the context ranks.
  if (options.contextParallel > 1)
    pm.addPass(createZccContextParallel({options.contextParallel, options.contextParallelMode}));
  // Sequence parallelism: the ops between the tensor-parallel regions on 1/tp of the tokens
  //    (after the batch and the stage are fixed: the split is of the local tensors).
  if (options.tensorParallel > 1 && options.sequenceParallel)
    pm.addPass(createZccSequenceParallel({options.tensorParallel}));
  // Expert parallelism: each rank of an expert group holds 1/ep of the experts; the rows of
  //    each rank's micro-batch go to them and back.
  if (options.expertParallel > 1)
    pm.addPass(createZccExpertParallel({options.expertParallel, options.moeMaxTokensPerExpert}));
  // 3. bf16 compute from fp32 master weights, decided before autodiff so the
  //    backward pass inherits it.
  if (options.precision == "bf16")
    pm.addPass(createZccMixedPrecision({"bf16"}));
  // 4. Backward, then the optimizer's update function and state.
  pm.addPass(createZccAutodiff());
  // 5. Activations recomputed in backward rather than kept (auto: measured on
  //    copies run through the rest of the pipeline).
  if (options.recompute != "none") {
    ZccRecomputeOptions recompute;
    recompute.policy = options.recompute;
    recompute.budget = options.memoryBudget;
    if (options.recompute == "auto") {
      auto textOf = [](const ZccPipelineOptions &o) {
        OpPassManager rest("builtin.module");
        addTrainingStatePasses(rest, o);
        std::string text;
        llvm::raw_string_ostream os(text);
        rest.printAsTextualPipeline(os);
        return text;
      };
      recompute.evaluatePipeline = textOf(options);
      // Where no plan fits, what each lever would reach, alone and all together: the flags
      // that change only the passes after this one (a mesh changes those before).
      struct Lever {
        const char *flag;
        void (*apply)(ZccPipelineOptions &);
      };
      SmallVector<Lever> levers;
      if (options.zeroStage < 3 && options.pipelineParallel == 1 && dataParallelRanks(options) > 1)
        levers.push_back({"--zero-stage 3", [](ZccPipelineOptions &o) { o.zeroStage = 3; }});
      if (options.offloadActivations == "none")
        levers.push_back({"--offload-activations cpu", [](ZccPipelineOptions &o) { o.offloadActivations = "cpu"; }});
      if (options.offloadOptimizer == "none")
        levers.push_back({"--offload-optimizer cpu", [](ZccPipelineOptions &o) { o.offloadOptimizer = "cpu"; }});
      auto addLever = [&](ArrayRef<Lever> together) {
        ZccPipelineOptions o;
        o.copyOptionValuesFrom(options);
        std::string flags;
        for (const Lever &lever : together) {
          lever.apply(o);
          flags += (flags.empty() ? "" : " ") + std::string(lever.flag);
        }
        if (checkPipelineOptions(o).empty())
          recompute.leverPipelines += (recompute.leverPipelines.empty() ? "" : ";") + flags + "|" + textOf(o);
      };
      for (const Lever &lever : levers)
        addLever(lever);
      if (levers.size() > 1)
        addLever(levers);
    }
    pm.addPass(createZccRecompute(recompute));
  }
  // 6. Fusion, the optimizer, ZeRO partitioning, buckets, the schedule.
  addTrainingStatePasses(pm, options);
  if (options.memoryBudget > 0)
    pm.addPass(createZccMemoryPlan({options.memoryBudget}));
  if (!options.memorySvg.empty())
    pm.addPass(createZccMemorySvg({options.memorySvg}));
  if (!options.report.empty())
    pm.addPass(createZccReport({options.report, options.reportFile, options.gradAccum, options.costModel,
                                options.worldSize, options.tensorParallel, options.pipelineParallel,
                                options.ranksPerNode}));
  if (!options.lower)
    return;
  // 8. Memory plan and runtime calls in the LLVM dialect.
  std::string suffix = options.pipelineParallel > 1 ? "_s" + std::to_string(options.pipelineStage) : "";
  pm.addPass(createZccLowerToLLVM(
      {options.worldSize, options.gradAccum, options.tensorParallel, options.pipelineParallel, suffix}));
}

void mlir::zc::registerZccPipeline() {
  registerPassPipeline(
      "zcc-pipeline", "The whole zcc pipeline, as the zcc driver runs it",
      [](OpPassManager &pm, StringRef text, function_ref<LogicalResult(const Twine &)> error) {
        ZccPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string problem = checkPipelineOptions(options);
        if (!problem.empty())
          return error(problem);
        buildZccPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const ::mlir::detail::PassOptions &)> handler) {
        handler(ZccPipelineOptions());
      });
}
