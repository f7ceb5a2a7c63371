// Chrome trace events (chrome://tracing, ui.perfetto.dev): what the compute thread and
// the communication stream did when. Off unless zrt_trace_enable was called; then every
// kernel entry point, every collective's transfer and every wait records one complete
// event. Tracks: compute (kernels, waits), communication (transfers), steps.
#ifndef ZRT_CORE_TRACE_H
#define ZRT_CORE_TRACE_H

#include <atomic>
#include <chrono>
#include <cstdint>

namespace zrt {

enum class TraceTrack : int { Compute = 0, Communication = 1, Steps = 2 };

namespace trace {
extern std::atomic<bool> enabled;
double nowMicros();
/// The calling thread's CPU time, in microseconds (what it computed, however the cores were shared).
double threadCpuMicros();
/// Records one event; `name` must outlive the trace (a literal). `arg`, when not
/// negative, is shown as the event's bytes; `cpuMicros`, when not negative, as its thread's
/// CPU time (`cpu_us`).
void record(const char *name, TraceTrack track, double beginMicros, double endMicros, int64_t arg = -1,
            int64_t step = -1, double cpuMicros = -1);
/// Writes the events recorded on this rank to `path` (rank 0) or `path.rankR`.
void write(int rank);
void setPath(const char *path);
} // namespace trace

/// Records the scope's duration when tracing is on.
class TraceScope {
public:
  TraceScope(const char *name, TraceTrack track, int64_t bytes = -1)
      : name_(name), track_(track), bytes_(bytes),
        begin_(trace::enabled.load(std::memory_order_relaxed) ? trace::nowMicros() : -1) {}
  ~TraceScope() {
    if (begin_ >= 0)
      trace::record(name_, track_, begin_, trace::nowMicros(), bytes_);
  }
  TraceScope(const TraceScope &) = delete;
  TraceScope &operator=(const TraceScope &) = delete;

private:
  const char *name_;
  TraceTrack track_;
  int64_t bytes_;
  double begin_;
};

} // namespace zrt

#endif // ZRT_CORE_TRACE_H
