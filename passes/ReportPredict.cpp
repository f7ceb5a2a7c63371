//===- ReportPredict.cpp - the report's predictions under the cost model ---===//

#include "passes/ReportPredict.h"

#include "passes/Passes.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::zc;
using namespace mlir::zc::report;

double mlir::zc::report::collectiveSeconds(Operation *op, const CostModel &costs) {
  auto sent = [](RankedTensorType shard, int64_t ranks) {
    return double(ranks - 1) * shard.getNumElements() * elementBytes(shard);
  };
  if (auto o = dyn_cast<AllGatherStartOp>(op))
    return costs.allGather.seconds(sent(tensorOf(o.getInput()), o.getRanks()));
  if (auto o = dyn_cast<AllGatherOp>(op))
    return costs.allGather.seconds(sent(tensorOf(o.getInput()), o.getRanks()));
  if (auto o = dyn_cast<ReduceScatterStartOp>(op))
    return costs.reduceScatter.seconds(sent(awaitedType(o.getHandle()), o.getRanks()));
  if (auto o = dyn_cast<ReduceScatterOp>(op))
    return costs.reduceScatter.seconds(sent(tensorOf(o.getResult()), o.getRanks()));
  auto allReduce = [&](RankedTensorType t, int64_t n) {
    return costs.allReduce.seconds(2.0 * (n - 1) * t.getNumElements() * elementBytes(t) / n);
  };
  if (auto o = dyn_cast<AllReduceStartOp>(op))
    return allReduce(tensorOf(o.getInput()), o.getRanks());
  if (isa<AllToAllOp, AllToAllStartOp>(op)) { // priced as an all-gather of the blocks sent
    RankedTensorType t = tensorOf(op->getOperand(0));
    const double ranks = double(op->getAttrOfType<IntegerAttr>("ranks").getInt());
    return costs.allGather.seconds((ranks - 1) / ranks * double(t.getNumElements()) * elementBytes(t));
  }
  if (auto o = dyn_cast<AllReduceOp>(op))
    return allReduce(tensorOf(o.getInput()), o.getRanks());
  if (isExpertExchange(op)) { // (ranks - 1) / ranks of the balanced rows, priced as the all-to-all above
    RankedTensorType local = expertLocalRows(op);
    const double rows = double(expertBalancedRows(op));
    const double ranks = double(op->getAttrOfType<IntegerAttr>("ranks").getInt());
    return costs.allGather.seconds((ranks - 1) / ranks * rows * local.getDimSize(1) * elementBytes(local));
  }
  if (isa<GatherParamOp, AllGatherParamOp>(op)) {
    auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(op, op->getAttrOfType<FlatSymbolRefAttr>("param"));
    ParamSharding s = ParamSharding::of(param);
    return costs.allGather.seconds(double(s.ranks - 1) * s.shardElements() *
                                   elementBytes(param.getTensorType()));
  }
  return 0;
}


void mlir::zc::report::predictTimeline(func::FuncOp fn, const CostModel &costs, int64_t times, double &compute,
                                      double &comm, double &exposed) {
  double clock = 0, stream = 0, computeHere = 0, commHere = 0, exposedHere = 0;
  DenseMap<Value, double> finish;
  for (Operation &op : fn.getBody().front()) {
    double cost = collectiveSeconds(&op, costs);
    if (isCollectiveStart(&op)) {
      stream = std::max(stream, clock) + cost;
      finish[op.getResult(0)] = stream;
      commHere += cost;
    } else if (auto wait = dyn_cast<WaitOp>(op)) {
      double done = finish.lookup(wait.getHandle());
      exposedHere += std::max(0.0, done - clock);
      clock = std::max(clock, done);
    } else if (cost > 0) { // blocking: queued behind the stream, then the compute thread waits
      double done = std::max(stream, clock) + cost;
      exposedHere += done - clock;
      clock = stream = done;
      commHere += cost;
    } else {
      double t = estimatedFlops(&op) / costs.computeFlopsPerSecond;
      clock += t;
      computeHere += t;
    }
  }
  compute += times * computeHere;
  comm += times * commHere;
  exposed += times * exposedHere;
}

SwapPlan mlir::zc::report::swapPlan(func::FuncOp step, func::FuncOp update, const CostModel &costs,
                                    const MemoryPlan &arena, int64_t microBatches) {
  SwapPlan p;
  p.slots = arena.swapSlots;
  p.slotBytes = arena.swapSlotBytes;
  auto bytes = [](Operation *op) {
    std::optional<Offload::Swapped> t = Offload::lookup(op, op->getAttrOfType<FlatSymbolRefAttr>("state"));
    return Offload::swapBytes(op->getAttrOfType<IntegerAttr>("count").getInt(), t ? t->elementBytes : 4);
  };
  // The gathers' shards (--offload-param): read once per gather, every micro-batch; read ahead
  // of the packs, so their time is exposed only where the step's compute does not cover it
  // (counted in the transfer time, not in the exposed time).
  if (step)
    step.walk([&](SwapInOp op) { p.stepReadBytes += microBatches * bytes(op); });
  if (!update)
    return p;
  double compute = 0, firstRead = -1;
  update.walk([&](Operation *op) {
    if (isa<SwapInOp>(op)) {
      p.readBytes += bytes(op);
      if (firstRead < 0)
        firstRead = bytes(op) / costs.nvmeReadBytesPerSecond;
    } else if (isa<SwapOutOp>(op)) {
      p.writeBytes += bytes(op);
    } else if (op->hasAttr("swap_slot")) {
      p.chunks += 1;
      auto chunk = op->getAttrOfType<DenseI64ArrayAttr>("chunk");
      compute += estimatedFlops(op) * chunk[1] / std::max<int64_t>(1, tensorOf(op->getOperand(0)).getNumElements()) /
                 costs.computeFlopsPerSecond;
    }
  });
  p.transferSeconds = (p.readBytes + p.stepReadBytes) / costs.nvmeReadBytesPerSecond +
                      p.writeBytes / costs.nvmeWriteBytesPerSecond;
  if (p.chunks)
    p.exposedSeconds = std::max(0.0, firstRead) + std::max(0.0, p.transferSeconds - compute);
  return p;
}

