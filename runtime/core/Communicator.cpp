#include "core/Communicator.h"

#include "core/Error.h"

namespace zrt {

Communicator::DeferredReceive Communicator::nextDeferred(int64_t handle) {
  if (deferred_.empty() || deferred_.front().handle != handle)
    fatal("zrt_pipe_recv_wait", "receive %lld waited for out of order (the oldest started is %lld)",
          static_cast<long long>(handle), deferred_.empty() ? -1LL : static_cast<long long>(deferred_.front().handle));
  DeferredReceive r = deferred_.front();
  deferred_.pop_front();
  return r;
}

} // namespace zrt
