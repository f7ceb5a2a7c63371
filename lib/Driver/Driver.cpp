//===- Driver.cpp - zcc: parse, verify and compile a model ---------------===//
//
// Errors go through MLIR's SourceMgr handler, so every diagnostic reads
// `file:line:col: error: ...`; any error exits with 1 and leaves no partial
// output file behind (ToolOutputFile deletes it unless kept).
//
//===----------------------------------------------------------------------===//

#include "zcc/Driver.h"
#include "zcc/InitAll.h"

#include "passes/Pipelines.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
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
enum class EmitKind { Mlir };

struct DriverOptions {
  cl::OptionCategory category{"zcc options"};
  cl::opt<std::string> input{cl::Positional, cl::desc("<model.mlir>"), cl::Required,
                             cl::cat(category)};
  cl::opt<std::string> output{"o", cl::desc("Output file ('-' for stdout)"),
                              cl::value_desc("file"), cl::init("-"), cl::cat(category)};
  cl::opt<bool> verifyOnly{"verify-only",
                           cl::desc("Parse and verify the model, write nothing, exit 0 if valid"),
                           cl::cat(category)};
  cl::opt<EmitKind> emit{
      "emit", cl::desc("What to write to -o"), cl::init(EmitKind::Mlir),
      cl::values(clEnumValN(EmitKind::Mlir, "mlir", "the model after zcc's pipeline, as MLIR")),
      cl::cat(category)};
};

/// Parses `path`; parseSourceFile verifies every op and symbol use before
/// returning. Errors are reported through the context's diagnostic handler.
OwningOpRef<ModuleOp> parseModel(llvm::SourceMgr &sourceMgr, MLIRContext &context,
                                 StringRef path) {
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &message);
  if (!file) {
    llvm::errs() << "zcc: error: " << message << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

/// Runs zcc's pipeline (the same one `zcc-opt -zcc-pipeline` runs), honouring
/// MLIR's pass-manager flags such as --mlir-print-ir-after-all.
LogicalResult runPipeline(ModuleOp module) {
  PassManager pm(module->getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  zc::buildZccPipeline(pm, zc::ZccPipelineOptions());
  return pm.run(module);
}
} // namespace

int zcc::runZccMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  DriverOptions options;
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "zcc " << ZCC_VERSION << " (MLIR " << LLVM_VERSION_STRING << ")\n";
  });
  // --help shows zcc's own flags; MLIR's debugging flags stay available and
  // are listed by --help-hidden.
  cl::HideUnrelatedOptions(options.category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "zcc: compiles a training graph in the zc dialect into a sharded data-parallel "
      "training executable\n\n  zcc model.mlir --verify-only\n  zcc model.mlir -o out.mlir\n");

  DialectRegistry registry;
  registerZccDialects(registry);
  MLIRContext context(registry);
  // Users read the located message and the source line; the generic dump of
  // the op that MLIR appends by default is noise outside compiler debugging.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  OwningOpRef<ModuleOp> module = parseModel(sourceMgr, context, options.input);
  if (!module || failed(runPipeline(*module)))
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
