// The communicator of a single-rank run (no launcher): every collective is a copy.
#include "core/Communicator.h"

#include <cstdlib>
#include <initializer_list>
#include <cstring>

#include "core/Error.h"

namespace zrt {

const char *collectiveName(Collective kind) {
  switch (kind) {
  case Collective::AllGather:
    return "zrt_all_gather";
  case Collective::ReduceScatter:
    return "zrt_reduce_scatter";
  case Collective::AllReduce:
    return "zrt_all_reduce";
  case Collective::Broadcast:
    return "zrt_broadcast";
  case Collective::AllToAll:
    return "zrt_all_to_all";
  }
  return "zrt_collective";
}

size_t dtypeSize(int32_t dtype) { return dtype == 2 ? 1 : dtype == 1 ? 2 : 4; }

int64_t ringBytesSent(const CollectiveArgs &a, int ranks, int rank) {
  int64_t bytes = a.count * static_cast<int64_t>(dtypeSize(a.dtype));
  switch (a.kind) {
  case Collective::AllGather:
  case Collective::ReduceScatter:
  case Collective::AllToAll:
    return (ranks - 1) * bytes;
  case Collective::AllReduce:
    return 2 * (ranks - 1) * bytes / ranks;
  case Collective::Broadcast:
    return rank == a.root && ranks > 1 ? bytes : 0;
  }
  return 0;
}

LinkBytes linkBytesSent(const CollectiveArgs &a, const int *nodes, int ranks, int rank) {
  LinkBytes out;
  if (ranks < 2)
    return out;
  if (a.kind == Collective::AllToAll) {
    const int64_t block = a.count * static_cast<int64_t>(dtypeSize(a.dtype));
    for (int p = 0; p < ranks; ++p)
      if (p != rank)
        (nodes[p] == nodes[rank] ? out.inNode : out.crossNode) += block;
    return out;
  }
  const int64_t bytes = ringBytesSent(a, ranks, rank);
  (nodes[(rank + 1) % ranks] == nodes[rank] ? out.inNode : out.crossNode) += bytes;
  return out;
}

int launcherLocalRanks() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"})
    if (const char *v = std::getenv(name); v && std::atoi(v) > 0)
      return std::atoi(v);
  return 0;
}

bool launchedByMpi() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(name))
      return true;
  return false;
}

namespace {
class LocalCommunicator final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void run(const CollectiveArgs &args) override {
    size_t size = dtypeSize(args.dtype), bytes = static_cast<size_t>(args.count) * size;
    size_t valid = args.kind == Collective::ReduceScatter && args.total >= 0 && args.total < args.count
                       ? static_cast<size_t>(args.total) * size
                       : bytes;
    if (valid && args.send != args.recv && args.kind != Collective::Broadcast)
      std::memmove(args.recv, args.send, valid);
    if (valid < bytes) // a padded shard's tail
      std::memset(static_cast<char *>(args.recv) + valid, 0, bytes - valid);
  }
  void checkAgreement(const CollectiveArgs &, int64_t) override {}
  std::unique_ptr<Communicator> split(int, int) override { return std::make_unique<LocalCommunicator>(); }
  void sendAsync(const void *, int64_t, int peer) override {
    fatal("zrt_pipe_send", "stage %d does not exist: a group of one rank has no peer", peer);
  }
  void recv(void *, int64_t, int peer) override {
    fatal("zrt_pipe_recv", "stage %d does not exist: a group of one rank has no peer", peer);
  }
  void flushSends() override {}
  [[noreturn]] void abortAll(int exitCode) override { std::exit(exitCode); }
  void finalize() override {}
};
} // namespace

std::unique_ptr<Communicator> createLocalCommunicator() {
  return std::make_unique<LocalCommunicator>();
}

#ifndef ZRT_HAVE_MPI
std::unique_ptr<Communicator> createMpiCommunicator(int *, char ***) {
  fatal("zrt_init", "started by an MPI launcher, but this runtime was built without MPI "
                    "(ZCC_ENABLE_MPI=OFF)");
}
#endif

} // namespace zrt
