//===- Planner.h - compile a plan for simulation; choose the best plan ----===//
//
// `zcc --simulate` and `zcc --plan auto` compile plans the same way: zcc's own pipeline on a
// copy of the model, stopped before lowering (no weights, no code), one module per pipeline
// stage. A pipeline's middle stages are alike (the same layers of the same sizes), so only the
// first, the second and the last are compiled and the second stands for the others.
//
// The planner enumerates the legal plans for a cluster of N nodes (tensor ranks inside a node,
// pipeline and context ranks, the data-parallel rest; ZeRO stage, micro-batch size and count,
// recomputation, optimizer offload), orders them by a lower bound of their step time (the
// matmuls' FLOPs at the device's best matmul rate, the 1F1B bubble, recomputation's extra
// forward), and evaluates them in that order: compile, keep the plan only where the exact
// memory plan fits the device, simulate. A plan compiled tells its twins at other ZeRO stages
// and offload what their activations and compute are at least (with the margins the stages'
// graphs differ by), so most of them are ruled out uncompiled. It stops once the next plan's
// lower bound is slower than the tenth best simulated step, so the ten best are exact (up to
// those margins) and the answer does not depend on timing, unless --plan-seconds stops it.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_SIM_PLANNER_H
#define ZCC_SIM_PLANNER_H

#include "sim/Simulator.h"

#include "passes/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace zcc::sim {

/// A compiled plan: the modules of its (virtual) stages, in order; middle stages alike share one.
struct CompiledPlan {
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> owned;
  std::vector<mlir::ModuleOp> stages;
};

/// Compiles `model` under `options` (its mesh, ZeRO stage, recomputation, ...) with `interleave`
/// virtual stages per pipeline rank, stopping before lowering. Errors go to the context's
/// diagnostic handler; `error` gets a one-line reason.
mlir::FailureOr<CompiledPlan> compileForSimulation(mlir::ModuleOp model, const mlir::zc::ZccPipelineOptions &options,
                                                   int64_t interleave, std::string &error, bool verify = true);

/// One plan of the planner's space.
struct PlanChoice {
  int64_t tp = 1, cp = 1, pp = 1, dp = 1, interleave = 1, zeroStage = 0;
  int64_t microBatchSize = 1; // sequences per micro-batch on one data-parallel rank
  int64_t microBatches = 1;   // per optimizer step (the global batch's)
  int64_t compileMicroBatches = 1; // of the model's own batch (--grad-accum of the compile)
  std::string recompute = "none", offloadOptimizer = "none";
  std::string schedule = "1f1b"; // the pipeline's (zcc --pp-schedule), with pp > 1
  /// ZeRO++ over nodes of the cluster's devices (qwZ, hpZ inside a node, qgZ): ZeRO-3 on a mesh
  /// of data-parallel ranks only, across nodes.
  bool zeroPlusPlus = false;
  int64_t ep = 1; // expert-parallel ranks among the dp (a MoE model's)
  std::string expertBound; // with ep > 1: the user's --moe-max-tokens-per-expert
  std::string describe() const;
};

struct PlanOutcome {
  PlanChoice plan;
  double lowerBoundSeconds = 0;
  SimResult result;
};

struct PlannerRequest {
  mlir::ModuleOp model;
  mlir::zc::ZccPipelineOptions base; // precision, clipping, optimizer, ... as the user gave them
  int64_t nodes = 1;
  int64_t globalBatch = 0;  // sequences per step; 0: the model's batch
  int64_t memoryBudget = 0; // bytes per device; 0: the cluster's device memory
  size_t keep = 10;
  bool verbose = false; // each evaluated plan on stderr (ZCC_PLAN_VERBOSE=1)
  double timeLimitSeconds = 0; // stop compiling plans past this (0: none), keeping the best found
};

struct PlannerResult {
  std::vector<PlanOutcome> best; // fastest first
  int64_t enumerated = 0, compiled = 0, failedToCompile = 0, overMemory = 0, dominated = 0, boundedOut = 0;
  double seconds = 0;
  bool timedOut = false;           // the time limit stopped the search
  int64_t untried = 0;             // ... with these plans left
  double untriedBoundSeconds = 0;  // ... the least step bound among them
};

/// Searches the plans for `request.nodes` nodes of `cluster`. Fails (with `error`) where no
/// plan fits.
/// ZeRO++ as the planner chooses it: qwZ, qgZ, and hpZ over each node's `ranksPerNode` ranks.
void setZeroPlusPlus(mlir::zc::ZccPipelineOptions &o, bool on, int64_t ranksPerNode);

mlir::FailureOr<PlannerResult> planAuto(const PlannerRequest &request, const Cluster &cluster, std::string &error);

/// Why the runner-up lost to the choice: the parts of the step that differ most.
std::string whyRunnerUpLost(const PlanOutcome &best, const PlanOutcome &runnerUp);

/// plan.json: the choice as `zcc --plan FILE` reads it.
llvm::json::Value planJson(const PlanOutcome &choice, const Cluster &cluster, int64_t nodes);

/// Reads plan.json into `options` (world size, mesh, ZeRO stage, micro-batches, recompute,
/// offload, precision).
llvm::Error applyPlanFile(llvm::StringRef path, mlir::zc::ZccPipelineOptions &options);

} // namespace zcc::sim

#endif // ZCC_SIM_PLANNER_H
