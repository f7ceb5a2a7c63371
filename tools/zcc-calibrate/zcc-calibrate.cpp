// zcc-calibrate: measures the runtime's collectives on this machine and writes the cost
// model zcc reads (--cost-model FILE): for each kind, seconds = alpha + bytes_sent / bw,
// fitted by least squares over message sizes from 4 KiB to 16 MiB.
//
//   mpirun -np 4 zcc-calibrate --world-size 4 -o cost.json
//
// Every rank runs the same calls (the runtime checks it); rank 0 writes the file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "zrt/zrt.h"

namespace {

struct Fit {
  double alpha = 0, bytesPerSecond = 0;
};

/// t = alpha + x / bw: the bandwidth from the slope between the two largest sizes
/// (where latency no longer matters), alpha from the smallest size (where it is
/// nearly all there is). A least-squares line over sizes spanning four orders of
/// magnitude would fit the large ones and leave alpha to noise.
Fit fitLine(const std::vector<double> &x, const std::vector<double> &t) {
  const size_t n = x.size();
  Fit fit;
  double slope = (t[n - 1] - t[n - 2]) / (x[n - 1] - x[n - 2]);
  if (!(slope > 0))
    slope = t[n - 1] / x[n - 1];
  fit.bytesPerSecond = 1.0 / slope;
  fit.alpha = std::max(t[0] - x[0] * slope, 0.0);
  return fit;
}

} // namespace

int main(int argc, char **argv) {
  long long worldSize = 1;
  std::string output;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--world-size" && i + 1 < argc)
      worldSize = std::atoll(argv[++i]);
    else if (a == "-o" && i + 1 < argc)
      output = argv[++i];
    else {
      std::fprintf(stderr, "usage: mpirun -np N zcc-calibrate --world-size N -o FILE\n");
      return 2;
    }
  }
  if (output.empty() || worldSize < 1) {
    std::fprintf(stderr, "usage: mpirun -np N zcc-calibrate --world-size N -o FILE\n");
    return 2;
  }
  const int64_t maxElements = 4 << 20; // 16 MiB of f32 per buffer
  char *arena = static_cast<char *>(zrt_init(worldSize, 2 * maxElements * 4 * worldSize + 4096));
  const int rank = zrt_rank(), ranks = zrt_world_size();
  float *send = reinterpret_cast<float *>(arena);
  float *recv = send + maxElements * ranks;
  std::memset(arena, 0, 2 * maxElements * 4 * ranks);

  const char *names[3] = {"all_gather", "reduce_scatter", "all_reduce"};
  Fit fits[3];
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<double> sent, seconds;
    for (int64_t bytes = 4096; bytes <= int64_t(16) << 20; bytes *= 4) {
      const int64_t count = bytes / 4; // elements of the whole tensor
      const int64_t shard = std::max<int64_t>(1, count / ranks);
      auto once = [&] {
        if (kind == 0)
          zrt_all_gather(ZRT_DTYPE_F32, send, recv, shard);
        else if (kind == 1)
          zrt_reduce_scatter(ZRT_DTYPE_F32, send, recv, shard, 1);
        else
          zrt_all_reduce(ZRT_DTYPE_F32, send, recv, count, 1);
      };
      once(); // warm-up
      const int reps = bytes >= (4 << 20) ? 5 : 20;
      auto start = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r)
        once();
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / reps;
      // Collectives synchronize the ranks, so rank 0's time is the collective's.
      double b = kind == 2 ? 2.0 * (ranks - 1) * count * 4 / ranks : double(ranks - 1) * shard * 4;
      sent.push_back(b);
      seconds.push_back(t);
    }
    fits[kind] = fitLine(sent, seconds);
    if (rank == 0 && std::getenv("ZCC_CALIBRATE_VERBOSE"))
      for (size_t i = 0; i < sent.size(); ++i)
        std::printf("%s: %12.0f bytes sent  %10.1f us\n", names[kind], sent[i], seconds[i] * 1e6);
  }
  // Compute throughput: a 512^3 f32 matmul through the runtime's kernel.
  double flopsPerSecond = 0;
  {
    const int64_t n = 512;
    std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
    zrt_matmul(ZRT_DTYPE_F32, a.data(), b.data(), c.data(), 1, n, n, n, 0, 0, 0);
    const int reps = 10;
    auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r)
      zrt_matmul(ZRT_DTYPE_F32, a.data(), b.data(), c.data(), 1, n, n, n, 0, 0, 0);
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / reps;
    flopsPerSecond = 2.0 * n * n * n / t;
  }
  if (rank == 0) {
    FILE *f = std::fopen(output.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "zcc-calibrate: cannot write %s\n", output.c_str());
      return 1;
    }
    std::fprintf(f, "{\n  \"format\": 1,\n  \"world_size\": %d", ranks);
    for (int kind = 0; kind < 3; ++kind)
      std::fprintf(f, ",\n  \"%s\": {\"alpha_s\": %.3e, \"bytes_per_s\": %.4e}", names[kind],
                   fits[kind].alpha, fits[kind].bytesPerSecond);
    std::fprintf(f, ",\n  \"compute\": {\"flops_per_s\": %.4e}\n}\n", flopsPerSecond);
    std::fclose(f);
    for (int kind = 0; kind < 3; ++kind)
      std::printf("%-15s alpha %8.1f us  bandwidth %8.2f GB/s\n", names[kind], fits[kind].alpha * 1e6,
                  fits[kind].bytesPerSecond / 1e9);
    std::printf("compute         %8.1f GFLOP/s (f32 matmul, one rank)\n", flopsPerSecond / 1e9);
  }
  zrt_finalize();
  return 0;
}
