// main() of every executable zcc links: reads the model description the compiler
// emitted, starts the runtime, initializes the parameters (seeded, identical for every
// world size), then runs the steps: K micro-batches of zcc_step, one zcc_update.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/Communicator.h"
#include "core/Error.h"
#include "core/Trace.h"
#include "main/Data.h"
#include "main/ExpertBias.h"
#include "main/ModelInfo.h"
#include "main/MoeStats.h"
#include "main/PipelineSchedule.h"
#include "main/StagePrograms.h"
#include "main/Preemption.h"
#include "main/Checkpoint.h"
#include "main/CheckpointLease.h"
#include "main/Compression.h"
#include "main/Flags.h"
#include "main/LrSchedule.h"
#include "main/StepLog.h"
#include "main/Watermark.h"
#include "main/Weights.h"
#include "zrt/bf16.h"
#include "zrt/zrt.h"

// What zcc emits: one model's functions and description, or, with --pp, each pipeline
// stage's (zcc_stages; zcc/StageLink.h). Weak: an executable has one or the other.
extern "C" {
extern const char zcc_model_json[] __attribute__((weak));
float zcc_step(void *arena, void *const *inputs) __attribute__((weak));
float zcc_eval(void *arena, void *const *inputs) __attribute__((weak));
void zcc_update(void *arena, double lr, int64_t step) __attribute__((weak));
extern const ZccStage zcc_stages[] __attribute__((weak));
extern const int64_t zcc_stage_count __attribute__((weak));
}

using namespace zrt;
using namespace zrt::train;

namespace {

/// Test hooks (ZCC_FAULT=kill-in-step:STEP[@RANK], hang-in-step:STEP@RANK): dies, or
/// hangs, in the middle of a step, between the backward pass and the optimizer update, as
/// a failing node would (every rank, or only RANK).
void maybeKillInStep(int64_t step, int rank) {
  const char *fault = std::getenv("ZCC_FAULT");
  if (!fault)
    return;
  std::string f = fault, at = "kill-in-step:" + std::to_string(step);
  if (f == at || f == at + "@" + std::to_string(rank))
    std::raise(SIGKILL);
  // ZCC_FAULT=hang-in-step:STEP@RANK: the rank stops making progress (a stuck node).
  if (f == "hang-in-step:" + std::to_string(step) + "@" + std::to_string(rank))
    for (;;)
      pause();
}

/// The first parameter whose gradient holds a NaN or an Inf, or null: every gradient checked in
/// one call (one wait for a GPU).
const ParamInfo *nonFiniteGradient(const ModelInfo &m) {
  std::vector<int64_t> offsets, elements;
  std::vector<int32_t> dtypes;
  for (const ParamInfo &p : m.params) {
    offsets.push_back(p.gradOffset);
    elements.push_back(p.gradStorageBytes / p.elementBytes());
    dtypes.push_back(p.dtype == "bf16" ? ZRT_DTYPE_BF16 : ZRT_DTYPE_F32);
  }
  int64_t bad = zrt_arena_first_nonfinite(static_cast<int64_t>(m.params.size()), offsets.data(), elements.data(),
                                          dtypes.data());
  return bad < 0 ? nullptr : &m.params[bad];
}

} // namespace

int main(int argc, char **argv) {
  // A file-size limit (ulimit -f) reached while the NVMe store or a checkpoint is written is an
  // error the writer reports (EFBIG, with the file named), not a signal that kills the rank.
  std::signal(SIGXFSZ, SIG_IGN);
  // Before anything starts a thread: SIGTERM and SIGUSR1 reach only the watcher's.
  watchPreemptionSignals();
  Flags flags = parseFlags(argc, argv);
  // A pipelined executable holds every stage; this rank runs the one of its pipeline coordinate.
  const int64_t stages = &zcc_stage_count ? zcc_stage_count : 1;
  std::vector<ModelInfo> stageModels;
  for (int64_t k = 0; k < stages; ++k)
    stageModels.push_back(parseModelInfo(stages > 1 ? zcc_stages[k].json : zcc_model_json));
  if (flags.describe) { // one stage: its description; several: {"stages": [...]}
    if (stages == 1) {
      std::printf("%s\n", zcc_model_json);
    } else {
      std::printf("{\"stages\": [");
      for (int64_t k = 0; k < stages; ++k)
        std::printf("%s%s", k ? ", " : "", zcc_stages[k].json);
      std::printf("]}\n");
    }
    return 0;
  }
  if (!flags.trace.empty())
    trace::setPath(flags.trace.c_str());
  // Each stage plans its own arena; every rank allocates the largest rank's (ranks learn their
  // stage from the mesh, which needs the runtime started). An interleaved rank holds V stage
  // programs, each its arena at its own base (main/StagePrograms.h).
  const int64_t chunks = stageModels[0].chunks, pipeRanks = stages / chunks;
  if (chunks < 1 || stages % chunks != 0 || (stages > 1 && pipeRanks != stageModels[0].pp))
    fatal("zcc_model_json", "%lld stage programs are not %lld chunks of %lld pipeline ranks",
          static_cast<long long>(stages), static_cast<long long>(chunks), static_cast<long long>(stageModels[0].pp));
  const int64_t arenaBytes = rankArenaBytes(stageModels, chunks);
  const bool routes = routesTokens(stageModels); // a Mixture-of-Experts model: its routings are logged
  ExpertBiases expertBiases(stageModels);        // the routings' aux-loss-free balancing biases
  if (!flags.comm.empty()) // the CUDA backend's transport (runtime/cuda/CommChoice.h); the CPU's is MPI
    setenv("ZRT_COMM", flags.comm.c_str(), /*overwrite=*/1);
  char *arena = static_cast<char *>(zrt_init(stageModels[0].worldSize, arenaBytes));
  zrt_set_mesh(static_cast<int32_t>(stageModels[0].tp), static_cast<int32_t>(stageModels[0].pp));
  zrt_set_context(static_cast<int32_t>(stageModels[0].cp));
  zrt_set_experts(static_cast<int32_t>(stageModels[0].ep));
  {
    // ZeRO++'s groups (the node size the program was compiled for) and where the nodes really
    // are, for the link counters. In-node hops that cross nodes still give the same results:
    // only slower, so a mismatch is a warning.
    const ModelInfo &m0 = stageModels[0];
    const int64_t compiled = m0.ranksPerNode > 0 ? m0.ranksPerNode : 1;
    if (flags.ranksPerNode < 0 || (flags.ranksPerNode > 0 && m0.worldSize % flags.ranksPerNode != 0)) {
      std::fprintf(stderr, "train.bin: --ranks-per-node must divide the %lld ranks, got %lld\n",
                   static_cast<long long>(m0.worldSize), static_cast<long long>(flags.ranksPerNode));
      return 2;
    }
    zrt_set_hierarchy(static_cast<int32_t>(compiled), static_cast<int32_t>(m0.hpz),
                      static_cast<int32_t>(flags.ranksPerNode));
    const int64_t placed = flags.ranksPerNode > 0 ? flags.ranksPerNode : zrt::launcherLocalRanks();
    if (m0.ranksPerNode > 0 && placed > 0 && placed != m0.ranksPerNode && zrt_rank() == 0)
      std::fprintf(stderr,
                   "train.bin: warning: compiled for %lld ranks per node (zcc --ranks-per-node), placed %lld per "
                   "node: ZeRO++'s in-node hops cross nodes (results are the same, slower)\n",
                   static_cast<long long>(m0.ranksPerNode), static_cast<long long>(placed));
  }
  // The programs this rank runs: its pipeline stage's, or interleaved its V chunks' (chunk c is
  // virtual stage c P + r; ZB-V's second 2P - 1 - r), each with its description placed at its
  // base in the arena and the ranks of its neighbouring stages.
  const int64_t pipeRank = zrt_mesh_rank(ZRT_AXIS_PIPELINE);
  std::vector<StageProgram> held =
      rankPrograms(stageModels, chunks, pipeRank, arena, stages > 1 ? zcc_stages : nullptr, zcc_step, zcc_eval);
  const ModelInfo &model = held[0].model;
  const auto updateFunction = stages > 1 ? nullptr : zcc_update;
  const int rank = zrt_rank();
  std::vector<const ModelInfo *> heldModels; // what checkpoints save and resume: each chunk's state
  for (const StageProgram &k : held)
    heldModels.push_back(&k.model);
  // The flat weight files hold the whole model's parameters in its order, which no stage program
  // knows: a pipeline reads its start from safetensors by name (--init) and writes its end through
  // a checkpoint (zcc-ckpt consolidate), never a stage's part of a flat file as if it were whole.
  if (stages > 1 && (!flags.exportWeights.empty() || !flags.initWeights.empty()))
    fatal("train", "--export-weights and --init-weights (flat f32 files of the whole model) are not supported with "
                   "a pipeline (zcc --pp %lld): initialize from --init FILE.safetensors; export with --ckpt-dir and "
                   "zcc-ckpt consolidate",
          static_cast<long long>(pipeRanks));
  // The batch is split over the data-parallel ranks; tensor-parallel ranks read the same rows, and
  // so do context-parallel ranks (each keeps its tokens of them), which the data axis includes.
  const int dataRank = zrt_mesh_rank(ZRT_AXIS_DATA), dataRanks = zrt_mesh_size(ZRT_AXIS_DATA);
  const int batchRank = dataRank / static_cast<int>(model.cp), batchRanks = dataRanks / static_cast<int>(model.cp);
  zrt_set_comm_timeout(flags.commTimeout);

  // Offloaded model state (zcc --offload-optimizer, --offload-param): its tiers, zeroed, before anything is
  // written there; a missing, unwritable or full --nvme-path stops here, before training.
  if (model.hostTierBytes > 0)
    zrt_tier_open(ZRT_TIER_HOST, nullptr, model.hostTierBytes);
  if (model.nvmeTierBytes > 0) {
    const std::string &dir = flags.nvmePath.empty() ? model.nvmePath : flags.nvmePath;
    zrt_tier_open(ZRT_TIER_NVME, dir.c_str(), model.nvmeTierBytes);
  }

  // Parameters (and master copies) on every rank from the same seed; gradients and
  // optimizer moments start at zero.
  for (StageProgram &k : held) {
    zrt_arena_fill(k.model.arenaBase, 0, k.model.persistentBytes);
    if (!flags.initWeights.empty())
      readWeights(k.model, flags.initWeights);
    else if (!flags.init.empty())
      readSafetensors(k.model, flags.init);
    else
      initializeWeights(k.model, flags.seed);
    // Compression training's pruning masks, from the weights the run starts from (a resume
    // below restores the saved ones).
    computePruningMasks(k.model);
    paintScratch(k.model);
  }

  DataOptions dataOptions;
  dataOptions.path = flags.data;
  dataOptions.dtype = flags.dataDtype;
  dataOptions.order = flags.dataOrder;
  dataOptions.synthetic = flags.synthetic;
  dataOptions.seed = flags.seed;
  // Each chunk reads the inputs its program takes (the tokens at the first stage, the targets at
  // the last); held-out rows for the validation loss in order: the same batches every evaluation.
  const bool validating = !flags.evalData.empty();
  for (StageProgram &k : held) {
    k.data = openData(k.model, dataOptions);
    if (validating) {
      if (k.stage == stages - 1 && !k.eval)
        fatal("train", "--eval-data: this executable has no validation function (compile it with this zcc)");
      DataOptions evalOptions = dataOptions;
      evalOptions.path = flags.evalData;
      evalOptions.order = "sequential";
      k.evalData = openData(k.model, evalOptions);
    }
  }
  DataSource &data = *held[0].data;
  const double peakLr = flags.lr > 0 ? flags.lr : model.defaultLr;
  RunIdentity run;
  run.seed = flags.seed;
  run.data = data.describe();
  run.peakLr = peakLr;
  run.schedule = scheduleText(flags);
  run.warmup = flags.warmup;
  run.steps = flags.steps;
  run.overrideSchedule = flags.overrideSchedule;
  // The job holds --ckpt-dir (it may wait for a job that still does) before it reads or writes
  // there. Rank 0 may wait while the others sit in its collective: no timeout meanwhile.
  std::unique_ptr<CheckpointLease> lease;
  if (!flags.ckptDir.empty()) {
    zrt_set_comm_timeout(0);
    lease = std::make_unique<CheckpointLease>(flags.ckptDir, flags.ckptLeaseWait);
    zrt_set_comm_timeout(flags.commTimeout);
  }
  int64_t firstStep = 0;
  if (flags.resume)
    firstStep = resumeCheckpoint(stageModels, heldModels, flags.ckptDir, run);
  if (firstStep > 0 && firstStep >= flags.steps) {
    // A finished run resumed (or --steps lowered): nothing to train, and nothing is an error.
    if (rank == 0)
      std::printf("zcc: the checkpoint is at step %lld, --steps is %lld: nothing left to train (raise --steps to "
                  "train on)\n",
                  static_cast<long long>(firstStep), static_cast<long long>(flags.steps));
    if (!flags.exportWeights.empty())
      writeWeights(model, flags.exportWeights);
    lease.reset();
    zrt_finalize();
    return 0;
  }
  // Every product's path, before the first step: every stage's products (the plan is agreed
  // over the world), the checkpoint's paths on a resume. Measuring on rank 0 may take seconds
  // while the other ranks wait in its collective: no timeout meanwhile.
  std::vector<int64_t> matmuls;
  for (const ModelInfo &m : stageModels)
    matmuls.insert(matmuls.end(), m.matmuls.begin(), m.matmuls.end());
  char matmulLine[1024];
  zrt_set_comm_timeout(0);
  zrt_plan_matmuls(matmuls.data(), static_cast<int64_t>(matmuls.size() / ZRT_MATMUL_ROW),
                   run.matmulPlan.empty() ? nullptr : run.matmulPlan.c_str(), matmulLine, sizeof matmulLine);
  zrt_set_comm_timeout(flags.commTimeout);
  run.matmulPlan.resize(static_cast<size_t>(zrt_matmul_plan_text(nullptr, 0)));
  zrt_matmul_plan_text(run.matmulPlan.data(), static_cast<int64_t>(run.matmulPlan.size()) + 1);
  // The data source fills host rows; zrt_input_write moves them where the kernels read. A
  // pipeline stage keeps the inputs of each micro-batch in flight (a slot each); its
  // activation inputs are received from the neighbouring stages into them, and its stash
  // inputs (zcc-pipeline-keep) hold what the micro-batch's forward kept for its backward.
  const int64_t rows = model.rowsPerMicroBatch(), K = model.microBatches;
  // The pipeline's schedule, the table zcc predicted the bubble with: every stage's work in order.
  std::vector<zcc::pipeline::Action> schedule;
  if (stages > 1) {
    std::optional<zcc::pipeline::Schedule> kind = zcc::pipeline::parseSchedule(model.schedule);
    if (!kind)
      fatal("zcc_model_json", "pipeline schedule '%s' is not one this train.bin runs (%s): rebuild with this zcc",
            model.schedule.c_str(), zcc::pipeline::scheduleNames());
    if (std::string problem = zcc::pipeline::problem(*kind, pipeRanks, K, chunks); !problem.empty())
      fatal("zcc_model_json", "%s", problem.c_str());
    for (const ModelInfo &m : stageModels)
      if (m.schedule != model.schedule)
        fatal("zcc_model_json", "stage %lld was compiled for the %s schedule, stage %lld for %s",
              static_cast<long long>(m.stage), m.schedule.c_str(), static_cast<long long>(model.stage),
              model.schedule.c_str());
    schedule = zcc::pipeline::table(*kind, pipeRanks, K, chunks)[pipeRank];
    for (const StageProgram &k : held) {
      if (zcc::pipeline::splitsBackward(*kind) && !k.weight)
        fatal("zcc_model_json", "the %s schedule needs stage %lld's weight-gradient function, which it lacks",
              model.schedule.c_str(), static_cast<long long>(k.stage));
      const int64_t slots = zcc::pipeline::slots(*kind, pipeRank, pipeRanks, K, chunks, k.model.chunkOf(k.stage));
      if (slots != k.model.slots)
        fatal("zcc_model_json", "stage %lld plans %lld input slots, its %s schedule uses %lld: rebuild with this zcc",
              static_cast<long long>(k.stage), static_cast<long long>(k.model.slots), model.schedule.c_str(),
              static_cast<long long>(slots));
      // Each input's buffers: what the table needs for as long as the plan says it is held.
      for (const InputInfo &in : k.model.inputs) {
        std::optional<zcc::pipeline::Hold> hold = zcc::pipeline::parseHold(in.hold);
        if (!hold)
          fatal("zcc_model_json", "stage %lld's %s input is held for '%s', which this train.bin does not know",
                static_cast<long long>(k.stage), in.role.c_str(), in.hold.c_str());
        const int64_t needed =
            zcc::pipeline::heldSlots(*kind, pipeRank, pipeRanks, K, chunks, k.model.chunkOf(k.stage), *hold);
        if (in.slots < needed)
          fatal("zcc_model_json", "stage %lld plans %lld buffers for its %s input, held %s; its %s schedule needs "
                "%lld: rebuild with this zcc", static_cast<long long>(k.stage), static_cast<long long>(in.slots),
                in.role.c_str(), in.hold.c_str(), model.schedule.c_str(), static_cast<long long>(needed));
      }
    }
  }
  allocateInputs(held); // each program's slots (its plan's) after the previous one's
  std::unique_ptr<ReceivesAhead> receives = stages > 1 ? std::make_unique<ReceivesAhead>(held, schedule) : nullptr;
  const int64_t globalRows = rows * K * batchRanks;
  int64_t tokensPerRow = 1;
  for (const InputInfo &in : model.inputs)
    if (in.role == "tokens")
      tokensPerRow = in.shape.size() == 2 ? in.shape[1] : 1;

  // Rank 0 prints what runs (model, mesh, backend, matmul paths, state) and keeps the --log-json file.
  StepLog log(rank == 0, flags.logJson);
  if (rank == 0)
    printRunBanner(stageModels, model, arenaBytes, data, batchRanks, dataRanks, globalRows, matmulLine);

  zrt_counters before{};
  zrt_get_counters(&before);
  double totalSeconds = 0;
  float lastLoss = 0;
  // The pipeline's bubble as measured: the fraction of the 1F1B schedule's span each stage spent
  // outside its forward and step calls, waiting for its neighbours; steps after the first. The
  // span is the whole pipeline's (the longest rank's, from the step's start to its last step
  // call; the update is not the schedule's), as in the 1F1B model the compiler predicts with:
  // a stage done early (the last one finishes its backwards first) idles until the pipeline is.
  // Every step starts together on all ranks (the previous one ended in a world-wide reduction).
  double pipelineBusy = 0, pipelineSchedule = 0, pipelineBusyMeasured = 0, pipelineStepSeconds = 0;
  // Rows of this rank's micro-batch k of global batch `batch` of `source`, into chunk c's input
  // buffers of micro-batch `into`.
  auto fillRows = [&](StageProgram &c, DataSource &source, int64_t batch, int64_t k, int64_t into) {
    int64_t first = batch * globalRows + (batchRank * K + k) * rows;
    for (int64_t r = 0; r < rows; ++r)
      source.fillRow(first + r, r, c.hostRows);
    for (size_t i = 0; i < c.storage.size(); ++i)
      if (c.fromData(static_cast<int64_t>(i)))
        zrt_input_write(c.bufferIndex(static_cast<int64_t>(i), into), c.storage[i].data(),
                        static_cast<int64_t>(c.storage[i].size()));
  };
  // The validation loss: the forward only, over --eval-iters global batches of the held-out
  // rows (the same ones each time), each of K micro-batches as in training; a pipeline's
  // stages run their forward-only functions in order and the last one the loss, each earlier one
  // returning its MoE routers' losses (0 without). The mean over the data-parallel ranks (every
  // rank gets it).
  auto validationLoss = [&]() -> double {
    double sum = 0;
    for (int64_t batch = 0; batch < flags.evalIters; ++batch)
      for (int64_t k = 0; k < K; ++k) {
        for (StageProgram &c : held) { // interleaved: the micro-batch crosses this rank once per chunk
          fillRows(c, *c.evalData, batch, k, 0);
          std::vector<void *> in = c.buffersOf(0);
          if (c.activationInput >= 0)
            zrt_pipe_recv(in[c.activationInput], c.model.inputs[c.activationInput].bytes,
                          static_cast<int32_t>(c.prevRank), ZRT_PIPE_ACTIVATION);
          if (c.stage == stages - 1)
            sum += c.eval(c.arena, in.data());
          else
            sum += c.forward(c.arena, in.data());
        }
        if (stages > 1)
          zrt_pipe_flush();
      }
    float mine = static_cast<float>(sum / double(flags.evalIters * K)), total = 0;
    zrt_host_all_reduce(ZRT_AXIS_WORLD, &mine, &total, 1, 0);
    return total / static_cast<float>(dataRanks * model.tp);
  };
  zrt_counters runStart{};
  zrt_get_counters(&runStart);
  for (int64_t step = firstStep; step < flags.steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    setStepGates(model, step); // compression techniques on from their schedule_offset
    double lossSum = 0;
    // Rows of this rank's micro-batch k in the step's global batch, into its input buffers.
    auto fillMicroBatch = [&](StageProgram &c, int64_t k) { fillRows(c, *c.data, step, k, k); };
    if (stages == 1) {
      StageProgram &only = held[0];
      for (int64_t k = 0; k < K; ++k) {
        fillMicroBatch(only, k);
        // The step's calls are the same every run: the CUDA backend replays them as a graph.
        const std::vector<void *> in = only.buffersOf(k);
        double hostLoss = zrt_graph_begin(0, flags.cudaGraphs) ? only.step(arena, in.data()) : 0.0;
        lossSum += zrt_graph_end(0, hostLoss);
      }
    } else {
      // The schedule's table (1F1B, zero-bubble or interleaved: each piece of work names the
      // chunk it runs, its neighbours' on the ranks before and after). F: the micro-batch's input arrives (the
      // data, or the previous stage's output), the forward sends its output on and keeps what
      // the backward reads in the micro-batch's slot. B: the output's gradient arrives, the
      // step runs the backward (under zero-bubble only the input's gradient) and sends its
      // input's gradient back. W: the weight gradients, from what F and B kept. No CUDA graphs:
      // each call reads another slot's buffers.
      const auto scheduleStart = std::chrono::steady_clock::now();
      // One piece of the table's work: its time counts as busy; the trace gets one event per
      // piece ("F 3": micro-batch 3) with the thread's CPU time in it, which ranks sharing a
      // core do not inflate (the bubble from the trace, test/Train/pipeline_trace.py).
      auto work = [&](char kind, const zcc::pipeline::Action &a, auto &&call) {
        const auto busyStart = std::chrono::steady_clock::now();
        const double traceStart = trace::enabled ? trace::nowMicros() : 0;
        const double cpuStart = trace::enabled ? trace::threadCpuMicros() : 0;
        const double result = call();
        pipelineBusy += std::chrono::duration<double>(std::chrono::steady_clock::now() - busyStart).count();
        if (trace::enabled)
          trace::record(workName(kind, a.chunk, chunks > 1), TraceTrack::Steps, traceStart, trace::nowMicros(), -1,
                        a.microBatch, trace::threadCpuMicros() - cpuStart);
        return result;
      };
      // Each receive starts once its slot is free, ahead of the work before it (ReceivesAhead).
      receives->reset();
      for (size_t j = 0; j < schedule.size(); ++j) {
        const zcc::pipeline::Action &a = schedule[j];
        StageProgram &c = held[a.chunk];
        std::vector<void *> in = c.buffersOf(a.microBatch);
        receives->startBefore(j);
        if (a.work == zcc::pipeline::Work::Weight) {
          work('W', a, [&] { return c.weight(c.arena, in.data()); });
        } else if (a.work == zcc::pipeline::Work::Forward) {
          fillMicroBatch(c, a.microBatch);
          receives->wait(j);
          if (c.forward)
            work('F', a, [&] { return c.forward(c.arena, in.data()); });
        } else {
          receives->wait(j);
          // Each stage's step returns the losses it computes: the last stage's the model's, an
          // earlier one's its MoE layers' load-balancing and z-losses (0 where it has none).
          lossSum += work('B', a, [&] { return c.step(c.arena, in.data()); });
        }
      }
      pipelineSchedule = std::chrono::duration<double>(std::chrono::steady_clock::now() - scheduleStart).count();
      zrt_pipe_flush();
      sumTiedGradients(held, stages); // the tied embedding and head: both update with the sum
    }
    maybeKillInStep(step + 1, rank);
    double lr = learningRate(flags, peakLr, step);
    // A NaN or Inf in the loss or a gradient: every rank learns of it (one flag each),
    // then all stop, or all skip this update (the gradients are cleared instead).
    bool skip = false;
    if (flags.nonfinite != "off") {
      const ParamInfo *bad = nullptr;
      for (const StageProgram &c : held)
        if (!bad)
          bad = nonFiniteGradient(c.model);
      float mine = (!std::isfinite(lossSum) || bad) ? 1.0f : 0.0f, any = 0;
      zrt_host_all_reduce(ZRT_AXIS_WORLD, &mine, &any, 1, 0);
      if (any > 0) {
        std::string what = !std::isfinite(lossSum) ? "the loss is " + std::to_string(lossSum)
                           : bad ? "the gradient of '" + bad->name + "' holds a NaN or an Inf"
                                 : "another rank found a NaN or an Inf";
        if (flags.nonfinite == "stop")
          fatal("train", "step %lld: %s (--nonfinite skip would drop this step's update)",
                static_cast<long long>(step + 1), what.c_str());
        if (rank == 0)
          std::fprintf(stderr, "zcc: step %lld: %s: update skipped\n", static_cast<long long>(step + 1),
                       what.c_str());
        for (const StageProgram &c : held)
          for (const ParamInfo &p : c.model.params)
            zrt_arena_fill(p.gradOffset, 0, p.gradStorageBytes);
        skip = true;
      }
    }
    double updateSeconds = 0; // the optimizer's share of the step (offload: its swaps too)
    if (!skip) {
      const auto updateStart = std::chrono::steady_clock::now();
      // The update too: the CUDA backend replays it with this step's lr and step count.
      zrt_graph_scalars(lr, step + 1);
      if (zrt_graph_begin(1, flags.cudaGraphs && stages == 1)) {
        if (stages > 1) {
          // Each of the rank's programs' reductions and part of the norm, the norm's sum over the
          // mesh, then each program's clipping and optimizers: all clip by the whole model's norm.
          for (const StageProgram &c : held)
            zcc_stages[c.stage].updateReduce(c.arena, lr, step + 1);
          zrt_grad_norm_reduce();
          for (const StageProgram &c : held)
            zcc_stages[c.stage].updateApply(c.arena, lr, step + 1);
        } else {
          updateFunction(arena, lr, step + 1);
        }
      }
      zrt_graph_end(1, 0.0);
      updateSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - updateStart).count();
    }
    // The balancing biases move by this step's loads (every rank together); a skipped step's are dropped.
    if (!expertBiases.empty()) {
      if (skip || flags.moeBiasUpdateRate == 0)
        expertBiases.discard();
      else
        expertBiases.update(heldModels, flags.moeBiasUpdateRate);
    }
    // The gradient's global norm the update computed (before clipping, as clip_grad_norm_ returns it).
    const double gradNorm = skip ? std::nan("") : zrt_last_grad_norm();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (trace::enabled)
      trace::record("step", TraceTrack::Steps, trace::nowMicros() - seconds * 1e6, trace::nowMicros(), -1,
                    step + 1);
    totalSeconds += seconds;

    double valLoss = std::nan("");
    if (validating && ((step + 1) % flags.evalEvery == 0 || step + 1 == flags.steps)) {
      setStepGates(model, step + 1); // as DeepSpeed's scheduler stands after this update
      valLoss = validationLoss();
      if (!(valLoss >= run.bestValLoss)) // the first, or a lower one
        run.bestValLoss = valLoss;
    }
    // The logged loss is the global batch's mean (the pipeline stages' losses added: the last
    // stage's and the MoE layers' of earlier ones; the tensor-parallel ranks of a stage hold the same).
    float loss = static_cast<float>(lossSum / K), mean = loss;
    double pipelineSpan = 0; // the longest rank's schedule this step
    if (stages > 1) {
      // One reduction: the stages' losses, and every rank's schedule span in its own slot.
      std::vector<float> mine(1 + model.worldSize, 0.0f), sum(1 + model.worldSize, 0.0f);
      mine[0] = loss;
      mine[1 + rank] = static_cast<float>(pipelineSchedule);
      zrt_host_all_reduce(ZRT_AXIS_WORLD, mine.data(), sum.data(), static_cast<int64_t>(sum.size()), 0);
      mean = sum[0] / static_cast<float>(dataRanks * model.tp);
      pipelineSpan = *std::max_element(sum.begin() + 1, sum.end());
    } else if (dataRanks > 1) {
      zrt_host_all_reduce(ZRT_AXIS_DATA, &loss, &mean, 1, 1);
    }
    if (step > firstStep) { // the first step pays one-time costs: not the schedule's
      pipelineStepSeconds += pipelineSpan;
      pipelineBusyMeasured += pipelineBusy;
    }
    pipelineBusy = 0;
    lastLoss = mean;
    zrt_counters now{};
    zrt_get_counters(&now);
    const bool logged =
        (step + 1) % flags.logEvery == 0 || step == 0 || step + 1 == flags.steps || std::isfinite(valLoss);
    // This step's routings (every rank together, on the steps the log shows; taken every step).
    MoeStepStats moe;
    if (routes && logged)
      moe = gatherMoeStats(model.tp);
    else if (routes) {
      int64_t discarded[6];
      zrt_moe_take_stats(discarded);
    }
    if (rank == 0 && logged) {
      StepRecord r;
      r.step = step + 1;
      r.moe = moe;
      r.loss = mean;
      r.lr = lr;
      r.gradNorm = gradNorm;
      r.valLoss = valLoss;
      r.bestValLoss = run.bestValLoss;
      r.seconds = seconds;
      r.updateSeconds = updateSeconds;
      r.rows = globalRows;
      r.tokensPerRow = tokensPerRow;
      log.write(model, r, before, now);
    }
    before = now;
    // A rank that was signalled tells the others (one flag each); all stop here, together.
    float signalled = static_cast<float>(preemptionSignal()), anySignal = 0;
    zrt_host_all_reduce(ZRT_AXIS_WORLD, &signalled, &anySignal, 1, 0);
    const bool preempted = anySignal > 0 && step + 1 < flags.steps;
    if ((flags.ckptEvery > 0 && ((step + 1) % flags.ckptEvery == 0 || step + 1 == flags.steps)) ||
        (preempted && !flags.ckptDir.empty())) {
      lease->confirm(); // a job that lost the directory to another stops here, writing nothing
      saveCheckpoint(stageModels, heldModels, flags.ckptDir, step + 1, run, static_cast<int>(flags.ckptKeep));
    }
    if (preempted) {
      if (rank == 0) {
        if (flags.ckptDir.empty())
          std::printf("zcc: stopped by a signal after step %lld; no --ckpt-dir, so no checkpoint was written\n",
                      static_cast<long long>(step + 1));
        else
          std::printf("zcc: stopped by a signal after step %lld; checkpoint written to %s (continue with --resume)\n",
                      static_cast<long long>(step + 1), flags.ckptDir.c_str());
        std::fflush(stdout);
      }
      log.close();
      lease.reset();
      zrt_finalize();
      return 143; // as a process that SIGTERM ended: the job did not finish
    }
  }
  {
    // Every rank: what its collectives sent over the steps, by link (zrt_counters).
    zrt_counters runEnd{};
    zrt_get_counters(&runEnd);
    std::printf("zcc: rank %d link bytes over %lld steps: in node %lld, across nodes %lld\n", rank,
                static_cast<long long>(flags.steps - firstStep),
                static_cast<long long>(runEnd.bytes_in_node - runStart.bytes_in_node),
                static_cast<long long>(runEnd.bytes_cross_node - runStart.bytes_cross_node));
    std::fflush(stdout);
  }
  if (rank == 0) {
    const int64_t ran = flags.steps - firstStep; // this process's steps (a resumed run: from its checkpoint)
    std::printf("zcc: %lld steps in %.2f s (%.2f ms/step), final loss %.6f\n", static_cast<long long>(ran),
                totalSeconds, ran ? totalSeconds * 1e3 / ran : 0.0, lastLoss);
    std::printf("zcc: arena per rank: %lld B planned, %lld B written (high-water mark)\n",
                static_cast<long long>(model.arenaBytes), static_cast<long long>(measuredHighWater(model)));
  }
  if (stages > 1) {
    // Every rank: each stage program's arena (an interleaved rank's chunks each their own), planned
    // and written: the stages' plans differ (the slots each keeps, its layers).
    std::string lines;
    for (const StageProgram &c : held)
      lines += "zcc: rank " + std::to_string(rank) + " pipeline stage " + std::to_string(c.stage) + ": arena " +
               std::to_string(c.model.arenaBytes) + " B planned, " + std::to_string(measuredHighWater(c.model)) +
               " B written (high-water mark); inputs " + std::to_string(c.inputBufferBytes()) +
               " B in its buffers\n";
    lines += "zcc: rank " + std::to_string(rank) + " pipeline receives: " + std::to_string(receives->startedEarly()) +
             " of " + std::to_string(receives->count()) + " per step started ahead of the work before their own\n";
    std::fputs(lines.c_str(), stdout);
    std::fflush(stdout);
  }
  if (stages > 1) {
    float idle = pipelineStepSeconds > 0 ? static_cast<float>(1.0 - pipelineBusyMeasured / pipelineStepSeconds) : 0,
          sum = 0;
    zrt_host_all_reduce(ZRT_AXIS_WORLD, &idle, &sum, 1, 0);
    if (rank == 0)
      std::printf("zcc: pipeline of %lld stages%s, %s over %lld micro-batches: bubble %.4f measured (mean over "
                  "ranks of the pipeline's span outside forward, step and weight calls), %.4f predicted\n",
                  static_cast<long long>(stages),
                  chunks > 1 ? (" (" + std::to_string(pipeRanks) + " ranks x " + std::to_string(chunks) + " chunks)").c_str()
                             : "",
                  model.schedule.c_str(), static_cast<long long>(K),
                  sum / static_cast<float>(model.worldSize), model.predictedBubble);
  }
  if (!flags.exportWeights.empty())
    writeWeights(model, flags.exportWeights);
  log.close();
  lease.reset();
  zrt_finalize();
  return 0;
}
