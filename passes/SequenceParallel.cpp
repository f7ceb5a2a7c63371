//===- SequenceParallel.cpp - the tokens between tensor-parallel regions split ===//
//
// Megatron-LM's sequence parallelism (Korthikanti et al. 2022). zcc-tensor-parallel
// leaves everything between its regions whole on every tensor-parallel rank: the
// residual stream, the norms, the embeddings' sum and the loss's inputs. Those ops
// are token-wise (each token's output reads only that token), so each rank can run
// them on 1/ranks of the tokens instead:
//
//  - A region's zc.tp_reduce becomes a reduce-scatter (`sequence`): each rank keeps
//    its tokens of the sum. That split value flows through the token-wise ops after
//    it, each now on its part.
//  - The next region's zc.tp_copy becomes an all-gather (`sequence`) of the parts;
//    its gradient a reduce-scatter. Reduce-scatter + all-gather move the bytes of
//    the one all-reduce they replace, forward and backward.
//  - A replicated activation that meets the split stream (a pipeline stage's input,
//    an embedding no region reduces) keeps this rank's part: zc.sp_shard, no
//    communication. Any other consumer of a split value (a head or loss not split
//    over the vocabulary, attention outside a region, a stage's output) reads the
//    whole value: zc.sp_gather.
//  - A parameter a split op reads (norm gains, biases, a position table) sees only
//    this rank's tokens, so its gradient is a partial sum: it is read through a
//    zc.tp_copy, whose gradient is the sum over the group.
//
// The split is of the local tensors (after zcc-shard-batch and the pipeline cut):
// the first axis longer than 1, the batch or, with one sequence per micro-batch,
// the tokens (sequenceShardType). Rank r holds the r-th contiguous part, which is
// what the collectives move; a value whose part is not whole (an axis that does
// not divide) stays replicated.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCSEQUENCEPARALLEL
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

/// How a token-wise op reads its operands: the ones that carry the tokens (split
/// with the result) and the ones every token reads whole (gains, biases).
struct TokenWise {
  SmallVector<unsigned, 2> tokens, shared;
};

/// The operands of `op` when `op` is token-wise for a result split along `axis`: the
/// ops that mix values only along axes after it. None otherwise.
std::optional<TokenWise> tokenWise(Operation *op, int64_t axis) {
  auto trailing = [&](Value v, int64_t axes) { // the op mixes only the last `axes` axes
    return axis < tensorOf(v).getRank() - axes;
  };
  return TypeSwitch<Operation *, std::optional<TokenWise>>(op)
      .Case<AddOp, SubOp, MulOp, MoeSharedGateOp>([](Operation *) { return TokenWise{{0, 1}, {}}; })
      .Case<ScaleOp, ReluOp, GeluOp, SiluOp, CastOp>([](Operation *) { return TokenWise{{0}, {}}; })
      .Case([&](SoftmaxOp o) -> std::optional<TokenWise> {
        if (!trailing(o.getResult(), 1))
          return std::nullopt;
        return TokenWise{{0}, {}};
      })
      .Case([&](BiasAddOp o) -> std::optional<TokenWise> {
        if (!trailing(o.getResult(), tensorOf(o.getBias()).getRank()))
          return std::nullopt;
        return TokenWise{{0}, {1}};
      })
      .Case([&](LayerNormOp o) -> std::optional<TokenWise> {
        if (!trailing(o.getResult(), 1))
          return std::nullopt;
        return TokenWise{{0}, {1, 2}};
      })
      .Case([&](RmsNormOp o) -> std::optional<TokenWise> {
        if (!trailing(o.getResult(), 1))
          return std::nullopt;
        return TokenWise{{0}, {1}};
      })
      // A contiguous part of the input is the same contiguous part of any view of it.
      .Case([](ReshapeOp) { return TokenWise{{0}, {}}; })
      .Case([&](TransposeOp o) -> std::optional<TokenWise> {
        for (int64_t d = 0; d <= axis; ++d)
          if (o.getPermutation()[d] != d)
            return std::nullopt;
        return TokenWise{{0}, {}};
      })
      .Case([&](SliceOp o) -> std::optional<TokenWise> {
        RankedTensorType in = tensorOf(o.getInput()), out = tensorOf(o.getResult());
        for (int64_t d = 0; d <= axis; ++d)
          if (o.getOffsets()[d] != 0 || in.getDimSize(d) != out.getDimSize(d))
            return std::nullopt;
        return TokenWise{{0}, {}};
      })
      .Default([](Operation *) { return std::nullopt; });
}

class Splitter {
public:
  Splitter(Block &body, int64_t ranks) : body(body), ranks(ranks) {}

  /// Splits what can be split, in program order: every operand is final when its user
  /// is visited.
  void run() {
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
      visit(&op);
    visitConsumer(body.getTerminator());
  }

private:
  void visit(Operation *op) {
    if (auto reduce = dyn_cast<TpReduceOp>(op)) {
      if (RankedTensorType local = sequenceShardType(tensorOf(reduce.getResult()), ranks)) {
        reduce.setSequence(true);
        markSplit(reduce.getResult(), local);
      }
      return;
    }
    if (auto copy = dyn_cast<TpCopyOp>(op)) {
      if (isSplit(copy.getInput()))
        copy.setSequence(true); // its input is this rank's part already
      return;
    }
    bool readsSplit = llvm::any_of(op->getOperands(), [&](Value v) { return isSplit(v); });
    if (!readsSplit)
      return;
    if (op->getNumResults() == 1) {
      Value result = op->getResult(0);
      RankedTensorType whole = dyn_cast<RankedTensorType>(result.getType());
      RankedTensorType local = whole ? sequenceShardType(whole, ranks) : nullptr;
      std::optional<TokenWise> how = local ? tokenWise(op, sequenceSplitAxis(whole, ranks)) : std::nullopt;
      if (how && splitsWithResult(op, *how)) {
        for (unsigned i : how->tokens)
          if (!isSplit(op->getOperand(i)))
            op->setOperand(i, shardOf(op->getOperand(i)));
        for (unsigned i : how->shared)
          op->setOperand(i, gradientSummed(op->getOperand(i)));
        markSplit(result, local);
        return;
      }
    }
    visitConsumer(op);
  }

  /// Whether the token operands of `op` split as its result does: the same type for
  /// elementwise ops, and a view's input split at all.
  bool splitsWithResult(Operation *op, const TokenWise &how) {
    for (unsigned i : how.tokens) {
      Value v = op->getOperand(i);
      if (isSplit(v))
        continue;
      if (!sequenceShardType(tensorOf(v), ranks))
        return false;
    }
    if (isa<ReshapeOp>(op))
      return true;
    // Same-shaped token operands and result: the same part of each.
    RankedTensorType result = tensorOf(op->getResult(0));
    return llvm::all_of(how.tokens, [&](unsigned i) {
      RankedTensorType t = wholeType(op->getOperand(i));
      return isa<TransposeOp, SliceOp>(op) ? sequenceSplitAxis(t, ranks) == sequenceSplitAxis(result, ranks)
                                           : t.getShape() == result.getShape();
    });
  }

  /// An op that needs whole values: each split operand gathered.
  void visitConsumer(Operation *op) {
    for (OpOperand &use : op->getOpOperands())
      if (isSplit(use.get()))
        use.set(gatherOf(use.get()));
  }

  void markSplit(Value v, RankedTensorType local) {
    whole[v] = tensorOf(v);
    v.setType(local);
  }

  bool isSplit(Value v) const { return whole.contains(v); }

  /// The type `v` has on every rank before the split (its own type if it is not split).
  RankedTensorType wholeType(Value v) const { return isSplit(v) ? whole.lookup(v) : tensorOf(v); }

  OpBuilder builderAfter(Value v) {
    OpBuilder b(v.getContext());
    if (auto arg = dyn_cast<BlockArgument>(v))
      b.setInsertionPointToStart(arg.getOwner());
    else
      b.setInsertionPointAfter(v.getDefiningOp());
    return b;
  }

  Value shardOf(Value v) {
    auto [it, inserted] = shards.try_emplace(v);
    if (inserted) {
      OpBuilder b = builderAfter(v);
      it->second = SpShardOp::create(b, v.getLoc(), sequenceShardType(tensorOf(v), ranks), v, ranks);
    }
    return it->second;
  }

  Value gatherOf(Value v) {
    auto [it, inserted] = gathers.try_emplace(v);
    if (inserted) {
      OpBuilder b = builderAfter(v);
      it->second = SpGatherOp::create(b, v.getLoc(), wholeType(v), v, ranks);
    }
    return it->second;
  }

  Value gradientSummed(Value v) {
    auto [it, inserted] = summed.try_emplace(v);
    if (inserted) {
      OpBuilder b = builderAfter(v);
      auto copy = TpCopyOp::create(b, v.getLoc(), v.getType(), v, ranks, /*sequence=*/false);
      copy->setAttr(kGradSumAttr, b.getUnitAttr());
      it->second = copy;
    }
    return it->second;
  }

  Block &body;
  int64_t ranks;
  DenseMap<Value, RankedTensorType> whole; // the split values, by their type before the split
  DenseMap<Value, Value> shards, gathers, summed;
};

struct ZccSequenceParallelPass : zc::impl::ZccSequenceParallelBase<ZccSequenceParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ranks < 1) {
      module.emitError("zcc-sequence-parallel: ranks must be positive, got ") << ranks;
      return signalPassFailure();
    }
    if (ranks == 1)
      return;
    for (ForwardOp forward : module.getOps<ForwardOp>())
      Splitter(forward.getBody().front(), ranks).run();
  }
};

} // namespace
