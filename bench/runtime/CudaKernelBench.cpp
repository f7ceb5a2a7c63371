// The CUDA backend's row kernels and attention at the shapes of real steps, against the device's
// measured limits in the same run: each row kernel's bytes moved (each input read once, each output
// written once) over its time, as a fraction of a device-to-device copy's bandwidth; attention's
// FLOP/s (4 T^2 D per head and sequence, halved for the causal mask; backward 2.5x); GPT-2's
// products plain, with cuBLASLt's bias epilogue and as a product then a bias kernel (which of the
// three is slow when a step's matmul_bias is); the q/k/v split's slice and its gradient's insert; the MoE
// grouped product beside a dense product of its FLOPs.
// bf16 and f32.
//   build/bin/zrt-cuda-kernel-bench [--quick]       (exits 77 without a GPU)
#include "cuda/Kernels.h"
#include "cuda/Matmul.h"
#include "cuda/Moe.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e = (call);                                                                        \
    if (e != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));                              \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

struct Buffer {
  void *ptr = nullptr;
  explicit Buffer(size_t bytes) {
    CHECK(cudaMalloc(&ptr, bytes));
    CHECK(cudaMemset(ptr, 0, bytes));
  }
  ~Buffer() { cudaFree(ptr); }
  template <class T> T *as() const { return static_cast<T *>(ptr); }
};

/// Median-free mean of `iters` launches after 3 warm-ups, in seconds, on the default stream.
double timeIt(const std::function<void()> &launch, int iters) {
  for (int i = 0; i < 3; ++i)
    launch();
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < iters; ++i)
    launch();
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaGetLastError());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 1e3 / iters;
}

} // namespace

int main(int argc, char **argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: skipped\n");
    return 77;
  }
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int iters = quick ? 5 : 50;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));

  // The limit: a device-to-device copy of 1 GiB (bytes read + written).
  const size_t copyBytes = size_t(1) << 30;
  Buffer a(copyBytes), b(copyBytes);
  const double copyS = timeIt([&] { CHECK(cudaMemcpyAsync(b.ptr, a.ptr, copyBytes, cudaMemcpyDeviceToDevice)); }, iters);
  const double limit = 2.0 * copyBytes / copyS;
  std::printf("%s: device-to-device copy %.0f GB/s (read + write)\n\n", prop.name, limit / 1e9);
  std::printf("%-44s %10s %10s %8s\n", "kernel", "time us", "GB/s", "of copy");

  const int64_t rows = 8192; // 8 x 1024 tokens
  Buffer x(size_t(rows) * 128256 * 4), y(size_t(rows) * 128256 * 4), dy(size_t(rows) * 128256 * 4),
      out(size_t(rows) * 128256 * 4), g(128256 * 4), beta(128256 * 4), dg(128256 * 4), db(128256 * 4);
  Buffer labels(rows * 4), loss(4), bad(4), one(4);
  const float oneValue = 1.0f;
  CHECK(cudaMemcpy(one.ptr, &oneValue, 4, cudaMemcpyHostToDevice));
  auto line = [&](const std::string &what, double seconds, double bytes) {
    std::printf("%-44s %10.1f %10.0f %7.0f%%\n", what.c_str(), seconds * 1e6, bytes / seconds / 1e9,
                100.0 * bytes / seconds / limit);
  };
  for (int32_t dt : {1, 0}) {
    const double e = dt == 1 ? 2 : 4;
    const char *type = dt == 1 ? "bf16" : "f32";
    for (int64_t cols : {int64_t(768), int64_t(4096), int64_t(8192)}) {
      const double m = double(rows) * cols * e;
      const std::string shape = " " + std::to_string(rows) + "x" + std::to_string(cols) + " " + type;
      line("layernorm" + shape,
           timeIt([&] { zrt::cuda::layernorm(dt, x.ptr, g.ptr, beta.ptr, y.ptr, rows, cols, 1e-5, nullptr); }, iters),
           2 * m);
      line("layernorm_grad" + shape,
           timeIt([&] {
             zrt::cuda::layernormGrad(dt, dy.ptr, x.ptr, g.ptr, out.ptr, dg.ptr, db.ptr, rows, cols, 1e-5, nullptr);
           }, iters),
           4 * m); // dx pass reads dy, x and writes dx; the columns read dy, x again
      line("add_layernorm" + shape,
           timeIt([&] {
             zrt::cuda::addLayernorm(dt, x.ptr, dy.ptr, g.ptr, beta.ptr, out.ptr, y.ptr, rows, cols, 1e-5, nullptr);
           }, iters),
           4 * m);
      line("rmsnorm" + shape,
           timeIt([&] { zrt::cuda::rmsnorm(dt, x.ptr, g.ptr, y.ptr, rows, cols, 1e-5, 0.0, nullptr); }, iters), 2 * m);
      line("rmsnorm_grad" + shape,
           timeIt([&] { zrt::cuda::rmsnormGrad(dt, dy.ptr, x.ptr, g.ptr, out.ptr, dg.ptr, rows, cols, 1e-5, 0.0, nullptr); },
                  iters),
           5 * m);
      line("softmax" + shape, timeIt([&] { zrt::cuda::softmax(dt, x.ptr, y.ptr, rows, cols, nullptr); }, iters), 2 * m);
      line("rotary 32 heads" + shape,
           timeIt([&] { zrt::cuda::rotary(dt, x.ptr, y.ptr, 8, rows / 8, cols, 32, 500000.0, false, 0, nullptr); }, iters),
           2 * m);
      line("swiglu" + shape,
           timeIt([&] { zrt::cuda::swiglu(dt, x.ptr, dy.ptr, y.ptr, rows * cols, nullptr); }, iters), 3 * m);
    }
    for (int64_t vocab : {int64_t(50304), int64_t(128256)}) {
      const int64_t r = quick ? 1024 : rows;
      const double m = double(r) * vocab * e;
      const std::string shape = " " + std::to_string(r) + "x" + std::to_string(vocab) + " " + type;
      line("cross_entropy" + shape,
           timeIt([&] {
             zrt::cuda::crossEntropy(dt, x.ptr, labels.as<int32_t>(), loss.as<float>(), r, vocab, 0.0,
                                     bad.as<int>(), nullptr);
           }, iters),
           m);
      line("cross_entropy_grad" + shape,
           timeIt([&] {
             zrt::cuda::crossEntropyGrad(dt, one.as<float>(), x.ptr, labels.as<int32_t>(), y.ptr, r, vocab, 0.0,
                                         bad.as<int>(), nullptr);
           }, iters),
           2 * m);
    }
    // GPT-2 124M's products with a bias over 8 x 1024 tokens: q/k/v, the attention's output, fc and
    // fc's projection.
    for (auto [n, k] : {std::pair<int64_t, int64_t>{2304, 768}, {768, 768}, {3072, 768}, {768, 3072}}) {
      const double flops = 2.0 * rows * n * k;
      const std::string shape = " " + std::to_string(rows) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " +
                                type;
      auto tflops = [&](const std::string &what, double seconds) {
        std::printf("%-44s %10.1f %10.1f TFLOP/s\n", (what + shape).c_str(), seconds * 1e6, flops / seconds / 1e12);
      };
      tflops("matmul", timeIt([&] { zrt::cuda::matmul(dt, x.ptr, dy.ptr, y.ptr, 1, rows, n, k, false, false, false,
                                                      nullptr); }, iters));
      tflops("matmul_bias cuBLASLt epilogue", timeIt([&] {
        zrt::cuda::matmulEpilogue(zrt::cuda::Epilogue::Bias, dt, x.ptr, dy.ptr, g.ptr, nullptr, y.ptr, 1, rows, n, k,
                                  false, false, false, nullptr);
      }, iters));
      tflops("matmul_bias unfused", timeIt([&] {
        zrt::cuda::matmulEpilogueUnfused(zrt::cuda::Epilogue::Bias, dt, x.ptr, dy.ptr, g.ptr, nullptr, y.ptr, 1, rows,
                                         n, k, false, false, false, nullptr);
      }, iters));
    }
    {
      // q/k/v out of the fused projection's [8, 1024, 2304] and a gradient back into it.
      const int64_t whole[3] = {8, 1024, 2304}, box[3] = {8, 1024, 768}, at[3] = {0, 0, 768};
      const double m = double(rows) * 768 * e;
      line(std::string("slice q/k/v 8x1024x768 of 2304 ") + type,
           timeIt([&] { zrt::cuda::slice(dt, x.ptr, whole, y.ptr, box, 3, at, nullptr); }, iters), 2 * m);
      line(std::string("insert q/k/v 8x1024x768 of 2304 ") + type,
           timeIt([&] { zrt::cuda::insert(dt, y.ptr, box, x.ptr, whole, 3, at, nullptr); }, iters), 2 * m);
    }
    {
      // The grouped product of a Mixture-of-Experts layer (Moe.h) at Mixtral 8x7B's expert shape
      // (d 4096, hidden 14336; f32 at a quarter of each, its SIMT path being slow), 8 x 1024
      // tokens top-2 spread evenly over the 8 experts, beside one dense product of the same FLOPs.
      const int64_t E = 8, K = dt == 1 ? 4096 : 1024, N = dt == 1 ? 14336 : 3584, R = 2 * rows;
      std::vector<int32_t> offsets(E + 1);
      for (int64_t e = 0; e <= E; ++e)
        offsets[e] = static_cast<int32_t>(e * R / E);
      Buffer dOffsets((E + 1) * 4), xs(size_t(R) * K * 4), yr(size_t(R) * N * 4);
      CHECK(cudaMemcpy(dOffsets.ptr, offsets.data(), (E + 1) * 4, cudaMemcpyHostToDevice));
      const auto *off = dOffsets.as<int32_t>();
      const double flops = 2.0 * R * N * K;
      const std::string shape = " " + std::to_string(R) + "x" + std::to_string(K) + " x " + std::to_string(E) + "x" +
                                std::to_string(K) + "x" + std::to_string(N) + " " + type;
      auto tflops = [&](const std::string &what, double seconds, double work) {
        std::printf("%-44s %10.1f %10.1f TFLOP/s\n", (what + shape).c_str(), seconds * 1e6, work / seconds / 1e12);
      };
      const int few = quick ? 1 : 5;
      tflops("grouped_matmul", timeIt([&] {
        zrt::cuda::groupedMatmul(dt, xs.ptr, dy.ptr, off, yr.ptr, R, E, K, N, false, bad.as<int>(), nullptr);
      }, few), flops);
      tflops("grouped_matmul_grad (dxs, dw)", timeIt([&] {
        zrt::cuda::groupedMatmulGrad(dt, yr.ptr, xs.ptr, dy.ptr, off, out.ptr, x.ptr, R, E, K, N, false,
                                     bad.as<int>(), nullptr);
      }, few), 2 * flops);
      tflops("matmul of the same FLOPs (cuBLASLt)", timeIt([&] {
        zrt::cuda::matmul(dt, xs.ptr, dy.ptr, yr.ptr, 1, R, N, K, false, false, false, nullptr);
      }, few), flops);
    }
    // Attention: batch 1, 32 heads of 128 (8 key/value heads), contexts 1024-4096; at 4096 also a
    // sliding window of 1024 (the FLOPs counted are the scores it keeps: T W - W (W - 1) / 2).
    struct Context {
      int64_t T, W;
    };
    for (Context ctx : {Context{1024, 0}, Context{2048, 0}, Context{4096, 0}, Context{4096, 1024}}) {
      const int64_t T = ctx.T, W = ctx.W, H = 32, G = 8, D = 128, C = H * D;
      const zrt::AttentionVariant window{0.0, 0.0, W};
      Buffer dq(size_t(T) * C * 4), dk(size_t(T) * G * D * 4), dv(size_t(T) * G * D * 4);
      const double scores = W ? double(T) * W - double(W) * (W - 1) / 2.0 : double(T) * T / 2; // causal: half
      const double flops = 4.0 * scores * D * H;
      const std::string shape = " T=" + std::to_string(T) + (W ? " W=" + std::to_string(W) : "") + " 32x128 (8 kv) " +
                                type;
      const double fwd = timeIt([&] {
        zrt::cuda::causalAttention(dt, x.ptr, dy.ptr, y.ptr, out.ptr, 1, T, C, H, G, window, nullptr);
      }, quick ? 1 : 5);
      std::printf("%-44s %10.1f %10.1f TFLOP/s\n", ("attention" + shape).c_str(), fwd * 1e6, flops / fwd / 1e12);
      const double bwd = timeIt([&] {
        zrt::cuda::causalAttentionGrad(dt, out.ptr, x.ptr, dy.ptr, y.ptr, dq.ptr, dk.ptr, dv.ptr, 1, T, C, H, G,
                                       window, nullptr);
      }, quick ? 1 : 3);
      std::printf("%-44s %10.1f %10.1f TFLOP/s\n", ("attention_grad" + shape).c_str(), bwd * 1e6,
                  2.5 * flops / bwd / 1e12);
    }
  }
  return 0;
}
