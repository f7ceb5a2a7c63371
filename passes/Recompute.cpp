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

#include "llvm/Support/FormatVariadic.h"

#include <functional>
#include <map>
#include <optional>
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
  bool operator==(const Candidate &o) const { return opIndex == o.opIndex && resultIndex == o.resultIndex; }
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
    // A pipeline stage before the last has no loss: its backward pass starts from the
    // received gradient, right after zc.stage_output.
    if (!seed)
      for (Operation *op : ops)
        if (isa<StageOutputOp>(op) && op->getNextNode())
          seed = op->getNextNode();
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
  const DenseSet<Value> &checkpoints() const {
    if (!checkpointCache)
      checkpointCache = findCheckpoints();
    return *checkpointCache;
  }

  /// The spans between checkpoints (a transformer's blocks, with the embedding before the
  /// first and the head after the last): how many, and which one op `index` is in.
  int64_t blocks() const { return static_cast<int64_t>(checkpointIndices().size()) + 1; }
  int64_t blockOf(int64_t index) const {
    ArrayRef<int64_t> c = checkpointIndices();
    return llvm::lower_bound(c, index) - c.begin();
  }

  func::FuncOp step;
  Operation *seed = nullptr;
  std::vector<Operation *> ops;

private:
  ArrayRef<int64_t> checkpointIndices() const {
    if (!checkpointIndexCache) {
      checkpointIndexCache.emplace();
      for (auto [i, op] : llvm::enumerate(ops))
        if (llvm::any_of(op->getResults(), [&](Value r) { return checkpoints().contains(r); }))
          checkpointIndexCache->push_back(static_cast<int64_t>(i));
    }
    return *checkpointIndexCache;
  }

  DenseSet<Value> findCheckpoints() const {
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

  mutable std::optional<DenseSet<Value>> checkpointCache;
  mutable std::optional<std::vector<int64_t>> checkpointIndexCache;
};

/// How a chosen set is extended: a cloned op also needs its operands. An operand
/// the backward pass did not read would now be kept alive for the clone, so it is
/// recomputed too when it is recomputable, not a checkpoint, and costs at most
/// `flopsPerByte` (selective: only cheap ops; full and auto: any).
struct Closure {
  double flopsPerByte = std::numeric_limits<double>::infinity();
  DenseSet<int64_t> checkpointOps; // indices of ops whose results are kept
  DenseSet<int64_t> fullOps;       // recomputed whatever their cost (a mix's fully recomputed blocks)
};

/// Recomputes the values `chosen` (and what Closure adds; views follow) in
/// `step`'s backward pass; returns the FLOPs of the clones. `cloned`, if given, gets
/// the indices of the ops cloned.
double applyRecompute(func::FuncOp step, ArrayRef<Candidate> chosen, const Closure &closure,
                      DenseSet<int64_t> *cloned = nullptr) {
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
    return closure.fullOps.contains(indexOf.lookup(def)) ||
           estimatedFlops(def) / double(tensorBytes(tensorOf(u))) <= closure.flopsPerByte;
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
    if (cloned)
      cloned->insert(indexOf.lookup(def));
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
      record(module, "none", "none", 0, 0);
      return;
    }
    std::vector<Candidate> all = analysis.candidates();
    std::vector<Candidate> chosen;
    closure = Closure();
    std::string plan = policy;
    if (policy == "selective") {
      chosen = selectiveChoice(analysis, all);
    } else if (policy == "full") {
      chosen = fullChoice(analysis, all);
    } else if (policy == "auto") {
      if (budget <= 0) {
        module.emitError("zcc-recompute: policy auto needs a memory budget (--memory-budget)");
        return signalPassFailure();
      }
      FailureOr<Plan> found = autoChoice(module, analysis, all);
      if (failed(found))
        return signalPassFailure();
      chosen = found->chosen;
      closure = found->closure;
      plan = found->name;
    } else {
      module.emitError("zcc-recompute: policy must be none, selective, full or auto, got '") << policy << "'";
      return signalPassFailure();
    }
    DenseSet<int64_t> cloned;
    std::vector<Candidate> everyCandidate = analysis.candidates();
    DictionaryAttr decisions = decide(analysis, everyCandidate, [&]() -> const DenseSet<int64_t> & {
      double flops = applyRecompute(step, chosen, closure, &cloned);
      record(module, policy, plan, flops, static_cast<int64_t>(chosen.size()));
      return cloned;
    });
    auto r = module->getAttrOfType<DictionaryAttr>("zc.recompute");
    NamedAttrList fields(r);
    fields.set("decisions", decisions);
    module->setAttr("zc.recompute", fields.getDictionary(&getContext()));
  }

  /// Per op kind (before fusion), how many of the values the backward pass reads were
  /// recomputed and how many kept, their bytes, the op's FLOPs per byte, and why values
  /// were kept: `checkpoint` (a block's input, kept by full), `costly` (more FLOPs per
  /// byte than flops-per-byte), `input` (recomputing it would keep alive an input the
  /// backward pass does not read), `fits` (auto: the budget holds without it). The
  /// analysis is taken before `apply` rewrites the step.
  DictionaryAttr decide(const StepAnalysis &analysis, ArrayRef<Candidate> all,
                        llvm::function_ref<const DenseSet<int64_t> &()> apply) {
    struct Kind {
      int64_t recomputed = 0, recomputedBytes = 0, kept = 0, keptBytes = 0;
      double flopsPerByte = 0;
      std::map<std::string, int64_t> why;
    };
    std::map<std::string, Kind> kinds;
    std::vector<std::pair<const Candidate *, std::string>> reasons;
    for (const Candidate &c : all) {
      Value v = analysis.valueOf(c);
      double perByte = c.flops / double(c.bytes);
      std::string why = analysis.checkpoints().contains(v) ? "checkpoint"
                        : perByte > flopsPerByte           ? "costly"
                        : !analysis.recomputesFromKept(v, flopsPerByte) ? "input"
                                                                        : "fits";
      reasons.emplace_back(&c, why);
    }
    std::vector<std::string> names;
    for (const Candidate &c : all)
      names.push_back(analysis.ops[c.opIndex]->getName().getStringRef().str());
    const DenseSet<int64_t> &cloned = apply();
    for (auto [i, c] : llvm::enumerate(all)) {
      Kind &k = kinds[names[i]];
      k.flopsPerByte = std::max(k.flopsPerByte, c.flops / double(c.bytes));
      if (cloned.contains(c.opIndex)) {
        ++k.recomputed;
        k.recomputedBytes += c.bytes;
      } else {
        ++k.kept;
        k.keptBytes += c.bytes;
        ++k.why[reasons[i].second];
      }
    }
    Builder b(&getContext());
    SmallVector<NamedAttribute> entries;
    for (auto &[name, k] : kinds) {
      SmallVector<NamedAttribute> why;
      for (auto &[reason, n] : k.why)
        why.push_back(b.getNamedAttr(reason, b.getI64IntegerAttr(n)));
      entries.push_back(b.getNamedAttr(
          name, b.getDictionaryAttr({b.getNamedAttr("recomputed", b.getI64IntegerAttr(k.recomputed)),
                                     b.getNamedAttr("recomputed_bytes", b.getI64IntegerAttr(k.recomputedBytes)),
                                     b.getNamedAttr("kept", b.getI64IntegerAttr(k.kept)),
                                     b.getNamedAttr("kept_bytes", b.getI64IntegerAttr(k.keptBytes)),
                                     b.getNamedAttr("flops_per_byte", b.getF64FloatAttr(k.flopsPerByte)),
                                     b.getNamedAttr("kept_because", b.getDictionaryAttr(why))})));
    }
    return b.getDictionaryAttr(entries);
  }

  Closure closure;
  /// A choice of values with the closure that recomputes their inputs.
  struct Plan {
    std::vector<Candidate> chosen;
    Closure closure;
    std::string name;
  };

  /// Selective in every block, and full in the first `fullBlocks` blocks (the spans
  /// between checkpoints, the first before the first checkpoint): Megatron-LM's
  /// `--recompute-method block`. 0 is selective, blocks() full.
  Plan mixPlan(const StepAnalysis &analysis, ArrayRef<Candidate> all, int64_t fullBlocks) {
    closure = Closure();
    Plan plan;
    const int64_t blocks = analysis.blocks();
    if (fullBlocks >= blocks) {
      plan.chosen = fullChoice(analysis, all);
      plan.name = "full";
    } else {
      std::vector<Candidate> cheap = selectiveChoice(analysis, all);
      const DenseSet<Value> &kept = analysis.checkpoints();
      for (auto [i, op] : llvm::enumerate(analysis.ops)) {
        if (llvm::any_of(op->getResults(), [&](Value r) { return kept.contains(r); }))
          closure.checkpointOps.insert(static_cast<int64_t>(i));
        if (analysis.blockOf(static_cast<int64_t>(i)) < fullBlocks)
          closure.fullOps.insert(static_cast<int64_t>(i));
      }
      for (const Candidate &c : all) {
        bool inFull = analysis.blockOf(c.opIndex) < fullBlocks;
        if (inFull ? !kept.contains(analysis.valueOf(c)) : llvm::is_contained(cheap, c))
          plan.chosen.push_back(c);
      }
      plan.name = fullBlocks == 0 ? std::string("selective")
                                  : llvm::formatv("full in the first {0} of {1} spans between checkpoints, selective in the rest",
                                                  fullBlocks, blocks)
                                        .str();
    }
    plan.closure = closure;
    return plan;
  }

  /// The arena of `plan` (and its recomputed FLOPs).
  FailureOr<int64_t> arenaOf(ModuleOp module, const Plan &plan, double *flops, StringRef pipeline = {}) {
    closure = plan.closure;
    return arenaWith(module, plan.chosen, flops, pipeline);
  }

  /// The fewest recomputed FLOPs whose measured arena fits the budget. The family
  /// none, selective, then full in 1, 2, ... blocks (each frees more, at more FLOPs) is
  /// bisected for its first plan that fits; then, among individual values, the measured
  /// search (every subset on small steps, greedy on mid-sized ones) or, where selective
  /// fits on large steps, the shortest prefix of selective's values (cheapest FLOPs per
  /// byte first) may find a cheaper plan. Where even full recomputation does not fit,
  /// an error names the smallest arena and what each lever (`lever-pipelines`) reaches.
  FailureOr<Plan> autoChoice(ModuleOp module, const StepAnalysis &analysis, ArrayRef<Candidate> all) {
    double flops = 0;
    Plan none{{}, Closure(), "none"};
    FailureOr<int64_t> arena = arenaOf(module, none, &flops);
    if (failed(arena))
      return failure();
    if (*arena <= budget)
      return none;
    const int64_t blocks = analysis.blocks();
    Plan full = mixPlan(analysis, all, blocks);
    FailureOr<int64_t> fullArena = arenaOf(module, full, &flops);
    if (failed(fullArena))
      return failure();

    std::optional<Plan> best;
    double bestFlops = std::numeric_limits<double>::infinity();
    // The smallest arena seen: full's, usually; on small steps selective's can be smaller
    // (full's recomputation keeps a block's intermediates at the peak).
    Plan smallest = full;
    int64_t smallestArena = *fullArena;
    auto consider = [&](const Plan &plan) -> LogicalResult {
      double f = 0;
      FailureOr<int64_t> a = arenaOf(module, plan, &f);
      if (failed(a))
        return failure();
      if (*a <= budget && f < bestFlops) {
        best = plan;
        bestFlops = f;
      }
      if (*a < smallestArena) {
        smallest = plan;
        smallestArena = *a;
      }
      return success();
    };
    Plan selective = mixPlan(analysis, all, 0);
    if (failed(consider(selective)))
      return failure();
    if (!best && *fullArena <= budget) {
      int64_t lo = 1, hi = blocks; // mix(hi) fits; mix(lo - 1) does not
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        FailureOr<int64_t> a = arenaOf(module, mixPlan(analysis, all, mid), &flops);
        if (failed(a))
          return failure();
        if (*a <= budget)
          hi = mid;
        else
          lo = mid + 1;
      }
      if (failed(consider(hi == blocks ? full : mixPlan(analysis, all, hi))))
        return failure();
    }

    // Individual values.
    closure = Closure();
    FailureOr<std::vector<Candidate>> found = failure();
    Plan search{{}, Closure(), "auto"};
    if (all.size() <= kMeasuredCandidates) {
      bool exact = this->search == "exhaustive" || (this->search == "auto" && all.size() <= kExactCandidates);
      found = exact ? exhaustive(module, all) : greedy(module, all);
    } else if (best && best->name == "selective") {
      closure = selective.closure;
      search.closure = selective.closure;
      std::vector<Candidate> ordered = selective.chosen;
      llvm::stable_sort(ordered, [](const Candidate &a, const Candidate &b) {
        return a.flops / double(a.bytes) < b.flops / double(b.bytes);
      });
      found = bisect(module, ordered);
    } else {
      found = std::vector<Candidate>();
    }
    if (failed(found))
      return failure();
    search.chosen = *found;
    search.name = llvm::formatv("{0} of the step's values", search.chosen.size()).str();
    if (!search.chosen.empty() && failed(consider(search)))
      return failure();
    if (!best)
      return overBudget(module, smallest, smallestArena);
    return *best;
  }

  /// No plan fits: the error names the smallest arena (`smallest`'s) and, for each lever
  /// the driver gave (`flag|pipeline` entries of lever-pipelines), the arena that flag
  /// reaches with that plan.
  FailureOr<Plan> overBudget(ModuleOp module, const Plan &smallest, int64_t smallestArena) {
    InFlightDiagnostic error = module.emitError()
                               << "zcc-recompute: no recompute plan fits the budget of " << int64_t(budget)
                               << " bytes per rank; the smallest arena any plan reaches is " << smallestArena
                               << " (" << smallest.name << ")";
    SmallVector<StringRef> levers;
    StringRef(leverPipelines).split(levers, ';', -1, false);
    for (StringRef lever : levers) {
      auto [flag, pipeline] = lever.split('|');
      double flops = 0;
      FailureOr<int64_t> a = arenaOf(module, smallest, &flops, pipeline);
      if (failed(a))
        continue; // a lever this model cannot take (the offending pass said why)
      error.attachNote() << "with " << flag << ": " << *a << " bytes per rank"
                         << (*a <= budget ? " (fits)" : " (over)");
    }
    error.attachNote() << "--tp and --pp split each layer's activations and parameters over the mesh (not "
                          "evaluated here); a larger --memory-budget or a smaller micro-batch (--grad-accum) "
                          "also fit";
    return failure();
  }

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
    const DenseSet<Value> &kept = analysis.checkpoints();
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
  void record(ModuleOp module, StringRef chosenPolicy, StringRef plan, double flops, int64_t values) {
    Builder b(module.getContext());
    module->setAttr("zc.recompute",
                    b.getDictionaryAttr({b.getNamedAttr("policy", b.getStringAttr(chosenPolicy)),
                                         b.getNamedAttr("plan", b.getStringAttr(plan)),
                                         b.getNamedAttr("flops", b.getI64IntegerAttr(static_cast<int64_t>(flops))),
                                         b.getNamedAttr("values", b.getI64IntegerAttr(values))}));
  }

  /// The arena after recomputing `chosen` and running the rest of the pipeline
  /// (`evaluate-pipeline`) on a copy of the module: the plan's real peak.
  FailureOr<int64_t> arenaWith(ModuleOp module, ArrayRef<Candidate> chosen, double *flops = nullptr,
                               StringRef pipeline = {}) {
    OwningOpRef<ModuleOp> copy = module.clone();
    double added = applyRecompute(functionWithRole(*copy, "step"), chosen, closure);
    if (flops)
      *flops = added;
    if (pipeline.empty())
      pipeline = evaluatePipeline;
    if (!pipeline.empty()) {
      PassManager pm(module.getContext());
      StringRef text = pipeline;
      if (text.consume_front("builtin.module(")) // printAsTextualPipeline's form
        text.consume_back(")");
      if (failed(parsePassPipeline(text, pm))) {
        module.emitError("zcc-recompute: cannot parse evaluate-pipeline '") << pipeline << "'";
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
    return *grown; // over budget: autoChoice compares it with the plans that fit
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
    if (!*all) // autoChoice compares it with the plans that fit
      return std::vector<Candidate>(ordered.begin(), ordered.end());
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
    if (!best) // autoChoice compares it with the plans that fit
      return std::vector<Candidate>(all.begin(), all.end());
    return *best;
  }
};

} // namespace
