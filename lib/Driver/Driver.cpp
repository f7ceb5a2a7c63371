//===- Driver.cpp - zcc: parse, verify and compile a model ---------------===//
//
// Errors go through MLIR's SourceMgr handler, so every diagnostic reads
// `file:line:col: error: ...`; any error exits with 1 and leaves no partial
// output file behind (ToolOutputFile deletes it unless kept).
//
//===----------------------------------------------------------------------===//

#include "zcc/Driver.h"
#include "zcc/Codegen.h"
#include "zcc/InitAll.h"
#include "zcc/NestingLimit.h"
#include "zcc/Simulate.h"
#include "zcc/StageLink.h"

#include "passes/Passes.h"
#include "passes/Pipelines.h"
#include "runtime/main/PipelineSchedule.h"
#include "sim/Planner.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

#ifndef ZCC_VERSION
#define ZCC_VERSION "unknown"
#endif

namespace {
enum class EmitKind { Mlir, Llvm, Obj, Exe };

struct DriverOptions {
  cl::OptionCategory category{"zcc options"};
  cl::opt<std::string> input{cl::Positional, cl::desc("<model.mlir>"), cl::Required,
                             cl::cat(category)};
  cl::opt<std::string> output{"o", cl::desc("Output file ('-' for stdout)"),
                              cl::value_desc("file"), cl::init("-"), cl::cat(category)};
  cl::opt<bool> verifyOnly{"verify-only",
                           cl::desc("Parse and verify the model, write nothing, exit 0 if valid"),
                           cl::cat(category)};
  cl::opt<EmitKind> emit{
      "emit", cl::desc("What to write to -o"), cl::init(EmitKind::Exe),
      cl::values(clEnumValN(EmitKind::Mlir, "mlir", "the module after zcc's pipeline, as MLIR"),
                 clEnumValN(EmitKind::Llvm, "llvm", "LLVM IR"),
                 clEnumValN(EmitKind::Obj, "obj", "an object file"),
                 clEnumValN(EmitKind::Exe, "exe", "the training executable (default)")),
      cl::cat(category)};
  cl::opt<int64_t> worldSize{"world-size", cl::desc("Ranks the executable runs on (mpirun -np N)"),
                             cl::init(1), cl::cat(category)};
  cl::opt<int64_t> tensorParallel{
      "tp",
      cl::desc("Tensor-parallel ranks (Megatron-LM's --tensor-model-parallel-size): matmul regions, attention "
               "heads and the vocabulary split over them; the mesh's fastest axis"),
      cl::init(1), cl::cat(category)};
  cl::opt<int64_t> contextParallel{
      "cp",
      cl::desc("Context-parallel ranks (Megatron-Core's --context-parallel-size): each holds 1/cp of every "
               "sequence's tokens (two of 2 cp chunks, for causal balance), attention over them by "
               "--cp-mode; they share the parameters, so ZeRO shards over data x context ranks"),
      cl::init(1), cl::cat(category)};
  cl::opt<std::string> contextParallelMode{
      "cp-mode",
      cl::desc("Attention under --cp: ulysses (DeepSpeed-Ulysses: an all-to-all to 1/cp of the heads over the "
               "whole sequence; heads and key/value heads must divide by --cp), ring (ring attention: key/value "
               "blocks passed around the context ranks while the current one is computed; any head count) or auto "
               "(ulysses where the heads divide: fewer bytes; else ring)"),
      cl::init("auto"), cl::cat(category)};
  cl::opt<bool> noSequenceParallel{
      "no-sequence-parallel",
      cl::desc("With --tp: keep the norms, residual stream and the loss's inputs whole on every tensor-parallel "
               "rank (default: Megatron-LM's sequence parallelism, --sequence-parallel: each holds 1/tp of the "
               "tokens)"),
      cl::cat(category)};
  cl::opt<int64_t> expertParallel{
      "ep",
      cl::desc("Expert-parallel ranks (Megatron-Core's --expert-model-parallel-size, DeepSpeed-MoE's ep_size): "
               "each of ep consecutive data-parallel ranks holds 1/ep of every MoE layer's experts, and the tokens "
               "reach them by all-to-alls; the experts' gradients and ZeRO shards span the data-parallel ranks "
               "holding the same experts"),
      cl::init(1), cl::cat(category)};
  cl::opt<std::string> moeMaxTokensPerExpert{
      "moe-max-tokens-per-expert",
      cl::desc("With --ep: the most rows one expert receives in one routing (from every rank of its group), the "
               "bound the memory plan holds for them: N rows, or Fx, F (>= 1) times the balanced count (the "
               "group's dispatched rows over the experts; DeepSpeed's and GShard's capacity factor, for the "
               "received rows). A step that exceeds it stops with an error naming this flag (default: the worst "
               "case, every token of the group)"),
      cl::init(""), cl::cat(category)};
  cl::opt<int64_t> pipelineParallel{
      "pp",
      cl::desc("Pipeline stages (DeepSpeed's PipelineModule num_stages, Megatron's "
               "--pipeline-model-parallel-size); data parallelism is what --world-size leaves"),
      cl::init(1), cl::cat(category)};
  cl::opt<std::string> ppSchedule{
      "pp-schedule",
      cl::desc("The pipeline's schedule (torchtitan's pipeline_parallel_schedule): 1f1b (PipeDream-Flush, as "
               "Megatron-LM and DeepSpeed), or zb-h1 (zero-bubble, Qi et al. 2024: each backward split into the "
               "input's gradient and the weights', which wait for the bubbles; at most --pp micro-batches in flight "
               "per stage, 1F1B's peak), or interleaved-1f1b (Megatron-LM's, --pp-interleave V chunks per rank), or zbv "
               "(zero-bubble in a V, torchtitan's ZBVZeroBubble: 2 chunks per rank, rank r holding stages r and "
               "2 pp - 1 - r, the backward split as zb-h1's)"),
      cl::init("1f1b"), cl::cat(category)};
  cl::opt<int64_t> zeroStage{"zero-stage",
                             cl::desc("ZeRO stage: 0 = plain data parallelism, 1 = + sharded optimizer state, "
                                      "2 = + sharded gradients, 3 = + sharded parameters"),
                             cl::init(0), cl::cat(category)};
  cl::opt<bool> zeroQuantizedWeights{
      "zero-quantized-weights",
      cl::desc("ZeRO++ qwZ (DeepSpeed's zero_quantized_weights): ZeRO-3's parameter gathers send int8 blocks "
               "with one scale per 2048 values; the stored shards and the optimizer stay full precision"),
      cl::cat(category)};
  cl::opt<int64_t> zeroHpzPartitionSize{
      "zero-hpz-partition-size",
      cl::desc("ZeRO++ hpZ (DeepSpeed's zero_hpz_partition_size): each group of this many consecutive ranks "
               "keeps a secondary copy of the parameters from the forward gather, and the backward pass gathers "
               "inside the group (default 1: off; the ranks of a node)"),
      cl::init(1), cl::cat(category)};
  cl::opt<bool> zeroQuantizedGradients{
      "zero-quantized-gradients",
      cl::desc("ZeRO++ qgZ (DeepSpeed's zero_quantized_gradients): the gradient reduce-scatter as int4 "
               "all-to-alls, inside the node then across nodes, summed in f32"),
      cl::cat(category)};
  cl::opt<int64_t> ranksPerNode{
      "ranks-per-node",
      cl::desc("Ranks per node of the cluster the program is compiled for (ZeRO++'s two hops; default: "
               "min(8, world size), an 8-GPU node). train.bin warns when the launcher places it otherwise"),
      cl::init(0), cl::cat(category)};
  cl::opt<int64_t> persistenceThreshold{
      "param-persistence-threshold",
      cl::desc("ZeRO-3: parameters with at most this many elements stay whole on every rank (DeepSpeed's "
               "stage3_param_persistence_threshold, same default: biases and norms are not gathered)"),
      cl::init(100000), cl::cat(category)};
  cl::opt<double> gradClip{"grad-clip",
                           cl::desc("Clip the global L2 norm of the gradient to this before the update (default "
                                    "1.0; 0: no clipping). nanoGPT: grad_clip, torchtitan: max_norm, DeepSpeed: "
                                    "gradient_clipping"),
                           cl::init(1.0), cl::cat(category)};
  cl::opt<double> bucketMb{"bucket-mb",
                           cl::desc("Gradient reduce-scatter/all-reduce bucket size in MiB (default: from the "
                                    "cost model; 0: one collective per tensor)"),
                           cl::init(-1), cl::cat(category)};
  cl::opt<double> gatherBucketMb{"gather-bucket-mb",
                                 cl::desc("Parameter all-gather group size in MiB (default: from the cost "
                                          "model; 0: one all-gather per tensor)"),
                                 cl::init(-1), cl::cat(category)};
  cl::opt<std::string> costModel{"cost-model",
                                 cl::desc("Collective costs measured by zcc-calibrate (JSON); default: "
                                          "built-in numbers for CPU + MPI"),
                                 cl::init(""), cl::cat(category)};
  cl::opt<bool> noOverlap{"no-overlap",
                          cl::desc("Blocking collectives in program order (no zcc-schedule)"),
                          cl::init(false), cl::cat(category)};
  cl::opt<int64_t> prefetch{"prefetch", cl::desc("ZeRO-3 parameter gather groups in flight ahead of compute"),
                            cl::init(1), cl::cat(category)};
  cl::opt<double> maxLiveMb{"max-live-mb",
                            cl::desc("Cap on in-flight and gathered communication buffers per rank, MiB"),
                            cl::init(-1), cl::cat(category)};
  cl::opt<std::string> recompute{
      "recompute",
      cl::desc("Activations recomputed in backward: none, selective (cheap ops per FLOPs/byte), op (selective and "
               "every second matmul of a block: torchtitan's op-level policy), full (all but the residual stream: each "
               "layer's input and the residual after its attention), layer (all but each layer's input: the layer "
               "re-run, its row-parallel products and tensor-parallel all-reduces too, as Megatron-LM's "
               "--recompute-granularity full and torchtitan's full AC), auto (fewest FLOPs that fit "
               "--memory-budget)"),
      cl::init("none"), cl::cat(category)};
  cl::opt<std::string> memoryBudget{
      "memory-budget",
      cl::desc("Per-rank memory the plan must fit, e.g. 512M or 2G (K, M, G: binary); a plan over it "
               "is a compile-time error naming the peak"),
      cl::init(""), cl::cat(category)};
  cl::opt<std::string> headChunk{
      "head-chunk",
      cl::desc("Most logits the fused LM head + cross-entropy holds at once, e.g. 128M (K, M, G: binary; "
               "default 128M)"),
      cl::init(""), cl::cat(category)};
  // Offload: DeepSpeed's zero_optimization.offload_optimizer / offload_param / nvme_path and
  // activation_checkpointing.cpu_checkpointing, planned at compile time.
  cl::opt<std::string> offloadOptimizer{
      "offload-optimizer",
      cl::desc("Optimizer state (moments, fp32 master weights) on: none, cpu (host memory; the optimizer runs "
               "there) or nvme (the NVMe store, swapped through the arena on a planned schedule). DeepSpeed: "
               "zero_optimization.offload_optimizer.device"),
      cl::init("none"), cl::cat(category)};
  cl::opt<std::string> offloadParam{
      "offload-param",
      cl::desc("ZeRO-3's parameter shards on: none, cpu or nvme (with --offload-optimizer; nvme: each gather "
               "group's shards read ahead into the arena's slots). DeepSpeed: zero_optimization.offload_param.device"),
      cl::init("none"), cl::cat(category)};
  cl::opt<std::string> offloadActivations{
      "offload-activations",
      cl::desc("Activations the backward pass reads (the checkpoints, with --recompute) on: none or cpu "
               "(host memory from their last forward use to their first backward use). DeepSpeed: "
               "activation_checkpointing.cpu_checkpointing"),
      cl::init("none"), cl::cat(category)};
  cl::opt<std::string> nvmePath{
      "nvme-path",
      cl::desc("Directory of the NVMe store train.bin uses unless given its own --nvme-path. DeepSpeed: "
               "offload_optimizer.nvme_path"),
      cl::value_desc("DIR"), cl::init(""), cl::cat(category)};
  cl::opt<int64_t> offloadBufferCount{
      "offload-buffer-count",
      cl::desc("NVMe swap slots in the arena: the update reads count - 1 chunks ahead (default 4). DeepSpeed: "
               "offload_optimizer.buffer_count"),
      cl::init(4), cl::cat(category)};
  cl::opt<std::string> offloadBufferSize{
      "offload-buffer-size",
      cl::desc("Bytes of one NVMe swap slot, e.g. 8M (default 8M; a chunk of the update holds its states). "
               "DeepSpeed: aio.block_size x queue_depth"),
      cl::init(""), cl::cat(category)};
  cl::opt<std::string> memorySvg{"memory-svg",
                                 cl::desc("Draw each rank's memory over the step (live bytes by kind) to FILE"),
                                 cl::value_desc("FILE"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> report{
      "report", cl::ValueOptional,
      cl::desc("Print each rank's plan (model-state bytes, collectives and bytes sent per step); "
               "--report=json writes it as JSON to <-o>.report.json (stdout without -o)"),
      cl::init(""), cl::cat(category)};
  cl::opt<int64_t> gradAccum{"grad-accum",
                             cl::desc("Micro-batches per step; the model's batch is the global "
                                      "batch, split over ranks x micro-batches"),
                             cl::init(1), cl::cat(category)};
  cl::opt<std::string> optimizer{"optimizer", cl::desc("adamw or sgd (default: the model's zc.optimizer, else adamw)"),
                                 cl::init(""), cl::cat(category)};
  cl::opt<std::string> compression{
      "compression",
      cl::desc("DeepSpeed's compression_training JSON (a DeepSpeed config or the section): the matched linear and "
               "embedding weights are fake-quantized (weight_quantization, straight-through gradients) and pruned "
               "(l1 sparse_pruning) from their schedule_offset on; --export-weights writes them compressed"),
      cl::value_desc("FILE"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> precision{"precision", cl::desc("fp32, or bf16 compute with fp32 master weights and optimizer state"), cl::init("fp32"),
                                 cl::cat(category)};
  cl::opt<std::string> reducePrecision{
      "reduce-precision",
      cl::desc("What the gradient reductions over the data-parallel ranks sum in under --precision bf16: bf16 (the "
               "gradients' own) or fp32 (cast up, summed, cast back: FSDP2's reduce_dtype=float32, torchtitan's "
               "default, and Megatron-LM's; twice the bytes on the wire)"),
      cl::init("bf16"), cl::cat(category)};
  // The simulator and the planner (sim/, docs/simulator.md).
  cl::opt<std::string> cluster{
      "cluster",
      cl::desc("The cluster the plan runs on: --simulate and --plan auto price it there, and without --cost-model the "
               "bucket sizes come from its links. A shipped one (dgx-a100-80g, dgx-a100-40g, dgx-h100) or a JSON file "
               "(docs/simulator.md; zcc-calibrate --cluster-out writes this machine's)"),
      cl::value_desc("NAME|FILE"), cl::init(""), cl::cat(category)};
  cl::opt<bool> simulate{"simulate",
                         cl::desc("Compile the plan (no code) and predict one training step on --cluster: step time "
                                  "and where it goes, tokens/s, MFU, memory per device; writes no executable"),
                         cl::cat(category)};
  cl::opt<std::string> simTrace{"sim-trace",
                                cl::desc("With --simulate: the predicted step as a Chrome trace, in train.bin --trace's "
                                         "layout"),
                                cl::value_desc("FILE"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> simAttention{
      "sim-attention",
      cl::desc("With --simulate: price attention as zcc runs it (flash, the default) or as Megatron-LM did in 2022 "
               "(materialized: the whole score matrix in memory, softmax and dropout over it), to compare with runs "
               "of that software"),
      cl::init("flash"), cl::cat(category)};
  cl::opt<std::string> simRowKernels{
      "sim-row-kernels",
      cl::desc("With --simulate: price the norms, the rotary embedding and the gated MLP's activation as zcc runs "
               "them (fused, the default: one kernel each) or as PyTorch eager runs torchtitan's Llama code (eager: "
               "each line of the module a kernel over the whole tensor, the norm in fp32, the keys and values "
               "repeated for grouped-query attention), to compare with runs of that software"),
      cl::init("fused"), cl::cat(category)};
  cl::opt<int64_t> ppInterleave{
      "pp-interleave",
      cl::desc("Chunks of layers (virtual pipeline stages) per pipeline rank, run by Megatron-LM's interleaved 1F1B "
               "(--pp-schedule interleaved-1f1b; Megatron's --num-layers-per-virtual-pipeline-stage): virtual stage "
               "c x pp + r is rank r's chunk c"),
      cl::init(1), cl::cat(category)};
  cl::opt<std::string> plan{
      "plan",
      cl::desc("auto: search the plans for --nodes nodes of --cluster, print the ten best and write the choice to -o "
               "(default plan.json); FILE: compile the plan FILE names (world size, mesh, ZeRO stage, micro-batches, "
               "recompute, offload, precision)"),
      cl::value_desc("auto|FILE"), cl::init(""), cl::cat(category)};
  cl::opt<double> planSeconds{
      "plan-seconds",
      cl::desc("With --plan auto: the search's time limit in seconds (default 60; 0: none). It compiles the plans "
               "in the order of their step's lower bound and stops there with the best found, saying so"),
      cl::init(60), cl::cat(category)};
  cl::opt<int64_t> nodes{"nodes", cl::desc("With --plan auto: nodes of --cluster to plan for"), cl::init(0),
                         cl::cat(category)};
  cl::opt<int64_t> globalBatch{
      "global-batch",
      cl::desc("With --plan auto: sequences per optimizer step (default: the model's batch); a multiple of it or a "
               "divisor the model's batch splits into"),
      cl::init(0), cl::cat(category)};
  cl::opt<std::string> target{"target",
                              cl::desc("cpu (the reference backend), or cuda (cuBLASLt, CUDA kernels, NCCL: one GPU "
                                       "per rank)"),
                              cl::init("cpu"),
                              cl::cat(category)};
};

/// "123", "64K", "512M", "2G" (binary multiples; a trailing B or iB is allowed).
std::optional<int64_t> parseByteSize(StringRef text) {
  text = text.trim();
  if (text.ends_with_insensitive("ib"))
    text = text.drop_back(2);
  else if (text.ends_with_insensitive("b"))
    text = text.drop_back(1);
  int64_t multiplier = 1;
  if (!text.empty()) {
    switch (llvm::toLower(text.back())) {
    case 'k': multiplier = int64_t(1) << 10; break;
    case 'm': multiplier = int64_t(1) << 20; break;
    case 'g': multiplier = int64_t(1) << 30; break;
    case 't': multiplier = int64_t(1) << 40; break;
    default: break;
    }
    if (multiplier != 1)
      text = text.drop_back(1);
  }
  double value;
  if (text.empty() || text.getAsDouble(value) || !(value > 0))
    return std::nullopt;
  return static_cast<int64_t>(value * multiplier);
}

/// Parses `path`; parseSourceFile verifies every op and symbol use before
/// returning. Errors are reported through the context's diagnostic handler.
OwningOpRef<ModuleOp> parseModel(llvm::SourceMgr &sourceMgr, MLIRContext &context,
                                 StringRef path) {
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &message);
  if (!file) {
    llvm::errs() << "zcc: error: " << message << "\n";
    return nullptr;
  }
  llvm::StringRef text = file->getBuffer();
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  if (const char *deep = zcc::findExcessiveNesting(text)) {
    sourceMgr.PrintMessage(llvm::SMLoc::getFromPointer(deep), llvm::SourceMgr::DK_Error,
                           "brackets nested deeper than " + llvm::Twine(zcc::kMaxNesting) +
                               " levels: zcc does not parse input this deep");
    return nullptr;
  }
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

/// Runs zcc's pipeline (the same one `zcc-opt -zcc-pipeline` runs), honouring
/// MLIR's pass-manager flags such as --mlir-print-ir-after-all.
LogicalResult runPipeline(ModuleOp module, const zc::ZccPipelineOptions &pipeline) {
  PassManager pm(module->getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  zc::buildZccPipeline(pm, pipeline);
  return pm.run(module);
}

/// LLVM dialect -> LLVM IR.
} // namespace

int zcc::runZccMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  DriverOptions options;
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  // By name too: zcc-recompute's auto policy re-runs the rest of the pipeline from its text.
  registerZccPasses();
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "zcc " << ZCC_VERSION << " (MLIR " << LLVM_VERSION_STRING << ")\n";
  });
  // --help shows zcc's own flags; MLIR's debugging flags stay available and
  // are listed by --help-hidden.
  cl::HideUnrelatedOptions(options.category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "zcc: compiles a training graph in the zc dialect into a sharded data-parallel "
      "training executable\n\n  zcc model.mlir --verify-only\n  zcc model.mlir -o out.mlir\n");

  zc::ZccPipelineOptions pipeline;
  pipeline.worldSize = options.worldSize;
  pipeline.zeroStage = options.zeroStage;
  pipeline.tensorParallel = options.tensorParallel;
  pipeline.pipelineParallel = options.pipelineParallel;
  pipeline.expertParallel = options.expertParallel;
  pipeline.moeMaxTokensPerExpert = options.moeMaxTokensPerExpert;
  // Interleaved 1F1B: p x v virtual stages, each compiled as a stage of its own (stage c p + r is
  // rank r's chunk c) and linked into one executable. The simulator compiles them as a p x v
  // pipeline of one chunk each (sim/Planner.cpp) and runs the interleaved table over them.
  // ZB-V fixes its chunks (2, in a V: rank r's stages r and 2p - 1 - r); --pp-interleave may only
  // repeat them.
  const std::optional<zcc::pipeline::Schedule> chosen = zcc::pipeline::parseSchedule(options.ppSchedule);
  const int64_t fixedChunks = chosen ? zcc::pipeline::fixedChunks(*chosen) : 0;
  const bool interleaved = options.ppSchedule == "interleaved-1f1b" || (options.ppInterleave > 1 && !fixedChunks);
  pipeline.pipelineSchedule = interleaved ? std::string("interleaved-1f1b") : std::string(options.ppSchedule);
  pipeline.pipelineChunks = interleaved                                   ? std::max<int64_t>(options.ppInterleave, 1)
                            : fixedChunks ? std::max(options.ppInterleave.getValue(), fixedChunks)
                                          : 1;
  pipeline.sequenceParallel = !options.noSequenceParallel;
  pipeline.contextParallel = options.contextParallel;
  pipeline.contextParallelMode = options.contextParallelMode;
  pipeline.gradAccum = options.gradAccum;
  pipeline.persistenceThreshold = options.persistenceThreshold;
  pipeline.zeroQuantizedWeights = options.zeroQuantizedWeights;
  pipeline.zeroHpzPartitionSize = options.zeroHpzPartitionSize;
  pipeline.zeroQuantizedGradients = options.zeroQuantizedGradients;
  // Default: an 8-GPU node, or the largest part of the world up to 8 ranks that divides it.
  pipeline.ranksPerNode = options.ranksPerNode;
  for (int64_t n = std::min<int64_t>(8, options.worldSize); pipeline.ranksPerNode == 0 && n >= 1; --n)
    if (options.worldSize % n == 0)
      pipeline.ranksPerNode = n;
  pipeline.gradClip = options.gradClip;
  pipeline.bucketMb = options.bucketMb;
  pipeline.gatherBucketMb = options.gatherBucketMb;
  pipeline.costModel = options.costModel;
  pipeline.overlap = !options.noOverlap;
  pipeline.memorySvg = options.memorySvg;
  pipeline.recompute = options.recompute;
  if (!options.memoryBudget.empty()) {
    std::optional<int64_t> bytes = parseByteSize(options.memoryBudget);
    if (!bytes || *bytes <= 0) {
      llvm::errs() << "zcc: error: --memory-budget expects a size like 512M or 2G, got '"
                   << options.memoryBudget << "'\n";
      return 1;
    }
    pipeline.memoryBudget = *bytes;
  }
  if (!options.headChunk.empty()) {
    std::optional<int64_t> bytes = parseByteSize(options.headChunk);
    if (!bytes || *bytes <= 0) {
      llvm::errs() << "zcc: error: --head-chunk expects a size like 64M or 512K, got '" << options.headChunk
                   << "'\n";
      return 1;
    }
    pipeline.headChunkBytes = *bytes;
  }
  pipeline.offloadOptimizer = options.offloadOptimizer;
  pipeline.offloadParam = options.offloadParam;
  pipeline.offloadActivations = options.offloadActivations;
  pipeline.nvmePath = options.nvmePath;
  pipeline.offloadBufferCount = options.offloadBufferCount;
  if (!options.offloadBufferSize.empty()) {
    std::optional<int64_t> bytes = parseByteSize(options.offloadBufferSize);
    if (!bytes || *bytes <= 0) {
      llvm::errs() << "zcc: error: --offload-buffer-size expects a size like 8M or 512K, got '"
                   << options.offloadBufferSize << "'\n";
      return 1;
    }
    pipeline.offloadBufferBytes = *bytes;
  }
  pipeline.prefetch = options.prefetch;
  pipeline.maxLiveMb = options.maxLiveMb;
  if (options.report.getNumOccurrences()) {
    pipeline.report = options.report.empty() ? "text" : options.report.getValue();
    if (pipeline.report == "json" && options.output != "-")
      pipeline.reportFile = options.output + ".report.json";
  }
  pipeline.optimizer = options.optimizer;
  pipeline.precision = options.precision;
  pipeline.reducePrecision = options.reducePrecision;
  pipeline.compression = options.compression;
  const bool planAuto = options.plan == "auto";
  if (!options.plan.empty() && !planAuto)
    if (llvm::Error e = zcc::sim::applyPlanFile(options.plan, pipeline)) {
      llvm::errs() << "zcc: error: " << llvm::toString(std::move(e)) << "\n";
      return 1;
    }
  // --plan auto applies --moe-max-tokens-per-expert to the plans it tries with expert parallelism.
  zc::ZccPipelineOptions checked;
  checked.copyOptionValuesFrom(pipeline);
  if (planAuto && pipeline.expertParallel == 1 && zc::ExpertBound::parse(pipeline.moeMaxTokensPerExpert))
    checked.moeMaxTokensPerExpert = "";
  std::string problem = zc::checkPipelineOptions(checked);
  if (problem.empty() && (options.simulate || planAuto) && options.cluster.empty())
    problem = std::string(planAuto ? "--plan auto" : "--simulate") +
              " needs --cluster (dgx-a100-80g, dgx-a100-40g, dgx-h100, or a cluster JSON file)";
  if (problem.empty() && planAuto && !(options.planSeconds >= 0))
    problem = "--plan-seconds must be >= 0 (0: no limit), got " + std::to_string(options.planSeconds);
  if (problem.empty() && planAuto && options.nodes < 1)
    problem = "--plan auto needs --nodes N (N >= 1): the nodes of --cluster to plan for";
  if (problem.empty() && options.ppInterleave < 1)
    problem = "--pp-interleave must be at least 1, got " + std::to_string(options.ppInterleave);
  if (problem.empty() && interleaved && options.ppSchedule != "1f1b" && options.ppSchedule != "interleaved-1f1b")
    problem = "--pp-interleave runs interleaved 1F1B: not with --pp-schedule " + options.ppSchedule;
  if (problem.empty() && !options.simTrace.empty() && !options.simulate)
    problem = "--sim-trace writes --simulate's predicted step: add --simulate";
  if (problem.empty() && options.simAttention != "flash" && options.simAttention != "materialized")
    problem = "--sim-attention must be flash or materialized, got " + options.simAttention;
  if (problem.empty() && options.simRowKernels != "fused" && options.simRowKernels != "eager")
    problem = "--sim-row-kernels must be fused or eager, got " + options.simRowKernels;
  if (problem.empty() && options.globalBatch < 0)
    problem = "--global-batch must be positive, got " + std::to_string(options.globalBatch);
  if (problem.empty() && options.target != "cpu" && options.target != "cuda")
    problem = "--target must be cpu or cuda, got " + options.target;
  // The object is the same for both targets; only linking the executable needs the CUDA runtime
  // (test/CudaOnCpu links --emit=obj against the backend built on the CPU).
  if (problem.empty() && options.target == "cuda" && options.emit == EmitKind::Exe && !zcc::canLinkCudaBackend())
    problem = "this zcc was built without the CUDA backend (no CUDA toolkit, NCCL or MPI at build time); "
              "--emit=obj writes the object for a runtime built elsewhere";
  if (!problem.empty()) {
    llvm::errs() << "zcc: error: " << problem << "\n";
    return 1;
  }

  // The cluster's links as the alpha-beta cost model the passes read (zcc-bucket's sizes, the
  // report's predictions), for this plan's data-parallel group, unless --cost-model gives one.
  zcc::sim::CostModelFile clusterCosts;
  if (!options.cluster.empty() && options.costModel.empty() && !planAuto) {
    llvm::Expected<zcc::sim::Cluster> cluster = zcc::sim::loadCluster(options.cluster);
    if (!cluster) {
      llvm::errs() << "zcc: error: " << llvm::toString(cluster.takeError()) << "\n";
      return 1;
    }
    if (llvm::Error e = zcc::sim::writePassCostModel(*cluster, zcc::sim::Mesh::of(pipeline),
                                                     pipeline.precision == "bf16", clusterCosts)) {
      llvm::errs() << "zcc: error: " << llvm::toString(std::move(e)) << "\n";
      return 1;
    }
    pipeline.costModel = clusterCosts.path.str().str();
  }

  DialectRegistry registry;
  registerZccDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  // Users read the located message and the source line; the generic dump of
  // the op that MLIR appends by default is noise outside compiler debugging.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  OwningOpRef<ModuleOp> module = parseModel(sourceMgr, context, options.input);
  if (!module)
    return 1;
  // --ep splits experts: the whole model must have some (a pipeline stage may have none).
  if (pipeline.expertParallel > 1 && !module->walk([](zc::MoeRouteOp) { return WalkResult::interrupt(); })
                                          .wasInterrupted()) {
    Operation *at = module->getOperation();
    module->walk([&](zc::ForwardOp forward) { at = forward; });
    at->emitError() << "--ep " << static_cast<int64_t>(pipeline.expertParallel)
                    << ": the model has no MoE layer (zc.moe_route) whose experts to split";
    return 1;
  }
  if (options.simulate || planAuto) {
    zcc::SimulateFlags flags;
    flags.cluster = options.cluster;
    flags.simulate = options.simulate;
    flags.planAuto = planAuto;
    flags.traceFile = options.simTrace;
    flags.planFile = options.output == "-" ? "plan.json" : options.output.getValue();
    flags.nodes = options.nodes;
    flags.planSeconds = options.planSeconds;
    flags.globalBatch = options.globalBatch;
    flags.interleave = pipeline.pipelineChunks; // the flag's, or a plan file's
    flags.schedule = pipeline.pipelineSchedule;
    flags.materializedAttention = options.simAttention == "materialized";
    flags.eagerRowKernels = options.simRowKernels == "eager";
    if (pipeline.report == "json")
      flags.jsonReport = options.output == "-" ? "-" : options.output + ".report.json";
    zc::ZccPipelineOptions simulated;
    simulated.copyOptionValuesFrom(pipeline);
    if (flags.interleave > 1) { // compiled as a p x v pipeline of one chunk per stage (above)
      // ZB-V's stages split their backward as ZB-H1's do; the simulator runs the V's table over them.
      simulated.pipelineSchedule = pipeline.pipelineSchedule == "zbv" ? "zb-h1" : "1f1b";
      simulated.pipelineChunks = 1;
    }
    simulated.reportFile = flags.jsonReport.empty() ? "-" : flags.jsonReport;
    if (pipeline.report == "json" && flags.jsonReport == "-")
      simulated.report = ""; // stdout gets the simulation's JSON alone
    return zcc::runSimulateOrPlan(*module, simulated, flags);
  }
  if (options.emit == EmitKind::Exe && options.output == "-" && !options.verifyOnly) {
    llvm::errs() << "zcc: error: an executable needs -o FILE (or --emit=mlir|llvm)\n";
    return 1;
  }
  if (options.verifyOnly) // the model checks only: nothing to lower
    pipeline.lower = false;
  // One compile per pipeline stage (one without --pp): each keeps its stage of the forward and
  // is planned and lowered as a model of its own; the executable links them all.
  const int64_t stages = pipeline.pipelineParallel * pipeline.pipelineChunks; // virtual stages when interleaved
  const std::string jsonReport = pipeline.reportFile;
  std::vector<OwningOpRef<ModuleOp>> compiled;
  for (int64_t k = 0; k < stages; ++k) {
    OwningOpRef<ModuleOp> stage = stages == 1 ? std::move(module) : OwningOpRef<ModuleOp>(module->clone());
    pipeline.pipelineStage = k;
    if (stages > 1 && jsonReport != "-") // stage k's plan: <-o>.stage<k>.report.json
      pipeline.reportFile = StringRef(jsonReport).drop_back(strlen(".report.json")).str() + ".stage" +
                            std::to_string(k) + ".report.json";
    if (failed(runPipeline(*stage, pipeline)))
      return 1;
    compiled.push_back(std::move(stage));
  }
  if (options.verifyOnly)
    return 0;

  std::string message;
  if (options.emit == EmitKind::Mlir) {
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(options.output, &message);
    if (!out) {
      llvm::errs() << "zcc: error: " << message << "\n";
      return 1;
    }
    for (auto [k, stage] : llvm::enumerate(compiled)) {
      if (stages > 1)
        out->os() << "// pipeline stage " << k << " of " << stages << "\n";
      stage->print(out->os());
      out->os() << "\n";
    }
    out->keep();
    return 0;
  }

  llvm::LLVMContext llvmContext;
  std::vector<std::unique_ptr<llvm::Module>> translated;
  for (OwningOpRef<ModuleOp> &stage : compiled) {
    translated.push_back(translate(*stage, llvmContext));
    if (!translated.back())
      return 1;
  }
  std::unique_ptr<llvm::Module> llvmModule =
      stages == 1 ? std::move(translated.front()) : zcc::linkStages(std::move(translated), llvmContext);
  if (!llvmModule)
    return 1;
  if (options.emit == EmitKind::Llvm || options.emit == EmitKind::Obj) {
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(options.output, &message);
    if (!out) {
      llvm::errs() << "zcc: error: " << message << "\n";
      return 1;
    }
    if (options.emit == EmitKind::Llvm)
      llvmModule->print(out->os(), nullptr);
    else if (!emitObject(*llvmModule, out->os()))
      return 1;
    out->keep();
    return 0;
  }

  // An executable: the object goes to a temporary file that is always removed.
  SmallString<128> objectPath;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("zcc", "o", fd, objectPath)) {
    llvm::errs() << "zcc: error: cannot create a temporary object file: " << ec.message() << "\n";
    return 1;
  }
  llvm::FileRemover removeObject(objectPath);
  {
    llvm::raw_fd_ostream objectOut(fd, /*shouldClose=*/true);
    if (!emitObject(*llvmModule, objectOut))
      return 1;
  }
  // Link to a temporary name first so a failed link leaves no partial executable.
  std::string partial = options.output + ".partial";
  llvm::FileRemover removePartial(partial);
  if (!linkExecutable(objectPath, partial, options.target == "cuda"))
    return 1;
  if (std::error_code ec = llvm::sys::fs::rename(partial, options.output)) {
    llvm::errs() << "zcc: error: cannot write " << options.output << ": " << ec.message() << "\n";
    return 1;
  }
  return 0;
}
