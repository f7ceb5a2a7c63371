// A checkpoint directory belongs to one job at a time. Rank 0 holds DIR/zcc.lease (JSON: job,
// host, pid, start time; its modification time is the heartbeat, refreshed every few seconds by a
// thread), so that a job restarted at once into the same --ckpt-dir (a requeue after mpirun was
// killed, whose ranks outlive it by seconds, or after a node failure) never mixes its files with
// the old job's:
//  - a lease whose holder is dead (same host, no such pid) or silent (no heartbeat for
//    kStaleSeconds, any host) is taken over;
//  - a live holder is waited for, up to --ckpt-lease-wait seconds, then the run stops before its
//    first step with an error naming the holder and the lease's age;
//  - before every checkpoint all ranks learn whether rank 0 still holds the lease: a job that lost
//    it stops without writing;
//  - temporary files carry the writing process's host and pid, so two jobs never share one.
#ifndef ZRT_MAIN_CHECKPOINTLEASE_H
#define ZRT_MAIN_CHECKPOINTLEASE_H

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace zrt::train {

class CheckpointLease {
public:
  /// A heartbeat older than this is a dead job's, whatever its host.
  static constexpr double kStaleSeconds = 30;
  static constexpr double kHeartbeatSeconds = 2;

  /// Rank 0 takes DIR's lease (creating DIR), waiting up to `waitSeconds` for a live holder; every
  /// rank then agrees (a collective). Other ranks hold nothing.
  CheckpointLease(const std::string &dir, double waitSeconds);
  ~CheckpointLease() { release(); }
  CheckpointLease(const CheckpointLease &) = delete;
  CheckpointLease &operator=(const CheckpointLease &) = delete;

  /// Every rank calls it before a checkpoint's files are written (a collective): stops the job, on
  /// every rank, when another job has taken the directory.
  void confirm() const;

  /// Removes the lease file if it is still this job's (a run's normal end or preemption exit).
  void release();

private:
  void heartbeat();

  std::string dir_, path_, job_;
  bool holder_ = false;
  std::atomic<bool> lost_{false}; // the heartbeat found another job's lease
  bool stop_ = false;             // under mutex_
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread beat_;
};

/// "HOST.PID": unique to the calling process, for temporary file names in a shared directory.
std::string processTag();

} // namespace zrt::train

#endif // ZRT_MAIN_CHECKPOINTLEASE_H
