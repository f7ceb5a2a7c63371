//===- ContextParallel.cpp - each sequence's tokens split over the context ranks ===//
//
// Context parallelism (Megatron-Core's `context_parallel_size`, the ultrascale playbook's
// fourth axis): the `ranks` ranks of a context group hold the same sequences, each its part
// of their tokens, so a context whose activations do not fit one rank trains at all.
//
//  - The tokens: every sequence is 2 x ranks chunks and rank r keeps chunk r and chunk
//    2 ranks - 1 - r (Megatron-LM's layout: causal attention then costs every rank the
//    same). The forward's token inputs are read whole and cut by zc.cp_shard; a pipeline
//    stage's activation arguments arrive cut.
//  - Everything token-wise runs on the local tokens: the types are re-derived op by op
//    along the token axis (axis 1 of the inputs), as zcc-shard-batch does along the batch.
//    A table every token reads a row of by position (a GPT's position embedding, as a bias
//    over the flattened tokens) is cut the same way; its gradient is placed back by
//    zc.cp_unshard and summed over the context ranks with the data-parallel reduction,
//    which spans data x context ranks (they hold the same parameters: ZeRO shards over
//    both).
//  - Attention, DeepSpeed-Ulysses: q, k and v (before their rotary embedding, so positions
//    stay the global ones) go through zc.cp_to_heads, an all-to-all giving each rank the
//    whole sequence of 1/ranks of the heads; attention runs unsplit; zc.cp_to_tokens brings
//    its output back. Heads and key/value heads must divide by `ranks`.
//  - Attention, ring (mode ring, or auto where the heads do not divide): every head stays
//    on this rank's tokens; attention and rotary are marked with the ring's size
//    (kContextRingAttr) and lower to zrt_ring_attention (key/value blocks around the
//    context ring, merged by the online softmax) and zrt_rotary_context (global positions).
//
//  - Mixture of experts: routing is token by token, so each rank routes its own tokens through
//    experts replicated over the context ranks (their gradients summed with the others');
//    the dispatched rows are its tokens' k choices (with a capacity, its own capacity, as a
//    data-parallel rank keeps its own), and what reads them (the grouped products, the
//    activations and slices between them) follows them. The router z-loss is a mean over
//    tokens like the cross-entropy; the load-balancing loss multiplies two statistics of the
//    whole sequence's tokens, which no rank holds: each rank computes the whole loss from
//    them summed over the context ranks (kContextPooledAttr; Megatron-Core reduces its
//    tokens-per-expert over the tensor x context group likewise).
//
// The loss is each rank's mean over its tokens; with equal parts the data-parallel mean of
// those is the global one, as train.bin's logs and the gradients' average take it.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCCONTEXTPARALLEL
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

constexpr int64_t kTokenAxis = 1; // of the forward's inputs: [batch, tokens, ...]

enum class Mode { Ulysses, Ring };

class Splitter {
public:
  Splitter(ForwardOp forward, int64_t ranks, Mode mode) : forward(forward), ranks(ranks), mode(mode) {}

  LogicalResult run() {
    Block &body = forward.getBody().front();
    if (failed(splitArguments(body)))
      return failure();
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
      if (failed(visit(&op)))
        return failure();
    return success();
  }

private:
  /// Token inputs are cut by zc.cp_shard; a stage's activation arguments arrive cut.
  LogicalResult splitArguments(Block &body) {
    OpBuilder b(forward.getContext());
    b.setInsertionPointToStart(&body);
    SmallVector<Type> inputs;
    for (BlockArgument arg : body.getArguments()) {
      RankedTensorType t = tensorOf(arg);
      auto role = forward.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "zc.input");
      bool activation = role && (role.getValue() == "activation" || role.getValue() == "activation_grad");
      if (t.getRank() < 2 || t.getDimSize(kTokenAxis) % (2 * ranks) != 0)
        return forward.emitOpError("--cp ")
               << ranks << ": argument #" << arg.getArgNumber() << " (" << t
               << ") has no token axis (axis 1) that splits into 2 x " << ranks << " chunks";
      if (activation) {
        arg.setType(local(t, kTokenAxis));
        tokenAxis[arg] = kTokenAxis;
      } else if (!arg.use_empty()) {
        auto cut = CpShardOp::create(b, arg.getLoc(), local(t, kTokenAxis), arg, ranks, kTokenAxis);
        arg.replaceAllUsesExcept(cut.getResult(), cut);
        tokenAxis[cut.getResult()] = kTokenAxis;
      }
      inputs.push_back(arg.getType());
    }
    forward.setFunctionType(FunctionType::get(forward.getContext(), inputs, forward.getFunctionType().getResults()));
    return success();
  }

  RankedTensorType local(RankedTensorType whole, int64_t axis) {
    SmallVector<int64_t> shape(whole.getShape());
    shape[axis] /= ranks;
    return whole.clone(shape);
  }

  bool isSplit(Value v) const { return tokenAxis.count(v); }

  /// [B, L, H x D] this rank's tokens of every head <-> [B, ranks x L, H / ranks x D] the whole
  /// sequence of this rank's heads (what zc.cp_to_heads and zc.cp_to_tokens produce).
  RankedTensorType headsType(RankedTensorType tokens) const {
    return tokens.clone({tokens.getDimSize(0), tokens.getDimSize(1) * ranks, tokens.getDimSize(2) / ranks});
  }
  RankedTensorType tokensType(RankedTensorType heads) const {
    return heads.clone({heads.getDimSize(0), heads.getDimSize(1) / ranks, heads.getDimSize(2) * ranks});
  }

  LogicalResult unsupported(Operation *op, const Twine &why) {
    return op->emitOpError("cannot run on a part of the sequence (--cp ") << ranks << "): " << why;
  }

  /// Gives `result` the operand's local type along the same axis.
  void same(Value result, Value operand) {
    result.setType(operand.getType());
    tokenAxis[result] = tokenAxis.lookup(operand);
    if (auto rows = dispatchedRows.find(operand); rows != dispatchedRows.end())
      dispatchedRows[result] = rows->second;
  }

  /// `v` [B, L, H x D] this rank's tokens -> [B, ranks x L, H / ranks x D]: the whole sequence of
  /// this rank's heads.
  FailureOr<Value> toHeads(Operation *user, Value v, int64_t heads) {
    if (Value done = byHeads.lookup(v))
      return done;
    RankedTensorType t = tensorOf(v);
    if (tokenAxis.lookup(v) != kTokenAxis || t.getRank() != 3)
      return unsupported(user, "attention's inputs must be [batch, tokens, heads x head size]");
    if (heads % ranks != 0)
      return unsupported(user, Twine(heads) + " heads (key/value heads too) do not split over the context "
                                              "ranks (DeepSpeed-Ulysses needs them to)");
    OpBuilder b(user);
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    Value result = CpToHeadsOp::create(b, v.getLoc(), headsType(t), v, ranks, heads);
    byHeads[v] = result;
    headsOf[result] = heads;
    return result;
  }

  LogicalResult visit(Operation *op) {
    // Values that hold this rank's heads of the whole sequence feed only rotary and attention.
    if (!isa<RotaryOp, CausalAttentionOp>(op))
      for (OpOperand &use : op->getOpOperands())
        if (headsOf.count(use.get())) {
          OpBuilder b(op);
          Value v = use.get();
          Value back = CpToTokensOp::create(b, v.getLoc(), tokensType(tensorOf(v)), v, ranks, headsOf.lookup(v));
          use.set(back);
          tokenAxis[back] = kTokenAxis;
        }
    if (llvm::none_of(op->getOperands(), [&](Value v) { return isSplit(v) || headsOf.count(v); }))
      return success();
    return TypeSwitch<Operation *, LogicalResult>(op)
        .Case<TpCopyOp, TpReduceOp, StageInputOp, ScaleOp, ReluOp, GeluOp, SiluOp>([&](Operation *o) {
          same(o->getResult(0), o->getOperand(0));
          return success();
        })
        .Case([&](CastOp o) {
          o.getResult().setType(tensorOf(o.getResult()).clone(tensorOf(o.getInput()).getShape()));
          tokenAxis[o.getResult()] = tokenAxis.lookup(o.getInput());
          return success();
        })
        .Case<AddOp, SubOp, MulOp>([&](Operation *o) -> LogicalResult {
          for (Value v : o->getOperands())
            if (!isSplit(v) || tokenAxis.lookup(v) != tokenAxis.lookup(o->getOperand(0)))
              return unsupported(o, "an operand holds the whole sequence");
          same(o->getResult(0), o->getOperand(0));
          return success();
        })
        .Case([&](FakeQuantizeOp o) -> LogicalResult { // activation quantization: a group per token row
          if (!o.getPerRow() || tokenAxis.lookup(o.getInput()) == tensorOf(o.getInput()).getRank() - 1)
            return unsupported(o, "its quantization groups span the tokens");
          same(o.getResult(), o.getInput());
          return success();
        })
        .Case<SoftmaxOp, LayerNormOp, RmsNormOp>([&](Operation *o) -> LogicalResult {
          if (!isSplit(o->getOperand(0)) || tokenAxis.lookup(o->getOperand(0)) == tensorOf(o->getOperand(0)).getRank() - 1)
            return unsupported(o, "it normalizes over the tokens");
          same(o->getResult(0), o->getOperand(0));
          return success();
        })
        .Case([&](BiasAddOp o) -> LogicalResult {
          if (!isSplit(o.getInput()) || isSplit(o.getBias()))
            return unsupported(o, "only its input may hold the tokens");
          int64_t axis = tokenAxis.lookup(o.getInput());
          int64_t first = tensorOf(o.getInput()).getRank() - tensorOf(o.getBias()).getRank();
          if (axis >= first) { // a table indexed by position: this rank's chunks of it
            int64_t biasAxis = axis - first;
            RankedTensorType bias = tensorOf(o.getBias());
            if (bias.getDimSize(biasAxis) % (2 * ranks) != 0)
              return unsupported(o, "its position table does not split into the tokens' chunks");
            OpBuilder b(o);
            o.getBiasMutable().assign(
                CpShardOp::create(b, o.getLoc(), local(bias, biasAxis), o.getBias(), ranks, biasAxis));
          }
          same(o.getResult(), o.getInput());
          return success();
        })
        .Case([&](MatmulOp o) -> LogicalResult {
          RankedTensorType lhs = tensorOf(o.getLhs());
          if (!isSplit(o.getLhs()) || isSplit(o.getRhs()))
            return unsupported(o, "only a matmul of the tokens by weights splits (attention written as matmuls "
                                  "does not: use zc.causal_attention)");
          int64_t axis = tokenAxis.lookup(o.getLhs());
          int64_t contracted = o.getTransposeLhs() ? lhs.getRank() - 2 : lhs.getRank() - 1;
          if (axis == contracted)
            return unsupported(o, "it contracts the tokens");
          SmallVector<int64_t> shape(tensorOf(o.getResult()).getShape());
          shape[axis] = lhs.getDimSize(axis);
          o.getResult().setType(tensorOf(o.getResult()).clone(shape));
          tokenAxis[o.getResult()] = axis;
          return success();
        })
        .Case([&](EmbeddingOp o) -> LogicalResult {
          if (isSplit(o.getTable()))
            return unsupported(o, "its table holds tokens");
          SmallVector<int64_t> shape(tensorOf(o.getIds()).getShape());
          shape.push_back(tensorOf(o.getTable()).getDimSize(1));
          o.getResult().setType(tensorOf(o.getResult()).clone(shape));
          tokenAxis[o.getResult()] = tokenAxis.lookup(o.getIds());
          return success();
        })
        .Case<CrossEntropyOp, MseOp, StageOutputOp, PipeSendOp>([&](Operation *o) -> LogicalResult {
          for (Value v : o->getOperands())
            if (!isSplit(v))
              return unsupported(o, "an operand holds the whole sequence");
          return success(); // a mean over this rank's tokens, or its tokens sent to the next stage
        })
        .Case([&](ReshapeOp o) -> LogicalResult {
          // The tokens' axis in the view: the first after the axes spanning the ones before it.
          RankedTensorType in = tensorOf(o.getInput()), out = tensorOf(o.getResult());
          int64_t axis = tokenAxis.lookup(o.getInput()), outer = 1, seen = 1;
          for (int64_t d = 0; d < axis; ++d)
            outer *= in.getDimSize(d);
          int64_t k = 0;
          while (k < out.getRank() && seen != outer)
            seen *= out.getDimSize(k++);
          while (k < out.getRank() && out.getDimSize(k) == 1) // unit axes before the tokens'
            ++k;
          int64_t whole = k < out.getRank() ? out.getDimSize(k) : 0;
          if (seen != outer || whole == 0 || whole % (2 * ranks) != 0)
            return unsupported(o, "the view moves the tokens off an axis of their own");
          SmallVector<int64_t> shape(out.getShape());
          shape[k] /= ranks;
          o.getResult().setType(out.clone(shape));
          tokenAxis[o.getResult()] = k;
          return success();
        })
        .Case([&](SliceOp o) -> LogicalResult {
          int64_t axis = tokenAxis.lookup(o.getInput());
          RankedTensorType in = tensorOf(o.getInput()), out = tensorOf(o.getResult());
          if (auto whole = dispatchedRows.find(o.getInput()); whole != dispatchedRows.end()) {
            // The dispatched rows, all of them (a fused gate/up product's halves).
            if (o.getOffsets()[0] != 0 || out.getDimSize(0) != whole->second)
              return unsupported(o, "it cuts the experts' dispatched rows");
            SmallVector<int64_t> shape(out.getShape());
            shape[0] = in.getDimSize(0);
            o.getResult().setType(out.clone(shape));
            tokenAxis[o.getResult()] = 0;
            dispatchedRows[o.getResult()] = whole->second;
            return success();
          }
          if (o.getOffsets()[axis] != 0 || out.getDimSize(axis) != in.getDimSize(axis) * ranks)
            return unsupported(o, "it cuts the tokens");
          SmallVector<int64_t> shape(out.getShape());
          shape[axis] = in.getDimSize(axis);
          o.getResult().setType(out.clone(shape));
          tokenAxis[o.getResult()] = axis;
          return success();
        })
        .Case([&](TransposeOp o) -> LogicalResult {
          int64_t axis = tokenAxis.lookup(o.getInput());
          RankedTensorType in = tensorOf(o.getInput());
          SmallVector<int64_t> shape;
          int64_t moved = -1;
          for (auto [i, p] : llvm::enumerate(o.getPermutation())) {
            shape.push_back(in.getDimSize(p));
            if (p == axis)
              moved = static_cast<int64_t>(i);
          }
          o.getResult().setType(in.clone(shape));
          tokenAxis[o.getResult()] = moved;
          return success();
        })
        .Case([&](RotaryOp o) -> LogicalResult {
          if (mode == Mode::Ring) { // this rank's tokens at their global positions
            if (!isSplit(o.getInput()) || tokenAxis.lookup(o.getInput()) != kTokenAxis)
              return unsupported(o, "its input must be [batch, tokens, heads x head size]");
            o->setAttr(kContextRingAttr, Builder(o).getI64IntegerAttr(ranks));
            same(o.getResult(), o.getInput());
            return success();
          }
          // On the whole sequence of this rank's heads: the global positions.
          FailureOr<Value> input = headsOf.count(o.getInput()) ? FailureOr<Value>(o.getInput())
                                                               : toHeads(o, o.getInput(), o.getNumHeads());
          if (failed(input))
            return failure();
          o.getInputMutable().assign(*input);
          o.setNumHeads(o.getNumHeads() / ranks);
          o.getResult().setType(tensorOf(*input));
          headsOf[o.getResult()] = headsOf.lookup(*input);
          return success();
        })
        .Case([&](CausalAttentionOp o) -> LogicalResult {
          int64_t heads = o.getNumHeads(), kv = o.getKvHeads();
          if (mode == Mode::Ring) { // key/value blocks around the ring; every head stays here
            if (!o.getVariant().isPlain())
              return unsupported(o, "ring attention computes the plain causal softmax: a scale, softcap or window "
                                    "needs --cp-mode ulysses (the heads and key/value heads divisible by --cp)");
            for (Value v : o->getOperands())
              if (!isSplit(v) || tokenAxis.lookup(v) != kTokenAxis)
                return unsupported(o, "its inputs must be [batch, tokens, heads x head size]");
            o->setAttr(kContextRingAttr, Builder(o).getI64IntegerAttr(ranks));
            same(o.getResult(), o.getQuery());
            return success();
          }
          for (auto [operand, n] : {std::pair{&o.getQueryMutable(), heads}, std::pair{&o.getKeyMutable(), kv},
                                    std::pair{&o.getValueMutable(), kv}}) {
            Value v = operand->get();
            if (headsOf.count(v))
              continue;
            FailureOr<Value> whole = toHeads(o, v, n);
            if (failed(whole))
              return failure();
            operand->assign(*whole);
          }
          o.setNumHeads(heads / ranks);
          if (o.getNumKvHeads())
            o.setNumKvHeads(kv / ranks);
          Value result = o.getResult();
          result.setType(o.getQuery().getType());
          OpBuilder b(o->getContext());
          b.setInsertionPointAfter(o);
          auto back = CpToTokensOp::create(b, o.getLoc(), tokensType(tensorOf(result)), result, ranks, heads);
          result.replaceAllUsesExcept(back.getResult(), back);
          tokenAxis[back.getResult()] = kTokenAxis;
          return success();
        })
        // Values joined: along another axis than the tokens', or along theirs for a load-balancing
        // loss only (Hugging Face's, pooling every layer's routings: a set of tokens, in no order).
        .Case([&](ConcatOp o) -> LogicalResult {
          const int64_t axis = tokenAxis.lookup(o.getInputs().front());
          for (Value v : o.getInputs())
            if (!isSplit(v) || tokenAxis.lookup(v) != axis)
              return unsupported(o, "an operand holds the whole sequence");
          if (static_cast<int64_t>(o.getAxis()) == axis &&
              !llvm::all_of(o->getUsers(), [](Operation *u) { return isa<MoeAuxLossOp>(u); }))
            return unsupported(o, "it joins along the tokens");
          SmallVector<int64_t> shape(tensorOf(o.getInputs().front()).getShape());
          shape[o.getAxis()] = 0;
          for (Value v : o.getInputs())
            shape[o.getAxis()] += tensorOf(v).getDimSize(o.getAxis());
          o.getResult().setType(tensorOf(o.getResult()).clone(shape));
          tokenAxis[o.getResult()] = axis;
          return success();
        })
        // Mixture of experts: each rank routes its tokens (the expert offsets [E + 1] its own).
        .Case([&](MoeRouteOp o) -> LogicalResult {
          RankedTensorType logits = tensorOf(o.getLogits());
          if (!isSplit(o.getLogits()) || tokenAxis.lookup(o.getLogits()) == logits.getRank() - 1 ||
              (o.getBias() && isSplit(o.getBias())))
            return unsupported(o, "only its logits may hold the tokens, on an axis before the experts'");
          for (Value r : {o.getWeights(), o.getExperts(), o.getRows()}) {
            SmallVector<int64_t> shape(logits.getShape());
            shape.back() = tensorOf(r).getShape().back();
            r.setType(tensorOf(r).clone(shape));
            tokenAxis[r] = tokenAxis.lookup(o.getLogits());
          }
          return success();
        })
        .Case([&](MoeDispatchOp o) -> LogicalResult {
          auto route = o.getRows().getDefiningOp<MoeRouteOp>();
          if (!route || !isSplit(o.getInput()) || !isSplit(o.getRows()))
            return unsupported(o, "its tokens and rows must come from this rank's routing");
          Value rows = o.getResult();
          const int64_t whole = tensorOf(rows).getDimSize(0);
          rows.setType(tensorOf(rows).clone({route.getDispatchedRows(), tensorOf(rows).getDimSize(1)}));
          tokenAxis[rows] = 0;
          dispatchedRows[rows] = whole;
          return success();
        })
        .Case([&](GroupedMatmulOp o) -> LogicalResult {
          auto whole = dispatchedRows.find(o.getInput());
          if (whole == dispatchedRows.end() || isSplit(o.getWeight()) || isSplit(o.getOffsets()))
            return unsupported(o, "only its input may hold the tokens: the dispatched rows");
          Value out = o.getResult();
          out.setType(tensorOf(out).clone({tensorOf(o.getInput()).getDimSize(0), tensorOf(out).getDimSize(1)}));
          tokenAxis[out] = 0;
          dispatchedRows[out] = whole->second;
          return success();
        })
        .Case([&](MoeCombineOp o) -> LogicalResult {
          if (!dispatchedRows.count(o.getInput()) || !isSplit(o.getWeights()) || !isSplit(o.getRows()))
            return unsupported(o, "its rows and weights must come from this rank's routing");
          SmallVector<int64_t> shape(tensorOf(o.getWeights()).getShape());
          shape.back() = tensorOf(o.getResult()).getShape().back();
          o.getResult().setType(tensorOf(o.getResult()).clone(shape));
          tokenAxis[o.getResult()] = tokenAxis.lookup(o.getWeights());
          return success();
        })
        .Case([&](MoeSharedGateOp o) -> LogicalResult {
          if (!isSplit(o.getShared()) || !isSplit(o.getGate()))
            return unsupported(o, "an operand holds the whole sequence");
          same(o.getResult(), o.getShared());
          return success();
        })
        .Case([&](MoeZLossOp o) -> LogicalResult {
          if (!isSplit(o.getLogits()))
            return unsupported(o, "an operand holds the whole sequence");
          return success(); // a mean over this rank's tokens, as the cross-entropy
        })
        .Case([&](MoeAuxLossOp o) -> LogicalResult {
          if (!isSplit(o.getLogits()) || !isSplit(o.getExperts()))
            return unsupported(o, "an operand holds the whole sequence");
          o->setAttr(kContextPooledAttr, Builder(o).getI64IntegerAttr(ranks));
          return success(); // the whole sequence's loss, its statistics pooled over the context ranks
        })
        .Default([&](Operation *o) { return unsupported(o, "no rule splits it along the tokens"); });
  }

  ForwardOp forward;
  int64_t ranks;
  Mode mode;
  DenseMap<Value, int64_t> tokenAxis; // values holding this rank's tokens, and which axis they are on
  DenseMap<Value, int64_t> headsOf;   // values holding this rank's heads of the whole sequence: all heads
  DenseMap<Value, Value> byHeads;     // a value's cp_to_heads
  DenseMap<Value, int64_t> dispatchedRows; // the experts' rows of this rank's tokens (axis 0): their whole count
};

struct ZccContextParallelPass : zc::impl::ZccContextParallelBase<ZccContextParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ranks < 1) {
      module.emitError("zcc-context-parallel: ranks must be positive, got ") << ranks;
      return signalPassFailure();
    }
    if (mode != "ulysses" && mode != "ring" && mode != "auto") {
      module.emitError("--cp-mode must be ulysses, ring or auto, got ") << mode;
      return signalPassFailure();
    }
    if (ranks == 1)
      return;
    Mode chosen = mode == "ring" ? Mode::Ring : mode == "ulysses" ? Mode::Ulysses : choose(module);
    for (ForwardOp forward : module.getOps<ForwardOp>())
      if (failed(Splitter(forward, ranks, chosen).run()))
        return signalPassFailure();
    Builder b(module.getContext());
    module->setAttr("zc.context_parallel",
                    b.getDictionaryAttr({b.getNamedAttr("ranks", b.getI64IntegerAttr(ranks)),
                                         b.getNamedAttr("mode", b.getStringAttr(chosen == Mode::Ring ? "ring"
                                                                                                     : "ulysses"))}));
  }

  /// auto: DeepSpeed-Ulysses where every attention's heads and key/value heads divide by the
  /// context ranks, as its all-to-alls send (C-1)/C of q, k, v and the output, 4/C of a layer's
  /// attention tensors, where the ring sends its key/value blocks C-1 times (2 (C-1)/C of them
  /// for multi-head attention: as many bytes at C = 2, C/2 times more beyond); the ring where
  /// the heads do not divide.
  Mode choose(ModuleOp module) {
    bool divides = true;
    module.walk([&](CausalAttentionOp o) {
      divides &= o.getNumHeads() % ranks == 0 && o.getKvHeads() % ranks == 0;
    });
    return divides ? Mode::Ulysses : Mode::Ring;
  }
};

} // namespace
