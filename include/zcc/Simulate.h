//===- Simulate.h - zcc --simulate and --plan auto --------------------------===//

#ifndef ZCC_SIMULATE_H
#define ZCC_SIMULATE_H

#include "passes/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace zcc {

struct SimulateFlags {
  std::string cluster;       // --cluster NAME|FILE
  bool simulate = false;     // --simulate
  bool planAuto = false;     // --plan auto
  std::string traceFile;     // --sim-trace FILE
  std::string planFile;      // where --plan auto writes its choice
  std::string jsonReport;    // --report=json's file ("-": stdout), or empty
  int64_t nodes = 0;         // --nodes
  double planSeconds = 60;   // --plan-seconds (0: no limit)
  int64_t globalBatch = 0;   // --global-batch (sequences)
  int64_t interleave = 1;    // --pp-interleave
  std::string schedule;      // --pp-schedule (the stages of an interleaved one compile as 1F1B or zb-h1)
  bool materializedAttention = false; // --sim-attention materialized
  bool eagerRowKernels = false;       // --sim-row-kernels eager
};

/// Runs `zcc --simulate` (the plan `pipeline` describes, on the cluster) or `zcc --plan auto`
/// (the best plan for --nodes nodes of it) on `model`; returns the exit code.
int runSimulateOrPlan(mlir::ModuleOp model, const mlir::zc::ZccPipelineOptions &pipeline, const SimulateFlags &flags);

} // namespace zcc

#endif // ZCC_SIMULATE_H
