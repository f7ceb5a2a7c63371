//===- ReportPredict.h - the report's predictions under the cost model ----===//
//
// What `--report` predicts of a rank's step from zcc's alpha-beta cost model (passes/CostModel.h):
// each collective's seconds, one rank's compute and communication timeline, and the NVMe swap
// schedule's traffic and exposed time. The cluster simulator (sim/) prices plans on a cluster
// description instead; these are the passes' own view.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_PASSES_REPORTPREDICT_H
#define ZCC_PASSES_REPORTPREDICT_H

#include "dialects/zc/ZcDialect.h"
#include "passes/CostModel.h"
#include "passes/MemoryPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::zc::report {

inline int64_t elementBytes(RankedTensorType t) { return t.getElementTypeBitWidth() / 8; }

/// The tensor an async collective's zc.wait yields.
inline RankedTensorType awaitedType(Value handle) { return cast<AsyncType>(handle.getType()).getValueType(); }

/// Seconds of one collective under the cost model; 0 for other ops.
double collectiveSeconds(Operation *op, const CostModel &costs);

/// One rank's timeline of `fn`: compute ops advance the compute clock, collectives
/// run in issue order on the communication stream, a wait (or a blocking
/// collective) stalls compute until its transfer is done. Adds `times` runs of it to the totals.
void predictTimeline(func::FuncOp fn, const CostModel &costs, int64_t times, double &compute, double &comm,
                     double &exposed);

/// The NVMe swap schedule of the update (zcc-offload): bytes each way per step, and its
/// predicted time. The disk serves one request queue, reads and writes alike; reads run
/// `slots - 1` chunks ahead of the update, so what the update waits for is the first chunk's
/// read and whatever transfer time its compute does not cover.
struct SwapPlan {
  int64_t readBytes = 0, writeBytes = 0, stepReadBytes = 0, chunks = 0, slots = 0, slotBytes = 0;
  double transferSeconds = 0, exposedSeconds = 0;
};
SwapPlan swapPlan(func::FuncOp step, func::FuncOp update, const CostModel &costs, const MemoryPlan &arena,
                  int64_t microBatches);

} // namespace mlir::zc::report

#endif // ZCC_PASSES_REPORTPREDICT_H
