//===- CostModel.h - time of a collective on the target -------------------===//
//
// seconds(call) = alpha + bytes_sent / bytes_per_s for each collective kind
// (bytes_sent: what one rank sends under ring algorithms, as the report and
// the runtime's counters count). The numbers come from `zcc-calibrate` run on
// the target (a JSON file passed with --cost-model), or from the defaults
// below, measured the same way on the reference CPU + MPI machine.
//
// zcc-bucket derives its default bucket sizes from it, and zcc-report its
// predicted communication time.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_PASSES_COSTMODEL_H
#define ZCC_PASSES_COSTMODEL_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::zc {

struct CollectiveCost {
  double alphaSeconds = 0, bytesPerSecond = 1;
  double seconds(double bytesSent) const { return alphaSeconds + bytesSent / bytesPerSecond; }
};

struct CostModel {
  // Defaults: zcc-calibrate, 4 ranks of Open MPI over shared memory on the
  // 2-core reference machine (docs/cost-model.md).
  CollectiveCost allGather{33e-6, 1.41e9}, reduceScatter{111e-6, 0.33e9}, allReduce{25e-6, 0.95e9};
  /// Compute throughput of one rank (zcc-calibrate: a 512^3 f32 matmul), used to
  /// estimate how long compute hides a transfer.
  // zcc-calibrate measured 95 GFLOP/s for one rank's matmul; four ranks share two cores.
  double computeFlopsPerSecond = 47e9;
  /// The NVMe store's sequential bandwidth (zcc-offload's swaps: 1 MiB requests, O_DIRECT,
  /// io_uring at queue depth 16): fio on the reference machine's disk read 1.05 GB/s and wrote
  /// 2.45 GB/s. A cost-model file may give {"nvme": {"read_bytes_per_s", "write_bytes_per_s"}}.
  double nvmeReadBytesPerSecond = 1.05e9, nvmeWriteBytesPerSecond = 2.45e9;
  /// Copies between the arena and the host tier (activations offloaded between the passes): on
  /// the CPU backend a memcpy (bench/offload_activations_bench.sh on the reference machine: 1.09 GB
  /// more per step took 79 ms more, 13.8 GB/s); on a GPU the host link's (PCIe) bandwidth. A
  /// cost-model file may give {"host": {"copy_bytes_per_s"}}.
  double hostCopyBytesPerSecond = 13.8e9;
  std::string source = "built-in defaults";

  /// The smallest bucket (bytes of the whole tensors in it, over `ranks`) whose
  /// call spends at most 10% of its time on latency: alpha <= 0.1 * seconds.
  static int64_t bucketBytesFor(const CollectiveCost &cost, int64_t ranks, bool allReduce);

  /// Reads a zcc-calibrate file; on failure returns the error text.
  static FailureOr<CostModel> load(llvm::StringRef path, std::string &error);
  /// The same JSON `load` reads (what zcc writes for a --cluster's data-parallel group).
  std::string toJson() const;
};

/// Estimated floating-point work of one op: 2mnk for matmuls, 4BT^2C (8 for the
/// gradient) for causal attention, otherwise one per element read or written
/// (the larger).
double estimatedFlops(Operation *op);

/// 2mnk of the product `out` = `lhs` x (a k x n matrix), from the two shapes (batched or not).
double productFlops(Value lhs, Value out);

} // namespace mlir::zc

#endif // ZCC_PASSES_COSTMODEL_H
