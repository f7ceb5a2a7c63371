//===- Report.cpp - per-rank memory and communication of the training plan ===//

#include "passes/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCREPORT
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

int64_t elementBytes(RankedTensorType t) { return t.getElementTypeBitWidth() / 8; }

struct Plan {
  int64_t paramTensors = 0, paramBytes = 0, gradBytes = 0, optimizerBytes = 0, gatheredPeakBytes = 0;
  int64_t allGathers = 0, reduceScatters = 0, allReduces = 0, commBytes = 0;
};

/// Counts the collectives of `fn`, `times` runs of it, with the bytes a rank sends
/// under ring algorithms (what the runtime's counters add up).
void countCollectives(func::FuncOp fn, int64_t times, Plan &plan) {
  fn.walk([&](Operation *op) {
    if (auto o = dyn_cast<AllReduceOp>(op)) {
      RankedTensorType t = tensorOf(o.getInput());
      int64_t n = static_cast<int64_t>(o.getRanks());
      plan.allReduces += times;
      plan.commBytes += times * 2 * (n - 1) * t.getNumElements() * elementBytes(t) / n;
    } else if (auto o = dyn_cast<ReduceScatterOp>(op)) {
      RankedTensorType shard = tensorOf(o.getResult());
      plan.reduceScatters += times;
      plan.commBytes += times * (static_cast<int64_t>(o.getRanks()) - 1) * shard.getNumElements() *
                        elementBytes(shard);
    } else if (isa<GatherParamOp, AllGatherParamOp>(op)) {
      auto name = op->getAttrOfType<FlatSymbolRefAttr>("param");
      auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(op, name);
      ParamSharding s = ParamSharding::of(param);
      plan.allGathers += times;
      plan.commBytes += times * (s.ranks - 1) * s.shardElements() * elementBytes(param.getTensorType());
    } else if (auto o = dyn_cast<AllGatherOp>(op)) {
      RankedTensorType shard = tensorOf(o.getInput());
      plan.allGathers += times;
      plan.commBytes += times * (static_cast<int64_t>(o.getRanks()) - 1) * shard.getNumElements() *
                        elementBytes(shard);
    }
  });
}

struct ZccReportPass : zc::impl::ZccReportBase<ZccReportPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Plan plan;
    for (ParamOp param : module.getOps<ParamOp>()) {
      ParamSharding s = ParamSharding::of(param);
      plan.paramTensors += 1;
      plan.paramBytes += s.paramStorage() * elementBytes(param.getTensorType());
      plan.gradBytes += s.gradStorage() * elementBytes(param.getTensorType());
    }
    for (StateOp state : module.getOps<StateOp>())
      plan.optimizerBytes += state.getTensorType().getNumElements() * elementBytes(state.getTensorType());
    for (auto fn : module.getOps<func::FuncOp>()) {
      auto role = fn->getAttrOfType<StringAttr>("zc.role");
      if (!role)
        continue;
      bool isStep = role.getValue() == "step";
      countCollectives(fn, isStep ? microBatches : 1, plan);
      if (!isStep)
        continue;
      // Gathered parameters live from their zc.gather_param to their zc.release.
      int64_t live = 0;
      DenseMap<Value, int64_t> gathered;
      fn.walk([&](Operation *op) {
        if (auto g = dyn_cast<GatherParamOp>(op)) {
          auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(g, g.getParamAttr());
          int64_t bytes = ParamSharding::of(param).paddedElements() * elementBytes(param.getTensorType());
          gathered[g.getResult()] = bytes;
          live += bytes;
          plan.gatheredPeakBytes = std::max(plan.gatheredPeakBytes, live);
        } else if (auto r = dyn_cast<ReleaseOp>(op)) {
          live -= gathered.lookup(r.getInput());
        }
      });
    }

    std::string error;
    auto file = openOutputFile(output, &error);
    if (!file) {
      module.emitError("zcc-report: ") << error;
      return signalPassFailure();
    }
    llvm::raw_ostream &os = file->os();
    if (format == "json") {
      llvm::json::Object report{
          {"param_tensors", plan.paramTensors},
          {"param_bytes", plan.paramBytes},
          {"grad_bytes", plan.gradBytes},
          {"optimizer_bytes", plan.optimizerBytes},
          {"model_state_bytes", plan.paramBytes + plan.gradBytes + plan.optimizerBytes},
          {"gathered_param_peak_bytes", plan.gatheredPeakBytes},
          {"collectives", llvm::json::Object{{"all_gather", plan.allGathers},
                                             {"reduce_scatter", plan.reduceScatters},
                                             {"all_reduce", plan.allReduces}}},
          {"comm_bytes", plan.commBytes}};
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
    } else {
      os << "zcc plan, per rank:\n"
         << "  param_bytes                " << plan.paramBytes << "\n"
         << "  grad_bytes                 " << plan.gradBytes << "\n"
         << "  optimizer_bytes            " << plan.optimizerBytes << "\n"
         << "  model_state_bytes          " << plan.paramBytes + plan.gradBytes + plan.optimizerBytes << "\n"
         << "  gathered_param_peak_bytes  " << plan.gatheredPeakBytes << "\n"
         << "  per step: all_gather " << plan.allGathers << ", reduce_scatter " << plan.reduceScatters
         << ", all_reduce " << plan.allReduces << ", comm_bytes " << plan.commBytes << "\n";
    }
    file->keep();
  }
};

} // namespace
