//===- Cluster.h - what a training cluster can do --------------------------===//
//
// The simulator's and the planner's description of a cluster: its nodes (devices, host memory,
// the host link, NVMe), one device (memory, peak FLOP/s per dtype, how close matmuls and
// bandwidth-bound kernels come to those peaks as a function of their size, flash attention's
// share of the peak) and the two link levels NCCL uses (NVLink inside a node, the NICs across
// nodes). docs/cluster.md documents the JSON; sim/clusters/ ships DGX A100 80GB and 40GB and
// DGX H100, every value with its source; `zcc-calibrate --cluster-out` writes this machine's.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_SIM_CLUSTER_H
#define ZCC_SIM_CLUSTER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace zcc::sim {

/// y(x) by linear interpolation in log10(x) between measured points, clamped at both ends.
struct Curve {
  std::vector<std::pair<double, double>> points; // (x, y), x increasing
  double at(double x) const;
  /// The largest y (`fallback` for an empty curve).
  double best(double fallback = 1) const;
};

/// A link level as NCCL sees it: the bus bandwidth one device reaches on it (nccl-tests' busbw)
/// and the latency of one step of a ring or tree over it.
struct Link {
  double bytesPerSecond = 1, latencySeconds = 0;
};

/// A collective kind as measured on one link level (zcc-calibrate): seconds = alpha + bytes one
/// rank sends / bytes_per_s. Where a cluster gives them, they replace the ring model inside a node.
struct MeasuredCollective {
  double alphaSeconds = 0, bytesPerSecond = 0;
  bool present() const { return bytesPerSecond > 0; }
};

struct Cluster {
  std::string name, description, path;
  // A node.
  int64_t devicesPerNode = 1;
  /// The compute units a node's devices share (a CPU's cores, where ranks outnumber them): the
  /// device rates are then those of every device busy at once, and a device whose neighbours
  /// wait runs faster. 0: devices share nothing (GPUs).
  int64_t sharedCores = 0;
  double hostMemoryBytes = 0, hostLinkBytesPerSecond = 1, nvmeReadBytesPerSecond = 1, nvmeWriteBytesPerSecond = 1;
  // One device.
  double memoryBytes = 0, memoryBytesPerSecond = 1;
  double peakFlopsF32 = 1, peakFlopsBf16 = 1;
  Curve matmulEfficiency; // x: FLOPs of one matmul call
  Curve matmulEfficiencyBf16; // bf16's own, where it differs (a CPU); empty: matmulEfficiency
  Curve memoryEfficiency; // x: bytes a bandwidth-bound kernel reads and writes
  double attentionForwardEfficiency = 1, attentionBackwardEfficiency = 1;
  /// Optional, by the FLOPs of one call (zcc-calibrate measures them): replace the two above.
  Curve attentionForwardCurve, attentionBackwardCurve;
  double attentionEfficiency(bool forward, double flops) const {
    const Curve &curve = forward ? attentionForwardCurve : attentionBackwardCurve;
    if (!curve.points.empty())
      return curve.at(flops);
    return forward ? attentionForwardEfficiency : attentionBackwardEfficiency;
  }
  double kernelOverheadSeconds = 0;
  // The links.
  Link intraNode, interNode;
  MeasuredCollective intraAllGather, intraReduceScatter, intraAllReduce;
  /// Where each value comes from, by its JSON path ("device.peak_flops.bf16").
  std::map<std::string, std::string> sources;

  double peakFlops(bool bf16) const { return bf16 ? peakFlopsBf16 : peakFlopsF32; }
  const Curve &matmulCurve(bool bf16) const {
    return bf16 && !matmulEfficiencyBf16.points.empty() ? matmulEfficiencyBf16 : matmulEfficiency;
  }
};

/// Reads a cluster description: a shipped name (`dgx-a100-80g`) or a path to a JSON file.
/// Errors name the file and the key that is missing or wrong.
llvm::Expected<Cluster> loadCluster(llvm::StringRef nameOrPath);

/// Parses a cluster description's text; `origin` names it in errors.
llvm::Expected<Cluster> parseCluster(llvm::StringRef text, llvm::StringRef origin);

/// The names `loadCluster` knows without a path.
std::vector<std::string> shippedClusterNames();

} // namespace zcc::sim

#endif // ZCC_SIM_CLUSTER_H
