// zrt's CPU kernels against the bare library calls they wrap (BLAS sgemm, a oneDNN bf16
// matmul primitive) and against memcpy, and each matmul path a plan chooses among on each shape;
// run_runtime_bench.sh turns the rates into ratios and fractions of the roofline's peaks.
#include <benchmark/benchmark.h>

#include <cblas.h>
#include <dnnl.hpp>

#include <cstring>
#include <vector>

#include "cpu/Matmul.h"
#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace {

// Shapes: 1024^3, then the GEMMs of a training step (forward, dX = dY W^T, dW = X^T dY) of
// nanoGPT's shakespeare-char model (B*T = 2048 rows, d = 384, MLP 1536) and of GPT-2 124M
// (B*T = 4096, d = 768, MLP 3072, vocabulary 50304).
struct Shape {
  int64_t m, n, k;
  int transA, transB;
};
const Shape kShapes[] = {{1024, 1024, 1024, 0, 0},  {2048, 1152, 384, 0, 0},  {2048, 1536, 384, 0, 0},
                         {2048, 384, 1536, 0, 0},   {2048, 384, 1536, 0, 1},  {1536, 384, 2048, 1, 0},
                         {384, 1152, 2048, 1, 0},   {4096, 3072, 768, 0, 0},  {4096, 768, 3072, 0, 1},
                         {768, 3072, 4096, 1, 0},   {3072, 768, 4096, 1, 0},  {4096, 50304, 768, 0, 1},
                         {50304, 768, 4096, 1, 0}};
constexpr int kShapeCount = sizeof(kShapes) / sizeof(kShapes[0]);

void setShapeCounters(benchmark::State &state, const Shape &s) {
  state.counters["flops"] = benchmark::Counter(2.0 * s.m * s.n * s.k * state.iterations(),
                                               benchmark::Counter::kIsRate);
  state.SetLabel(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                 (s.transA ? " tA" : "") + (s.transB ? " tB" : ""));
}

template <class T> void BM_zrt_matmul(benchmark::State &state, zrt_dtype dtype, T one) {
  const Shape s = kShapes[state.range(0)];
  std::vector<T> a(s.m * s.k, one), b(s.k * s.n, one), c(s.m * s.n);
  for (auto _ : state)
    zrt_matmul(dtype, a.data(), b.data(), c.data(), 1, s.m, s.n, s.k, s.transA, s.transB, 0);
  setShapeCounters(state, s);
}
void BM_zrt_matmul_f32(benchmark::State &state) { BM_zrt_matmul<float>(state, ZRT_DTYPE_F32, 0.5f); }
void BM_zrt_matmul_bf16(benchmark::State &state) {
  BM_zrt_matmul<zrt::bf16>(state, ZRT_DTYPE_BF16, zrt::bf16(0.5f));
}

void BM_blas_sgemm(benchmark::State &state) {
  const Shape s = kShapes[state.range(0)];
  std::vector<float> a(s.m * s.k, 0.5f), b(s.k * s.n, 0.25f), c(s.m * s.n);
  for (auto _ : state)
    cblas_sgemm(CblasRowMajor, s.transA ? CblasTrans : CblasNoTrans, s.transB ? CblasTrans : CblasNoTrans,
                s.m, s.n, s.k, 1.f, a.data(), s.transA ? s.m : s.k, b.data(), s.transB ? s.k : s.n, 0.f,
                c.data(), s.n);
  setShapeCounters(state, s);
}

/// oneDNN's matmul primitive on the shape, row-major operands (transposed ones as "ba").
void onednnMatmul(benchmark::State &state, dnnl::memory::data_type type) {
  const Shape s = kShapes[state.range(0)];
  using tag = dnnl::memory::format_tag;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::memory::desc aDesc({s.m, s.k}, type, s.transA ? tag::ba : tag::ab);
  dnnl::memory::desc bDesc({s.k, s.n}, type, s.transB ? tag::ba : tag::ab);
  dnnl::memory::desc cDesc({s.m, s.n}, type, tag::ab);
  dnnl::matmul primitive;
  try {
    primitive = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(aDesc, bDesc, cDesc), engine));
  } catch (const dnnl::error &) {
    state.SkipWithError("oneDNN has no matmul primitive for this type on this CPU");
    return;
  }
  const size_t elementBytes = type == dnnl::memory::data_type::f32 ? 4 : 2;
  std::vector<char> a(s.m * s.k * elementBytes), b(s.k * s.n * elementBytes), c(s.m * s.n * elementBytes);
  dnnl::memory aMem(aDesc, engine, a.data()), bMem(bDesc, engine, b.data()), cMem(cDesc, engine, c.data());
  for (auto _ : state) {
    primitive.execute(stream, {{DNNL_ARG_SRC, aMem}, {DNNL_ARG_WEIGHTS, bMem}, {DNNL_ARG_DST, cMem}});
    stream.wait();
  }
  setShapeCounters(state, s);
}
void BM_onednn_f32_primitive(benchmark::State &state) { onednnMatmul(state, dnnl::memory::data_type::f32); }
void BM_onednn_bf16(benchmark::State &state) { onednnMatmul(state, dnnl::memory::data_type::bf16); }

/// Each path a matmul plan chooses among (cpu/Matmul.h's MatmulPath), on each shape: what
/// zrt_plan_matmuls times on a real program's shapes, here on the fixed list. Arguments: the
/// shape, then the path (0 sgemm, 1 primitive, 2 blas: f32; 3 native, 4 widen: bf16).
void BM_matmul_path(benchmark::State &state) {
  using namespace zrt::cpu;
  const Shape s = kShapes[state.range(0)];
  const MatmulPath path = kMatmulPaths[state.range(1)];
  const int32_t dtype = pathComputes(path, ZRT_DTYPE_BF16) ? ZRT_DTYPE_BF16 : ZRT_DTYPE_F32;
  const MatmulShape shape{1, s.m, s.n, s.k, s.transA != 0, s.transB != 0, false};
  if (!pathRuns(path, dtype, shape)) {
    state.SkipWithError("this path does not run here");
    return;
  }
  const size_t bytes = dtype == ZRT_DTYPE_BF16 ? 2 : 4;
  std::vector<char> a(s.m * s.k * bytes), b(s.k * s.n * bytes), c(s.m * s.n * bytes);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<char>(i % 61 & 0x3f); // small finite values in either type
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<char>(i % 53 & 0x3f);
  for (auto _ : state) {
    if (dtype == ZRT_DTYPE_BF16)
      matmulOn(path, reinterpret_cast<const zrt::bf16 *>(a.data()), reinterpret_cast<const zrt::bf16 *>(b.data()),
               reinterpret_cast<zrt::bf16 *>(c.data()), shape);
    else
      matmulOn(path, reinterpret_cast<const float *>(a.data()), reinterpret_cast<const float *>(b.data()),
               reinterpret_cast<float *>(c.data()), shape);
  }
  setShapeCounters(state, s);
  state.SetLabel(std::string(matmulPathName(path)) + " " + (dtype == ZRT_DTYPE_BF16 ? "bf16 " : "f32 ") +
                 std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                 (s.transA ? " tA" : "") + (s.transB ? " tB" : ""));
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
              0.999, 1e-8, 0.01, ++step, nullptr);
  // reads p, g, m, v; writes p, m, v
  state.SetBytesProcessed(state.iterations() * 7 * kElements * sizeof(float));
}

} // namespace

// Causal attention at T = 4096 (8 heads of 64, batch 1, f32), forward and backward, with the whole
// context (window 0) and with sliding windows of 1024 and 256: a window of W keys leaves
// T W - W (W - 1) / 2 of the T (T + 1) / 2 scores (0.44 at W = 1024, 0.12 at 256); the
// `scores` counter is that count a second, so equal rates mean the time follows T x W.
void BM_zrt_attention_window(benchmark::State &state) {
  const int64_t T = 4096, H = 8, D = 64, C = H * D, W = state.range(0);
  const bool backward = state.range(1) != 0;
  std::vector<float> q(T * C, 0.01f), k(T * C, 0.02f), v(T * C, 0.03f), out(T * C), dq(T * C), dk(T * C), dv(T * C);
  for (auto _ : state) {
    if (backward)
      zrt_causal_attention_grad(ZRT_DTYPE_F32, q.data(), q.data(), k.data(), v.data(), dq.data(), dk.data(), dv.data(),
                                1, T, C, H, H, 0.0, 0.0, W);
    else
      zrt_causal_attention(ZRT_DTYPE_F32, q.data(), k.data(), v.data(), out.data(), 1, T, C, H, H, 0.0, 0.0, W);
    benchmark::DoNotOptimize(out.data());
  }
  const double keys = W == 0 ? T * (T + 1) / 2.0 : double(T) * W - double(W) * (W - 1) / 2.0;
  state.counters["scores"] = benchmark::Counter(keys * H * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(backward ? "backward" : "forward") + " T=4096 window " + (W ? std::to_string(W) : "none"));
}

// A MoE layer's expert products as zrt_grouped_matmul runs them (bench/moe_bench.py's model: 8
// SwiGLU experts of [512, 1792], 4 x 256 tokens x top 2 = 2048 dispatched rows), forward [rows, K]
// x [K, N] per expert, against one dense product of the same FLOPs ([2048, 512] x [512, 1792]).
// Argument: 0 every expert 256 rows; 1 a skewed routing (rows 2^-(e+1) of them, the rest to the
// last: 1024, 512, ..., 16, 16); 2 the dense product; 3-5 the backward of each (both gradients:
// dxs = dout W^T and dW = xs^T dout, twice the FLOPs). f32.
void BM_moe_expert_products(benchmark::State &state) {
  constexpr int64_t kExperts = 8, kRows = 2048, K = 512, N = 1792;
  const int64_t routing = state.range(0) % 3;
  const bool backward = state.range(0) >= 3;
  std::vector<float> xs(kRows * K, 0.5f), w(kExperts * K * N, 0.25f), out(kRows * N), dxs(kRows * K);
  std::vector<int32_t> offsets(kExperts + 1, 0);
  for (int64_t e = 0; e < kExperts; ++e)
    offsets[e + 1] = offsets[e] + (routing == 1 ? (e + 1 < kExperts ? int32_t(kRows >> (e + 1)) : 0)
                                                : int32_t(kRows / kExperts));
  offsets[kExperts] = kRows;
  for (auto _ : state) {
    if (routing == 2 && backward) {
      zrt_matmul(ZRT_DTYPE_F32, out.data(), w.data(), dxs.data(), 1, kRows, K, N, 0, 1, 0);
      zrt_matmul(ZRT_DTYPE_F32, xs.data(), out.data(), w.data(), 1, K, N, kRows, 1, 0, 0);
    } else if (routing == 2) {
      zrt_matmul(ZRT_DTYPE_F32, xs.data(), w.data(), out.data(), 1, kRows, N, K, 0, 0, 0);
    } else if (backward) {
      zrt_grouped_matmul_grad(ZRT_DTYPE_F32, out.data(), xs.data(), w.data(), offsets.data(), dxs.data(), w.data(),
                              kRows, kExperts, K, N, 0);
    } else {
      zrt_grouped_matmul(ZRT_DTYPE_F32, xs.data(), w.data(), offsets.data(), out.data(), kRows, kExperts, K, N, 0);
    }
  }
  state.counters["flops"] = benchmark::Counter((backward ? 4.0 : 2.0) * kRows * K * N * state.iterations(),
                                               benchmark::Counter::kIsRate);
  const char *what = routing == 2 ? "dense 2048x1792x512" : routing == 1 ? "8 experts, skewed" : "8 experts, even";
  state.SetLabel(std::string(what) + (backward ? ", backward" : ""));
}

BENCHMARK(BM_zrt_matmul_f32)->DenseRange(0, kShapeCount - 1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_blas_sgemm)->DenseRange(0, kShapeCount - 1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_onednn_f32_primitive)->DenseRange(0, kShapeCount - 1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_zrt_matmul_bf16)->DenseRange(0, kShapeCount - 1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_onednn_bf16)->DenseRange(0, kShapeCount - 1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_matmul_path)
    ->ArgsProduct({benchmark::CreateDenseRange(0, kShapeCount - 1, 1), benchmark::CreateDenseRange(0, 4, 1)})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_memcpy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_zrt_add_f32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_zrt_gelu_f32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_zrt_adamw_f32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_moe_expert_products)->DenseRange(0, 5)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_zrt_attention_window)->ArgsProduct({{0, 1024, 256}, {0, 1}})->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
