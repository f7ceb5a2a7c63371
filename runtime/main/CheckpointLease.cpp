#include "main/CheckpointLease.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "core/Error.h"
#include "main/Checkpoint.h"
#include "zrt/zrt.h"

namespace zrt::train {
namespace {

std::string hostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0)
    return "unknown-host";
  return host;
}

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// What a lease file says, and how long ago its heartbeat was.
struct Holder {
  bool present = false, readable = false;
  std::string job, host;
  long long pid = 0;
  double started = 0, age = 0;
};

Holder readHolder(const std::string &path) {
  Holder h;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return h;
  h.present = true;
  h.age = unixNow() - (double(st.st_mtim.tv_sec) + 1e-9 * double(st.st_mtim.tv_nsec));
  try {
    std::ifstream in(path);
    nlohmann::json j = nlohmann::json::parse(in);
    h.job = j.at("job").get<std::string>();
    h.host = j.at("host").get<std::string>();
    h.pid = j.at("pid").get<long long>();
    h.started = j.at("started").get<double>();
    h.readable = true;
  } catch (const std::exception &) {
    // Being written (a rename makes that rare) or damaged: only its age can tell.
  }
  return h;
}

std::string describe(const Holder &h) {
  char text[512];
  if (!h.readable) {
    std::snprintf(text, sizeof text, "an unreadable lease, refreshed %.0f s ago", h.age);
    return text;
  }
  std::time_t started = static_cast<std::time_t>(h.started);
  char when[64] = "?";
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&started));
  std::snprintf(text, sizeof text, "job %s (host %s, pid %lld, started %s, lease refreshed %.1f s ago)",
                h.job.c_str(), h.host.c_str(), h.pid, when, h.age);
  return text;
}

/// Whether the holder is gone: its process no longer exists on this host, or its heartbeat stopped.
bool holderIsDead(const Holder &h, const std::string &host) {
  if (h.age > CheckpointLease::kStaleSeconds)
    return true;
  if (h.readable && h.host == host && h.pid > 0)
    return ::kill(static_cast<pid_t>(h.pid), 0) != 0 && errno == ESRCH;
  return false;
}

void sleepSeconds(double s) { ::usleep(static_cast<useconds_t>(s * 1e6)); }

} // namespace

std::string processTag() { return hostName() + "." + std::to_string(::getpid()); }

CheckpointLease::CheckpointLease(const std::string &dir, double waitSeconds)
    : dir_(dir), path_(dir + "/zcc.lease") {
  float failed = 0;
  if (zrt_rank() == 0) {
    makeDirs(dir_);
    const std::string host = hostName();
    const double started = unixNow();
    job_ = host + ":" + std::to_string(::getpid()) + ":" + std::to_string(static_cast<long long>(started * 1e3));
    const std::string content = nlohmann::json{{"job", job_}, {"host", host}, {"pid", static_cast<long long>(::getpid())},
                                               {"started", started}}
                                    .dump() +
                                "\n";
    const double deadline = started + waitSeconds;
    bool announced = false;
    std::string why;
    while (!holder_) {
      const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
      if (fd >= 0) { // nobody held it
        const bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()) &&
                        ::fsync(fd) == 0;
        ::close(fd);
        if (!ok)
          fatal("checkpoint", "cannot write %s: %s", path_.c_str(), std::strerror(errno));
        holder_ = true;
        break;
      }
      if (errno != EEXIST)
        fatal("checkpoint", "cannot create %s: %s", path_.c_str(), std::strerror(errno));
      const Holder h = readHolder(path_);
      if (!h.present)
        continue; // released in between: try again
      if (h.readable && h.job == job_) {
        holder_ = true;
        break;
      }
      if (holderIsDead(h, host)) {
        // Take it over: a whole new lease replaces the old one (rename is atomic); a job taking it
        // over at the same moment may win the rename, so read back who holds it.
        const std::string tmp = path_ + ".tmp." + processTag();
        std::FILE *f = std::fopen(tmp.c_str(), "w");
        if (!f || std::fputs(content.c_str(), f) < 0 || std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0 ||
            std::fclose(f) != 0 || std::rename(tmp.c_str(), path_.c_str()) != 0)
          fatal("checkpoint", "cannot take over %s: %s", path_.c_str(), std::strerror(errno));
        sleepSeconds(0.2);
        const Holder now = readHolder(path_);
        if (now.readable && now.job == job_) {
          std::printf("zcc: %s: took over the checkpoint directory from %s, which is no longer running\n",
                      dir_.c_str(), describe(h).c_str());
          std::fflush(stdout);
          holder_ = true;
        }
        continue;
      }
      if (unixNow() >= deadline) {
        why = describe(h);
        break;
      }
      if (!announced) {
        std::printf("zcc: %s is held by %s: waiting up to %.0f s for it to end (--ckpt-lease-wait)\n", dir_.c_str(),
                    describe(h).c_str(), waitSeconds);
        std::fflush(stdout);
        announced = true;
      }
      sleepSeconds(0.25);
    }
    if (!holder_) {
      std::fprintf(stderr,
                   "zrt: rank 0: checkpoint: %s belongs to another job: %s. Stop that job or pass another --ckpt-dir; "
                   "a holder that died is taken over once its process is gone (same host) or its lease is %.0f s "
                   "old\n",
                   dir_.c_str(), why.c_str(), kStaleSeconds);
      failed = 1;
    }
  }
  // Every rank learns the outcome; a job that did not get the directory stops before any step.
  float any = 0;
  zrt_host_all_reduce(ZRT_AXIS_WORLD, &failed, &any, 1, 0);
  if (any > 0)
    fatal("checkpoint", "%s is held by another job (named above): no step was run", dir_.c_str());
  if (holder_)
    beat_ = std::thread([this] { heartbeat(); });
}

void CheckpointLease::heartbeat() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::duration<double>(kHeartbeatSeconds));
    if (stop_)
      break;
    const Holder h = readHolder(path_);
    if (!(h.readable && h.job == job_)) {
      lost_ = true; // confirm() stops the job before its next checkpoint
      break;
    }
    ::utimensat(AT_FDCWD, path_.c_str(), nullptr, 0);
  }
}

void CheckpointLease::confirm() const {
  float lost = 0, any = 0;
  std::string holder;
  if (zrt_rank() == 0) {
    const Holder h = readHolder(path_);
    if (lost_ || !(h.readable && h.job == job_)) {
      lost = 1;
      holder = h.present ? describe(h) : "nobody (the lease file is gone)";
    }
  }
  zrt_host_all_reduce(ZRT_AXIS_WORLD, &lost, &any, 1, 0);
  if (any > 0)
    fatal("checkpoint", "this job no longer holds %s (now held by %s): it stops without writing a checkpoint",
          dir_.c_str(), zrt_rank() == 0 ? holder.c_str() : "another job");
}

void CheckpointLease::release() {
  if (beat_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    beat_.join();
  }
  if (holder_) {
    const Holder h = readHolder(path_);
    if (h.readable && h.job == job_)
      ::unlink(path_.c_str());
    holder_ = false;
  }
}

} // namespace zrt::train
