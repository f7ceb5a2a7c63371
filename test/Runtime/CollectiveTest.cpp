// Collectives through the C ABI on however many ranks the test was launched with (ctest runs
// it alone and under mpirun -np 2, 3, 4): odd and empty sizes, f32 and bf16, sum and average,
// in and out of place, async overlapping compute, counters and the arena.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace {

int worldFromLauncher() {
  const char *size = std::getenv("OMPI_COMM_WORLD_SIZE");
  return size ? std::atoi(size) : 1;
}

class Collectives : public ::testing::Test {
protected:
  int rank = zrt_rank(), ranks = zrt_world_size();
};

TEST_F(Collectives, AllGatherOddAndEmptySizes) {
  for (int64_t count : {7, 1, 0}) {
    std::vector<float> send(count), recv(count * ranks + 1, -1.f);
    for (int64_t i = 0; i < count; ++i)
      send[i] = rank * 100 + i;
    zrt_all_gather(ZRT_DTYPE_F32, send.data(), recv.data(), count);
    for (int r = 0; r < ranks; ++r)
      for (int64_t i = 0; i < count; ++i)
        EXPECT_EQ(recv[r * count + i], r * 100 + i) << "count " << count;
    EXPECT_EQ(recv[count * ranks], -1.f) << "wrote past the gathered buffer";
  }
}

TEST_F(Collectives, ReduceScatterSumAndAverage) {
  const int64_t count = 5; // per rank
  std::vector<float> send(count * ranks), sum(count), avg(count);
  for (int64_t j = 0; j < count * ranks; ++j)
    send[j] = rank + j;
  zrt_reduce_scatter(ZRT_DTYPE_F32, send.data(), sum.data(), count, 0);
  zrt_reduce_scatter(ZRT_DTYPE_F32, send.data(), avg.data(), count, 1);
  for (int64_t i = 0; i < count; ++i) {
    float expected = ranks * (rank * count + i) + ranks * (ranks - 1) / 2.0f;
    EXPECT_EQ(sum[i], expected);
    EXPECT_FLOAT_EQ(avg[i], expected / ranks);
  }
}

/// ZeRO's padded shards: `total` valid elements, fewer than ranks * count (also fewer
/// than ranks, so some shards are all padding): the tail counts as zeros and each
/// rank's shard is zero past the valid part, in f32 and bf16.
TEST_F(Collectives, ReduceScatterPaddedShards) {
  for (int64_t total : {int64_t(1), int64_t(2 * ranks + 1), int64_t(4 * ranks)}) {
    const int64_t count = (total + ranks - 1) / ranks;
    std::vector<float> send(total), shard(count, -7.f);
    std::vector<zrt::bf16> sendBf(total), shardBf(count, zrt::bf16(-7.f));
    for (int64_t j = 0; j < total; ++j) {
      send[j] = rank + j;
      sendBf[j] = zrt::bf16(float(rank + j));
    }
    zrt_reduce_scatter_padded(ZRT_DTYPE_F32, send.data(), shard.data(), count, total, 1);
    zrt_reduce_scatter_padded(ZRT_DTYPE_BF16, sendBf.data(), shardBf.data(), count, total, 0);
    for (int64_t i = 0; i < count; ++i) {
      int64_t j = rank * count + i;
      float sum = j < total ? ranks * j + ranks * (ranks - 1) / 2.0f : 0.f;
      EXPECT_FLOAT_EQ(shard[i], sum / ranks) << "total " << total << " element " << j;
      EXPECT_NEAR(float(shardBf[i]), sum, std::abs(sum) / 128 + 1e-6) << "total " << total;
    }
  }
}

/// ZeRO-1/2's parameter sync: every rank updated its own slice of a full buffer,
/// which is then gathered in place.
TEST_F(Collectives, AllGatherInPlace) {
  const int64_t count = 6;
  std::vector<float> full(count * ranks, -1.f);
  for (int64_t i = 0; i < count; ++i)
    full[rank * count + i] = rank * 10 + i;
  zrt_all_gather(ZRT_DTYPE_F32, full.data() + rank * count, full.data(), count);
  for (int r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < count; ++i)
      EXPECT_EQ(full[r * count + i], r * 10 + i);
}

TEST_F(Collectives, AllReduceInPlaceOutOfPlaceAndBf16) {
  const int64_t count = 13; // not a multiple of any rank count here
  std::vector<float> x(count), y(count);
  for (int64_t i = 0; i < count; ++i)
    x[i] = (rank + 1) * 0.5f + i;
  zrt_all_reduce(ZRT_DTYPE_F32, x.data(), y.data(), count, 0);
  zrt_all_reduce(ZRT_DTYPE_F32, x.data(), x.data(), count, 1); // in place, averaged
  for (int64_t i = 0; i < count; ++i) {
    float expected = 0.5f * ranks * (ranks + 1) / 2.0f + ranks * i;
    EXPECT_FLOAT_EQ(y[i], expected);
    EXPECT_FLOAT_EQ(x[i], expected / ranks);
  }
  std::vector<zrt::bf16> h(count);
  for (int64_t i = 0; i < count; ++i)
    h[i] = zrt::bf16(float(rank + i));
  zrt_all_reduce(ZRT_DTYPE_BF16, h.data(), h.data(), count, 0);
  for (int64_t i = 0; i < count; ++i) // small integers are exact in bf16
    EXPECT_EQ(float(h[i]), float(ranks * i + ranks * (ranks - 1) / 2));
}

/// Past 2^31 bytes (ZRT_TEST_LARGE_COLLECTIVES=1; ctest's zrt-collectives-large-np2 runs it,
/// once with MPI's whole int count per call and once split by ZRT_MPI_MAX_COUNT): an
/// in-place all-reduce of 2 GiB + 12 B per rank, and an all-gather whose result is 2 GiB + 40 B.
TEST_F(Collectives, LargerThanTwoGiB) {
  if (!std::getenv("ZRT_TEST_LARGE_COLLECTIVES"))
    GTEST_SKIP() << "set ZRT_TEST_LARGE_COLLECTIVES=1";
  const int64_t count = (int64_t(1) << 29) + 3;
  std::vector<float> x(count);
  for (int64_t i = 0; i < count; ++i)
    x[i] = float((i % 1000) + rank);
  zrt_all_reduce(ZRT_DTYPE_F32, x.data(), x.data(), count, 0);
  int64_t wrong = 0;
  for (int64_t i = 0; i < count; ++i)
    wrong += x[i] != float(ranks * (i % 1000) + ranks * (ranks - 1) / 2);
  EXPECT_EQ(wrong, 0) << "all-reduce of " << count << " floats";
  x = {};

  const int64_t shard = ((int64_t(1) << 29) + 10) / ranks;
  std::vector<float> send(shard), recv(shard * ranks + 1, -1.f);
  for (int64_t i = 0; i < shard; ++i)
    send[i] = float(rank * 7 + i % 997);
  zrt_all_gather(ZRT_DTYPE_F32, send.data(), recv.data(), shard);
  wrong = 0;
  for (int r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < shard; ++i)
      wrong += recv[r * shard + i] != float(r * 7 + i % 997);
  EXPECT_EQ(wrong, 0) << "all-gather of " << shard << " floats per rank";
  EXPECT_EQ(recv[shard * ranks], -1.f) << "wrote past the gathered buffer";
}

TEST_F(Collectives, BroadcastFromLastRank) {
  std::vector<float> buf(9, float(rank));
  zrt_broadcast(ZRT_DTYPE_F32, buf.data(), 9, ranks - 1);
  for (float v : buf)
    EXPECT_EQ(v, float(ranks - 1));
}

TEST_F(Collectives, AsyncOverlappingComputeMatchesBlocking) {
  const int64_t count = 1 << 20, dim = 256;
  std::vector<float> grad(count), blocking(count), async(count);
  for (int64_t i = 0; i < count; ++i)
    grad[i] = std::sin(0.001f * i + rank);
  zrt_all_reduce(ZRT_DTYPE_F32, grad.data(), blocking.data(), count, 1);

  int64_t handle = zrt_all_reduce_start(ZRT_DTYPE_F32, grad.data(), async.data(), count, 1);
  std::vector<float> a(dim * dim, 0.5f), b(dim * dim, 0.25f), c(dim * dim);
  zrt_matmul(ZRT_DTYPE_F32, a.data(), b.data(), c.data(), 1, dim, dim, dim, 0, 0, 0);
  zrt_wait(handle);
  EXPECT_EQ(c[0], 0.5f * 0.25f * dim);
  EXPECT_EQ(std::memcmp(blocking.data(), async.data(), count * sizeof(float)), 0);
}

TEST_F(Collectives, ManyHandlesWaitedOutOfOrder) {
  std::vector<std::vector<float>> send(4, std::vector<float>(3, 1.f)), recv(4, std::vector<float>(3 * ranks));
  std::vector<int64_t> handles;
  for (int i = 0; i < 4; ++i)
    handles.push_back(zrt_all_gather_start(ZRT_DTYPE_F32, send[i].data(), recv[i].data(), 3));
  for (int i = 3; i >= 0; --i)
    zrt_wait(handles[i]);
  for (auto &r : recv)
    EXPECT_EQ(std::accumulate(r.begin(), r.end(), 0.f), 3.f * ranks);
}

TEST_F(Collectives, CountersFollowRingBytes) {
  zrt_counters before, after;
  zrt_get_counters(&before);
  std::vector<float> send(8), recv(8 * ranks);
  zrt_all_gather(ZRT_DTYPE_F32, send.data(), recv.data(), 8);
  zrt_all_reduce(ZRT_DTYPE_F32, recv.data(), recv.data(), 8 * ranks, 0);
  zrt_get_counters(&after);
  EXPECT_EQ(after.calls[0] - before.calls[0], 1);
  EXPECT_EQ(after.calls[2] - before.calls[2], 1);
  EXPECT_EQ(after.bytes_sent[0] - before.bytes_sent[0], (ranks - 1) * 8 * 4);
  EXPECT_EQ(after.bytes_sent[2] - before.bytes_sent[2], 2 * (ranks - 1) * 8 * 4);
  EXPECT_GE(after.wait_seconds, before.wait_seconds);
}

TEST_F(Collectives, ArenaHandsOutCheckedOffsets) {
  char *base = static_cast<char *>(zrt_arena_ptr(0, 0));
  EXPECT_EQ(zrt_arena_ptr(128, 64), base + 128);
  zrt_counters c;
  zrt_get_counters(&c);
  EXPECT_EQ(c.arena_bytes, 1 << 16);
  EXPECT_GE(c.arena_high_water, 192);
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  zrt_init(worldFromLauncher(), 1 << 16);
  // Only rank 0 prints gtest's report, so the ctest log reads once.
  if (zrt_rank() != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int result = RUN_ALL_TESTS();
  zrt_finalize();
  return result;
}
