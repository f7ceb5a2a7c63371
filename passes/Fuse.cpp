//===- Fuse.cpp - matmul epilogues, the LM head with its loss, row chains ===//
//
// A linear layer's forward is matmul, bias_add, gelu; its backward through the GELU
// and the bias is gelu_grad of the next matmul's result, then a reduce_sum over the
// rows. On a GPU each is one cuBLASLt call with an epilogue (bias; GELU with the
// pre-activation as auxiliary output; DGELU with the bias gradient), saving the
// round trips of the elementwise ops through memory. The fused ops are defined as
// what they replace, and the CPU backend runs exactly that, so results are the same.
//
// The language-model head (logits = x w^T, their cross-entropy and its backward) becomes one
// op that works through the rows a chunk at a time: at GPT-2's 50K vocabulary the logits and
// their gradient are 0.8 GB each for 4 x 1024 positions, the largest buffers of the step.
//
// Memory-bound chains become one pass over the data: the SwiGLU product and its backward; a
// residual add and the layernorm reading it (and, backward, the layernorm's input gradient and
// the add into the residual stream's gradient). A sum of slice_grads tiling a tensor becomes a
// concat.
//
//===----------------------------------------------------------------------===//

#include "passes/CostModel.h"
#include "passes/Passes.h"

#include <algorithm>

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCFUSE
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

/// reduce_sum over every axis but the last (a bias gradient).
bool isBiasGradient(ReduceSumOp op) {
  int64_t rank = tensorOf(op.getInput()).getRank();
  ArrayRef<int64_t> axes = op.getAxes();
  if (static_cast<int64_t>(axes.size()) != rank - 1)
    return false;
  for (int64_t i = 0; i < rank - 1; ++i)
    if (axes[i] != i)
      return false;
  return true;
}

/// `v` without the row-flattening reshape autodiff puts on a matmul's operands when its
/// gradient sums over a batch (Autodiff.cpp, matmul); `v` itself otherwise.
Value unflattened(Value v) {
  if (auto reshape = v.getDefiningOp<ReshapeOp>())
    return reshape.getInput();
  return v;
}

/// Whether `clone` computes `original`: the same value, or the same result of a copy that
/// zcc-recompute made of its op (`zc.recomputed`, same operands up to such copies). The copy
/// is bitwise the original: the same kernel on the same inputs. Each pair of values is compared
/// once: under full recomputation a block's copies read each other along many paths (every
/// residual add two), which a plain recursion walks exponentially often.
bool sameValue(Value original, Value clone) {
  SmallVector<std::pair<Value, Value>> work{{original, clone}};
  DenseSet<std::pair<Value, Value>> seen;
  while (!work.empty()) {
    auto [x, y] = work.pop_back_val();
    if (x == y || !seen.insert({x, y}).second)
      continue;
    Operation *a = x.getDefiningOp(), *b = y.getDefiningOp();
    if (!a || !b || !b->hasAttr(kRecomputedAttr) || a->hasAttr(kRecomputedAttr) || a->getName() != b->getName() ||
        cast<OpResult>(x).getResultNumber() != cast<OpResult>(y).getResultNumber() ||
        a->getNumOperands() != b->getNumOperands() || a->getResultTypes() != b->getResultTypes())
      return false;
    NamedAttrList attrs(b->getAttrDictionary());
    attrs.erase(kRecomputedAttr);
    if (attrs.getDictionary(b->getContext()) != a->getAttrDictionary())
      return false;
    for (auto [u, v] : llvm::zip(a->getOperands(), b->getOperands()))
      work.push_back({u, v});
  }
  return true;
}

/// Erases `root` if nothing reads it and it is a recomputed copy, then the copies it read that
/// nothing reads now. Returns the FLOPs erased (zcc-recompute counted them).
double eraseDeadClones(Operation *root) {
  double flops = 0;
  SmallVector<Operation *> work{root};
  DenseSet<Operation *> erased; // an op reached twice (two operands, or two paths) is erased once
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!op || erased.contains(op) || !op->hasAttr(kRecomputedAttr) || !op->use_empty())
      continue;
    if (!isa<ReshapeOp>(op))
      flops += estimatedFlops(op);
    for (Value operand : op->getOperands())
      work.push_back(operand.getDefiningOp());
    erased.insert(op);
    op->erase();
  }
  return flops;
}

struct Fuser {
  int64_t headChunkBytes;
  double erasedRecomputeFlops = 0; // of recomputed copies a fusion made dead
  SmallPtrSet<Operation *, 16> erasedAdds;

  /// A sum of slice_grads whose boxes tile the result along one axis is the concatenation of
  /// their gradients: autodiff writes it for a tensor sliced into parts (the attention's q, k
  /// and v of one QKV projection). Each slice_grad zero-fills a whole result and each add reads
  /// two; the concat writes every element once.
  void fuseSliceGradSum(AddOp root) {
    // The root of a tree of adds: not itself the only input of a larger sum.
    if (root->hasOneUse() && isa<AddOp>(*root->getUsers().begin()))
      return;
    SmallVector<AddOp> adds{root};
    SmallVector<SliceGradOp> parts;
    for (size_t i = 0; i < adds.size(); ++i)
      for (Value operand : adds[i]->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || !operand.hasOneUse() || def->getBlock() != root->getBlock())
          return;
        if (auto add = dyn_cast<AddOp>(def))
          adds.push_back(add);
        else if (auto part = dyn_cast<SliceGradOp>(def))
          parts.push_back(part);
        else
          return;
      }
    RankedTensorType type = tensorOf(root.getResult());
    // The one axis where the boxes differ; every other axis whole.
    int64_t axis = -1;
    for (SliceGradOp part : parts) {
      ArrayRef<int64_t> offsets = part.getOffsets();
      ArrayRef<int64_t> box = tensorOf(part.getGrad()).getShape();
      for (int64_t a = 0; a < type.getRank(); ++a) {
        if (offsets[a] == 0 && box[a] == type.getDimSize(a))
          continue;
        if (axis != -1 && axis != a)
          return;
        axis = a;
      }
    }
    if (axis == -1)
      return;
    llvm::sort(parts, [&](SliceGradOp x, SliceGradOp y) { return x.getOffsets()[axis] < y.getOffsets()[axis]; });
    int64_t covered = 0;
    for (SliceGradOp part : parts) {
      if (part.getOffsets()[axis] != covered)
        return; // a gap or an overlap
      covered += tensorOf(part.getGrad()).getDimSize(axis);
    }
    if (covered != type.getDimSize(axis))
      return;

    SmallVector<Value> inputs;
    SmallVector<Location> locs;
    for (SliceGradOp part : parts) {
      inputs.push_back(part.getGrad());
      locs.push_back(part.getLoc());
    }
    OpBuilder b(root);
    auto concat = ConcatOp::create(b, b.getFusedLoc(locs), type, inputs, axis);
    root.getResult().replaceAllUsesWith(concat.getResult());
    for (AddOp add : adds) {
      erasedAdds.insert(add.getOperation());
      add->erase();
    }
    for (SliceGradOp part : parts)
      part->erase();
  }

  /// Whether every user of `values` comes after `point` in its block.
  static bool allUsersAfter(ValueRange values, Operation *point) {
    for (Value v : values)
      for (Operation *user : v.getUsers())
        if (user->getBlock() != point->getBlock() || !point->isBeforeInBlock(user))
          return false;
    return true;
  }
  /// Whether `v` is available at `point` (a block argument, or defined before it in its block).
  static bool availableAt(Value v, Operation *point) {
    Operation *def = v.getDefiningOp();
    return !def || (def->getBlock() == point->getBlock() && def->isBeforeInBlock(point));
  }

  /// add -> layernorm: add_layernorm, where the residual sum is written and normalized row by
  /// row. It runs at the layernorm when nothing reads the sum before it, else at the add when
  /// the gain and shift exist there.
  void fuseAddLayerNorm(LayerNormOp ln) {
    auto add = ln.getInput().getDefiningOp<AddOp>();
    if (!add || add->getBlock() != ln->getBlock())
      return;
    Operation *at = nullptr;
    bool sumReadBefore = llvm::any_of(add->getUsers(), [&](Operation *user) {
      return user != ln.getOperation() && (user->getBlock() != ln->getBlock() || user->isBeforeInBlock(ln));
    });
    if (!sumReadBefore)
      at = ln;
    else if (availableAt(ln.getGamma(), add) && availableAt(ln.getBeta(), add))
      at = add;
    if (!at)
      return;
    OpBuilder b(at);
    auto fused = AddLayerNormOp::create(b, b.getFusedLoc({add.getLoc(), ln.getLoc()}), add.getType(), ln.getType(),
                                        add.getLhs(), add.getRhs(), ln.getGamma(), ln.getBeta(), ln.getEpsilonAttr());
    ln.getResult().replaceAllUsesWith(fused.getResult());
    add.getResult().replaceAllUsesWith(fused.getSum());
    ln->erase();
    add->erase();
  }

  /// layernorm_grad whose input gradient is added to another gradient of the same value (the
  /// residual stream's): layernorm_grad_add. At the add when nothing reads the gain and shift
  /// gradients before it, else at the layernorm_grad when the other gradient exists there.
  void fuseLayerNormGradAdd(LayerNormGradOp lg) {
    Value dx = lg.getInputGrad();
    if (!dx.hasOneUse())
      return;
    auto add = dyn_cast<AddOp>(*dx.getUsers().begin());
    if (!add || add->getBlock() != lg->getBlock())
      return;
    Value residual = add.getLhs() == dx ? add.getRhs() : add.getLhs();
    Operation *at = nullptr;
    if (allUsersAfter({lg.getGammaGrad(), lg.getBetaGrad()}, add))
      at = add;
    else if (availableAt(residual, lg))
      at = lg;
    if (!at)
      return;
    OpBuilder b(at);
    auto fused = LayerNormGradAddOp::create(b, b.getFusedLoc({lg.getLoc(), add.getLoc()}), add.getType(),
                                            lg.getGammaGrad().getType(), lg.getBetaGrad().getType(), lg.getGrad(),
                                            lg.getInput(), lg.getGamma(), residual, lg.getEpsilonAttr());
    add.getResult().replaceAllUsesWith(fused.getInputGrad());
    lg.getGammaGrad().replaceAllUsesWith(fused.getGammaGrad());
    lg.getBetaGrad().replaceAllUsesWith(fused.getBetaGrad());
    add->erase();
    lg->erase();
  }

  /// The SwiGLU product h = mul(silu(gate), up) and the three ops autodiff writes for it,
  /// dgate = silu_grad(mul(dh, up), gate) and dup = mul(dh, silu(gate)): swiglu at the forward
  /// mul, swiglu_grad at the first backward mul (one pass each; silu(gate) no longer kept).
  void fuseSwiglu(SiluGradOp siluGrad) {
    Value gate = siluGrad.getInput(), dsilu = siluGrad.getGrad();
    auto gradTimesUp = dsilu.getDefiningOp<MulOp>();
    auto silu = [&]() -> SiluOp {
      for (Operation *user : gate.getUsers())
        if (auto s = dyn_cast<SiluOp>(user))
          return s;
      return {};
    }();
    if (!gradTimesUp || !dsilu.hasOneUse() || !silu)
      return;
    Value activation = silu.getResult();
    SmallVector<Operation *> users(activation.getUsers());
    if (users.size() != 2 || !llvm::all_of(users, [](Operation *u) { return isa<MulOp>(u); }))
      return;
    auto other = [&](MulOp m) { return m.getLhs() == activation ? m.getRhs() : m.getLhs(); };
    Value a = gradTimesUp.getLhs(), b = gradTimesUp.getRhs();
    // The first user is the forward product (its other operand is `up`), the second the backward
    // one (its other operand is the incoming gradient, which the forward product leads to).
    Block *block = siluGrad->getBlock();
    if (!llvm::all_of(users, [&](Operation *u) { return u->getBlock() == block; }) ||
        gradTimesUp->getBlock() != block)
      return;
    if (users[1]->isBeforeInBlock(users[0]))
      std::swap(users[0], users[1]);
    auto forward = cast<MulOp>(users[0]), backward = cast<MulOp>(users[1]);
    Value up = other(forward), grad = other(backward);
    if (up == grad || !((a == grad && b == up) || (a == up && b == grad)))
      return;
    OpBuilder fb(forward);
    auto fused = SwigluOp::create(fb, fb.getFusedLoc({silu.getLoc(), forward.getLoc()}), forward.getType(), gate, up);
    forward.getResult().replaceAllUsesWith(fused.getResult());
    Operation *first = gradTimesUp->isBeforeInBlock(backward) ? gradTimesUp.getOperation() : backward.getOperation();
    OpBuilder bb(first);
    auto fusedGrad =
        SwigluGradOp::create(bb, bb.getFusedLoc({gradTimesUp.getLoc(), backward.getLoc(), siluGrad.getLoc()}),
                             siluGrad.getType(), backward.getType(), grad, gate, up);
    siluGrad.getResult().replaceAllUsesWith(fusedGrad.getGateGrad());
    backward.getResult().replaceAllUsesWith(fusedGrad.getUpGrad());
    siluGrad->erase();
    gradTimesUp->erase();
    backward->erase();
    forward->erase();
    silu->erase();
  }

  /// matmul -> bias_add [-> gelu]: matmul_bias or matmul_bias_gelu.
  void fuseForward(BiasAddOp biasAdd) {
    auto mm = biasAdd.getInput().getDefiningOp<MatmulOp>();
    if (!mm || !mm->hasOneUse())
      return;
    // The GELU of the same pass: a gelu zcc-recompute cloned into the backward pass reads the
    // forward's bias_add too, and fusing with it would make the backward read the forward's
    // activation, keeping alive exactly what the recomputation freed.
    GeluOp gelu;
    const bool recomputed = biasAdd->hasAttr(kRecomputedAttr);
    for (Operation *user : biasAdd->getUsers())
      // The epilogues are the tanh GELU: an exact (erf) one stays a separate op.
      if (auto g = dyn_cast<GeluOp>(user); g && !g.getExact() && g->hasAttr(kRecomputedAttr) == recomputed &&
                                           (!gelu || g->isBeforeInBlock(gelu)))
        gelu = g;
    // The fused op runs where the bias_add was; a gelu further down must not read
    // anything defined in between (it reads only the bias_add, so it never does).
    OpBuilder b(biasAdd);
    Location loc = b.getFusedLoc({mm.getLoc(), biasAdd.getLoc()});
    if (gelu) {
      auto fused = MatmulBiasGeluOp::create(b, loc, biasAdd.getType(), gelu.getType(), mm.getLhs(), mm.getRhs(),
                                            biasAdd.getBias(), mm.getTransposeLhs(), mm.getTransposeRhs());
      biasAdd.getResult().replaceAllUsesWith(fused.getPre());
      gelu.getResult().replaceAllUsesWith(fused.getResult());
      gelu->erase();
    } else {
      auto fused = MatmulBiasOp::create(b, loc, biasAdd.getType(), mm.getLhs(), mm.getRhs(), biasAdd.getBias(),
                                        mm.getTransposeLhs(), mm.getTransposeRhs());
      biasAdd.getResult().replaceAllUsesWith(fused.getResult());
    }
    biasAdd->erase();
    mm->erase();
  }

  /// matmul -> gelu_grad -> reduce_sum (all but the last axis): matmul_dgelu_bgrad.
  void fuseBackward(GeluGradOp geluGrad) {
    auto mm = geluGrad.getGrad().getDefiningOp<MatmulOp>();
    if (!mm || !mm->hasOneUse() || geluGrad.getExact())
      return;
    ReduceSumOp biasGrad;
    for (Operation *user : geluGrad->getUsers())
      if (auto r = dyn_cast<ReduceSumOp>(user); r && isBiasGradient(r) && !biasGrad)
        biasGrad = r;
    if (!biasGrad)
      return;
    // At the gelu_grad: the reduce_sum reads only its result, so it can move up.
    OpBuilder b(geluGrad);
    Location loc = b.getFusedLoc({mm.getLoc(), geluGrad.getLoc(), biasGrad.getLoc()});
    auto fused = MatmulDgeluBgradOp::create(b, loc, geluGrad.getType(), biasGrad.getType(), mm.getLhs(), mm.getRhs(),
                                            geluGrad.getInput(), mm.getTransposeLhs(), mm.getTransposeRhs());
    geluGrad.getResult().replaceAllUsesWith(fused.getDpre());
    biasGrad.getResult().replaceAllUsesWith(fused.getDbias());
    biasGrad->erase();
    geluGrad->erase();
    mm->erase();
  }

  /// The language-model head: logits = matmul(x, w), read by one cross_entropy and by the
  /// cross_entropy_grad here, whose result feeds exactly the matmuls autodiff wrote for x's and
  /// w's gradients. All of it becomes one zc.matmul_cross_entropy at the cross_entropy_grad
  /// (where the backward seed exists), so no op holds the logits or their gradient whole.
  void fuseHead(CrossEntropyGradOp ceGrad) {
    // A vocabulary-parallel loss combines its rows over the tensor axis; the fused head
    // holds whole rows.
    if (ceGrad.getVocabShards())
      return;
    // The loss of the same logits: the forward's, which zcc-recompute leaves reading the
    // original logits where the backward reads a recomputed copy.
    Block *block = ceGrad->getBlock();
    CrossEntropyOp ce;
    for (Operation *user : ceGrad.getLabels().getUsers())
      if (auto c = dyn_cast<CrossEntropyOp>(user);
          c && c->getBlock() == block && sameValue(c.getLogits(), ceGrad.getLogits())) {
        if (ce)
          return;
        ce = c;
      }
    if (!ce || logitSoftcap(ce) != logitSoftcap(ceGrad))
      return;
    auto mm = ce.getLogits().getDefiningOp<MatmulOp>();
    if (!mm || mm.getTransposeLhs() || tensorOf(mm.getRhs()).getRank() != 2)
      return;
    Value x = mm.getLhs(), w = mm.getRhs(), logits = mm.getResult(), dlogits = ceGrad.getResult();
    bool transposeW = mm.getTransposeRhs();
    Operation *logitsCopy = ceGrad.getLogits() == logits ? nullptr : ceGrad.getLogits().getDefiningOp();
    for (Operation *user : logits.getUsers())
      if (user != ce.getOperation() && user != ceGrad.getOperation())
        return;
    if (logitsCopy && !ceGrad.getLogits().hasOneUse())
      return;
    // The fused op runs at the cross_entropy_grad: the loss must not be read before it.
    for (Operation *user : ce.getResult().getUsers())
      if (user->getBlock() != block || user->isBeforeInBlock(ceGrad))
        return;
    // d x = dlogits op(w)^T; d w = dlogits^T x ([classes, channels]) or x^T dlogits, both with
    // their batch axes flattened into rows where x has them.
    MatmulOp dxMatmul, dwMatmul;
    ReshapeOp dlogitsRows;
    auto isWeightGrad = [&](MatmulOp m) {
      Value g = transposeW ? m.getLhs() : m.getRhs(), input = transposeW ? m.getRhs() : m.getLhs();
      return m.getTransposeLhs() && !m.getTransposeRhs() && unflattened(g) == dlogits && sameValue(x, unflattened(input)) &&
             m.getType() == w.getType();
    };
    for (Operation *user : dlogits.getUsers()) {
      if (auto m = dyn_cast<MatmulOp>(user)) {
        if (!dxMatmul && m.getLhs() == dlogits && m.getRhs() == w && !m.getTransposeLhs() &&
            m.getTransposeRhs() == !transposeW && m.getType() == x.getType())
          dxMatmul = m;
        else if (!dwMatmul && isWeightGrad(m))
          dwMatmul = m;
        else
          return;
        continue;
      }
      auto reshape = dyn_cast<ReshapeOp>(user);
      if (!reshape || dlogitsRows || !reshape->hasOneUse())
        return;
      auto m = dyn_cast<MatmulOp>(*reshape->getUsers().begin());
      if (!m || dwMatmul || !isWeightGrad(m))
        return;
      dlogitsRows = reshape;
      dwMatmul = m;
    }
    if (!dxMatmul || !dwMatmul)
      return;

    const int64_t chunkRows = headChunkRows(x, w);
    OpBuilder b(ceGrad);
    Location loc = b.getFusedLoc({mm.getLoc(), ce.getLoc(), ceGrad.getLoc(), dxMatmul.getLoc(), dwMatmul.getLoc()});
    auto fused = MatmulCrossEntropyOp::create(b, loc, x, w, ceGrad.getLabels(), ceGrad.getGrad(), transposeW,
                                              chunkRows, logitSoftcap(ce));
    ce.getResult().replaceAllUsesWith(fused.getLoss());
    dxMatmul.getResult().replaceAllUsesWith(fused.getInputGrad());
    dwMatmul.getResult().replaceAllUsesWith(fused.getWeightGrad());
    Value xRows = transposeW ? dwMatmul.getRhs() : dwMatmul.getLhs();
    dwMatmul->erase();
    if (dlogitsRows)
      dlogitsRows->erase();
    // The weight gradient read x's rows, or their recomputed copy (the fused op reads x itself
    // at the loss's backward, right after the forward pass): what read only them goes.
    if (auto reshape = xRows.getDefiningOp<ReshapeOp>(); reshape && reshape->use_empty()) {
      Operation *source = reshape.getInput().getDefiningOp();
      reshape->erase();
      erasedRecomputeFlops += eraseDeadClones(source);
    } else {
      erasedRecomputeFlops += eraseDeadClones(xRows.getDefiningOp());
    }
    dxMatmul->erase();
    ceGrad->erase();
    ce->erase();
    mm->erase();
    erasedRecomputeFlops += eraseDeadClones(logitsCopy);
    sinkClonesBefore(fused);
  }

  /// Rows of the head's input whose logits fit `headChunkBytes`.
  int64_t headChunkRows(Value x, Value w) const {
    RankedTensorType xType = tensorOf(x), wType = tensorOf(w);
    int64_t channels = xType.getShape().back(), rows = xType.getNumElements() / channels;
    int64_t classes = wType.getNumElements() / channels;
    int64_t rowBytes = classes * (xType.getElementTypeBitWidth() / 8);
    int64_t chunkRows = std::clamp<int64_t>(headChunkBytes / rowBytes, 1, rows);
    if (chunkRows < rows && chunkRows >= 64) // whole GEMM panels
      chunkRows -= chunkRows % 64;
    return chunkRows;
  }

  /// A head whose logits only its loss reads (a forward-only function: the eval's, or a step
  /// the head was fused out of already) becomes one zc.matmul_cross_entropy_loss, so no op
  /// holds the logits whole there either (at a 128K vocabulary they outweigh the step's
  /// recomputed activations).
  void fuseLossHead(CrossEntropyOp ce) {
    if (ce.getVocabShards())
      return;
    auto mm = ce.getLogits().getDefiningOp<MatmulOp>();
    if (!mm || !mm->hasOneUse() || mm.getTransposeLhs() || tensorOf(mm.getRhs()).getRank() != 2 ||
        tensorOf(mm.getLhs()).getRank() < 2)
      return;
    OpBuilder b(ce);
    auto fused = MatmulCrossEntropyLossOp::create(b, b.getFusedLoc({mm.getLoc(), ce.getLoc()}), mm.getLhs(),
                                                  mm.getRhs(), ce.getLabels(), mm.getTransposeRhs(),
                                                  headChunkRows(mm.getLhs(), mm.getRhs()), logitSoftcap(ce));
    ce.getResult().replaceAllUsesWith(fused.getLoss());
    ce->erase();
    mm->erase();
  }

  /// zcc-recompute put the copies the loss's backward read (its logits, x) right before it,
  /// with those that later backward ops read too (a block's residual stream, recomputed from
  /// its checkpoint). The fused head reads the forward's own x instead, so it runs first and
  /// the copies still read move down to their first reader: x dies at the start of the
  /// backward pass and the recomputed block is not live under the head's workspace.
  static void sinkClonesBefore(Operation *head) {
    Operation *op = head->getPrevNode();
    while (op && (op->hasAttr(kRecomputedAttr) || op->hasTrait<OpTrait::ConstantLike>())) {
      Operation *previous = op->getPrevNode();
      if (op->hasAttr(kRecomputedAttr)) {
        Operation *first = nullptr;
        for (Operation *user : op->getUsers()) {
          Operation *inBlock = op->getBlock()->findAncestorOpInBlock(*user);
          if (inBlock && (!first || inBlock->isBeforeInBlock(first)))
            first = inBlock;
        }
        if (first && head->isBeforeInBlock(first))
          op->moveBefore(first);
      }
      op = previous;
    }
  }
};

struct ZccFusePass : zc::impl::ZccFuseBase<ZccFusePass> {
  using Base::Base;

  void runOnOperation() override {
    Fuser fuser;
    fuser.headChunkBytes = headChunkBytes;
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (!fn->hasAttr("zc.role"))
        continue;
      // The head first: it may erase the recomputed copies its weight gradient read, which
      // the lists below would otherwise hold.
      SmallVector<CrossEntropyGradOp> lossGrads;
      fn.walk([&](CrossEntropyGradOp c) { lossGrads.push_back(c); });
      for (CrossEntropyGradOp c : lossGrads)
        fuser.fuseHead(c);
      SmallVector<CrossEntropyOp> losses;
      fn.walk([&](CrossEntropyOp c) { losses.push_back(c); });
      for (CrossEntropyOp c : losses)
        fuser.fuseLossHead(c);
      SmallVector<BiasAddOp> biasAdds;
      SmallVector<GeluGradOp> geluGrads;
      SmallVector<AddOp> sums;
      SmallVector<LayerNormOp> norms;
      SmallVector<LayerNormGradOp> normGrads;
      SmallVector<SiluGradOp> siluGrads;
      fn.walk([&](Operation *op) {
        if (auto s = dyn_cast<SiluGradOp>(op))
          siluGrads.push_back(s);
        if (auto a = dyn_cast<AddOp>(op))
          sums.push_back(a);
        else if (auto n = dyn_cast<LayerNormOp>(op))
          norms.push_back(n);
        else if (auto g = dyn_cast<LayerNormGradOp>(op))
          normGrads.push_back(g);
        else if (auto b = dyn_cast<BiasAddOp>(op))
          biasAdds.push_back(b);
        else if (auto g = dyn_cast<GeluGradOp>(op))
          geluGrads.push_back(g);
      });
      for (SiluGradOp s : siluGrads)
        fuser.fuseSwiglu(s);
      // A fused sum erases its inner adds, which are listed too: skip those.
      for (AddOp a : sums)
        if (!fuser.erasedAdds.contains(a.getOperation()))
          fuser.fuseSliceGradSum(a);
      for (GeluGradOp g : geluGrads)
        fuser.fuseBackward(g);
      for (BiasAddOp b : biasAdds)
        fuser.fuseForward(b);
      // After the concatenations (which erase adds of slice_grads): the residual stream's adds.
      for (LayerNormOp n : norms)
        fuser.fuseAddLayerNorm(n);
      for (LayerNormGradOp g : normGrads)
        fuser.fuseLayerNormGradAdd(g);
    }
    // The report's recomputed FLOPs are zcc-recompute's count: take out the copies erased.
    ModuleOp module = getOperation();
    auto recompute = module->getAttrOfType<DictionaryAttr>("zc.recompute");
    if (recompute && fuser.erasedRecomputeFlops > 0)
      if (auto flops = recompute.getAs<IntegerAttr>("flops")) {
        NamedAttrList fields(recompute);
        fields.set("flops", IntegerAttr::get(flops.getType(),
                                             std::max<int64_t>(0, flops.getInt() - int64_t(fuser.erasedRecomputeFlops))));
        module->setAttr("zc.recompute", fields.getDictionary(module.getContext()));
      }
  }
};

} // namespace
