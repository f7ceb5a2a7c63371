// The shim's streams and events (shim/CudaOnCpuStreams.h): a thread and a FIFO per stream, an
// event's record as a completion the stream signals when it reaches it.
#include "CudaOnCpuStreams.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// One record of an event: signalled once, by the stream that reaches it.
struct Completion {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  Clock::time_point at;

  void signal() {
    std::lock_guard<std::mutex> lock(mutex);
    at = Clock::now();
    done = true;
    changed.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return done; });
  }
  bool isDone() {
    std::lock_guard<std::mutex> lock(mutex);
    return done;
  }
};

} // namespace

struct CUevent_st {
  std::mutex mutex;
  std::shared_ptr<Completion> last; // null: never recorded, complete
};

struct CUstream_st {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::function<void()>> queue;
  bool stopping = false;
  const bool blocking; // cudaStreamDefault: ordered with the legacy null stream
  std::thread worker;

  explicit CUstream_st(bool blocking) : blocking(blocking), worker([this] { run(); }) {}

  void run() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty())
          return; // stopping, and everything queued has run
        work = std::move(queue.front());
        queue.pop_front();
      }
      work();
    }
  }
  void push(std::function<void()> work) {
    std::lock_guard<std::mutex> lock(mutex);
    queue.push_back(std::move(work));
    changed.notify_one();
  }
  std::shared_ptr<Completion> mark() {
    auto done = std::make_shared<Completion>();
    push([done] { done->signal(); });
    return done;
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
      changed.notify_one();
    }
    worker.join();
  }
};

namespace zrt::cudaoncpu {
namespace {

std::mutex registryMutex;
std::set<cudaStream_t> &streams() {
  static auto *all = new std::set<cudaStream_t>; // never destroyed: streams may outlive static destructors
  return *all;
}

} // namespace

namespace {
/// The legacy null stream's rule: its work starts after the work queued so far on every blocking
/// stream (and theirs after its own, which has run by the time it returns).
void waitForBlockingStreams() {
  std::vector<std::shared_ptr<Completion>> marks;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    for (cudaStream_t stream : streams())
      if (stream->blocking)
        marks.push_back(stream->mark());
  }
  for (auto &mark : marks)
    mark->wait();
}
} // namespace

void modelCopyLatency(cudaStream_t stream) {
  static const long micros = [] {
    const char *v = std::getenv("ZRT_CUDA_ON_CPU_COPY_LATENCY_US");
    return v ? std::max(0L, std::atol(v)) : 0L;
  }();
  if (stream && micros > 0)
    std::this_thread::sleep_for(std::chrono::microseconds(micros));
}

void enqueue(cudaStream_t stream, std::function<void()> work) {
  if (stream) {
    stream->push(std::move(work));
    return;
  }
  waitForBlockingStreams();
  work();
}

hipStream_t hipStreamOfThisThread() {
  thread_local hipStream_t mine = [] {
    hipStream_t s = nullptr;
    (void)hipStreamCreate(&s);
    return s;
  }();
  return mine;
}

cudaStream_t createStream(bool blocking) {
  auto *stream = new CUstream_st(blocking);
  std::lock_guard<std::mutex> lock(registryMutex);
  streams().insert(stream);
  return stream;
}

void destroyStream(cudaStream_t stream) {
  if (!stream)
    return;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    streams().erase(stream);
  }
  stream->stop(); // as CUDA: work already queued completes first
  delete stream;
}

void synchronizeStream(cudaStream_t stream) {
  if (!stream) {
    synchronizeAll();
    return;
  }
  stream->mark()->wait();
}

void synchronizeAll() {
  std::vector<std::shared_ptr<Completion>> marks;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    for (cudaStream_t stream : streams())
      marks.push_back(stream->mark());
  }
  for (auto &mark : marks)
    mark->wait();
}

cudaEvent_t createEvent() { return new CUevent_st; }
void destroyEvent(cudaEvent_t event) { delete event; } // a pending record keeps its completion alive

void recordEvent(cudaEvent_t event, cudaStream_t stream) {
  std::shared_ptr<Completion> done;
  if (stream) {
    done = stream->mark();
  } else {
    waitForBlockingStreams();
    done = std::make_shared<Completion>();
    done->signal(); // the null stream's own work so far has run
  }
  std::lock_guard<std::mutex> lock(event->mutex);
  event->last = std::move(done);
}

namespace {
std::shared_ptr<Completion> lastRecord(cudaEvent_t event) {
  std::lock_guard<std::mutex> lock(event->mutex);
  return event->last;
}
} // namespace

void streamWaits(cudaStream_t stream, cudaEvent_t event) {
  std::shared_ptr<Completion> record = lastRecord(event); // the record as of this call, as CUDA's
  if (!record)
    return;
  if (!stream) {
    waitForBlockingStreams();
    record->wait();
  } else
    stream->push([record] { record->wait(); });
}

bool eventDone(cudaEvent_t event) {
  std::shared_ptr<Completion> record = lastRecord(event);
  return !record || record->isDone();
}

void synchronizeEvent(cudaEvent_t event) {
  if (std::shared_ptr<Completion> record = lastRecord(event))
    record->wait();
}

bool elapsedMs(cudaEvent_t start, cudaEvent_t end, float *ms) {
  std::shared_ptr<Completion> a = lastRecord(start), b = lastRecord(end);
  if (!a || !b || !a->isDone() || !b->isDone())
    return false;
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return true;
}

} // namespace zrt::cudaoncpu
