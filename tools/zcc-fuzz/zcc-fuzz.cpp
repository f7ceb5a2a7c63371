// libFuzzer target: any bytes through what zcc does with a model file (parse, verify,
// the whole pipeline to the LLVM dialect) at two configurations (one rank; two ranks at
// ZeRO-3 with bf16, recompute and buckets). Input errors must come back as diagnostics;
// a crash, an assertion or a sanitizer report is a bug.
//
//   build/bin/zcc-fuzz test/Fuzz/corpus -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <string>

#include "passes/Passes.h"
#include "passes/Pipelines.h"
#include "zcc/InitAll.h"
#include "zcc/NestingLimit.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace {
MLIRContext &context() {
  static MLIRContext *ctx = [] {
    DialectRegistry registry;
    zcc::registerZccDialects(registry);
    zcc::registerZccPasses();
    auto *c = new MLIRContext(registry);
    c->loadAllAvailableDialects();
    c->printOpOnDiagnostic(false);
    return c;
  }();
  return *ctx;
}

void runPipeline(ModuleOp module, const char *options) {
  zc::ZccPipelineOptions pipeline;
  if (failed(pipeline.parseFromString(options)) || !zc::checkPipelineOptions(pipeline).empty())
    return;
  PassManager pm(module.getContext());
  zc::buildZccPipeline(pm, pipeline);
  (void)pm.run(module);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &ctx = context();
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  std::string text(reinterpret_cast<const char *>(data), size);
  if (zcc::findExcessiveNesting(text)) // refused before parsing, as zcc does
    return 0;
  for (const char *options : {"world-size=1", "world-size=2 zero-stage=3 precision=bf16 recompute=selective"}) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, ParserConfig(&ctx));
    if (!module)
      return 0;
    runPipeline(*module, options);
  }
  return 0;
}
