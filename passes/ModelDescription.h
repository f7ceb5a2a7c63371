//===- ModelDescription.h - what the executable learns about the model ---===//
//
// The JSON zcc-lower-to-llvm embeds as `zcc_model_json` and train.bin reads
// (runtime/main/ModelInfo.cpp): parameters with initializers, arena offsets and
// ZeRO layout, optimizer states and their roles, inputs and their roles, the
// arena's size, the optimizer's defaults.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_PASSES_MODELDESCRIPTION_H
#define ZCC_PASSES_MODELDESCRIPTION_H

#include "passes/MemoryPlan.h"
#include "llvm/Support/JSON.h"

namespace mlir::zc {

/// Fails (with an error on `step`) when an input's role cannot be told.
FailureOr<llvm::json::Object> describeModel(ModuleOp module, func::FuncOp step, func::FuncOp update,
                                            const MemoryPlan &plan, int64_t ranks, int64_t microBatches,
                                            int64_t tensorParallel, int64_t pipelineParallel);

/// What the data loader feeds each argument of `fn` (types `types`): the roles `given`
/// (the `zc.input` argument attributes) where every argument has one, else the common
/// signatures (tokens and next-token targets; features and class labels; features and
/// regression targets). Fails with an error on `fn`.
FailureOr<SmallVector<std::string>> inferInputRoles(Operation *fn, ArrayRef<Type> types,
                                                    ArrayRef<StringAttr> given);

} // namespace mlir::zc

#endif // ZCC_PASSES_MODELDESCRIPTION_H
