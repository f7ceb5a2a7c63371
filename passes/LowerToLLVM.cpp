//===- LowerToLLVM.cpp - zc -> runtime calls in the LLVM dialect ----------===//
//
// After the memory plan every tensor is an arena offset, so each zc op becomes a
// call into the runtime's C ABI on pointers `arena + offset`. The ABI is read from
// runtime/include/zrt/zrt_abi.def, the same list the runtime compiles against, so a
// call whose arity or argument types drift from the runtime fails here.
//
// Emitted entry points (what the executable's main calls):
//   float zcc_step(void *arena, void *const *inputs)   forward + backward of one micro-batch
//   float zcc_forward(void *arena, void *const *inputs) a pipeline stage's forward only (if any)
//   void  zcc_update(void *arena, double lr, int64_t step)   communication + optimizer
//   const char zcc_model_json[]                        the model's description
// A pipeline stage's update comes in two halves, split at its gradient norm, instead of
// zcc_update: zcc_update_reduce (the gradients' reductions, the rank's part of the norm) and
// zcc_update_apply (the norm, the optimizers, ZeRO's gathers), the same signature: train.bin sums
// the norm over the mesh between them once, whatever number of stage programs the rank runs.
//
//===----------------------------------------------------------------------===//

#include "passes/Lowering.h"
#include "passes/ModelDescription.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCLOWERTOLLVM
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;
using namespace mlir::zc::lowering;

const std::vector<AbiFunction> &mlir::zc::lowering::runtimeAbi() {
  static const std::vector<AbiFunction> table = {
#define ZRT_VOID Abi::Void
#define ZRT_RI32 Abi::I32
#define ZRT_RI64 Abi::I64
#define ZRT_RF64 Abi::F64
#define ZRT_RPTR Abi::Ptr
#define ZRT_I32(name) Abi::I32
#define ZRT_I64(name) Abi::I64
#define ZRT_F64(name) Abi::F64
#define ZRT_PTR(name) Abi::Ptr
#define ZRT_CPTR(name) Abi::Ptr
#define ZRT_UNPACK(...) __VA_ARGS__
#define ZRT_FN(ret, name, params) {#name, ret, {ZRT_UNPACK params}},
#include "zrt/zrt_abi.def"
  };
  return table;
}

LogicalResult Lowering::lowerFunction(func::FuncOp fn, bool isStep, StringRef name, UpdatePart part) {
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  auto type = isStep ? LLVM::LLVMFunctionType::get(f32, {ptrType, ptrType})
                     : LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptrType, f64, i64});
  auto llvmFn = LLVM::LLVMFuncOp::create(mb, fn.getLoc(), name, type);
  Block *entry = llvmFn.addEntryBlock(mb);
  ImplicitLocOpBuilder b(fn.getLoc(), entry, entry->end());
  arena = entry->getArgument(0);
  inputs.clear();
  scalars.clear();
  handles.clear();
  Block &body = fn.getBody().front();
  if (isStep) {
    for (BlockArgument arg : body.getArguments()) {
      Value slot = LLVM::GEPOp::create(b, ptrType, ptrType, entry->getArgument(1),
                                       ArrayRef<LLVM::GEPArg>{(int64_t)arg.getArgNumber()});
      inputs[arg] = LLVM::LoadOp::create(b, ptrType, slot);
    }
  } else {
    scalars[body.getArgument(0)] = entry->getArgument(1);
    scalars[body.getArgument(1)] = entry->getArgument(2);
  }
  // A half of the update: the ops before the norm and the norm's add, or the norm's finish and
  // the ops after it (an update without a norm is all after it).
  updatePart = part;
  Operation *norm = nullptr;
  for (Operation &op : body)
    if (isa<GradNormOp>(op) && !norm)
      norm = &op;
  bool beforeNorm = norm != nullptr;
  for (Operation &op : body) {
    const bool lower = part == UpdatePart::Whole || isa<func::ReturnOp>(op) || &op == norm ||
                       (part == UpdatePart::Reduce) == beforeNorm;
    if (&op == norm)
      beforeNorm = false;
    if (!lower)
      continue;
    b.setLoc(op.getLoc());
    if (failed(lowerOp(&op, b)))
      return failure();
  }
  updatePart = UpdatePart::Whole;
  return success();
}

void Lowering::emitModelJson(StringRef symbol, const llvm::json::Value &json) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json;
  text.push_back('\0');
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  auto type = LLVM::LLVMArrayType::get(i8, text.size());
  LLVM::GlobalOp::create(mb, module.getLoc(), type, /*isConstant=*/true, LLVM::Linkage::External, symbol,
                         StringAttr::get(ctx, text));
}

namespace {
struct ZccLowerToLLVMPass : zc::impl::ZccLowerToLLVMBase<ZccLowerToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step = functionWithRole(module, "step"), update = functionWithRole(module, "update");
    if (!step || !update) {
      module.emitError("nothing to lower: run zcc-autodiff and zcc-optimizer first");
      return signalPassFailure();
    }
    func::FuncOp forward = functionWithRole(module, "forward"), eval = functionWithRole(module, "eval"),
                 weight = functionWithRole(module, "weight");
    FailureOr<MemoryPlan> plan = planMemory(module, plannedFunctions(module));
    if (failed(plan))
      return signalPassFailure();

    // The description main() reads, before the zc symbols go away.
    FailureOr<llvm::json::Object> model = describeModel(module, step, update, *plan, ranks, microBatches,
                                                               tensorParallel, pipelineParallel);
    if (failed(model))
      return signalPassFailure();

    Lowering lowering(module, *plan);
    std::string suffix = symbolSuffix;
    using UpdatePart = Lowering::UpdatePart;
    const bool staged = pipelineParallel > 1;
    if (failed(lowering.lowerFunction(step, /*isStep=*/true, "zcc_step" + suffix)) ||
        (!staged && failed(lowering.lowerFunction(update, /*isStep=*/false, "zcc_update" + suffix))) ||
        (staged && failed(lowering.lowerFunction(update, /*isStep=*/false, "zcc_update_reduce" + suffix,
                                                 UpdatePart::Reduce))) ||
        (staged && failed(lowering.lowerFunction(update, /*isStep=*/false, "zcc_update_apply" + suffix,
                                                 UpdatePart::Apply))) ||
        (forward && failed(lowering.lowerFunction(forward, /*isStep=*/true, "zcc_forward" + suffix))) ||
        (eval && failed(lowering.lowerFunction(eval, /*isStep=*/true, "zcc_eval" + suffix))) ||
        (weight && failed(lowering.lowerFunction(weight, /*isStep=*/true, "zcc_weight" + suffix))))
      return signalPassFailure();
    (*model)["matmuls"] = lowering.matmulsJson();
    lowering.emitModelJson("zcc_model_json" + suffix, llvm::json::Value(std::move(*model)));

    // Everything is now LLVM: drop the zc symbols and the lowered functions.
    SmallVector<Operation *> erase;
    for (Operation &op : module.getBody()->getOperations())
      if (isa<func::FuncOp, ParamOp, StateOp>(op))
        erase.push_back(&op);
    for (Operation *op : erase)
      op->erase();
    module->removeAttr("zc.optimizer");
    module->removeAttr("zc.recompute");
  }
};

} // namespace
