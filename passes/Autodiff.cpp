//===- Autodiff.cpp - reverse-mode differentiation of the forward ---------===//
//
// `zc.forward @f` becomes `func.func @f_step` (attribute `zc.role = "step"`): the
// forward ops, then their gradients in reverse order, then one `zc.grad_accumulate`
// per parameter. Only ops both reached from a parameter and reaching the loss are
// differentiated, so a branch that does not reach the loss costs nothing. A value
// with several uses (a tied embedding) gets the sum of its contributions. The rules
// are the table of docs/dialect.md, one function per op below.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCAUTODIFF
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {


/// The gradients of the values of one function, summed as contributions arrive.
class GradientMap {
public:
  explicit GradientMap(ImplicitLocOpBuilder &b) : b(b) {}

  void add(Value value, Value contribution) {
    auto [it, inserted] = grads.try_emplace(value, contribution);
    if (!inserted)
      it->second = AddOp::create(b, contribution.getType(), it->second, contribution);
  }
  Value lookup(Value value) const { return grads.lookup(value); }

private:
  ImplicitLocOpBuilder &b;
  DenseMap<Value, Value> grads;
};

/// Emits the gradients of `op`'s operands given `dy`, the gradient of its (first)
/// result, through `accumulate(operand, grad)`; `active(operand)` says whether an
/// operand needs one at all. Fails on an op without a rule.
class Rules {
public:
  Rules(ImplicitLocOpBuilder &b, function_ref<bool(Value)> active,
        function_ref<void(Value, Value)> accumulate)
      : b(b), active(active), accumulate(accumulate) {}

  LogicalResult apply(Operation *op, ArrayRef<Value> resultGrads) {
    Value dy = resultGrads.front();
    return TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](AddOp o) {
          give(o.getLhs(), [&] { return dy; });
          give(o.getRhs(), [&] { return dy; });
          return success();
        })
        .Case([&](SubOp o) {
          give(o.getLhs(), [&] { return dy; });
          give(o.getRhs(), [&] { return negate(dy); });
          return success();
        })
        .Case([&](MulOp o) {
          give(o.getLhs(), [&] { return Value(MulOp::create(b, dy.getType(), dy, o.getRhs())); });
          give(o.getRhs(), [&] { return Value(MulOp::create(b, dy.getType(), dy, o.getLhs())); });
          return success();
        })
        .Case([&](ScaleOp o) {
          give(o.getInput(), [&] {
            return Value(ScaleOp::create(b, dy.getType(), dy, o.getFactorAttr()));
          });
          return success();
        })
        .Case([&](ApplyMaskOp o) { // the mask again: pruned weights get no gradient
          give(o.getInput(), [&] {
            return Value(ApplyMaskOp::create(b, dy.getType(), dy, o.getGate(), o.getMaskAttr(), o.getAxisAttr()));
          });
          return success();
        })
        .Case([&](FakeQuantizeOp o) { // straight through: the quantization's gradient is the identity
          give(o.getInput(), [&] { return dy; });
          return success();
        })
        .Case([&](CastOp o) {
          give(o.getInput(), [&] { return Value(CastOp::create(b, o.getInput().getType(), dy)); });
          return success();
        })
        .Case([&](ReluOp o) {
          give(o.getInput(), [&] { return Value(ReluGradOp::create(b, dy.getType(), dy, o.getInput())); });
          return success();
        })
        .Case([&](GeluOp o) {
          give(o.getInput(),
               [&] { return Value(GeluGradOp::create(b, dy.getType(), dy, o.getInput(), o.getExactAttr())); });
          return success();
        })
        .Case([&](SiluOp o) {
          give(o.getInput(), [&] { return Value(SiluGradOp::create(b, dy.getType(), dy, o.getInput())); });
          return success();
        })
        .Case([&](RotaryOp o) { // a rotation: its gradient rotates back
          give(o.getInput(), [&] {
            auto back = RotaryOp::create(b, dy.getType(), dy, o.getNumHeadsAttr(), o.getThetaAttr(),
                                         o.getInverse() ? UnitAttr() : b.getUnitAttr(), o.getRotaryDimsAttr());
            if (Attribute ring = o->getAttr(kContextRingAttr)) // the same global positions
              back->setAttr(kContextRingAttr, ring);
            return Value(back);
          });
          return success();
        })
        .Case([&](SoftmaxOp o) {
          give(o.getInput(), [&] {
            return Value(SoftmaxGradOp::create(b, dy.getType(), dy, o.getResult()));
          });
          return success();
        })
        .Case([&](BiasAddOp o) {
          give(o.getInput(), [&] { return dy; });
          give(o.getBias(), [&] {
            int64_t rank = tensorOf(dy).getRank();
            SmallVector<int64_t> leading = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
            return Value(ReduceSumOp::create(b, o.getBias().getType(), dy, leading));
          });
          return success();
        })
        .Case([&](LayerNormOp o) {
          if (!active(o.getInput()) && !active(o.getGamma()) && !active(o.getBeta()))
            return success();
          auto g = LayerNormGradOp::create(b, o.getInput().getType(), o.getGamma().getType(),
                                           o.getBeta().getType(), dy, o.getInput(), o.getGamma(),
                                           o.getEpsilonAttr());
          give(o.getInput(), [&] { return g.getInputGrad(); });
          give(o.getGamma(), [&] { return g.getGammaGrad(); });
          give(o.getBeta(), [&] { return g.getBetaGrad(); });
          return success();
        })
        .Case([&](RmsNormOp o) {
          if (!active(o.getInput()) && !active(o.getGamma()))
            return success();
          auto g = RmsNormGradOp::create(b, o.getInput().getType(), o.getGamma().getType(), dy, o.getInput(),
                                         o.getGamma(), o.getEpsilonAttr(), o.getGainOffsetAttr());
          give(o.getInput(), [&] { return g.getInputGrad(); });
          give(o.getGamma(), [&] { return g.getGammaGrad(); });
          return success();
        })
        .Case([&](CausalAttentionOp o) {
          Type q = o.getQuery().getType(), kv = o.getKey().getType();
          auto g = CausalAttentionGradOp::create(b, q, kv, kv, dy, o.getQuery(), o.getKey(), o.getValue(),
                                                 o.getNumHeadsAttr(), o.getNumKvHeadsAttr(), o.getScaleAttr(),
                                                 o.getSoftcapAttr(), o.getWindowAttr());
          if (Attribute ring = o->getAttr(kContextRingAttr)) // the gradient travels the same ring
            g->setAttr(kContextRingAttr, ring);
          give(o.getQuery(), [&] { return g.getQueryGrad(); });
          give(o.getKey(), [&] { return g.getKeyGrad(); });
          give(o.getValue(), [&] { return g.getValueGrad(); });
          return success();
        })
        .Case([&](EmbeddingOp o) {
          give(o.getTable(), [&] {
            return Value(EmbeddingGradOp::create(b, o.getTable().getType(), dy, o.getIds(), o.getVocabShardsAttr()));
          });
          return success();
        })
        .Case([&](CrossEntropyOp o) {
          give(o.getLogits(), [&] {
            return Value(CrossEntropyGradOp::create(b, o.getLogits().getType(), dy, o.getLogits(),
                                                    o.getLabels(), o.getVocabShardsAttr(), o.getSoftcapAttr()));
          });
          return success();
        })
        .Case([&](MseOp o) {
          Value dPrediction;
          auto prediction = [&] {
            if (!dPrediction)
              dPrediction = MseGradOp::create(b, o.getPrediction().getType(), dy,
                                              o.getPrediction(), o.getTarget());
            return dPrediction;
          };
          give(o.getPrediction(), prediction);
          give(o.getTarget(), [&] { return negate(prediction()); });
          return success();
        })
        .Case([&](ReshapeOp o) {
          give(o.getInput(), [&] { return Value(ReshapeOp::create(b, o.getInput().getType(), dy)); });
          return success();
        })
        .Case([&](TransposeOp o) {
          give(o.getInput(), [&] {
            ArrayRef<int64_t> perm = o.getPermutation();
            SmallVector<int64_t> inverse(perm.size());
            for (auto [i, p] : llvm::enumerate(perm))
              inverse[p] = i;
            return Value(TransposeOp::create(b, o.getInput().getType(), dy, inverse));
          });
          return success();
        })
        .Case([&](SliceOp o) {
          give(o.getInput(), [&] {
            return Value(SliceGradOp::create(b, o.getInput().getType(), dy, o.getOffsets()));
          });
          return success();
        })
        .Case([&](ConcatOp o) {
          int64_t axis = o.getAxis(), offset = 0;
          for (Value input : o.getInputs()) {
            SmallVector<int64_t> offsets(tensorOf(dy).getRank(), 0);
            offsets[axis] = offset;
            give(input, [&] { return Value(SliceOp::create(b, input.getType(), dy, offsets)); });
            offset += tensorOf(input).getDimSize(axis);
          }
          return success();
        })
        .Case([&](TpCopyOp o) { // every rank's columns contributed part of the input's gradient
          give(o.getInput(), [&] {
            if (o.getSequence()) // ... and each keeps its tokens' part of the sum
              return Value(ReduceScatterOp::create(b, o.getInput().getType(), ReduceKind::sum, dy, o.getRanks(),
                                                   MeshAxis::tensor));
            auto sum = AllReduceOp::create(b, dy.getType(), ReduceKind::sum, dy, o.getRanks(), MeshAxis::tensor);
            if (o->hasAttr(kGradSumAttr))
              sum->setAttr(kGradSumAttr, b.getUnitAttr());
            return Value(sum);
          });
          return success();
        })
        .Case([&](TpReduceOp o) { // the sum's gradient is the same on every rank
          give(o.getInput(), [&] {
            if (o.getSequence()) // each rank holds its tokens' part of it
              return Value(AllGatherOp::create(b, o.getInput().getType(), dy, o.getRanks(), MeshAxis::tensor));
            return dy;
          });
          return success();
        })
        .Case([&](CpShardOp o) { // this rank's chunks: the gradient is zero elsewhere
          give(o.getInput(), [&] {
            return Value(CpUnshardOp::create(b, o.getInput().getType(), dy, o.getRanks(), o.getAxis()));
          });
          return success();
        })
        .Case([&](CpToHeadsOp o) { // the exchange's gradient is the exchange back
          give(o.getInput(), [&] {
            return Value(CpToTokensOp::create(b, o.getInput().getType(), dy, o.getRanks(), o.getHeads()));
          });
          return success();
        })
        .Case([&](CpToTokensOp o) {
          give(o.getInput(), [&] {
            return Value(CpToHeadsOp::create(b, o.getInput().getType(), dy, o.getRanks(), o.getHeads()));
          });
          return success();
        })
        .Case([&](SpShardOp o) { // each rank's part of a replicated value
          give(o.getInput(), [&] {
            return Value(AllGatherOp::create(b, o.getInput().getType(), dy, o.getRanks(), MeshAxis::tensor));
          });
          return success();
        })
        .Case([&](SpGatherOp o) { // every rank ran the consumer whole: the same gradient on each
          give(o.getInput(), [&] { return Value(SpShardOp::create(b, o.getInput().getType(), dy, o.getRanks())); });
          return success();
        })
        .Case([&](StageOutputOp o) { // d sum(output * grad) / d output; the seed is 1
          give(o.getOutput(), [&] { return o.getGrad(); });
          return success();
        })
        .Case([&](MatmulOp o) { return matmul(o, dy); })
        // Mixture of experts: the choice (experts, rows, offsets) is piecewise constant in the
        // logits and gets no gradient; the weights' flows through the chosen scores.
        .Case([&](MoeRouteOp o) {
          give(o.getLogits(), [&] {
            return Value(MoeRouteGradOp::create(b, o.getLogits().getType(), dy, o.getLogits(), o.getExperts(),
                                                o.getRows(), o.getTopKAttr(), o.getSigmoidAttr(),
                                                o.getNormalizeAttr(), o.getScaleAttr()));
          });
          return success();
        })
        .Case([&](MoeDispatchOp o) {
          give(o.getInput(),
               [&] { return Value(MoeDispatchGradOp::create(b, o.getInput().getType(), dy, o.getRows())); });
          return success();
        })
        .Case([&](GroupedMatmulOp o) {
          if (!active(o.getInput()) && !active(o.getWeight()))
            return success();
          auto g = GroupedMatmulGradOp::create(b, o.getInput().getType(), o.getWeight().getType(), dy, o.getInput(),
                                               o.getWeight(), o.getOffsets(), o.getTransposeRhs());
          give(o.getInput(), [&] { return g.getInputGrad(); });
          give(o.getWeight(), [&] { return g.getWeightGrad(); });
          return success();
        })
        .Case([&](MoeCombineOp o) {
          if (!active(o.getInput()) && !active(o.getWeights()))
            return success();
          auto g = MoeCombineGradOp::create(b, o.getInput().getType(), o.getWeights().getType(), dy, o.getInput(),
                                            o.getWeights(), o.getRows());
          give(o.getInput(), [&] { return g.getInputGrad(); });
          give(o.getWeights(), [&] { return g.getWeightsGrad(); });
          return success();
        })
        // Expert parallelism's exchanges are permutations of rows across the expert group:
        // each one's gradient is the other, with the same counts.
        .Case([&](EpDispatchOp o) {
          give(o.getInput(), [&] {
            return Value(EpCombineOp::create(b, o.getInput().getType(), dy, o.getCounts(), o.getRanksAttr()));
          });
          return success();
        })
        .Case([&](EpCombineOp o) {
          give(o.getInput(), [&] {
            return Value(EpDispatchOp::create(b, o.getInput().getType(), dy, o.getCounts(), o.getRanksAttr()));
          });
          return success();
        })
        .Case([&](MoeSharedGateOp o) {
          if (!active(o.getShared()) && !active(o.getGate()))
            return success();
          auto g = MoeSharedGateGradOp::create(b, o.getShared().getType(), o.getGate().getType(), dy, o.getShared(),
                                               o.getGate());
          give(o.getShared(), [&] { return g.getSharedGrad(); });
          give(o.getGate(), [&] { return g.getGateGrad(); });
          return success();
        })
        .Case([&](MoeAuxLossOp o) {
          give(o.getLogits(), [&] {
            auto g = MoeAuxLossGradOp::create(b, o.getLogits().getType(), dy, o.getLogits(), o.getExperts(),
                                              o.getCoefAttr(), o.getSigmoidAttr());
            if (Attribute pooled = o->getAttr(kContextPooledAttr)) // the same pooled statistics
              g->setAttr(kContextPooledAttr, pooled);
            return Value(g);
          });
          return success();
        })
        .Case([&](MoeZLossOp o) {
          give(o.getLogits(), [&] {
            return Value(MoeZLossGradOp::create(b, o.getLogits().getType(), dy, o.getLogits(), o.getCoefAttr()));
          });
          return success();
        })
        .Default([&](Operation *other) {
          return other->emitOpError("has no gradient rule (autodiff)");
        });
  }

private:
  /// Calls `make` and accumulates its result only when `operand` needs a gradient.
  void give(Value operand, function_ref<Value()> make) {
    if (active(operand))
      accumulate(operand, make());
  }

  Value negate(Value v) { return ScaleOp::create(b, v.getType(), v, b.getF64FloatAttr(-1.0)); }

  /// Swaps the last two axes of `v`.
  Value transposeLast2(Value v) {
    RankedTensorType t = tensorOf(v);
    int64_t r = t.getRank();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, r));
    std::swap(perm[r - 1], perm[r - 2]);
    SmallVector<int64_t> shape(t.getShape());
    std::swap(shape[r - 1], shape[r - 2]);
    return TransposeOp::create(b, t.clone(shape), v, perm);
  }

  /// Flattens the leading (batch) axes into the row axis: [..., R, C] -> [P*R, C].
  Value flattenRows(Value v) {
    RankedTensorType t = tensorOf(v);
    int64_t cols = t.getShape().back();
    return ReshapeOp::create(b, t.clone({t.getNumElements() / cols, cols}), v);
  }

  /// C = op(A) op(B). dA = dC op(B)^T and dB = op(A)^T dC, written with the
  /// transpose flags so no transpose is materialized, except where the op's
  /// layout rules (only the rhs may be a shared 2-D matrix) force one.
  LogicalResult matmul(MatmulOp o, Value dC) {
    Value A = o.getLhs(), B = o.getRhs();
    bool tA = o.getTransposeLhs(), tB = o.getTransposeRhs();
    RankedTensorType aType = tensorOf(A), bType = tensorOf(B);
    bool shared = bType.getRank() == 2 && aType.getRank() > 2;
    give(A, [&]() -> Value {
      if (!tA) // dA = dC op(B)^T
        return MatmulOp::create(b, aType, dC, B, false, !tB);
      if (!shared) // dA = op(B) dC^T
        return MatmulOp::create(b, aType, B, dC, tB, true);
      // dA^T = dC op(B)^T, then swap back (a 2-D lhs cannot meet a batched rhs).
      SmallVector<int64_t> shape(aType.getShape());
      std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
      Value dAt = MatmulOp::create(b, aType.clone(shape), dC, B, false, !tB);
      return transposeLast2(dAt);
    });
    give(B, [&]() -> Value {
      Value lhs = A, grad = dC;
      bool lhsTransposed = tA;
      if (shared) { // sum over the batch: flatten it into the rows
        if (tA) {
          lhs = transposeLast2(A);
          lhsTransposed = false;
        }
        lhs = flattenRows(lhs);
        grad = flattenRows(dC);
      }
      if (!tB) // dB = op(A)^T dC
        return MatmulOp::create(b, bType, lhs, grad, !lhsTransposed, false);
      // dB = dC^T op(A)
      return MatmulOp::create(b, bType, grad, lhs, true, lhsTransposed);
    });
    return success();
  }

  ImplicitLocOpBuilder &b;
  function_ref<bool(Value)> active;
  function_ref<void(Value, Value)> accumulate;
};

/// Once differentiated, tensor parallelism's region markers are what they run:
/// zc.tp_copy and a pipeline stage's zc.stage_input their input, zc.tp_reduce an
/// all-reduce over the tensor axis; with sequence parallelism zc.tp_copy and
/// zc.sp_gather an all-gather, zc.tp_reduce a reduce-scatter.
void lowerTensorParallelMarkers(func::FuncOp step) {
  SmallVector<Operation *> markers;
  step.walk([&](Operation *op) {
    if (isa<TpCopyOp, TpReduceOp, SpGatherOp, StageInputOp>(op))
      markers.push_back(op);
  });
  for (Operation *op : markers) {
    Value replacement = op->getOperand(0);
    OpBuilder b(op);
    Type type = op->getResult(0).getType();
    if (auto reduce = dyn_cast<TpReduceOp>(op)) {
      replacement = reduce.getSequence()
                        ? Value(ReduceScatterOp::create(b, op->getLoc(), type, ReduceKind::sum, reduce.getInput(),
                                                        reduce.getRanks(), MeshAxis::tensor))
                        : Value(AllReduceOp::create(b, op->getLoc(), type, ReduceKind::sum, reduce.getInput(),
                                                    reduce.getRanks(), MeshAxis::tensor));
    } else if (auto copy = dyn_cast<TpCopyOp>(op); copy && copy.getSequence()) {
      replacement = AllGatherOp::create(b, op->getLoc(), type, copy.getInput(), copy.getRanks(), MeshAxis::tensor);
    } else if (auto gather = dyn_cast<SpGatherOp>(op)) {
      replacement = AllGatherOp::create(b, op->getLoc(), type, gather.getInput(), gather.getRanks(),
                                        MeshAxis::tensor);
    }
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
  }
}

/// Sequence parallelism keeps a gathered region input only until its forward uses end:
/// the backward's uses (a column matmul's weight gradient) gather it again from this
/// rank's part, as Megatron-LM does, so no rank holds the whole tokens across the step.
void regatherForBackward(func::FuncOp step, Operation *seed) {
  SmallVector<AllGatherOp> gathers;
  for (auto gather : step.getBody().front().getOps<AllGatherOp>())
    if (gather.getAxis() == MeshAxis::tensor && gather->isBeforeInBlock(seed))
      gathers.push_back(gather);
  for (AllGatherOp gather : gathers) {
    SmallVector<OpOperand *> backwardUses;
    Operation *first = nullptr;
    for (OpOperand &use : gather.getResult().getUses()) {
      Operation *user = use.getOwner();
      if (user->hasTrait<OpTrait::IsTerminator>() || user->isBeforeInBlock(seed))
        continue;
      backwardUses.push_back(&use);
      if (!first || user->isBeforeInBlock(first))
        first = user;
    }
    if (backwardUses.empty())
      continue;
    OpBuilder b(first);
    auto again = AllGatherOp::create(b, gather.getLoc(), gather.getType(), gather.getInput(), gather.getRanks(),
                                     MeshAxis::tensor);
    again->setAttr(kRegatherAttr, b.getUnitAttr());
    for (OpOperand *use : backwardUses)
      use->set(again.getResult());
  }
}

/// `func.func @<name>` with `zc.role = role`: the forward's ops, nothing differentiated.
func::FuncOp cloneForward(ForwardOp forward, StringRef name, StringRef role, bool after = false) {
  OpBuilder moduleBuilder(forward);
  if (after) // the validation function follows the step (the forward's place)
    moduleBuilder.setInsertionPointAfter(forward);
  auto fn = func::FuncOp::create(moduleBuilder, forward.getLoc(), name, forward.getFunctionType());
  fn->setAttr("zc.role", moduleBuilder.getStringAttr(role));
  if (ArrayAttr argAttrs = forward.getArgAttrsAttr())
    fn.setArgAttrsAttr(argAttrs);
  IRMapping mapping;
  forward.getBody().cloneInto(&fn.getBody(), fn.getBody().end(), mapping);
  auto ret = cast<ReturnOp>(fn.getBody().front().getTerminator());
  OpBuilder b(ret);
  func::ReturnOp::create(b, ret.getLoc(), ret.getOperands());
  ret.erase();
  lowerTensorParallelMarkers(fn);
  return fn;
}

/// A forward that only runs forward (a pipeline stage's "F" of the 1F1B schedule).
void keepForwardOnly(ForwardOp forward) {
  cloneForward(forward, forward.getSymName(), "forward");
  forward.erase();
}

/// The validation loss (train.bin --eval-data): `@<name>_eval`, `zc.role = "eval"`, the forward
/// and its loss, nothing differentiated. A pipeline stage before the last has none: its
/// forward-only function sends its output on, and the last stage's eval computes the loss.
void addEvaluation(ForwardOp forward) {
  auto ret = cast<ReturnOp>(forward.getBody().front().getTerminator());
  if (stageObjective(ret.getOperand(0)))
    return;
  cloneForward(forward, (forward.getSymName() + "_eval").str(), "eval", /*after=*/true);
}

/// Builds `func.func @<name>_step` from `forward`.
LogicalResult differentiate(ForwardOp forward) {
  OpBuilder moduleBuilder(forward);
  auto step = func::FuncOp::create(moduleBuilder, forward.getLoc(),
                                   (forward.getSymName() + "_step").str(),
                                   forward.getFunctionType());
  step->setAttr("zc.role", moduleBuilder.getStringAttr("step"));
  if (ArrayAttr argAttrs = forward.getArgAttrsAttr())
    step.setArgAttrsAttr(argAttrs);
  IRMapping mapping;
  forward.getBody().cloneInto(&step.getBody(), step.getBody().end(), mapping);
  Block &body = step.getBody().front();
  auto ret = cast<ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);

  // Active ops: reached from a parameter (forward sweep) and reaching the loss
  // (backward sweep).
  DenseSet<Value> fromParams, toLoss;
  for (Operation &op : body.without_terminator()) {
    // A pipeline stage's input is differentiated too: its gradient goes to the stage before.
    bool reached = isa<ParamRefOp, StageInputOp>(op) ||
                   llvm::any_of(op.getOperands(), [&](Value v) { return fromParams.contains(v); });
    if (reached)
      fromParams.insert(op.result_begin(), op.result_end());
  }
  toLoss.insert(loss);
  for (Operation &op : llvm::reverse(body.without_terminator()))
    if (llvm::any_of(op.getResults(), [&](Value v) { return toLoss.contains(v); }))
      toLoss.insert(op.operand_begin(), op.operand_end());
  auto active = [&](Value v) { return fromParams.contains(v) && toLoss.contains(v); };

  ImplicitLocOpBuilder b(forward.getLoc(), ret);
  GradientMap grads(b);
  auto one = DenseElementsAttr::get(tensorOf(loss), b.getF32FloatAttr(1.0f).getValue());
  auto seed = arith::ConstantOp::create(b, one);
  // Marks where the backward pass starts: ZeRO-3 gathers a parameter once for its
  // forward uses and again for its backward uses.
  seed->setAttr(kBackwardSeedAttr, b.getUnitAttr());
  grads.add(loss, seed);

  // Collect first: the rules append ops to the same block.
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator())
    forwardOps.push_back(&op);
  llvm::MapVector<StringAttr, Value> paramGrads;
  for (Operation *op : llvm::reverse(forwardOps)) {
    SmallVector<Value> resultGrads;
    for (Value r : op->getResults())
      resultGrads.push_back(grads.lookup(r));
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
      continue; // does not reach the loss, or no parameter behind it
    b.setLoc(op->getLoc());
    if (auto input = dyn_cast<StageInputOp>(op)) {
      PipeSendOp::create(b, resultGrads[0], input.getFromAttr());
      continue;
    }
    if (auto ref = dyn_cast<ParamRefOp>(op)) {
      auto [it, inserted] = paramGrads.try_emplace(ref.getNameAttr().getAttr(), resultGrads[0]);
      if (!inserted) // the same parameter read twice
        it->second = AddOp::create(b, it->second.getType(), it->second, resultGrads[0]);
      continue;
    }
    // One differentiable result: the first; the rest (zc.moe_route's choice) are integers.
    if (op->getNumResults() == 0 || llvm::any_of(op->getResults().drop_front(), [](Value r) {
          return isa<FloatType>(tensorOf(r).getElementType());
        }))
      return op->emitOpError("has no gradient rule (autodiff)");
    auto accumulate = [&](Value v, Value g) { grads.add(v, g); };
    Rules rules(b, active, accumulate);
    if (failed(rules.apply(op, resultGrads)))
      return failure();
  }
  b.setLoc(forward.getLoc());
  for (auto &[name, grad] : paramGrads)
    GradAccumulateOp::create(b, FlatSymbolRefAttr::get(name), grad);

  func::ReturnOp::create(b, ret.getOperands());
  ret.erase();
  forward.erase();

  // Forward ops that do not reach the loss are left without uses: drop them. The seed marks
  // where the backward starts until the re-gathers are placed (a pipeline stage's objective
  // does not read it).
  for (Operation *op : llvm::reverse(forwardOps))
    if (op != seed && isOpTriviallyDead(op))
      op->erase();
  lowerTensorParallelMarkers(step);
  regatherForBackward(step, seed);
  if (seed->use_empty())
    seed->erase();
  return success();
}

struct ZccAutodiffPass : zc::impl::ZccAutodiffBase<ZccAutodiffPass> {
  void runOnOperation() override {
    SmallVector<ForwardOp> forwards(getOperation().getOps<ForwardOp>());
    for (ForwardOp forward : forwards) {
      if (forward->hasAttr("zc.forward_only")) {
        keepForwardOnly(forward);
        continue;
      }
      addEvaluation(forward);
      if (failed(differentiate(forward)))
        return signalPassFailure();
    }
  }
};

} // namespace
