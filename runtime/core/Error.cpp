// Fatal runtime errors: one message naming the call and the rank, then every rank stops.
#include "core/Error.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace zrt {
namespace {
std::atomic<AbortHook> abortHook{nullptr};
std::atomic<int> errorRank{0};
} // namespace

void setAbortHook(AbortHook hook) { abortHook.store(hook); }
void setErrorRank(int rank) { errorRank.store(rank); }

void fatal(const char *call, const char *format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  std::fprintf(stderr, "zrt: rank %d: %s: %s\n", errorRank.load(), call, message);
  std::fflush(stderr);
  if (AbortHook hook = abortHook.load())
    hook(1);
  std::exit(1);
}

} // namespace zrt
