// The pipeline receives a backend started ahead (zrt_pipe_recv_start), by the handle the caller
// waits with (zrt_pipe_recv_wait): each backend keeps what it needs at the wait (the CPU
// runtime its channel's own handle, the CUDA runtime the event the compute waits for).
#ifndef ZRT_CORE_STARTEDRECEIVES_H
#define ZRT_CORE_STARTEDRECEIVES_H

#include <cstdint>
#include <unordered_map>

#include "core/Error.h"

namespace zrt {

template <class Receive> class StartedReceives {
public:
  int64_t add(const Receive &r) {
    started_[next_] = r;
    return next_++;
  }
  /// `handle`'s receive, forgotten: a handle is waited for once.
  Receive take(int64_t handle) {
    auto it = started_.find(handle);
    if (it == started_.end())
      fatal("zrt_pipe_recv_wait", "no receive %lld was started (or it was waited for already)",
            static_cast<long long>(handle));
    Receive r = it->second;
    started_.erase(it);
    return r;
  }

private:
  std::unordered_map<int64_t, Receive> started_;
  int64_t next_ = 0;
};

} // namespace zrt

#endif // ZRT_CORE_STARTEDRECEIVES_H
