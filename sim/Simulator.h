//===- Simulator.h - one training step of a compiled plan, on a cluster ---===//
//
// Runs zcc's compiled plan (the modules the pipeline leaves before lowering: one per pipeline
// stage, or per virtual stage when interleaved) op by op on a device's compute stream and
// collective by collective on its communication stream, in the order and with the overlap the
// schedule wrote: an async collective starts when the stream is free and the compute thread
// has reached it, a zc.wait stalls compute until it is done, a blocking one stalls both.
// Compute and collectives are priced by sim/ClusterCost.h. One program per pipeline stage stands
// for every rank of that stage (the mesh's other ranks run the same ops on their shards), so a
// mesh of thousands of ranks costs no more than its stages.
//
// Pipelines: each stage's forward ("F") and step ("B": its forward again, then the backward)
// per micro-batch, composed by the 1F1B schedule's dependencies (F of micro-batch i on stage s
// after stage s - 1's; B after stage s + 1's); interleaved 1F1B with v virtual stages by
// Megatron-LM's bubble, (p - 1) / v of a device's work per micro-batch. Then the update.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_SIM_SIMULATOR_H
#define ZCC_SIM_SIMULATOR_H

#include "sim/Cluster.h"
#include "sim/ClusterCost.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace zcc::sim {

/// Where a step's time goes; the parts add up to the step.
struct Breakdown {
  double compute = 0, recompute = 0, optimizer = 0, bubble = 0, offload = 0;
  double exposedData = 0, exposedTensor = 0, exposedContext = 0, exposedPipeline = 0;
  double exposedExpert = 0; // expert parallelism's all-to-alls (the expert axis)
  void add(const Breakdown &other, double times = 1);
  double exposedComm() const {
    return exposedData + exposedTensor + exposedContext + exposedPipeline + exposedExpert;
  }
  double total() const { return compute + recompute + optimizer + bubble + offload + exposedComm(); }

  /// Each part with its JSON key and its words, in the order reports list them.
  struct Named {
    const char *key, *label, *phrase; // "exposed_comm_data", "exposed comm: data", "exposed data-parallel ..."
    double seconds;
  };
  std::vector<Named> named() const;
};

/// One span of the predicted step, in the runtime's --trace layout (tid 0 compute,
/// 1 communication, 2 steps; pid: the pipeline stage).
struct TraceEvent {
  std::string name;
  int pid = 0, tid = 0;
  double begin = 0, end = 0;
  int64_t bytes = -1;
};

/// What one simulation needs besides the compiled modules.
struct SimRequest {
  Mesh mesh;
  int64_t microBatches = 1;
  /// The pipeline's schedule (zcc --pp-schedule): the table the stages run. Empty: the one the
  /// stages were compiled for (an interleaved schedule's stages compile as 1F1B's or zb-h1's,
  /// so the name is needed with mesh.interleave > 1).
  std::string schedule;
  bool bf16 = false;
  double modelFlopsPerStep = 0; // the model's FLOPs (forward x 3, attention counted whole)
  double tokensPerStep = 0;
  bool trace = false;
  AttentionKernel attention = AttentionKernel::Flash;
  RowKernels rowKernels = RowKernels::Fused;
};

struct StageResult {
  double forwardSeconds = 0, stepSeconds = 0, updateSeconds = 0;
  int64_t arenaBytes = 0, inFlightInputBytes = 0;
  /// Of the arenas: the activations live at once at their peak (each virtual stage's, summed):
  /// the planner's floor for the plan's twins at other ZeRO stages and offload.
  int64_t activationPeakBytes = 0;
};

struct SimResult {
  std::string cluster;
  Mesh mesh;
  int64_t microBatches = 1;
  bool bf16 = false;
  double stepSeconds = 0, tokensPerStep = 0, modelFlopsPerStep = 0, peakFlopsPerDevice = 0;
  /// The most memory any device needs (its arena, and a pipeline stage's inputs in flight).
  int64_t memoryBytes = 0;
  double deviceMemoryBytes = 0;
  Breakdown parts;
  std::vector<StageResult> stages; // per pipeline rank (virtual stages summed)
  /// The most any device keeps of activations, at their peak and in its inputs in flight.
  int64_t activationBytes() const;
  std::vector<TraceEvent> trace;

  double tokensPerSecond() const { return tokensPerStep / stepSeconds; }
  double mfu() const { return modelFlopsPerStep / (stepSeconds * mesh.world() * peakFlopsPerDevice); }
  /// The device memory a plan may use: all of it but what the CUDA context, NCCL's buffers and
  /// cuBLASLt's workspace take (2 GiB).
  static constexpr double kReservedBytes = 2.0 * (1 << 30);
  bool fits(double budget) const { return double(memoryBytes) + kReservedBytes <= budget; }
  bool fits() const { return fits(deviceMemoryBytes); }

  llvm::json::Value toJson() const;
  void print(llvm::raw_ostream &os) const;
  /// Writes the Chrome trace (ui.perfetto.dev) of the predicted step.
  llvm::Error writeTrace(llvm::StringRef path) const;
};

/// Simulates one optimizer step of the plan compiled into `stages` (pipeline stage order; with
/// interleave v, p x v virtual stages, stage j on pipeline rank j mod p, or under ZB-V, stages
/// compiled to split their backward, rank j or 2p - 1 - j).
SimResult simulate(llvm::ArrayRef<mlir::ModuleOp> stages, const Cluster &cluster, const SimRequest &request);

/// The model's FLOPs for one optimizer step, from the module as written (before zcc's passes):
/// its forward's matmuls and attention, times 3 (forward, and the backward's two products);
/// attention counted over all T^2 scores, as Megatron-LM's and torchtitan's MFU count it.
double modelFlopsPerStep(mlir::ModuleOp model);
/// Tokens of one optimizer step: the batch x context of the forward's first argument.
double tokensPerStep(mlir::ModuleOp model);

} // namespace zcc::sim

#endif // ZCC_SIM_SIMULATOR_H
