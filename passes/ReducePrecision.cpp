//===- ReducePrecision.cpp - gradient reductions summed in fp32 ----------===//
//
// Under --precision bf16 the gradients are bf16, and a reduction over the
// data-parallel ranks summed in bf16 rounds at every hop of the ring: N ranks'
// contributions lose up to log2(N) bits of the 8 bf16 keeps. FSDP2's
// MixedPrecisionPolicy(reduce_dtype=torch.float32) (torchtitan's default,
// `mixed_precision_reduce = "float32"`) and Megatron-LM (which reduces bf16 runs'
// gradients in fp32) sum in fp32 instead, at twice the bytes on the wire.
//
// This pass gives every gradient collective over the data-parallel ranks (an
// all-reduce or reduce-scatter on the `data` or `expert_data` axis whose input is
// bf16: ZeRO's and plain data parallelism's, never tensor parallelism's) an fp32
// input cast up from the gradient, and casts its result back to the gradient's
// type where the accumulation buffer or the optimizer reads it: one rounding of
// the fp32 sum instead of one per hop.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCREDUCEPRECISION
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

bool isDataAxis(MeshAxis axis) { return axis == MeshAxis::data || axis == MeshAxis::expert_data; }

/// A gradient reduction this pass widens: over the data-parallel ranks, on bf16.
bool widens(Operation *op) {
  Value input;
  if (auto ar = dyn_cast<AllReduceOp>(op); ar && isDataAxis(ar.getAxis()))
    input = ar.getInput();
  else if (auto rs = dyn_cast<ReduceScatterOp>(op); rs && isDataAxis(rs.getAxis()))
    input = rs.getInput();
  return input && tensorOf(input).getElementType().isBF16();
}

struct ZccReducePrecisionPass : zc::impl::ZccReducePrecisionBase<ZccReducePrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (precision != "fp32" && precision != "bf16") {
      module.emitError("zcc-reduce-precision: precision must be fp32 or bf16, got '") << precision << "'";
      return signalPassFailure();
    }
    if (precision == "bf16") // the gradients' own precision: nothing to change
      return;
    SmallVector<Operation *> reductions;
    module.walk([&](Operation *op) {
      if (widens(op))
        reductions.push_back(op);
    });
    Type f32 = Float32Type::get(&getContext());
    for (Operation *op : reductions) {
      ImplicitLocOpBuilder b(op->getLoc(), op);
      OpOperand &input = op->getOpOperand(0);
      auto inType = tensorOf(input.get());
      input.set(CastOp::create(b, inType.clone(f32), input.get()));
      Value result = op->getResult(0);
      auto outType = cast<RankedTensorType>(result.getType());
      result.setType(outType.clone(f32));
      b.setInsertionPointAfter(op);
      auto back = CastOp::create(b, outType, result);
      result.replaceAllUsesExcept(back.getResult(), back);
    }
  }
};

} // namespace
