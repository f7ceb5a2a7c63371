//===- StageLink.cpp - one executable of every pipeline stage -------------===//
//
// With --pp P, zcc compiles each pipeline stage as a model of its own (its
// functions and description suffixed _s<k>) and links them into one module with
// a table train.bin reads to run its rank's stage:
//
//   struct { float (*step)(void *, void *const *); float (*forward)(void *, void *const *);
//            void (*updateReduce)(void *, double, int64_t); void (*updateApply)(void *, double, int64_t);
//            const char *json; float (*eval)(void *, void *const *);
//            float (*weight)(void *, void *const *); } zcc_stages[P];
//   const int64_t zcc_stage_count = P;
//
// (`forward` is null for the last stage: its step runs its forward; `eval`, the validation
// loss, is the last stage's only; `weight`, the weight gradients, is null but under a
// zero-bubble schedule; the update's two halves, split at the gradient norm, are
// zcc_update_reduce and zcc_update_apply: passes/LowerToLLVM.cpp.)
//
//===----------------------------------------------------------------------===//

#include "zcc/StageLink.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/raw_ostream.h"

std::unique_ptr<llvm::Module> zcc::linkStages(std::vector<std::unique_ptr<llvm::Module>> stages,
                                              llvm::LLVMContext &context) {
  if (stages.empty())
    return nullptr;
  const size_t count = stages.size();
  std::unique_ptr<llvm::Module> linked = std::move(stages.front());
  llvm::Linker linker(*linked);
  for (size_t k = 1; k < count; ++k)
    if (linker.linkInModule(std::move(stages[k]))) {
      llvm::errs() << "zcc: error: linking pipeline stage " << k << " failed\n";
      return nullptr;
    }
  auto *ptr = llvm::PointerType::get(context, 0);
  auto *entry = llvm::StructType::get(context, {ptr, ptr, ptr, ptr, ptr, ptr, ptr});
  std::vector<llvm::Constant *> rows;
  for (size_t k = 0; k < count; ++k) {
    const std::string suffix = "_s" + std::to_string(k);
    auto symbol = [&](const std::string &name, bool required) -> llvm::Constant * {
      if (llvm::Function *fn = linked->getFunction(name + suffix))
        return fn;
      if (llvm::GlobalVariable *global = linked->getNamedGlobal(name + suffix))
        return global;
      if (required)
        llvm::errs() << "zcc: error: pipeline stage " << k << " has no " << name << suffix << "\n";
      return required ? nullptr : llvm::ConstantPointerNull::get(ptr);
    };
    llvm::Constant *step = symbol("zcc_step", true), *forward = symbol("zcc_forward", false),
                   *reduce = symbol("zcc_update_reduce", true), *apply = symbol("zcc_update_apply", true),
                   *json = symbol("zcc_model_json", true), *eval = symbol("zcc_eval", false),
                   *weight = symbol("zcc_weight", false);
    if (!step || !reduce || !apply || !json)
      return nullptr;
    rows.push_back(llvm::ConstantStruct::get(entry, {step, forward, reduce, apply, json, eval, weight}));
  }
  auto *tableType = llvm::ArrayType::get(entry, count);
  new llvm::GlobalVariable(*linked, tableType, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(tableType, rows), "zcc_stages");
  auto *i64 = llvm::Type::getInt64Ty(context);
  new llvm::GlobalVariable(*linked, i64, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantInt::get(i64, count), "zcc_stage_count");
  return linked;
}
