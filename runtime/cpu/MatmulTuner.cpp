// zrt_plan_matmuls on the CPU: every product of the program on the path measured fastest on this
// machine, as cuBLASLt's autotuning, Triton's @autotune and FFTW's wisdom do it. A rule keyed to
// CPU features is wrong somewhere: oneDNN's bf16 matmul runs at half the f32 GEMM's rate on a
// Sapphire Rapids core without AMX and at 1.5x it on an AMD Zen 5 core, both with AVX512-BF16;
// oneDNN's matmul primitive beats its own GEMM on some f32 shapes and runs at a third of it on
// others.
//
// Where a product's path comes from, first match:
//   forced      ZRT_F32_MATMUL / ZRT_BF16_MATMUL name one path for every product of that dtype
//   checkpoint  the plan a resumed run's checkpoint kept (the first run's rounding, bitwise)
//   rule        ZRT_MATMUL_TUNE=off: cpu/Matmul.h's ruleMatmulPath, nothing measured
//   cached      the cache file has this machine's, this thread count's choice
//   measured    rank 0 times every path that runs the shape and keeps the fastest (median of
//               interleaved runs), and adds it to the cache (ZRT_MATMUL_TUNE=measure: measures
//               again whatever the cache says)
// Rank 0 decides and every rank installs its plan: replicas of a product round alike.
//
// The cache (ZRT_MATMUL_CACHE, default $XDG_CACHE_HOME/zcc/matmul-paths.txt or
// ~/.cache/zcc/matmul-paths.txt) is text, a product a line, keyed by a hash of what makes a
// measurement valid (CPU model and flags, oneDNN's version and ISA, OpenBLAS's build, the
// kernels' ISA level, the runtime's kernels version) and the thread count. It is read, extended
// and replaced (written aside, renamed) under an exclusive lock of FILE.lock, so concurrent
// programs measure a product once and agree on it.
#include <cblas.h>
#include <dnnl.hpp>
#include <fcntl.h>
#include <omp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/Error.h"
#include "cpu/IsaKernels.h"
#include "cpu/Matmul.h"
#include "cpu/MatmulPlan.h"
#include "zrt/zrt.h"

using namespace zrt;
using namespace zrt::cpu;

namespace {

// Bumped when a path's code changes speed (the widened GEMM's tiles, a new oneDNN call, OpenBLAS's
// OpenMP build for its pthread one, whose configuration string is the same): measurements taken
// with the old code no longer say which is faster.
constexpr const char *kKernelsVersion = "zrt-matmul-2";

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

uint64_t fnv1a(const std::string &text, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string cpuInfoField(const char *name) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind(name, 0) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(colon + 1);
    }
  return "";
}

/// What makes a measurement valid elsewhere: the same CPU, libraries and kernels.
std::string machineKey() {
  const dnnl_version_t *v = dnnl_version();
  char onednn[64];
  std::snprintf(onednn, sizeof onednn, "%d.%d.%d", v->major, v->minor, v->patch);
  // A sanitized build's own kernels run several times slower than the libraries': its
  // measurements would mislead an optimized build's runs.
#if defined(__SANITIZE_ADDRESS__)
  constexpr const char *kBuild = ";build=sanitized";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  constexpr const char *kBuild = ";build=sanitized";
#else
  constexpr const char *kBuild = "";
#endif
#else
  constexpr const char *kBuild = "";
#endif
  return "cpu=" + cpuInfoField("model name") + ";flags=" + std::to_string(fnv1a(cpuInfoField("flags"))) +
         ";onednn=" + onednn + "/" + describeDnnlIsa() + ";openblas=" + openblas_get_config() +
         ";kernels=" + isaKernels().isa + "/" + kKernelsVersion + kBuild;
}

std::string hex(uint64_t h) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

std::string cachePath() {
  if (const char *path = std::getenv("ZRT_MATMUL_CACHE"))
    return path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/zcc/matmul-paths.txt";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/zcc/matmul-paths.txt";
  return "";
}

/// mkdir -p of the file's directory.
bool makeParents(const std::string &file) {
  for (size_t slash = file.find('/', 1); slash != std::string::npos; slash = file.find('/', slash + 1)) {
    const std::string dir = file.substr(0, slash);
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  return true;
}

/// The cache file, locked for as long as this lives; `ok` false (and `why`) where it cannot be
/// used: the run measures for itself then.
class CacheFile {
public:
  explicit CacheFile(std::string path) : path_(std::move(path)) {
    if (path_.empty()) {
      why_ = "no ZRT_MATMUL_CACHE, XDG_CACHE_HOME or HOME";
      return;
    }
    const std::string lock = path_ + ".lock";
    if (!makeParents(path_) || (fd_ = open(lock.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) < 0 ||
        flock(fd_, LOCK_EX) != 0) {
      why_ = lock + ": " + std::strerror(errno);
      return;
    }
    std::ifstream in(path_);
    std::string line;
    while (std::getline(in, line))
      lines_.push_back(line);
  }
  ~CacheFile() {
    if (fd_ >= 0)
      close(fd_); // releases the lock
  }
  bool ok() const { return fd_ >= 0; }
  const std::string &why() const { return why_; }
  const std::string &path() const { return path_; }
  std::vector<std::string> &lines() { return lines_; }

  /// Replaces the file with `lines_`: written aside and renamed, so a reader never sees half.
  bool save() {
    const std::string aside = path_ + ".tmp." + std::to_string(getpid());
    {
      std::ofstream out(aside, std::ios::trunc);
      for (const std::string &line : lines_)
        out << line << '\n';
      out.flush();
      if (!out) {
        why_ = aside + ": write failed";
        std::remove(aside.c_str());
        return false;
      }
    }
    if (std::rename(aside.c_str(), path_.c_str()) != 0) {
      why_ = path_ + ": " + std::strerror(errno);
      std::remove(aside.c_str());
      return false;
    }
    return true;
  }

private:
  std::string path_, why_;
  int fd_ = -1;
  std::vector<std::string> lines_;
};

/// A cache line's first fields: machine hash, threads, then the product as plan text.
std::string cachePrefix(const std::string &machine, int threads, const MatmulKey &key) {
  std::string plan = matmulPlanText({{key, MatmulPath::Sgemm}});
  plan.erase(plan.rfind(' ')); // the product's fields without the path
  return machine + " " + std::to_string(threads) + " " + plan + " ";
}

/// Operands for timing one product (values in [-1, 1): no denormals, no infinities).
struct Operands {
  std::vector<char> a, b, c;
  Operands(const MatmulKey &key) {
    const MatmulShape &s = key.shape;
    const size_t size = key.dtype == ZRT_DTYPE_BF16 ? 2 : 4;
    a.resize(s.batch * s.m * s.k * size);
    b.resize((s.bShared ? 1 : s.batch) * s.k * s.n * size);
    c.resize(s.batch * s.m * s.n * size);
    fill(a, key.dtype, 1);
    fill(b, key.dtype, 2);
  }
  static void fill(std::vector<char> &bytes, int32_t dtype, uint64_t seed) {
    const size_t n = bytes.size() / (dtype == ZRT_DTYPE_BF16 ? 2 : 4);
    for (size_t i = 0; i < n; ++i) {
      const float v = static_cast<float>((i * 2654435761ull + seed * 40503ull) % 2048) / 1024.0f - 1.0f;
      if (dtype == ZRT_DTYPE_BF16)
        reinterpret_cast<bf16 *>(bytes.data())[i] = bf16(v);
      else
        reinterpret_cast<float *>(bytes.data())[i] = v;
    }
  }
};

double timeProduct(MatmulPath path, const MatmulKey &key, Operands &o) {
  const double start = seconds();
  if (key.dtype == ZRT_DTYPE_BF16)
    matmulOn(path, reinterpret_cast<const bf16 *>(o.a.data()), reinterpret_cast<const bf16 *>(o.b.data()),
             reinterpret_cast<bf16 *>(o.c.data()), key.shape);
  else
    matmulOn(path, reinterpret_cast<const float *>(o.a.data()), reinterpret_cast<const float *>(o.b.data()),
             reinterpret_cast<float *>(o.c.data()), key.shape);
  return seconds() - start;
}

/// The fastest path of `key` by the median of interleaved runs (one warm-up each, which creates
/// oneDNN's primitive); `report` gets each path's median in microseconds ("sgemm=812.4").
MatmulPath measure(const MatmulKey &key, std::string &report) {
  std::vector<MatmulPath> candidates;
  for (MatmulPath path : kMatmulPaths)
    if (pathRuns(path, key.dtype, key.shape))
      candidates.push_back(path);
  Operands operands(key);
  double slowest = 0;
  for (MatmulPath path : candidates)
    slowest = std::max(slowest, timeProduct(path, key, operands));
  // About 0.2 s a product, 3 to 15 runs of each path.
  const int runs = std::clamp(static_cast<int>(0.2 / (slowest * candidates.size() + 1e-9)), 3, 15);
  std::vector<std::vector<double>> times(candidates.size());
  for (int r = 0; r < runs; ++r)
    for (size_t i = 0; i < candidates.size(); ++i)
      times[i].push_back(timeProduct(candidates[i], key, operands));
  MatmulPath best = candidates.front();
  double bestMedian = 0;
  report.clear();
  for (size_t i = 0; i < candidates.size(); ++i) {
    std::nth_element(times[i].begin(), times[i].begin() + runs / 2, times[i].end());
    const double median = times[i][runs / 2];
    char entry[64];
    std::snprintf(entry, sizeof entry, "%s%s=%.1f", i ? " " : "", matmulPathName(candidates[i]), median * 1e6);
    report += entry;
    if (i == 0 || median < bestMedian)
      best = candidates[i], bestMedian = median;
  }
  return best;
}

enum Source { Forced, Checkpoint, Rule, Cached, Measured, kSources };
constexpr const char *kSourceNames[] = {"forced", "from the checkpoint", "the rule (ZRT_MATMUL_TUNE=off)",
                                        "cached", "measured"};

/// Rank 0's plan for `keys`, and the start-up line saying what it chose and where from.
MatmulPlan decide(const std::vector<MatmulKey> &keys, const char *recorded, std::string &line) {
  const char *call = "zrt_plan_matmuls";
  const char *tune = std::getenv("ZRT_MATMUL_TUNE");
  const std::string mode = tune && *tune ? tune : "cache";
  if (mode != "cache" && mode != "measure" && mode != "off")
    fatal(call, "ZRT_MATMUL_TUNE=%s: expected cache (the default), measure or off", mode.c_str());
  const MatmulPlan kept = recorded ? parseMatmulPlan(static_cast<const char *>(recorded), call) : MatmulPlan{};
  MatmulPlan plan;
  int counts[kSources] = {};
  std::vector<MatmulKey> pending;
  for (const MatmulKey &key : keys) {
    auto it = kept.find(key);
    if (std::optional<MatmulPath> forced = forcedMatmulPath(key.dtype, call)) {
      plan[key] = *forced, ++counts[Forced];
    } else if (it != kept.end() && pathRuns(it->second, key.dtype, key.shape)) {
      plan[key] = it->second, ++counts[Checkpoint];
    } else if (mode == "off") {
      plan[key] = ruleMatmulPath(key.dtype);
      if (!pathRuns(plan[key], key.dtype, key.shape))
        plan[key] = MatmulPath::Widen; // the rule's native path lacks this shape
      ++counts[Rule];
    } else {
      if (it != kept.end())
        std::fprintf(stderr, "zrt: %s: the checkpoint's %s path of %s does not run on this CPU: measuring\n", call,
                     matmulPathName(it->second), key.describe().c_str());
      pending.push_back(key);
    }
  }

  std::string cacheNote;
  double measuring = 0;
  if (!pending.empty()) {
    const int threads = omp_get_max_threads();
    const std::string machine = hex(fnv1a(machineKey()));
    CacheFile cache(cachePath());
    if (!cache.ok())
      cacheNote = "; no cache (" + cache.why() + ")";
    std::map<std::string, size_t> lineOf; // a product's line prefix (cachePrefix) -> its line
    for (size_t i = 0; i < cache.lines().size(); ++i) {
      const std::string &l = cache.lines()[i];
      if (l.empty() || l[0] == '#')
        continue;
      std::istringstream fields(l);
      std::string prefix, field;
      for (int k = 0; k < 10 && fields >> field; ++k)
        prefix += field + " ";
      lineOf[prefix] = i;
    }
    bool added = false;
    for (const MatmulKey &key : pending) {
      const std::string prefix = cachePrefix(machine, threads, key);
      auto at = lineOf.find(prefix);
      if (at != lineOf.end() && mode != "measure") {
        // "<prefix><path> <timings>": the path is the field after the prefix.
        std::istringstream rest(cache.lines()[at->second].substr(prefix.size()));
        std::string name;
        rest >> name;
        for (MatmulPath path : kMatmulPaths)
          if (name == matmulPathName(path) && pathRuns(path, key.dtype, key.shape)) {
            plan[key] = path, ++counts[Cached];
            break;
          }
        if (plan.count(key))
          continue;
      }
      const double start = seconds();
      std::string timings;
      plan[key] = measure(key, timings);
      measuring += seconds() - start;
      ++counts[Measured];
      const std::string entry = prefix + matmulPathName(plan[key]) + " " + timings + " (us)";
      if (at != lineOf.end())
        cache.lines()[at->second] = entry;
      else
        cache.lines().push_back(entry);
      added = true;
    }
    if (cache.ok()) {
      const std::string header = "# " + machine + " = " + machineKey();
      std::vector<std::string> &lines = cache.lines();
      if (lines.empty() || lines[0].rfind("# zcc matmul paths", 0) != 0)
        lines.insert(lines.begin(),
                             "# zcc matmul paths: machine, threads, dtype batch m n k trans_a trans_b shared, the "
                             "fastest path, each path's median time; delete the file to measure again");
      if (added && std::find(lines.begin(), lines.end(), header) == lines.end())
        lines.insert(lines.begin() + 1, header);
      if (added && !cache.save())
        cacheNote = "; cache not saved (" + cache.why() + ")";
      cacheNote = (cacheNote.empty() ? "; cache " + cache.path() : cacheNote);
    }
  }

  // "14 products: f32 sgemm 8, blas 2; bf16 widen 4 (9 cached, 5 measured in 1.2 s; cache F)".
  std::map<std::string, int> byPath;
  for (const auto &[key, path] : plan)
    ++byPath[std::string(key.dtype == ZRT_DTYPE_BF16 ? "bf16 " : "f32 ") + matmulPathName(path)];
  line = std::to_string(plan.size()) + " product shape(s):";
  for (const auto &[name, n] : byPath)
    line += " " + name + " " + std::to_string(n) + ",";
  if (!byPath.empty())
    line.pop_back();
  std::string sources;
  for (int s = 0; s < kSources; ++s)
    if (counts[s]) {
      sources += (sources.empty() ? "" : ", ") + std::to_string(counts[s]) + " " + kSourceNames[s];
      if (s == Measured) {
        char took[32];
        std::snprintf(took, sizeof took, " in %.1f s", measuring);
        sources += took;
      }
    }
  line += " (" + (sources.empty() ? std::string("none") : sources) + cacheNote + ")";
  return plan;
}

} // namespace

extern "C" {

void zrt_plan_matmuls(const void *table, int64_t rows, const void *recorded, void *text, int64_t capacity) {
  const char *call = "zrt_plan_matmuls";
  const std::vector<MatmulKey> keys = productsOfTable(static_cast<const int64_t *>(table), rows, call);
  // OpenBLAS's thread count (its OpenMP build, runtime/CMakeLists.txt, reads it from OpenMP only
  // as it loads): the kernels' now.
  openblas_set_num_threads(omp_get_max_threads());
  const int32_t ranks = zrt_world_size(), rank = zrt_rank();
  std::string line;
  MatmulPlan plan;
  if (rank == 0)
    plan = decide(keys, static_cast<const char *>(recorded), line);
  // Rank 0's paths, a byte each in key order after a hash of the keys (every rank must plan the
  // same products), gathered as f32 words.
  const uint64_t keysHash = fnv1a(matmulPlanText([&] {
    MatmulPlan all;
    for (const MatmulKey &key : keys)
      all[key] = MatmulPath::Sgemm;
    return all;
  }()));
  const int64_t words = (8 + static_cast<int64_t>(keys.size()) + 3) / 4;
  std::vector<uint8_t> mine(words * 4, 0), every(words * 4 * ranks);
  std::memcpy(mine.data(), &keysHash, 8);
  for (size_t i = 0; i < keys.size() && rank == 0; ++i)
    mine[8 + i] = static_cast<uint8_t>(plan.at(keys[i]));
  if (ranks > 1) {
    zrt_host_all_gather(ZRT_AXIS_WORLD, mine.data(), every.data(), words);
    for (int32_t r = 0; r < ranks; ++r)
      if (std::memcmp(every.data() + r * words * 4, &keysHash, 8) != 0)
        fatal(call, "rank %d plans other products than rank %d: every rank must pass every stage's table", r, rank);
    for (size_t i = 0; i < keys.size(); ++i)
      plan[keys[i]] = static_cast<MatmulPath>(every[8 + i]);
    if (rank != 0)
      line = std::to_string(keys.size()) + " product shape(s): rank 0's plan";
  }
  installMatmulPlan(std::move(plan));
  if (capacity > 0)
    std::snprintf(static_cast<char *>(text), static_cast<size_t>(capacity), "%s", line.c_str());
}

int64_t zrt_matmul_plan_text(void *text, int64_t capacity) {
  const std::string plan = matmulPlanText(installedMatmulPlan());
  if (capacity > static_cast<int64_t>(plan.size()))
    std::memcpy(text, plan.c_str(), plan.size() + 1);
  return static_cast<int64_t>(plan.size());
}

} // extern "C"
