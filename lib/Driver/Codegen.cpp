//===- Codegen.cpp - zcc's back end: LLVM IR, the object file, the link ----===//
//
// What follows zcc's pipeline: the lowered module translated to LLVM IR, compiled
// in process for the host, and linked with the runtime by the C++ compiler zcc was
// built with (the recipe runtime/CMakeLists.txt generates).
//
//===----------------------------------------------------------------------===//

#include "zcc/Codegen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

#include <string>
#include <vector>

using namespace mlir;

namespace zcc {

std::unique_ptr<llvm::Module> translate(ModuleOp module, llvm::LLVMContext &llvmContext) {
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext, "zcc_model");
  if (!llvmModule)
    llvm::errs() << "zcc: error: translation to LLVM IR failed\n";
  return llvmModule;
}

/// Writes `llvmModule` as an object file for the host, in process.
bool emitObject(llvm::Module &llvmModule, llvm::raw_pwrite_stream &os) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    llvm::errs() << "zcc: error: " << error << "\n";
    return false;
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "x86-64", "", llvm::TargetOptions(), llvm::Reloc::PIC_));
  llvmModule.setDataLayout(machine->createDataLayout());
  llvmModule.setTargetTriple(triple);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    llvm::errs() << "zcc: error: this target cannot emit object files\n";
    return false;
  }
  codegen.run(llvmModule);
  return true;
}

#include "zcc/RuntimeLink.inc"

bool canLinkCudaBackend() {
#ifdef ZCC_HAVE_CUDA_BACKEND
  return true;
#else
  return false;
#endif
}

/// Links `object` with the runtime into `output` with the C++ compiler zcc was built with.
bool linkExecutable(StringRef object, StringRef output, bool cuda) {
  std::vector<std::string> args = {ZCC_LINK_DRIVER, object.str(), "-o", output.str()};
  if (cuda) {
#ifdef ZCC_HAVE_CUDA_BACKEND
    for (const char *item : {ZCC_LINK_ITEMS_CUDA})
      args.push_back(item);
#endif
  } else {
    for (const char *item : {ZCC_LINK_ITEMS})
      args.push_back(item);
  }
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(args[0], argRefs, std::nullopt, {}, 0, 0, &error);
  if (rc != 0) {
    llvm::errs() << "zcc: error: linking " << output << " failed"
                 << (error.empty() ? "" : ": " + error) << " (" << args[0] << ")\n";
    return false;
  }
  return true;
}

} // namespace zcc
