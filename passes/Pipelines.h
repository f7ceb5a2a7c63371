//===- Pipelines.h - the one pipeline zcc runs ---------------------------===//

#ifndef ZCC_PASSES_PIPELINES_H
#define ZCC_PASSES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::zc {

/// The knobs of the pipeline; the driver's flags map onto these one to one,
/// and `zcc-opt -zcc-pipeline="..."` accepts the same names.
struct ZccPipelineOptions : public PassPipelineOptions<ZccPipelineOptions> {};

/// Appends zcc's whole pipeline to `pm`. `zcc` and `zcc-opt -zcc-pipeline`
/// both call this, so they run exactly the same passes.
void buildZccPipeline(OpPassManager &pm, const ZccPipelineOptions &options);

/// Registers `-zcc-pipeline` with the pass registry.
void registerZccPipeline();

} // namespace mlir::zc

#endif // ZCC_PASSES_PIPELINES_H
