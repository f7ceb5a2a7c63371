#include "main/Checkpoint.h"
#include "main/CheckpointLease.h"
#include "main/TierIo.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "core/Error.h"
#include "zrt/zrt.h"

namespace zrt::train {
namespace {

/// The byte ranges a rank saves: every parameter's stored bytes, then every state's.
struct Region {
  std::string what; // "param" | the state's role
  std::string name;
  int32_t tier; // zrt_tier: where the bytes are (offloaded optimizer state: host or NVMe)
  int64_t offset, bytes;
};

std::vector<Region> savedRegions(const ModelInfo &m) {
  std::vector<Region> regions;
  for (const ParamInfo &p : m.params)
    regions.push_back({"param", p.name, p.tier, p.offset, p.paramStorageBytes});
  for (const StateInfo &s : m.states)
    if (s.role != "secondary") // hpZ's copy: the next forward pass rebuilds it
      regions.push_back({s.role, s.name, s.tier, s.offset, s.bytes});
  return regions;
}

/// Saves and loads stream through a buffer of this size: a rank's state is never copied
/// whole into memory (an NVMe-offloaded optimizer state is larger than memory by design).
constexpr int64_t kStreamBytes = 8 << 20;

/// CRC-32 (the polynomial of zlib and gzip), so zcc-ckpt verifies a file with Python's
/// zlib.crc32 at memory speed. Slicing by 8: eight table lookups per 8 bytes.
uint32_t crc32(const char *data, size_t n, uint32_t previous = 0) {
  static const auto tables = [] {
    std::array<std::array<uint32_t, 256>, 8> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s)
        t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    return t;
  }();
  const auto *p = reinterpret_cast<const unsigned char *>(data);
  uint32_t c = previous ^ 0xFFFFFFFFu; // continues the CRC of the bytes before
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo = c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    c = tables[7][lo & 0xFF] ^ tables[6][(lo >> 8) & 0xFF] ^ tables[5][(lo >> 16) & 0xFF] ^ tables[4][lo >> 24] ^
        tables[3][p[4]] ^ tables[2][p[5]] ^ tables[1][p[6]] ^ tables[0][p[7]];
  }
  for (; n; --n, ++p)
    c = tables[0][(c ^ *p) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

/// Checkpoints written before CRC-32 carry FNV-1a-64; they still resume.
uint64_t fnv1a(const char *data, size_t n, uint64_t h = 1469598103934665603ull) {
  for (size_t i = 0; i < n; ++i)
    h = (h ^ static_cast<unsigned char>(data[i])) * 1099511628211ull;
  return h;
}

std::string hex(uint64_t v, int digits) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}

std::string stepDir(const std::string &dir, int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%08lld", static_cast<long long>(step));
  return dir + "/" + name;
}

void fsyncPath(const std::string &path, bool directory) {
  int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0)
    fatal("checkpoint", "cannot fsync %s: %s", path.c_str(), std::strerror(errno));
  ::close(fd);
}

/// Writes `bytes` to `path` atomically: a temporary file, fsync, rename.
void writeAtomically(const std::string &path, const std::string &bytes) {
  std::string tmp = path + ".tmp." + processTag(); // never another job's temporary file
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fflush(f) != 0 ||
      ::fsync(::fileno(f)) != 0 || std::fclose(f) != 0)
    fatal("checkpoint", "cannot write %s: %s", tmp.c_str(), std::strerror(errno));
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    fatal("checkpoint", "cannot rename %s: %s", tmp.c_str(), std::strerror(errno));
}

/// Test hook (ZCC_FAULT=kill-before-manifest:STEP): dies between the rank files and the
/// manifest, as a crash in the middle of a save would.
void maybeInjectFault(const char *point, int64_t step) {
  const char *fault = std::getenv("ZCC_FAULT");
  if (!fault)
    return;
  std::string expected = std::string(point) + ":" + std::to_string(step);
  if (expected == fault)
    std::raise(SIGKILL);
}

/// Steps of the complete checkpoints of `dir`, oldest first.
std::vector<int64_t> completeSteps(const std::string &dir) {
  std::vector<int64_t> steps;
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return steps;
  while (dirent *e = ::readdir(d)) {
    long long step;
    char tail;
    if (std::sscanf(e->d_name, "step-%lld%c", &step, &tail) != 1)
      continue;
    struct stat st;
    if (::stat((stepDir(dir, step) + "/manifest.json").c_str(), &st) == 0)
      steps.push_back(step);
  }
  ::closedir(d);
  std::sort(steps.begin(), steps.end());
  return steps;
}

void removeTree(const std::string &path) {
  if (DIR *d = ::opendir(path.c_str())) {
    while (dirent *e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
        ::unlink((path + "/" + e->d_name).c_str());
    ::closedir(d);
  }
  ::rmdir(path.c_str());
}

/// A stage's layout in its rank's file, from byte `base` (an interleaved rank's file holds its
/// chunks' one after the other: each layout records where its stage's bytes start).
nlohmann::json layoutJson(const ModelInfo &m, int64_t base = 0) {
  nlohmann::json params = nlohmann::json::array();
  int64_t at = base;
  for (const ParamInfo &p : m.params) {
    params.push_back({{"name", p.name},
                      {"shape", p.shape},
                      {"dtype", p.dtype},
                      {"shards", p.shards},
                      {"shard_elements", p.shardElements},
                      {"sharded_param", p.shardedParam},
                      {"whole_shape", p.wholeShape},
                      {"tp_split", p.tensorParallel() ? nlohmann::json{{"axis", p.tpAxis},
                                                                        {"ranks", p.tpRanks},
                                                                        {"segments", p.tpSegments}}
                                                       : nlohmann::json()},
                      {"file_offset", at},
                      {"bytes", p.paramStorageBytes}});
    if (p.expertParallel())
      params.back()["ep_split"] = {{"ranks", p.epRanks}};
    at += p.paramStorageBytes;
  }
  nlohmann::json states = nlohmann::json::array();
  for (const StateInfo &s : m.states) {
    if (s.role == "secondary")
      continue;
    states.push_back({{"name", s.name}, {"param", s.param}, {"role", s.role}, {"file_offset", at},
                      {"bytes", s.bytes}});
    at += s.bytes;
  }
  // Rank r's file is mesh position (tensor r % tp, data r / tp % dp, pipeline r / (tp dp)). With
  // context parallelism, cp of the dp data ranks hold each sequence (their files are data ranks':
  // ZeRO shards over both); recorded only then, so older checkpoints keep their layout.
  nlohmann::json mesh = {{"tp", m.tp}, {"pp", m.pp}, {"dp", m.dataParallel()}};
  if (m.cp > 1)
    mesh["cp"] = m.cp;
  if (m.ep > 1) // expert parallelism: an expert weight's file part is expert rank r's experts
    mesh["ep"] = m.ep;
  nlohmann::json layout = {{"params", params}, {"states", states}, {"rank_file_bytes", at - base}, {"mesh", mesh}};
  if (m.chunks > 1) { // interleaved: virtual stage s is chunk s / pp of pipeline rank s % pp
    layout["mesh"]["chunks"] = m.chunks;
    layout["file_base"] = base;
    if (m.placement() == zcc::pipeline::Placement::Vee) // ZB-V: rank r holds stages r and 2 pp - 1 - r
      layout["mesh"]["placement"] = "v";
  }
  return layout;
}

/// The bytes one rank of a stage saves (its layout's rank_file_bytes).
int64_t savedBytes(const ModelInfo &m) {
  int64_t bytes = 0;
  for (const Region &r : savedRegions(m))
    bytes += r.bytes;
  return bytes;
}

/// Where stage `stage`'s bytes start in its rank's file: after the rank's earlier chunks'.
int64_t fileBase(const std::vector<ModelInfo> &stages, int64_t stage) {
  const ModelInfo &m = stages[stage];
  int64_t base = 0;
  for (int64_t c = 0; c < m.chunkOf(stage); ++c)
    base += savedBytes(stages[m.stageOf(m.pipelineRankOf(stage), c)]);
  return base;
}

nlohmann::json scheduleJson(const RunIdentity &run) {
  return {{"peak_lr", run.peakLr}, {"schedule", run.schedule}, {"warmup", run.warmup}, {"steps", run.steps}};
}

/// Whether two schedules give every step the same learning rate: the step count shapes
/// only a decaying schedule.
bool sameSchedule(const nlohmann::json &a, const nlohmann::json &b) {
  if (a.at("peak_lr") != b.at("peak_lr") || a.at("schedule") != b.at("schedule") ||
      a.at("warmup") != b.at("warmup"))
    return false;
  return a.at("schedule") == "constant" || a.at("steps") == b.at("steps");
}

std::string scheduleFlags(const nlohmann::json &s) {
  char text[160];
  std::snprintf(text, sizeof text, "--lr %.9g --lr-schedule %s --warmup %lld --steps %lld",
                s.at("peak_lr").get<double>(), s.at("schedule").get<std::string>().c_str(),
                static_cast<long long>(s.at("warmup").get<int64_t>()),
                static_cast<long long>(s.at("steps").get<int64_t>()));
  return text;
}

} // namespace

void makeDirs(const std::string &path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') {
      std::string prefix = path.substr(0, i);
      if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
        fatal("checkpoint", "cannot create %s: %s", prefix.c_str(), std::strerror(errno));
    }
}

void saveCheckpoint(const std::vector<ModelInfo> &stages, const std::vector<const ModelInfo *> &held,
                    const std::string &dir, int64_t step, const RunIdentity &run, int keep) {
  const ModelInfo &m = *held.front();
  const int rank = zrt_rank(), ranks = zrt_world_size();
  const std::string at = stepDir(dir, step);
  makeDirs(at);
  // This rank's regions, streamed (whatever tier holds them) into a temporary file, then
  // fsync and rename: the file appears whole or not at all.
  const std::string file = at + "/rank-" + std::to_string(rank) + ".bin", tmp = file + ".tmp." + processTag();
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    fatal("checkpoint", "cannot write %s: %s", tmp.c_str(), std::strerror(errno));
  std::vector<char> buffer(kStreamBytes);
  uint32_t crc = 0;
  uint64_t total = 0;
  for (const ModelInfo *chunk : held) {
    for (const Region &r : savedRegions(*chunk))
      for (int64_t done = 0; done < r.bytes;) {
        const int64_t n = std::min(kStreamBytes, r.bytes - done);
        readModelState(r.tier, r.offset + done, buffer.data(), n);
        if (std::fwrite(buffer.data(), 1, static_cast<size_t>(n), f) != static_cast<size_t>(n))
          fatal("checkpoint", "cannot write %s: %s", tmp.c_str(), std::strerror(errno));
        crc = crc32(buffer.data(), static_cast<size_t>(n), crc);
        total += static_cast<uint64_t>(n);
        done += n;
      }
  }
  if (std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0 || std::fclose(f) != 0)
    fatal("checkpoint", "cannot write %s: %s", tmp.c_str(), std::strerror(errno));
  if (std::rename(tmp.c_str(), file.c_str()) != 0)
    fatal("checkpoint", "cannot rename %s: %s", tmp.c_str(), std::strerror(errno));

  // Every rank's file is on disk before rank 0 writes the manifest that makes the
  // checkpoint count: gather the sizes and checksums (a collective, so also a barrier).
  uint64_t mine[2] = {total, crc};
  std::vector<uint64_t> all(2 * ranks);
  zrt_host_all_gather(ZRT_AXIS_WORLD, mine, all.data(), 4); // 16 bytes as four f32 words
  maybeInjectFault("kill-before-manifest", step);
  if (rank == 0) {
    nlohmann::json files = nlohmann::json::array();
    for (int r = 0; r < ranks; ++r)
      files.push_back({{"file", "rank-" + std::to_string(r) + ".bin"}, {"bytes", all[2 * r]},
                       {"crc32", hex(all[2 * r + 1], 8)}});
    nlohmann::json manifest = {{"format", 1},
                               {"model", m.model},
                               {"step", step},
                               {"seed", run.seed},
                               {"data", run.data},
                               {"lr_schedule", scheduleJson(run)},
                               {"world_size", ranks},
                               {"zero_stage", m.zeroStage()},
                               {"optimizer", m.optimizer},
                               {"layout", layoutJson(stages[0])},
                               {"ranks", files}};
    if (std::isfinite(run.bestValLoss))
      manifest["best_val_loss"] = run.bestValLoss;
    if (!run.matmulPlan.empty())
      manifest["matmul_plan"] = run.matmulPlan;
    if (stages.size() > 1) { // rank r's file is of pipeline stage r / (tp dp) (interleaved: its chunks in turn)
      nlohmann::json layouts = nlohmann::json::array();
      for (size_t s = 0; s < stages.size(); ++s)
        layouts.push_back(layoutJson(stages[s], fileBase(stages, static_cast<int64_t>(s))));
      manifest["stage_layouts"] = layouts;
    }
    writeAtomically(at + "/manifest.json", manifest.dump(1));
    fsyncPath(at, true);
    fsyncPath(dir, true);
    std::vector<int64_t> steps = completeSteps(dir);
    for (size_t i = 0; i + keep < steps.size(); ++i)
      removeTree(stepDir(dir, steps[i]));
  }
  // No rank starts the next step's save before this one is complete.
  zrt_host_all_gather(ZRT_AXIS_WORLD, mine, all.data(), 4);
}

int64_t resumeCheckpoint(const std::vector<ModelInfo> &stages, const std::vector<const ModelInfo *> &held,
                         const std::string &dir, RunIdentity &run) {
  const ModelInfo &m = *held.front();
  const int rank = zrt_rank(), ranks = zrt_world_size();
  std::vector<int64_t> steps = completeSteps(dir);
  if (steps.empty()) {
    if (rank == 0)
      std::printf("zcc: no complete checkpoint in %s: starting at step 0\n", dir.c_str());
    return 0;
  }
  const std::string at = stepDir(dir, steps.back());
  nlohmann::json manifest;
  try {
    std::ifstream in(at + "/manifest.json");
    manifest = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception &e) {
    fatal("resume", "%s/manifest.json is not valid JSON: %s", at.c_str(), e.what());
  }
  auto refuse = [&](const std::string &why) {
    fatal("resume", "checkpoint %s cannot be resumed here: %s", at.c_str(), why.c_str());
  };
  try {
    if (manifest.at("format").get<int>() != 1)
      refuse("unknown manifest format");
    if (manifest.at("model").get<std::string>() != m.model)
      refuse("it is of model '" + manifest.at("model").get<std::string>() + "', this program trains '" +
             m.model + "'");
    // This rank's stages' layouts (a pipeline's checkpoint records each stage's).
    const size_t stageCount = manifest.contains("stage_layouts") ? manifest.at("stage_layouts").size() : 1;
    bool sameLayouts = stageCount == stages.size();
    for (const ModelInfo *chunk : held) {
      const nlohmann::json &layout =
          stageCount > 1 ? manifest.at("stage_layouts").at(std::min<size_t>(chunk->stage, stageCount - 1))
                         : manifest.at("layout");
      sameLayouts = sameLayouts && layout == layoutJson(*chunk, stages.size() > 1 ? fileBase(stages, chunk->stage) : 0);
    }
    if (manifest.at("world_size").get<int>() != ranks || manifest.at("zero_stage").get<int>() != m.zeroStage() ||
        !sameLayouts)
      refuse("it was saved by " + std::to_string(manifest.at("world_size").get<int>()) + " ranks at ZeRO stage " +
             std::to_string(manifest.at("zero_stage").get<int>()) + " (this program: " + std::to_string(ranks) +
             " ranks, stage " + std::to_string(m.zeroStage()) +
             ", or another layout); convert it with: zcc-ckpt reshard " + at + " --target <this train.bin> -o DIR");
    if (manifest.at("seed").get<uint64_t>() != run.seed)
      refuse("it was trained with --seed " + std::to_string(manifest.at("seed").get<uint64_t>()));
    if (manifest.at("data").get<std::string>() != run.data)
      refuse("it was trained on " + manifest.at("data").get<std::string>() + ", this run reads " + run.data);
    // Checkpoints written before the schedule was recorded carry none: nothing to compare.
    if (manifest.contains("lr_schedule") && !run.overrideSchedule &&
        !sameSchedule(manifest.at("lr_schedule"), scheduleJson(run)))
      refuse("it was trained with " + scheduleFlags(manifest.at("lr_schedule")) + ", this run would follow " +
             scheduleFlags(scheduleJson(run)) + "; pass the same flags, or --override-lr-schedule to go on with "
             "this run's schedule");
    if (manifest.contains("best_val_loss"))
      run.bestValLoss = manifest.at("best_val_loss").get<double>();
    if (manifest.contains("matmul_plan"))
      run.matmulPlan = manifest.at("matmul_plan").get<std::string>();
  } catch (const nlohmann::json::exception &e) {
    refuse(std::string("malformed manifest: ") + e.what());
  }
  const nlohmann::json &file = manifest["ranks"][rank];
  const std::string path = at + "/" + file.at("file").get<std::string>();
  // Two streamed passes: the checksum first, so a corrupt file changes nothing; then the
  // regions, into whatever tier holds each.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    refuse("cannot read " + path + ": " + std::strerror(errno));
  if (static_cast<int64_t>(st.st_size) != file.at("bytes").get<int64_t>())
    refuse(path + " has " + std::to_string(st.st_size) + " bytes, the manifest says " +
           std::to_string(file.at("bytes").get<int64_t>()) + " (truncated?)");
  std::vector<char> buffer(kStreamBytes);
  auto readChunk = [&](std::ifstream &in, int64_t n) {
    if (!in.read(buffer.data(), n))
      refuse("cannot read " + path);
  };
  {
    std::ifstream in(path, std::ios::binary);
    uint32_t crc = 0;
    uint64_t fnv = 1469598103934665603ull;
    for (int64_t done = 0, size = st.st_size; done < size;) {
      const int64_t n = std::min(kStreamBytes, size - done);
      readChunk(in, n);
      if (file.contains("crc32"))
        crc = crc32(buffer.data(), static_cast<size_t>(n), crc);
      else
        fnv = fnv1a(buffer.data(), static_cast<size_t>(n), fnv);
      done += n;
    }
    const bool matches = file.contains("crc32") ? hex(crc, 8) == file.at("crc32").get<std::string>()
                                                : hex(fnv, 16) == file.at("fnv1a64").get<std::string>();
    if (!matches)
      refuse(path + ": checksum mismatch (the file is corrupt)");
  }
  std::ifstream in(path, std::ios::binary);
  for (const ModelInfo *chunk : held) {
    for (const Region &r : savedRegions(*chunk))
      for (int64_t done = 0; done < r.bytes;) {
        const int64_t n = std::min(kStreamBytes, r.bytes - done);
        readChunk(in, n);
        writeModelState(r.tier, r.offset + done, buffer.data(), n);
        done += n;
      }
  }
  // Every rank verified its file before any of them trains on the checkpoint.
  float ok = 1, all = 0;
  zrt_host_all_reduce(ZRT_AXIS_WORLD, &ok, &all, 1, 0);
  if (rank == 0)
    std::printf("zcc: resumed from %s (step %lld)\n", at.c_str(), static_cast<long long>(steps.back()));
  return steps.back();
}

} // namespace zrt::train
