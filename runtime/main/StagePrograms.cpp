#include "main/StagePrograms.h"

#include <algorithm>

#include "core/Error.h"
#include "zrt/zrt.h"

namespace zrt::train {
namespace {

constexpr int64_t kProgramAlign = 4096; // each program's arena starts on a page

/// Where chunk `chunk` of pipeline rank `pipeRank` starts in the rank's arena.
int64_t programBase(const std::vector<ModelInfo> &stages, int64_t chunks, int64_t pipeRank, int64_t chunk) {
  const int64_t ranks = static_cast<int64_t>(stages.size()) / chunks;
  int64_t base = 0;
  for (int64_t c = 0; c < chunk; ++c)
    base += (stages[c * ranks + pipeRank].arenaBytes + kProgramAlign - 1) / kProgramAlign * kProgramAlign;
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
    bytes = std::max(bytes, programBase(stages, chunks, r, chunks - 1) + stages[(chunks - 1) * ranks + r].arenaBytes);
  return bytes;
}

std::vector<StageProgram> rankPrograms(const std::vector<ModelInfo> &stages, int64_t chunks, int64_t pipeRank,
                                       char *arena, const ZccStage *linked, float (*step)(void *, void *const *),
                                       float (*eval)(void *, void *const *)) {
  const int64_t ranks = static_cast<int64_t>(stages.size()) / chunks;
  std::vector<StageProgram> programs(chunks);
  for (int64_t c = 0; c < chunks; ++c) {
    StageProgram &p = programs[c];
    p.stage = c * ranks + pipeRank;
    p.model = stages[p.stage];
    placeInArena(p.model, programBase(stages, chunks, pipeRank, c));
    p.arena = arena + p.model.arenaBase;
    p.step = linked ? linked[p.stage].step : step;
    p.forward = linked ? linked[p.stage].forward : nullptr;
    p.eval = linked ? linked[p.stage].eval : eval;
    p.weight = linked ? linked[p.stage].weight : nullptr;
  }
  return programs;
}

void allocateInputs(std::vector<StageProgram> &programs) {
  int64_t first = 0;
  for (StageProgram &p : programs) {
    const int64_t n = static_cast<int64_t>(p.model.inputs.size()), slots = p.model.slots;
    p.slotBuffers.assign(slots, {});
    p.firstInput = first;
    for (int64_t i = 0; i < n; ++i) {
      const InputInfo &in = p.model.inputs[i];
      p.storage.emplace_back(p.fromData(i) ? in.bytes : 0);
      p.hostRows.push_back(p.storage.back().data());
      if (in.role == "activation")
        p.activationInput = i;
      if (in.role == "activation_grad")
        p.activationGradInput = i;
      for (int64_t j = 0; j < slots; ++j)
        p.slotBuffers[j].push_back(zrt_input_buffer(first + j * n + i, in.bytes));
    }
    first += slots * n;
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
