//===- Planner.cpp - compile a plan for simulation; choose the best plan --===//

#include "sim/Planner.h"
#include "sim/PlanBounds.h"

#include "passes/CostModel.h"
#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>

using namespace mlir;
using namespace mlir::zc;
using namespace zcc::sim;

FailureOr<CompiledPlan> zcc::sim::compileForSimulation(ModuleOp model, const ZccPipelineOptions &options,
                                                       int64_t interleave, std::string &error, bool verify) {
  ZccPipelineOptions o;
  o.copyOptionValuesFrom(options);
  o.lower = false;
  o.memorySvg = "";
  // Interleaved 1F1B: p x v virtual stages over the same data-parallel ranks; each pipeline rank
  // runs v of them (the simulator assigns stage j to rank j mod p).
  const int64_t stages = options.pipelineParallel * interleave;
  o.pipelineParallel = stages;
  o.worldSize = options.worldSize * interleave;
  if (std::string problem = checkPipelineOptions(o); !problem.empty()) {
    error = problem;
    return failure();
  }
  // The first, the second and the last stage; the second stands for every middle one where the
  // cut made them alike (their FLOPs within 1% of the second's, zc.pipeline's stage_flops);
  // otherwise (more stages than blocks, say) every stage is compiled.
  CompiledPlan plan;
  std::vector<int64_t> index(stages, -1); // each stage's module in plan.owned
  auto compile = [&](int64_t k) -> LogicalResult {
    OwningOpRef<ModuleOp> stage(model.clone());
    o.pipelineStage = k;
    // --report=json names one file: it holds stage 0's plan (and then the simulation); the text
    // report prints every compiled stage's.
    o.report = k > 0 && options.report == "json" ? std::string() : std::string(options.report);
    PassManager pm(model->getContext());
    // The planner compiles hundreds of plans of passes the test suite verifies: checking the IR
    // after each pass is the user-facing compile's job (a fifth of a large model's compile).
    pm.enableVerifier(verify);
    buildZccPipeline(pm, o);
    if (failed(pm.run(*stage))) {
      if (error.empty())
        error = "zcc's pipeline failed on stage " + std::to_string(k);
      return failure();
    }
    index[k] = static_cast<int64_t>(plan.owned.size());
    plan.owned.push_back(std::move(stage));
    return success();
  };
  for (int64_t k = 0; k < stages; ++k)
    if ((stages <= 3 || k <= 1 || k == stages - 1) && failed(compile(k)))
      return failure();
  if (stages > 3) {
    auto flops = (*plan.owned[index[1]])->getAttrOfType<DictionaryAttr>("zc.pipeline").getAs<ArrayAttr>("stage_flops");
    auto at = [&](int64_t k) { return cast<FloatAttr>(flops[k]).getValueAsDouble(); };
    bool alike = true;
    for (int64_t k = 2; k < stages - 1; ++k)
      alike &= std::abs(at(k) - at(1)) <= 0.01 * std::max(at(1), at(k));
    for (int64_t k = 2; k < stages - 1; ++k) {
      if (alike)
        index[k] = index[1];
      else if (failed(compile(k)))
        return failure();
    }
  }
  for (int64_t k = 0; k < stages; ++k)
    plan.stages.push_back(*plan.owned[index[k]]);
  return plan;
}

std::string PlanChoice::describe() const {
  std::string s = llvm::formatv("tp {0} cp {1} pp {2}{3} dp {4}, ZeRO-{5}, micro-batch {6} x {7}, recompute {8}", tp,
                                cp, pp, interleave > 1 ? "x" + std::to_string(interleave) : "", dp, zeroStage,
                                microBatchSize, microBatches, recompute);
  if (pp > 1)
    s += ", " + schedule;
  if (ep > 1)
    s += ", ep " + std::to_string(ep);
  if (offloadOptimizer != "none")
    s += ", optimizer on " + offloadOptimizer;
  if (zeroPlusPlus)
    s += ", ZeRO++";
  return s;
}

void zcc::sim::setZeroPlusPlus(ZccPipelineOptions &o, bool on, int64_t ranksPerNode) {
  o.zeroQuantizedWeights = on;
  o.zeroQuantizedGradients = on;
  o.zeroHpzPartitionSize = on ? ranksPerNode : 1;
  if (on)
    o.ranksPerNode = ranksPerNode;
}

namespace {

std::vector<int64_t> powersOfTwo(int64_t upTo) {
  std::vector<int64_t> values;
  for (int64_t v = 1; v <= upTo; v *= 2)
    values.push_back(v);
  return values;
}

} // namespace

FailureOr<PlannerResult> zcc::sim::planAuto(const PlannerRequest &request, const Cluster &cluster,
                                            std::string &error) {
  auto start = std::chrono::steady_clock::now();
  PlannerResult result;
  const ModelFacts facts = factsOf(request.model);
  if (facts.batch <= 0 || facts.context <= 0) {
    error = "the model's first argument is not a [batch, context] token tensor";
    return failure();
  }
  const int64_t world = request.nodes * cluster.devicesPerNode;
  const int64_t global = request.globalBatch > 0 ? request.globalBatch : facts.batch;
  const double scale = double(global) / double(facts.batch);
  const double budget = request.memoryBudget > 0 ? double(request.memoryBudget) : cluster.memoryBytes;
  const bool bf16 = request.base.precision == "bf16";

  // The space: tensor ranks inside a node; context ranks where each keeps 8K tokens or more;
  // pipeline ranks up to 64; micro-batches of 1-8 sequences; every ZeRO stage the mesh allows.
  std::vector<PlanOutcome> candidates;
  for (int64_t tp : powersOfTwo(cluster.devicesPerNode))
    for (int64_t cp : powersOfTwo(64)) {
      if (cp > 1 && (facts.context % (2 * cp) || facts.context / cp < 8192))
        continue;
      for (int64_t pp : powersOfTwo(64)) {
        if (world % (tp * cp * pp))
          continue;
        const int64_t dp = world / (tp * cp * pp);
        for (int64_t b : {1, 2, 4, 8}) {
          if (global % (dp * b) || facts.batch % (dp * b))
            continue;
          for (int64_t zero = 0; zero <= 3; ++zero) {
            if ((dp * cp == 1 && zero > 0) || (pp > 1 && zero == 3))
              continue;
            for (const char *recompute : {"none", "selective", "op", "full"})
              for (const char *offload : {"none", "cpu"}) {
                if (std::string(offload) == "cpu" && zero == 0)
                  continue;
                // ZeRO++ where it applies: ZeRO-3 of data-parallel ranks on whole nodes, more than one.
                const bool zeroPlusPlusApplies = zero == 3 && tp == 1 && cp == 1 && pp == 1 &&
                                                 std::string(offload) == "none" && dp > cluster.devicesPerNode &&
                                                 dp % cluster.devicesPerNode == 0;
                for (bool zeroPlusPlus : {false, true}) {
                  if (zeroPlusPlus && !zeroPlusPlusApplies)
                    continue;
                  // The pipeline's schedule: 1F1B, zero-bubble (less idle, more kept),
                  // interleaved 1F1B over 2 or 4 chunks per rank (less idle, more sends; its
                  // micro-batches in groups of the pipeline ranks), or ZB-V (2 chunks in a V).
                  for (const char *schedule : {"1f1b", "zb-h1", "interleaved-1f1b", "zbv"}) {
                    if (pp == 1 && std::string(schedule) != "1f1b")
                      continue;
                    const bool interleaved = std::string(schedule) == "interleaved-1f1b";
                    const int64_t micro = global / (dp * b), compiled = facts.batch / (dp * b);
                    const std::vector<int64_t> chunkChoices = interleaved ? std::vector<int64_t>{2, 4}
                                                              : std::string(schedule) == "zbv" ? std::vector<int64_t>{2}
                                                                                               : std::vector<int64_t>{1};
                    for (int64_t v : chunkChoices) {
                      if (interleaved && (micro % pp || compiled % pp))
                        continue;
                      // A virtual stage holds a block at least (Megatron-LM: layers per virtual
                      // stage >= 1); more chunks than blocks only adds sends and arenas.
                      if (v > 1 && facts.blocks > 0 && pp * v > facts.blocks)
                        continue;
                      // Expert parallelism (a MoE model): groups of ep consecutive ranks of the
                      // data axis (data x context) inside a node, dividing the experts
                      // (Megatron-Core: EP within NVLink).
                      for (int64_t ep : powersOfTwo(std::min(cp * dp, cluster.devicesPerNode / tp))) {
                        if (ep > 1 && (facts.experts == 0 || facts.experts % ep || (cp * dp) % ep || zeroPlusPlus ||
                                       std::string(offload) != "none"))
                          continue;
                        PlanOutcome o;
                        o.plan = {tp, cp, pp, dp, v, zero, b, micro, compiled, recompute, offload, schedule,
                                  zeroPlusPlus};
                        o.plan.ep = ep;
                        if (ep > 1)
                          o.plan.expertBound = request.base.moeMaxTokensPerExpert;
                        o.lowerBoundSeconds = stepLowerBound(o.plan, facts, scale, cluster, bf16);
                        candidates.push_back(std::move(o));
                      }
                    }
                  }
                }
              }
          }
        }
      }
    }
  result.enumerated = static_cast<int64_t>(candidates.size());
  // By the step's bound; of equal bounds, the higher ZeRO stage first (the twins' memory floors).
  std::stable_sort(candidates.begin(), candidates.end(), [](const PlanOutcome &a, const PlanOutcome &b) {
    if (a.lowerBoundSeconds != b.lowerBoundSeconds)
      return a.lowerBoundSeconds < b.lowerBoundSeconds;
    return a.plan.zeroStage > b.plan.zeroStage;
  });

  // Planner compiles fail quietly (a head count a tensor split does not divide, too few cut
  // points for the stages): the plan is not legal for this model.
  MLIRContext *context = request.model->getContext();
  ScopedDiagnosticHandler quiet(context, [](Diagnostic &) { return success(); });
  // Recomputation and offload trade time for memory: a plan that recomputes more, or offloads,
  // than a twin that fits is never faster, so it is not evaluated (nor listed).
  auto twinKey = [](const PlanChoice &p) {
    return llvm::formatv("{0}/{1}/{2}/{3}/{4}/{5}/{6}/{7}/{8}/{9}", p.tp, p.cp, p.pp, p.dp, p.zeroStage,
                         p.microBatchSize, p.zeroPlusPlus, p.schedule, p.interleave, p.ep)
        .str();
  };
  // Recomputation in increasing amounts (op recomputes selective's values and more), then
  // offload: level % 4 and level / 4.
  auto level = [](const PlanChoice &p) {
    const int recompute = p.recompute == "none" ? 0 : p.recompute == "selective" ? 1 : p.recompute == "op" ? 2 : 3;
    return recompute + (p.offloadOptimizer == "none" ? 0 : 4);
  };
  std::map<std::string, int> fittingLevel; // the least recomputing/offloading twin that fits
  std::vector<PlanChoice> overBudget;       // compiled plans that did not fit
  // What a pipeline stage keeps per micro-batch for each block it holds (its stash), read off a
  // 1F1B plan of the same mesh, micro-batch and recomputation once compiled (the ZeRO stage and
  // offload do not change it): the kept activations the memory bound of its interleaved and
  // zero-bubble twins counts (keptPerBlock), which the matmul inputs alone would undercount.
  auto pipelineTwin = [](const PlanChoice &p) {
    return llvm::formatv("{0}/{1}/{2}/{3}/{4}/{5}", p.tp, p.cp, p.pp, p.microBatchSize, p.recompute, p.ep).str();
  };
  std::map<std::string, double> keptPerBlock;
  // ... and at any pipeline depth: what a block keeps per micro-batch hardly depends on how many
  // stages share the blocks (Llama 3 405B, tp 8, selective recomputation, micro-batch 1: 336.2
  // MiB at pp 2, 332.5 at pp 4), so a plan whose own 1F1B twin has not compiled yet, a plan
  // without a pipeline too, takes the least any depth's compiled 1F1B plan kept, less 10%. (Llama
  // 3 405B on 4,096 H100s: 145 plans compiled that then did not fit, 31 of the search's 55 s.)
  constexpr double kDepthMargin = 0.9;
  auto depthFree = [](const PlanChoice &p) {
    return llvm::formatv("{0}/{1}/{2}/{3}/{4}", p.tp, p.cp, p.microBatchSize, p.recompute, p.ep).str();
  };
  std::map<std::string, double> keptPerBlockAnyDepth;
  // Each candidate's pipeline twin key, and the 1F1B candidates of each key in the search's order.
  std::vector<std::string> twinOf(candidates.size());
  std::map<std::string, std::vector<size_t>> oneF1BOf;
  for (size_t i = 0; i < candidates.size(); ++i) {
    twinOf[i] = pipelineTwin(candidates[i].plan);
    if (candidates[i].plan.pp > 1 && candidates[i].plan.schedule == "1f1b")
      oneF1BOf[twinOf[i]].push_back(i);
  }
  auto keptFor = [&](size_t i) {
    if (auto kept = keptPerBlock.find(twinOf[i]); kept != keptPerBlock.end())
      return kept->second;
    auto any = keptPerBlockAnyDepth.find(depthFree(candidates[i].plan));
    return any == keptPerBlockAnyDepth.end() ? 0.0 : any->second * kDepthMargin;
  };
  // What plans alike but for their ZeRO stage and offload share, read off those of them compiled
  // (ZeRO++'s quantization adds compute: its plans read the floors, not write them): the
  // activations a device keeps (its arenas' activation peak, its pipeline inputs in flight) and
  // its compute (with recomputation).
  //  - Compute: the ZeRO stages' graphs differ a little where their collectives sit (Mixtral
  //    8x7B at ZeRO 0-3: within 2.1%), so the floor gives 5% back. Recomputing more computes
  //    more: a twin that recomputes less bounds the step too.
  //  - Activations: a higher ZeRO stage keeps no more (a pipeline stage's whole gradients of a
  //    micro-batch are scratch beside its activations at ZeRO 0 and 1: Mixtral 8x7B at pp 4 x 4
  //    keeps 23.5 GiB at ZeRO-1, 12.4 at ZeRO-2; at zb-h1 with ep, ZeRO-0 4.4% more than
  //    ZeRO-1), so the floor is the least of the twins at this stage or above, less 3%. It is
  //    the recomputation level's own: recomputing more need not keep less (under zero-bubble,
  //    full recomputation's B recomputes the products' inputs and keeps them for W).
  //  Plans of equal step bound are tried at the highest ZeRO stage first (candidates' order),
  //  so the floors are there for the others.
  auto floorKey = [](const PlanChoice &p) {
    return llvm::formatv("{0}/{1}/{2}/{3}/{4}/{5}/{6}/{7}", p.tp, p.cp, p.pp, p.dp, p.microBatchSize, p.schedule,
                         p.interleave, p.ep)
        .str();
  };
  struct TwinFloors {
    double activationBytes[4][4], computeSeconds[4]; // [ZeRO stage][recompute level]; [recompute level]
    TwinFloors() {
      std::fill(&activationBytes[0][0], &activationBytes[0][0] + 16, -1.0);
      std::fill(computeSeconds, computeSeconds + 4, -1.0);
    }
  };
  constexpr double kActivationMargin = 0.97, kComputeMargin = 0.95;
  std::map<std::string, TwinFloors> twinFloors;
  auto memoryFloor = [&](const PlanChoice &p) {
    auto it = twinFloors.find(floorKey(p));
    if (it == twinFloors.end())
      return 0.0;
    double least = -1;
    for (int64_t z = p.zeroStage; z < 4; ++z)
      if (double bytes = it->second.activationBytes[z][level(p) % 4]; bytes >= 0)
        least = least < 0 ? bytes : std::min(least, bytes);
    return std::max(0.0, least * kActivationMargin);
  };
  auto computeFloor = [&](const PlanChoice &p) {
    auto it = twinFloors.find(floorKey(p));
    double seconds = 0;
    if (it != twinFloors.end())
      for (int r = 0; r <= level(p) % 4; ++r)
        seconds = std::max(seconds, it->second.computeSeconds[r] * kComputeMargin);
    return seconds;
  };
  std::vector<bool> evaluated(candidates.size(), false);
  std::function<void(size_t)> evaluate = [&](size_t i) {
    PlanOutcome &c = candidates[i];
    evaluated[i] = true;
    // An interleaved or zero-bubble plan: its 1F1B twins first, until one compiles (each is
    // simulated anyway unless the step bound prunes it), for what a block keeps.
    if (c.plan.pp > 1 && c.plan.schedule != "1f1b")
      if (auto twins = oneF1BOf.find(twinOf[i]); twins != oneF1BOf.end())
        for (size_t j : twins->second) {
          if (keptPerBlock.count(twinOf[i]))
            break;
          if (!evaluated[j])
            evaluate(j);
        }
    if (auto twin = fittingLevel.find(twinKey(c.plan)); twin != fittingLevel.end() && twin->second < level(c.plan)) {
      int fits = twin->second, mine = level(c.plan);
      // Dominated where it recomputes at least as much and offloads at least as much.
      if (mine % 4 >= fits % 4 && mine / 4 >= fits / 4) {
        ++result.dominated;
        return;
      }
    }
    // A twin's compute is slower than the tenth best step: so is this plan.
    if (result.best.size() >= request.keep && computeFloor(c.plan) > result.best.back().result.stepSeconds) {
      ++result.boundedOut;
      return;
    }
    const double stateBound = modelStateLowerBound(c.plan, facts.paramElements, facts.expertParamElements, bf16);
    const double activationBound = activationLowerBound(c.plan, facts, bf16, keptFor(i));
    const double twinsFloor = memoryFloor(c.plan);
    const double memoryBound = stateBound + std::max(activationBound, twinsFloor);
    if (memoryBound + SimResult::kReservedBytes > budget) {
      ++result.overMemory;
      if (request.verbose && !keptPerBlock.count(twinOf[i]) && keptFor(i) > 0)
        llvm::errs() << llvm::formatv("zcc --plan auto: {0}: over memory by what a block keeps at another pipeline "
                                      "depth (bound {1:F4} GiB, activations {2:F4})\n",
                                      c.plan.describe(), memoryBound / double(1 << 30),
                                      activationBound / double(1 << 30));
      return;
    }
    // Memory grows with the micro-batch: where a smaller one of the same plan did not fit, this
    // one cannot.
    if (llvm::any_of(overBudget, [&](const PlanChoice &small) {
          const PlanChoice &p = c.plan;
          return small.tp == p.tp && small.cp == p.cp && small.pp == p.pp && small.zeroStage == p.zeroStage &&
                 small.recompute == p.recompute && small.offloadOptimizer == p.offloadOptimizer &&
                 small.zeroPlusPlus == p.zeroPlusPlus && small.schedule == p.schedule &&
                 small.interleave == p.interleave && small.ep == p.ep && small.microBatchSize <= p.microBatchSize;
        })) {
      ++result.overMemory;
      return;
    }
    ZccPipelineOptions o;
    o.copyOptionValuesFrom(request.base);
    o.worldSize = world;
    o.tensorParallel = c.plan.tp;
    o.contextParallel = c.plan.cp;
    o.pipelineParallel = c.plan.pp;
    o.expertParallel = c.plan.ep;
    if (c.plan.ep == 1) // the user's bound on what an expert receives: only with expert parallelism
      o.moeMaxTokensPerExpert = "";
    o.zeroStage = c.plan.zeroStage;
    o.gradAccum = c.plan.compileMicroBatches;
    o.recompute = c.plan.recompute;
    o.offloadOptimizer = c.plan.offloadOptimizer;
    // Interleaved: compiled as a p x v pipeline of one chunk per stage (compileForSimulation)
    // and simulated with the interleaved table over them (ZB-V's stages split their backward as
    // zb-h1's, and the simulator runs the V's table).
    o.pipelineSchedule = c.plan.interleave == 1 ? c.plan.schedule
                         : c.plan.schedule == "zbv" ? std::string("zb-h1")
                                                    : std::string("1f1b");
    setZeroPlusPlus(o, c.plan.zeroPlusPlus, cluster.devicesPerNode);
    o.memoryBudget = 0; // the planner compares the plan with the budget itself
    o.report = "";
    // A plan zcc refuses as the user would compile it (its chunks on each rank) is not offered,
    // though the simulation compiles the chunks as stages of their own.
    {
      ZccPipelineOptions asWritten;
      asWritten.copyOptionValuesFrom(o);
      asWritten.pipelineChunks = c.plan.interleave;
      asWritten.pipelineSchedule = c.plan.schedule;
      if (!checkPipelineOptions(asWritten).empty()) {
        ++result.failedToCompile;
        return;
      }
    }
    // The passes' cost model (bucket sizes) from the cluster's links for this mesh, as zcc
    // --cluster compiles the plan, unless the user gave --cost-model.
    CostModelFile costs;
    if (request.base.costModel.empty()) {
      if (llvm::Error e = writePassCostModel(cluster, Mesh::of(o), bf16, costs)) {
        error = llvm::toString(std::move(e));
        return;
      }
      o.costModel = costs.path.str().str();
    }
    std::string why;
    auto began = std::chrono::steady_clock::now();
    FailureOr<CompiledPlan> compiled =
        compileForSimulation(request.model, o, c.plan.interleave, why, /*verify=*/false);
    ++result.compiled;
    if (failed(compiled)) {
      ++result.failedToCompile;
      return;
    }
    if (c.plan.pp > 1 && c.plan.schedule == "1f1b")
      if (double perBlock = stashPerBlock(compiled->stages); perBlock > 0) {
        keptPerBlock[twinOf[i]] = perBlock;
        double &anyDepth = keptPerBlockAnyDepth.try_emplace(depthFree(c.plan), perBlock).first->second;
        anyDepth = std::min(anyDepth, perBlock);
        if (request.verbose)
          llvm::errs() << llvm::formatv("zcc --plan auto: {0}: a stage keeps {1:F1} MiB per block per micro-batch\n",
                                        c.plan.describe(), perBlock / double(1 << 20));
      }
    SimRequest sim;
    sim.mesh = Mesh::of(o, c.plan.interleave);
    sim.microBatches = c.plan.microBatches;
    sim.schedule = c.plan.schedule;
    sim.bf16 = bf16;
    sim.modelFlopsPerStep = facts.modelFlops * scale;
    sim.tokensPerStep = facts.tokens * scale;
    c.result = simulate(compiled->stages, cluster, sim);
    if (request.verbose)
      llvm::errs() << llvm::formatv("zcc --plan auto: {0}: bound {1:F3} s, simulated {2:F3} s, {3:F4} GiB (bound "
                                    "{5:F4} GiB: state {6:F4}, activations {7:F4}, twins' {8:F4}; activations "
                                    "{9:F4}) ({4:F2} s)\n",
                                    c.plan.describe(), c.lowerBoundSeconds, c.result.stepSeconds,
                                    c.result.memoryBytes / double(1 << 30),
                                    std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count(),
                                    memoryBound / double(1 << 30), stateBound / double(1 << 30),
                                    activationBound / double(1 << 30), twinsFloor / double(1 << 30),
                                    double(c.result.activationBytes()) / double(1 << 30));
    if (!c.plan.zeroPlusPlus) {
      TwinFloors &floors = twinFloors[floorKey(c.plan)];
      const int r = level(c.plan) % 4;
      const double activations = double(c.result.activationBytes());
      const double compute = c.result.parts.compute + c.result.parts.recompute;
      double &kept = floors.activationBytes[c.plan.zeroStage][r], &computed = floors.computeSeconds[r];
      kept = kept < 0 ? activations : std::min(kept, activations);
      computed = computed < 0 ? compute : std::min(computed, compute);
    }
    if (!c.result.fits(budget)) {
      ++result.overMemory;
      overBudget.push_back(c.plan);
      return;
    }
    if (auto [it, added] = fittingLevel.insert({twinKey(c.plan), level(c.plan)}); !added)
      it->second = std::min(it->second, level(c.plan));
    auto at = std::upper_bound(result.best.begin(), result.best.end(), c, [](const PlanOutcome &a, const PlanOutcome &b) {
      return a.result.stepSeconds < b.result.stepSeconds;
    });
    result.best.insert(at, c);
    if (result.best.size() > request.keep)
      result.best.pop_back();
  };
  for (size_t i = 0; i < candidates.size() && error.empty(); ++i) {
    if (evaluated[i])
      continue;
    // The time limit: the plans left all bound at or above this one's step (they are sorted).
    if (request.timeLimitSeconds > 0 && !result.best.empty() &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > request.timeLimitSeconds) {
      result.timedOut = true;
      result.untried = static_cast<int64_t>(std::count(evaluated.begin() + i, evaluated.end(), false));
      result.untriedBoundSeconds = candidates[i].lowerBoundSeconds;
      break;
    }
    if (result.best.size() >= request.keep && candidates[i].lowerBoundSeconds > result.best.back().result.stepSeconds) {
      result.boundedOut = static_cast<int64_t>(std::count(evaluated.begin() + i, evaluated.end(), false));
      break;
    }
    evaluate(i);
  }
  if (!error.empty())
    return failure();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (result.best.empty()) {
    error = llvm::formatv("no plan fits {0} nodes of {1} ({2} devices of {3:F1} GiB): {4} plans, {5} over memory, "
                          "{6} not legal for this model",
                          request.nodes, cluster.name, world, budget / double(1 << 30), result.enumerated,
                          result.overMemory, result.failedToCompile);
    return failure();
  }
  return result;
}

std::string zcc::sim::whyRunnerUpLost(const PlanOutcome &best, const PlanOutcome &runnerUp) {
  std::vector<Breakdown::Named> a = best.result.parts.named(), b = runnerUp.result.parts.named();
  std::vector<std::pair<double, std::string>> diffs;
  for (size_t i = 0; i < a.size(); ++i)
    diffs.push_back({b[i].seconds - a[i].seconds, a[i].phrase});
  std::stable_sort(diffs.begin(), diffs.end(), [](auto &x, auto &y) { return std::abs(x.first) > std::abs(y.first); });
  double slower = runnerUp.result.stepSeconds - best.result.stepSeconds;
  std::string text = llvm::formatv("the runner-up ({0}) is {1:F3} s ({2:F1}%) slower:", runnerUp.plan.describe(),
                                   slower, 100 * slower / best.result.stepSeconds);
  int shown = 0;
  for (auto &[delta, what] : diffs) {
    if (shown == 3 || std::abs(delta) < 1e-4 * best.result.stepSeconds)
      break;
    text += llvm::formatv("{0} {1}{2:F3} s of {3}", shown ? "," : "", delta > 0 ? "+" : "", delta, what).str();
    ++shown;
  }
  return text;
}

llvm::json::Value zcc::sim::planJson(const PlanOutcome &choice, const Cluster &cluster, int64_t nodes) {
  const PlanChoice &c = choice.plan;
  return llvm::json::Object{
      {"format", 1},
      {"cluster", cluster.name},
      {"nodes", nodes},
      {"world_size", c.tp * c.cp * c.pp * c.dp},
      {"tp", c.tp},
      {"cp", c.cp},
      {"pp", c.pp},
      {"dp", c.dp},
      {"ep", c.ep},
      {"moe_max_tokens_per_expert", c.expertBound},
      {"zero_stage", c.zeroStage},
      {"micro_batch_size", c.microBatchSize},
      {"micro_batches", c.microBatches},
      {"grad_accum", c.compileMicroBatches},
      {"recompute", c.recompute},
      {"offload_optimizer", c.offloadOptimizer},
      {"pp_schedule", c.schedule},
      {"pp_interleave", c.interleave},
      {"zero_plus_plus", c.zeroPlusPlus},
      {"ranks_per_node", cluster.devicesPerNode},
      {"precision", choice.result.bf16 ? "bf16" : "fp32"},
      {"predicted", choice.result.toJson()}};
}

llvm::Error zcc::sim::applyPlanFile(llvm::StringRef path, ZccPipelineOptions &options) {
  auto fail = [&](const llvm::Twine &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "plan '" + path + "': " + what);
  };
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail("cannot read: " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail("not JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return fail("expected a JSON object");
  auto integer = [&](llvm::StringRef key, int64_t &into) -> llvm::Error {
    std::optional<int64_t> v = root->getInteger(key);
    if (!v || *v < 0)
      return fail("\"" + key + "\" must be a non-negative integer");
    into = *v;
    return llvm::Error::success();
  };
  auto string = [&](llvm::StringRef key, std::string &into) -> llvm::Error {
    std::optional<llvm::StringRef> v = root->getString(key);
    if (!v)
      return fail("\"" + key + "\" must be a string");
    into = v->str();
    return llvm::Error::success();
  };
  int64_t world, tp, cp, pp, zero, accum;
  std::string recompute, offload, precision;
  for (auto [key, into] : std::initializer_list<std::pair<const char *, int64_t *>>{
           {"world_size", &world}, {"tp", &tp}, {"cp", &cp}, {"pp", &pp}, {"zero_stage", &zero}, {"grad_accum", &accum}})
    if (llvm::Error e = integer(key, *into))
      return e;
  for (auto [key, into] : std::initializer_list<std::pair<const char *, std::string *>>{
           {"recompute", &recompute}, {"offload_optimizer", &offload}, {"precision", &precision}})
    if (llvm::Error e = string(key, *into))
      return e;
  options.worldSize = world;
  options.tensorParallel = tp;
  options.contextParallel = cp;
  options.pipelineParallel = pp;
  options.zeroStage = zero;
  options.gradAccum = accum;
  options.recompute = recompute;
  options.offloadOptimizer = offload;
  options.precision = precision;
  // The pipeline's schedule (plans written before it: absent, 1F1B).
  if (std::optional<llvm::StringRef> schedule = root->getString("pp_schedule"))
    options.pipelineSchedule = schedule->str();
  else if (root->get("pp_schedule"))
    return fail("\"pp_schedule\" must be a string");
  else
    options.pipelineSchedule = "1f1b";
  // Expert parallelism (plans written before it: absent, none).
  int64_t ep = 1;
  if (root->get("ep"))
    if (llvm::Error e = integer("ep", ep))
      return e;
  options.expertParallel = ep;
  if (std::optional<llvm::StringRef> bound = root->getString("moe_max_tokens_per_expert"))
    options.moeMaxTokensPerExpert = bound->str();
  // Interleaved 1F1B's chunks per rank (plans written before it: absent, one).
  int64_t chunks = 1;
  if (root->get("pp_interleave"))
    if (llvm::Error e = integer("pp_interleave", chunks))
      return e;
  options.pipelineChunks = chunks;
  // ZeRO++ (plans written before it: absent, off).
  if (std::optional<bool> zeroPlusPlus = root->getBoolean("zero_plus_plus"); zeroPlusPlus && *zeroPlusPlus) {
    int64_t perNode = 0;
    if (llvm::Error e = integer("ranks_per_node", perNode))
      return e;
    setZeroPlusPlus(options, true, perNode);
  }
  if (std::string problem = checkPipelineOptions(options); !problem.empty())
    return fail(problem);
  return llvm::Error::success();
}
