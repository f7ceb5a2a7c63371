//===- StageLink.h - one executable of every pipeline stage ---------------===//

#ifndef ZCC_STAGELINK_H
#define ZCC_STAGELINK_H

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <memory>
#include <vector>

namespace zcc {

/// Links the stages' modules (stage k's symbols end in _s<k>) into one, with the table
/// `zcc_stages` and `zcc_stage_count` train.bin dispatches on. Null (and an error printed)
/// when linking fails or a stage lacks a function.
std::unique_ptr<llvm::Module> linkStages(std::vector<std::unique_ptr<llvm::Module>> stages,
                                         llvm::LLVMContext &context);

} // namespace zcc

#endif // ZCC_STAGELINK_H
