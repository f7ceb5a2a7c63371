// The CPU backend's communication stream: one thread that runs collectives in the order they
// were issued, so they progress while the compute thread works. Issue order is the same on
// every rank (the compiler guarantees it), so the thread's FIFO order matches too.
#ifndef ZRT_CORE_COMMSTREAM_H
#define ZRT_CORE_COMMSTREAM_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace zrt {

class CommStream {
public:
  CommStream();
  ~CommStream(); // drains the queue, then joins the thread
  CommStream(const CommStream &) = delete;
  CommStream &operator=(const CommStream &) = delete;

  /// Queues `work`; returns its handle (1, 2, 3, ... in issue order).
  int64_t enqueue(std::function<void()> work);
  /// Blocks until the work behind `handle` has finished; returns the seconds
  /// spent blocked. A handle never issued, or waited twice, is a fatal error.
  double wait(int64_t handle, const char *call);
  /// Blocks until everything queued so far has finished.
  void drain();
  /// Runs `work` on the calling thread once everything queued before it has finished, and
  /// returns the seconds that took. A blocking collective goes this way: handing it to the
  /// communication thread and waking up again costs more than the call on small buffers.
  double runInline(const std::function<void()> &work);

private:
  void loop();

  std::mutex mutex_;
  std::condition_variable queued_, finished_;
  std::deque<std::function<void()>> queue_;
  int64_t issued_ = 0, completed_ = 0;
  std::deque<bool> waited_; // waited_[h - 1 - waitedBase_]: handle h was waited on
  int64_t waitedBase_ = 0;
  bool stopping_ = false;
  bool runningInline_ = false; // the queue thread must not start work meanwhile
  std::thread thread_;
};

} // namespace zrt

#endif // ZRT_CORE_COMMSTREAM_H
