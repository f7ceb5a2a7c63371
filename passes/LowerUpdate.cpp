//===- LowerUpdate.cpp - the training state's ops as their runtime calls ---===//
//
// Gradient accumulation and zeroing, the optimizer's update and the gradient norm, and the
// offload schedule's swaps and activation moves, each as its call of zrt_abi.def: `p` holds the
// op's tensor operands then its results as arena pointers (Lowering::lowerOp); the parameters'
// gradients, states and swap slots are where the memory plan put them.
//
//===----------------------------------------------------------------------===//

#include "passes/Lowering.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::zc;
using namespace mlir::zc::lowering;

bool mlir::zc::lowering::isUpdateOp(Operation *op) {
  return isa<GradAccumulateOp, GradZeroOp, AdamWOp, SgdOp, GradNormOp, SwapInOp, SwapOutOp, OffloadActivationOp,
             ReloadActivationOp, SwapWaitOp>(op);
}

LogicalResult Lowering::lowerUpdate(Operation *op, ImplicitLocOpBuilder &b, ArrayRef<Value> p, Value dt) {
  auto I64 = [&](int64_t v) { return constI64(b, v); };
  auto I32 = [&](int64_t v) { return constI32(b, v); };
  auto persistent = [&](const llvm::MapVector<StringAttr, int64_t> &table, FlatSymbolRefAttr name) {
    return arenaAt(b, table.lookup(name.getAttr()));
  };
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](GradAccumulateOp o) {
        Value grad = persistent(plan.gradOffset, o.getParamAttr());
        if (!o.getOverwrite()) {
          call(b, "zrt_add", {dt, grad, p[0], grad, I64(numel(o.getGrad()))});
          return success();
        }
        // Overwrite: nothing to do where the plan had the producer write into the buffer.
        auto at = plan.valueOffset.find(o.getGrad());
        if (at == plan.valueOffset.end() || at->second != plan.gradOffset.lookup(o.getParamAttr().getAttr()))
          call(b, "zrt_copy", {dt, p[0], grad, I64(numel(o.getGrad()))});
        return success();
      })
      .Case([&](GradZeroOp o) {
        auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(o, o.getParamAttr());
        call(b, "zrt_fill_zero", {constI32(b, dtypeCode(param.getTensorType().getElementType())),
                                  persistent(plan.gradOffset, o.getParamAttr()),
                                  I64(ParamSharding::of(param).gradStorage())});
        return success();
      })
      // The optimizer: over its chunk (zcc-offload) or the whole parameter, its states where
      // their tier or swap slot holds them.
      .Case([&](AdamWOp o) {
        auto [master, lowCopy] = updateTargets(b, o.getParamAttr(), o.getMasterAttr(), o);
        auto [first, count] = updateRange(o);
        Value scale = o.getGradScale() ? p[1] : Value(LLVM::ZeroOp::create(b, ptrType));
        call(b, "zrt_adamw",
             {master, dt, advance(b, p[0], first * elementBytes(o.getGrad())),
              statePointer(b, o.getExpAvgAttr(), o), statePointer(b, o.getExpAvgSqAttr(), o), lowCopy,
              I64(count), inputsScalar(o.getLr()), constF64(b, o.getBeta1().convertToDouble()),
              constF64(b, o.getBeta2().convertToDouble()), constF64(b, o.getEps().convertToDouble()),
              constF64(b, o.getWeightDecay().convertToDouble()), inputsScalar(o.getStep()), scale});
        return success();
      })
      .Case([&](SgdOp o) {
        auto [master, lowCopy] = updateTargets(b, o.getParamAttr(), o.getMasterAttr(), o);
        auto [first, count] = updateRange(o);
        Value scale = o.getGradScale() ? p[1] : Value(LLVM::ZeroOp::create(b, ptrType));
        call(b, "zrt_sgd_momentum",
             {master, dt, advance(b, p[0], first * elementBytes(o.getGrad())),
              statePointer(b, o.getMomentumBufferAttr(), o), lowCopy, I64(count), inputsScalar(o.getLr()),
              constF64(b, o.getMomentum().convertToDouble()),
              constF64(b, o.getWeightDecay().convertToDouble()), scale});
        return success();
      })
      .Case([&](GradNormOp o) {
        SmallVector<int64_t> numels, dtypes;
        SmallVector<double> weights;
        for (auto [grad, weight] : llvm::zip(o.getGrads(), o.getWeights())) {
          numels.push_back(numel(grad));
          dtypes.push_back(dtypeCode(tensorOf(grad).getElementType()));
          weights.push_back(cast<FloatAttr>(weight).getValueAsDouble());
        }
        const int64_t k = numels.size();
        const double maxNorm = o.getMaxNorm().convertToDouble();
        if (updatePart == UpdatePart::Apply) {
          call(b, "zrt_grad_norm_finish", {constF64(b, maxNorm), p[k], p[k + 1]});
          return success();
        }
        Value weightArray = constantGlobal(
            b, DenseElementsAttr::get(RankedTensorType::get({k}, b.getF64Type()), ArrayRef<double>(weights)));
        if (updatePart == UpdatePart::Reduce) {
          call(b, "zrt_grad_norm_add", {I64(k), pointerArray(b, ArrayRef(p).take_front(k)), i64Array(b, numels),
                                        i64Array(b, dtypes), weightArray});
          return success();
        }
        call(b, "zrt_grad_norm", {I64(k), pointerArray(b, ArrayRef(p).take_front(k)), i64Array(b, numels),
                                  i64Array(b, dtypes), weightArray, constF64(b, maxNorm), p[k], p[k + 1]});
        return success();
      })
      // The swap schedule (zcc-offload): a chunk of a state between its NVMe store offset and
      // its slot, in whole store blocks.
      .Case<SwapInOp, SwapOutOp>([&](Operation *o) {
        auto name = o->getAttrOfType<FlatSymbolRefAttr>("state");
        const int64_t first = o->getAttrOfType<IntegerAttr>("first").getInt();
        const int64_t count = o->getAttrOfType<IntegerAttr>("count").getInt();
        const int64_t slot = o->getAttrOfType<IntegerAttr>("slot").getInt();
        const int64_t at = o->getAttrOfType<IntegerAttr>("at").getInt();
        std::optional<Offload::Swapped> tensor = Offload::lookup(o, name);
        const int64_t base = isa<StateOp>(SymbolTable::lookupNearestSymbolFrom(o, name))
                                 ? plan.stateOffset.lookup(name.getAttr())
                                 : plan.paramOffset.lookup(name.getAttr());
        call(b, isa<SwapInOp>(o) ? "zrt_swap_read" : "zrt_swap_write",
             {I32(slot), arenaAt(b, plan.slotOffset(slot) + at), I64(base + first * tensor->elementBytes),
              I64(Offload::swapBytes(count, tensor->elementBytes))});
        return success();
      })
      // Activations between the passes (zcc-offload-activations): to and from their place in
      // the host tier.
      .Case([&](OffloadActivationOp o) {
        call(b, "zrt_activation_out", {p[0], I64(plan.activationOffset.lookup(o.getSlot())),
                                       I64(tensorBytes(tensorOf(o.getValue())))});
        return success();
      })
      .Case([&](ReloadActivationOp o) {
        call(b, "zrt_activation_in", {p[0], I64(plan.activationOffset.lookup(o.getSlot())),
                                      I64(tensorBytes(tensorOf(o.getResult())))});
        return success();
      })
      .Case([&](SwapWaitOp o) {
        call(b, "zrt_swap_wait", {I32(o.getSlot())});
        return success();
      })
      .Default([](Operation *o) { return o->emitOpError("has no lowering to the runtime"); });
}
