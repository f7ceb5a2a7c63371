//===- PipelineSplitBackward.cpp - the backward as B and W ----------------===//
//
// The zero-bubble schedules (Qi et al., "Zero Bubble Pipeline Parallelism",
// ICLR 2024) split a stage's backward of a micro-batch in two: B, the gradient
// of the stage's input, which the previous stage waits for, and W, the weight
// gradients, which nothing waits for and the schedule defers into time the
// stage would otherwise spend idle. A stage's step (its backward after
// zcc-pipeline-keep; the last stage's forward and backward) becomes:
//
//   step (B):  what zc.pipe_send (the input's gradient) and the result (the
//              loss, or a stage's objective) need; then zc.pipe_stash of every
//              value W reads from it
//   weight (W): everything else, in the step's order: the weights' gradient
//              products and reductions, their accumulation, their collectives
//
// The split is a backward slice from the send and the return, so it holds for
// every op the backward may hold (fused products, tensor-parallel reductions,
// the vocabulary-parallel loss): an op lands in W exactly when neither the
// send nor the loss depends on it. W's side effects keep their order among
// themselves, and nothing in B reads what W writes (the gradient
// accumulators, which only the update reads).
//
// W takes the same arguments as the stage's other functions, so it reads F's
// stash (the forward's activations) from the micro-batch's slot directly; what
// it reads from B (the output gradients of the products) gets a stash
// argument of its own in every function of the stage. The slot stays the
// micro-batch's until its W: the schedule (runtime/main/PipelineSchedule.h)
// counts a micro-batch in flight from its F to its W.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "runtime/main/PipelineSchedule.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCPIPELINESPLITBACKWARD
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

struct ZccPipelineSplitBackwardPass : zc::impl::ZccPipelineSplitBackwardBase<ZccPipelineSplitBackwardPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto plan = module->getAttrOfType<DictionaryAttr>("zc.pipeline");
    func::FuncOp step = functionWithRole(module, "step");
    if (!plan || !step)
      return;
    if (!zcc::pipeline::splitsBackward(pipelineSchedule(module)))
      return;
    if (functionWithRole(module, "weight")) {
      module.emitError("zcc-pipeline-split-backward: the stage's backward is split already");
      return signalPassFailure();
    }
    if (failed(split(module, step)))
      signalPassFailure();
  }

  LogicalResult split(ModuleOp module, func::FuncOp step) {
    Block &body = step.getBody().front();
    // B: the backward slice of the send to the previous stage and of the result.
    DenseSet<Operation *> inB;
    SmallVector<Operation *> work;
    auto need = [&](Operation *op) {
      if (op && inB.insert(op).second)
        work.push_back(op);
    };
    for (Operation &op : body)
      if (isa<PipeSendOp, func::ReturnOp>(op))
        need(&op);
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      op->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          if (Operation *def = operand.getDefiningOp())
            need(body.findAncestorOpInBlock(*def));
      });
    }

    // W: a function like the step (same arguments), the ops B does not need, in order.
    OpBuilder mb(module.getContext());
    mb.setInsertionPointAfter(step);
    IRMapping whole; // the step cloned for its signature and attributes; its body is rebuilt below
    auto weight = cast<func::FuncOp>(mb.clone(*step.getOperation(), whole));
    weight.setSymName((step.getSymName() + "_weight").str());
    weight->setAttr("zc.role", mb.getStringAttr("weight"));
    Block &wBody = weight.getBody().front();
    while (!wBody.empty())
      wBody.back().erase();
    SmallVector<Type> results{RankedTensorType::get({}, mb.getF32Type())};
    weight.setFunctionType(mb.getFunctionType(weight.getArgumentTypes(), results));

    SmallVector<func::FuncOp> stageFunctions;
    for (func::FuncOp fn : module.getOps<func::FuncOp>())
      if (auto role = fn->getAttrOfType<StringAttr>("zc.role");
          role && (role.getValue() == "forward" || role.getValue() == "step" || role.getValue() == "weight"))
        stageFunctions.push_back(fn);
    for (func::FuncOp fn : stageFunctions)
      if (fn.getArgumentTypes() != step.getArgumentTypes())
        return fn.emitOpError("zcc-pipeline-split-backward: the stage's functions take different arguments");

    Builder b(module.getContext());
    DictionaryAttr stashAttrs = b.getDictionaryAttr(b.getNamedAttr("zc.input", b.getStringAttr("stash")));
    OpBuilder wb = OpBuilder::atBlockEnd(&wBody);
    IRMapping map;
    for (auto [mine, theirs] : llvm::zip(body.getArguments(), wBody.getArguments()))
      map.map(mine, theirs);
    SmallVector<std::pair<Value, unsigned>> stashes; // B's value, its argument
    // W's copy of a value of B: taken again, or kept in a stash argument.
    std::function<FailureOr<Value>(Value)> inWeight = [&](Value v) -> FailureOr<Value> {
      if (Value known = map.lookupOrNull(v))
        return known;
      Operation *def = v.getDefiningOp();
      if (!def)
        return emitError(v.getLoc(), "zcc-pipeline-split-backward: W reads an argument it does not have");
      if (fromStageInputs(v)) {
        for (Value operand : def->getOperands())
          if (failed(inWeight(operand)))
            return failure();
        wb.clone(*def, map);
        return map.lookup(v);
      }
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || !isa<FloatType>(type.getElementType()))
        return def->emitOpError("zcc-pipeline-split-backward: the weight gradients read this non-float value of "
                                "the input's gradient, which a stage cannot keep");
      const unsigned index = step.getNumArguments();
      for (func::FuncOp fn : stageFunctions)
        if (failed(fn.insertArgument(index, type, stashAttrs, v.getLoc())))
          return failure();
      stashes.push_back({v, index});
      map.map(v, wBody.getArgument(index));
      return map.lookup(v);
    };
    SmallVector<Operation *> moved;
    for (Operation &op : body.without_terminator()) {
      if (inB.contains(&op))
        continue;
      // Its operands from B (or from ops before it in W, already mapped), also inside regions.
      WalkResult walked = op.walk([&](Operation *inner) {
        for (Value operand : inner->getOperands()) {
          Operation *def = operand.getDefiningOp();
          bool outside = !def || !op.isAncestor(def);
          if (outside && !(isa<BlockArgument>(operand) && op.isAncestor(operand.getParentBlock()->getParentOp())) &&
              failed(inWeight(operand)))
            return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (walked.wasInterrupted())
        return failure();
      wb.clone(op, map);
      moved.push_back(&op);
    }
    // W's result is never read (train.bin takes the loss from B): 0.
    Value zero = arith::ConstantOp::create(wb, step.getLoc(),
                                           DenseElementsAttr::get(cast<RankedTensorType>(results[0]), 0.0f));
    func::ReturnOp::create(wb, step.getLoc(), zero);

    // B keeps its part and stashes what W reads, before it returns.
    OpBuilder sb(body.getTerminator());
    for (auto [value, index] : stashes)
      PipeStashOp::create(sb, value.getLoc(), value, body.getArgument(index));
    for (Operation *op : llvm::reverse(moved)) {
      if (!op->use_empty())
        return op->emitOpError("zcc-pipeline-split-backward: read by the input's gradient, yet not in it");
      op->erase();
    }
    return success();
  }
};

} // namespace
