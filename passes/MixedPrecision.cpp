//===- MixedPrecision.cpp - bf16 compute from fp32 master parameters ------===//
//
// Rewrites the forward function so that its compute ops work on bf16 tensors.
// Every fp32 value a bf16 op reads gets one zc.cast right after its definition
// (so a parameter read by several ops, a tied embedding say, is cast once and
// its gradient contributions meet in bf16 before the cast back to fp32).
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

/// Ops whose operands and results are left in the precision they have.
bool keepsItsPrecision(Operation *op) {
  // param_ref: the fp32 master weight. embedding: gathers and scatter-adds fp32
  // rows. cast: the user chose its types. return: hands back the fp32 loss.
  return isa<ParamRefOp, EmbeddingOp, CastOp, ReturnOp>(op);
}

/// Ops whose result stays fp32 even when they read bf16 (the losses' scalar).
bool hasFp32Result(Operation *op) { return isa<CrossEntropyOp, MseOp>(op); }

void convertForward(ForwardOp forward, Type lowType) {
  Block &body = forward.getBody().front();
  DenseMap<Value, Value> lowered; // an fp32 value -> its bf16 cast
  auto toLow = [&](Value value) -> Value {
    if (!isF32Tensor(value.getType()))
      return value;
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
    if (keepsItsPrecision(op) || op->getName().getDialectNamespace() != ZcDialect::getDialectNamespace())
      continue;
    for (OpOperand &operand : op->getOpOperands())
      operand.set(toLow(operand.get()));
    if (hasFp32Result(op))
      continue;
    for (OpResult result : op->getResults())
      if (isF32Tensor(result.getType()))
        result.setType(cast<RankedTensorType>(result.getType()).clone(lowType));
  }
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
    for (ForwardOp forward : module.getOps<ForwardOp>())
      convertForward(forward, bf16);
  }
};

} // namespace
