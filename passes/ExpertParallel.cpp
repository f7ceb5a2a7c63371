//===- ExpertParallel.cpp - the experts sharded over the expert-parallel ranks ===//
//
// GShard's and DeepSpeed-MoE's expert parallelism over `ranks` consecutive data-parallel ranks
// (an expert group), after zcc-shard-batch: every rank routes its own micro-batch as before,
// and each MoE layer's expert products move to the ranks that hold the experts.
//
//   %all, %local = zc.ep_counts %offsets        every group rank's offsets; my experts' rows
//   %xr = zc.ep_dispatch %xs, %all              the rows to their experts' ranks
//   ... grouped products on %xr with %local and the local weights [E / ranks, ...] ...
//   %ys = zc.ep_combine %yr, %all               the outputs back, in moe_dispatch's order
//   %y = zc.moe_combine %ys, ...
//
// The experts' rows are followed from each zc.moe_dispatch to the zc.moe_combine that reads
// them: grouped products, the row-wise ops between them (SwiGLU's silu and product, a fused
// gate/up product's slices) take the received rows' bound as their leading size; anything else
// reading them is refused (it would mix rows of other ranks' tokens). Autodiff derives the
// backward: each exchange's gradient is the other exchange.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "zrt/MoeLayout.h"

#include "llvm/ADT/SetVector.h"

#include <cmath>

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCEXPERTPARALLEL
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

/// `t` with `rows` as its leading size.
RankedTensorType withRows(RankedTensorType t, int64_t rows) {
  SmallVector<int64_t> shape(t.getShape());
  shape[0] = rows;
  return t.clone(shape);
}

struct ZccExpertParallelPass : zc::impl::ZccExpertParallelBase<ZccExpertParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<ExpertBound> parsed = ExpertBound::parse(maxRowsPerExpert);
    if (ranks < 1 || !parsed) {
      module.emitError("zcc-expert-parallel: ranks must be positive and max-rows-per-expert N or Fx, got '")
          << maxRowsPerExpert << "'";
      return signalPassFailure();
    }
    bound = *parsed;
    SmallVector<MoeRouteOp> routes;
    module.walk([&](MoeRouteOp route) { routes.push_back(route); });
    Builder b(module.getContext());
    // The mesh's expert axis, for the model description (train.bin's zrt_set_experts): on every
    // stage's, one without MoE layers too (its ranks are in expert groups all the same).
    if (ranks > 1)
      module->setAttr("zc.expert_parallel",
                      b.getDictionaryAttr({b.getNamedAttr("ranks", b.getI64IntegerAttr(ranks))}));
    // A pipeline stage (zcc-pipeline-stage) may hold no MoE layer; the whole model must.
    if (routes.empty() && module->hasAttr("zc.pipeline"))
      return;
    if (routes.empty()) {
      Operation *at = module;
      module.walk([&](ForwardOp forward) { at = forward; });
      at->emitError() << "--ep " << static_cast<int64_t>(ranks)
                      << ": the model has no MoE layer (zc.moe_route) whose experts to split";
      return signalPassFailure();
    }
    if (ranks == 1)
      return;
    for (MoeRouteOp route : routes)
      if (failed(splitLayer(route)))
        return signalPassFailure();
    // The expert weights' local types, on the symbols and on every read.
    DenseMap<StringAttr, RankedTensorType> local;
    for (ParamOp param : module.getOps<ParamOp>())
      if (experts.contains(param.getSymNameAttr())) {
        RankedTensorType t = param.getTensorType();
        SmallVector<int64_t> shape(t.getShape());
        shape[0] /= ranks;
        local[param.getSymNameAttr()] = t.clone(shape);
        param.setTypeAttr(TypeAttr::get(t.clone(shape)));
        param->setAttr(kEpSplitAttr, b.getDictionaryAttr({b.getNamedAttr("ranks", b.getI64IntegerAttr(ranks))}));
      }
    module.walk([&](ParamRefOp ref) {
      if (auto it = local.find(ref.getNameAttr().getAttr()); it != local.end())
        ref.getResult().setType(it->second);
    });
  }

  /// One MoE layer: the exchanges around its expert products.
  LogicalResult splitLayer(MoeRouteOp route) {
    RankedTensorType offsetsType = tensorOf(route.getOffsets());
    const int64_t E = offsetsType.getDimSize(0) - 1;
    if (E % ranks != 0)
      return route.emitOpError() << "--ep " << static_cast<int64_t>(ranks) << " does not divide this layer's " << E << " experts";
    const int64_t tokens = tensorOf(route.getLogits()).getNumElements() / E, dispatched = route.getDispatchedRows();
    // The balanced count: the group's dispatched rows spread over the experts.
    const int64_t maxRows = bound.rowsFor((ranks * dispatched + E - 1) / E);
    const int64_t received = zrt::moeReceivedRows(dispatched, tokens, E, static_cast<int64_t>(route.getTopK()),
                                                  route.getCapacityFactorOrZero(), ranks, maxRows);
    OpBuilder b(route->getContext());
    b.setInsertionPointAfter(route);
    auto counts = EpCountsOp::create(b, route.getLoc(), offsetsType.clone({ranks, E + 1}),
                                     offsetsType.clone({E / ranks + 1}), route.getOffsets(),
                                     static_cast<uint64_t>(ranks), static_cast<uint64_t>(received),
                                     static_cast<uint64_t>(dispatched), static_cast<uint64_t>(maxRows));
    Value all = counts.getAll(), localOffsets = counts.getLocalOffsets();

    SmallVector<MoeDispatchOp> dispatches;
    for (Operation *user : route.getRows().getUsers())
      if (auto d = dyn_cast<MoeDispatchOp>(user))
        dispatches.push_back(d);
    if (dispatches.empty())
      return route.emitOpError("zcc-expert-parallel: no zc.moe_dispatch reads this routing's rows");

    // The values holding experts' rows (received: [received, ...]) and what reads them.
    llvm::SetVector<Value> rowValues;
    for (MoeDispatchOp d : dispatches) {
      b.setInsertionPointAfter(d);
      Value xs = d.getResult();
      auto xr = EpDispatchOp::create(b, d.getLoc(), withRows(tensorOf(xs), received), xs, all,
                                     static_cast<uint64_t>(ranks));
      xs.replaceAllUsesExcept(xr.getResult(), xr);
      rowValues.insert(xr.getResult());
    }
    for (size_t i = 0; i < rowValues.size(); ++i) {
      Value v = rowValues[i];
      for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
        Operation *user = use.getOwner();
        if (isa<EpDispatchOp>(user))
          continue;
        if (auto combine = dyn_cast<MoeCombineOp>(user)) {
          if (combine.getRows() != route.getRows())
            return combine.emitOpError("zcc-expert-parallel: combines rows of another routing than they were "
                                       "dispatched by");
          b.setInsertionPoint(combine);
          auto back = EpCombineOp::create(b, combine.getLoc(),
                                          withRows(tensorOf(v), route.getDispatchedRows()), v, all,
                                          static_cast<uint64_t>(ranks));
          use.set(back.getResult());
          continue;
        }
        if (auto grouped = dyn_cast<GroupedMatmulOp>(user)) {
          if (use.getOperandNumber() != 0 || grouped.getOffsets() != route.getOffsets())
            return grouped.emitOpError("zcc-expert-parallel: an expert product of these rows must use this "
                                       "routing's offsets");
          auto ref = grouped.getWeight().getDefiningOp<ParamRefOp>();
          if (!ref)
            return grouped.emitOpError("zcc-expert-parallel: the experts' weights must be a parameter read "
                                       "(zc.param_ref) to be split over the expert-parallel ranks");
          experts.insert(ref.getNameAttr().getAttr());
          grouped.getOffsetsMutable().assign(localOffsets);
          grouped.getResult().setType(withRows(tensorOf(grouped.getResult()), tensorOf(v).getDimSize(0)));
          rowValues.insert(grouped.getResult());
          continue;
        }
        if (failed(followRowWise(user, v, route.getDispatchedRows(), rowValues)))
          return failure();
      }
    }
    // A row-wise op waits until all its operands are known experts' rows: one still waiting
    // reads a value that is not theirs.
    for (Value v : rowValues)
      for (Operation *user : v.getUsers())
        if (!isa<EpDispatchOp, EpCombineOp, GroupedMatmulOp>(user) && !followed.contains(user))
          return user->emitOpError("zcc-expert-parallel: mixes the experts' rows with a value that is not theirs");
    return success();
  }

  /// A row-wise op of experts' rows: its result has the received rows too. Every tensor
  /// operand must hold experts' rows (a replicated one would be read at other tokens' rows).
  LogicalResult followRowWise(Operation *user, Value v, int64_t dispatched, llvm::SetVector<Value> &rowValues) {
    const int64_t rows = tensorOf(v).getDimSize(0);
    bool rowWise = isa<AddOp, SubOp, MulOp, ScaleOp, ReluOp, GeluOp, SiluOp>(user);
    if (auto slice = dyn_cast<SliceOp>(user)) // every row: a slice of the features (a fused gate/up's halves)
      rowWise = slice.getOffsets()[0] == 0 &&
                llvm::is_contained({dispatched, rows}, tensorOf(slice.getResult()).getDimSize(0));
    if (!rowWise || user->getNumResults() != 1)
      return user->emitOpError("zcc-expert-parallel: reads the experts' dispatched rows but has no row-wise rule "
                               "(the rows on an expert's rank are other ranks' tokens)");
    if (followed.contains(user))
      return success();
    for (Value operand : user->getOperands())
      if (!rowValues.contains(operand))
        return success(); // until its other operands are reached (else refused after the walk)
    followed.insert(user);
    Value result = user->getResult(0);
    if (tensorOf(result).getDimSize(0) != rows)
      result.setType(withRows(tensorOf(result), rows));
    rowValues.insert(result);
    return success();
  }

  ExpertBound bound;                         // max-rows-per-expert, parsed
  llvm::SmallDenseSet<StringAttr> experts; // the split weights
  DenseSet<Operation *> followed;          // the row-wise ops whose results hold experts' rows
};

} // namespace

std::optional<ExpertBound> ExpertBound::parse(llvm::StringRef text) {
  ExpertBound b;
  text = text.trim();
  if (text.empty())
    return b;
  if (text.consume_back("x") || text.consume_back("X")) {
    if (text.getAsDouble(b.factor) || !(b.factor >= 1) || !std::isfinite(b.factor))
      return std::nullopt; // under the balanced count every step would stop
    return b;
  }
  if (text.getAsInteger(10, b.rows) || b.rows < 0)
    return std::nullopt;
  return b;
}

int64_t ExpertBound::rowsFor(int64_t balanced) const {
  if (factor > 0)
    return static_cast<int64_t>(std::ceil(factor * double(balanced) - 1e-9));
  return rows;
}
