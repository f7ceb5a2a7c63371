//===- Pipelines.cpp - the one pipeline zcc runs -------------------------===//
//
// Passes join this pipeline as their issues land: autodiff, optimizer, the ZeRO
// stage, bucketing, scheduling, recomputation, memory planning, lowering.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines.h"

#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void mlir::zc::buildZccPipeline(OpPassManager &pm, const ZccPipelineOptions &options) {
  // 1. Reject modules that are not a trainable model before any work.
  pm.addPass(createZccVerifyModel());
}

void mlir::zc::registerZccPipeline() {
  PassPipelineRegistration<ZccPipelineOptions>(
      "zcc-pipeline", "The whole zcc pipeline, as the zcc driver runs it", buildZccPipeline);
}
