//===- MixedPrecision.cpp - bf16 compute from fp32 master parameters ------===//
//
// Mixed-precision training as in the ZeRO paper and DeepSpeed's bf16 mode:
//  - every fp32 parameter is stored in bf16 (the optimizer pass then gives it an
//    fp32 master copy in the optimizer state, and its gradient is bf16 too), so a
//    rank holds 2 + 2 bytes per parameter besides the 12 of the optimizer;
//  - the forward function's compute ops work on bf16 tensors. Every fp32 value a
//    bf16 op reads gets one zc.cast right after its definition (a parameter read
//    by several ops, a tied embedding say, is read once and its gradient
//    contributions meet in bf16).
// Ops that keep fp32 (the embedding's gather and scatter-add, a MoE router) read a bf16
// parameter through a cast up to fp32.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCMIXEDPRECISION
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

/// A Mixture-of-Experts router: its logits' product, the routing and the routers' losses stay
/// fp32 (Megatron-LM's --moe-router-dtype fp32): bf16 logits tie at bf16's 8 bits, and each tie
/// chooses an expert by rounding. The product reads bf16 activations and weights cast up (exact),
/// so only its sums run in fp32; the routing's weights go low where the combine reads them.
/// The layers' logits joined for one load-balancing loss over all their tokens (Hugging Face's
/// pooled form) are the routers' too.
bool feedsOnlyRouters(Value value) {
  return !value.use_empty() && llvm::all_of(value.getUsers(), [](Operation *user) {
    if (auto join = dyn_cast<ConcatOp>(user))
      return feedsOnlyRouters(join.getResult());
    return isa<MoeRouteOp, MoeAuxLossOp, MoeZLossOp>(user);
  });
}

bool isRouterOp(Operation *op) {
  if (isa<MoeRouteOp, MoeAuxLossOp, MoeZLossOp>(op))
    return true;
  if (isa<MatmulOp, ConcatOp>(op))
    return feedsOnlyRouters(op->getResult(0));
  return false;
}

/// Ops whose operands and results are left in the precision they have.
bool keepsItsPrecision(Operation *op) {
  // param_ref: the fp32 master weight. embedding: gathers and scatter-adds fp32
  // rows. cast: the user chose its types. return: hands back the fp32 loss.
  // step_gate: a compression schedule's 0-d f32 switch.
  // A MoE router: isRouterOp.
  return isa<ParamRefOp, EmbeddingOp, CastOp, ReturnOp, StepGateOp>(op) || isRouterOp(op);
}

/// A compression op's gate (operand 1 of zc.fake_quantize and zc.apply_mask) stays the f32 the
/// kernels read; the weight it gates goes low.
bool isGateOperand(OpOperand &operand) {
  return isa<FakeQuantizeOp, ApplyMaskOp>(operand.getOwner()) && operand.getOperandNumber() == 1;
}

/// Ops whose result stays fp32 even when they read bf16 (the losses' scalar).
bool hasFp32Result(Operation *op) {
  return isa<CrossEntropyOp, MseOp, StageOutputOp, MoeAuxLossOp, MoeZLossOp>(op);
}

/// An op on losses alone (a MoE router's losses added to the model's): it stays in fp32.
bool combinesLosses(Operation *op) {
  return op->getNumOperands() > 0 && llvm::all_of(op->getOperandTypes(), [](Type t) {
           auto tensor = dyn_cast<RankedTensorType>(t);
           return tensor && tensor.getRank() == 0 && tensor.getElementType().isF32();
         });
}

/// A routing's balancing bias (every read of it is a zc.moe_route's `bias`) stays fp32: train.bin
/// moves it by steps of the update rate (1e-3), which bf16's 8 bits would round away.
bool isExpertBias(ParamOp param, ArrayRef<ForwardOp> forwards) {
  bool read = false, onlyBias = true;
  for (ForwardOp forward : forwards)
    forward.walk([&](ParamRefOp ref) {
      if (ref.getNameAttr().getAttr() != param.getSymNameAttr())
        return;
      read = true;
      for (OpOperand &use : ref.getResult().getUses()) {
        auto route = dyn_cast<MoeRouteOp>(use.getOwner());
        onlyBias &= route && route.getBias() == use.get() && route.getLogits() != use.get();
      }
    });
  return read && onlyBias;
}

/// Stores `param` in `lowType`. Its reads in `forward` become a read of the low
/// copy and a cast up, so the function means what it meant; convertForward then
/// folds the casts away where a low-precision op reads them.
void lowerParamStorage(ParamOp param, ArrayRef<ForwardOp> forwards, Type lowType) {
  auto highType = param.getTensorType();
  auto lowTensor = highType.clone(lowType);
  param.setTypeAttr(TypeAttr::get(lowTensor));
  for (ForwardOp forward : forwards)
    forward.walk([&](ParamRefOp ref) {
      if (ref.getNameAttr().getAttr() != param.getSymNameAttr())
        return;
      ref.getResult().setType(lowTensor);
      OpBuilder b(ref->getBlock(), std::next(ref->getIterator()));
      auto up = CastOp::create(b, ref.getLoc(), highType, ref.getResult());
      ref.getResult().replaceAllUsesExcept(up.getResult(), up);
    });
}

void convertForward(ForwardOp forward, Type lowType) {
  Block &body = forward.getBody().front();
  // A pipeline stage's boundary tensors are what the neighbouring stage computes: bf16.
  for (BlockArgument arg : body.getArguments()) {
    auto role = forward.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "zc.input");
    if (role && (role.getValue() == "activation" || role.getValue() == "activation_grad") &&
        isF32Tensor(arg.getType()))
      arg.setType(cast<RankedTensorType>(arg.getType()).clone(lowType));
  }
  SmallVector<Type> inputs(body.getArgumentTypes());
  forward.setFunctionType(FunctionType::get(forward.getContext(), inputs, forward.getResultTypes()));
  DenseMap<Value, Value> lowered; // an fp32 value -> its bf16 cast
  auto toLow = [&](Value value) -> Value {
    if (!isF32Tensor(value.getType()))
      return value;
    // A cast up from lowType is exact: read what it cast.
    if (auto up = value.getDefiningOp<CastOp>())
      if (cast<RankedTensorType>(up.getInput().getType()).getElementType() == lowType)
        return up.getInput();
    auto [it, inserted] = lowered.try_emplace(value);
    if (!inserted)
      return it->second;
    OpBuilder b(forward.getContext());
    if (auto arg = dyn_cast<BlockArgument>(value))
      b.setInsertionPointToStart(arg.getOwner());
    else
      b.setInsertionPointAfter(value.getDefiningOp());
    auto type = cast<RankedTensorType>(value.getType());
    it->second = CastOp::create(b, value.getLoc(), type.clone(lowType), value);
    return it->second;
  };

  // Walk in program order over a snapshot: the casts this inserts are not visited.
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (keepsItsPrecision(op) || combinesLosses(op) ||
        op->getName().getDialectNamespace() != ZcDialect::getDialectNamespace())
      continue;
    for (OpOperand &operand : op->getOpOperands())
      if (!isGateOperand(operand))
        operand.set(toLow(operand.get()));
    if (hasFp32Result(op))
      continue;
    for (OpResult result : op->getResults())
      if (isF32Tensor(result.getType()))
        result.setType(cast<RankedTensorType>(result.getType()).clone(lowType));
  }
  // An op that keeps fp32 may now read what went low (an embedding table compression
  // fake-quantized in bf16): it reads it through a cast up. (A cast reads what it reads.)
  for (Operation *op : ops) {
    if (!keepsItsPrecision(op) || isa<CastOp>(op))
      continue;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type || type.getElementType() != lowType)
        continue;
      if (auto down = operand.get().getDefiningOp<CastOp>(); down && isF32Tensor(down.getInput().getType())) {
        operand.set(down.getInput());
        continue;
      }
      OpBuilder b(op);
      operand.set(CastOp::create(b, op->getLoc(), type.clone(Float32Type::get(op->getContext())), operand.get()));
    }
  }
  // The casts up that every reader folded away.
  for (Operation *op : ops)
    if (isa<CastOp>(op) && op->use_empty())
      op->erase();
}

struct ZccMixedPrecisionPass : zc::impl::ZccMixedPrecisionBase<ZccMixedPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (computeType == "f32" || computeType == "fp32")
      return;
    if (computeType != "bf16") {
      module.emitError("zcc-mixed-precision: compute-type must be bf16 or f32, got '")
          << computeType << "'";
      return signalPassFailure();
    }
    Type bf16 = BFloat16Type::get(&getContext());
    SmallVector<ForwardOp> forwards(module.getOps<ForwardOp>());
    for (ParamOp param : module.getOps<ParamOp>())
      if (param.getTensorType().getElementType().isF32() && !isExpertBias(param, forwards))
        lowerParamStorage(param, forwards, bf16);
    for (ForwardOp forward : forwards)
      convertForward(forward, bf16);
  }
};

} // namespace
