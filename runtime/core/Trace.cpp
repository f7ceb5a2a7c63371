#include "core/Trace.h"

#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

#include "core/Error.h"

namespace zrt::trace {
namespace {
struct Event {
  const char *name;
  TraceTrack track;
  double begin, end;
  int64_t arg, step;
  double cpu;
};
std::mutex mutex;
std::vector<Event> events;
std::string outputPath;
const auto origin = std::chrono::steady_clock::now();
} // namespace

std::atomic<bool> enabled{false};

double nowMicros() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin).count();
}

double threadCpuMicros() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e6 + double(t.tv_nsec) * 1e-3;
}

void record(const char *name, TraceTrack track, double begin, double end, int64_t arg, int64_t step,
            double cpuMicros) {
  std::lock_guard<std::mutex> lock(mutex);
  events.push_back({name, track, begin, end, arg, step, cpuMicros});
}

void setPath(const char *path) {
  std::lock_guard<std::mutex> lock(mutex);
  outputPath = path;
  events.reserve(1 << 16);
  enabled = true;
}

void write(int rank) {
  std::lock_guard<std::mutex> lock(mutex);
  if (outputPath.empty())
    return;
  std::string path = rank == 0 ? outputPath : outputPath + ".rank" + std::to_string(rank);
  std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "w");
  if (!f)
    fatal("zrt_trace", "cannot write %s", tmp.c_str());
  static const char *const tracks[3] = {"compute", "communication", "steps"};
  std::fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
  std::fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": {\"name\": \"rank %d\"}}",
               rank, rank);
  for (int t = 0; t < 3; ++t)
    std::fprintf(f,
                 ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": "
                 "\"%s\"}}",
                 rank, t, tracks[t]);
  for (const Event &e : events) {
    std::fprintf(f, ",\n{\"name\": \"%s", e.name);
    if (e.step >= 0)
      std::fprintf(f, " %lld", static_cast<long long>(e.step));
    std::fprintf(f, "\", \"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f", rank,
                 static_cast<int>(e.track), e.begin, e.end - e.begin);
    if (e.arg >= 0 && e.cpu >= 0)
      std::fprintf(f, ", \"args\": {\"bytes\": %lld, \"cpu_us\": %.3f}", static_cast<long long>(e.arg), e.cpu);
    else if (e.arg >= 0)
      std::fprintf(f, ", \"args\": {\"bytes\": %lld}", static_cast<long long>(e.arg));
    else if (e.cpu >= 0)
      std::fprintf(f, ", \"args\": {\"cpu_us\": %.3f}", e.cpu);
    std::fprintf(f, "}");
  }
  std::fprintf(f, "\n]}\n");
  if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0)
    fatal("zrt_trace", "cannot write %s", path.c_str());
}

} // namespace zrt::trace
