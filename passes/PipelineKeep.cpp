//===- PipelineKeep.cpp - a pipeline stage keeps its activations ----------===//
//
// 1F1B runs a stage's forward of a micro-batch ("F") and, P - s - 1 forwards
// later, its backward ("B"). zcc-pipeline-stage leaves each stage before the
// last two functions: the forward-only twin (F) and the step, which is the
// stage's forward and autodiff's backward. Run as they are, the step computes
// the forward a second time (activation checkpointing at stage boundaries:
// about a third more FLOPs than Megatron-LM or DeepSpeed's pipeline engine).
// This pass makes F the step's own forward and B the step's backward alone:
//
//   step (before):  forward ops ; zc.stage_output ; backward ops reading the forward's values
//   forward (F):    forward ops ; zc.pipe_send out ; zc.pipe_stash %v into %stash_k ...
//   step (B):       zc.stage_output ; backward ops reading %stash_k
//
// Each value the backward reads from the forward becomes an argument with
// zc.input = "stash" of both functions (same position): train.bin gives every
// micro-batch in flight its own buffers for the arguments (its slot), so a
// stage holds its in-flight micro-batches' activations, no more. The forward is
// the step's as autodiff, zcc-recompute and zcc-fuse left it, so the recompute
// policy holds inside the stage as on one rank: a value it recomputes is
// recomputed in B from its checkpoints, which are what is stashed. Parameter
// reads, the stage's inputs, casts and chunks of them, reshapes (views, no
// code) and sequence parallelism's gathers are taken again in B, each right
// before its first reader, rather than kept.
//
// The last stage has no F: its step runs its forward once already.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCPIPELINEKEEP
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

/// Ops B computes again rather than reads from F: views (no code), rearranged inputs, and
/// sequence parallelism's gathers of the tokens (every tensor-parallel rank gathers again, as
/// Megatron-LM does: a stage keeps its 1/tp of them).
bool takenAgain(Operation *op) {
  if (auto gather = dyn_cast<AllGatherOp>(op); gather && gather.getAxis() == MeshAxis::tensor)
    return true;
  return isa<ParamRefOp, arith::ConstantOp, ReshapeOp>(op) || (rearrangesInput(op) && fromStageInputs(op->getOperand(0)));
}

struct ZccPipelineKeepPass : zc::impl::ZccPipelineKeepBase<ZccPipelineKeepPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step = functionWithRole(module, "step"), forward = functionWithRole(module, "forward");
    if (!module->hasAttr("zc.pipeline") || !step || !forward)
      return; // not a pipeline stage, or the last one
    if (failed(keep(step, forward)))
      signalPassFailure();
  }

  LogicalResult keep(func::FuncOp step, func::FuncOp forward) {
    Block &body = step.getBody().front();
    StageOutputOp boundary;
    for (auto op : body.getOps<StageOutputOp>())
      boundary = op;
    if (!boundary)
      return step.emitOpError("zcc-pipeline-keep: a pipeline stage's step without zc.stage_output");
    if (forward.getNumArguments() != step.getNumArguments() ||
        forward.getArgumentTypes() != step.getArgumentTypes())
      return forward.emitOpError("zcc-pipeline-keep: the stage's forward and step take different arguments");
    PipeSendOp send;
    forward.walk([&](PipeSendOp op) { send = op; });
    if (!send)
      return forward.emitOpError("zcc-pipeline-keep: the stage's forward sends nothing to the next stage");
    const uint64_t nextStage = send.getStage();
    const Location sendLoc = send.getLoc(); // the forward's old body goes
    DenseSet<Operation *> forwardOps; // the step's ops before its objective
    for (Operation &op : body) {
      if (&op == boundary.getOperation())
        break;
      forwardOps.insert(&op);
    }
    auto inForward = [&](Operation *op) { return forwardOps.contains(op); };

    // B's reads of F's values: taken again right before their first reader in B, or kept (a
    // stash argument each).
    Builder b(step.getContext());
    DictionaryAttr stashAttrs = b.getDictionaryAttr(b.getNamedAttr("zc.input", b.getStringAttr("stash")));
    OpBuilder atBackward(boundary->getContext());
    DenseMap<Value, Value> inBackward;
    SmallVector<std::pair<Value, unsigned>> stashes; // F's value, its argument
    std::function<FailureOr<Value>(Value)> backwardValue = [&](Value v) -> FailureOr<Value> {
      Operation *def = v.getDefiningOp();
      if (!def || !inForward(def))
        return v;
      if (Value known = inBackward.lookup(v))
        return known;
      if (takenAgain(def)) {
        IRMapping map;
        for (Value operand : def->getOperands()) {
          FailureOr<Value> mine = backwardValue(operand);
          if (failed(mine))
            return failure();
          map.map(operand, *mine);
        }
        Operation *again = atBackward.clone(*def, map);
        for (auto [mine, theirs] : llvm::zip(def->getResults(), again->getResults()))
          inBackward[mine] = theirs;
        return inBackward.lookup(v);
      }
      // Activations, and a MoE layer's routing (i32).
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || !(isa<FloatType>(type.getElementType()) || type.getElementType().isInteger(32)))
        return def->emitOpError("zcc-pipeline-keep: the stage's backward reads this value of its forward, which "
                                "is neither an activation nor a routing a stage can keep: ")
               << v.getType();
      const unsigned index = step.getNumArguments();
      if (failed(step.insertArgument(index, type, stashAttrs, v.getLoc())) ||
          failed(forward.insertArgument(index, type, stashAttrs, v.getLoc())))
        return failure();
      stashes.push_back({v, index});
      return inBackward[v] = step.getArgument(index);
    };
    SmallVector<Operation *> backwardOps;
    for (Operation *op = boundary->getNextNode(); op; op = op->getNextNode())
      backwardOps.push_back(op);
    for (Operation *op : backwardOps) {
      atBackward.setInsertionPoint(op);
      WalkResult walked = op->walk([&](Operation *inner) {
        for (OpOperand &use : inner->getOpOperands()) {
          FailureOr<Value> mine = backwardValue(use.get());
          if (failed(mine))
            return WalkResult::interrupt();
          use.set(*mine);
        }
        return WalkResult::advance();
      });
      if (walked.wasInterrupted())
        return failure();
    }

    // F: the step's forward, the output to the next stage, then the kept values.
    Value output = boundary.getOutput();
    Block &fBody = forward.getBody().front();
    while (!fBody.empty())
      fBody.back().erase();
    IRMapping map;
    for (auto [mine, theirs] : llvm::zip(body.getArguments(), fBody.getArguments()))
      map.map(mine, theirs);
    OpBuilder fb = OpBuilder::atBlockEnd(&fBody);
    for (Operation &op : body) {
      if (&op == boundary.getOperation())
        break;
      fb.clone(op, map);
    }
    PipeSendOp::create(fb, sendLoc, map.lookup(output), nextStage);
    for (auto [value, index] : stashes)
      PipeStashOp::create(fb, value.getLoc(), map.lookup(value), fBody.getArgument(index));
    // The forward's result: its objective (0) plus the losses this stage computes (its MoE routers'),
    // which the validation loss adds over the stages; training reads them from B.
    Value result = fb.clone(*boundary, map)->getResult(0);
    SmallVector<Value> terms;
    lossSumTerms(cast<func::ReturnOp>(body.getTerminator()).getOperand(0), terms);
    for (Value term : terms)
      if (Value inF = term != boundary.getResult() ? map.lookupOrNull(term) : Value())
        result = AddOp::create(fb, term.getLoc(), result.getType(), result, inF).getResult();
    func::ReturnOp::create(fb, step.getLoc(), result);

    // B: the step without its forward. Its objective's output operand is never read (a stage
    // before the last returns 0): the received gradient stands in for the forward's output.
    boundary.getOutputMutable().assign(boundary.getGrad());
    SmallVector<Operation *> erased;
    for (Operation &op : body) {
      if (&op == boundary.getOperation())
        break;
      erased.push_back(&op);
    }
    for (Operation *op : llvm::reverse(erased)) {
      if (!op->use_empty())
        return op->emitOpError("zcc-pipeline-keep: still read by the stage's backward");
      op->erase();
    }
    return success();
  }
};

} // namespace
