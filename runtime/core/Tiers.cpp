#include "core/Tiers.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#ifdef ZRT_HAVE_LIBURING
#include <liburing.h>
#endif

#include "core/Error.h"

namespace zrt {
namespace {

constexpr int64_t kBounceBytes = 4 << 20;
/// A transfer is split into requests of at most this many bytes, so one large tensor keeps
/// several of the device's queues busy.
constexpr int64_t kRequestBytes = 1 << 20;
constexpr unsigned kQueueDepth = 64;

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string humanBytes(int64_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

/// Whole transfer with pread/pwrite, resuming after short counts; fatal on an error.
void transferSync(int fd, bool write, char *buffer, int64_t offset, int64_t bytes, const std::string &path) {
  while (bytes > 0) {
    ssize_t done = write ? ::pwrite(fd, buffer, static_cast<size_t>(bytes), offset)
                         : ::pread(fd, buffer, static_cast<size_t>(bytes), offset);
    if (done < 0 && errno == EINTR)
      continue;
    if (done <= 0)
      fatal(write ? "zrt_swap_write" : "zrt_swap_read", "%s of %lld bytes at offset %lld of %s failed: %s",
            write ? "write" : "read", static_cast<long long>(bytes), static_cast<long long>(offset), path.c_str(),
            done == 0 ? "end of file" : std::strerror(errno));
    buffer += done;
    offset += done;
    bytes -= done;
  }
}

} // namespace

struct NvmeStore::Request {
  int slot;
  bool write;
  char *buffer;
  int64_t offset, bytes;
};

#ifdef ZRT_HAVE_LIBURING
struct NvmeStore::Ring {
  io_uring ring;
  unsigned inFlight = 0;
  ~Ring() { io_uring_queue_exit(&ring); }
};
#else
struct NvmeStore::Ring {};
#endif

NvmeStore::NvmeStore() = default;
NvmeStore::~NvmeStore() { close(); }

void NvmeStore::close() {
  if (fd_ >= 0) {
    drain();
    ::close(fd_);
  }
  fd_ = -1;
  size_ = 0;
  ring_.reset();
  pending_.clear();
  std::free(bounce_);
  bounce_ = nullptr;
}

void NvmeStore::open(const std::string &dir, int rank, int64_t bytes) {
  const char *call = "zrt_tier_open";
  if (fd_ >= 0)
    fatal(call, "the NVMe store is already open");
  struct stat st {};
  if (dir.empty())
    fatal(call, "no --nvme-path: the model's optimizer state is offloaded to NVMe; name a directory on the "
                "NVMe device");
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    fatal(call, "--nvme-path %s is not a directory%s%s", dir.c_str(), errno ? ": " : "",
          errno ? std::strerror(errno) : "");
  if (::access(dir.c_str(), W_OK) != 0)
    fatal(call, "--nvme-path %s is not writable: %s", dir.c_str(), std::strerror(errno));
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) == 0) {
    const int64_t free = static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
    if (free < bytes)
      fatal(call, "--nvme-path %s has %s free; this rank's store needs %s (the disk is full or too small)",
            dir.c_str(), humanBytes(free).c_str(), humanBytes(bytes).c_str());
  }
  path_ = dir + "/zcc-nvme-store-rank" + std::to_string(rank) + "-" + std::to_string(::getpid());
  const int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;
  fd_ = ::open(path_.c_str(), flags | O_DIRECT, 0600);
  direct_ = fd_ >= 0;
  if (fd_ < 0 && errno == EINVAL) // a file system without O_DIRECT (tmpfs): buffered I/O
    fd_ = ::open(path_.c_str(), flags, 0600);
  if (fd_ < 0)
    fatal(call, "cannot create %s: %s", path_.c_str(), std::strerror(errno));
  ::unlink(path_.c_str());
  size_ = (bytes + kStoreAlignment - 1) / kStoreAlignment * kStoreAlignment;
  if (size_ > 0) {
    int rc = ::posix_fallocate(fd_, 0, size_);
    if (rc != 0)
      fatal(call, "cannot reserve %s for the store in --nvme-path %s: %s", humanBytes(size_).c_str(), dir.c_str(),
            std::strerror(rc));
  }
  if (posix_memalign(reinterpret_cast<void **>(&bounce_), kStoreAlignment, kBounceBytes) != 0)
    fatal(call, "cannot allocate the store's bounce buffer");

  const char *engine = std::getenv("ZRT_NVME_ENGINE"); // io_uring | sync: force one
  const bool wantSync = engine && std::strcmp(engine, "sync") == 0;
  if (engine && !wantSync && std::strcmp(engine, "io_uring") != 0)
    fatal(call, "ZRT_NVME_ENGINE must be io_uring or sync, got '%s'", engine);
#ifdef ZRT_HAVE_LIBURING
  if (!wantSync) {
    auto ring = std::make_unique<Ring>();
    int rc = io_uring_queue_init(kQueueDepth, &ring->ring, 0);
    if (rc == 0)
      ring_ = std::move(ring);
    else if (engine)
      fatal(call, "ZRT_NVME_ENGINE=io_uring: io_uring_queue_init failed: %s", std::strerror(-rc));
    else
      engineNote_ = std::string(" (io_uring refused: ") + std::strerror(-rc) + ")";
  }
#else
  if (engine && !wantSync)
    fatal(call, "ZRT_NVME_ENGINE=io_uring: this runtime was built without liburing");
  engineNote_ = " (built without liburing)";
#endif
}

std::string NvmeStore::describe() const {
  if (fd_ < 0)
    return "nvme: closed";
  std::string engine = ring_ ? "io_uring, queue depth " + std::to_string(kQueueDepth) : "synchronous pread/pwrite";
  return "nvme store " + humanBytes(size_) + " in " + path_.substr(0, path_.rfind('/')) + " (" + engine +
         engineNote_ + (direct_ ? ", O_DIRECT" : ", buffered: the file system refuses O_DIRECT") + ")";
}

void NvmeStore::checkRange(const char *call, int64_t offset, int64_t bytes) const {
  if (fd_ < 0)
    fatal(call, "the NVMe store is not open (zrt_tier_open)");
  if (offset < 0 || bytes < 0 || offset + bytes > size_)
    fatal(call, "[%lld, %lld) is outside the %lld-byte store", static_cast<long long>(offset),
          static_cast<long long>(offset + bytes), static_cast<long long>(size_));
}

void NvmeStore::checkSwap(const char *call, const void *buffer, int64_t offset, int64_t bytes) const {
  checkRange(call, offset, bytes);
  if (offset % kStoreAlignment || bytes % kStoreAlignment || reinterpret_cast<uintptr_t>(buffer) % kStoreAlignment)
    fatal(call, "offset %lld, size %lld and buffer %p must be multiples of %lld (O_DIRECT)",
          static_cast<long long>(offset), static_cast<long long>(bytes), buffer,
          static_cast<long long>(kStoreAlignment));
}

void NvmeStore::submit(int slot, bool write, char *buffer, int64_t offset, int64_t bytes) {
  if (write)
    bytesWritten += bytes;
  else
    bytesRead += bytes;
  if (!ring_) {
    transferSync(fd_, write, buffer, offset, bytes, path_);
    return;
  }
#ifdef ZRT_HAVE_LIBURING
  for (int64_t done = 0; done < bytes; done += kRequestBytes) {
    const int64_t piece = std::min(kRequestBytes, bytes - done);
    io_uring_sqe *sqe = io_uring_get_sqe(&ring_->ring);
    while (!sqe) { // the submission queue is full: submit what it holds, retire a completion
      int rc = io_uring_submit(&ring_->ring);
      if (rc < 0)
        fatal(write ? "zrt_swap_write" : "zrt_swap_read", "io_uring_submit: %s", std::strerror(-rc));
      reapOne();
      sqe = io_uring_get_sqe(&ring_->ring);
    }
    auto *request = new Request{slot, write, buffer + done, offset + done, piece};
    if (write)
      io_uring_prep_write(sqe, fd_, request->buffer, static_cast<unsigned>(piece), request->offset);
    else
      io_uring_prep_read(sqe, fd_, request->buffer, static_cast<unsigned>(piece), request->offset);
    io_uring_sqe_set_data(sqe, request);
    ++pending_[slot];
    ++ring_->inFlight;
  }
  int rc = io_uring_submit(&ring_->ring);
  if (rc < 0)
    fatal(write ? "zrt_swap_write" : "zrt_swap_read", "io_uring_submit: %s", std::strerror(-rc));
#endif
}

void NvmeStore::reapOne() {
#ifdef ZRT_HAVE_LIBURING
  io_uring_cqe *cqe = nullptr;
  int rc;
  do
    rc = io_uring_wait_cqe(&ring_->ring, &cqe);
  while (rc == -EINTR);
  if (rc < 0)
    fatal("zrt_swap_wait", "io_uring_wait_cqe: %s", std::strerror(-rc));
  std::unique_ptr<Request> request(static_cast<Request *>(io_uring_cqe_get_data(cqe)));
  const int res = cqe->res;
  io_uring_cqe_seen(&ring_->ring, cqe);
  --ring_->inFlight;
  --pending_[request->slot];
  if (res < 0)
    fatal("zrt_swap_wait", "%s of %lld bytes at offset %lld of %s failed: %s", request->write ? "write" : "read",
          static_cast<long long>(request->bytes), static_cast<long long>(request->offset), path_.c_str(),
          std::strerror(-res));
  if (res < request->bytes) // short transfer (rare on a regular file): finish it synchronously
    transferSync(fd_, request->write, request->buffer + res, request->offset + res, request->bytes - res, path_);
#endif
}

void NvmeStore::readAsync(int slot, void *dst, int64_t offset, int64_t bytes) {
  checkSwap("zrt_swap_read", dst, offset, bytes);
  submit(slot, false, static_cast<char *>(dst), offset, bytes);
}

void NvmeStore::writeAsync(int slot, const void *src, int64_t offset, int64_t bytes) {
  checkSwap("zrt_swap_write", src, offset, bytes);
  submit(slot, true, const_cast<char *>(static_cast<const char *>(src)), offset, bytes);
}

void NvmeStore::wait(int slot) {
  if (!ring_)
    return;
  const double start = seconds();
  while (pending_[slot] > 0)
    reapOne();
  waitSeconds += seconds() - start;
}

void NvmeStore::drain() {
  if (!ring_)
    return;
#ifdef ZRT_HAVE_LIBURING
  while (ring_->inFlight > 0)
    reapOne();
#endif
}

void NvmeStore::read(int64_t offset, void *dst, int64_t bytes) {
  checkRange("zrt_tier_read", offset, bytes);
  drain(); // after every swap in flight: this reads what they wrote
  char *out = static_cast<char *>(dst);
  while (bytes > 0) {
    const int64_t base = offset / kStoreAlignment * kStoreAlignment, skip = offset - base;
    const int64_t span = std::min<int64_t>(kBounceBytes, (skip + bytes + kStoreAlignment - 1) / kStoreAlignment *
                                                             kStoreAlignment);
    transferSync(fd_, false, bounce_, base, std::min(span, size_ - base), path_);
    const int64_t take = std::min(bytes, span - skip);
    std::memcpy(out, bounce_ + skip, static_cast<size_t>(take));
    out += take;
    offset += take;
    bytes -= take;
  }
}

void NvmeStore::write(int64_t offset, const void *src, int64_t bytes) {
  checkRange("zrt_tier_write", offset, bytes);
  drain();
  const char *in = static_cast<const char *>(src);
  while (bytes > 0) {
    // Read-modify-write of the aligned blocks the range touches.
    const int64_t base = offset / kStoreAlignment * kStoreAlignment, skip = offset - base;
    const int64_t span = std::min<int64_t>(kBounceBytes, (skip + bytes + kStoreAlignment - 1) / kStoreAlignment *
                                                             kStoreAlignment);
    const int64_t take = std::min(bytes, span - skip);
    if (skip != 0 || take != span)
      transferSync(fd_, false, bounce_, base, span, path_);
    std::memcpy(bounce_ + skip, in, static_cast<size_t>(take));
    transferSync(fd_, true, bounce_, base, span, path_);
    in += take;
    offset += take;
    bytes -= take;
  }
}

void Tiers::open(int32_t tier, const std::string &path, int rank, int64_t bytes) {
  if (tier == TierHost) {
    if (host)
      fatal("zrt_tier_open", "the host tier is already open");
    hostBytes = bytes;
    const int64_t rounded = std::max<int64_t>(kStoreAlignment, (bytes + kStoreAlignment - 1) / kStoreAlignment *
                                                                   kStoreAlignment);
    if (posix_memalign(reinterpret_cast<void **>(&host), kStoreAlignment, rounded) != 0 || !host)
      fatal("zrt_tier_open", "cannot allocate the %lld-byte host tier", static_cast<long long>(bytes));
    std::memset(host, 0, static_cast<size_t>(rounded));
    return;
  }
  if (tier == TierNvme) {
    nvme.open(path, rank, bytes);
    return;
  }
  fatal("zrt_tier_open", "unknown tier %d (1 host, 2 nvme)", tier);
}

void Tiers::release() {
  std::free(host);
  host = nullptr;
  hostBytes = 0;
  nvme.close();
}

char *Tiers::hostAt(int64_t offset, int64_t bytes, const char *call) {
  if (!host || offset < 0 || bytes < 0 || offset + bytes > hostBytes)
    fatal(call, "[%lld, %lld) is outside the %lld-byte host tier", static_cast<long long>(offset),
          static_cast<long long>(offset + bytes), static_cast<long long>(hostBytes));
  return host + offset;
}

void Tiers::read(int32_t tier, int64_t offset, void *dst, int64_t bytes) {
  if (tier == TierNvme)
    return nvme.read(offset, dst, bytes);
  if (tier != TierHost)
    fatal("zrt_tier_read", "unknown tier %d (1 host, 2 nvme)", tier);
  std::memcpy(dst, hostAt(offset, bytes, "zrt_tier_read"), static_cast<size_t>(bytes));
}

void Tiers::write(int32_t tier, int64_t offset, const void *src, int64_t bytes) {
  if (tier == TierNvme)
    return nvme.write(offset, src, bytes);
  if (tier != TierHost)
    fatal("zrt_tier_write", "unknown tier %d (1 host, 2 nvme)", tier);
  std::memcpy(hostAt(offset, bytes, "zrt_tier_write"), src, static_cast<size_t>(bytes));
}

Tiers &tiers() {
  static Tiers instance;
  return instance;
}

} // namespace zrt
