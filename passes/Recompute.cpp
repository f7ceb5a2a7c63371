//===- Recompute.cpp - activations recomputed in backward instead of kept --===//
//
// Autodiff keeps every forward value the backward pass reads alive from the
// forward to the backward pass. For a chosen set of them, this pass clones the
// ops that compute them right before their first backward use (recursively
// through other recomputed values) and points the backward uses at the clones,
// so the originals die after their last forward use. The clones compute the same
// values from the same inputs with the same kernels: results are bitwise equal.
//
// Which values are candidates: results of pure compute ops of the forward pass
// with a backward use. The pass runs before zcc-zero: under ZeRO-3 the parameters
// a clone reads are gathered for the backward pass with those its backward ops
// read (a parameter only a clone reads, a bias say, is gathered there too).
//
//===----------------------------------------------------------------------===//

#include "passes/CostModel.h"
#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <functional>
#include <limits>
#include <numeric>

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCRECOMPUTE
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

struct Candidate {
  int64_t opIndex, resultIndex; // position in the step body (stable across clones of the module)
  int64_t bytes;
  double flops; // of the op computing it
};

/// The step function's forward/backward split and its candidates.
class StepAnalysis {
public:
  explicit StepAnalysis(func::FuncOp step) : step(step) {
    for (Operation &op : step.getBody().front()) {
      if (auto c = dyn_cast<arith::ConstantOp>(op); c && c->hasAttr(kBackwardSeedAttr))
        seed = c;
      ops.push_back(&op);
    }
  }

  bool valid() const { return seed != nullptr; }
  bool isBackward(Operation *op) const { return !op->isBeforeInBlock(seed); }
  /// Read by a backward op (returning the loss reads nothing that must be kept).
  bool hasBackwardUse(Value v) const {
    return llvm::any_of(v.getUsers(), [&](Operation *user) {
      return isBackward(user) && !user->hasTrait<OpTrait::IsTerminator>();
    });
  }

  /// Whether `op` may run again in backward: pure compute of the forward pass. Under
  /// ZeRO-3 (zcc-zero runs after this pass) a sharded parameter a clone reads is gathered
  /// for the backward pass like the backward ops' own: one gather per parameter spans all
  /// its backward readers, so a clone next to its layer's backward shares that gather, and
  /// a parameter only the clone reads (a bias, a norm's shift) gets a gather of its own,
  /// bucketed and prefetched with the layer's by zcc-bucket and zcc-schedule.
  bool recomputable(Operation *op) const {
    return !isBackward(op) && isPure(op) && op->getNumResults() != 0 &&
           op->getName().getDialectNamespace() == ZcDialect::getDialectNamespace() && !isa<ParamRefOp>(op);
  }

  /// Whether recomputing `v` (through cheap ops, at most `flopsPerByte`) reads
  /// only values that stay alive anyway: inputs, parameters, constants, values the
  /// backward pass reads.
  bool recomputesFromKept(Value v, double flopsPerByte) const {
    Operation *def = v.getDefiningOp();
    for (Value u : def->getOperands()) {
      Operation *producer = u.getDefiningOp();
      if (!producer || isa<ParamRefOp, arith::ConstantOp>(producer) || hasBackwardUse(u))
        continue;
      if (isa<ReshapeOp>(producer) || (recomputable(producer) && estimatedFlops(producer) /
                                                                     double(tensorBytes(tensorOf(u))) <=
                                                                 flopsPerByte)) {
        if (recomputesFromKept(u, flopsPerByte))
          continue;
      }
      return false;
    }
    return true;
  }

  std::vector<Candidate> candidates() const {
    std::vector<Candidate> result;
    for (auto [i, op] : llvm::enumerate(ops)) {
      if (!recomputable(op) || isa<ReshapeOp>(op)) // views hold no bytes of their own
        continue;
      for (OpResult r : op->getResults())
        if (isa<RankedTensorType>(r.getType()) && hasBackwardUse(r))
          result.push_back({static_cast<int64_t>(i), r.getResultNumber(), tensorBytes(tensorOf(r)),
                            estimatedFlops(op)});
    }
    return result;
  }

  Value valueOf(const Candidate &c) const { return ops[c.opIndex]->getResult(c.resultIndex); }

  /// Forward values kept by "full": the residual stream between blocks, found as
  /// values alone in flight where they are defined (nothing older but parameters
  /// and inputs is still needed by the forward pass) that several forward ops read
  /// (a block's norm and its residual add). A plain chain has none: all of it is
  /// recomputed from the step's inputs.
  DenseSet<Value> checkpoints() const {
    DenseSet<Value> kept;
    // Last forward use of every forward value.
    DenseMap<Value, int64_t> lastForwardUse;
    int64_t seedIndex = llvm::find(ops, seed) - ops.begin();
    for (int64_t i = 0; i < seedIndex; ++i)
      for (Value operand : ops[i]->getOperands())
        lastForwardUse[operand] = i;
    for (int64_t i = 0; i < seedIndex; ++i) {
      if (!recomputable(ops[i]) || isa<ReshapeOp>(ops[i]))
        continue;
      for (Value r : ops[i]->getResults()) {
        int64_t forwardReaders = llvm::count_if(r.getUsers(), [&](Operation *u) { return !isBackward(u); });
        if (forwardReaders < 2)
          continue;
        bool alone = true;
        for (int64_t j = 0; j < i && alone; ++j) {
          if (!recomputable(ops[j]) && !isa<ReshapeOp>(ops[j]))
            continue; // inputs, parameters, constants: always there
          for (Value older : ops[j]->getResults())
            if (lastForwardUse.lookup(older) > i)
              alone = false;
        }
        if (alone)
          kept.insert(r);
      }
    }
    return kept;
  }

  func::FuncOp step;
  Operation *seed = nullptr;
  std::vector<Operation *> ops;
};

/// How a chosen set is extended: a cloned op also needs its operands. An operand
/// the backward pass did not read would now be kept alive for the clone, so it is
/// recomputed too when it is recomputable, not a checkpoint, and costs at most
/// `flopsPerByte` (selective: only cheap ops; full and auto: any).
struct Closure {
  double flopsPerByte = std::numeric_limits<double>::infinity();
  DenseSet<int64_t> checkpointOps; // indices of ops whose results are kept
};

/// Recomputes the values `chosen` (and what Closure adds; views follow) in
/// `step`'s backward pass; returns the FLOPs of the clones.
double applyRecompute(func::FuncOp step, ArrayRef<Candidate> chosen, const Closure &closure) {
  StepAnalysis a(step);
  DenseMap<Operation *, int64_t> indexOf;
  for (auto [i, op] : llvm::enumerate(a.ops))
    indexOf[op] = static_cast<int64_t>(i);
  DenseSet<Value> recompute;
  for (const Candidate &c : chosen)
    recompute.insert(a.valueOf(c));
  auto follows = [&](Value u) {
    Operation *def = u.getDefiningOp();
    if (!def || a.isBackward(def) || recompute.contains(u))
      return recompute.contains(u);
    if (isa<ReshapeOp>(def)) // a view: recompute it when its source is
      return recompute.contains(cast<ReshapeOp>(def).getInput());
    if (!a.recomputable(def) || a.hasBackwardUse(u) || closure.checkpointOps.contains(indexOf.lookup(def)))
      return false;
    return estimatedFlops(def) / double(tensorBytes(tensorOf(u))) <= closure.flopsPerByte;
  };

  double flops = 0;
  DenseMap<Value, Value> clones;
  std::function<Value(Value, Operation *)> materialize = [&](Value v, Operation *before) -> Value {
    if (Value c = clones.lookup(v))
      return c;
    if (!follows(v))
      return v;
    recompute.insert(v);
    Operation *def = v.getDefiningOp();
    IRMapping mapping;
    for (Value operand : def->getOperands())
      mapping.map(operand, materialize(operand, before));
    OpBuilder b(before);
    Operation *clone = b.clone(*def, mapping);
    clone->setAttr(kRecomputedAttr, b.getUnitAttr());
    if (!isa<ReshapeOp>(clone))
      flops += estimatedFlops(clone);
    for (auto [original, copy] : llvm::zip(def->getResults(), clone->getResults()))
      clones[original] = copy;
    return clones.lookup(v);
  };
  for (Operation *op : a.ops) {
    if (!a.isBackward(op))
      continue;
    if (op->hasTrait<OpTrait::IsTerminator>())
      continue;
    for (OpOperand &use : op->getOpOperands())
      if (follows(use.get()))
        use.set(materialize(use.get(), op));
  }
  return flops;
}

struct ZccRecomputePass : zc::impl::ZccRecomputeBase<ZccRecomputePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step = functionWithRole(module, "step");
    if (!step) {
      module.emitError("zcc-recompute: run zcc-autodiff first");
      return signalPassFailure();
    }
    StepAnalysis analysis(step);
    if (!analysis.valid() || policy == "none") {
      record(module, "none", 0, 0);
      return;
    }
    std::vector<Candidate> all = analysis.candidates();
    std::vector<Candidate> chosen;
    closure = Closure();
    if (policy == "selective") {
      chosen = selectiveChoice(analysis, all);
    } else if (policy == "full") {
      chosen = fullChoice(analysis, all);
    } else if (policy == "auto") {
      if (budget <= 0) {
        module.emitError("zcc-recompute: policy auto needs a memory budget (--memory-budget)");
        return signalPassFailure();
      }
      // Exact below kExactCandidates (at most 4096 plans), the heuristic above.
      bool exact = search == "exhaustive" || (search == "auto" && all.size() <= kExactCandidates);
      fallbacks.clear();
      for (auto choice : {&ZccRecomputePass::selectiveChoice, &ZccRecomputePass::fullChoice}) {
        std::vector<Candidate> set = (this->*choice)(analysis, all);
        fallbacks.push_back({std::move(set), closure});
        closure = Closure();
      }
      FailureOr<std::vector<Candidate>> found = exact ? exhaustive(module, all) : greedy(module, all);
      if (failed(found))
        return signalPassFailure();
      chosen = *found;
    } else {
      module.emitError("zcc-recompute: policy must be none, selective, full or auto, got '") << policy << "'";
      return signalPassFailure();
    }
    int64_t saved = 0;
    for (const Candidate &c : chosen)
      saved += c.bytes;
    double flops = applyRecompute(step, chosen, closure);
    record(module, policy, flops, static_cast<int64_t>(chosen.size()));
    (void)saved;
  }

  Closure closure;
  // The selective and full policies' choices with their closures: auto's fallbacks
  // on large steps, where no prefix of the candidates alone fits (recomputing a value
  // keeps its inputs alive; the closures recompute those too).
  struct Plan {
    std::vector<Candidate> chosen;
    Closure closure;
  };
  std::vector<Plan> fallbacks;

  /// Cheap to recompute for the bytes it frees: elementwise ops, normalizations,
  /// softmax (a few FLOPs per byte); matmuls and attention cost O(K) per byte.
  /// ...and only where that frees bytes: recomputing a value whose input would
  /// otherwise die after the forward pass (a residual add of a matmul output)
  /// keeps that input alive instead.
  std::vector<Candidate> selectiveChoice(const StepAnalysis &analysis, ArrayRef<Candidate> all) {
    closure.flopsPerByte = flopsPerByte;
    std::vector<Candidate> chosen;
    for (const Candidate &c : all)
      if (c.flops / double(c.bytes) <= flopsPerByte && analysis.recomputesFromKept(analysis.valueOf(c), flopsPerByte))
        chosen.push_back(c);
    return chosen;
  }

  /// Keeps only the residual stream (the checkpoints) and recomputes everything else
  /// from it; sets the closure that makes the recomputed values' inputs recomputed too.
  std::vector<Candidate> fullChoice(const StepAnalysis &analysis, ArrayRef<Candidate> all) {
    DenseSet<Value> kept = analysis.checkpoints();
    for (auto [i, op] : llvm::enumerate(analysis.ops))
      if (llvm::any_of(op->getResults(), [&](Value r) { return kept.contains(r); }))
        closure.checkpointOps.insert(static_cast<int64_t>(i));
    std::vector<Candidate> chosen;
    for (const Candidate &c : all)
      if (!kept.contains(analysis.valueOf(c)))
        chosen.push_back(c);
    return chosen;
  }

  /// `zc.recompute` on the module: what the report shows.
  void record(ModuleOp module, StringRef chosenPolicy, double flops, int64_t values) {
    Builder b(module.getContext());
    module->setAttr("zc.recompute",
                    b.getDictionaryAttr({b.getNamedAttr("policy", b.getStringAttr(chosenPolicy)),
                                         b.getNamedAttr("flops", b.getI64IntegerAttr(static_cast<int64_t>(flops))),
                                         b.getNamedAttr("values", b.getI64IntegerAttr(values))}));
  }

  /// The arena after recomputing `chosen` and running the rest of the pipeline
  /// (`evaluate-pipeline`) on a copy of the module: the plan's real peak.
  FailureOr<int64_t> arenaWith(ModuleOp module, ArrayRef<Candidate> chosen, double *flops = nullptr) {
    OwningOpRef<ModuleOp> copy = module.clone();
    double added = applyRecompute(functionWithRole(*copy, "step"), chosen, closure);
    if (flops)
      *flops = added;
    if (!evaluatePipeline.empty()) {
      PassManager pm(module.getContext());
      StringRef text = evaluatePipeline;
      if (text.consume_front("builtin.module(")) // printAsTextualPipeline's form
        text.consume_back(")");
      if (failed(parsePassPipeline(text, pm))) {
        module.emitError("zcc-recompute: cannot parse evaluate-pipeline '") << evaluatePipeline << "'";
        return failure();
      }
      if (failed(pm.run(*copy)))
        return failure();
    }
    func::FuncOp step = functionWithRole(*copy, "step"), update = functionWithRole(*copy, "update");
    SmallVector<func::FuncOp> fns{step};
    if (update)
      fns.push_back(update);
    FailureOr<MemoryPlan> plan = planMemory(*copy, fns);
    if (failed(plan))
      return failure();
    return plan->totalBytes();
  }

  static double flopsOf(ArrayRef<Candidate> set) {
    double f = 0;
    for (const Candidate &c : set)
      f += c.flops;
    return f;
  }

  /// Adds candidates until the arena fits, then drops the costliest choices the
  /// budget does not need. Each round measures every remaining candidate on a copy
  /// (arena and the real FLOPs of its clones, closure included): one that makes the
  /// arena fit is taken, the cheapest such or the cheapest fitting pair if cheaper
  /// (up to `kPairedCandidates`); else the one freeing the most bytes per FLOP. Past
  /// `kMeasuredCandidates`, `bisect` over the static order (FLOPs per byte of the
  /// candidate's own op) keeps the number of evaluations logarithmic.
  static constexpr size_t kMeasuredCandidates = 24, kPairedCandidates = 16, kExactCandidates = 12;

  FailureOr<std::vector<Candidate>> greedy(ModuleOp module, ArrayRef<Candidate> all) {
    std::vector<Candidate> remaining(all.begin(), all.end());
    llvm::stable_sort(remaining, [](const Candidate &a, const Candidate &b) {
      return a.flops / double(a.bytes) < b.flops / double(b.bytes);
    });
    if (all.size() > kMeasuredCandidates)
      return bisect(module, remaining);
    std::vector<Candidate> chosen;
    double flops = 0;
    FailureOr<int64_t> arena = arenaWith(module, chosen, &flops);
    if (failed(arena))
      return failure();
    while (*arena > budget && !remaining.empty()) {
      size_t pick = 0;
      {
        std::optional<size_t> cheapestFit, bestRatio;
        double cheapestFlops = 0, ratio = -1;
        for (size_t i = 0; i < remaining.size(); ++i) {
          std::vector<Candidate> trial = chosen;
          trial.push_back(remaining[i]);
          double f = 0;
          FailureOr<int64_t> a = arenaWith(module, trial, &f);
          if (failed(a))
            return failure();
          if (*a <= budget && (!cheapestFit || f < cheapestFlops)) {
            cheapestFit = i;
            cheapestFlops = f;
          }
          double r = double(*arena - *a) / std::max(f - flops, 1.0);
          if (r > ratio) {
            ratio = r;
            bestRatio = i;
          }
        }
        if (remaining.size() <= kPairedCandidates) {
          // The cheapest pair that fits, when cheaper than the cheapest single: two
          // cheap values together can free a peak that one costly value frees alone.
          std::optional<std::pair<size_t, size_t>> pair;
          double pairFlops = cheapestFit ? cheapestFlops : std::numeric_limits<double>::infinity();
          for (size_t i = 0; i < remaining.size(); ++i)
            for (size_t j = i + 1; j < remaining.size(); ++j) {
              std::vector<Candidate> trial = chosen;
              trial.push_back(remaining[i]);
              trial.push_back(remaining[j]);
              double f = 0;
              FailureOr<int64_t> a = arenaWith(module, trial, &f);
              if (failed(a))
                return failure();
              if (*a <= budget && f < pairFlops) {
                pair = {i, j};
                pairFlops = f;
              }
            }
          if (pair) {
            chosen.push_back(remaining[pair->first]);
            chosen.push_back(remaining[pair->second]);
            remaining.erase(remaining.begin() + pair->second);
            remaining.erase(remaining.begin() + pair->first);
            arena = arenaWith(module, chosen, &flops);
            if (failed(arena))
              return failure();
            continue;
          }
        }
        pick = cheapestFit ? *cheapestFit : *bestRatio;
      }
      chosen.push_back(remaining[pick]);
      remaining.erase(remaining.begin() + pick);
      arena = arenaWith(module, chosen, &flops);
      if (failed(arena))
        return failure();
    }
    FailureOr<std::vector<Candidate>> grown = prune(module, chosen);
    // Top-down too: from every candidate, drop what the budget does not need.
    // Peaks interact (freeing one value moves the peak elsewhere), so the two
    // directions find different sets; keep the cheaper.
    FailureOr<std::vector<Candidate>> shrunk = prune(module, all);
    if (failed(grown) || failed(shrunk))
      return failure();
    double grownFlops = 0, shrunkFlops = 0;
    FailureOr<int64_t> grownArena = arenaWith(module, *grown, &grownFlops);
    FailureOr<int64_t> shrunkArena = arenaWith(module, *shrunk, &shrunkFlops);
    if (failed(grownArena) || failed(shrunkArena))
      return failure();
    if (*shrunkArena <= budget && (*grownArena > budget || shrunkFlops < grownFlops))
      return *shrunk;
    if (*grownArena > budget)
      mlir::emitWarning(module.getLoc(), "zcc-recompute: the best choice found leaves ")
          << std::min(*grownArena, *shrunkArena) << " bytes per rank, over the budget of " << int64_t(budget);
    return *grown;
  }

  /// Many candidates (a real model: hundreds): each evaluation is the whole rest of the
  /// pipeline and a memory plan (seconds at 8B parameters), so the search stays a few
  /// dozen of them. The shortest prefix of the static order (FLOPs per byte) that fits,
  /// by bisection (the arena shrinks as values are added, give or take a moving peak),
  /// then one pass over its `kPrunedCandidates` costliest choices, dropping each the
  /// budget does not need.
  static constexpr size_t kPrunedCandidates = 24;

  FailureOr<std::vector<Candidate>> bisect(ModuleOp module, ArrayRef<Candidate> ordered) {
    auto fits = [&](size_t n, double *flops) -> FailureOr<bool> {
      FailureOr<int64_t> a = arenaWith(module, ordered.take_front(n), flops);
      if (failed(a))
        return failure();
      return *a <= budget;
    };
    double flops = 0;
    FailureOr<bool> none = fits(0, &flops);
    if (failed(none))
      return failure();
    if (*none)
      return std::vector<Candidate>();
    FailureOr<bool> all = fits(ordered.size(), &flops);
    if (failed(all))
      return failure();
    if (!*all) {
      // Recomputing values without their inputs keeps the inputs alive: the
      // selective and full closures free those too. The cheaper that fits.
      for (const Plan &plan : fallbacks) {
        closure = plan.closure;
        FailureOr<int64_t> a = arenaWith(module, plan.chosen, &flops);
        if (failed(a))
          return failure();
        if (*a <= budget)
          return plan.chosen;
        if (&plan == &fallbacks.back())
          mlir::emitWarning(module.getLoc(), "zcc-recompute: even full recompute leaves ")
              << *a << " bytes per rank, over the budget of " << int64_t(budget);
      }
      return fallbacks.back().chosen;
    }
    size_t lo = 1, hi = ordered.size(); // fits(hi), not fits(lo - 1)
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      FailureOr<bool> ok = fits(mid, &flops);
      if (failed(ok))
        return failure();
      if (*ok)
        hi = mid;
      else
        lo = mid + 1;
    }
    std::vector<Candidate> kept(ordered.begin(), ordered.begin() + hi);
    std::vector<size_t> costliest(kept.size());
    for (size_t i = 0; i < kept.size(); ++i)
      costliest[i] = i;
    llvm::stable_sort(costliest, [&](size_t a, size_t b) { return kept[a].flops > kept[b].flops; });
    costliest.resize(std::min(costliest.size(), kPrunedCandidates));
    llvm::sort(costliest, std::greater<size_t>()); // erase from the back: indices stay valid
    for (size_t i : costliest) {
      std::vector<Candidate> trial = kept;
      trial.erase(trial.begin() + i);
      FailureOr<int64_t> a = arenaWith(module, trial, &flops);
      if (failed(a))
        return failure();
      if (*a <= budget)
        kept = std::move(trial);
    }
    return kept;
  }

  /// Drops chosen values while the arena still fits, each time the one whose
  /// removal saves the most recompute FLOPs (measured: a cheap value can carry a
  /// costly closure, a residual add its matmul).
  FailureOr<std::vector<Candidate>> prune(ModuleOp module, ArrayRef<Candidate> start) {
    std::vector<Candidate> kept(start.begin(), start.end());
    double flops = 0;
    FailureOr<int64_t> arena = arenaWith(module, kept, &flops);
    if (failed(arena))
      return failure();
    if (*arena > budget)
      return kept;
    while (!kept.empty()) {
      std::optional<size_t> best;
      double bestFlops = flops;
      for (size_t i = 0; i < kept.size(); ++i) {
        std::vector<Candidate> trial = kept;
        trial.erase(trial.begin() + i);
        double f = 0;
        FailureOr<int64_t> a = arenaWith(module, trial, &f);
        if (failed(a))
          return failure();
        if (*a <= budget && f <= bestFlops) {
          best = i;
          bestFlops = f;
        }
      }
      if (!best)
        break;
      kept.erase(kept.begin() + *best);
      flops = bestFlops;
    }
    return kept;
  }

  /// Every subset (test reference; at most 16 candidates): the fewest FLOPs that fit.
  FailureOr<std::vector<Candidate>> exhaustive(ModuleOp module, ArrayRef<Candidate> all) {
    if (all.size() > 16) {
      module.emitError("zcc-recompute: exhaustive search takes at most 16 candidates, the step has ")
          << all.size();
      return failure();
    }
    std::optional<std::vector<Candidate>> best;
    double bestFlops = 0;
    for (uint64_t mask = 0; mask < (uint64_t(1) << all.size()); ++mask) {
      std::vector<Candidate> set;
      for (size_t i = 0; i < all.size(); ++i)
        if (mask >> i & 1)
          set.push_back(all[i]);
      double flops = 0;
      FailureOr<int64_t> arena = arenaWith(module, set, &flops);
      if (failed(arena))
        return failure();
      if (*arena <= budget && (!best || flops < bestFlops)) {
        best = set;
        bestFlops = flops;
      }
    }
    if (!best) {
      mlir::emitWarning(module.getLoc(), "zcc-recompute: no choice of recomputed values fits the budget of ")
          << int64_t(budget);
      return std::vector<Candidate>(all.begin(), all.end());
    }
    return *best;
  }
};

} // namespace
