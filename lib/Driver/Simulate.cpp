//===- Simulate.cpp - zcc --simulate and --plan auto ------------------------===//
//
// Both stop before lowering: the plan is compiled by zcc's own pipeline (sim/Planner.h), then
// simulated on the cluster (sim/Simulator.h). --simulate prints the predicted step after the
// report, adds it to --report=json's file as "simulated" and can write it as a Chrome trace;
// --plan auto prints the ten best plans and writes the choice for `zcc --plan FILE`.
//
//===----------------------------------------------------------------------===//

#include "zcc/Simulate.h"

#include "sim/Planner.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace zcc::sim;

namespace {

/// Adds "simulated" to a --report=json file the report pass wrote.
bool addToJsonReport(llvm::StringRef path, const SimResult &result) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return false;
  llvm::Expected<llvm::json::Value> json = llvm::json::parse((*buffer)->getBuffer());
  if (!json || !json->getAsObject()) {
    llvm::consumeError(json.takeError());
    return false;
  }
  json->getAsObject()->insert({"simulated", result.toJson()});
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return false;
  os << llvm::formatv("{0:2}", *json) << "\n";
  return true;
}

int simulateOne(ModuleOp model, const zc::ZccPipelineOptions &pipeline, const Cluster &cluster,
                const zcc::SimulateFlags &flags) {
  const double modelFlops = modelFlopsPerStep(model), tokens = tokensPerStep(model);
  zc::ZccPipelineOptions options;
  options.copyOptionValuesFrom(pipeline);
  std::string error;
  FailureOr<CompiledPlan> compiled = compileForSimulation(model, options, flags.interleave, error);
  if (failed(compiled)) {
    if (!error.empty())
      llvm::errs() << "zcc: error: " << error << "\n";
    return 1;
  }
  SimRequest request;
  request.mesh = Mesh::of(pipeline, flags.interleave);
  request.microBatches = pipeline.gradAccum;
  request.schedule = flags.schedule;
  request.bf16 = pipeline.precision == "bf16";
  request.modelFlopsPerStep = modelFlops;
  request.tokensPerStep = tokens;
  request.trace = !flags.traceFile.empty();
  request.attention = flags.materializedAttention ? AttentionKernel::Materialized : AttentionKernel::Flash;
  request.rowKernels = flags.eagerRowKernels ? RowKernels::Eager : RowKernels::Fused;
  SimResult result = simulate(compiled->stages, cluster, request);
  if (flags.jsonReport == "-") {
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{{"simulated", result.toJson()}}))
                 << "\n";
  } else {
    result.print(llvm::outs());
    if (!flags.jsonReport.empty() && !addToJsonReport(flags.jsonReport, result)) {
      llvm::errs() << "zcc: error: cannot add the simulation to " << flags.jsonReport << "\n";
      return 1;
    }
  }
  if (!flags.traceFile.empty())
    if (llvm::Error e = result.writeTrace(flags.traceFile)) {
      llvm::errs() << "zcc: error: " << llvm::toString(std::move(e)) << "\n";
      return 1;
    }
  return 0;
}

int planAutomatically(ModuleOp model, const zc::ZccPipelineOptions &pipeline, const Cluster &cluster,
                      const zcc::SimulateFlags &flags) {
  PlannerRequest request;
  request.model = model;
  request.base.copyOptionValuesFrom(pipeline);
  request.base.report = "";
  request.nodes = flags.nodes;
  request.globalBatch = flags.globalBatch;
  request.memoryBudget = pipeline.memoryBudget;
  request.verbose = std::getenv("ZCC_PLAN_VERBOSE") != nullptr;
  request.timeLimitSeconds = flags.planSeconds;
  std::string error;
  FailureOr<PlannerResult> planned = planAuto(request, cluster, error);
  if (failed(planned)) {
    llvm::errs() << "zcc: error: --plan auto: " << error << "\n";
    return 1;
  }
  llvm::raw_ostream &os = llvm::outs();
  const double gib = double(1 << 30);
  os << llvm::formatv("zcc --plan auto: {0} nodes of {1} ({2} devices), {3}; {4} plans, {5} compiled, {6} over "
                      "memory, {7} not legal, {8} dominated, {9} bounded out; {10:F1} s\n",
                      flags.nodes, cluster.name, flags.nodes * cluster.devicesPerNode, pipeline.precision.getValue(),
                      planned->enumerated, planned->compiled, planned->overMemory, planned->failedToCompile,
                      planned->dominated, planned->boundedOut, planned->seconds);
  if (planned->timedOut)
    os << llvm::formatv("  stopped at --plan-seconds {0}: {1} plans not tried (each bounded at or above {2:F3} s a "
                        "step; the best found is {3:F3} s)\n",
                        flags.planSeconds, planned->untried, planned->untriedBoundSeconds,
                        planned->best.front().result.stepSeconds);
  os << llvm::formatv("  {0,-2} {1,-86} {2,9} {3,11} {4,6} {5,9}\n", "#", "plan", "step (s)", "tokens/s", "MFU",
                      "GiB/dev");
  for (auto [i, o] : llvm::enumerate(planned->best))
    os << llvm::formatv("  {0,-2} {1,-86} {2,9:F3} {3,11:F0} {4,5:F1}% {5,9:F2}\n", i + 1, o.plan.describe(),
                        o.result.stepSeconds, o.result.tokensPerSecond(), 100 * o.result.mfu(),
                        o.result.memoryBytes / gib);
  const PlanOutcome &choice = planned->best.front();
  if (planned->best.size() > 1)
    os << "  " << whyRunnerUpLost(choice, planned->best[1]) << "\n";
  std::error_code ec;
  llvm::raw_fd_ostream out(flags.planFile, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "zcc: error: cannot write " << flags.planFile << ": " << ec.message() << "\n";
    return 1;
  }
  out << llvm::formatv("{0:2}", planJson(choice, cluster, flags.nodes)) << "\n";
  os << "  wrote " << flags.planFile << " (zcc model.mlir --plan " << flags.planFile << " compiles it)\n";
  return 0;
}

} // namespace

int zcc::runSimulateOrPlan(ModuleOp model, const zc::ZccPipelineOptions &pipeline, const SimulateFlags &flags) {
  llvm::Expected<Cluster> cluster = loadCluster(flags.cluster);
  if (!cluster) {
    llvm::errs() << "zcc: error: " << llvm::toString(cluster.takeError()) << "\n";
    return 1;
  }
  if (flags.planAuto)
    return planAutomatically(model, pipeline, *cluster, flags);
  return simulateOne(model, pipeline, *cluster, flags);
}
