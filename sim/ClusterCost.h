//===- ClusterCost.h - seconds of an op and of a collective on a cluster ----===//
//
// The simulator's prices, from a Cluster description:
//  - compute: a matmul's FLOPs at the device's peak for its dtype times the matmul efficiency
//    curve at its size; flash attention's (causal: half the scores) at the attention
//    efficiency; every other op moves its operands and results through device memory at the
//    bandwidth-bound efficiency for its bytes, plus a kernel's overhead;
//  - collectives: NCCL's ring (and, for all-reduce, its tree where that is faster) over the
//    links the group crosses. Ranks are placed in Megatron's order (tensor fastest, then
//    context, data, pipeline; consecutive ranks fill a node), so a group of n ranks with
//    stride s has k = min(n, devices per node / s) of its ranks on each node. A group inside
//    one node runs at the NVLink bus bandwidth; one across nodes at the smaller of that and
//    k x the NIC bandwidth per device (every group of an axis communicates at once, so a
//    node's NICs are shared by its devices / k groups).
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_SIM_CLUSTERCOST_H
#define ZCC_SIM_CLUSTERCOST_H

#include "sim/Cluster.h"

#include "dialects/zc/ZcDialect.h"
#include "passes/CostModel.h"
#include "passes/Pipelines.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileUtilities.h"

#include <optional>

namespace zcc::sim {

/// The mesh a plan runs on: tensor x context x data x pipeline ranks, and the virtual stages
/// each pipeline rank runs (interleaved 1F1B).
struct Mesh {
  int64_t tp = 1, cp = 1, dp = 1, pp = 1, interleave = 1;
  /// ZeRO++'s groups inside the data axis: data ranks per node (the compiled --ranks-per-node)
  /// and hpZ's group (1: none).
  int64_t nodeRanks = 1, hpz = 1;
  int64_t ep = 1; // expert-parallel ranks: consecutive data ranks holding different experts
  int64_t world() const { return tp * cp * dp * pp; }
  /// The mesh zcc's pipeline options describe (dp: the ranks that read different rows of the batch).
  static Mesh of(const mlir::zc::ZccPipelineOptions &o, int64_t interleave = 1) {
    const int64_t dp = mlir::zc::batchRanks(o);
    const int64_t nodeRanks = o.ranksPerNode > 0 ? std::min<int64_t>(o.ranksPerNode, dp) : dp;
    return {o.tensorParallel, o.contextParallel, dp, o.pipelineParallel, interleave, nodeRanks,
            std::max<int64_t>(1, o.zeroHpzPartitionSize), std::max<int64_t>(1, o.expertParallel)};
  }
  /// Ranks in a group of `axis` and the distance between consecutive ones. The data axis'
  /// groups span data x context ranks (ZeRO and the gradient average cover both).
  int64_t groupSize(mlir::zc::MeshAxis axis) const;
  int64_t stride(mlir::zc::MeshAxis axis) const;
};

enum class Collective { AllGather, ReduceScatter, AllReduce, AllToAll, Send };

/// How attention is priced: zcc's flash attention (the causal half of the scores, never stored),
/// or as Megatron-LM ran it in 2022 (Korthikanti et al.): the whole T x T scores written to
/// memory, scaled, masked and soft-maxed by a fused kernel, dropout on the probabilities, two
/// batched matmuls each way. For comparing with runs of that software, not for zcc's own plans.
enum class AttentionKernel { Flash, Materialized };

/// How the row ops (norms, the rotary embedding, the gated MLP's activation) are priced: as zcc
/// runs them, one kernel each, or as PyTorch eager runs a model's Python code (sim/EagerKernels.h),
/// for comparing with runs of torchtitan without torch.compile. Not for zcc's own plans.
enum class RowKernels { Fused, Eager };

class ClusterCost {
public:
  ClusterCost(const Cluster &cluster, const Mesh &mesh, AttentionKernel attention = AttentionKernel::Flash,
              RowKernels rowKernels = RowKernels::Fused)
      : cluster_(cluster), mesh_(mesh), attention_(attention), rowKernels_(rowKernels) {}

  /// Seconds of compute op `op` on one device; 0 for views and references.
  double opSeconds(mlir::Operation *op) const;
  /// Seconds of a collective among `ranks` ranks of `axis` over which each rank contributes
  /// (all-gather: its shard; reduce-scatter and all-reduce: the whole buffer; all-to-all: its
  /// whole input; send: the message) `bytes`.
  double collectiveSeconds(Collective kind, mlir::zc::MeshAxis axis, int64_t ranks, double bytes) const;
  /// The link a group of `axis` crosses ("nvlink" or "network").
  bool crossesNodes(mlir::zc::MeshAxis axis, int64_t ranks) const;
  /// Whether a rank's collectives take the core its compute runs on: CPU ranks (one compute
  /// thread each) at least as many as the node's cores leave the runtime's communication thread
  /// no core of its own, so a collective overlapped with compute delays that compute as long as
  /// it runs (issue 40's note: ZeRO-2's reduce-scatters overlapped with the backward measured as
  /// slow as ZeRO-1's left exposed in the update). GPUs (no shared cores) never do.
  bool collectivesTakeCompute() const;

  /// FLOPs op `op` performs (flash attention: the causal half), the ones its time is priced on.
  static double opFlops(mlir::Operation *op);

  const Cluster &cluster() const { return cluster_; }
  const Mesh &mesh() const { return mesh_; }

private:
  double materializedAttentionSeconds(mlir::Operation *op) const;
  /// Seconds of kernels moving these bytes each (RowKernels::Eager's decompositions).
  double memoryKernelsSeconds(const std::vector<double> &bytes) const;

  const Cluster &cluster_;
  Mesh mesh_;
  AttentionKernel attention_;
  RowKernels rowKernels_;
};

/// The cluster's prices for the passes that read zcc's alpha-beta cost model (zcc-bucket's
/// bucket sizes, the report's predictions): each collective kind as the plan's data-parallel
/// group sees it on `mesh` (a line through its time at 1 MiB and 256 MiB sent), the device's best
/// matmul rate, the host link and NVMe.
mlir::zc::CostModel passCostModel(const Cluster &cluster, const Mesh &mesh, bool bf16);

/// passCostModel written where the passes read a cost model from (their `cost-model` option, a
/// path): a temporary file, removed when this goes.
struct CostModelFile {
  llvm::SmallString<128> path;
  std::optional<llvm::FileRemover> remover;
};
llvm::Error writePassCostModel(const Cluster &cluster, const Mesh &mesh, bool bf16, CostModelFile &file);

} // namespace zcc::sim

#endif // ZCC_SIM_CLUSTERCOST_H
