//===- ClusterCost.cpp - seconds of an op and of a collective on a cluster --===//

#include "sim/ClusterCost.h"

#include "sim/EagerKernels.h"

#include "passes/CostModel.h"
#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::zc;
using namespace zcc::sim;

int64_t Mesh::groupSize(MeshAxis axis) const {
  switch (axis) {
  case MeshAxis::tensor: return tp;
  case MeshAxis::context: return cp;
  case MeshAxis::data: return cp * dp;
  case MeshAxis::pipeline: return pp;
  // ZeRO++'s groups inside the data axis (zcc-zero-pp): a node's data ranks, one per node, hpZ's.
  case MeshAxis::node: return nodeRanks;
  case MeshAxis::cross: return cp * dp / nodeRanks;
  case MeshAxis::hpz: return hpz;
  // Expert parallelism's groups inside the data axis: ep consecutive ranks, and those with the
  // same place in theirs.
  case MeshAxis::expert: return ep;
  case MeshAxis::expert_data: return cp * dp / ep;
  }
  return 1;
}

int64_t Mesh::stride(MeshAxis axis) const {
  switch (axis) {
  case MeshAxis::tensor: return 1;
  case MeshAxis::context:
  case MeshAxis::data: return tp; // data x context ranks: one contiguous run at the tensor stride
  case MeshAxis::pipeline: return tp * cp * dp;
  case MeshAxis::node:
  case MeshAxis::hpz: return tp; // consecutive data ranks
  case MeshAxis::cross: return tp * nodeRanks; // the same place on each node
  case MeshAxis::expert: return tp;
  case MeshAxis::expert_data: return tp * ep;
  }
  return 1;
}

namespace {
double bytesOf(ValueRange values) {
  double n = 0;
  for (Value v : values)
    if (auto t = dyn_cast<RankedTensorType>(v.getType()))
      n += double(tensorBytes(t));
  return n;
}

bool isBf16(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isBF16();
}

bool isMatmul(Operation *op) {
  return isa<MatmulOp, MatmulBiasOp, MatmulBiasGeluOp, MatmulDgeluBgradOp, MatmulCrossEntropyOp,
             MatmulCrossEntropyLossOp, GroupedMatmulOp, GroupedMatmulGradOp>(op);
}
} // namespace

double ClusterCost::opFlops(Operation *op) {
  if (isa<CausalAttentionOp, CausalAttentionGradOp>(op)) {
    // Flash attention computes only the causal half of the scores: 2BT^2C forward (QK^T and PV),
    // and 2.5x that backward (FlashAttention-2: the scores again, then dV, dP, dQ and dK).
    RankedTensorType q = tensorOf(op->getOperand(isa<CausalAttentionOp>(op) ? 0 : 1));
    double b = q.getDimSize(0), t = q.getDimSize(1), c = q.getDimSize(2);
    double forward = 2 * b * t * t * c;
    // A sliding window: the key tiles a query tile's window excludes are skipped (T x W, not T^2 / 2).
    forward *= AttentionVariant::of(op).keptFraction(q.getDimSize(1));
    // Ring attention: this rank's tokens (1/C of the sequence, balanced by the chunk layout)
    // against every rank's keys: C times the local square.
    if (auto ring = op->getAttrOfType<IntegerAttr>(kContextRingAttr))
      forward *= double(ring.getInt());
    return isa<CausalAttentionOp>(op) ? forward : 2.5 * forward;
  }
  return estimatedFlops(op);
}

double ClusterCost::opSeconds(Operation *op) const {
  if (!isa_and_nonnull<ZcDialect>(op->getDialect()))
    return 0; // func.return, constants
  // Views and references: no kernel runs.
  if (isa<ParamRefOp, GradRefOp, ReshapeOp, ReleaseOp, StageInputOp, StageOutputOp, WaitOp>(op))
    return 0;
  const double overhead = cluster_.kernelOverheadSeconds;
  if (isMatmul(op)) {
    double flops = estimatedFlops(op);
    // The fused head runs its three products in chunks of the vocabulary: price one product.
    double perCall = isa<MatmulCrossEntropyOp>(op) ? flops / 3 : flops;
    double calls = 1;
    // A grouped product: one product per expert (per expert and gradient), priced at the balanced
    // routing's rows (what the memory plan and the matmul plan assume too).
    if (isa<GroupedMatmulOp, GroupedMatmulGradOp>(op)) {
      calls = double(tensorOf(op->getOperand(isa<GroupedMatmulOp>(op) ? 1 : 2)).getDimSize(0)) *
              (isa<GroupedMatmulGradOp>(op) ? std::max<int64_t>(1, groupedGradProducts(op)) : 1);
      perCall = flops / calls;
    }
    bool bf16 = isBf16(op->getOperand(0));
    return calls * overhead + flops / (cluster_.peakFlops(bf16) * cluster_.matmulCurve(bf16).at(perCall));
  }
  // Eager PyTorch's kernels for what zcc runs as one (and the copies around its attention).
  const std::vector<double> eager = rowKernels_ == RowKernels::Eager ? eagerKernelBytes(op) : std::vector<double>{};
  const bool attention = isa<CausalAttentionOp, CausalAttentionGradOp>(op);
  if (!eager.empty() && !attention)
    return memoryKernelsSeconds(eager);
  const double copies = attention ? memoryKernelsSeconds(eager) : 0;
  if (attention && attention_ == AttentionKernel::Materialized)
    return copies + materializedAttentionSeconds(op);
  if (isa<CausalAttentionOp, CausalAttentionGradOp>(op)) {
    bool forward = isa<CausalAttentionOp>(op);
    double peak = cluster_.peakFlops(isBf16(op->getOperand(forward ? 0 : 1)));
    double flops = opFlops(op);
    // The curves are by the FLOPs of one (sequence, head) pair (2 T^2 D forward): a kernel's rate
    // grows with the context and the head size, not with how many pairs one call holds (keyed
    // by a call's FLOPs, a batch of 8 short sequences was priced as one long one: 0.41 of peak
    // where it ran at 0.27, gpt-small at two ranks here).
    const int64_t heads = forward ? cast<CausalAttentionOp>(op).getNumHeads()
                                  : cast<CausalAttentionGradOp>(op).getNumHeads();
    const double pairs = double(tensorOf(op->getOperand(forward ? 0 : 1)).getDimSize(0)) * double(heads);
    return copies + overhead + flops / (peak * cluster_.attentionEfficiency(forward, flops / pairs));
  }
  double bytes;
  if (auto e = dyn_cast<EmbeddingOp>(op)) // reads the rows it writes, not the whole table
    bytes = 2 * bytesOf(e->getResults()) + bytesOf(e->getOperand(0));
  else if (auto adam = dyn_cast<AdamWOp>(op)) {
    // The gradient read; the moments (and the fp32 master) read and written, f32; the parameter
    // written in its own type. They are named by symbol, so count them by the gradient's elements.
    RankedTensorType grad = tensorOf(adam.getGrad());
    double n = double(grad.getNumElements());
    auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(op, adam.getParamAttr());
    double paramBytes = param ? param.getTensorType().getElementTypeBitWidth() / 8 : 4;
    bytes = bytesOf(adam.getGrad()) + n * 4 * 2 * (adam.getMaster() ? 3 : 2) + n * paramBytes;
  } else if (auto sgd = dyn_cast<SgdOp>(op))
    bytes = 3 * bytesOf(op->getOperands()); // the gradient read, the parameter read and written
  else if (auto acc = dyn_cast<GradAccumulateOp>(op))
    bytes = (acc.getOverwrite() ? 2 : 3) * bytesOf(acc.getGrad()); // into the named gradient buffer
  else
    bytes = bytesOf(op->getOperands()) + bytesOf(op->getResults());
  if (bytes <= 0)
    return 0;
  return overhead + bytes / (cluster_.memoryBytesPerSecond * cluster_.memoryEfficiency.at(bytes));
}

double ClusterCost::memoryKernelsSeconds(const std::vector<double> &bytes) const {
  double seconds = 0;
  for (double b : bytes) // a kernel over a row's statistics moves next to nothing: its launch counts
    seconds += cluster_.kernelOverheadSeconds +
               (b > 0 ? b / (cluster_.memoryBytesPerSecond * cluster_.memoryEfficiency.at(b)) : 0);
  return seconds;
}

double ClusterCost::materializedAttentionSeconds(Operation *op) const {
  const bool forward = isa<CausalAttentionOp>(op);
  RankedTensorType q = tensorOf(op->getOperand(forward ? 0 : 1));
  const double b = q.getDimSize(0), t = q.getDimSize(1), c = q.getDimSize(2);
  const double heads = double(op->getAttrOfType<IntegerAttr>("num_heads").getInt());
  const double scores = b * heads * t * t, element = q.getElementType().isBF16() ? 2 : 4;
  // The batched matmuls compute every score, masked or not: QK^T and PV forward (4BT^2C), and
  // dV, dP, dQ, dK backward (8BT^2C); one head's product per batch entry.
  const double flops = (forward ? 4 : 8) * b * t * t * c, perCall = flops / (b * heads) / (forward ? 2 : 4);
  const double peak = cluster_.peakFlops(q.getElementType().isBF16());
  double seconds = flops / (peak * cluster_.matmulCurve(q.getElementType().isBF16()).at(perCall));
  // Bytes per score: forward, the scores written, read and written by the fused scale-mask-
  // softmax, read and written by dropout with its 1-byte mask, read by PV (7 elements + 1 B);
  // backward, dP written, dropout's backward (2 elements + 1 B), softmax's backward (probabilities,
  // dP, dS: 3), dS read by the two products (2).
  const double bytes = scores * (forward ? 7 * element + 1 : 8 * element + 1);
  seconds += bytes / (cluster_.memoryBytesPerSecond * cluster_.memoryEfficiency.at(scores * element));
  return cluster_.kernelOverheadSeconds * (forward ? 5 : 8) + seconds;
}

bool ClusterCost::collectivesTakeCompute() const {
  return cluster_.sharedCores > 0 && std::min(mesh_.world(), cluster_.devicesPerNode) >= cluster_.sharedCores;
}

bool ClusterCost::crossesNodes(MeshAxis axis, int64_t ranks) const {
  return ranks * mesh_.stride(axis) > cluster_.devicesPerNode;
}

double ClusterCost::collectiveSeconds(Collective kind, MeshAxis axis, int64_t n, double bytes) const {
  if (n <= 1 || bytes <= 0)
    return 0;
  const int64_t stride = mesh_.stride(axis), perNode = cluster_.devicesPerNode;
  const bool inter = crossesNodes(axis, n);
  // Ranks of the group on one node; all of an axis' groups communicate at once, so a node's
  // NICs (one per device) carry k ranks' worth for each group.
  const int64_t k = stride >= perNode ? 1 : std::min(n, perNode / stride);
  const Link &intra = cluster_.intraNode, &network = cluster_.interNode;
  const double bw = inter ? std::min(intra.bytesPerSecond, double(k) * network.bytesPerSecond) : intra.bytesPerSecond;
  const double latency = inter ? network.latencySeconds : intra.latencySeconds;
  const double ranks = double(n);
  // Inside a node, a kind zcc-calibrate measured: its own line over the bytes one rank sends.
  auto measured = [&](const MeasuredCollective &m, double sent) { return m.alphaSeconds + sent / m.bytesPerSecond; };
  if (!inter) {
    if (kind == Collective::AllGather && cluster_.intraAllGather.present())
      return measured(cluster_.intraAllGather, (ranks - 1) * bytes);
    if (kind == Collective::ReduceScatter && cluster_.intraReduceScatter.present())
      return measured(cluster_.intraReduceScatter, (ranks - 1) / ranks * bytes);
    if (kind == Collective::AllReduce && cluster_.intraAllReduce.present())
      return measured(cluster_.intraAllReduce, 2 * (ranks - 1) / ranks * bytes);
  }
  switch (kind) {
  case Collective::AllGather: // a ring: n - 1 steps, each rank sends n - 1 shards
    return (ranks - 1) * latency + (ranks - 1) * bytes / bw;
  case Collective::ReduceScatter:
    return (ranks - 1) * latency + (ranks - 1) / ranks * bytes / bw;
  case Collective::AllReduce: {
    // NCCL picks the ring or the (double binary) tree: the tree's latency grows with log n; both
    // move 2 (n - 1) / n of the buffer per rank at the bus bandwidth.
    double volume = 2 * (ranks - 1) / ranks * bytes / bw;
    double ring = 2 * (ranks - 1) * latency, tree = 2 * std::ceil(std::log2(ranks)) * latency;
    return std::min(ring, inter ? tree : ring) + volume;
  }
  case Collective::AllToAll: {
    // Each rank keeps 1/n, sends (k - 1)/n inside its node and (n - k)/n over its NIC.
    double inside = (double(k) - 1) / ranks * bytes / intra.bytesPerSecond;
    double outside = inter ? (ranks - double(k)) / ranks * bytes / network.bytesPerSecond : 0;
    return (ranks - 1) * latency + std::max(inside, outside);
  }
  case Collective::Send:
    return latency + bytes / (inter ? network.bytesPerSecond : intra.bytesPerSecond);
  }
  return 0;
}

mlir::zc::CostModel zcc::sim::passCostModel(const Cluster &cluster, const Mesh &mesh, bool bf16) {
  mlir::zc::CostModel model;
  ClusterCost cost(cluster, mesh);
  const int64_t ranks = std::max<int64_t>(2, mesh.groupSize(MeshAxis::data));
  const double n = double(ranks);
  // bytes one rank sends for `bytes` of its argument, by kind (ring algorithms, as the report counts)
  auto fit = [&](Collective kind, double sentPerArgumentByte) {
    const double small = double(1 << 20), large = double(256 << 20);
    double t1 = cost.collectiveSeconds(kind, MeshAxis::data, ranks, small / sentPerArgumentByte);
    double t2 = cost.collectiveSeconds(kind, MeshAxis::data, ranks, large / sentPerArgumentByte);
    double bw = (large - small) / std::max(t2 - t1, 1e-12);
    return mlir::zc::CollectiveCost{std::max(0.0, t1 - small / bw), bw};
  };
  model.allGather = fit(Collective::AllGather, n - 1);                  // argument: the shard
  model.reduceScatter = fit(Collective::ReduceScatter, (n - 1) / n);    // argument: the whole buffer
  model.allReduce = fit(Collective::AllReduce, 2 * (n - 1) / n);
  model.computeFlopsPerSecond = cluster.peakFlops(bf16) * cluster.matmulCurve(bf16).best();
  model.hostCopyBytesPerSecond = cluster.hostLinkBytesPerSecond;
  model.nvmeReadBytesPerSecond = cluster.nvmeReadBytesPerSecond / double(cluster.devicesPerNode);
  model.nvmeWriteBytesPerSecond = cluster.nvmeWriteBytesPerSecond / double(cluster.devicesPerNode);
  model.source = "cluster " + cluster.name;
  return model;
}

llvm::Error zcc::sim::writePassCostModel(const Cluster &cluster, const Mesh &mesh, bool bf16, CostModelFile &file) {
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("zcc-cluster-" + cluster.name, "json", fd, file.path))
    return llvm::createStringError(ec, "cannot create a temporary file: " + ec.message());
  file.remover.emplace(file.path);
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << passCostModel(cluster, mesh, bf16).toJson();
  return llvm::Error::success();
}
