//===- Passes.h - declarations and registration of every zcc pass --------===//

#ifndef ZCC_PASSES_PASSES_H
#define ZCC_PASSES_PASSES_H

#include "dialects/zc/ZcDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/Pass.h"
#include "runtime/main/PipelineSchedule.h"

namespace mlir::zc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Set by zcc-autodiff on the constant that seeds the backward pass: the ops
/// before it in the step function are the forward pass.
constexpr llvm::StringLiteral kBackwardSeedAttr = "zc.backward_seed";

/// Sequence parallelism's additions to the tensor axis' traffic, named for the report: a
/// gather of a region's input again for the backward pass (autodiff), and the all-reduce
/// of a parameter's gradient that split ops read (a zc.tp_copy zcc-sequence-parallel puts
/// on the parameter, and the all-reduce autodiff makes of it).
constexpr llvm::StringLiteral kRegatherAttr = "zc.regather";
/// Context parallelism's ring (zcc-context-parallel, --cp-mode ring): on zc.causal_attention, its
/// gradient and zc.rotary, `zc.context_ring = ranks`: the op runs on this rank's tokens (two
/// chunks of the sequence) at their global positions, attention passing key/value blocks
/// around the context ranks.
constexpr llvm::StringLiteral kContextRingAttr = "zc.context_ring";
/// On zc.moe_aux_loss and its gradient under context parallelism, `zc.context_pooled = ranks`:
/// the loss is the whole sequence's, its counts and score sums summed over the context ranks
/// (one all-reduce of 2E values each) before the product; the gradient is that loss's with
/// respect to this rank's logits, times `ranks` (each rank's objective holds the whole loss and
/// train.bin averages them).
constexpr llvm::StringLiteral kContextPooledAttr = "zc.context_pooled";
constexpr llvm::StringLiteral kGradSumAttr = "zc.grad_sum";

/// Set by zcc-recompute on the clones it puts in the backward pass.
constexpr llvm::StringLiteral kRecomputedAttr = "zc.recomputed";

/// The function autodiff (`zc.role = "step"`) or the optimizer (`"update"`)
/// wrote, or null.
/// Expert parallelism's declared bound on the rows one expert receives in one routing
/// (zcc --moe-max-tokens-per-expert): "" or "0" none (the worst case), "N" rows, or "Fx" F times
/// the balanced count (the group's dispatched rows over the experts). False: not of these forms.
struct ExpertBound {
  int64_t rows = 0;
  double factor = 0;
  static std::optional<ExpertBound> parse(llvm::StringRef text);
  /// The rows for a layer whose balanced count is `balanced` (0: no bound).
  int64_t rowsFor(int64_t balanced) const;
};

/// The blocking ZeRO gathers (zc.gather_param, zc.all_gather_param) as pack_shards +
/// all_gather (+ unpack / unpack_params): the form zcc-schedule splits and zcc-zero-pp rewrites.
void expandParamGathers(Block &block);

inline func::FuncOp functionWithRole(ModuleOp module, StringRef role) {
  for (auto fn : module.getOps<func::FuncOp>())
    if (auto r = fn->getAttrOfType<StringAttr>("zc.role"); r && r.getValue() == role)
      return fn;
  return {};
}

/// The functions that run only the forward: a pipeline stage's forward-only function
/// (`"forward"`) and the validation loss (`"eval"`), where there are.
inline SmallVector<func::FuncOp> forwardOnlyFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> fns;
  for (StringRef role : {"forward", "eval"})
    if (func::FuncOp fn = functionWithRole(module, role))
      fns.push_back(fn);
  return fns;
}

/// The compression schedule's gates (zc.step_gate): their distinct `from` steps in increasing
/// order, a gate's index being its place in the list (train.bin sets them in this order).
inline SmallVector<int64_t> stepGateOffsets(ModuleOp module) {
  SmallVector<int64_t> offsets;
  module.walk([&](StepGateOp gate) { offsets.push_back(static_cast<int64_t>(gate.getFrom())); });
  llvm::sort(offsets);
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  return offsets;
}
inline int64_t stepGateIndex(ModuleOp module, int64_t from) {
  SmallVector<int64_t> offsets = stepGateOffsets(module);
  return std::lower_bound(offsets.begin(), offsets.end(), from) - offsets.begin();
}

/// The functions the memory plan places: the step and the update, the forward-only ones, and
/// a pipeline stage's weight gradients (the zero-bubble schedules' W).
inline SmallVector<func::FuncOp> plannedFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> fns{functionWithRole(module, "step"), functionWithRole(module, "update")};
  fns.append(forwardOnlyFunctions(module));
  if (func::FuncOp weight = functionWithRole(module, "weight"))
    fns.push_back(weight);
  return fns;
}

/// Copies and views that compute nothing: a reshape, a cast, a transpose, a context rank's chunks.
inline bool rearrangesInput(Operation *op) { return isa<ReshapeOp, CastOp, TransposeOp, CpShardOp>(op); }

/// A value a pipeline stage can take again at the cost of a copy rather than keep: one of its
/// arguments (the micro-batch's, kept in its slot), a parameter or constant, or one of those
/// rearranged (a parameter's bf16 cast, a context rank's chunk of the token ids).
inline bool fromStageInputs(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || isa<ParamRefOp, arith::ConstantOp>(def))
    return true;
  return rearrangesInput(def) && fromStageInputs(def->getOperand(0));
}

/// The pipeline schedule a stage was compiled for (zc.pipeline's `schedule`; 1F1B where the
/// module is no stage or names none).
inline zcc::pipeline::Schedule pipelineSchedule(ModuleOp module) {
  auto plan = module->getAttrOfType<DictionaryAttr>("zc.pipeline");
  auto name = plan ? plan.getAs<StringAttr>("schedule") : StringAttr();
  return zcc::pipeline::parseSchedule(name ? name.getValue().str() : "1f1b")
      .value_or(zcc::pipeline::Schedule::OneFOneB);
}

/// The chunks of layers per pipeline rank a stage was compiled for (zc.pipeline's `chunks`:
/// interleaved, stage s is chunk s / (stages / chunks) of a rank, zcc::pipeline::rankOfStage's); 1 where
/// the module is no stage or not interleaved.
inline int64_t pipelineChunks(ModuleOp module) {
  auto plan = module->getAttrOfType<DictionaryAttr>("zc.pipeline");
  auto chunks = plan ? plan.getAs<IntegerAttr>("chunks") : IntegerAttr();
  return chunks ? chunks.getInt() : 1;
}

/// The terms of a sum of 0-d losses (the cross-entropy plus each MoE layer's load-balancing and
/// z-losses; a pipeline stage's objective plus its routers' losses), left to right: `v` itself where
/// it is no zc.add of 0-d tensors read once. `adds` collects the sum's adds, the root first.
inline void lossSumTerms(Value v, SmallVectorImpl<Value> &terms, SmallVectorImpl<Operation *> *adds = nullptr) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add || !add->hasOneUse() || tensorOf(add.getResult()).getRank() != 0) {
    terms.push_back(v);
    return;
  }
  if (adds)
    adds->push_back(add);
  for (Value operand : add->getOperands())
    lossSumTerms(operand, terms, adds);
}

/// A non-last pipeline stage's zc.stage_output: its returned objective, or one of the terms that
/// objective adds (the stage's own losses beside it); null where there is none (the last stage).
inline StageOutputOp stageObjective(Value objective) {
  SmallVector<Value> terms;
  lossSumTerms(objective, terms);
  for (Value term : terms)
    if (auto out = term.getDefiningOp<StageOutputOp>())
      return out;
  return {};
}

/// Where virtual stage `stage` of a pipelined module's pipeline runs: its pipeline rank (of
/// `ranks`) and which of that rank's chunks it is (the schedule's placement: Megatron's loop, or
/// ZB-V's V). Stage s itself, chunk 0, where the module is no stage.
struct StagePlace {
  int64_t rank = 0, chunk = 0, ranks = 1;
};
inline StagePlace stagePlace(ModuleOp module, int64_t stage) {
  auto plan = module->getAttrOfType<DictionaryAttr>("zc.pipeline");
  if (!plan)
    return {stage, 0, 1};
  const int64_t ranks = plan.getAs<IntegerAttr>("stages").getInt() / pipelineChunks(module);
  const zcc::pipeline::Placement placement = zcc::pipeline::placementOf(pipelineSchedule(module));
  return {zcc::pipeline::rankOfStage(placement, stage, ranks), zcc::pipeline::chunkOfStage(placement, stage, ranks),
          ranks};
}

/// The symbols an op names (parameters, states), in its attributes or arrays of
/// them. Two ops naming one symbol touch one buffer: passes that reorder ops keep
/// their order.
inline SmallVector<Attribute> namedSymbols(Operation *op) {
  SmallVector<Attribute> symbols;
  for (NamedAttribute attr : op->getAttrs()) {
    if (auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
      symbols.push_back(ref.getAttr());
    else if (auto array = dyn_cast<ArrayAttr>(attr.getValue()))
      for (Attribute element : array)
        if (auto ref = dyn_cast<FlatSymbolRefAttr>(element))
          symbols.push_back(ref.getAttr());
  }
  return symbols;
}

/// The checks of `zcc-verify-model`, for callers that are not a pass manager.
LogicalResult verifyModel(ModuleOp module);

} // namespace mlir::zc

#endif // ZCC_PASSES_PASSES_H
