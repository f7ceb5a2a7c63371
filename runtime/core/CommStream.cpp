// The CPU backend's communication stream: one thread running collectives in issue order.
#include "core/CommStream.h"

#include <chrono>

#include "core/Error.h"

namespace zrt {

CommStream::CommStream() : thread_([this] { loop(); }) {}

CommStream::~CommStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  thread_.join();
}

int64_t CommStream::enqueue(std::function<void()> work) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(work));
  waited_.push_back(false);
  queued_.notify_one();
  return ++issued_;
}

double CommStream::wait(int64_t handle, const char *call) {
  auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  if (handle <= waitedBase_ || handle > issued_ || waited_[handle - 1 - waitedBase_])
    fatal(call, "handle %lld was never issued or was already waited on",
          static_cast<long long>(handle));
  waited_[handle - 1 - waitedBase_] = true;
  // Forget the prefix of handles that are all waited on, so the record stays small.
  while (!waited_.empty() && waited_.front()) {
    waited_.pop_front();
    ++waitedBase_;
  }
  finished_.wait(lock, [&] { return completed_ >= handle; });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void CommStream::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  int64_t target = issued_;
  finished_.wait(lock, [&] { return completed_ >= target; });
}

double CommStream::runInline(const std::function<void()> &work) {
  auto start = std::chrono::steady_clock::now();
  {
    std::unique_lock<std::mutex> lock(mutex_);
    int64_t target = issued_;
    finished_.wait(lock, [&] { return completed_ >= target; });
    runningInline_ = true;
  }
  work();
  bool pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    runningInline_ = false;
    pending = !queue_.empty();
  }
  // Waking the idle thread for nothing costs a context switch on a busy core.
  if (pending)
    queued_.notify_one();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void CommStream::loop() {
  for (;;) {
    std::function<void()> work;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      queued_.wait(lock, [&] { return (stopping_ || !queue_.empty()) && !runningInline_; });
      if (queue_.empty())
        return; // stopping, and nothing left to run
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    work();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++completed_;
    }
    finished_.notify_all();
  }
}

} // namespace zrt
