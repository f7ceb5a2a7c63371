// The tiers of model state outside the device arena (ZeRO-Offload, ZeRO-Infinity):
//  - host: one page-aligned host allocation the optimizer runs on in place;
//  - nvme: one file per rank under --nvme-path, opened O_DIRECT and read and written through
//    Linux's io_uring (liburing): requests are tagged with the swap slot they fill or drain, so
//    the compiler's swap schedule (read-ahead, write-behind over a fixed set of slot buffers)
//    waits for exactly the transfers a slot's next use needs. DeepSpeed's DeepSpeedIOEngine
//    plays this part with its own thread pool over libaio.
// Offsets and sizes of swap requests are multiples of kStoreAlignment (the compiler lays every
// tensor out at such offsets and pads it), as O_DIRECT needs; the synchronous read and write
// that train.bin uses (initialization, checkpoints) take any range through a bounce buffer.
#ifndef ZRT_CORE_TIERS_H
#define ZRT_CORE_TIERS_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace zrt {

constexpr int64_t kStoreAlignment = 4096;

/// zrt_tier values: where a state tensor lives.
enum Tier : int32_t { TierDevice = 0, TierHost = 1, TierNvme = 2 };

class NvmeStore {
public:
  NvmeStore();
  ~NvmeStore();
  NvmeStore(const NvmeStore &) = delete;
  NvmeStore &operator=(const NvmeStore &) = delete;

  /// Creates this rank's store file in `dir` and reserves `bytes` (zeros). Fatal, naming the
  /// directory and the reason, when it is missing, unwritable or short of space: before any
  /// training. The file is unlinked at once: it holds only this run's working state (a
  /// checkpoint is what outlives a run) and vanishes with the process, however it ends.
  void open(const std::string &dir, int rank, int64_t bytes);
  bool isOpen() const { return fd_ >= 0; }
  /// Waits for every transfer, closes the file (its space is freed: it was unlinked).
  void close();
  int64_t size() const { return size_; }

  /// Starts a transfer of [offset, offset + bytes) for swap slot `slot`; aligned ranges only.
  void readAsync(int slot, void *dst, int64_t offset, int64_t bytes);
  void writeAsync(int slot, const void *src, int64_t offset, int64_t bytes);
  /// Returns once every transfer started for `slot` completed (fatal on an I/O error).
  void wait(int slot);
  /// Waits for every slot.
  void drain();

  /// Blocking transfers of any range and alignment (through an aligned bounce buffer).
  void read(int64_t offset, void *dst, int64_t bytes);
  void write(int64_t offset, const void *src, int64_t bytes);

  /// For the start-up line: the engine, O_DIRECT or not, the queue depth, the file.
  std::string describe() const;

  int64_t bytesRead = 0, bytesWritten = 0;
  double waitSeconds = 0;

private:
  struct Request;
  void submit(int slot, bool write, char *buffer, int64_t offset, int64_t bytes);
  void reapOne(); // io_uring: waits for one completion and retires it
  /// Fatal, naming `call`, unless the store is open and holds [offset, offset + bytes).
  void checkRange(const char *call, int64_t offset, int64_t bytes) const;
  /// checkRange, and a swap's alignment (O_DIRECT).
  void checkSwap(const char *call, const void *buffer, int64_t offset, int64_t bytes) const;

  int fd_ = -1;
  int64_t size_ = 0;
  std::string path_;
  bool direct_ = false;
  struct Ring;
  std::unique_ptr<Ring> ring_; // null: synchronous pread/pwrite (no io_uring on this system)
  std::string engineNote_;
  std::map<int, int> pending_; // slot -> transfers in flight
  char *bounce_ = nullptr;     // kStoreAlignment-aligned, kBounceBytes
};

/// The process's tiers (one runtime per process).
struct Tiers {
  char *host = nullptr;
  int64_t hostBytes = 0;
  NvmeStore nvme;
  /// Opens tier `tier` with `bytes` (`path`: the NVMe directory).
  void open(int32_t tier, const std::string &path, int rank, int64_t bytes);
  void release();
  /// The host tier's [offset, offset + bytes); fatal, naming `call`, outside it.
  char *hostAt(int64_t offset, int64_t bytes, const char *call);
  /// Blocking copies between tier `tier` (host or NVMe) and host memory, any range.
  void read(int32_t tier, int64_t offset, void *dst, int64_t bytes);
  void write(int32_t tier, int64_t offset, const void *src, int64_t bytes);
};
Tiers &tiers();

} // namespace zrt

#endif // ZRT_CORE_TIERS_H
