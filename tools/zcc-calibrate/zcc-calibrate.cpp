// zcc-calibrate: measures the runtime's collectives and kernels on this machine and writes
//  - the collective cost model zcc's passes read (-o cost.json, --cost-model FILE): for each
//    kind, seconds = alpha + bytes_sent / bw;
//  - with --cluster-out FILE, this machine as a cluster description for zcc --simulate and
//    --plan auto (docs/simulator.md): every rank is a device of one node; the matmul and
//    bandwidth-bound curves, attention's rate and the collectives are measured with all ranks
//    running at once, so ranks that share cores are priced as they run.
//
//   mpirun -np 4 zcc-calibrate --world-size 4 -o cost.json [--cluster-out cpu.json]
//
// Every rank runs the same calls (the runtime checks it); rank 0 writes the files.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

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

/// Seconds of one call of `f`, every rank calling it at once (a collective first): the median of
/// three windows of at least 20 ms each, every window's calls back to back. Windows rather than
/// single calls: where ranks outnumber cores, the scheduler shares a core between them by time
/// slices of milliseconds, which a call shorter than a slice would not see.
template <typename F> double timeCall(F f, int minCalls) {
  f();
  std::vector<double> t;
  for (int window = 0; window < 3; ++window) {
    auto start = std::chrono::steady_clock::now();
    int calls = 0;
    double elapsed = 0;
    do {
      f();
      ++calls;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (calls < minCalls || elapsed < 0.02);
    t.push_back(elapsed / calls);
  }
  std::sort(t.begin(), t.end());
  return t[1];
}

/// Points of a curve: (size, rate), and the best rate.
struct Measured {
  std::vector<std::pair<double, double>> points;
  double best = 0;
};

struct ClusterMeasurements {
  Measured matmulF32, matmulBf16, memory;
  double attentionForward = 0, attentionBackward = 0; // FLOP/s, causal half counted: the best
  std::vector<std::pair<double, double>> attentionForwardCurve, attentionBackwardCurve; // (FLOPs, FLOP/s)
  double kernelOverhead = 0, copyBytesPerSecond = 0;
  std::string matmulPaths; // how the products' paths were chosen (zrt_plan_matmuls' line)
};

/// The runtime's own kernels at sizes from a few microseconds to tens of milliseconds.
ClusterMeasurements measureCluster(int ranks) {
  ClusterMeasurements m;
  float sync = 0, sink = 0;
  auto barrier = [&] { zrt_all_reduce(ZRT_DTYPE_F32, &sync, &sink, 1, 0); };
  // Matmuls: m x k by k x n, square and the shapes of a transformer's projections.
  const std::vector<std::array<int64_t, 3>> shapes = {{16, 64, 64},    {64, 64, 64},     {64, 128, 128},
                                                      {128, 256, 256}, {256, 384, 384},  {512, 384, 1152},
                                                      {512, 512, 512}, {1024, 768, 768}, {2048, 1024, 1024}};
  // The three products a linear layer runs: forward, input gradient (B transposed), weight
  // gradient (A transposed).
  const std::array<std::pair<int32_t, int32_t>, 3> transposes = {{{0, 0}, {0, 1}, {1, 0}}};
  // Each product timed on the path train.bin runs it on: train.bin plans every product of its
  // program before the first step (zrt_plan_matmuls: the path measured fastest on this machine,
  // cached), where an unplanned call takes the rule's path, 5-17% more CPU time per pipeline
  // stage here (docs/simulator.md).
  std::vector<int64_t> products;
  for (int32_t dtype : {ZRT_DTYPE_F32, ZRT_DTYPE_BF16})
    for (auto [rows, inner, cols] : shapes)
      for (auto [ta, tb] : transposes)
        products.insert(products.end(), {ZRT_MATMUL_PLAIN, dtype, 1, rows, cols, inner, ta, tb, 0});
  char planLine[1024];
  zrt_plan_matmuls(products.data(), static_cast<int64_t>(products.size() / ZRT_MATMUL_ROW), nullptr, planLine,
                   sizeof planLine);
  m.matmulPaths = planLine;
  for (int32_t dtype : {ZRT_DTYPE_F32, ZRT_DTYPE_BF16}) {
    Measured &out = dtype == ZRT_DTYPE_F32 ? m.matmulF32 : m.matmulBf16;
    for (const auto &shape : shapes) {
      const int64_t rows = shape[0], inner = shape[1], cols = shape[2];
      std::vector<float> a(std::max(rows, cols) * inner, 0.5f), b(inner * std::max(rows, cols), 0.25f),
          c(std::max(rows, cols) * std::max(inner, cols));
      barrier();
      double flops = 2.0 * rows * inner * cols;
      // Each of the three at this call's FLOPs.
      double t = 0;
      for (const auto &transpose : transposes) {
        const int32_t ta = transpose.first, tb = transpose.second;
        t += timeCall([&] { zrt_matmul(dtype, a.data(), b.data(), c.data(), 1, rows, cols, inner, ta, tb, 0); }, 1);
      }
      t /= 3;
      out.points.push_back({flops, flops / t});
      out.best = std::max(out.best, flops / t);
    }
  }
  // Bandwidth-bound: the row kernels a block runs between its matmuls, an add (two read, one
  // written), GELU (one each way) and a layernorm over rows of 384 (one each way), priced
  // together: their bytes over their summed time, at each size.
  for (int64_t n = 3072; n <= (int64_t(12) << 20); n *= 4) {
    std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n), gamma(384, 1.0f), beta(384, 0.0f);
    barrier();
    const int reps = 1;
    double t = timeCall([&] { zrt_add(ZRT_DTYPE_F32, a.data(), b.data(), c.data(), n); }, reps) +
               timeCall([&] { zrt_gelu(ZRT_DTYPE_F32, a.data(), c.data(), n); }, reps) +
               timeCall([&] { zrt_layernorm(ZRT_DTYPE_F32, a.data(), gamma.data(), beta.data(), c.data(), n / 384, 384,
                                            1e-5); }, reps);
    double bytes = (12.0 + 8.0 + 8.0) * n;
    m.memory.points.push_back({bytes / 3, bytes / t}); // x: one kernel's bytes
    m.memory.best = std::max(m.memory.best, bytes / t);
  }
  {
    std::vector<float> a(16, 1.0f), b(16, 2.0f), c(16);
    m.kernelOverhead = timeCall([&] { zrt_add(ZRT_DTYPE_F32, a.data(), b.data(), c.data(), 16); }, 1);
    const int64_t n = int64_t(16) << 20;
    std::vector<float> src(n, 1.0f), dst(n);
    barrier();
    m.copyBytesPerSecond = 8.0 * n / timeCall([&] { zrt_copy(ZRT_DTYPE_F32, src.data(), dst.data(), n); }, 1);
  }
  // Causal attention (2BT^2C forward, 2.5x that backward) at the sizes of small GPT blocks:
  // its rate grows with the context and the head size. The curves' sizes are the FLOPs of one
  // (sequence, head) pair, 2 T^2 D forward, as the simulator looks them up.
  for (auto [batch, time, channels, heads] : std::vector<std::array<int64_t, 4>>{
           {4, 64, 128, 4}, {4, 128, 256, 8}, {2, 256, 384, 6}, {1, 512, 512, 8}}) {
    const int64_t elements = batch * time * channels;
    std::vector<float> q(elements, 0.01f), k(elements, 0.02f), v(elements, 0.03f), out(elements), dq(elements),
        dk(elements), dv(elements);
    const double forward = 2.0 * batch * time * time * channels;
    barrier();
    double f = forward / timeCall([&] {
      zrt_causal_attention(ZRT_DTYPE_F32, q.data(), k.data(), v.data(), out.data(), batch, time, channels, heads, heads, 0.0, 0.0, 0);
    }, 1);
    barrier();
    double b = 2.5 * forward / timeCall([&] {
      zrt_causal_attention_grad(ZRT_DTYPE_F32, out.data(), q.data(), k.data(), v.data(), dq.data(), dk.data(),
                                dv.data(), batch, time, channels, heads, heads, 0.0, 0.0, 0);
    }, 1);
    const double pairs = double(batch * heads);
    m.attentionForwardCurve.push_back({forward / pairs, f});
    m.attentionBackwardCurve.push_back({2.5 * forward / pairs, b});
    m.attentionForward = std::max(m.attentionForward, f);
    m.attentionBackward = std::max(m.attentionBackward, b);
  }
  (void)ranks;
  return m;
}

/// The curve as efficiencies of its best point, sizes increasing and distinct (the shapes are
/// listed as a transformer has them, not by size: sorted here, so no point is dropped).
std::string curveJson(const Measured &m) {
  std::string text = "[";
  double last = 0;
  std::vector<std::pair<double, double>> points = m.points;
  std::sort(points.begin(), points.end());
  for (auto [size, rate] : points) {
    if (size <= last)
      continue;
    char point[64];
    std::snprintf(point, sizeof point, "%s[%.4g, %.4f]", text.size() > 1 ? ", " : "", size,
                  std::min(1.0, std::max(1e-4, rate / m.best)));
    text += point;
    last = size;
  }
  return text + "]";
}

bool writeCluster(const std::string &path, const ClusterMeasurements &m, const Fit *fits, int ranks) {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f)
    return false;
  const double memory = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  char host[256] = "this machine";
  gethostname(host, sizeof host - 1);
  std::fprintf(f, "{\n  \"format\": 1,\n  \"name\": \"calibrated-np%d\",\n", ranks);
  std::string paths; // the line ends with the cache's file name, the user's: nothing JSON must escape
  for (char c : m.matmulPaths)
    if (c != '"' && c != '\\')
      paths += c;
  std::fprintf(f, "  \"description\": \"%s: %d ranks of the CPU backend (zcc-calibrate; matmul paths: %s)\",\n",
               host, ranks, paths.c_str());
  std::fprintf(f,
               "  \"node\": {\"devices\": %d, \"host_memory_bytes\": %.6g, \"host_link_bytes_per_s\": %.6g, "
               "\"nvme_read_bytes_per_s\": 1.05e9, \"nvme_write_bytes_per_s\": 2.45e9, \"cores\": %ld},\n",
               ranks, memory, m.copyBytesPerSecond, sysconf(_SC_NPROCESSORS_ONLN));
  std::fprintf(f, "  \"device\": {\n    \"memory_bytes\": %.6g,\n    \"memory_bytes_per_s\": %.6g,\n",
               memory / ranks, m.memory.best);
  std::fprintf(f, "    \"peak_flops\": {\"f32\": %.6g, \"bf16\": %.6g},\n", m.matmulF32.best, m.matmulBf16.best);
  std::fprintf(f, "    \"matmul_efficiency\": %s,\n", curveJson(m.matmulF32).c_str());
  std::fprintf(f, "    \"matmul_efficiency_bf16\": %s,\n", curveJson(m.matmulBf16).c_str());
  std::fprintf(f, "    \"memory_efficiency\": %s,\n", curveJson(m.memory).c_str());
  // Attention's rates as fractions of the matmul peak, by the FLOPs of one call.
  auto attention = [&](const std::vector<std::pair<double, double>> &points) {
    Measured curve;
    curve.best = m.matmulF32.best;
    curve.points = points;
    return curveJson(curve);
  };
  std::fprintf(f,
               "    \"attention_efficiency\": {\"forward\": %.4f, \"backward\": %.4f, \"forward_curve\": %s, "
               "\"backward_curve\": %s},\n",
               std::min(1.0, m.attentionForward / m.matmulF32.best), std::min(1.0, m.attentionBackward / m.matmulF32.best),
               attention(m.attentionForwardCurve).c_str(), attention(m.attentionBackwardCurve).c_str());
  std::fprintf(f, "    \"kernel_overhead_s\": %.4g\n  },\n", m.kernelOverhead);
  // One link level: every rank is on this node. Each collective kind as measured (bytes sent).
  std::fprintf(f, "  \"links\": {\n    \"intra_node\": {\"bytes_per_s\": %.6g, \"latency_s\": %.4g,\n",
               fits[0].bytesPerSecond, fits[0].alpha / std::max(1, ranks - 1));
  std::fprintf(f,
               "      \"collectives\": {\"all_gather\": {\"alpha_s\": %.4g, \"bytes_per_s\": %.6g}, "
               "\"reduce_scatter\": {\"alpha_s\": %.4g, \"bytes_per_s\": %.6g}, "
               "\"all_reduce\": {\"alpha_s\": %.4g, \"bytes_per_s\": %.6g}}},\n",
               fits[0].alpha, fits[0].bytesPerSecond, fits[1].alpha, fits[1].bytesPerSecond, fits[2].alpha,
               fits[2].bytesPerSecond);
  std::fprintf(f, "    \"inter_node\": {\"bytes_per_s\": %.6g, \"latency_s\": %.4g}\n  },\n", fits[0].bytesPerSecond,
               fits[0].alpha / std::max(1, ranks - 1));
  std::fprintf(f,
               "  \"sources\": {\"device\": \"zcc-calibrate: the runtime's kernels with %d ranks running at once; "
               "peaks are the best measured rates\", \"links\": \"zcc-calibrate: the runtime's collectives, 4 KiB "
               "to 16 MiB\", \"node.nvme_read_bytes_per_s\": \"fio on the reference machine (docs/cost-model.md)\"}\n}\n",
               ranks);
  return std::fclose(f) == 0;
}

} // namespace

int main(int argc, char **argv) {
  long long worldSize = 1;
  std::string output, clusterOutput;
  const char *usage = "usage: mpirun -np N zcc-calibrate --world-size N -o FILE [--cluster-out FILE]\n";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--world-size" && i + 1 < argc)
      worldSize = std::atoll(argv[++i]);
    else if (a == "-o" && i + 1 < argc)
      output = argv[++i];
    else if (a == "--cluster-out" && i + 1 < argc)
      clusterOutput = argv[++i];
    else {
      std::fprintf(stderr, "%s", usage);
      return 2;
    }
  }
  if (output.empty() || worldSize < 1) {
    std::fprintf(stderr, "%s", usage);
    return 2;
  }
  // One rank sends nothing: every collective's line fit would divide by zero bytes and write
  // nan into both files, which no JSON reader takes.
  if (worldSize < 2) {
    std::fprintf(stderr, "zcc-calibrate: --world-size %lld: the collectives need at least two ranks to time "
                         "(mpirun -np 2 zcc-calibrate --world-size 2 ...)\n", worldSize);
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
  const ClusterMeasurements cluster = clusterOutput.empty() ? ClusterMeasurements{} : measureCluster(ranks);
  if (rank == 0 && !clusterOutput.empty() && !writeCluster(clusterOutput, cluster, fits, ranks)) {
    std::fprintf(stderr, "zcc-calibrate: cannot write %s\n", clusterOutput.c_str());
    return 1;
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
