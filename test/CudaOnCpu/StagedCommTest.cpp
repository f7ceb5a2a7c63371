// The CUDA backend's MPI transport (runtime/cuda/HostStagedCommunicator.h: ranks that share a GPU or
// have no NCCL) on the shim's streams, under mpirun -np 2 and 3: every collective on device buffers
// against values computed here, in and out of place, f32 and bf16, sum and average, ZeRO's padded
// reduce-scatter, a split group and a split onto another stream, chained calls with no host wait
// between them (the stream must order them), point to point, ring attention's exchange and expert
// parallelism's (several messages per peer); and
// train.bin --comm's choice (runtime/cuda/CommChoice.h).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "core/Communicator.h"
#include "cuda/CommChoice.h"
#include "cuda/HostStagedCommunicator.h"
#include "zrt/bf16.h"

namespace {

using zrt::Collective;
using zrt::CollectiveArgs;

zrt::cuda::StreamCommunicator *comm = nullptr;
cudaStream_t stream = nullptr;

/// A device buffer holding `values`.
template <class T> T *onDevice(const std::vector<T> &values) {
  T *p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, values.size() * sizeof(T) + 1), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(p, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return p;
}
/// `n` values of a device buffer, after the stream's work.
template <class T> std::vector<T> fromDevice(const T *p, size_t n, cudaStream_t s = stream) {
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  std::vector<T> out(n);
  EXPECT_EQ(cudaMemcpy(out.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

CollectiveArgs args(Collective kind, int32_t dtype, const void *send, void *recv, int64_t count, bool average = false,
                    int32_t root = 0, int64_t total = -1) {
  return CollectiveArgs{kind, dtype, send, recv, count, average, root, total, 0};
}

class StagedComm : public ::testing::Test {
protected:
  int rank = comm->rank(), ranks = comm->size();
};

TEST_F(StagedComm, AllGatherOutOfPlaceAndInPlace) {
  const int64_t count = 5;
  std::vector<float> mine(count);
  for (int64_t i = 0; i < count; ++i)
    mine[i] = rank * 100.f + i;
  float *send = onDevice(mine);
  float *recv = onDevice(std::vector<float>(count * ranks + 1, -1.f));
  comm->run(args(Collective::AllGather, 0, send, recv, count));
  std::vector<float> got = fromDevice(recv, count * ranks + 1);
  for (int r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < count; ++i)
      EXPECT_EQ(got[r * count + i], r * 100.f + i);
  EXPECT_EQ(got[count * ranks], -1.f) << "wrote past the gathered buffer";

  // In place: this rank's slice is already where it belongs (ZeRO-3's parameter gather).
  std::vector<float> whole(count * ranks, -7.f);
  for (int64_t i = 0; i < count; ++i)
    whole[rank * count + i] = mine[i];
  float *inPlace = onDevice(whole);
  comm->run(args(Collective::AllGather, 0, inPlace + rank * count, inPlace, count));
  got = fromDevice(inPlace, count * ranks);
  for (int r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < count; ++i)
      EXPECT_EQ(got[r * count + i], r * 100.f + i);
  cudaFree(send), cudaFree(recv), cudaFree(inPlace);
}

TEST_F(StagedComm, ReduceScatterSumAverageAndPadding) {
  const int64_t count = 4;
  std::vector<float> values(count * ranks);
  for (int64_t j = 0; j < count * ranks; ++j)
    values[j] = rank + j;
  float *send = onDevice(values);
  float *sum = onDevice(std::vector<float>(count));
  float *avg = onDevice(std::vector<float>(count));
  comm->run(args(Collective::ReduceScatter, 0, send, sum, count));
  comm->run(args(Collective::ReduceScatter, 0, send, avg, count, /*average=*/true));
  std::vector<float> s = fromDevice(sum, count), a = fromDevice(avg, count);
  for (int64_t i = 0; i < count; ++i) {
    const float expected = ranks * (rank * count + i) + ranks * (ranks - 1) / 2.0f;
    EXPECT_EQ(s[i], expected);
    EXPECT_FLOAT_EQ(a[i], expected / ranks);
  }
  // ZeRO's padding: the send holds `total` values, the rest count as zeros.
  const int64_t total = count * ranks - 3;
  float *padded = onDevice(std::vector<float>(values.begin(), values.begin() + total));
  float *shard = onDevice(std::vector<float>(count, 99.f));
  comm->run(args(Collective::ReduceScatter, 0, padded, shard, count, false, 0, total));
  s = fromDevice(shard, count);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t j = rank * count + i;
    const float expected = j < total ? ranks * j + ranks * (ranks - 1) / 2.0f : 0.f;
    EXPECT_EQ(s[i], expected) << "element " << j << " of " << total;
  }
  cudaFree(send), cudaFree(sum), cudaFree(avg), cudaFree(padded), cudaFree(shard);
}

TEST_F(StagedComm, AllReduceF32AndBf16InPlace) {
  const int64_t count = 7;
  std::vector<float> values(count);
  std::vector<zrt::bf16> halves(count);
  for (int64_t i = 0; i < count; ++i) {
    values[i] = (rank + 1) * 0.5f + i;
    halves[i] = zrt::bf16((rank + 1) * 0.5f + i);
  }
  float *f = onDevice(values);
  zrt::bf16 *h = onDevice(halves);
  comm->run(args(Collective::AllReduce, 0, f, f, count, /*average=*/true));
  comm->run(args(Collective::AllReduce, 1, h, h, count));
  std::vector<float> gotF = fromDevice(f, count);
  std::vector<zrt::bf16> gotH = fromDevice(h, count);
  for (int64_t i = 0; i < count; ++i) {
    const float sum = 0.5f * ranks * (ranks + 1) / 2.0f + ranks * i;
    EXPECT_FLOAT_EQ(gotF[i], sum / ranks);
    EXPECT_NEAR(static_cast<float>(gotH[i]), sum, sum * 1e-2f) << "bf16 element " << i;
  }
  cudaFree(f), cudaFree(h);
}

TEST_F(StagedComm, BroadcastFromTheLastRank) {
  const int64_t count = 6;
  std::vector<float> values(count, static_cast<float>(rank));
  float *buf = onDevice(values);
  comm->run(args(Collective::Broadcast, 0, buf, buf, count, false, /*root=*/ranks - 1));
  for (float v : fromDevice(buf, count))
    EXPECT_EQ(v, ranks - 1.f);
  cudaFree(buf);
}

TEST_F(StagedComm, AllToAll) {
  const int64_t block = 3;
  std::vector<float> values(block * ranks);
  for (int p = 0; p < ranks; ++p)
    for (int64_t i = 0; i < block; ++i)
      values[p * block + i] = rank * 1000.f + p * 10 + i; // rank's block p goes to rank p
  float *send = onDevice(values);
  float *recv = onDevice(std::vector<float>(block * ranks));
  comm->run(args(Collective::AllToAll, 0, send, recv, block));
  std::vector<float> got = fromDevice(recv, block * ranks);
  for (int r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < block; ++i)
      EXPECT_EQ(got[r * block + i], r * 1000.f + rank * 10 + i);
  cudaFree(send), cudaFree(recv);
}

TEST_F(StagedComm, ChainedCallsAreOrderedByTheStream) {
  // Each all-reduce reads the previous one's result straight from the device: nothing waits on the
  // host between them but what the communicator does itself.
  const int64_t count = 1000;
  float *buf = onDevice(std::vector<float>(count, 1.f));
  for (int k = 0; k < 5; ++k)
    comm->run(args(Collective::AllReduce, 0, buf, buf, count));
  float expected = 1;
  for (int k = 0; k < 5; ++k)
    expected *= ranks;
  std::vector<float> got = fromDevice(buf, count);
  EXPECT_EQ(got, std::vector<float>(count, expected));
  cudaFree(buf);
}

TEST_F(StagedComm, SplitGroupsAndAnotherStream) {
  // Even and odd ranks; the odd group on a stream of its own, as a pipeline's communicators are.
  cudaStream_t other = nullptr;
  EXPECT_EQ(cudaStreamCreate(&other), cudaSuccess);
  std::unique_ptr<zrt::Communicator> group =
      rank % 2 ? comm->splitOn(1, rank, other) : comm->split(0, rank);
  if (!group) {
    ADD_FAILURE() << "no group for color " << rank % 2;
    return; // nothing collective follows on this group
  }
  float *buf = onDevice(std::vector<float>(4, static_cast<float>(rank)));
  group->run(args(Collective::AllReduce, 0, buf, buf, 4));
  float expected = 0;
  for (int r = rank % 2; r < ranks; r += 2)
    expected += r;
  for (float v : fromDevice(buf, 4, rank % 2 ? other : stream))
    EXPECT_EQ(v, expected);
  std::unique_ptr<zrt::Communicator> none = comm->split(rank == 0 ? -1 : 0, rank);
  EXPECT_EQ(none == nullptr, rank == 0) << "a negative color joins no group";
  if (none)
    none->finalize();
  group->finalize();
  cudaFree(buf);
  cudaStreamDestroy(other);
}

TEST_F(StagedComm, PointToPointAndRingExchange) {
  const int64_t bytes = 64 * sizeof(float);
  const int next = (rank + 1) % ranks, previous = (rank + ranks - 1) % ranks;
  std::vector<float> mine(64);
  for (int i = 0; i < 64; ++i)
    mine[i] = rank * 64.f + i;
  float *send = onDevice(mine);
  float *recv = onDevice(std::vector<float>(64, -1.f));
  // A pipeline's hand-off down the ranks: every rank but the last sends, every rank but the first
  // receives; the send's buffer may change as soon as the call returns.
  if (rank + 1 < ranks)
    comm->sendAsync(send, bytes, rank + 1);
  EXPECT_EQ(cudaMemsetAsync(send, 0, bytes, stream), cudaSuccess);
  // EXPECT, not ASSERT, here and below: a rank that left the test early would leave the others
  // waiting in the next exchange.
  std::vector<float> expected(64);
  if (rank > 0) {
    comm->recv(recv, bytes, rank - 1);
    for (int i = 0; i < 64; ++i)
      expected[i] = (rank - 1) * 64.f + i;
    EXPECT_EQ(fromDevice(recv, 64), expected);
  }
  comm->flushSends();
  // Ring attention's step: everyone sends to the next and receives from the previous at once.
  float *ring = onDevice(mine);
  comm->sendRecv(ring, recv, bytes, next, previous);
  for (int i = 0; i < 64; ++i)
    expected[i] = previous * 64.f + i;
  EXPECT_EQ(fromDevice(recv, 64), expected);
  cudaFree(send), cudaFree(recv), cudaFree(ring);
}

// Expert parallelism's exchange: several messages to each peer of different sizes (one empty,
// which neither side lists), each landing at its own place, in the order both sides list them.
TEST_F(StagedComm, ExchangeOfSeveralMessagesPerPeer) {
  // Rank s sends rank p (p != s) messages k = 0, 1, 2 of (s + p + k) % 3 + 1 units, skipping k = 1
  // when s + p is even (an empty run); each unit is 2 floats: s, p, k and the unit index encoded.
  const int64_t unit = 2;
  auto units = [](int s, int p, int k) { return k == 1 && (s + p) % 2 == 0 ? 0 : (s + p + k) % 3 + 1; };
  auto value = [](int s, int p, int k, int64_t u, int64_t i) { return s * 1000.f + p * 100 + k * 10 + u * 2 + i; };
  std::vector<float> out, in;
  std::vector<zrt::cuda::PeerMessage> sends, recvs;
  struct Placed {
    int peer, k;
    int64_t at, units;
  };
  std::vector<Placed> sent, received;
  for (int p = 0; p < ranks; ++p)
    for (int k = 0; k < 3; ++k) {
      if (p == rank)
        continue;
      if (const int64_t n = units(rank, p, k); n > 0) {
        sent.push_back({p, k, static_cast<int64_t>(out.size()), n});
        for (int64_t u = 0; u < n; ++u)
          for (int64_t i = 0; i < unit; ++i)
            out.push_back(value(rank, p, k, u, i));
      }
    }
  // Received in reverse peer order, into a buffer with a gap after each message.
  int64_t at = 0;
  for (int s = ranks - 1; s >= 0; --s)
    for (int k = 0; k < 3; ++k)
      if (const int64_t n = s == rank ? 0 : units(s, rank, k); n > 0) {
        received.push_back({s, k, at, n});
        at += n * unit + 1;
      }
  float *send = onDevice(out.empty() ? std::vector<float>(1) : out);
  float *recv = onDevice(std::vector<float>(at + 1, -1.f));
  for (const Placed &m : sent)
    sends.push_back({send + m.at, m.units, m.peer});
  for (const Placed &m : received)
    recvs.push_back({recv + m.at, m.units, m.peer});
  comm->exchange(sends, recvs, unit * sizeof(float));
  const std::vector<float> got = fromDevice(recv, at + 1);
  for (const Placed &m : received) {
    for (int64_t u = 0; u < m.units; ++u)
      for (int64_t i = 0; i < unit; ++i)
        EXPECT_EQ(got[m.at + u * unit + i], value(m.peer, rank, m.k, u, i)) << "from rank " << m.peer << ", message "
                                                                           << m.k;
    EXPECT_EQ(got[m.at + m.units * unit], -1.f) << "wrote past message " << m.k << " from rank " << m.peer;
  }
  cudaFree(send), cudaFree(recv);
}

TEST(CommChoice, AutoTakesNcclOnlyWithADevicePerRank) {
  using zrt::cuda::chooseComm;
  using zrt::cuda::CommTransport;
  EXPECT_EQ(chooseComm(nullptr, 4, 4, true).transport, CommTransport::Nccl);
  EXPECT_EQ(chooseComm("auto", 0, 1, true).transport, CommTransport::Nccl) << "the launcher did not say";
  const zrt::cuda::CommChoice shared = chooseComm("auto", 4, 1, true);
  EXPECT_EQ(shared.transport, CommTransport::Mpi);
  EXPECT_NE(shared.why.find("4 ranks on this node share 1 device"), std::string::npos) << shared.why;
  EXPECT_EQ(chooseComm("auto", 2, 2, false).transport, CommTransport::Mpi) << "no NCCL built";
  EXPECT_EQ(chooseComm("mpi", 1, 8, true).transport, CommTransport::Mpi);
  EXPECT_EQ(chooseComm("nccl", 2, 2, true).transport, CommTransport::Nccl);
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::unique_ptr<zrt::Communicator> mpi = zrt::createMpiCommunicator(&argc, &argv);
  if (cudaStreamCreate(&stream) != cudaSuccess)
    return 1;
  std::unique_ptr<zrt::cuda::StreamCommunicator> staged = zrt::cuda::createHostStagedCommunicator(std::move(mpi), stream);
  comm = staged.get();
  if (comm->rank() != 0) { // rank 0 alone prints gtest's report
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int result = RUN_ALL_TESTS();
  comm->finalize();
  cudaStreamDestroy(stream);
  return result;
}
