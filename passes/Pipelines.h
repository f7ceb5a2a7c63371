//===- Pipelines.h - the one pipeline zcc runs ---------------------------===//

#ifndef ZCC_PASSES_PIPELINES_H
#define ZCC_PASSES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::zc {

/// The knobs of the pipeline; the driver's flags map onto these one to one,
/// and `zcc-opt -zcc-pipeline="..."` accepts the same names.
struct ZccPipelineOptions : public PassPipelineOptions<ZccPipelineOptions> {
  Option<int64_t> worldSize{*this, "world-size", llvm::cl::desc("All ranks: tp x pp x data-parallel"),
                            llvm::cl::init(1)};
  Option<int64_t> tensorParallel{*this, "tp", llvm::cl::desc("Tensor-parallel ranks (the mesh's fastest axis)"),
                                 llvm::cl::init(1)};
  Option<bool> sequenceParallel{
      *this, "sequence-parallel",
      llvm::cl::desc("With tp > 1: the ops between tensor-parallel regions hold 1/tp of the tokens"),
      llvm::cl::init(true)};
  Option<int64_t> contextParallel{*this, "cp",
                                  llvm::cl::desc("Context-parallel ranks: each holds 1/cp of every sequence"),
                                  llvm::cl::init(1)};
  Option<std::string> contextParallelMode{*this, "cp-mode",
                                          llvm::cl::desc("Attention over the context ranks: ulysses or auto"),
                                          llvm::cl::init("auto")};
  Option<int64_t> expertParallel{
      *this, "ep",
      llvm::cl::desc("Expert-parallel ranks: consecutive data-parallel ranks each holding 1/ep of every MoE layer's "
                     "experts"),
      llvm::cl::init(1)};
  Option<std::string> moeMaxTokensPerExpert{
      *this, "moe-max-tokens-per-expert",
      llvm::cl::desc("With ep > 1: the most rows one expert receives in one routing, the bound its received "
                     "tensors are planned at: N rows, or Fx (F times the balanced count); empty: the worst case"),
      llvm::cl::init("")};
  Option<int64_t> pipelineParallel{*this, "pp", llvm::cl::desc("Pipeline stages (the mesh's slowest axis)"),
                                   llvm::cl::init(1)};
  Option<std::string> pipelineSchedule{
      *this, "pp-schedule",
      llvm::cl::desc("The pipeline's schedule: 1f1b, zb-h1 (zero-bubble: the backward split into the input's "
                     "and the weights' gradients, the latter deferred into the bubbles) or interleaved-1f1b "
                     "(pp-interleave chunks per rank)"),
      llvm::cl::init("1f1b")};
  Option<int64_t> pipelineChunks{
      *this, "pp-interleave",
      llvm::cl::desc("Chunks of layers per pipeline rank (interleaved-1f1b): pp x this virtual stages, virtual stage "
                     "c pp + r on rank r"),
      llvm::cl::init(1)};
  Option<int64_t> pipelineStage{*this, "pipeline-stage",
                                llvm::cl::desc("Which stage this compile is of (zcc compiles each; interleaved: the "
                                               "virtual stage, in [0, pp x pp-interleave))"),
                                llvm::cl::init(0)};
  Option<int64_t> zeroStage{*this, "zero-stage",
                            llvm::cl::desc("ZeRO stage: 0 replicates everything"),
                            llvm::cl::init(0)};
  Option<bool> zeroQuantizedWeights{*this, "zero-quantized-weights",
                                    llvm::cl::desc("ZeRO++ qwZ: int8 ZeRO-3 parameter gathers"), llvm::cl::init(false)};
  Option<int64_t> zeroHpzPartitionSize{*this, "zero-hpz-partition-size",
                                       llvm::cl::desc("ZeRO++ hpZ: secondary parameter shards over this many ranks"),
                                       llvm::cl::init(1)};
  Option<bool> zeroQuantizedGradients{*this, "zero-quantized-gradients",
                                      llvm::cl::desc("ZeRO++ qgZ: int4 two-hop gradient reduction"),
                                      llvm::cl::init(false)};
  Option<int64_t> ranksPerNode{*this, "ranks-per-node",
                               llvm::cl::desc("Ranks per node for ZeRO++'s hierarchy (0: one node)"),
                               llvm::cl::init(0)};
  Option<int64_t> persistenceThreshold{
      *this, "param-persistence-threshold",
      llvm::cl::desc("ZeRO-3: parameters with at most this many elements stay whole (DeepSpeed's default)"),
      llvm::cl::init(100000)};
  Option<double> gradClip{*this, "grad-clip",
                          llvm::cl::desc("Clip the global gradient norm to this (0: do not clip)"),
                          llvm::cl::init(1.0)};
  Option<int64_t> gradAccum{*this, "grad-accum",
                            llvm::cl::desc("Micro-batches per optimizer step"), llvm::cl::init(1)};
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("adamw or sgd (default: the model's, else adamw)"),
                                llvm::cl::init("")};
  Option<std::string> compression{
      *this, "compression",
      llvm::cl::desc("DeepSpeed compression_training JSON: fake-quantized and pruned weights, on their schedule"),
      llvm::cl::init("")};
  Option<std::string> precision{*this, "precision", llvm::cl::desc("fp32, or bf16 compute with fp32 master weights"),
                                llvm::cl::init("fp32")};
  Option<std::string> reducePrecision{
      *this, "reduce-precision",
      llvm::cl::desc("What gradient reductions over the data-parallel ranks sum in under --precision bf16: bf16 "
                     "(the gradients' own) or fp32 (FSDP2's reduce_dtype=float32, Megatron-LM's: twice the bytes)"),
      llvm::cl::init("bf16")};
  Option<double> bucketMb{*this, "bucket-mb",
                          llvm::cl::desc("Gradient bucket size in MiB (<0: from the cost model, 0: off)"),
                          llvm::cl::init(-1)};
  Option<double> gatherBucketMb{*this, "gather-bucket-mb",
                                llvm::cl::desc("Parameter all-gather group size in MiB (<0: cost model, 0: off)"),
                                llvm::cl::init(-1)};
  Option<std::string> costModel{*this, "cost-model",
                                llvm::cl::desc("zcc-calibrate JSON file (empty: built-in defaults)"),
                                llvm::cl::init("")};
  Option<bool> overlap{*this, "overlap",
                       llvm::cl::desc("Async collectives scheduled to overlap compute (zcc-schedule)"),
                       llvm::cl::init(true)};
  Option<int64_t> prefetch{*this, "prefetch",
                           llvm::cl::desc("Parameter gather groups in flight ahead of compute"),
                           llvm::cl::init(1)};
  Option<double> maxLiveMb{*this, "max-live-mb",
                           llvm::cl::desc("Cap on in-flight and gathered communication buffers, MiB (<0: none)"),
                           llvm::cl::init(-1)};
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("Fuse matmuls with bias/GELU epilogues (zcc-fuse)"),
                    llvm::cl::init(true)};
  Option<int64_t> headChunkBytes{*this, "head-chunk-bytes",
                                 llvm::cl::desc("Most bytes of logits the fused LM head holds at once"),
                                 llvm::cl::init(128 << 20)};
  Option<std::string> recompute{*this, "recompute",
                                llvm::cl::desc("Activation recomputation: none, selective, full or auto"),
                                llvm::cl::init("none")};
  Option<int64_t> memoryBudget{*this, "memory-budget",
                               llvm::cl::desc("Bytes per rank the arena must fit (0: no budget)"),
                               llvm::cl::init(0)};
  Option<std::string> offloadOptimizer{*this, "offload-optimizer",
                                       llvm::cl::desc("Optimizer state on: none, cpu (host memory) or nvme"),
                                       llvm::cl::init("none")};
  Option<std::string> offloadParam{*this, "offload-param", llvm::cl::desc("Parameters on: none, cpu or nvme"),
                                   llvm::cl::init("none")};
  Option<std::string> offloadActivations{*this, "offload-activations",
                                         llvm::cl::desc("Activation checkpoints on: none or cpu"),
                                         llvm::cl::init("none")};
  Option<std::string> nvmePath{*this, "nvme-path", llvm::cl::desc("The NVMe store's default directory"),
                               llvm::cl::init("")};
  Option<int64_t> offloadBufferCount{*this, "offload-buffer-count",
                                     llvm::cl::desc("NVMe swap slots (reads in flight ahead of the update + 1)"),
                                     llvm::cl::init(4)};
  Option<int64_t> offloadBufferBytes{*this, "offload-buffer-bytes",
                                     llvm::cl::desc("Bytes of one NVMe swap slot"), llvm::cl::init(8 << 20)};
  Option<std::string> memorySvg{*this, "memory-svg", llvm::cl::desc("Draw the memory plan to this SVG file"),
                                llvm::cl::init("")};
  Option<std::string> report{*this, "report",
                             llvm::cl::desc("Plan report before lowering: text or json"),
                             llvm::cl::init("")};
  Option<std::string> reportFile{*this, "report-file",
                                 llvm::cl::desc("Where the report goes ('-': stdout)"),
                                 llvm::cl::init("-")};
  Option<bool> lower{*this, "lower",
                     llvm::cl::desc("Lower to the LLVM dialect (off: stop after the zc passes)"),
                     llvm::cl::init(true)};
};

/// The data-parallel ranks of the mesh: what is left of the world after tp x pp. Context
/// parallelism's ranks are among them (they hold the same parameters: ZeRO and the gradients'
/// average span data x context), though they read the same rows of the batch.
inline int64_t dataParallelRanks(const ZccPipelineOptions &options) {
  return options.worldSize / (options.tensorParallel * options.pipelineParallel);
}

/// The ranks that read different rows of the global batch: data-parallel ranks over cp.
inline int64_t batchRanks(const ZccPipelineOptions &options) {
  return dataParallelRanks(options) / options.contextParallel;
}

/// What is wrong with the options' values, or an empty string; the pipeline
/// builder assumes they are valid.
std::string checkPipelineOptions(const ZccPipelineOptions &options);

/// Appends zcc's whole pipeline to `pm`. `zcc` and `zcc-opt -zcc-pipeline`
/// both call this, so they run exactly the same passes.
void buildZccPipeline(OpPassManager &pm, const ZccPipelineOptions &options);

/// Registers `-zcc-pipeline` with the pass registry.
void registerZccPipeline();

} // namespace mlir::zc

#endif // ZCC_PASSES_PIPELINES_H
