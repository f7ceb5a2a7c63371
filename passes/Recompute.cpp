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

#include "passes/MemoryPlan.h"
#include "passes/Passes.h"
#include "passes/RecomputeAnalysis.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/FormatVariadic.h"

#include <limits>
#include <map>
#include <optional>

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCRECOMPUTE
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

struct ZccRecomputePass : zc::impl::ZccRecomputeBase<ZccRecomputePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step = functionWithRole(module, "step");
    if (!step) {
      module.emitError("zcc-recompute: run zcc-autodiff first");
      return signalPassFailure();
    }
    // Megatron's and torchtitan's checkpoints are a layer's input; zcc's own full and
    // selective also keep the residual after the attention.
    StepAnalysis analysis(step, /*layers=*/policy == "layer" || policy == "op", /*rerunReductions=*/policy == "layer");
    if (!analysis.valid() || policy == "none") {
      record(module, "none", "none", 0, 0, {});
      return;
    }
    std::vector<Candidate> all = analysis.candidates();
    Plan plan;
    if (policy == "selective") {
      plan = mixPlan(analysis, all, 0);
    } else if (policy == "full") {
      plan = mixPlan(analysis, all, analysis.blocks());
    } else if (policy == "layer") {
      plan = mixPlan(analysis, all, analysis.blocks());
      plan.name = "layer (each layer's input kept, the layer re-run)";
      plan.closure.rerunReductions = true;
    } else if (policy == "op") {
      plan = opPlan(analysis, all);
    } else if (policy == "auto") {
      if (budget <= 0) {
        module.emitError("zcc-recompute: policy auto needs a memory budget (--memory-budget)");
        return signalPassFailure();
      }
      FailureOr<Plan> found = autoChoice(module, analysis, all);
      if (failed(found))
        return signalPassFailure();
      plan = std::move(*found);
    } else {
      module.emitError("zcc-recompute: policy must be none, selective, op, full, layer or auto, got '") << policy << "'";
      return signalPassFailure();
    }
    // Why each value would be kept, judged before the rewrite moves the backward uses.
    std::vector<StringRef> reasons = keptReasons(analysis, all);
    DenseSet<int64_t> cloned;
    double flops = applyRecompute(step, plan.chosen, plan.closure, &cloned);
    record(module, policy, plan.name, flops, static_cast<int64_t>(plan.chosen.size()),
           decisions(analysis, all, reasons, cloned));
  }

  /// Why `all`'s values would be kept: `checkpoint` (a block's input, kept by full),
  /// `costly` (more FLOPs per byte than flops-per-byte), `input` (recomputing it would keep
  /// alive an input the backward pass does not read), `fits` (auto: the budget holds
  /// without recomputing it).
  std::vector<StringRef> keptReasons(const StepAnalysis &analysis, ArrayRef<Candidate> all) const {
    std::vector<StringRef> reasons;
    for (const Candidate &c : all) {
      Value v = analysis.valueOf(c);
      reasons.push_back(analysis.checkpoints().contains(v)                  ? "checkpoint"
                        : c.flops / double(c.bytes) > flopsPerByte          ? "costly"
                        : !analysis.recomputesFromKept(v, flopsPerByte)     ? "input"
                                                                            : "fits");
    }
    return reasons;
  }

  /// Per op kind (before fusion), how many of the values the backward pass reads were
  /// recomputed (their op is in `cloned`) and how many kept, their bytes, the kind's
  /// highest FLOPs per byte, and why values were kept (`reasons`): what the report lists.
  DictionaryAttr decisions(const StepAnalysis &analysis, ArrayRef<Candidate> all, ArrayRef<StringRef> reasons,
                           const DenseSet<int64_t> &cloned) {
    struct Kind {
      int64_t recomputed = 0, recomputedBytes = 0, kept = 0, keptBytes = 0;
      double flopsPerByte = 0;
      std::map<std::string, int64_t> why;
    };
    std::map<std::string, Kind> kinds; // sorted: a DictionaryAttr's order
    for (auto [c, reason] : llvm::zip(all, reasons)) {
      // The original ops stay in the step (the backward pass reads their clones).
      Kind &k = kinds[analysis.ops[c.opIndex]->getName().getStringRef().str()];
      k.flopsPerByte = std::max(k.flopsPerByte, c.flops / double(c.bytes));
      if (cloned.contains(c.opIndex)) {
        ++k.recomputed;
        k.recomputedBytes += c.bytes;
      } else {
        ++k.kept;
        k.keptBytes += c.bytes;
        ++k.why[reason.str()];
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

  /// The closure the measured searches (`arenaWith`) apply.
  Closure closure;
  /// A choice of values with the closure that recomputes their inputs.
  struct Plan {
    std::vector<Candidate> chosen;
    Closure closure;
    std::string name;
  };

  /// Full recomputation in the first `fullBlocks` blocks (the spans between checkpoints,
  /// the first before the first checkpoint; Megatron-LM's `--recompute-method block`),
  /// selective in the others: 0 is the selective policy, blocks() the full one. Full keeps
  /// only the checkpoints and recomputes everything else from them. Selective recomputes
  /// what is cheap for the bytes it frees (elementwise ops, normalizations, softmax: a few
  /// FLOPs per byte; matmuls and attention cost O(K) per byte), and only where that frees
  /// bytes: recomputing a value whose input would otherwise die after the forward pass (a
  /// residual add of a matmul output) keeps that input alive instead.
  Plan mixPlan(const StepAnalysis &analysis, ArrayRef<Candidate> all, int64_t fullBlocks) const {
    const int64_t blocks = analysis.blocks();
    Plan plan;
    plan.name = fullBlocks == 0        ? std::string("selective")
                : fullBlocks >= blocks ? std::string("full")
                                       : llvm::formatv("full in the first {0} of {1} spans between checkpoints, "
                                                       "selective in the rest",
                                                       fullBlocks, blocks)
                                             .str();
    plan.closure.flopsPerByte = fullBlocks >= blocks ? std::numeric_limits<double>::infinity() : flopsPerByte;
    plan.closure.checkpointOps.insert(analysis.checkpointOps().begin(), analysis.checkpointOps().end());
    if (fullBlocks < blocks)
      for (int64_t i = 0, n = static_cast<int64_t>(analysis.ops.size()); i < n; ++i)
        if (analysis.blockOf(i) < fullBlocks)
          plan.closure.fullOps.insert(i);
    for (const Candidate &c : all) {
      Value v = analysis.valueOf(c);
      bool chosen = analysis.blockOf(c.opIndex) < fullBlocks
                        ? !analysis.checkpoints().contains(v)
                        : c.flops / double(c.bytes) <= flopsPerByte && analysis.recomputesFromKept(v, flopsPerByte);
      if (chosen)
        plan.chosen.push_back(c);
    }
    return plan;
  }

  /// The LM head: a product the loss reads (through views). torchtitan checkpoints the
  /// transformer blocks, not the head (a vocabulary's logits again would cost the most); the
  /// last span between checkpoints runs from the last block's MLP through the head.
  static bool isLossHead(Operation *product) {
    SmallVector<Operation *> users(product->getUsers().begin(), product->getUsers().end());
    while (!users.empty()) {
      Operation *user = users.pop_back_val();
      if (isa<CrossEntropyOp>(user))
        return true;
      if (isa<ReshapeOp>(user))
        users.append(user->getUsers().begin(), user->getUsers().end());
    }
    return false;
  }

  /// torchtitan's op-level selective checkpointing (`selective_ac_option = "op"`, its Llama
  /// default): the products' and attention's outputs are kept except every second product of
  /// each block, counted in forward order, and everything else is recomputed. Here, over the
  /// layers' spans (`analysis` has only the layers' inputs as checkpoints, as torchtitan wraps
  /// each TransformerBlock): selective's cheap values, plus the even-numbered products of each
  /// layer (torchtitan's separate q k v o gate up down recompute k, o and up; zcc's fused q/k/v
  /// makes that o and up), and the residual after the attention recomputed from o's output.
  /// Their inputs are values a kept product's weight gradient reads anyway; the recomputed
  /// products cost their forward FLOPs again in backward.
  Plan opPlan(const StepAnalysis &analysis, ArrayRef<Candidate> all) const {
    Plan plan = mixPlan(analysis, all, 0);
    plan.name = "op (selective, and every second product of each span between checkpoints)";
    DenseSet<Operation *> secondProducts;
    std::map<int64_t, int64_t> productsInBlock;
    for (int64_t i = 0, n = static_cast<int64_t>(analysis.ops.size()); i < n; ++i) {
      Operation *op = analysis.ops[i];
      if (analysis.isBackward(op))
        break;
      if (isa<MatmulOp>(op) && analysis.recomputable(op) && !isLossHead(op) &&
          ++productsInBlock[analysis.blockOf(i)] % 2 == 0) {
        secondProducts.insert(op);
        plan.closure.fullOps.insert(i); // recomputed where a recomputed value reads it
      }
    }
    DenseSet<int64_t> chosenOps;
    for (const Candidate &c : plan.chosen)
      chosenOps.insert(c.opIndex);
    // A second product's own output where backward reads it (a gate's up projection), and the
    // cheap values computed from one (the rotated keys after k's projection).
    for (const Candidate &c : all) {
      Value v = analysis.valueOf(c);
      if (chosenOps.contains(c.opIndex) || analysis.checkpoints().contains(v))
        continue;
      const bool product = secondProducts.contains(analysis.ops[c.opIndex]);
      if ((product || c.flops / double(c.bytes) <= flopsPerByte) &&
          analysis.recomputesFromKept(v, flopsPerByte, &secondProducts)) {
        plan.chosen.push_back(c);
        chosenOps.insert(c.opIndex);
      }
    }
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
  /// byte first) may find a cheaper plan. Where no plan fits, an error names the
  /// smallest arena and what each lever (`lever-pipelines`) reaches.
  FailureOr<Plan> autoChoice(ModuleOp module, const StepAnalysis &analysis, ArrayRef<Candidate> all) {
    std::optional<Plan> best;
    double bestFlops = std::numeric_limits<double>::infinity();
    // The smallest arena measured: full's, usually; on small steps selective's can be smaller
    // (full's recomputation keeps a block's intermediates at the peak).
    std::optional<Plan> smallest;
    int64_t smallestArena = std::numeric_limits<int64_t>::max();
    // Measures `plan`; keeps it if it fits with the fewest FLOPs so far.
    auto consider = [&](const Plan &plan) -> FailureOr<int64_t> {
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
      return a;
    };
    FailureOr<int64_t> none = consider(Plan{{}, Closure(), "none"});
    if (failed(none))
      return failure();
    if (*none <= budget)
      return *best;
    const int64_t blocks = analysis.blocks();
    Plan selective = mixPlan(analysis, all, 0);
    FailureOr<int64_t> fullArena = consider(mixPlan(analysis, all, blocks));
    FailureOr<int64_t> selectiveArena = consider(selective);
    if (failed(fullArena) || failed(selectiveArena))
      return failure();
    const bool selectiveFits = *selectiveArena <= budget;
    if (!selectiveFits && *fullArena <= budget) {
      int64_t lo = 1, hi = blocks; // mix(hi) fits; mix(lo - 1) does not
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        FailureOr<int64_t> a = consider(mixPlan(analysis, all, mid));
        if (failed(a))
          return failure();
        if (*a <= budget)
          hi = mid;
        else
          lo = mid + 1;
      }
    }

    // Individual values: the measured searches apply `closure`.
    FailureOr<std::vector<Candidate>> found = std::vector<Candidate>();
    closure = Closure();
    if (all.size() <= kMeasuredCandidates) {
      bool exact = search == "exhaustive" || (search == "auto" && all.size() <= kExactCandidates);
      found = exact ? exhaustive(module, all) : greedy(module, all);
    } else if (selectiveFits) {
      closure = selective.closure;
      std::vector<Candidate> ordered = selective.chosen;
      llvm::stable_sort(ordered, [](const Candidate &a, const Candidate &b) {
        return a.flops / double(a.bytes) < b.flops / double(b.bytes);
      });
      found = bisect(module, ordered);
    }
    if (failed(found))
      return failure();
    if (!found->empty()) {
      Plan values{*found, closure, llvm::formatv("{0} of the step's values", found->size()).str()};
      if (failed(consider(values)))
        return failure();
    }
    if (!best)
      return overBudget(module, *smallest, smallestArena);
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

  /// `zc.recompute` on the module: what the report shows.
  void record(ModuleOp module, StringRef chosenPolicy, StringRef plan, double flops, int64_t values,
              DictionaryAttr decisions) {
    Builder b(module.getContext());
    SmallVector<NamedAttribute> fields{b.getNamedAttr("policy", b.getStringAttr(chosenPolicy)),
                                       b.getNamedAttr("plan", b.getStringAttr(plan)),
                                       b.getNamedAttr("flops", b.getI64IntegerAttr(static_cast<int64_t>(flops))),
                                       b.getNamedAttr("values", b.getI64IntegerAttr(values))};
    if (decisions)
      fields.push_back(b.getNamedAttr("decisions", decisions));
    module->setAttr("zc.recompute", b.getDictionaryAttr(fields));
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
    // A pipeline stage's forward runs apart from its step (zcc-pipeline-keep); what it keeps
    // for the backward waits in the input slots of the micro-batches in flight.
    if (func::FuncOp forward = functionWithRole(*copy, "forward"))
      fns.push_back(forward);
    if (func::FuncOp weight = functionWithRole(*copy, "weight")) // a zero-bubble schedule's W
      fns.push_back(weight);
    FailureOr<MemoryPlan> plan = planMemory(*copy, fns);
    if (failed(plan))
      return failure();
    return plan->totalBytes() + pipelineSlotBytes(*copy);
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
