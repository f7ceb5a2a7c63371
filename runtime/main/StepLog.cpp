#include "main/StepLog.h"

#include <chrono>
#include <cmath>
#include <iterator>
#include <set>
#include <sys/resource.h>
#include <utility>

#include "core/Error.h"
#include "main/Watermark.h"

namespace zrt::train {
namespace {

/// A JSON number, or null for a NaN or an Inf (JSON has neither).
std::string jsonNumber(double v) {
  if (!std::isfinite(v))
    return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

/// The whole model's parameter tensors and values (whole tensors: a tensor-parallel rank keeps
/// part of some), over every stage program (a tied embedding and head, held by two, counted once).
std::pair<int64_t, int64_t> parameterCount(const std::vector<ModelInfo> &stages) {
  std::set<std::string> seen;
  int64_t tensors = 0, values = 0;
  for (const ModelInfo &m : stages)
    for (const ParamInfo &p : m.params)
      if (seen.insert(p.name).second) {
        ++tensors;
        values += p.wholeElements();
      }
  return {tensors, values};
}

} // namespace

int64_t bytesSent(const zrt_counters &c) {
  int64_t total = 0;
  for (int64_t b : c.bytes_sent)
    total += b;
  return total;
}

/// The process's peak resident set (what a benchmark compares across systems): VmHWM,
/// which exec resets (getrusage's ru_maxrss keeps the peak of the process that forked us).
int64_t peakRssBytes() {
  if (FILE *status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    long long kb = -1;
    while (std::fgets(line, sizeof line, status))
      if (std::sscanf(line, "VmHWM: %lld kB", &kb) == 1)
        break;
    std::fclose(status);
    if (kb >= 0)
      return kb * 1024;
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

StepLog::StepLog(bool enabled, const std::string &jsonPath) {
  if (enabled && !jsonPath.empty() && !(json_ = std::fopen(jsonPath.c_str(), "w")))
    fatal("train", "cannot open --log-json %s", jsonPath.c_str());
}

void StepLog::close() {
  if (json_)
    std::fclose(json_);
  json_ = nullptr;
}

void StepLog::write(const ModelInfo &m, const StepRecord &r, const zrt_counters &before, const zrt_counters &now) {
  const double perSecond = double(r.rows * r.tokensPerRow) / r.seconds;
  const char *unit = r.tokensPerRow > 1 ? "tokens_per_s" : "samples_per_s";
  std::printf("step %5lld | loss %.6f | lr %.3e | norm %.4f | %8.2f ms | %10.0f %s | peak %lld B | comm %lld B\n",
              static_cast<long long>(r.step), r.loss, r.lr, r.gradNorm, r.seconds * 1e3, perSecond, unit,
              static_cast<long long>(now.arena_bytes),
              static_cast<long long>(bytesSent(now) - bytesSent(before)));
  if (std::isfinite(r.valLoss))
    std::printf("step %5lld | val_loss %.6f | best %.6f\n", static_cast<long long>(r.step), r.valLoss,
                r.bestValLoss);
  if (r.moe.routings)
    std::printf("step %5lld | experts: tokens per expert min %lld mean %.1f max %lld over %lld routings | dropped %lld\n",
                static_cast<long long>(r.step), static_cast<long long>(r.moe.fewest), r.moe.mean,
                static_cast<long long>(r.moe.most), static_cast<long long>(r.moe.routings),
                static_cast<long long>(r.moe.dropped));
  std::string moe;
  if (r.moe.routings)
    moe = "\"moe_tokens_min\": " + std::to_string(r.moe.fewest) + ", \"moe_tokens_mean\": " + jsonNumber(r.moe.mean) +
          ", \"moe_tokens_max\": " + std::to_string(r.moe.most) + ", \"moe_routings\": " +
          std::to_string(r.moe.routings) + ", \"moe_dropped\": " + std::to_string(r.moe.dropped) + ", ";
  // The bytes each kind of collective sent this step (zrt_counters' kinds), beside their sum.
  static const char *const kKinds[] = {"all_gather", "reduce_scatter", "all_reduce", "broadcast",
                                       "all_to_all", "pipeline",       "ring"};
  static_assert(std::size(kKinds) == std::size(zrt_counters{}.bytes_sent));
  std::string byKind = "\"comm_bytes_by_kind\": {";
  for (size_t k = 0; k < std::size(kKinds); ++k)
    byKind += std::string(k ? ", " : "") + "\"" + kKinds[k] + "\": " +
              std::to_string(now.bytes_sent[k] - before.bytes_sent[k]);
  byKind += "}, ";
  if (json_)
    std::fprintf(json_,
                 "{\"step\": %lld, \"loss\": %.9g, \"lr\": %.9g, \"grad_norm\": %s, %s%s\"step_ms\": %.4f, "
                 "\"update_ms\": %.4f, "
                 "\"%s\": %.2f, "
                 "\"peak_bytes\": %lld, \"comm_bytes\": %lld, %s\"comm_wait_s\": %.6f, "
                 "\"param_bytes\": %lld, \"grad_bytes\": %lld, \"optimizer_bytes\": %lld, "
                 "\"planned_arena_bytes\": %lld, \"measured_arena_bytes\": %lld, \"peak_rss_bytes\": %lld, "
                 "\"swap_read_bytes\": %lld, \"swap_write_bytes\": %lld, \"swap_wait_s\": %.6f, "
                 "\"unix_time\": %.6f}\n",
                 static_cast<long long>(r.step), r.loss, r.lr, jsonNumber(r.gradNorm).c_str(),
                 std::isfinite(r.valLoss) ? ("\"val_loss\": " + jsonNumber(r.valLoss) + ", \"best_val_loss\": " +
                                           jsonNumber(r.bestValLoss) + ", ").c_str()
                                        : "",
                 moe.c_str(), r.seconds * 1e3,
                 r.updateSeconds * 1e3, unit, perSecond,
                 static_cast<long long>(now.arena_bytes),
                 static_cast<long long>(bytesSent(now) - bytesSent(before)), byKind.c_str(),
                 now.wait_seconds - before.wait_seconds, static_cast<long long>(m.paramBytes),
                 static_cast<long long>(m.gradBytes), static_cast<long long>(m.optimizerBytes),
                 static_cast<long long>(m.arenaBytes),
                 static_cast<long long>(measuredHighWater(m)), static_cast<long long>(peakRssBytes()),
                 static_cast<long long>(now.swap_read_bytes - before.swap_read_bytes),
                 static_cast<long long>(now.swap_write_bytes - before.swap_write_bytes),
                 now.swap_wait_seconds - before.swap_wait_seconds,
                 std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
}

void printRunBanner(const std::vector<ModelInfo> &stages, const ModelInfo &model, int64_t arenaBytes,
                    const DataSource &data, int batchRanks, int dataRanks, int64_t globalRows, const char *matmulLine) {
  const int64_t K = model.microBatches, rows = model.rowsPerMicroBatch();
  const auto [tensors, values] = parameterCount(stages);
  std::printf("zcc: model %s, %lld parameter tensors (%lld values), %d data-parallel rank(s) x %lld "
              "micro-batch(es) of %lld rows, global batch %lld, data: %s, arena %lld bytes per rank\n",
              model.model.c_str(), static_cast<long long>(tensors), static_cast<long long>(values), batchRanks,
              static_cast<long long>(K), static_cast<long long>(rows), static_cast<long long>(globalRows),
              data.describe().c_str(), static_cast<long long>(arenaBytes));
  if (model.cp > 1)
    std::printf("zcc: mesh tp %lld x cp %lld x pp %lld x dp %d (%lld ranks; tensor fastest, then context, then "
                "data, then pipeline); each context rank holds 1/%lld of every sequence's tokens\n",
                static_cast<long long>(model.tp), static_cast<long long>(model.cp), static_cast<long long>(model.pp),
                batchRanks, static_cast<long long>(model.worldSize), static_cast<long long>(model.cp));
  else if (model.tp > 1 || model.pp > 1)
    std::printf("zcc: mesh tp %lld x pp %lld x dp %d (%lld ranks; tensor fastest, then data, then pipeline)\n",
                static_cast<long long>(model.tp), static_cast<long long>(model.pp), dataRanks,
                static_cast<long long>(model.worldSize));
  char backend[512];
  zrt_describe_backend(backend, sizeof backend);
  std::printf("zcc: backend %s\n", backend);
  std::printf("zcc: matmul paths: %s\n", matmulLine);
  if (model.gradClip > 0)
    std::printf("zcc: gradients clipped to a global norm of %g (zcc --grad-clip)\n", model.gradClip);
  auto where = [](int32_t tier) {
    return tier == ZRT_TIER_NVME ? " (on the NVMe store)" : tier == ZRT_TIER_HOST ? " (in host memory)" : "";
  };
  std::printf("zcc: model state per rank: params %lld B%s, grads %lld B, optimizer %lld B%s\n",
              static_cast<long long>(model.paramBytes), where(model.paramTier),
              static_cast<long long>(model.gradBytes), static_cast<long long>(model.optimizerBytes),
              where(model.stateTier));
}

} // namespace zrt::train
