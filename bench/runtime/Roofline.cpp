// This machine's limits, measured: the FMA peak of one core (f32, at the widest vector ISA the
// CPU has, and at AVX2 for comparison), the bf16 dot-product peak where the CPU has AVX512-BF16
// (whether a native bf16 GEMM can beat the f32 one there) and the AMX tiles' bf16 peak where it has them, and memory bandwidth (a STREAM triad over arrays far
// beyond the caches) with one thread and with every core. Kernels and whole steps are reported
// against these figures (bench/peers_bench.py's "% of FMA peak", run_runtime_bench.sh).
//
// usage: zrt-roofline [--json]
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Independent chains of fused multiply-adds: enough of them (12) to cover the FMA latency on
// two ports, nothing but registers, so the loop runs at the core's FMA throughput.
constexpr int kChains = 12;

// Each call stores its result here: a side effect, so no call can be merged with an identical
// one or moved off the clocks that time it (noipa alone did not stop GCC 12 merging them).
volatile float gSink;

__attribute__((target("avx512f"), noipa)) float fmaChainsAvx512(long iters) {
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm512_set1_ps(float(j));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
  for (long i = 0; i < iters; ++i)
    for (int j = 0; j < kChains; ++j)
      acc[j] = _mm512_fmadd_ps(acc[j], a, b);
  __m512 sum = acc[0];
  for (int j = 1; j < kChains; ++j)
    sum = _mm512_add_ps(sum, acc[j]);
  gSink = _mm512_reduce_add_ps(sum);
  return gSink;
}

__attribute__((target("avx2,fma"), noipa)) float fmaChainsAvx2(long iters) {
  __m256 acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm256_set1_ps(float(j));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
  for (long i = 0; i < iters; ++i)
    for (int j = 0; j < kChains; ++j)
      acc[j] = _mm256_fmadd_ps(acc[j], a, b);
  __m256 sum = acc[0];
  for (int j = 1; j < kChains; ++j)
    sum = _mm256_add_ps(sum, acc[j]);
  float out[8];
  _mm256_storeu_ps(out, sum);
  gSink = out[0] + out[7];
  return gSink;
}

// bf16 pairs summed into f32 (vdpbf16ps: 16 lanes x 2 products, 64 flops an instruction).
__attribute__((target("avx512f,avx512bf16"), noipa)) float bf16DotChains(long iters) {
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm512_set1_ps(float(j));
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3380);
  for (long i = 0; i < iters; ++i)
    for (int j = 0; j < kChains; ++j)
      acc[j] = _mm512_dpbf16_ps(acc[j], a, b);
  __m512 sum = acc[0];
  for (int j = 1; j < kChains; ++j)
    sum = _mm512_add_ps(sum, acc[j]);
  gSink = _mm512_reduce_add_ps(sum);
  return gSink;
}

// AMX tiles (Sapphire Rapids and later): tdpbf16ps multiplies a 16 x 32 bf16 tile by a 32 x 16
// one into a 16 x 16 f32 tile, 16384 flops an instruction; four accumulators in flight. Linux
// hands out the tile registers only on request (arch_prctl ARCH_REQ_XCOMP_PERM).
constexpr int kAmxAccumulators = 4;
constexpr double kAmxFlops = 2.0 * 16 * 16 * 32;

struct TileConfig {
  uint8_t palette, startRow, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

bool amxUsable() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(edx & (1u << 22)) || !(edx & (1u << 24)))
    return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtileData = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtileData) == 0;
}

__attribute__((target("amx-tile,amx-bf16"), noipa)) float amxChains(long iters) {
  TileConfig config{};
  config.palette = 1;
  for (int t = 0; t < 6; ++t)
    config.rows[t] = 16, config.colsb[t] = 64;
  alignas(64) static uint16_t a[16 * 32], b[16 * 32];
  alignas(64) static float c[16 * 16];
  for (int i = 0; i < 16 * 32; ++i)
    a[i] = 0x3f80, b[i] = 0x3380; // 1.0 and 2^-24: sums stay finite
  _tile_loadconfig(&config);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, a, 64);
  _tile_loadd(5, b, 64);
  for (long i = 0; i < iters; ++i) {
    _tile_dpbf16ps(0, 4, 5);
    _tile_dpbf16ps(1, 4, 5);
    _tile_dpbf16ps(2, 4, 5);
    _tile_dpbf16ps(3, 4, 5);
  }
  _tile_stored(0, c, 64);
  _tile_release();
  gSink = c[0];
  return gSink;
}

/// GFLOP/s of one thread running `chains` (flopsPerIter an iteration): the best of several timed
/// runs of ~0.2 s each.
template <class F> double flopsPeak(F chains, double flopsPerIter) {
  volatile float sink = 0;
  long iters = 1 << 20;
  for (;;) { // grow until one run takes 50 ms
    double t = seconds();
    sink = sink + chains(iters);
    if (seconds() - t > 0.05)
      break;
    iters *= 2;
  }
  iters *= 4;
  double best = 0;
  for (int r = 0; r < 5; ++r) {
    double t = seconds();
    sink = sink + chains(iters);
    best = std::max(best, flopsPerIter * double(iters) / (seconds() - t) / 1e9);
  }
  return best;
}
template <class F> double fmaPeak(F chains, int lanes) { return flopsPeak(chains, 2.0 * lanes * kChains); }

/// GB/s of a[i] = b[i] + s c[i] over `threads` threads (bytes read and written, as STREAM counts).
double triad(int threads) {
  const long n = 1L << 24; // 3 x 64 MiB
  std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long i = 0; i < n; ++i) // first touch by the threads that will use it
    a[i] = 0;
  double best = 0;
  for (int r = 0; r < 6; ++r) {
    double t = seconds();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < n; ++i)
      a[i] = b[i] + 0.5f * c[i];
    best = std::max(best, 3.0 * 4 * n / (seconds() - t) / 1e9);
  }
  volatile float sink = a[n / 2];
  (void)sink;
  return best;
}

} // namespace

int main(int argc, char **argv) {
  const bool json = argc > 1 && !std::strcmp(argv[1], "--json");
  const bool avx512 = __builtin_cpu_supports("avx512f"), avx2 = __builtin_cpu_supports("avx2") &&
                                                                __builtin_cpu_supports("fma");
  const double peak512 = avx512 ? fmaPeak(fmaChainsAvx512, 16) : 0;
  const double peak256 = avx2 ? fmaPeak(fmaChainsAvx2, 8) : 0;
  // fmaPeak counts 2 flops a lane: vdpbf16ps's 64 flops count as 32 lanes.
  const double peakBf16 = __builtin_cpu_supports("avx512bf16") ? fmaPeak(bf16DotChains, 32) : 0;
  const double peakAmx = amxUsable() ? flopsPeak(amxChains, kAmxAccumulators * kAmxFlops) : 0;
  const int cores = omp_get_num_procs();
  const double bw1 = triad(1), bwAll = triad(cores);
  const double peak = std::max(peak512, peak256);
  if (json) {
    std::printf("{\"fma_gflops_per_core\": %.1f, \"fma_gflops_per_core_avx512\": %.1f, "
                "\"fma_gflops_per_core_avx2\": %.1f, \"bf16_dot_gflops_per_core\": %.1f, "
                "\"amx_bf16_gflops_per_core\": %.1f, \"cores\": %d, \"triad_gbs_one_thread\": %.2f, "
                "\"triad_gbs_all_cores\": %.2f}\n",
                peak, peak512, peak256, peakBf16, peakAmx, cores, bw1, bwAll);
    return 0;
  }
  std::printf("f32 FMA peak of one core: %.1f GFLOP/s (AVX-512: %.1f, AVX2: %.1f; 0 = not on this CPU)\n",
              peak, peak512, peak256);
  std::printf("bf16 dot-product peak of one core (AVX512-BF16): %.1f GFLOP/s (0 = not on this CPU)\n", peakBf16);
  std::printf("bf16 tile peak of one core (AMX-BF16): %.1f GFLOP/s (0 = not on this CPU)\n", peakAmx);
  std::printf("memory bandwidth (triad): %.2f GB/s one thread, %.2f GB/s %d cores\n", bw1, bwAll, cores);
  return 0;
}
