// See Preemption.h.
#include "main/Preemption.h"

#include <atomic>
#include <csignal>
#include <pthread.h>
#include <thread>

namespace zrt {
namespace {
std::atomic<int> received{0};
} // namespace

void watchPreemptionSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([signals] {
    for (;;) {
      int signal = 0;
      if (sigwait(&signals, &signal) != 0)
        continue;
      int none = 0;
      if (received.compare_exchange_strong(none, signal))
        continue; // the first: stop after this step, with a checkpoint
      // The second: now, as the signal's default action (the process ends by it).
      std::signal(signal, SIG_DFL);
      pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
      std::raise(signal);
    }
  }).detach();
}

int preemptionSignal() { return received.load(); }

} // namespace zrt
