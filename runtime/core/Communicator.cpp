#include "core/Communicator.h"

#include "core/Error.h"

#include <cstring>
#include <vector>

namespace zrt {

Communicator::DeferredReceive Communicator::nextDeferred(int64_t handle) {
  if (deferred_.empty() || deferred_.front().handle != handle)
    fatal("zrt_pipe_recv_wait", "receive %lld waited for out of order (the oldest started is %lld)",
          static_cast<long long>(handle), deferred_.empty() ? -1LL : static_cast<long long>(deferred_.front().handle));
  DeferredReceive r = deferred_.front();
  deferred_.pop_front();
  return r;
}

void Communicator::allToAllv(const void *send, const int64_t *sendUnits, void *recv, const int64_t *recvUnits,
                             int64_t unitBytes) {
  const int n = size(), me = rank();
  std::vector<int64_t> sendAt(n + 1, 0), recvAt(n + 1, 0);
  for (int p = 0; p < n; ++p) {
    sendAt[p + 1] = sendAt[p] + sendUnits[p] * unitBytes;
    recvAt[p + 1] = recvAt[p] + recvUnits[p] * unitBytes;
  }
  if (sendUnits[me] != recvUnits[me])
    fatal("zrt_all_to_all_v", "this rank sends itself %lld units and expects %lld", static_cast<long long>(sendUnits[me]),
          static_cast<long long>(recvUnits[me]));
  const char *s = static_cast<const char *>(send);
  char *r = static_cast<char *>(recv);
  if (sendAt[me + 1] > sendAt[me])
    std::memcpy(r + recvAt[me], s + sendAt[me], sendAt[me + 1] - sendAt[me]);
  for (int p = 0; p < n; ++p)
    if (p != me)
      sendAsync(s + sendAt[p], sendAt[p + 1] - sendAt[p], p);
  for (int p = 0; p < n; ++p)
    if (p != me)
      this->recv(r + recvAt[p], recvAt[p + 1] - recvAt[p], p);
  flushSends();
}

} // namespace zrt
