//===- ShardBatch.cpp - each rank's micro-batch slice of the global batch --===//
//
// Divides axis 0 of the forward's arguments by ranks x micro-batches and re-derives
// every result type from its operands, one rule per op. Ops whose operands keep
// their types keep theirs; an op that would move or cut the batch axis is an error.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCSHARDBATCH
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {


/// The result type of `op` for its current operand types; `oldResult` is the
/// type before sharding. Fails with a diagnostic when the batch axis would not
/// stay the leading axis of the result.
FailureOr<Type> inferResult(Operation *op, RankedTensorType oldResult, int64_t parts,
                            function_ref<bool(Value)> isChanged) {
  auto batchMoved = [&](const Twine &why) -> FailureOr<Type> {
    return op->emitOpError("cannot be split across the batch: ") << why;
  };
  return TypeSwitch<Operation *, FailureOr<Type>>(op)
      .Case<AddOp, SubOp, MulOp, ScaleOp, ReluOp, GeluOp, SiluOp, SoftmaxOp, BiasAddOp, LayerNormOp, RmsNormOp,
            RotaryOp, CausalAttentionOp, TpCopyOp, TpReduceOp>([](Operation *o) -> FailureOr<Type> {
        return o->getOperand(0).getType();
      })
      .Case<CrossEntropyOp, MseOp, ParamRefOp>([&](Operation *) -> FailureOr<Type> {
        return Type(oldResult);
      })
      .Case([&](FakeQuantizeOp o) -> FailureOr<Type> { // activation quantization: groups of rows
        if (!o.getPerRow())
          return batchMoved("its quantization groups span the batch (use per_row)");
        return o.getInput().getType();
      })
      .Case([&](CastOp o) -> FailureOr<Type> {
        return Type(oldResult.clone(tensorOf(o.getInput()).getShape()));
      })
      .Case([&](EmbeddingOp o) -> FailureOr<Type> {
        SmallVector<int64_t> shape(tensorOf(o.getIds()).getShape());
        shape.push_back(tensorOf(o.getTable()).getDimSize(1));
        return Type(oldResult.clone(shape));
      })
      .Case([&](MatmulOp o) -> FailureOr<Type> {
        RankedTensorType lhs = tensorOf(o.getLhs()), rhs = tensorOf(o.getRhs());
        if (!isChanged(o.getLhs()))
          return batchMoved("only the rhs holds the batch");
        if (lhs.getRank() == 2 && o.getTransposeLhs())
          return batchMoved("a transposed 2-D lhs holds the batch in its columns");
        SmallVector<int64_t> shape(lhs.getShape().drop_back(2));
        int64_t r = lhs.getRank();
        shape.push_back(o.getTransposeLhs() ? lhs.getDimSize(r - 1) : lhs.getDimSize(r - 2));
        int64_t rr = rhs.getRank();
        shape.push_back(o.getTransposeRhs() ? rhs.getDimSize(rr - 2) : rhs.getDimSize(rr - 1));
        return Type(oldResult.clone(shape));
      })
      .Case([&](ReshapeOp o) -> FailureOr<Type> {
        int64_t oldIn = 1;
        for (int64_t d : oldResult.getShape())
          oldIn *= d;
        int64_t newIn = tensorOf(o.getInput()).getNumElements();
        if (newIn == oldIn)
          return Type(oldResult);
        int64_t factor = oldIn / newIn;
        if (oldResult.getRank() == 0 || oldResult.getDimSize(0) % factor != 0)
          return batchMoved("the result's leading axis does not hold the batch");
        SmallVector<int64_t> shape(oldResult.getShape());
        shape[0] /= factor;
        return Type(oldResult.clone(shape));
      })
      .Case([&](TransposeOp o) -> FailureOr<Type> {
        ArrayRef<int64_t> perm = o.getPermutation();
        if (perm.front() != 0)
          return batchMoved("the permutation moves axis 0");
        RankedTensorType in = tensorOf(o.getInput());
        SmallVector<int64_t> shape;
        for (int64_t p : perm)
          shape.push_back(in.getDimSize(p));
        return Type(oldResult.clone(shape));
      })
      .Case([&](SliceOp o) -> FailureOr<Type> {
        RankedTensorType in = tensorOf(o.getInput());
        // A changed tensor's axis 0 shrank by exactly `parts`.
        if (o.getOffsets().front() != 0 || oldResult.getDimSize(0) != in.getDimSize(0) * parts)
          return batchMoved("the slice cuts axis 0");
        SmallVector<int64_t> shape(oldResult.getShape());
        shape[0] = in.getDimSize(0);
        return Type(oldResult.clone(shape));
      })
      .Case([&](ConcatOp o) -> FailureOr<Type> {
        if (o.getAxis() == 0)
          return batchMoved("the concat joins along axis 0");
        SmallVector<int64_t> shape(tensorOf(o.getInputs().front()).getShape());
        shape[o.getAxis()] = oldResult.getDimSize(o.getAxis());
        return Type(oldResult.clone(shape));
      })
      // Mixture of experts: the routing's results follow the tokens ([S..., k]; the experts'
      // offsets [E + 1] keep theirs), the dispatched rows are the tokens' S x k.
      .Case([&](MoeRouteOp o) -> FailureOr<Type> {
        if (oldResult == o.getOffsets().getType())
          return Type(oldResult);
        SmallVector<int64_t> shape(tensorOf(o.getLogits()).getShape());
        shape.back() = oldResult.getShape().back();
        return Type(oldResult.clone(shape));
      })
      .Case([&](MoeDispatchOp o) -> FailureOr<Type> {
        auto route = o.getRows().getDefiningOp<MoeRouteOp>();
        if (!route)
          return batchMoved("its rows do not come from a zc.moe_route in sight");
        return Type(oldResult.clone({route.getDispatchedRows(), oldResult.getDimSize(1)}));
      })
      .Case([&](GroupedMatmulOp o) -> FailureOr<Type> {
        if (!isChanged(o.getInput()))
          return batchMoved("only its weight or offsets changed");
        return Type(oldResult.clone({tensorOf(o.getInput()).getDimSize(0), oldResult.getDimSize(1)}));
      })
      .Case([&](MoeCombineOp o) -> FailureOr<Type> {
        SmallVector<int64_t> shape(tensorOf(o.getWeights()).getShape());
        shape.back() = oldResult.getShape().back();
        return Type(oldResult.clone(shape));
      })
      .Case([&](MoeSharedGateOp o) -> FailureOr<Type> { return Type(tensorOf(o.getShared())); })
      .Case<MoeAuxLossOp, MoeZLossOp>([&](Operation *) -> FailureOr<Type> { return Type(oldResult); })
      .Default([](Operation *o) -> FailureOr<Type> {
        return o->emitOpError("has no batch-splitting rule");
      });
}

struct ZccShardBatchPass : zc::impl::ZccShardBatchBase<ZccShardBatchPass> {
  using Base::Base;

  void runOnOperation() override {
    if (ranks < 1 || microBatches < 1) {
      getOperation().emitError("ranks and micro-batches must be positive");
      return signalPassFailure();
    }
    int64_t parts = ranks * microBatches;
    if (parts == 1)
      return;
    for (ForwardOp forward : getOperation().getOps<ForwardOp>())
      if (failed(shard(forward, parts)))
        return signalPassFailure();
  }

  LogicalResult shard(ForwardOp forward, int64_t parts) {
    Block &body = forward.getBody().front();
    SmallVector<Type> inputs;
    for (BlockArgument arg : body.getArguments()) {
      RankedTensorType t = tensorOf(arg);
      if (t.getRank() == 0 || t.getDimSize(0) % parts != 0)
        return forward.emitOpError("the batch of argument #")
               << arg.getArgNumber() << " (" << t << ") does not split into " << static_cast<int64_t>(ranks)
               << " ranks x " << static_cast<int64_t>(microBatches) << " micro-batches";
      SmallVector<int64_t> shape(t.getShape());
      shape[0] /= parts;
      arg.setType(t.clone(shape));
      inputs.push_back(arg.getType());
    }
    forward.setFunctionType(FunctionType::get(&getContext(), inputs,
                                              forward.getFunctionType().getResults()));
    DenseSet<Value> changed(body.args_begin(), body.args_end());
    for (Operation &op : body.without_terminator()) {
      if (llvm::none_of(op.getOperands(), [&](Value v) { return changed.contains(v); }))
        continue;
      for (OpResult result : op.getResults()) {
        auto old = dyn_cast<RankedTensorType>(result.getType());
        if (!old)
          return op.emitOpError("has a non-tensor result");
        FailureOr<Type> type =
            inferResult(&op, old, parts, [&](Value v) { return changed.contains(v); });
        if (failed(type))
          return failure();
        if (*type != old) {
          result.setType(*type);
          changed.insert(result);
        }
      }
    }
    return success();
  }
};

} // namespace
