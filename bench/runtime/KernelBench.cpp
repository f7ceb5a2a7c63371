// zrt's CPU kernels against the bare library calls they wrap (BLAS sgemm, a oneDNN bf16
// matmul primitive) and against memcpy; run_runtime_bench.sh turns the rates into ratios.
#include <benchmark/benchmark.h>

#include <cblas.h>
#include <dnnl.hpp>

#include <cstring>
#include <vector>

#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace {

// Shapes: 1024^3, and the GPT example's (B*T = 512 rows, d = 128, MLP 512, vocab 256).
struct Shape {
  int64_t m, n, k;
  int transB;
};
const Shape kShapes[] = {{1024, 1024, 1024, 0}, {512, 384, 128, 0}, {512, 512, 128, 0},
                         {512, 128, 512, 0},    {512, 256, 128, 1}};

void setShapeCounters(benchmark::State &state, const Shape &s) {
  state.counters["flops"] = benchmark::Counter(2.0 * s.m * s.n * s.k * state.iterations(),
                                               benchmark::Counter::kIsRate);
  state.SetLabel(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k));
}

void BM_zrt_matmul_f32(benchmark::State &state) {
  const Shape s = kShapes[state.range(0)];
  std::vector<float> a(s.m * s.k, 0.5f), b(s.k * s.n, 0.25f), c(s.m * s.n);
  for (auto _ : state)
    zrt_matmul(ZRT_DTYPE_F32, a.data(), b.data(), c.data(), 1, s.m, s.n, s.k, 0, s.transB, 0);
  setShapeCounters(state, s);
}

void BM_blas_sgemm(benchmark::State &state) {
  const Shape s = kShapes[state.range(0)];
  std::vector<float> a(s.m * s.k, 0.5f), b(s.k * s.n, 0.25f), c(s.m * s.n);
  for (auto _ : state)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, s.transB ? CblasTrans : CblasNoTrans, s.m, s.n, s.k,
                1.f, a.data(), s.k, b.data(), s.transB ? s.k : s.n, 0.f, c.data(), s.n);
  setShapeCounters(state, s);
}

void BM_zrt_matmul_bf16(benchmark::State &state) {
  const Shape s = kShapes[state.range(0)];
  std::vector<zrt::bf16> a(s.m * s.k, zrt::bf16(0.5f)), b(s.k * s.n, zrt::bf16(0.25f)), c(s.m * s.n);
  for (auto _ : state)
    zrt_matmul(ZRT_DTYPE_BF16, a.data(), b.data(), c.data(), 1, s.m, s.n, s.k, 0, s.transB, 0);
  setShapeCounters(state, s);
}

void BM_onednn_bf16(benchmark::State &state) {
  const Shape s = kShapes[state.range(0)];
  using dt = dnnl::memory::data_type;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::memory::desc aDesc({s.m, s.k}, dt::bf16, dnnl::memory::format_tag::ab);
  dnnl::memory::desc bDesc({s.k, s.n}, dt::bf16,
                           s.transB ? dnnl::memory::format_tag::ba : dnnl::memory::format_tag::ab);
  dnnl::memory::desc cDesc({s.m, s.n}, dt::bf16, dnnl::memory::format_tag::ab);
  dnnl::matmul primitive(dnnl::matmul::primitive_desc(dnnl::matmul::desc(aDesc, bDesc, cDesc), engine));
  std::vector<zrt::bf16> a(s.m * s.k, zrt::bf16(0.5f)), b(s.k * s.n, zrt::bf16(0.25f)), c(s.m * s.n);
  dnnl::memory aMem(aDesc, engine, a.data()), bMem(bDesc, engine, b.data()), cMem(cDesc, engine, c.data());
  for (auto _ : state) {
    primitive.execute(stream, {{DNNL_ARG_SRC, aMem}, {DNNL_ARG_WEIGHTS, bMem}, {DNNL_ARG_DST, cMem}});
    stream.wait();
  }
  setShapeCounters(state, s);
}

// Elementwise kernels move 3 (add) or 2 (gelu) buffers; memcpy moves 2.
constexpr int64_t kElements = 1 << 24; // 64 MiB of f32: well outside the caches

void BM_memcpy(benchmark::State &state) {
  std::vector<float> src(kElements, 1.f), dst(kElements);
  for (auto _ : state) {
    benchmark::DoNotOptimize(src.data());
    std::memcpy(dst.data(), src.data(), kElements * sizeof(float));
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * kElements * sizeof(float));
}

void BM_zrt_add_f32(benchmark::State &state) {
  std::vector<float> a(kElements, 1.f), b(kElements, 2.f), c(kElements);
  for (auto _ : state)
    zrt_add(ZRT_DTYPE_F32, a.data(), b.data(), c.data(), kElements);
  state.SetBytesProcessed(state.iterations() * 3 * kElements * sizeof(float));
}

void BM_zrt_gelu_f32(benchmark::State &state) {
  std::vector<float> a(kElements, 0.3f), c(kElements);
  for (auto _ : state)
    zrt_gelu(ZRT_DTYPE_F32, a.data(), c.data(), kElements);
  state.SetBytesProcessed(state.iterations() * 2 * kElements * sizeof(float));
}

void BM_zrt_adamw_f32(benchmark::State &state) {
  std::vector<float> p(kElements, 0.1f), g(kElements, 0.01f), m(kElements), v(kElements);
  int64_t step = 0;
  for (auto _ : state)
    zrt_adamw(p.data(), ZRT_DTYPE_F32, g.data(), m.data(), v.data(), nullptr, kElements, 1e-3, 0.9,
              0.999, 1e-8, 0.01, ++step);
  // reads p, g, m, v; writes p, m, v
  state.SetBytesProcessed(state.iterations() * 7 * kElements * sizeof(float));
}

} // namespace

BENCHMARK(BM_zrt_matmul_f32)->DenseRange(0, 4)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_blas_sgemm)->DenseRange(0, 4)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_zrt_matmul_bf16)->DenseRange(0, 4)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_onednn_bf16)->DenseRange(0, 4)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_memcpy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_zrt_add_f32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_zrt_gelu_f32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_zrt_adamw_f32)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
