// train.bin's command line: every flag, its default and its check. A bad value is a message
// naming the flag and exit status 2, before the runtime starts.
#ifndef ZRT_MAIN_FLAGS_H
#define ZRT_MAIN_FLAGS_H

#include <cstdint>
#include <string>

namespace zrt::train {

struct Flags {
  std::string data, dataDtype, dataOrder = "sequential", evalData, logJson, initWeights, init, exportWeights, trace, ckptDir,
      schedule = "constant", nonfinite = "stop", nvmePath;
  std::string comm; // CUDA backend: nccl, mpi or auto (empty: ZRT_COMM, else auto)
  bool synthetic = false, resume = false, describe = false, overrideSchedule = false, cudaGraphs = true;
  int64_t steps = 100, warmup = 0, logEvery = 10, ckptEvery = 0, ckptKeep = 2, evalEvery = 100, evalIters = 10;
  double commTimeout = 600;
  double ckptLeaseWait = 60; // seconds to wait for another job holding --ckpt-dir
  int64_t ranksPerNode = 0; // world ranks per physical node, for the link counters (0: the launcher's)
  uint64_t seed = 1337;
  double lr = -1, minLr = -1; // -1: lr / 10
  double moeBiasUpdateRate = 1e-3; // the balancing bias's step (main/ExpertBias.h)
  int64_t decaySteps = -1, wsdDecaySteps = -1; // -1: the last step; WSD: a fifth of the horizon
};

/// Parses argv; --help prints the usage and exits 0, a bad flag or value exits 2 with a message.
Flags parseFlags(int argc, char **argv);

} // namespace zrt::train

#endif // ZRT_MAIN_FLAGS_H
