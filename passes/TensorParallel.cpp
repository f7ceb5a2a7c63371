//===- TensorParallel.cpp - Megatron-style tensor parallelism of the forward ===//
//
// Splits the forward over the `ranks` ranks of the tensor-parallel group, as
// Megatron-LM does, by finding its regions rather than matching one model:
//
//  - A region starts at matmuls of a replicated activation by a parameter
//    ("column" matmuls: each rank keeps a slice of the output features) and
//    follows their results through ops that work feature-slice by
//    feature-slice: bias adds, activations, products, slices of a fused QKV,
//    the rotary embedding and causal attention (whole heads per rank, grouped
//    KV heads too). It ends at matmuls that contract the split features
//    ("row" matmuls: each rank holds a partial sum of the whole output). A
//    region that would hand split features to anything else (a residual add,
//    a norm, the loss) is left replicated.
//  - The split features of a value are consecutive segments, each cut into
//    `ranks` slices (a fused QKV projection is three segments, q's, k's and
//    v's, so every rank keeps its heads of each, grouped KV heads included); a
//    parameter keeps the same slices of the axis that holds those features.
//  - The region's input goes through zc.tp_copy (its gradient is the sum of
//    the ranks' partial gradients) and each row matmul's product through
//    zc.tp_reduce (the sum; its gradient is replicated): Megatron's f and g,
//    one all-reduce per region in forward and one in backward.
//  - The vocabulary: an embedding table keeps its rows [r V/T, (r+1) V/T)
//    (zc.embedding {vocab_shards}, then zc.tp_reduce), and a language-model
//    head whose logits only feed the loss keeps the same classes, with the
//    vocabulary-parallel cross-entropy: no rank holds a row of whole logits.
//    A tied head and embedding share one split table.
//
// The decisions are in the IR: a split parameter carries its local type and
// `zc.tp_split = {axis, ranks, segments}` (the whole sizes of the segments of
// that axis); matmuls carry `zc.tp = "column"`, `"row"` or `"vocab"`.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>
#include <set>

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCTENSORPARALLEL
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

constexpr StringLiteral kTpSplit = "zc.tp_split", kTpRole = "zc.tp";

int64_t lastDim(Value v) { return tensorOf(v).getShape().back(); }

/// The parameter a value reads directly, or null.
ParamRefOp paramRead(Value v) { return v.getDefiningOp<ParamRefOp>(); }

/// The split features of a value along its last axis: consecutive segments (whole sizes),
/// each cut into `ranks` equal slices; a rank holds its slice of each, in order. One segment
/// is a plain split; a fused QKV projection has q's, k's and v's.
using Segments = SmallVector<int64_t, 3>;

/// How one parameter is split: the segments of axis `axis`.
struct ParamSplit {
  int64_t axis = 0;
  Segments segments;
  bool operator==(const ParamSplit &o) const { return axis == o.axis && segments == o.segments; }
};

/// One candidate region, grown from a column matmul.
struct Region {
  SetVector<Operation *> columns, rows;
  SetVector<Value> split; // values whose last axis is split
  SmallVector<std::pair<Value, Value>> sameLayout; // operands that must share their segments
  SetVector<SliceOp> slices;
  SetVector<Operation *> headOps; // rotary and attention: whole heads per rank
};

class Planner {
public:
  Planner(ForwardOp forward, int64_t ranks) : forward(forward), ranks(ranks) {}

  /// A matmul of an activation by a 2-D parameter contracting the activation's
  /// last axis, the parameter read only here.
  bool isParamMatmul(MatmulOp m) {
    ParamRefOp w = paramRead(m.getRhs());
    return w && !paramRead(m.getLhs()) && !m.getTransposeLhs() && tensorOf(m.getRhs()).getRank() == 2 &&
           usesOf(w.getNameAttr().getAttr()) == 1;
  }

  /// The uses of `param`'s reads now (splitting a region changes them, not the reads: each
  /// parameter's zc.param_ref ops are indexed once, not looked for in the whole forward each time).
  int64_t usesOf(StringAttr param) {
    if (refs.empty())
      forward.walk([&](ParamRefOp ref) { refs[ref.getNameAttr().getAttr()].push_back(ref); });
    int64_t n = 0;
    for (ParamRefOp ref : refs.lookup(param))
      n += std::distance(ref->use_begin(), ref->use_end());
    return n;
  }
  DenseMap<StringAttr, SmallVector<ParamRefOp>> refs;

  /// A bias add of a 1-D parameter read only here.
  bool isSplittableBias(Operation *op) {
    auto add = dyn_cast_or_null<BiasAddOp>(op);
    ParamRefOp bias = add ? paramRead(add.getBias()) : nullptr;
    return bias && tensorOf(add.getBias()).getRank() == 1 && usesOf(bias.getNameAttr().getAttr()) == 1;
  }

  /// Grows the region of `root`; false when it cannot be split.
  bool grow(MatmulOp root, Region &region) {
    SmallVector<Value> work;
    bool conflict = false; // a value both split here and replicated input of a region
    auto markSplit = [&](Value v) {
      conflict |= inputs.contains(v);
      if (region.split.insert(v))
        work.push_back(v);
    };
    // A column matmul reads a replicated activation: not one this region or an accepted one
    // splits, and not a matmul this region already contracts as a row.
    auto addColumn = [&](MatmulOp m) {
      if (!isParamMatmul(m) || claimed.contains(m) || region.rows.contains(m) || split.contains(m.getLhs()) ||
          region.split.contains(m.getLhs()))
        return false;
      region.columns.insert(m);
      return true;
    };
    std::function<bool(Value)> pull = [&](Value v) -> bool {
      if (region.split.contains(v))
        return true;
      Operation *def = v.getDefiningOp();
      if (auto m = dyn_cast_or_null<MatmulOp>(def)) {
        if (!addColumn(m))
          return false;
        markSplit(v);
        return true;
      }
      if (isa_and_nonnull<GeluOp, SiluOp, ReluOp, ScaleOp, RotaryOp>(def) || isSplittableBias(def)) {
        if (!pull(def->getOperand(0)))
          return false;
        if (isa<RotaryOp>(def))
          region.headOps.insert(def);
        region.sameLayout.push_back({def->getOperand(0), v});
        markSplit(v);
        return true;
      }
      if (auto s = dyn_cast_or_null<SliceOp>(def)) {
        if (!slicesOnlyLastAxis(s) || !pull(s.getInput()))
          return false;
        region.slices.insert(s);
        markSplit(v);
        return true;
      }
      return false;
    };

    if (!addColumn(root))
      return false;
    markSplit(root.getResult());
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        bool ok = TypeSwitch<Operation *, bool>(user)
                      .Case<GeluOp, SiluOp, ReluOp, ScaleOp, RotaryOp>([&](Operation *op) {
                        if (isa<RotaryOp>(op))
                          region.headOps.insert(op);
                        region.sameLayout.push_back({v, op->getResult(0)});
                        markSplit(op->getResult(0));
                        return true;
                      })
                      .Case([&](BiasAddOp op) {
                        if (use.getOperandNumber() != 0 || !isSplittableBias(op))
                          return false;
                        region.sameLayout.push_back({v, op.getResult()});
                        markSplit(op.getResult());
                        return true;
                      })
                      .Case<AddOp, SubOp, MulOp>([&](Operation *op) {
                        for (Value operand : op->getOperands()) {
                          if (!pull(operand))
                            return false;
                          region.sameLayout.push_back({operand, op->getResult(0)});
                        }
                        markSplit(op->getResult(0));
                        return true;
                      })
                      .Case([&](SliceOp op) {
                        if (!slicesOnlyLastAxis(op))
                          return false;
                        region.slices.insert(op);
                        markSplit(op.getResult());
                        return true;
                      })
                      .Case([&](CausalAttentionOp op) {
                        for (Value operand : op->getOperands())
                          if (!pull(operand))
                            return false;
                        region.headOps.insert(op);
                        markSplit(op.getResult());
                        return true;
                      })
                      .Case([&](MatmulOp op) {
                        // Row-parallel: contracts the split features with this rank's rows.
                        if (use.getOperandNumber() != 0 || !isParamMatmul(op) || claimed.contains(op) ||
                            region.columns.contains(op))
                          return false;
                        region.rows.insert(op);
                        return true;
                      })
                      .Default([](Operation *) { return false; });
        if (!ok)
          return false;
      }
    }
    for (Operation *op : region.columns) // a column read a value this region went on to split
      conflict |= region.split.contains(op->getOperand(0));
    return !conflict && !region.rows.empty();
  }

  /// Records an accepted region: its matmuls, the values it splits and its inputs.
  void accept(const Region &region) {
    for (Operation *op : region.columns) {
      claimed.insert(op);
      inputs.insert(op->getOperand(0));
    }
    for (Operation *op : region.rows)
      claimed.insert(op);
    split.insert(region.split.begin(), region.split.end());
  }

  static bool slicesOnlyLastAxis(SliceOp s) {
    RankedTensorType in = tensorOf(s.getInput()), out = tensorOf(s.getResult());
    for (int64_t d = 0; d + 1 < in.getRank(); ++d)
      if (in.getDimSize(d) != out.getDimSize(d) || s.getOffsets()[d] != 0)
        return false;
    return true;
  }

  /// Assigns every split value its segments; false when the region's slices, heads or sizes
  /// do not divide into `ranks` equal parts.
  bool assignSegments(Region &region, DenseMap<Value, Segments> &segments) {
    // Values that must share a layout form one class.
    llvm::EquivalenceClasses<Value> classes;
    for (Value v : region.split)
      classes.insert(v);
    for (auto [a, b] : region.sameLayout)
      classes.unionSets(a, b);
    for (Operation *op : region.headOps)
      if (auto attention = dyn_cast<CausalAttentionOp>(op))
        classes.unionSets(attention.getQuery(), attention.getResult());
    auto leader = [&](Value v) { return classes.getLeaderValue(v); };
    auto madeBySlice = [&](Value l) {
      return llvm::any_of(region.slices, [&](SliceOp s) { return leader(s.getResult()) == l; });
    };
    // A class of column products: cut where its slices begin and end. A slice's class: the
    // segments of its input it covers (whole ones only).
    DenseMap<Value, Segments> ofClass;
    bool changed = true;
    while (changed) {
      changed = false;
      for (Value v : region.split) {
        Value l = leader(v);
        if (ofClass.count(l) || madeBySlice(l))
          continue;
        std::set<int64_t> cuts{0, lastDim(v)};
        for (SliceOp s : region.slices)
          if (leader(s.getInput()) == l) {
            cuts.insert(s.getOffsets().back());
            cuts.insert(s.getOffsets().back() + lastDim(s.getResult()));
          }
        Segments segs;
        for (auto it = std::next(cuts.begin()); it != cuts.end(); ++it)
          segs.push_back(*it - *std::prev(it));
        ofClass[l] = segs;
        changed = true;
      }
      for (SliceOp s : region.slices) {
        auto parent = ofClass.find(leader(s.getInput()));
        if (parent == ofClass.end())
          continue;
        std::optional<Segments> covered =
            coveredSegments(parent->second, s.getOffsets().back(), lastDim(s.getResult()));
        if (!covered)
          return false;
        auto [it, inserted] = ofClass.try_emplace(leader(s.getResult()), *covered);
        if (!inserted && it->second != *covered)
          return false; // two slices that meet in one class cut it differently
        changed |= inserted;
      }
    }
    for (Value v : region.split) {
      auto it = ofClass.find(leader(v));
      if (it == ofClass.end() || llvm::any_of(it->second, [&](int64_t n) { return n % ranks != 0; }))
        return false;
      segments[v] = it->second;
    }
    for (SliceOp s : region.slices) // a slice of a slice: it must cut at its input's segments
      if (!coveredSegments(segments[s.getInput()], s.getOffsets().back(), lastDim(s.getResult())))
        return false;
    for (Operation *op : region.headOps) {
      if (auto rotary = dyn_cast<RotaryOp>(op)) {
        int64_t headSize = lastDim(rotary.getInput()) / rotary.getNumHeads();
        if (llvm::any_of(segments[rotary.getInput()], [&](int64_t n) { return (n / ranks) % headSize != 0; }))
          return false;
      } else if (auto attention = dyn_cast<CausalAttentionOp>(op)) {
        // Whole heads per rank, and each rank's query heads read its own key/value heads.
        if (segments[attention.getQuery()].size() != 1 || segments[attention.getKey()].size() != 1 ||
            segments[attention.getValue()].size() != 1 || attention.getNumHeads() % ranks != 0 ||
            attention.getKvHeads() % ranks != 0)
          return false;
      }
    }
    return true;
  }

  /// The segments of `segs` that [offset, offset + size) covers, or none when it cuts one.
  static std::optional<Segments> coveredSegments(const Segments &segs, int64_t offset, int64_t size) {
    Segments covered;
    int64_t at = 0;
    for (int64_t n : segs) {
      if (at >= offset && at + n <= offset + size)
        covered.push_back(n);
      else if (at < offset + size && at + n > offset)
        return std::nullopt; // straddles an end of the slice
      at += n;
    }
    return covered;
  }

  ForwardOp forward;
  int64_t ranks;
  DenseSet<Operation *> claimed; // matmuls of accepted regions (and the heads)
  DenseSet<Value> split, inputs;  // the values accepted regions split, and their inputs
};

/// Applies the plan to the IR.
class Splitter {
public:
  Splitter(ModuleOp module, ForwardOp forward, int64_t ranks) : module(module), forward(forward), ranks(ranks) {}

  /// Records that `param` is split as `how`; false when it is already split otherwise.
  bool splitParam(StringAttr param, ParamSplit how) {
    auto [it, inserted] = params.try_emplace(param, how);
    return inserted || it->second == how;
  }

  void splitLastAxis(Value v) {
    RankedTensorType t = tensorOf(v);
    SmallVector<int64_t> shape(t.getShape());
    shape.back() /= ranks;
    v.setType(t.clone(shape));
  }

  /// One tp_copy per replicated value entering a region.
  Value copyOf(Value x) {
    auto [it, inserted] = copies.try_emplace(x);
    if (inserted) {
      OpBuilder b(forward.getContext());
      if (auto arg = dyn_cast<BlockArgument>(x))
        b.setInsertionPointToStart(arg.getOwner());
      else
        b.setInsertionPointAfter(x.getDefiningOp());
      it->second = TpCopyOp::create(b, x.getLoc(), x.getType(), x, ranks);
    }
    return it->second;
  }

  void reduceAfter(Operation *op) {
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    Value partial = op->getResult(0);
    auto sum = TpReduceOp::create(b, op->getLoc(), partial.getType(), partial, ranks);
    partial.replaceAllUsesExcept(sum.getResult(), sum);
  }

  void apply(Region &region, const DenseMap<Value, Segments> &segments) {
    Builder b(module.getContext());
    for (Operation *op : region.columns) {
      auto m = cast<MatmulOp>(op);
      splitParam(paramRead(m.getRhs()).getNameAttr().getAttr(),
                 {m.getTransposeRhs() ? 0 : 1, segments.lookup(m.getResult())});
      m.getLhsMutable().assign(copyOf(m.getLhs()));
      m->setAttr(kTpRole, b.getStringAttr("column"));
    }
    for (Operation *op : region.rows) {
      auto m = cast<MatmulOp>(op);
      splitParam(paramRead(m.getRhs()).getNameAttr().getAttr(),
                 {m.getTransposeRhs() ? 1 : 0, segments.lookup(m.getLhs())});
      m->setAttr(kTpRole, b.getStringAttr("row"));
    }
    for (Value v : region.split)
      if (auto bias = v.getDefiningOp<BiasAddOp>())
        splitParam(paramRead(bias.getBias()).getNameAttr().getAttr(), {0, segments.lookup(v)});
    for (SliceOp s : region.slices) {
      SmallVector<int64_t> offsets(s.getOffsets());
      offsets.back() /= ranks;
      s.setOffsets(offsets);
    }
    for (Value v : region.split)
      splitLastAxis(v);
    for (Operation *op : region.headOps) {
      if (auto rotary = dyn_cast<RotaryOp>(op))
        rotary.setNumHeads(rotary.getNumHeads() / ranks);
      else if (auto attention = dyn_cast<CausalAttentionOp>(op)) {
        int64_t kv = attention.getKvHeads();
        attention.setNumHeads(attention.getNumHeads() / ranks);
        if (attention.getNumKvHeads())
          attention.setNumKvHeads(kv / ranks);
      }
    }
    for (Operation *op : region.rows)
      reduceAfter(op);
  }

  /// The parameters' local types and their split attributes.
  void finish() {
    Builder b(module.getContext());
    DenseMap<StringAttr, SmallVector<ParamRefOp>> refs; // each parameter's reads, found in one walk
    forward.walk([&](ParamRefOp ref) { refs[ref.getNameAttr().getAttr()].push_back(ref); });
    for (ParamOp param : module.getOps<ParamOp>()) {
      auto it = params.find(param.getSymNameAttr());
      if (it == params.end())
        continue;
      RankedTensorType t = param.getTensorType();
      SmallVector<int64_t> shape(t.getShape());
      shape[it->second.axis] /= ranks;
      RankedTensorType local = t.clone(shape);
      param.setTypeAttr(TypeAttr::get(local));
      param->setAttr(kTpSplit, b.getDictionaryAttr({b.getNamedAttr("axis", b.getI64IntegerAttr(it->second.axis)),
                                                    b.getNamedAttr("ranks", b.getI64IntegerAttr(ranks)),
                                                    b.getNamedAttr("segments",
                                                                   b.getDenseI64ArrayAttr(it->second.segments))}));
      for (ParamRefOp ref : refs.lookup(param.getSymNameAttr()))
        ref.getResult().setType(local);
    }
  }

  bool empty() const { return params.empty(); }

  ModuleOp module;
  ForwardOp forward;
  int64_t ranks;
  DenseMap<StringAttr, ParamSplit> params;
  DenseMap<Value, Value> copies;
};

struct ZccTensorParallelPass : zc::impl::ZccTensorParallelBase<ZccTensorParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ranks < 1) {
      module.emitError("zcc-tensor-parallel: ranks must be positive, got ") << ranks;
      return signalPassFailure();
    }
    if (ranks == 1)
      return;
    for (ForwardOp forward : module.getOps<ForwardOp>())
      if (failed(split(module, forward)))
        return signalPassFailure();
  }

  LogicalResult split(ModuleOp module, ForwardOp forward) {
    Planner planner(forward, ranks);
    Splitter splitter(module, forward, ranks);
    SmallVector<MatmulOp> matmuls;
    forward.walk([&](MatmulOp m) { matmuls.push_back(m); });

    // The vocabulary first: the head's matmul is not a region's.
    if (failed(splitVocabulary(forward, planner, splitter)))
      return failure();

    for (MatmulOp root : matmuls) {
      if (planner.claimed.contains(root) || !planner.isParamMatmul(root))
        continue;
      Region region;
      DenseMap<Value, Segments> segments;
      if (!planner.grow(root, region) || !planner.assignSegments(region, segments))
        continue;
      planner.accept(region);
      splitter.apply(region, segments);
    }
    if (splitter.empty())
      return forward.emitOpError("--tp ")
             << static_cast<int64_t>(ranks)
             << ": no matmul region or vocabulary of this model splits into that many equal parts (heads, "
                "features and the vocabulary must divide by it)";
    splitter.finish();
    return success();
  }

  /// The views from a head's product to the loss that reads it as logits: reshapes that keep
  /// the class axis last, each the only use of the one before.
  static FailureOr<SmallVector<Value>> logitsPath(MatmulOp head) {
    SmallVector<Value> path{head.getResult()};
    int64_t classes = lastDim(head.getResult());
    while (path.back().hasOneUse()) {
      Operation *user = *path.back().getUsers().begin();
      if (auto ce = dyn_cast<CrossEntropyOp>(user))
        return ce.getLogits() == path.back() ? FailureOr<SmallVector<Value>>(path)
                                             : FailureOr<SmallVector<Value>>(failure());
      auto view = dyn_cast<ReshapeOp>(user);
      if (!view || lastDim(view.getResult()) != classes)
        return failure();
      path.push_back(view.getResult());
    }
    return failure();
  }

  /// Embedding tables and the language-model head over the vocabulary.
  LogicalResult splitVocabulary(ForwardOp forward, Planner &planner, Splitter &splitter) {
    // Every use of each table parameter must be an embedding lookup or the head.
    DenseMap<StringAttr, SmallVector<Operation *>> users;
    DenseSet<StringAttr> unsplittable;
    forward.walk([&](ParamRefOp ref) {
      StringAttr name = ref.getNameAttr().getAttr();
      for (OpOperand &use : ref->getUses()) {
        Operation *user = use.getOwner();
        bool lookup = isa<EmbeddingOp>(user) && use.getOperandNumber() == 0;
        bool head = false;
        if (auto m = dyn_cast<MatmulOp>(user); m && use.getOperandNumber() == 1 && !m.getTransposeLhs() &&
                                               !paramRead(m.getLhs()))
          head = succeeded(logitsPath(m));
        if (lookup || head)
          users[name].push_back(user);
        else
          unsplittable.insert(name);
      }
    });
    Builder b(forward.getContext());
    for (auto &[name, ops] : users) {
      if (unsplittable.contains(name))
        continue;
      // The vocabulary is the table's rows ([V, C]) or a head's output columns.
      std::optional<ParamSplit> how;
      bool divides = true;
      for (Operation *op : ops) {
        ParamSplit here;
        int64_t vocab;
        if (auto e = dyn_cast<EmbeddingOp>(op)) {
          vocab = tensorOf(e.getTable()).getDimSize(0);
          here = {0, {vocab}};
        } else {
          auto m = cast<MatmulOp>(op);
          vocab = lastDim(m.getResult());
          here = {m.getTransposeRhs() ? 0 : 1, {vocab}};
        }
        divides &= vocab % ranks == 0 && (!how || *how == here);
        how = here;
      }
      if (!divides || !splitter.splitParam(name, *how))
        continue;
      for (Operation *op : ops) {
        if (auto e = dyn_cast<EmbeddingOp>(op)) {
          e.setVocabShards(static_cast<uint64_t>(ranks));
          splitter.reduceAfter(e);
          continue;
        }
        auto m = cast<MatmulOp>(op);
        planner.claimed.insert(m);
        planner.inputs.insert(m.getLhs());
        m.getLhsMutable().assign(splitter.copyOf(m.getLhs()));
        m->setAttr(kTpRole, b.getStringAttr("vocab"));
        SmallVector<Value> path = *logitsPath(m);
        for (Value v : path)
          splitter.splitLastAxis(v);
        cast<CrossEntropyOp>(*path.back().getUsers().begin()).setVocabShards(static_cast<uint64_t>(ranks));
      }
    }
    return success();
  }
};

} // namespace
