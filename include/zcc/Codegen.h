//===- Codegen.h - zcc's back end: LLVM IR, the object file, the link ------===//
//
// Errors are printed as `zcc: error: ...`; each returns null or false on failure.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_CODEGEN_H
#define ZCC_CODEGEN_H

#include <memory>

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

namespace zcc {

/// The lowered module (every op in the LLVM dialect) as LLVM IR.
std::unique_ptr<llvm::Module> translate(mlir::ModuleOp module, llvm::LLVMContext &llvmContext);

/// Writes `llvmModule` as an object file for the host, in process.
bool emitObject(llvm::Module &llvmModule, llvm::raw_pwrite_stream &os);

/// Whether this zcc was built with the CUDA backend's runtime to link against.
bool canLinkCudaBackend();

/// Links `object` with the runtime (the CUDA backend's with `cuda`) into `output`.
bool linkExecutable(llvm::StringRef object, llvm::StringRef output, bool cuda);

} // namespace zcc

#endif // ZCC_CODEGEN_H
