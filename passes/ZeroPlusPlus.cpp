//===- ZeroPlusPlus.cpp - ZeRO++: qwZ, hpZ and qgZ -------------------------===//
//
// ZeRO-3 moves 3M bytes a step per rank (two gathers and a reduce-scatter of
// the model), mostly across nodes, whose links are several times slower than
// a node's. ZeRO++ (Wang et al. 2023) cuts what crosses: the forward gather
// sends int8 blocks (qwZ); the backward gathers stay inside groups of K ranks
// that keep a secondary copy of the parameters from the forward gather (hpZ);
// the gradient reduction sends int4 blocks, first inside the node, then one
// node-summed block across (qgZ). Runs on the bucketed functions, before
// zcc-schedule, so the new gathers are scheduled like the ones they replace.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "zrt/Quantize.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCZEROPLUSPLUS
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

RankedTensorType quantizedRows(ArrayRef<int64_t> leading, int64_t cols, int64_t block, int32_t bits,
                               MLIRContext *ctx) {
  SmallVector<int64_t> shape(leading.begin(), leading.end());
  shape.push_back(zrt::quant::rowBytes(cols, block, bits));
  return RankedTensorType::get(shape, IntegerType::get(ctx, 8));
}

/// A ZeRO-3 parameter gather as zcc-bucket or expandParamGathers left it:
/// pack_shards -> all_gather (data axis) -> unpack.
struct ParamGather {
  PackShardsOp pack;
  AllGatherOp gather;
  UnpackOp unpack;
};

std::optional<ParamGather> paramGather(AllGatherOp gather) {
  if (gather.getAxis() != MeshAxis::data || !gather->hasOneUse())
    return std::nullopt;
  auto pack = gather.getInput().getDefiningOp<PackShardsOp>();
  auto unpack = dyn_cast<UnpackOp>(*gather->getUsers().begin());
  if (!pack || !pack->hasOneUse() || !unpack)
    return std::nullopt;
  return ParamGather{pack, gather, unpack};
}

struct ZeroPlusPlus {
  ModuleOp module;
  int64_t ranks = 1; // data-parallel ranks
  bool quantizedWeights = false, quantizedGradients = false;
  int64_t hpz = 1, nodeRanks = 1, weightBlock = 2048, gradientBlock = 512;
  DenseMap<StringAttr, FlatSymbolRefAttr> secondaries; // parameter -> its hpZ secondary state

  /// qwZ: the gather of `own` (a [S] shard bucket) as int8 rows; returns the [ranks * S] values.
  Value quantizedGather(OpBuilder &b, Location loc, Value own) {
    RankedTensorType type = tensorOf(own);
    const int64_t shard = type.getNumElements();
    MLIRContext *ctx = b.getContext();
    Value row = ReshapeOp::create(b, loc, RankedTensorType::get({1, shard}, type.getElementType()), own);
    Value q = QuantizeOp::create(b, loc, quantizedRows({1}, shard, weightBlock, 8, ctx), row, weightBlock, 8);
    Value all = AllGatherOp::create(b, loc, quantizedRows({ranks}, shard, weightBlock, 8, ctx), q, ranks);
    Value rows = DequantizeOp::create(b, loc, RankedTensorType::get({ranks, shard}, type.getElementType()), all,
                                      weightBlock, 8);
    return ReshapeOp::create(b, loc, RankedTensorType::get({ranks * shard}, type.getElementType()), rows);
  }

  /// hpZ's secondary state of each ZeRO-3 parameter: R = ranks / hpz chunks of its shard.
  void declareSecondaries() {
    OpBuilder b(module.getBodyRegion());
    for (ParamOp param : llvm::to_vector(module.getOps<ParamOp>())) {
      b.setInsertionPointAfter(param);
      ParamSharding s = ParamSharding::of(param);
      if (!s.param)
        continue;
      Type element = param.getTensorType().getElementType();
      auto type = RankedTensorType::get({s.shardElements() * (ranks / hpz)}, element);
      auto state = StateOp::create(b, param.getLoc(), b.getStringAttr(param.getSymName() + ".secondary"),
                                   TypeAttr::get(type), FlatSymbolRefAttr::get(param.getSymNameAttr()),
                                   b.getUnitAttr(), /*mask_keep=*/FloatAttr(), /*mask_rows=*/IntegerAttr());
      secondaries[param.getSymNameAttr()] = FlatSymbolRefAttr::get(state.getSymNameAttr());
    }
  }

  ArrayAttr secondariesOf(OpBuilder &b, PackShardsOp pack) {
    SmallVector<Attribute> names;
    for (Attribute p : pack.getParams())
      names.push_back(secondaries.lookup(cast<FlatSymbolRefAttr>(p).getAttr()));
    return b.getArrayAttr(names);
  }

  /// qwZ and hpZ on the ZeRO-3 gathers of one function; `backwardStart`: where its backward
  /// pass begins (null: a forward-only function).
  void rewriteGathers(func::FuncOp fn, Operation *backwardStart) {
    SmallVector<ParamGather> gathers;
    fn.walk([&](AllGatherOp g) {
      if (std::optional<ParamGather> pg = paramGather(g))
        gathers.push_back(*pg);
    });
    for (ParamGather &pg : gathers) {
      OpBuilder b(pg.gather);
      Location loc = pg.gather.getLoc();
      const bool backward = backwardStart && !pg.gather->isBeforeInBlock(backwardStart);
      Value all;
      if (backward && hpz > 1) {
        // From this group's secondary shards, inside the group, at full precision.
        b.setInsertionPoint(pg.pack);
        Value own = PackSecondaryOp::create(b, pg.pack.getLoc(),
                                            RankedTensorType::get({tensorOf(pg.pack.getResult()).getNumElements() *
                                                                   (ranks / hpz)},
                                                                  tensorOf(pg.pack.getResult()).getElementType()),
                                            secondariesOf(b, pg.pack), ranks, hpz);
        b.setInsertionPoint(pg.gather);
        all = AllGatherOp::create(b, loc, pg.gather.getType(), own, hpz, MeshAxis::hpz);
        pg.gather.getResult().replaceAllUsesWith(all);
        pg.gather->erase();
        pg.pack->erase();
        continue;
      }
      if (quantizedWeights) {
        all = quantizedGather(b, loc, pg.pack.getResult());
        pg.gather.getResult().replaceAllUsesWith(all);
        pg.gather->erase();
      } else {
        all = pg.gather.getResult();
      }
      if (hpz > 1 && backwardStart) { // the forward gather leaves each group the whole parameters
        b.setInsertionPoint(pg.unpack);
        KeepSecondaryOp::create(b, loc, all, ranks, hpz, secondariesOf(b, pg.pack));
      }
    }
  }

  /// What runs after a reduction's first hop, to be moved later in the backward pass: `tail`
  /// up to the second hop's issue, then `rest` (the second hop's result onwards and the ops that
  /// read the reduced gradient). `issue`: the chain's first op, where its work is queued.
  struct Deferred {
    Operation *issue = nullptr;
    SmallVector<Operation *> tail, rest;
  };
  SmallVector<Deferred> deferred;

  /// qgZ: a data-parallel reduce-scatter over all `ranks` as two quantized all-to-all hops.
  /// `defer`: the ops after the first hop move later in the block (placeDeferred), so the
  /// hop's transfer overlaps the backward pass, as a reduce-scatter's does.
  void rewriteReduceScatter(ReduceScatterOp rs, bool defer) {
    OpBuilder b(rs);
    Operation *before = rs->getPrevNode();
    Location loc = rs.getLoc();
    MLIRContext *ctx = b.getContext();
    RankedTensorType result = tensorOf(rs.getResult());
    Type element = result.getElementType(), f32 = b.getF32Type();
    const int64_t shard = result.getNumElements();
    Value input = rs.getInput();
    // ZeRO's padded form (any shape, numel not ranks x shard): pad through a bucket of one.
    if (tensorOf(input).getRank() != 1 || tensorOf(input).getNumElements() != ranks * shard)
      input = PackOp::create(b, loc, RankedTensorType::get({ranks * shard}, element), ValueRange{input}, ranks);
    const int64_t local = nodeRanks, nodes = ranks / nodeRanks;
    // Chunk c = node g x local + l goes to data rank c. Hop 1 sends local rank l the chunks of
    // every node's rank l: [nodes, local, S] transposed to [local, nodes, S].
    Value x = ReshapeOp::create(b, loc, RankedTensorType::get({nodes, local, shard}, element), input);
    Value summed; // [nodes, S] in f32: this node's sum of the chunks of ranks with my place
    if (local > 1) {
      x = TransposeOp::create(b, loc, RankedTensorType::get({local, nodes, shard}, element), x,
                              b.getDenseI64ArrayAttr({1, 0, 2}));
      Value q = QuantizeOp::create(b, loc, quantizedRows({local, nodes}, shard, gradientBlock, 4, ctx), x,
                                   gradientBlock, 4);
      Value got = AllToAllOp::create(b, loc, q, local, MeshAxis::node);
      Value values = DequantizeOp::create(b, loc, RankedTensorType::get({local, nodes, shard}, f32), got,
                                          gradientBlock, 4);
      summed = ReduceSumOp::create(b, loc, RankedTensorType::get({nodes, shard}, f32), values,
                                   b.getDenseI64ArrayAttr({0}));
    } else {
      summed = ReshapeOp::create(b, loc, RankedTensorType::get({nodes, shard}, element), x);
      if (element != f32)
        summed = CastOp::create(b, loc, RankedTensorType::get({nodes, shard}, f32), summed);
    }
    Value total; // [S] f32
    if (nodes > 1) {
      Value q = QuantizeOp::create(b, loc, quantizedRows({nodes}, shard, gradientBlock, 4, ctx), summed,
                                   gradientBlock, 4);
      Value got = AllToAllOp::create(b, loc, q, nodes, MeshAxis::cross);
      Value values =
          DequantizeOp::create(b, loc, RankedTensorType::get({nodes, shard}, f32), got, gradientBlock, 4);
      total = ReduceSumOp::create(b, loc, RankedTensorType::get({shard}, f32), values, b.getDenseI64ArrayAttr({0}));
    } else {
      total = ReshapeOp::create(b, loc, RankedTensorType::get({shard}, f32), summed);
    }
    if (rs.getKind() == ReduceKind::avg)
      total = ScaleOp::create(b, loc, RankedTensorType::get({shard}, f32), total, b.getF64FloatAttr(1.0 / ranks));
    if (element != f32)
      total = CastOp::create(b, loc, result, total);
    rs.getResult().replaceAllUsesWith(total);
    Block *block = rs->getBlock();
    Operation *after = rs->getNextNode();
    rs->erase();
    if (defer)
      planDeferral(block, before ? before->getNextNode() : &block->front(), after);
  }

  /// Splits the chain [first, end) at its all-to-alls into what waits for each hop, with the
  /// ops that read the chain's result; records them unless one of those readers cannot move.
  void planDeferral(Block *block, Operation *first, Operation *end) {
    SmallVector<Operation *> chain;
    for (Operation *op = first; op != end; op = op->getNextNode())
      chain.push_back(op);
    auto hop = llvm::find_if(chain, [](Operation *op) { return isa<AllToAllOp>(op); });
    if (hop == chain.end())
      return;
    Deferred d;
    d.issue = chain.front();
    auto second = std::find_if(std::next(hop), chain.end(), [](Operation *op) { return isa<AllToAllOp>(op); });
    d.tail.assign(std::next(hop), second == chain.end() ? std::next(hop) : std::next(second));
    d.rest.assign(second == chain.end() ? std::next(hop) : std::next(second), chain.end());
    // The readers of the result (a bucket's unpack, the accumulates), transitively, in block order.
    SetVector<Operation *> readers;
    SmallVector<Operation *> work{chain.back()};
    while (!work.empty())
      for (Operation *user : work.pop_back_val()->getUsers())
        if (readers.insert(user))
          work.push_back(user);
    SmallVector<Operation *> sorted(readers.begin(), readers.end());
    llvm::sort(sorted, [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
    for (Operation *op : sorted)
      if (op->getBlock() != block || !(isPure(op) || isa<GradAccumulateOp>(op)))
        return; // read by something that must stay: the chain stays where it is
    d.rest.append(sorted.begin(), sorted.end());
    deferred.push_back(std::move(d));
  }

  /// Moves each deferred chain later, as zcc-schedule defers a reduce-scatter's wait: chain i's
  /// first part (up to its second hop's issue) to where chain i + 2 is queued, its rest to where
  /// chain i + 3 is (the last ones to the end of the block). Each hop's transfer overlaps the
  /// backward work queued after it, and no more than three chains hold their quantized buffers
  /// (holding them all would keep an int4 copy of every gradient, sent and received).
  void placeDeferred(Block &block) {
    Operation *end = block.getTerminator();
    auto issueOf = [&](size_t i) { return i < deferred.size() ? deferred[i].issue : end; };
    for (size_t i = 0; i < deferred.size(); ++i) {
      for (Operation *op : deferred[i].tail)
        op->moveBefore(issueOf(i + 2));
      for (Operation *op : deferred[i].rest)
        op->moveBefore(issueOf(i + 3));
    }
    deferred.clear();
  }
};

struct ZccZeroPlusPlusPass : zc::impl::ZccZeroPlusPlusBase<ZccZeroPlusPlusPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!quantizedWeights && hpz <= 1 && !quantizedGradients)
      return;
    ZeroPlusPlus z;
    z.module = module;
    z.quantizedWeights = quantizedWeights;
    z.quantizedGradients = quantizedGradients;
    z.hpz = hpz;
    z.nodeRanks = ranksPerNode;
    z.weightBlock = weightBlock;
    z.gradientBlock = gradientBlock;
    bool stage3 = false;
    for (ParamOp param : module.getOps<ParamOp>()) {
      ParamSharding s = ParamSharding::of(param);
      z.ranks = std::max(z.ranks, s.ranks);
      stage3 |= s.param;
    }
    if (z.nodeRanks <= 0 || z.nodeRanks > z.ranks)
      z.nodeRanks = z.ranks;
    if (z.ranks < 2) {
      module.emitError("zcc-zero-pp: ZeRO++ needs ZeRO over at least two data-parallel ranks");
      return signalPassFailure();
    }
    if (z.ranks % z.nodeRanks || z.ranks % std::max<int64_t>(1, hpz)) {
      module.emitError() << "zcc-zero-pp: " << z.ranks << " data-parallel ranks are not whole nodes of "
                         << z.nodeRanks << " and hpZ groups of " << hpz;
      return signalPassFailure();
    }
    if ((quantizedWeights || hpz > 1) && !stage3) {
      module.emitError("zcc-zero-pp: quantized weights and hpZ change ZeRO-3's parameter gathers: they need "
                       "--zero-stage 3 and a parameter above the persistence threshold");
      return signalPassFailure();
    }
    if (weightBlock < 1 || gradientBlock < 2 || gradientBlock % 2) {
      module.emitError("zcc-zero-pp: blocks must be positive, the gradients' even (int4 bytes hold two)");
      return signalPassFailure();
    }
    if (hpz > 1)
      z.declareSecondaries();
    for (func::FuncOp fn : plannedFunctions(module)) {
      if (!fn)
        continue;
      expandParamGathers(fn.getBody().front());
      Operation *backwardStart = nullptr;
      fn.walk([&](arith::ConstantOp c) {
        if (c->hasAttr(kBackwardSeedAttr))
          backwardStart = c;
      });
      if (quantizedWeights || hpz > 1)
        z.rewriteGathers(fn, backwardStart);
      if (quantizedGradients) {
        SmallVector<ReduceScatterOp> reductions;
        fn.walk([&](ReduceScatterOp rs) {
          if (rs.getAxis() == MeshAxis::data && static_cast<int64_t>(rs.getRanks()) == z.ranks)
            reductions.push_back(rs);
        });
        // In the step, each reduction's work after its first hop waits for the end of the backward
        // pass; the update (ZeRO-1) has nothing to overlap.
        const bool defer = fn->getAttrOfType<StringAttr>("zc.role").getValue() == "step";
        for (ReduceScatterOp rs : reductions)
          z.rewriteReduceScatter(rs, defer);
        z.placeDeferred(fn.getBody().front());
      }
    }
    Builder b(&getContext());
    module->setAttr("zc.hierarchy", b.getDictionaryAttr({b.getNamedAttr("ranks_per_node", b.getI64IntegerAttr(z.nodeRanks)),
                                                         b.getNamedAttr("hpz", b.getI64IntegerAttr(std::max<int64_t>(1, hpz)))}));
  }
};

} // namespace
