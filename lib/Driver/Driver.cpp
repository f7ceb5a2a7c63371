//===- Driver.cpp - zcc: parse, verify and (later) compile a model -------===//
//
// Errors go through MLIR's SourceMgr handler, so every diagnostic reads
// `file:line:col: error: ...`; any error exits with 1 and leaves no partial
// output file behind (ToolOutputFile deletes it unless kept).
//
//===----------------------------------------------------------------------===//

#include "zcc/Driver.h"
#include "zcc/InitAll.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

#ifndef ZCC_VERSION
#define ZCC_VERSION "unknown"
#endif

namespace {
struct DriverOptions {
  cl::OptionCategory category{"zcc options"};
  cl::opt<std::string> input{cl::Positional, cl::desc("<model.mlir>"), cl::Required,
                             cl::cat(category)};
  cl::opt<std::string> output{"o", cl::desc("Output file ('-' for stdout)"),
                              cl::value_desc("file"), cl::init("-"), cl::cat(category)};
  cl::opt<bool> verifyOnly{"verify-only",
                           cl::desc("Parse and verify the model, write nothing, exit 0 if valid"),
                           cl::cat(category)};
  enum class Emit { Mlir };
  cl::opt<Emit> emit{
      "emit", cl::desc("What to write to -o"), cl::init(Emit::Mlir),
      cl::values(clEnumValN(Emit::Mlir, "mlir", "the verified model as MLIR (textual)")),
      cl::cat(category)};
};

/// Parses `path` into a module and runs op and model verification. Errors are
/// reported through the context's diagnostic handler.
OwningOpRef<ModuleOp> loadModel(llvm::SourceMgr &sourceMgr, MLIRContext &context,
                                StringRef path) {
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &message);
  if (!file) {
    llvm::errs() << "zcc: error: " << message << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  // parseSourceFile verifies every op (and symbol uses) before returning.
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module || failed(zcc::verifyModel(*module)))
    return nullptr;
  return module;
}
} // namespace

int zcc::runZccMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  DriverOptions options;
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "zcc " << ZCC_VERSION << " (MLIR " << LLVM_VERSION_STRING << ")\n";
  });
  cl::HideUnrelatedOptions(options.category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "zcc: compiles a training graph in the zc dialect into a sharded data-parallel "
      "training executable\n\n  zcc model.mlir --verify-only\n  zcc model.mlir -o out.mlir\n");

  DialectRegistry registry;
  registerZccDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  OwningOpRef<ModuleOp> module = loadModel(sourceMgr, context, options.input);
  if (!module)
    return 1;
  if (options.verifyOnly)
    return 0;

  std::string message;
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(options.output, &message);
  if (!out) {
    llvm::errs() << "zcc: error: " << message << "\n";
    return 1;
  }
  module->print(out->os());
  out->os() << "\n";
  out->keep();
  return 0;
}
