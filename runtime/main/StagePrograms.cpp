#include "main/StagePrograms.h"

#include <algorithm>

#include "core/Error.h"
#include "zrt/zrt.h"

namespace zrt::train {
namespace {

constexpr int64_t kProgramAlign = 4096; // each program's arena starts on a page

/// The stage chunk `chunk` of pipeline rank `pipeRank` runs (without --pp: the one program).
int64_t stageOfChunk(const std::vector<ModelInfo> &stages, int64_t pipeRank, int64_t chunk) {
  return stages.size() > 1 ? stages[0].stageOf(pipeRank, chunk) : 0;
}

/// Where chunk `chunk` of pipeline rank `pipeRank` starts in the rank's arena.
int64_t programBase(const std::vector<ModelInfo> &stages, int64_t pipeRank, int64_t chunk) {
  int64_t base = 0;
  for (int64_t c = 0; c < chunk; ++c)
    base += (stages[stageOfChunk(stages, pipeRank, c)].arenaBytes + kProgramAlign - 1) / kProgramAlign * kProgramAlign;
  return base;
}

} // namespace

bool StageProgram::fromData(int64_t i) const {
  const std::string &role = model.inputs[i].role;
  return role != "activation" && role != "activation_grad" && role != "stash";
}

int64_t rankArenaBytes(const std::vector<ModelInfo> &stages, int64_t chunks) {
  const int64_t ranks = static_cast<int64_t>(stages.size()) / chunks;
  int64_t bytes = 0;
  for (int64_t r = 0; r < ranks; ++r)
    bytes = std::max(bytes, programBase(stages, r, chunks - 1) + stages[stageOfChunk(stages, r, chunks - 1)].arenaBytes);
  return bytes;
}

std::vector<StageProgram> rankPrograms(const std::vector<ModelInfo> &stages, int64_t chunks, int64_t pipeRank,
                                       char *arena, const ZccStage *linked, float (*step)(void *, void *const *),
                                       float (*eval)(void *, void *const *)) {
  const int64_t last = static_cast<int64_t>(stages.size()) - 1;
  std::vector<StageProgram> programs(chunks);
  for (int64_t c = 0; c < chunks; ++c) {
    StageProgram &p = programs[c];
    p.stage = stageOfChunk(stages, pipeRank, c);
    p.model = stages[p.stage];
    // The ranks of the neighbouring stages: where the input comes from and its gradient goes.
    p.prevRank = p.stage > 0 ? stages[0].pipelineRankOf(p.stage - 1) : -1;
    p.nextRank = p.stage < last ? stages[0].pipelineRankOf(p.stage + 1) : -1;
    placeInArena(p.model, programBase(stages, pipeRank, c));
    p.arena = arena + p.model.arenaBase;
    p.step = linked ? linked[p.stage].step : step;
    p.forward = linked ? linked[p.stage].forward : nullptr;
    p.eval = linked ? linked[p.stage].eval : eval;
    p.weight = linked ? linked[p.stage].weight : nullptr;
  }
  return programs;
}

std::vector<void *> StageProgram::buffersOf(int64_t m) const {
  std::vector<void *> in;
  for (const std::vector<void *> &buffers : inputBuffers)
    in.push_back(buffers[m % static_cast<int64_t>(buffers.size())]);
  return in;
}

void allocateInputs(std::vector<StageProgram> &programs) {
  int64_t first = 0;
  for (StageProgram &p : programs) {
    const int64_t n = static_cast<int64_t>(p.model.inputs.size());
    p.inputBuffers.assign(n, {});
    p.firstBuffer.assign(n, 0);
    for (int64_t i = 0; i < n; ++i) {
      const InputInfo &in = p.model.inputs[i];
      p.storage.emplace_back(p.fromData(i) ? in.bytes : 0);
      p.hostRows.push_back(p.storage.back().data());
      if (in.role == "activation")
        p.activationInput = i;
      if (in.role == "activation_grad")
        p.activationGradInput = i;
      p.firstBuffer[i] = first;
      for (int64_t j = 0; j < std::max<int64_t>(in.slots, 1); ++j)
        p.inputBuffers[i].push_back(zrt_input_buffer(first++, in.bytes));
    }
  }
}

ReceivesAhead::ReceivesAhead(std::vector<StageProgram> &held, const std::vector<zcc::pipeline::Action> &schedule)
    : held_(held), schedule_(schedule), freedAfter_(schedule.size(), -1), handle_(schedule.size(), -1) {
  for (size_t j = 0; j < schedule.size(); ++j)
    if (const int64_t i = inputOf(j); i >= 0) {
      const StageProgram &c = held_[schedule[j].chunk];
      const zcc::pipeline::Hold hold =
          zcc::pipeline::parseHold(c.model.inputs[i].hold).value_or(zcc::pipeline::Hold::ForwardToWeight);
      freedAfter_[j] =
          zcc::pipeline::bufferFreedAfter(schedule, j, hold, static_cast<int64_t>(c.inputBuffers[i].size()));
    }
}

int64_t ReceivesAhead::inputOf(size_t j) const {
  const zcc::pipeline::Action &a = schedule_[j];
  const StageProgram &c = held_[a.chunk];
  if (a.work == zcc::pipeline::Work::Forward)
    return c.activationInput;
  if (a.work == zcc::pipeline::Work::Backward)
    return c.activationGradInput;
  return -1;
}

ReceivesAhead::Receive ReceivesAhead::receiveOf(size_t j) const {
  const zcc::pipeline::Action &a = schedule_[j];
  StageProgram &c = held_[a.chunk];
  const int64_t i = inputOf(j);
  if (i < 0)
    return {};
  void *buffer = c.inputBuffers[i][a.microBatch % static_cast<int64_t>(c.inputBuffers[i].size())];
  if (a.work == zcc::pipeline::Work::Forward)
    return {buffer, c.model.inputs[i].bytes, static_cast<int32_t>(c.prevRank), ZRT_PIPE_ACTIVATION};
  return {buffer, c.model.inputs[i].bytes, static_cast<int32_t>(c.nextRank), ZRT_PIPE_GRADIENT};
}

void ReceivesAhead::startBefore(size_t j) {
  for (; next_ < schedule_.size(); ++next_) {
    const Receive r = receiveOf(next_);
    if (r.peer < 0)
      continue;
    if (freedAfter_[next_] >= static_cast<int64_t>(j)) // its slot's previous micro-batch not issued yet
      break;
    handle_[next_] = zrt_pipe_recv_start(r.buf, r.bytes, r.peer, r.kind);
    early_ += next_ > j ? 1 : 0;
  }
}

int64_t ReceivesAhead::count() const {
  int64_t n = 0;
  for (size_t j = 0; j < schedule_.size(); ++j)
    n += receiveOf(j).peer >= 0 ? 1 : 0;
  return n;
}

void ReceivesAhead::wait(size_t j) {
  if (receiveOf(j).peer < 0)
    return;
  if (handle_[j] < 0)
    fatal("train", "pipeline work %zu's receive was not started before it", j);
  zrt_pipe_recv_wait(handle_[j]);
}

void sumTiedGradients(const std::vector<StageProgram> &held, int64_t stages) {
  auto dtypeOf = [](const ParamInfo &p) { return p.dtype == "bf16" ? ZRT_DTYPE_BF16 : ZRT_DTYPE_F32; };
  const bool bothEnds = held.front().stage == 0 && held.back().stage == stages - 1 && held.size() > 1;
  if (!bothEnds) { // interleaved: the first rank's first chunk, the last rank's last
    for (const StageProgram &c : held)
      for (const ParamInfo &p : c.model.params)
        if (p.pipelineTied) {
          void *grad = zrt_arena_ptr(p.gradOffset, p.gradStorageBytes);
          zrt_all_reduce_on(ZRT_AXIS_PIPELINE_ENDS, dtypeOf(p), grad, grad, p.gradStorageBytes / p.elementBytes(), 0);
        }
    return;
  }
  // Both ends here: the first stage's gradient += the last's, then the last's = the sum (a + b,
  // as the two-rank reduction adds them).
  for (const ParamInfo &first : held.front().model.params) {
    if (!first.pipelineTied)
      continue;
    const ParamInfo *last = nullptr;
    for (const ParamInfo &p : held.back().model.params)
      if (p.pipelineTied && p.name == first.name)
        last = &p;
    if (!last || last->gradStorageBytes != first.gradStorageBytes || last->dtype != first.dtype)
      fatal("zcc_model_json", "tied parameter '%s' of the first stage is not the last stage's alike",
            first.name.c_str());
    const int64_t n = first.gradStorageBytes / first.elementBytes();
    void *a = zrt_arena_ptr(first.gradOffset, first.gradStorageBytes);
    void *b = zrt_arena_ptr(last->gradOffset, last->gradStorageBytes);
    zrt_add(dtypeOf(first), a, b, a, n);
    zrt_copy(dtypeOf(first), a, b, n);
  }
}

const char *workName(char kind, int64_t chunk, bool chunked) {
  static std::vector<std::string> names;
  const std::string name = chunked ? std::string(1, kind) + "." + std::to_string(chunk) : std::string(1, kind);
  for (const std::string &n : names)
    if (n == name)
      return n.c_str();
  names.reserve(64); // pointers handed out stay valid: no reallocation below 64 names
  if (names.size() == names.capacity())
    fatal("train", "too many pipeline chunks to name in the trace");
  names.push_back(name);
  return names.back().c_str();
}

} // namespace zrt::train
