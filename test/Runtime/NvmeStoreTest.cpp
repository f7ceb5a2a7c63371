// The NVMe store (core/Tiers): swaps started per slot and waited for per slot, on io_uring and on
// the pread/pwrite fallback (ZRT_NVME_ENGINE forces each, whatever this system would pick);
// transfers larger than one request and more requests than the queue holds; the blocking
// read and write of unaligned ranges; and the refusals: misaligned swaps, a missing directory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <memory>
#include <numeric>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/Tiers.h"

using zrt::kStoreAlignment;
using zrt::NvmeStore;

namespace {

/// A page-aligned buffer, as the arena's swap slots are.
struct Aligned {
  Aligned(const Aligned &) = delete;
  explicit Aligned(int64_t bytes) : bytes(bytes) {
    EXPECT_EQ(posix_memalign(reinterpret_cast<void **>(&data), kStoreAlignment, bytes), 0);
  }
  ~Aligned() { std::free(data); }
  char *data = nullptr;
  int64_t bytes;
};

std::string tempDir() {
  char pattern[] = "/tmp/zrt-nvme-XXXXXX";
  return ::mkdtemp(pattern);
}

class NvmeStoreTest : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override { ::setenv("ZRT_NVME_ENGINE", GetParam(), 1); }
  void TearDown() override { ::unsetenv("ZRT_NVME_ENGINE"); }
};

TEST_P(NvmeStoreTest, SlotsRoundTripAndWaitOnlyForTheirOwn) {
  const std::string dir = tempDir();
  NvmeStore store;
  const int64_t slotBytes = 3 << 20; // three 1 MiB requests per transfer
  store.open(dir, 0, 4 * slotBytes);
  EXPECT_NE(store.describe().find(GetParam()), std::string::npos) << store.describe();
  // The store file is unlinked at once: nothing is left in the directory.
  DIR *d = ::opendir(dir.c_str());
  int entries = 0;
  while (dirent *e = ::readdir(d))
    entries += std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..");
  ::closedir(d);
  EXPECT_EQ(entries, 0);

  std::vector<std::unique_ptr<Aligned>> slots, back;
  for (int s = 0; s < 4; ++s) {
    slots.push_back(std::make_unique<Aligned>(slotBytes));
    for (int64_t i = 0; i < slotBytes; ++i)
      slots[s]->data[i] = static_cast<char>(i * 7 + s);
  }
  for (int s = 0; s < 4; ++s)
    store.writeAsync(s, slots[s]->data, s * slotBytes, slotBytes);
  for (int s = 0; s < 4; ++s)
    store.wait(s);
  // Read them back crosswise: slot s gets region 3 - s.
  for (int s = 0; s < 4; ++s) {
    back.push_back(std::make_unique<Aligned>(slotBytes));
    std::memset(back[s]->data, 0, slotBytes);
    store.readAsync(s, back[s]->data, (3 - s) * slotBytes, slotBytes);
  }
  for (int s = 3; s >= 0; --s) {
    store.wait(s);
    EXPECT_EQ(std::memcmp(back[s]->data, slots[3 - s]->data, slotBytes), 0) << "slot " << s;
  }
  EXPECT_EQ(store.bytesWritten, 4 * slotBytes);
  EXPECT_EQ(store.bytesRead, 4 * slotBytes);
  store.close();
  ::rmdir(dir.c_str());
}

TEST_P(NvmeStoreTest, MoreRequestsThanTheQueueHolds) {
  const std::string dir = tempDir();
  NvmeStore store;
  const int64_t bytes = 80 << 20; // 80 requests of 1 MiB, queue depth 64
  store.open(dir, 0, bytes);
  Aligned out(bytes), in(bytes);
  for (int64_t i = 0; i < bytes / 4; ++i)
    reinterpret_cast<int32_t *>(out.data)[i] = static_cast<int32_t>(i);
  store.writeAsync(5, out.data, 0, bytes);
  store.wait(5);
  store.readAsync(2, in.data, 0, bytes);
  store.wait(2);
  EXPECT_EQ(std::memcmp(in.data, out.data, bytes), 0);
  store.close();
  ::rmdir(dir.c_str());
}

TEST_P(NvmeStoreTest, BlockingReadAndWriteOfUnalignedRanges) {
  const std::string dir = tempDir();
  NvmeStore store;
  const int64_t bytes = 6 << 20; // larger than the bounce buffer
  store.open(dir, 0, bytes);
  std::vector<char> model(bytes, 0), chunk(5 << 20);
  for (size_t i = 0; i < chunk.size(); ++i)
    chunk[i] = static_cast<char>(i % 251);
  // Ranges that start and end inside blocks, one across the bounce buffer's size.
  for (auto [offset, size] : {std::pair<int64_t, int64_t>{13, 1000}, {4090, 20}, {123457, 5 << 20}, {8191, 1}}) {
    store.write(offset, chunk.data(), size);
    std::memcpy(model.data() + offset, chunk.data(), size);
  }
  std::vector<char> back(bytes);
  store.read(0, back.data(), bytes);
  EXPECT_EQ(std::memcmp(back.data(), model.data(), bytes), 0);
  std::vector<char> piece(777);
  store.read(4093, piece.data(), 777);
  EXPECT_EQ(std::memcmp(piece.data(), model.data() + 4093, 777), 0);
  store.close();
  ::rmdir(dir.c_str());
}

TEST_P(NvmeStoreTest, MisalignedSwapsAreRefused) {
  const std::string dir = tempDir();
  Aligned buffer(2 * kStoreAlignment);
  EXPECT_EXIT(
      {
        NvmeStore store;
        store.open(dir, 0, 1 << 20);
        store.readAsync(0, buffer.data, 100, kStoreAlignment);
      },
      ::testing::ExitedWithCode(1), "must be multiples of 4096 \\(O_DIRECT\\)");
  EXPECT_EXIT(
      {
        NvmeStore store;
        store.open(dir, 0, 1 << 20);
        store.writeAsync(0, buffer.data, 1 << 20, kStoreAlignment);
      },
      ::testing::ExitedWithCode(1), "is outside the 1048576-byte store");
  ::rmdir(dir.c_str());
}

INSTANTIATE_TEST_SUITE_P(Engines, NvmeStoreTest, ::testing::Values("io_uring", "sync"),
                         [](const auto &info) { return std::string(info.param) == "sync" ? "Sync" : "IoUring"; });

TEST(NvmeStore, MissingDirectoryIsRefused) {
  EXPECT_EXIT(
      {
        NvmeStore store;
        store.open("/nonexistent/zcc-store", 0, 1 << 20);
      },
      ::testing::ExitedWithCode(1), "--nvme-path /nonexistent/zcc-store is not a directory");
}

TEST(NvmeStore, UnknownEngineIsRefused) {
  const std::string dir = tempDir();
  ::setenv("ZRT_NVME_ENGINE", "libaio", 1);
  EXPECT_EXIT(
      {
        NvmeStore store;
        store.open(dir, 0, 1 << 20);
      },
      ::testing::ExitedWithCode(1), "ZRT_NVME_ENGINE must be io_uring or sync, got 'libaio'");
  ::unsetenv("ZRT_NVME_ENGINE");
  ::rmdir(dir.c_str());
}

} // namespace
