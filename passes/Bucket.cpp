//===- Bucket.cpp - coalesce collectives into buckets ----------------------===//
//
// One collective call per parameter tensor is latency-bound for small tensors
// (biases, norms) and costs a call each; a bucket packs several tensors into one
// buffer so one call moves them all. The layout (zc.pack, rank-interleaved) keeps
// every rank's share exactly what separate collectives would have given it.
//
//===----------------------------------------------------------------------===//

#include "passes/CostModel.h"
#include "passes/Passes.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCBUCKET
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

enum class Kind { ReduceScatter, AllReduce, GatherParam, RefreshParam };

/// What must agree for two collectives to share a bucket.
struct Key {
  Kind kind;
  int64_t reduce, ranks;
  Type element;
  bool operator==(const Key &o) const {
    return kind == o.kind && reduce == o.reduce && ranks == o.ranks && element == o.element;
  }
};

int64_t elementBytes(Type t) { return t.getIntOrFloatBitWidth() / 8; }

/// The parameter a gather names, from the module's symbol table (built once: a lookup from the op
/// scans the module's ops, per gather of every function, which dominated --plan auto's compiles).
ParamOp paramOf(Operation *op, SymbolTable &symbols) {
  return symbols.lookup<ParamOp>(op->getAttrOfType<FlatSymbolRefAttr>("param").getAttr());
}

/// The bucket key of a collective zcc-bucket handles, and the bytes it adds.
std::optional<std::pair<Key, int64_t>> classify(Operation *op, SymbolTable &symbols) {
  if (auto rs = dyn_cast<ReduceScatterOp>(op)) {
    if (rs.getAxis() != MeshAxis::data) // sequence parallelism's: on the critical path, as the all-reduces
      return std::nullopt;
    RankedTensorType in = tensorOf(rs.getInput());
    return std::pair{Key{Kind::ReduceScatter, static_cast<int64_t>(rs.getKind()),
                         static_cast<int64_t>(rs.getRanks()), in.getElementType()},
                     in.getNumElements() * elementBytes(in.getElementType())};
  }
  if (auto ar = dyn_cast<AllReduceOp>(op)) {
    // Tensor parallelism's reductions are in the forward and backward's critical path, each
    // needed by the next op: nothing to coalesce them with.
    if (ar.getAxis() != MeshAxis::data)
      return std::nullopt;
    RankedTensorType in = tensorOf(ar.getInput());
    return std::pair{Key{Kind::AllReduce, static_cast<int64_t>(ar.getKind()),
                         static_cast<int64_t>(ar.getRanks()), in.getElementType()},
                     in.getNumElements() * elementBytes(in.getElementType())};
  }
  if (isa<GatherParamOp, AllGatherParamOp>(op)) {
    ParamOp param = paramOf(op, symbols);
    ParamSharding s = ParamSharding::of(param);
    if (s.axis != MeshAxis::data) // an expert weight's shards: over the ranks holding its experts
      return std::nullopt;
    Type element = param.getTensorType().getElementType();
    return std::pair{Key{isa<GatherParamOp>(op) ? Kind::GatherParam : Kind::RefreshParam, 0, s.ranks, element},
                     s.paddedElements() * elementBytes(element)};
  }
  return std::nullopt;
}

/// Ops that may run later than written when a bucket delays their input.
bool movable(Operation *op) {
  return isPure(op) || isa<GradAccumulateOp, ScaleOp, AdamWOp, SgdOp, AllGatherParamOp, GradZeroOp,
                           ReshapeOp, CastOp>(op);
}

class Bucketer {
public:
  Bucketer(int64_t gradientBytes, int64_t gatherBytes, SymbolTable &symbols)
      : gradientBytes(gradientBytes), gatherBytes(gatherBytes), symbols(symbols) {}

  void run(func::FuncOp fn) {
    for (Kind kind : {Kind::ReduceScatter, Kind::AllReduce, Kind::GatherParam, Kind::RefreshParam})
      bucketKind(fn.getBody().front(), kind);
  }

  int64_t buckets = 0;

private:
  struct Group {
    Key key;
    SmallVector<Operation *> members;
    int64_t bytes = 0;
  };

  void bucketKind(Block &block, Kind kind) {
    SmallVector<Operation *> candidates;
    for (Operation &op : block)
      if (auto c = classify(&op, symbols); c && c->first.kind == kind)
        candidates.push_back(&op);
    int64_t limit = kind == Kind::GatherParam || kind == Kind::RefreshParam ? gatherBytes : gradientBytes;
    if (limit <= 0)
      return;
    // One open group per key (kinds interleave with other keys: bf16 and f32, say).
    SmallVector<Group> open;
    for (Operation *op : candidates) {
      std::pair<Key, int64_t> classified = *classify(op, symbols);
      Key key = classified.first;
      int64_t bytes = classified.second;
      Group *group = llvm::find_if(open, [&](const Group &g) { return g.key == key; });
      if (group == open.end()) {
        open.push_back(Group{key, {}, 0});
        group = &open.back();
      }
      if (!group->members.empty() && (group->bytes + bytes > limit || !canJoin(*group, op))) {
        flush(*group);
        group->members.clear();
        group->bytes = 0;
      }
      group->members.push_back(op);
      group->bytes += bytes;
    }
    for (Group &group : open)
      flush(group);
  }

  bool issuedLast(Kind kind) const { return kind != Kind::GatherParam; }

  /// The ops between the first member and `at` that must run after a bucket
  /// issued at `at`: those that read a member's (or a delayed op's) result, and
  /// those that name a parameter or state a member or a delayed op names (their
  /// order with it is kept).
  static SetVector<Operation *> delayedOps(ArrayRef<Operation *> members, Operation *at) {
    SetVector<Operation *> delayed;
    DenseSet<Attribute> symbols; // named by a member or delayed op seen so far
    DenseSet<Operation *> producers;
    DenseSet<Operation *> memberSet(members.begin(), members.end()); // a bucket has hundreds at scale
    for (Operation *op = members.front(); op && op != at; op = op->getNextNode()) {
      if (memberSet.contains(op)) {
        producers.insert(op);
        for (Attribute s : namedSymbols(op))
          symbols.insert(s);
        continue;
      }
      bool reads = llvm::any_of(op->getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && producers.contains(def);
      });
      SmallVector<Attribute> named = namedSymbols(op);
      bool orders = llvm::any_of(named, [&](Attribute s) { return symbols.contains(s); });
      if (!reads && !orders)
        continue;
      delayed.insert(op);
      producers.insert(op);
      for (Attribute s : named)
        symbols.insert(s);
    }
    return delayed;
  }

  /// Whether `candidate` can join `group` with the bucket issued where the
  /// group's issuing member will be.
  bool canJoin(const Group &group, Operation *candidate) {
    if (group.key.kind == Kind::GatherParam || group.key.kind == Kind::RefreshParam)
      for (Operation *member : group.members) // by name: a symbol lookup is linear in the module
        if (member->getAttr("param") == candidate->getAttr("param"))
          return false; // a parameter once per bucket
    if (!issuedLast(group.key.kind))
      return true; // gathers move earlier: they read nothing computed in the step
    // Issued at `candidate`: what depends on the earlier members moves after it.
    SetVector<Operation *> delayed = delayedOps(group.members, candidate);
    if (!llvm::all_of(delayed, movable))
      return false;
    for (Value operand : candidate->getOperands())
      if (Operation *def = operand.getDefiningOp(); def && delayed.contains(def))
        return false;
    SmallVector<Attribute> named = namedSymbols(candidate);
    for (Operation *op : delayed)
      for (Attribute s : namedSymbols(op))
        if (llvm::is_contained(named, s))
          return false;
    return true;
  }

  void flush(Group &group) {
    if (group.members.size() < 2)
      return;
    ++buckets;
    switch (group.key.kind) {
    case Kind::ReduceScatter:
    case Kind::AllReduce:
      return bucketReductions(group);
    case Kind::GatherParam:
      return bucketGathers(group);
    case Kind::RefreshParam:
      return bucketRefreshes(group);
    }
  }

  void bucketReductions(Group &group) {
    Operation *last = group.members.back();
    SetVector<Operation *> delayed = delayedOps(ArrayRef(group.members).drop_back(), last);

    OpBuilder b(last);
    Location loc = fusedLoc(b, group);
    SmallVector<Value> inputs;
    SmallVector<Type> resultTypes;
    for (Operation *m : group.members) {
      inputs.push_back(m->getOperand(0));
      resultTypes.push_back(m->getResult(0).getType());
    }
    int64_t ranks = group.key.ranks;
    bool scatter = group.key.kind == Kind::ReduceScatter;
    int64_t packRanks = scatter ? ranks : 1, shard = 0;
    for (Value in : inputs)
      shard += (tensorOf(in).getNumElements() + packRanks - 1) / packRanks;
    Type element = group.key.element;
    auto packedType = RankedTensorType::get({shard * packRanks}, element);
    Value packed = PackOp::create(b, loc, packedType, inputs, packRanks);
    Value reduced;
    auto kind = static_cast<ReduceKind>(group.key.reduce);
    if (scatter)
      reduced = ReduceScatterOp::create(b, loc, RankedTensorType::get({shard}, element), kind, packed, ranks);
    else
      reduced = AllReduceOp::create(b, loc, packedType, kind, packed, ranks);
    auto unpack = UnpackOp::create(b, loc, resultTypes, reduced, 1);
    for (auto [m, result] : llvm::zip(group.members, unpack.getResults()))
      m->getResult(0).replaceAllUsesWith(result);
    placeAfter(delayed.getArrayRef(), unpack);
    for (Operation *m : group.members)
      m->erase();
  }

  /// Moves `ops` (in block order) to right after `anchor`, keeping their order.
  static void placeAfter(ArrayRef<Operation *> ops, Operation *anchor) {
    for (Operation *op : ops) {
      op->moveAfter(anchor);
      anchor = op;
    }
  }

  static Location fusedLoc(OpBuilder &b, const Group &group) {
    return b.getFusedLoc(llvm::map_to_vector(group.members, [](Operation *m) { return m->getLoc(); }));
  }

  /// The pack_shards / all_gather pair of a parameter group; returns the gathered bucket.
  Value gatherBucket(OpBuilder &b, Location loc, const Group &group, SmallVector<Attribute> &names) {
    int64_t shard = 0;
    for (Operation *m : group.members) {
      ParamOp param = paramOf(m, symbols);
      names.push_back(FlatSymbolRefAttr::get(param.getSymNameAttr()));
      shard += ParamSharding::of(param).shardElements();
    }
    Type element = group.key.element;
    Value own = PackShardsOp::create(b, loc, RankedTensorType::get({shard}, element), b.getArrayAttr(names));
    return AllGatherOp::create(b, loc, RankedTensorType::get({shard * group.key.ranks}, element), own,
                               group.key.ranks);
  }

  void bucketGathers(Group &group) {
    OpBuilder b(group.members.front());
    Location loc = fusedLoc(b, group);
    SmallVector<Attribute> names;
    Value all = gatherBucket(b, loc, group, names);
    SmallVector<Type> wholeTypes;
    for (Operation *m : group.members)
      wholeTypes.push_back(m->getResult(0).getType());
    auto unpack = UnpackOp::create(b, loc, wholeTypes, all, group.key.ranks);
    for (auto [m, result] : llvm::zip(group.members, unpack.getResults())) {
      m->getResult(0).replaceAllUsesWith(result);
      m->erase();
    }
  }

  void bucketRefreshes(Group &group) {
    Operation *last = group.members.back();
    SetVector<Operation *> delayed = delayedOps(ArrayRef(group.members).drop_back(), last);
    OpBuilder b(last);
    Location loc = fusedLoc(b, group);
    SmallVector<Attribute> names;
    Value all = gatherBucket(b, loc, group, names);
    placeAfter(delayed.getArrayRef(), UnpackParamsOp::create(b, loc, all, group.key.ranks, b.getArrayAttr(names)));
    for (Operation *m : group.members)
      m->erase();
  }

  int64_t gradientBytes, gatherBytes;
  SymbolTable &symbols;
};

struct ZccBucketPass : zc::impl::ZccBucketBase<ZccBucketPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    CostModel costs;
    if (!costModel.empty()) {
      std::string error;
      FailureOr<CostModel> loaded = CostModel::load(costModel, error);
      if (failed(loaded)) {
        module.emitError("zcc-bucket: ") << error;
        return signalPassFailure();
      }
      costs = *loaded;
    }
    int64_t ranks = 1;
    for (ParamOp param : module.getOps<ParamOp>())
      ranks = std::max(ranks, ParamSharding::of(param).ranks);
    module.walk([&](Operation *op) {
      if (auto r = op->getAttrOfType<IntegerAttr>("ranks"))
        ranks = std::max<int64_t>(ranks, r.getInt());
    });
    constexpr double kMiB = 1 << 20;
    auto bytes = [&](double mb, const CollectiveCost &cost, bool allReduce) -> int64_t {
      return mb < 0 ? CostModel::bucketBytesFor(cost, ranks, allReduce) : static_cast<int64_t>(mb * kMiB);
    };
    // ZeRO >= 1 reduce-scatters gradients, stage 0 all-reduces them.
    bool anyAllReduce = false;
    module.walk([&](AllReduceOp) { anyAllReduce = true; });
    int64_t gradient = anyAllReduce ? bytes(bucketMb, costs.allReduce, true)
                                    : bytes(bucketMb, costs.reduceScatter, false);
    SymbolTable symbols(module);
    Bucketer bucketer(gradient, bytes(gatherBucketMb, costs.allGather, false), symbols);
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr("zc.role"))
        bucketer.run(fn);
  }
};

} // namespace
