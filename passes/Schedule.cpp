//===- Schedule.cpp - overlap collectives with compute ---------------------===//
//
// Every collective becomes a start/wait pair on the communication stream; starts
// move up (parameter gathers prefetched a bounded number of groups ahead, the
// reductions of the optimizer step all issued first) and waits move down (a
// gradient bucket's reduce-scatter is waited on at the end of the backward
// pass), so transfers run while the compute stream works. Expert parallelism's
// exchanges, whose rows the next op reads, get compute pulled in instead: the
// later ops that do not depend on the rows in flight (a shared expert beside the
// routed ones, its gradient) move up before the wait (Megatron-Core's
// --moe-shared-expert-overlap, found from the graph), and the experts' weight
// gradients move down after the backward's return exchange starts.
//
// Same order on every rank: the pass is a deterministic function of the module,
// which is the same on every rank (one compiled program), and the runtime's
// communication stream runs collectives in issue order. So the k-th collective
// every rank issues is the same collective; ZRT_COLLECTIVE_CHECKS verifies it at
// run time.
//
//===----------------------------------------------------------------------===//

#include "passes/MemoryPlan.h"
#include "passes/Passes.h"
#include "runtime/main/PipelineSchedule.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCSCHEDULE
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

bool isStart(Operation *op) { return isCollectiveStart(op); }

int64_t bytesOf(Value v) { return tensorBytes(tensorOf(v)); }

ParamOp paramNamed(Operation *user, Attribute name) {
  return SymbolTable::lookupNearestSymbolFrom<ParamOp>(user, cast<FlatSymbolRefAttr>(name));
}

} // namespace

void mlir::zc::expandParamGathers(Block &block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    if (isa<GatherParamOp, AllGatherParamOp>(op))
      ops.push_back(&op);
  for (Operation *op : ops) {
    auto name = op->getAttrOfType<FlatSymbolRefAttr>("param");
    ParamOp param = paramNamed(op, name);
    ParamSharding s = ParamSharding::of(param);
    Type element = param.getTensorType().getElementType();
    OpBuilder b(op);
    ArrayAttr names = b.getArrayAttr({name});
    Value own = PackShardsOp::create(b, op->getLoc(), RankedTensorType::get({s.shardElements()}, element), names);
    Value all = AllGatherOp::create(b, op->getLoc(), RankedTensorType::get({s.paddedElements()}, element), own,
                                    s.ranks, s.axis);
    if (auto gather = dyn_cast<GatherParamOp>(op))
      gather.getResult().replaceAllUsesWith(
          UnpackOp::create(b, op->getLoc(), TypeRange{gather.getType()}, all, s.ranks).getResult(0));
    else
      UnpackParamsOp::create(b, op->getLoc(), all, s.ranks, names);
    op->erase();
  }
}

namespace {

/// Under expert parallelism, each expert gradient product whose rows' gradient and weights'
/// gradient are both read becomes two: the rows' where it was (the exchange home needs it), the
/// weights' moved down to just before its first reader (the gradient's accumulation), so it runs
/// while the rows' gradient is on its way (after the exchange starts, before its wait).
void splitExpertWeightGradients(Block &block) {
  if (block.getOps<EpDispatchOp>().empty() && block.getOps<EpCombineOp>().empty())
    return;
  SmallVector<GroupedMatmulGradOp> grads;
  for (auto grad : block.getOps<GroupedMatmulGradOp>())
    if (!grad.getInputGrad().use_empty() && !grad.getWeightGrad().use_empty())
      grads.push_back(grad);
  for (GroupedMatmulGradOp grad : grads) {
    OpBuilder b(grad->getBlock(), std::next(grad->getIterator()));
    auto weights = cast<GroupedMatmulGradOp>(b.clone(*grad));
    grad.getWeightGrad().replaceAllUsesWith(weights.getWeightGrad());
    Operation *first = nullptr;
    for (Operation *user : weights.getWeightGrad().getUsers())
      if (Operation *at = block.findAncestorOpInBlock(*user); at && (!first || at->isBeforeInBlock(first)))
        first = at;
    if (first)
      weights->moveBefore(first);
  }
}

/// Each blocking collective as a start and its wait, adjacent.
void splitCollectives(Block &block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block) {
    // Sequence parallelism's gathers and scatters stay blocking: each feeds the next op. hpZ's
    // gathers (inside a group of the data axis) are parameter gathers like the data axis'.
    if (auto g = dyn_cast<AllGatherOp>(op); g && g.getAxis() != MeshAxis::data && g.getAxis() != MeshAxis::hpz)
      continue;
    if (auto rs = dyn_cast<ReduceScatterOp>(op); rs && rs.getAxis() != MeshAxis::data)
      continue;
    if (isa<AllGatherOp, ReduceScatterOp, AllReduceOp, AllToAllOp>(op) || isExpertExchange(&op))
      ops.push_back(&op);
  }
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto type = AsyncType::get(op->getContext(), tensorOf(op->getResult(0)));
    Value handle;
    if (auto o = dyn_cast<AllGatherOp>(op))
      handle = AllGatherStartOp::create(b, loc, type, o.getInput(), o.getRanks(), o.getAxis());
    else if (auto o = dyn_cast<ReduceScatterOp>(op))
      handle = ReduceScatterStartOp::create(b, loc, type, o.getKind(), o.getInput(), o.getRanks());
    else if (auto o = dyn_cast<AllReduceOp>(op))
      handle = AllReduceStartOp::create(b, loc, type, o.getKind(), o.getInput(), o.getRanks(), o.getAxis());
    else if (auto o = dyn_cast<AllToAllOp>(op))
      handle = AllToAllStartOp::create(b, loc, type, o.getInput(), o.getRanks(), o.getAxis());
    else if (auto o = dyn_cast<EpDispatchOp>(op))
      handle = EpDispatchStartOp::create(b, loc, type, o.getInput(), o.getCounts(), o.getRanks());
    else if (auto o = dyn_cast<EpCombineOp>(op))
      handle = EpCombineStartOp::create(b, loc, type, o.getInput(), o.getCounts(), o.getRanks());
    handle.getDefiningOp()->setDiscardableAttrs(op->getDiscardableAttrDictionary()); // what the report names
    op->getResult(0).replaceAllUsesWith(WaitOp::create(b, loc, handle).getResult());
    op->erase();
  }
}

class Scheduler {
public:
  Scheduler(Block &block, int64_t prefetch, int64_t maxLiveBytes, bool deferGradients)
      : block(block), prefetch(prefetch), maxLiveBytes(maxLiveBytes), deferGradients(deferGradients) {}

  void run() {
    SmallVector<Operation *> starts;
    for (Operation &op : block)
      if (isStart(&op))
        starts.push_back(&op);
    for (Operation *start : starts) {
      if (isExpertExchange(start))
        hoistProducer(start);
      hoist(start);
    }
    for (Operation *start : starts) // waits deferred to one place stay in issue order
      sink(cast<WaitOp>(*start->getResult(0).getUsers().begin()));
    for (Operation *start : starts)
      if (isExpertExchange(start))
        pullIndependentCompute(cast<WaitOp>(*start->getResult(0).getUsers().begin()));
  }

private:
  static bool isGatherStart(Operation *op) { return isa<AllGatherStartOp>(op); }

  /// The start and the ops that only prepare its input (a bucket's pack, the
  /// gradient references it packs), which move with it: the references (independent of
  /// each other), then the pack, then the start, an order that is already valid (sorting by
  /// position would recompute the block's order after every move).
  static SmallVector<Operation *> startGroup(Operation *start) {
    SmallVector<Operation *> group;
    Operation *def = start->getOperand(0).getDefiningOp();
    // qwZ's gathers send the shards quantized: pack_shards, reshape, quantize, then the start.
    if (auto q = dyn_cast_or_null<QuantizeOp>(def); q && q->hasOneUse()) {
      auto row = q.getInput().getDefiningOp<ReshapeOp>();
      auto pack = row ? row.getInput().getDefiningOp<PackShardsOp>() : PackShardsOp();
      if (row && pack && row->hasOneUse() && pack->hasOneUse())
        return {pack, row, q, start};
    }
    if (def && isa<PackOp, PackShardsOp, PackSecondaryOp, GradRefOp>(def) && def->hasOneUse()) {
      for (Value operand : def->getOperands())
        if (Operation *ref = operand.getDefiningOp(); ref && isa<GradRefOp>(ref) && ref->hasOneUse() &&
                                                     ref->getBlock() == start->getBlock())
          group.push_back(ref);
      group.push_back(def);
    }
    group.push_back(start);
    return group;
  }

  /// Bytes of communication buffers alive just before `at`: collectives in
  /// flight (their input and result) and gathered parameters not yet released.
  int64_t liveCommBytes(Operation *at) const {
    int64_t live = 0;
    DenseMap<Value, int64_t> alive; // value -> bytes
    for (Operation &op : block) {
      if (&op == at)
        break;
      if (isStart(&op))
        alive[op.getResult(0)] = bytesOf(op.getOperand(0)) +
                                 tensorBytes(cast<AsyncType>(op.getResult(0).getType()).getValueType());
      else if (auto wait = dyn_cast<WaitOp>(op))
        alive.erase(wait.getHandle());
      else if (auto unpack = dyn_cast<UnpackOp>(op)) {
        if (auto wait = unpack.getInput().getDefiningOp<WaitOp>();
            wait && isa<AllGatherStartOp>(wait.getHandle().getDefiningOp()))
          for (Value r : unpack.getResults())
            alive[r] = bytesOf(r);
      } else if (auto release = dyn_cast<ReleaseOp>(op))
        alive.erase(release.getInput());
    }
    for (auto &entry : alive)
      live += entry.second;
    return live;
  }

  /// Without a cap (no --max-live-mb) everything fits: skip the walk, which is linear in the
  /// block and made scheduling cubic in it (6 s of a 405B-parameter ZeRO-3 compile).
  bool fits(Operation *at, int64_t extra) const {
    return maxLiveBytes == std::numeric_limits<int64_t>::max() || liveCommBytes(at) + extra <= maxLiveBytes;
  }

  static bool namesAny(Operation *op, const DenseSet<Attribute> &symbols) {
    return llvm::any_of(namedSymbols(op), [&](Attribute s) { return symbols.contains(s); });
  }

  void hoist(Operation *start) {
    if (isGatherStart(start) && prefetch == 0)
      return;
    SmallVector<Operation *> group = startGroup(start);
    DenseSet<Operation *> members(group.begin(), group.end());
    DenseSet<Attribute> symbols;
    for (Operation *op : group)
      for (Attribute s : namedSymbols(op))
        symbols.insert(s);
    int64_t bytes = bytesOf(start->getOperand(0)) +
                    tensorBytes(cast<AsyncType>(start->getResult(0).getType()).getValueType());
    int64_t passedGatherWaits = 0;
    Operation *first = group.front();
    Operation *stop = nullptr; // the group goes right after it (null: block start)
    for (Operation *cursor = first->getPrevNode(); cursor; cursor = cursor->getPrevNode()) {
      bool defines = llvm::any_of(group, [&](Operation *op) {
        return llvm::any_of(op->getOperands(), [&](Value v) { return v.getDefiningOp() == cursor; });
      });
      if (members.contains(cursor))
        continue;
      // Starts keep their order: the stream runs them in issue order, and the
      // first to be waited on was issued first.
      if (defines || isStart(cursor) || namesAny(cursor, symbols) || !fits(cursor, bytes)) {
        stop = cursor;
        break;
      }
      if (auto wait = dyn_cast<WaitOp>(cursor); wait && isGatherStart(start) &&
                                                 isGatherStart(wait.getHandle().getDefiningOp())) {
        if (passedGatherWaits == prefetch - 1) {
          stop = cursor;
          break;
        }
        ++passedGatherWaits;
      }
    }
    Operation *after = stop;
    for (Operation *op : group) {
      if (after)
        op->moveAfter(after);
      else
        op->moveBefore(&block.front());
      after = op;
    }
  }

  static bool deferrable(Operation *op) { return isPure(op) || isa<GradAccumulateOp>(op); }

  /// The pure op whose result an exchange sends (moe_dispatch, the combine's gradient) moves up
  /// to just after its operands' definitions, so the exchange can start before the compute the
  /// graph happens to list first (the shared expert's gradient).
  void hoistProducer(Operation *start) {
    Operation *def = start->getOperand(0).getDefiningOp();
    if (!def || def->getBlock() != &block || !isPure(def))
      return;
    Operation *after = nullptr; // the last of its operands' definitions in the block
    for (Value v : def->getOperands())
      if (Operation *d = v.getDefiningOp(); d && d->getBlock() == &block && (!after || after->isBeforeInBlock(d)))
        after = d;
    if (after)
      def->moveAfter(after);
    else
      def->moveBefore(&block.front());
  }

  /// Moves the ops after `wait` that depend neither on its rows nor on anything that does up
  /// before it, in their order, so they run while the exchange is in flight. The walk stops at
  /// the first op that may not move (a side effect other than a gradient's accumulation, a
  /// collective not on the rows, the terminator): effects keep their order, and collectives
  /// their issue order.
  void pullIndependentCompute(WaitOp wait) {
    DenseSet<Operation *> dependent{wait.getOperation()};
    DenseSet<Attribute> touched; // the symbols the dependent ops name (a gradient accumulated)
    SmallVector<Operation *> independent;
    for (Operation *cursor = wait->getNextNode(); cursor; cursor = cursor->getNextNode()) {
      // An op naming what a dependent one names stays behind it (two accumulations into one
      // gradient keep their order).
      const bool depends = namesAny(cursor, touched) || llvm::any_of(cursor->getOperands(), [&](Value v) {
                             Operation *def = v.getDefiningOp();
                             return def && dependent.contains(def);
                           });
      // A collective on the rows (the combine after the dispatch) stays, and the walk goes on
      // past it; any other collective, or an effect, ends it.
      const bool collective = isStart(cursor) || isa<WaitOp>(cursor);
      if (cursor->hasTrait<OpTrait::IsTerminator>() || (collective && !depends) || (!collective && !deferrable(cursor)))
        break;
      if (!depends) {
        independent.push_back(cursor);
        continue;
      }
      dependent.insert(cursor);
      for (Attribute name : namedSymbols(cursor))
        touched.insert(name);
    }
    for (Operation *op : independent)
      op->moveBefore(wait);
  }

  void sink(WaitOp wait) {
    Operation *start = wait.getHandle().getDefiningOp();
    DenseSet<Attribute> symbols;
    for (Operation *op : startGroup(start))
      for (Attribute s : namedSymbols(op))
        symbols.insert(s);
    // A gradient reduction whose consumers only accumulate: wait at the end.
    SetVector<Operation *> users;
    SmallVector<Operation *> work{wait};
    while (!work.empty())
      for (Operation *user : work.pop_back_val()->getUsers())
        if (users.insert(user))
          work.push_back(user);
    // Tensor-parallel reductions feed the rest of the backward: only the data axis' defer.
    auto reduction = dyn_cast<AllReduceStartOp>(start);
    bool dataAxis = !reduction || reduction.getAxis() == MeshAxis::data;
    // Expert exchanges feed the layer's next op, whatever reads it last: never deferred so.
    const bool expertRows = isExpertExchange(start);
    bool deferAll = deferGradients && dataAxis && !isGatherStart(start) && !expertRows && !users.empty() &&
                    llvm::all_of(users, [&](Operation *op) { return op->getBlock() == &block && deferrable(op); });
    SmallVector<Operation *> group{wait};
    if (deferAll) {
      group.append(users.begin(), users.end());
      llvm::sort(group, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    }
    DenseSet<Operation *> members(group.begin(), group.end());
    for (Operation *op : group)
      for (Attribute s : namedSymbols(op))
        symbols.insert(s);
    int64_t bytes = bytesOf(start->getOperand(0)) + bytesOf(wait.getResult());
    // Move down past ops that neither use the group's values nor name its
    // symbols, while the in-flight buffers fit.
    Operation *target = nullptr; // the group goes right before it
    int64_t reductionsPassed = 0;
    for (Operation *cursor = wait->getNextNode(); cursor; cursor = cursor->getNextNode()) {
      if (members.contains(cursor))
        continue;
      // A deferred reduction waits before the second reduction issued after it:
      // two buckets in flight keep the link busy, more would only hold their
      // buffers (ZeRO-2/3 would keep a copy of every gradient).
      if (deferAll && isStart(cursor) && !isGatherStart(cursor) && ++reductionsPassed == 2) {
        target = cursor;
        break;
      }
      bool uses = llvm::any_of(cursor->getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && members.contains(def);
      });
      if (uses || cursor->hasTrait<OpTrait::IsTerminator>() || namesAny(cursor, symbols) ||
          !fits(cursor, isStart(cursor) ? bytes : 0)) {
        target = cursor;
        break;
      }
    }
    if (!target)
      return;
    // Users of the group that stayed behind keep the group where it is.
    for (Operation *op : group)
      if (op != wait && !deferAll)
        return;
    for (Operation *op : group)
      op->moveBefore(target);
  }

  Block &block;
  int64_t prefetch, maxLiveBytes;
  bool deferGradients;
};

struct ZccSchedulePass : zc::impl::ZccScheduleBase<ZccSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (prefetch < 0) {
      module.emitError("zcc-schedule: prefetch must be non-negative, got ") << prefetch;
      return signalPassFailure();
    }
    int64_t cap = maxLiveMb < 0 ? std::numeric_limits<int64_t>::max()
                                : static_cast<int64_t>(maxLiveMb * double(1 << 20));
    for (auto fn : module.getOps<func::FuncOp>()) {
      auto role = fn->getAttrOfType<StringAttr>("zc.role");
      if (!role)
        continue;
      Block &block = fn.getBody().front();
      expandParamGathers(block);
      // A zero-bubble stage defers its weight gradients itself (zcc-pipeline-split-backward: W),
      // which must not read the routing's integers from B.
      if (!module->hasAttr("zc.pipeline") || !zcc::pipeline::splitsBackward(pipelineSchedule(module)))
        splitExpertWeightGradients(block);
      splitCollectives(block);
      Scheduler(block, prefetch, cap, /*deferGradients=*/role.getValue() == "step").run();
    }
  }
};

} // namespace
