// The CUDA backend against the CPU backend, op by op, on random data (f32 and bf16), and
// NCCL collectives against their definition (--collectives, under mpirun, a GPU per rank).
// Exits 77 when no CUDA device is present: ctest reports the test as skipped.
// Built twice: with nvcc for a GPU (zrt-cuda-conformance), and as C++ on HIP-CPU
// (ZRT_CUDA_ON_CPU: zrt-cuda-on-cpu, test/CudaOnCpu), where it also checks that every
// __global__ kernel of runtime/cuda ran. `--only GROUP` runs one group of cases, `--fail-fast` stops
// at the first mismatch.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "cuda/Kernels.h"
#include "cuda/Matmul.h"
#if !defined(ZRT_CUDA_ON_CPU)
#include <mpi.h>

#include "cuda/Device.h"
#include "cuda/NcclCommunicator.h"
#endif
#include "zrt/KernelMath.h"
#include "zrt/MatmulCrossEntropy.h"
#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace {

int failures = 0;
bool failFast = false; // --fail-fast: stop at the first mismatch (the broken copies' tests)

struct Tensor {
  int32_t dtype;
  std::vector<float> values; // f32 view of the contents
  std::vector<unsigned char> bytes() const {
    std::vector<unsigned char> b(values.size() * (dtype == 1 ? 2 : 4));
    for (size_t i = 0; i < values.size(); ++i) {
      if (dtype == 1) {
        zrt::bf16 h(values[i]);
        std::memcpy(&b[2 * i], &h, 2);
      } else {
        std::memcpy(&b[4 * i], &values[i], 4);
      }
    }
    return b;
  }
};

std::vector<float> decode(const std::vector<unsigned char> &b, int32_t dtype) {
  size_t n = b.size() / (dtype == 1 ? 2 : 4);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    if (dtype == 1) {
      zrt::bf16 h;
      std::memcpy(&h, &b[2 * i], 2);
      v[i] = float(h);
    } else {
      std::memcpy(&v[i], &b[4 * i], 4);
    }
  }
  return v;
}

Tensor random(int32_t dtype, size_t n, std::mt19937 &rng, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  Tensor t{dtype, std::vector<float>(n)};
  for (float &x : t.values)
    x = dtype == 1 ? float(zrt::bf16(d(rng))) : d(rng);
  return t;
}

/// Device copy of host bytes.
struct DeviceBuffer {
  void *ptr = nullptr;
  size_t size = 0;
  explicit DeviceBuffer(const std::vector<unsigned char> &host) : size(host.size()) {
    cudaMalloc(&ptr, size ? size : 1);
    cudaMemcpy(ptr, host.data(), size, cudaMemcpyHostToDevice);
  }
  explicit DeviceBuffer(size_t bytes) : size(bytes) {
    cudaMalloc(&ptr, bytes ? bytes : 1);
    cudaMemset(ptr, 0, bytes ? bytes : 1);
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  std::vector<unsigned char> host() const {
    std::vector<unsigned char> h(size);
    cudaDeviceSynchronize();
    cudaMemcpy(h.data(), ptr, size, cudaMemcpyDeviceToHost);
    return h;
  }
};

void compare(const std::string &what, const std::vector<float> &got, const std::vector<float> &want, double tol) {
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double err = std::fabs(double(got[i]) - want[i]) / std::max(1.0, std::fabs(double(want[i])));
    if (!(err <= worst)) {
      worst = err;
      at = i;
    }
  }
  bool ok = got.size() == want.size() && worst <= tol;
  std::printf("%s %-40s worst %.2e%s\n", ok ? "ok  " : "FAIL", what.c_str(), worst,
              ok ? "" : (" at " + std::to_string(at)).c_str());
  failures += !ok;
  if (!ok && failFast)
    std::exit(1);
}

const char *name(int32_t dtype) { return dtype == 1 ? "bf16" : "f32"; }

void elementwise(std::mt19937 &rng) {
  // One element, and a count not a multiple of any block size.
  for (int64_t n : {int64_t(1), int64_t(100003)})
  for (int32_t dt : {0, 1}) {
    double tol = dt == 1 ? 1e-2 : 1e-6;
    Tensor a = random(dt, n, rng), b = random(dt, n, rng);
    auto ab = a.bytes(), bb = b.bytes();
    DeviceBuffer da(ab), db(bb), dout(ab.size());
    std::vector<unsigned char> cpu(ab.size());
    using Binary = std::function<void(int32_t, const void *, const void *, void *, int64_t)>;
    using CudaBinary = void (*)(int32_t, const void *, const void *, void *, int64_t, cudaStream_t);
    auto binary = [&](const char *op, Binary cpuOp, CudaBinary gpuOp, double t) {
      cpuOp(dt, ab.data(), bb.data(), cpu.data(), n);
      gpuOp(dt, da.ptr, db.ptr, dout.ptr, n, nullptr);
      compare(std::string(op) + " " + name(dt), decode(dout.host(), dt), decode(cpu, dt), t);
    };
    binary("add", zrt_add, zrt::cuda::add, tol);
    binary("sub", zrt_sub, zrt::cuda::sub, tol);
    binary("mul", zrt_mul, zrt::cuda::mul, tol);
    binary("relu_grad", zrt_relu_grad, zrt::cuda::reluGrad, tol);
    binary("gelu_grad", zrt_gelu_grad, zrt::cuda::geluGrad, dt == 1 ? 1e-2 : 1e-5);
    binary("silu_grad", zrt_silu_grad, zrt::cuda::siluGrad, dt == 1 ? 1e-2 : 1e-5);
    zrt_swiglu(dt, ab.data(), bb.data(), cpu.data(), n);
    zrt::cuda::swiglu(dt, da.ptr, db.ptr, dout.ptr, n, nullptr);
    compare(std::string("swiglu ") + name(dt), decode(dout.host(), dt), decode(cpu, dt), dt == 1 ? 1e-2 : 1e-5);
    {
      std::vector<unsigned char> cpu2(ab.size());
      DeviceBuffer dout2(ab.size());
      zrt_swiglu_grad(dt, bb.data(), ab.data(), bb.data(), cpu.data(), cpu2.data(), n);
      zrt::cuda::swigluGrad(dt, db.ptr, da.ptr, db.ptr, dout.ptr, dout2.ptr, n, nullptr);
      compare(std::string("swiglu_grad gate ") + name(dt), decode(dout.host(), dt), decode(cpu, dt), dt == 1 ? 1e-2 : 1e-5);
      compare(std::string("swiglu_grad up ") + name(dt), decode(dout2.host(), dt), decode(cpu2, dt), dt == 1 ? 1e-2 : 1e-5);
    }
    zrt_silu(dt, ab.data(), cpu.data(), n);
    zrt::cuda::silu(dt, da.ptr, dout.ptr, n, nullptr);
    compare(std::string("silu ") + name(dt), decode(dout.host(), dt), decode(cpu, dt), dt == 1 ? 1e-2 : 1e-5);
    zrt_relu(dt, ab.data(), cpu.data(), n);
    zrt::cuda::relu(dt, da.ptr, dout.ptr, n, nullptr);
    compare(std::string("relu ") + name(dt), decode(dout.host(), dt), decode(cpu, dt), tol);
    zrt_gelu(dt, ab.data(), cpu.data(), n);
    zrt::cuda::gelu(dt, da.ptr, dout.ptr, n, nullptr);
    compare(std::string("gelu ") + name(dt), decode(dout.host(), dt), decode(cpu, dt), dt == 1 ? 1e-2 : 1e-5);
    zrt_copy(dt, ab.data(), cpu.data(), n);
    zrt::cuda::copy(dt, da.ptr, dout.ptr, n, nullptr);
    compare(std::string("copy ") + name(dt), decode(dout.host(), dt), decode(cpu, dt), 0);
    zrt_scale(dt, ab.data(), cpu.data(), n, 0.37);
    zrt::cuda::scale(dt, da.ptr, dout.ptr, n, 0.37, nullptr);
    compare(std::string("scale ") + name(dt), decode(dout.host(), dt), decode(cpu, dt), tol);
    const int64_t rows = n >= 211 ? 211 : 1, cols = n / rows;
    Tensor bias = random(dt, cols, rng);
    auto biasb = bias.bytes();
    DeviceBuffer dbias(biasb);
    zrt_bias_add(dt, ab.data(), biasb.data(), cpu.data(), rows, cols);
    zrt::cuda::biasAdd(dt, da.ptr, dbias.ptr, dout.ptr, rows, cols, nullptr);
    std::vector<float> got = decode(dout.host(), dt), want = decode(cpu, dt);
    got.resize(rows * cols);
    want.resize(rows * cols);
    compare(std::string("bias_add ") + name(dt), got, want, tol);
    int32_t other = 1 - dt;
    std::vector<unsigned char> cast(n * (other == 1 ? 2 : 4));
    DeviceBuffer dcast(cast.size());
    zrt_cast(dt, ab.data(), other, cast.data(), n);
    zrt::cuda::cast(dt, da.ptr, other, dcast.ptr, n, nullptr);
    compare(std::string("cast ") + name(dt) + "->" + name(other), decode(dcast.host(), other), decode(cast, other), 0);
  }
}

void optimizers(std::mt19937 &rng) {
  const int64_t n = 4099;
  for (int32_t gdt : {0, 1}) {
    Tensor p = random(0, n, rng), g = random(gdt, n, rng), m = random(0, n, rng, 0.1f), v = random(0, n, rng, 0.1f);
    for (float &x : v.values)
      x = std::fabs(x);
    auto pb = p.bytes(), gb = g.bytes(), mb = m.bytes(), vb = v.bytes();
    DeviceBuffer dp(pb), dg(gb), dm(mb), dv(vb), dlow(n * 2);
    std::vector<unsigned char> low(n * 2);
    zrt_adamw(pb.data(), gdt, gb.data(), mb.data(), vb.data(), low.data(), n, 1e-3, 0.9, 0.999, 1e-8, 0.01, 3,
              nullptr);
    zrt::cuda::adamw(static_cast<float *>(dp.ptr), gdt, dg.ptr, static_cast<float *>(dm.ptr),
                     static_cast<float *>(dv.ptr), dlow.ptr, n, 1e-3, 0.9, 0.999, 1e-8, 0.01, 3, nullptr, nullptr);
    compare(std::string("adamw param, grad ") + name(gdt), decode(dp.host(), 0), decode(pb, 0), 1e-6);
    compare(std::string("adamw exp_avg_sq, grad ") + name(gdt), decode(dv.host(), 0), decode(vb, 0), 1e-6);
    compare(std::string("adamw bf16 copy, grad ") + name(gdt), decode(dlow.host(), 1), decode(low, 1), 1e-2);
    {
      // The step graphs' AdamW: the step's constants read from device memory. From the same
      // state as above, so the results must be the CPU's again.
      auto pb0 = p.bytes(), mb0 = m.bytes(), vb0 = v.bytes();
      const zrt::math::AdamWStep constants = zrt::math::adamwStep(1e-3, 0.9, 0.999, 1e-8, 0.01, 3);
      std::vector<unsigned char> cb(sizeof constants);
      std::memcpy(cb.data(), &constants, sizeof constants);
      DeviceBuffer dp0(pb0), dm0(mb0), dv0(vb0), dconst(cb), dlow0(n * 2);
      zrt::cuda::adamwFrom(static_cast<float *>(dp0.ptr), gdt, dg.ptr, static_cast<float *>(dm0.ptr),
                           static_cast<float *>(dv0.ptr), dlow0.ptr, n,
                           static_cast<const zrt::math::AdamWStep *>(dconst.ptr), nullptr, nullptr);
      compare(std::string("adamw (constants on device) param, grad ") + name(gdt), decode(dp0.host(), 0),
              decode(pb, 0), 1e-6);
      compare(std::string("adamw (constants on device) exp_avg, grad ") + name(gdt), decode(dm0.host(), 0),
              decode(mb, 0), 1e-6);
    }
    Tensor buf = random(0, n, rng, 0.1f);
    auto bufb = buf.bytes(), p2 = p.bytes();
    DeviceBuffer dp2(p2), dbuf(bufb);
    zrt_sgd_momentum(p2.data(), gdt, gb.data(), bufb.data(), nullptr, n, 0.01, 0.9, 0.01, nullptr);
    zrt::cuda::sgdMomentum(static_cast<float *>(dp2.ptr), gdt, dg.ptr, static_cast<float *>(dbuf.ptr), nullptr, n,
                           0.01, 0.9, 0.01, nullptr, nullptr);
    compare(std::string("sgd param, grad ") + name(gdt), decode(dp2.host(), 0), decode(p2, 0), 1e-6);
  }
}

/// zrt_grad_norm's kernels: two tensors' weighted sums of squares (f32 and bf16, ragged
/// against the grid), their partials summed, the norm and the clip coefficient.
void gradNorm(std::mt19937 &rng) {
  const int64_t n0 = 100003, n1 = 777;
  Tensor a = random(0, n0, rng), b = random(1, n1, rng);
  const double weights[2] = {1.0, 0.5};
  double total = 0;
  for (float x : a.values)
    total += weights[0] * double(x) * double(x);
  for (float x : b.values)
    total += weights[1] * double(x) * double(x);
  const float norm = static_cast<float>(std::sqrt(total));
  DeviceBuffer da(a.bytes()), db(b.bytes()), partials(2 * zrt::cuda::kGradNormBlocks * sizeof(double)),
      local(4), outNorm(4), coef(4), kept(4);
  double *p = static_cast<double *>(partials.ptr);
  zrt::cuda::sumOfSquares(0, da.ptr, n0, weights[0], p, nullptr);
  zrt::cuda::sumOfSquares(1, db.ptr, n1, weights[1], p + zrt::cuda::kGradNormBlocks, nullptr);
  zrt::cuda::sumPartials(p, 2 * zrt::cuda::kGradNormBlocks, static_cast<float *>(local.ptr), nullptr);
  for (double maxNorm : {1.0, 1e6}) {
    zrt::cuda::gradNormFinish(static_cast<const float *>(local.ptr), maxNorm, static_cast<float *>(outNorm.ptr),
                              static_cast<float *>(coef.ptr), static_cast<float *>(kept.ptr), nullptr);
    const std::string what = " (max_norm " + std::to_string(int64_t(maxNorm)) + ")";
    compare("grad_norm" + what, decode(outNorm.host(), 0), {norm}, 1e-6);
    compare("grad_norm kept" + what, decode(kept.host(), 0), {norm}, 1e-6);
    compare("grad_norm clip coefficient" + what, decode(coef.host(), 0),
            {zrt::math::gradClipCoefficient(norm, maxNorm)}, 1e-6);
  }
}

/// The non-finite check: a NaN or an Inf anywhere (the last element included) sets the flag,
/// finite values leave it.
void nonFinite() {
  const int64_t n = 4099;
  for (int32_t dt : {0, 1})
    for (float bad : {0.0f, INFINITY, -INFINITY, NAN})
      for (int64_t at : {int64_t(0), n - 1}) {
        Tensor t{dt, std::vector<float>(n, 1.5f)};
        t.values[at] = bad == 0.0f ? 2.0f : bad;
        DeviceBuffer dx(t.bytes()), flag(4);
        zrt::cuda::nonFinite(dt, dx.ptr, n, static_cast<int *>(flag.ptr), nullptr);
        const float want = bad == 0.0f ? 0.0f : 1.0f;
        std::vector<unsigned char> got = flag.host();
        int32_t raised;
        std::memcpy(&raised, got.data(), 4);
        compare(std::string("non_finite ") + name(dt) + " " + std::to_string(bad) + " at " + std::to_string(at),
                {float(raised)}, {want}, 0);
      }
}

void matmuls(std::mt19937 &rng) {
  struct Case {
    int64_t batch, m, n, k;
    bool ta, tb, shared;
  };
  for (int32_t dt : {0, 1})
    for (Case c : {Case{1, 64, 48, 80, false, false, false}, Case{1, 33, 17, 65, true, false, false},
                   Case{1, 31, 29, 47, false, true, false}, Case{3, 16, 24, 40, false, false, false},
                   Case{4, 12, 20, 28, false, true, true}, Case{2, 9, 11, 13, true, true, false}}) {
      Tensor a = random(dt, c.batch * c.m * c.k, rng), b = random(dt, (c.shared ? 1 : c.batch) * c.k * c.n, rng);
      auto ab = a.bytes(), bb = b.bytes();
      std::vector<unsigned char> cpu(c.batch * c.m * c.n * (dt == 1 ? 2 : 4));
      DeviceBuffer da(ab), db(bb), dc(cpu.size());
      zrt_matmul(dt, ab.data(), bb.data(), cpu.data(), c.batch, c.m, c.n, c.k, c.ta, c.tb, c.shared);
      zrt::cuda::matmul(dt, da.ptr, db.ptr, dc.ptr, c.batch, c.m, c.n, c.k, c.ta, c.tb, c.shared, nullptr);
      char what[96];
      std::snprintf(what, sizeof what, "matmul %s b%lld %lldx%lldx%lld%s%s%s", name(dt), (long long)c.batch,
                    (long long)c.m, (long long)c.n, (long long)c.k, c.ta ? " tA" : "", c.tb ? " tB" : "",
                    c.shared ? " shared" : "");
      compare(what, decode(dc.host(), dt), decode(cpu, dt), dt == 1 ? 2e-2 : 1e-4);
    }
}


std::vector<unsigned char> raw(const std::vector<int32_t> &v) {
  std::vector<unsigned char> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

/// An error flag the kernels raise (an int in device memory).
int32_t flagOf(const DeviceBuffer &flag) {
  const std::vector<unsigned char> b = flag.host();
  int32_t value;
  std::memcpy(&value, b.data(), 4);
  return value;
}

void rowsAt(std::mt19937 &rng, int64_t R, int64_t C) {
  std::printf("row kernels at %lld rows x %lld columns\n", static_cast<long long>(R), static_cast<long long>(C));
  for (int32_t dt : {0, 1}) {
    const double tol = dt == 1 ? 2e-2 : 1e-5;
    const size_t eb = dt == 1 ? 2 : 4;
    Tensor x = random(dt, R * C, rng), dy = random(dt, R * C, rng), g = random(dt, C, rng), b = random(dt, C, rng);
    auto xb = x.bytes(), dyb = dy.bytes(), gb = g.bytes(), bb = b.bytes();
    DeviceBuffer dx(xb), ddy(dyb), dg(gb), dbeta(bb), out(xb.size()), out2(C * eb), out3(C * eb), out4(xb.size());
    std::vector<unsigned char> cpu(xb.size()), cpu2(C * eb), cpu3(C * eb), cpu4(xb.size());
    zrt_softmax(dt, xb.data(), cpu.data(), R, C);
    zrt::cuda::softmax(dt, dx.ptr, out.ptr, R, C, nullptr);
    compare(std::string("softmax ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    // The gradient of a softmax's output (random y would make dy . y a sum of sqrt(C)-sized
    // terms cancelling to far less, and its rounding the test's subject).
    const std::vector<unsigned char> yb = cpu;
    DeviceBuffer dyOut(yb);
    zrt_softmax_grad(dt, dyb.data(), yb.data(), cpu.data(), R, C);
    zrt::cuda::softmaxGrad(dt, ddy.ptr, dyOut.ptr, out.ptr, R, C, nullptr);
    compare(std::string("softmax_grad ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    zrt_layernorm(dt, xb.data(), gb.data(), bb.data(), cpu.data(), R, C, 1e-5);
    zrt::cuda::layernorm(dt, dx.ptr, dg.ptr, dbeta.ptr, out.ptr, R, C, 1e-5, nullptr);
    compare(std::string("layernorm ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    zrt_layernorm_grad(dt, dyb.data(), xb.data(), gb.data(), cpu.data(), cpu2.data(), cpu3.data(), R, C, 1e-5);
    zrt::cuda::layernormGrad(dt, ddy.ptr, dx.ptr, dg.ptr, out.ptr, out2.ptr, out3.ptr, R, C, 1e-5, nullptr);
    compare(std::string("layernorm_grad dx ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    compare(std::string("layernorm_grad dgamma ") + name(dt), decode(out2.host(), dt), decode(cpu2, dt), tol * 10);
    compare(std::string("layernorm_grad dbeta ") + name(dt), decode(out3.host(), dt), decode(cpu3, dt), tol * 10);
    zrt_add_layernorm(dt, xb.data(), dyb.data(), gb.data(), bb.data(), cpu.data(), cpu4.data(), R, C, 1e-5);
    zrt::cuda::addLayernorm(dt, dx.ptr, ddy.ptr, dg.ptr, dbeta.ptr, out.ptr, out4.ptr, R, C, 1e-5, nullptr);
    compare(std::string("add_layernorm sum ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    compare(std::string("add_layernorm ") + name(dt), decode(out4.host(), dt), decode(cpu4, dt), tol);
    zrt_layernorm_grad_add(dt, dyb.data(), xb.data(), gb.data(), dyb.data(), cpu.data(), cpu2.data(), cpu3.data(), R,
                           C, 1e-5);
    zrt::cuda::layernormGradAdd(dt, ddy.ptr, dx.ptr, dg.ptr, ddy.ptr, out.ptr, out2.ptr, out3.ptr, R, C, 1e-5, nullptr);
    compare(std::string("layernorm_grad_add dx ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    compare(std::string("layernorm_grad_add dgamma ") + name(dt), decode(out2.host(), dt), decode(cpu2, dt), tol * 10);
    zrt_rmsnorm(dt, xb.data(), gb.data(), cpu.data(), R, C, 1e-6);
    zrt::cuda::rmsnorm(dt, dx.ptr, dg.ptr, out.ptr, R, C, 1e-6, nullptr);
    compare(std::string("rmsnorm ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    zrt_rmsnorm_grad(dt, dyb.data(), xb.data(), gb.data(), cpu.data(), cpu2.data(), R, C, 1e-6);
    zrt::cuda::rmsnormGrad(dt, ddy.ptr, dx.ptr, dg.ptr, out.ptr, out2.ptr, R, C, 1e-6, nullptr);
    compare(std::string("rmsnorm_grad dx ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    compare(std::string("rmsnorm_grad dgamma ") + name(dt), decode(out2.host(), dt), decode(cpu2, dt), tol * 10);
    {
      // Rotary: 2 x 37 positions, 3 heads of 8; forward and inverse, two thetas.
      const int64_t B = 2, T = 37, H = 3, D = 8;
      Tensor q = random(dt, B * T * H * D, rng);
      auto qb = q.bytes();
      DeviceBuffer dq(qb), dout(qb.size());
      std::vector<unsigned char> want(qb.size());
      for (double theta : {10000.0, 500000.0})
        for (int32_t inverse : {0, 1}) {
          zrt_rotary(dt, qb.data(), want.data(), B, T, H * D, H, theta, inverse);
          zrt::cuda::rotary(dt, dq.ptr, dout.ptr, B, T, H * D, H, theta, inverse != 0, nullptr);
          compare(std::string("rotary ") + (inverse ? "inverse " : "") + std::to_string(int64_t(theta)) + " " +
                      name(dt),
                  decode(dout.host(), dt), decode(want, dt), tol);
        }
    }

    std::vector<int32_t> labels(R);
    for (auto &l : labels)
      l = static_cast<int32_t>(rng() % C);
    auto lb = raw(labels);
    DeviceBuffer dl(lb), loss(4), bad(4);
    float cpuLoss = 0;
    zrt_cross_entropy(dt, xb.data(), lb.data(), &cpuLoss, R, C);
    zrt::cuda::crossEntropy(dt, dx.ptr, static_cast<const int32_t *>(dl.ptr), static_cast<float *>(loss.ptr), R, C,
                            static_cast<int *>(bad.ptr), nullptr);
    compare(std::string("cross_entropy ") + name(dt), decode(loss.host(), 0), {cpuLoss}, 1e-5);
    compare(std::string("cross_entropy labels in range ") + name(dt), {float(flagOf(bad))}, {0.0f}, 0);
    float one = 1.0f;
    std::vector<unsigned char> oneb(4);
    std::memcpy(oneb.data(), &one, 4);
    DeviceBuffer done(oneb);
    zrt_cross_entropy_grad(dt, &one, xb.data(), lb.data(), cpu.data(), R, C);
    zrt::cuda::crossEntropyGrad(dt, static_cast<const float *>(done.ptr), dx.ptr, static_cast<const int32_t *>(dl.ptr),
                                out.ptr, R, C, static_cast<int *>(bad.ptr), nullptr);
    compare(std::string("cross_entropy_grad ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    zrt_mse(dt, xb.data(), dyb.data(), &cpuLoss, R * C);
    zrt::cuda::mse(dt, dx.ptr, ddy.ptr, static_cast<float *>(loss.ptr), R * C, nullptr);
    compare(std::string("mse ") + name(dt), decode(loss.host(), 0), {cpuLoss}, 1e-5);
    zrt_mse_grad(dt, &one, xb.data(), dyb.data(), cpu.data(), R * C);
    zrt::cuda::mseGrad(dt, static_cast<const float *>(done.ptr), dx.ptr, ddy.ptr, out.ptr, R * C, nullptr);
    compare(std::string("mse_grad ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);

    // The fused LM head: R rows of C channels against 300 classes, in one chunk and in three
    // (the last short), either weight layout.
    const int64_t classes = 300;
    Tensor w = random(dt, classes * C, rng, 0.1f);
    std::vector<int32_t> headLabels(R);
    for (auto &l : headLabels)
      l = static_cast<int32_t>(rng() % classes);
    auto wb = w.bytes(), hlb = raw(headLabels);
    DeviceBuffer dw(wb), dhl(hlb);
    for (bool transW : {true, false})
      for (int64_t chunk : {R, (R + 2) / 3}) {
        const auto layout = zrt::MatmulCrossEntropyLayout::of(R, classes, classes * C, chunk, eb);
        std::vector<unsigned char> cpuWs(layout.bytes), cpuDx(R * C * eb), cpuDw(classes * C * eb);
        DeviceBuffer ws(layout.bytes), gx(R * C * eb), gw(classes * C * eb);
        zrt_matmul_cross_entropy(dt, xb.data(), wb.data(), hlb.data(), &one, &cpuLoss, cpuDx.data(), cpuDw.data(),
                                 cpuWs.data(), R, classes, C, transW, chunk);
        zrt::cuda::matmulCrossEntropy(dt, dx.ptr, dw.ptr, static_cast<const int32_t *>(dhl.ptr),
                                      static_cast<const float *>(done.ptr), static_cast<float *>(loss.ptr), gx.ptr,
                                      gw.ptr, ws.ptr, R, classes, C, transW, chunk, static_cast<int *>(bad.ptr), nullptr);
        const std::string what = std::string("matmul_cross_entropy ") + (transW ? "[V, C] " : "[C, V] ") +
                                 "chunk " + std::to_string(chunk) + " " + name(dt);
        compare(what + " loss", decode(loss.host(), 0), {cpuLoss}, 1e-4);
        compare(what + " dx", decode(gx.host(), dt), decode(cpuDx, dt), tol * 10);
        compare(what + " dw", decode(gw.host(), dt), decode(cpuDw, dt), tol * 10);
        // The loss alone (the eval function's head).
        const auto lossLayout = zrt::MatmulCrossEntropyLayout::forLoss(R, classes, chunk, eb);
        std::vector<unsigned char> cpuLossWs(lossLayout.bytes);
        DeviceBuffer lossWs(lossLayout.bytes);
        zrt_matmul_cross_entropy_loss(dt, xb.data(), wb.data(), hlb.data(), &cpuLoss, cpuLossWs.data(), R, classes, C,
                                      transW, chunk);
        zrt::cuda::matmulCrossEntropyLoss(dt, dx.ptr, dw.ptr, static_cast<const int32_t *>(dhl.ptr),
                                          static_cast<float *>(loss.ptr), lossWs.ptr, R, classes, C, transW, chunk,
                                          static_cast<int *>(bad.ptr), nullptr);
        compare(what + " loss alone", decode(loss.host(), 0), {cpuLoss}, 1e-4);
      }

    // Embedding: R tokens of a C-wide table of 50 rows (repeats included).
    const int64_t V = 50;
    Tensor table = random(dt, V * C, rng);
    std::vector<int32_t> ids(R);
    for (auto &id : ids)
      id = static_cast<int32_t>(rng() % V);
    auto tb = table.bytes(), ib = raw(ids);
    DeviceBuffer dt_(tb), di(ib), demb(R * C * eb), dtab(V * C * eb);
    std::vector<unsigned char> emb(R * C * eb), tab(V * C * eb);
    zrt_embedding(dt, tb.data(), ib.data(), emb.data(), R, V, C);
    zrt::cuda::embedding(dt, dt_.ptr, static_cast<const int32_t *>(di.ptr), demb.ptr, R, zrt::cuda::VocabSlice{0, V, V}, C,
                         static_cast<int *>(bad.ptr), nullptr);
    compare(std::string("embedding ") + name(dt), decode(demb.host(), dt), decode(emb, dt), 0);
    zrt_embedding_grad(dt, dyb.data(), ib.data(), tab.data(), R, V, C);
    zrt::cuda::embeddingGrad(dt, ddy.ptr, static_cast<const int32_t *>(di.ptr), dtab.ptr, R, zrt::cuda::VocabSlice{0, V, V}, C, nullptr);
    compare(std::string("embedding_grad ") + name(dt), decode(dtab.host(), dt), decode(tab, dt), 0);
    compare(std::string("embedding ids in range ") + name(dt), {float(flagOf(bad))}, {0.0f}, 0);
    {
      // Tensor parallelism's second half of the table: ids of the first half read zeros, the
      // gradient holds the second half's rows.
      const int64_t first = V / 2, rows = V - first;
      const std::vector<float> whole = decode(emb, dt), wholeGrad = decode(tab, dt);
      std::vector<float> wantOut(R * C, 0.0f), wantGrad(wholeGrad.begin() + first * C, wholeGrad.end());
      for (int64_t t = 0; t < R; ++t)
        if (ids[t] >= first)
          std::copy(whole.begin() + t * C, whole.begin() + (t + 1) * C, wantOut.begin() + t * C);
      DeviceBuffer half(std::vector<unsigned char>(tb.begin() + first * C * eb, tb.end())), hgrad(rows * C * eb);
      const zrt::cuda::VocabSlice slice{first, rows, V};
      zrt::cuda::embedding(dt, half.ptr, static_cast<const int32_t *>(di.ptr), demb.ptr, R, slice, C,
                           static_cast<int *>(bad.ptr), nullptr);
      compare(std::string("embedding vocab shard ") + name(dt), decode(demb.host(), dt), wantOut, 0);
      zrt::cuda::embeddingGrad(dt, ddy.ptr, static_cast<const int32_t *>(di.ptr), hgrad.ptr, R, slice, C, nullptr);
      compare(std::string("embedding_grad vocab shard ") + name(dt), decode(hgrad.host(), dt), wantGrad, 0);
    }
    {
      // An id or a label out of range raises the flag (train.bin stops with the step's error).
      std::vector<int32_t> badIds = ids, badLabels = labels;
      badIds[R - 1] = static_cast<int32_t>(V);
      badLabels[R - 1] = -1;
      DeviceBuffer dbi(raw(badIds)), dbl(raw(badLabels)), idFlag(4), labelFlag(4);
      zrt::cuda::embedding(dt, dt_.ptr, static_cast<const int32_t *>(dbi.ptr), demb.ptr, R,
                           zrt::cuda::VocabSlice{0, V, V}, C, static_cast<int *>(idFlag.ptr), nullptr);
      compare(std::string("embedding id out of range raises the flag ") + name(dt), {float(flagOf(idFlag))}, {1.0f},
              0);
      zrt::cuda::crossEntropy(dt, dx.ptr, static_cast<const int32_t *>(dbl.ptr), static_cast<float *>(loss.ptr), R,
                              C, static_cast<int *>(labelFlag.ptr), nullptr);
      compare(std::string("cross_entropy label out of range raises the flag ") + name(dt),
              {float(flagOf(labelFlag))}, {1.0f}, 0);
    }
  }
}

/// The vocabulary-parallel cross-entropy's kernels, two ranks' halves of a 300-class vocabulary
/// run one after the other (the all-gather of the maxima and the all-reduce of the sums done on
/// the host): the loss and each half's gradient must be the whole vocabulary's.
void vocabParallel(std::mt19937 &rng, int64_t R) {
  const int64_t V = 300, half = V / 2;
  for (int32_t dt : {0, 1}) {
    const size_t eb = dt == 1 ? 2 : 4;
    Tensor logits = random(dt, R * V, rng, 3.0f);
    std::vector<int32_t> labels(R);
    for (auto &l : labels)
      l = static_cast<int32_t>(rng() % V);
    auto whole = logits.bytes(), lb = raw(labels);
    float cpuLoss = 0, one = 1.0f;
    std::vector<unsigned char> cpuGrad(whole.size());
    zrt_cross_entropy(dt, whole.data(), lb.data(), &cpuLoss, R, V);
    zrt_cross_entropy_grad(dt, &one, whole.data(), lb.data(), cpuGrad.data(), R, V);
    std::vector<unsigned char> oneb(4);
    std::memcpy(oneb.data(), &one, 4);
    DeviceBuffer dl(lb), done(oneb), bad(4), loss(4);
    // Each rank's columns, its maxima, then every rank's maxima side by side (the all-gather).
    std::vector<std::vector<unsigned char>> shard(2, std::vector<unsigned char>(R * half * eb));
    for (int rank = 0; rank < 2; ++rank)
      for (int64_t r = 0; r < R; ++r)
        std::memcpy(&shard[rank][r * half * eb], &whole[(r * V + rank * half) * eb], half * eb);
    DeviceBuffer s0(shard[0]), s1(shard[1]), gathered(2 * R * 4);
    DeviceBuffer *shards[2] = {&s0, &s1};
    std::vector<unsigned char> maxima;
    for (int rank = 0; rank < 2; ++rank) {
      DeviceBuffer own(R * 4);
      zrt::cuda::vocabRowMaxima(dt, shards[rank]->ptr, static_cast<float *>(own.ptr), R, half, nullptr);
      auto m = own.host();
      maxima.insert(maxima.end(), m.begin(), m.end());
    }
    cudaMemcpy(gathered.ptr, maxima.data(), maxima.size(), cudaMemcpyHostToDevice);
    // Each rank's sums and labels' logits, summed over the ranks (the all-reduce).
    std::vector<float> sums(R, 0.0f), labelLogits(R, 0.0f), rowMax;
    for (int rank = 0; rank < 2; ++rank) {
      DeviceBuffer st(3 * R * 4);
      float *f = static_cast<float *>(st.ptr);
      zrt::cuda::vocabSumExp(dt, shards[rank]->ptr, static_cast<const int32_t *>(dl.ptr),
                             static_cast<const float *>(gathered.ptr), 2, zrt::cuda::VocabRowStats{f, f + R, f + 2 * R},
                             R, zrt::cuda::VocabSlice{rank * half, half, V}, static_cast<int *>(bad.ptr), nullptr);
      std::vector<float> got = decode(st.host(), 0);
      rowMax.assign(got.begin(), got.begin() + R);
      for (int64_t r = 0; r < R; ++r) {
        sums[r] += got[R + r];
        labelLogits[r] += got[2 * R + r];
      }
    }
    std::vector<float> combined = rowMax;
    combined.insert(combined.end(), sums.begin(), sums.end());
    combined.insert(combined.end(), labelLogits.begin(), labelLogits.end());
    std::vector<unsigned char> cb(combined.size() * 4);
    std::memcpy(cb.data(), combined.data(), cb.size());
    DeviceBuffer stats(cb);
    float *f = static_cast<float *>(stats.ptr);
    const zrt::cuda::VocabRowStats all{f, f + R, f + 2 * R};
    zrt::cuda::vocabLoss(all, R, static_cast<float *>(loss.ptr), nullptr);
    compare(std::string("cross_entropy_vocab_shard x2 ") + name(dt), decode(loss.host(), 0), {cpuLoss}, 1e-5);
    for (int rank = 0; rank < 2; ++rank) {
      DeviceBuffer grad(R * half * eb);
      zrt::cuda::vocabGrad(dt, static_cast<const float *>(done.ptr), shards[rank]->ptr,
                           static_cast<const int32_t *>(dl.ptr), all, grad.ptr, R,
                           zrt::cuda::VocabSlice{rank * half, half, V}, nullptr);
      std::vector<float> want = decode(cpuGrad, dt), mine;
      for (int64_t r = 0; r < R; ++r)
        mine.insert(mine.end(), want.begin() + r * V + rank * half, want.begin() + r * V + (rank + 1) * half);
      compare(std::string("cross_entropy_grad_vocab_shard rank ") + std::to_string(rank) + " " + name(dt),
              decode(grad.host(), dt), mine, dt == 1 ? 2e-2 : 1e-5);
    }
    compare(std::string("vocab_shard labels in range ") + name(dt), decode(bad.host(), 0), {0.0f}, 0);
  }
}

void attention(std::mt19937 &rng) {
  // Multi-head (G = H) and grouped-query attention; bf16 at these head sizes runs the tensor-core
  // kernels (FlashAttention.cu), D up to 128.
  struct Shape {
    int64_t B, T, D, H, G;
  };
  // One position; one whole tile over three sequences; a tile and a bit; several with a ragged end; a
  // head size off the tensor cores' multiples of 16 (bf16 on the row kernels).
  for (Shape sh : {Shape{1, 1, 32, 2, 1}, Shape{3, 64, 48, 4, 4}, Shape{2, 17, 16, 3, 3}, Shape{2, 17, 16, 6, 2},
                   Shape{1, 200, 64, 4, 2}, Shape{1, 130, 128, 2, 1}, Shape{2, 33, 24, 4, 2}})
    for (int32_t dt : {0, 1}) {
      const int64_t B = sh.B, T = sh.T, D = sh.D, H = sh.H, G = sh.G;
      const int64_t C = H * D, Ckv = G * D;
      const double tol = dt == 1 ? 3e-2 : 1e-4;
      Tensor q = random(dt, B * T * C, rng), k = random(dt, B * T * Ckv, rng), v = random(dt, B * T * Ckv, rng),
             g = random(dt, B * T * C, rng);
      auto qb = q.bytes(), kb = k.bytes(), vb = v.bytes(), gb = g.bytes();
      DeviceBuffer dq(qb), dk(kb), dv(vb), dg(gb), out(qb.size()), o1(qb.size()), o2(kb.size()), o3(kb.size());
      std::vector<unsigned char> cpu(qb.size()), c1(qb.size()), c2(kb.size()), c3(kb.size());
      const std::string what = " T" + std::to_string(T) + " D" + std::to_string(D) + " H" + std::to_string(H) + " G" +
                               std::to_string(G) + " " + name(dt);
      zrt_causal_attention(dt, qb.data(), kb.data(), vb.data(), cpu.data(), B, T, C, H, G);
      zrt::cuda::causalAttention(dt, dq.ptr, dk.ptr, dv.ptr, out.ptr, B, T, C, H, G, nullptr);
      compare("causal_attention" + what, decode(out.host(), dt), decode(cpu, dt), tol);
      zrt_causal_attention_grad(dt, gb.data(), qb.data(), kb.data(), vb.data(), c1.data(), c2.data(), c3.data(), B,
                                T, C, H, G);
      zrt::cuda::causalAttentionGrad(dt, dg.ptr, dq.ptr, dk.ptr, dv.ptr, o1.ptr, o2.ptr, o3.ptr, B, T, C, H, G,
                                     nullptr);
      compare("causal_attention_grad dq" + what, decode(o1.host(), dt), decode(c1, dt), tol);
      compare("causal_attention_grad dk" + what, decode(o2.host(), dt), decode(c2, dt), tol);
      compare("causal_attention_grad dv" + what, decode(o3.host(), dt), decode(c3, dt), tol);
    }
}

void layouts(std::mt19937 &rng) {
  const int64_t shape[4] = {3, 5, 7, 4}, perm[4] = {2, 0, 3, 1};
  const int64_t n = 3 * 5 * 7 * 4;
  for (int32_t dt : {0, 1}) {
    const size_t eb = dt == 1 ? 2 : 4;
    Tensor x = random(dt, n, rng);
    auto xb = x.bytes();
    DeviceBuffer dx(xb), out(n * eb);
    std::vector<unsigned char> cpu(n * eb);
    for (int32_t mask : {0b0000, 0b0001, 0b0110, 0b1000, 0b1011, 0b1111}) {
      int64_t outCount = 1;
      for (int i = 0; i < 4; ++i)
        if (!(mask & (1 << i)))
          outCount *= shape[i];
      zrt_reduce_sum(dt, xb.data(), cpu.data(), shape, 4, mask);
      zrt::cuda::reduceSum(dt, dx.ptr, out.ptr, shape, 4, mask, nullptr);
      std::vector<float> got = decode(out.host(), dt), want = decode(cpu, dt);
      got.resize(outCount);
      want.resize(outCount);
      compare(std::string("reduce_sum mask ") + std::to_string(mask) + " " + name(dt), got, want,
              dt == 1 ? 2e-2 : 1e-5);
    }
    zrt_transpose(dt, xb.data(), cpu.data(), shape, 4, perm);
    zrt::cuda::transpose(dt, dx.ptr, out.ptr, shape, 4, perm, nullptr);
    compare(std::string("transpose ") + name(dt), decode(out.host(), dt), decode(cpu, dt), 0);
    const int64_t box[4] = {2, 3, 4, 2}, at[4] = {1, 1, 2, 2};
    const int64_t boxN = 2 * 3 * 4 * 2;
    std::vector<unsigned char> cpuBox(boxN * eb);
    DeviceBuffer dbox(boxN * eb);
    zrt_slice(dt, xb.data(), shape, cpuBox.data(), box, 4, at);
    zrt::cuda::slice(dt, dx.ptr, shape, dbox.ptr, box, 4, at, nullptr);
    compare(std::string("slice ") + name(dt), decode(dbox.host(), dt), decode(cpuBox, dt), 0);
    std::vector<unsigned char> whole(n * eb, 0);
    DeviceBuffer dwhole(n * eb);
    zrt_insert(dt, cpuBox.data(), box, whole.data(), shape, 4, at);
    zrt::cuda::insert(dt, dbox.ptr, box, dwhole.ptr, shape, 4, at, nullptr);
    compare(std::string("insert ") + name(dt), decode(dwhole.host(), dt), decode(whole, dt), 0);
  }
}


void fusedMatmuls(std::mt19937 &rng) {
  const int64_t m = 40, n = 24, k = 32;
  for (int32_t dt : {0, 1}) {
    const size_t eb = dt == 1 ? 2 : 4;
    const double tol = dt == 1 ? 3e-2 : 1e-4;
    Tensor a = random(dt, m * k, rng), b = random(dt, k * n, rng), bias = random(dt, n, rng), pre = random(dt, m * n, rng);
    auto ab = a.bytes(), bb = b.bytes(), biasb = bias.bytes(), preb = pre.bytes();
    DeviceBuffer da(ab), db(bb), dbias(biasb), dpre(preb), out(m * n * eb), aux(m * n * eb), vec(n * eb);
    std::vector<unsigned char> cpu(m * n * eb), cpuAux(m * n * eb), cpuVec(n * eb);
    zrt_matmul_bias(dt, ab.data(), bb.data(), biasb.data(), cpu.data(), 1, m, n, k, 0, 0, 0);
    zrt::cuda::matmulEpilogue(zrt::cuda::Epilogue::Bias, dt, da.ptr, db.ptr, dbias.ptr, nullptr, out.ptr, 1, m, n, k,
                              false, false, false, nullptr);
    compare(std::string("matmul_bias ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    zrt_matmul_bias_gelu(dt, ab.data(), bb.data(), biasb.data(), cpuAux.data(), cpu.data(), 1, m, n, k, 0, 0, 0);
    zrt::cuda::matmulEpilogue(zrt::cuda::Epilogue::BiasGelu, dt, da.ptr, db.ptr, dbias.ptr, aux.ptr, out.ptr, 1, m, n,
                              k, false, false, false, nullptr);
    compare(std::string("matmul_bias_gelu pre ") + name(dt), decode(aux.host(), dt), decode(cpuAux, dt), tol);
    compare(std::string("matmul_bias_gelu out ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    zrt_matmul_dgelu_bgrad(dt, ab.data(), bb.data(), preb.data(), cpu.data(), cpuVec.data(), 1, m, n, k, 0, 0, 0);
    zrt::cuda::matmulEpilogue(zrt::cuda::Epilogue::DgeluBgrad, dt, da.ptr, db.ptr, vec.ptr, dpre.ptr, out.ptr, 1, m, n,
                              k, false, false, false, nullptr);
    compare(std::string("matmul_dgelu_bgrad dpre ") + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    compare(std::string("matmul_dgelu_bgrad dbias ") + name(dt), decode(vec.host(), dt), decode(cpuVec, dt), tol * 10);
  }
}

#if !defined(ZRT_CUDA_ON_CPU)
int collectives() {
  MPI_Init(nullptr, nullptr);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  zrt::cuda::selectDevice();
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  // The control communicator is the runtime's MPI one; MPI is already initialized.
  auto comm = zrt::cuda::createNcclCommunicator(zrt::createMpiCommunicator(nullptr, nullptr), stream);
  const int64_t count = 1000;
  std::vector<float> mine(count * ranks);
  for (int64_t i = 0; i < count * ranks; ++i)
    mine[i] = float(rank + 1) * 0.5f + float(i % 7);
  std::vector<unsigned char> bytes(mine.size() * 4);
  std::memcpy(bytes.data(), mine.data(), bytes.size());
  DeviceBuffer send(bytes), recv(bytes.size()), shard(count * 4), gathered(count * ranks * 4);
  auto expectSum = [&](int64_t i) {
    float s = 0;
    for (int r = 0; r < ranks; ++r)
      s += float(r + 1) * 0.5f + float(i % 7);
    return s;
  };
  comm->run({zrt::Collective::AllReduce, 0, send.ptr, recv.ptr, count * ranks, true, 0});
  cudaStreamSynchronize(stream);
  std::vector<float> want(count * ranks), got = decode(recv.host(), 0);
  for (int64_t i = 0; i < count * ranks; ++i)
    want[i] = expectSum(i) / ranks;
  compare("nccl all_reduce avg (rank " + std::to_string(rank) + ")", got, want, 1e-6);
  comm->run({zrt::Collective::ReduceScatter, 0, send.ptr, shard.ptr, count, false, 0});
  cudaStreamSynchronize(stream);
  want.assign(count, 0);
  for (int64_t i = 0; i < count; ++i)
    want[i] = expectSum(rank * count + i);
  compare("nccl reduce_scatter sum (rank " + std::to_string(rank) + ")", decode(shard.host(), 0), want, 1e-6);
  comm->run({zrt::Collective::AllGather, 0, send.ptr, gathered.ptr, count, false, 0});
  cudaStreamSynchronize(stream);
  want.assign(count * ranks, 0);
  for (int r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < count; ++i)
      want[r * count + i] = float(r + 1) * 0.5f + float(i % 7);
  compare("nccl all_gather (rank " + std::to_string(rank) + ")", decode(gathered.host(), 0), want, 0);
  comm->finalize();
  return failures ? 1 : 0;
}
#else
/// Every __global__ kernel of runtime/cuda (rewrite_launches.py lists them) must have run: a
/// kernel added without a case here fails the suite.
void inventory() {
  static const char *const kernels[] = {
#include "CudaKernelNames.inc"
  };
  const auto ran = zrt::cudaoncpu::launches();
  int missing = 0;
  std::printf("kernels of runtime/cuda run on the CPU (launches):\n");
  for (const char *kernel : kernels) {
    auto it = ran.find(kernel);
    std::printf("  %-24s %ld\n", kernel, it == ran.end() ? 0L : it->second);
    if (it == ran.end()) {
      std::printf("FAIL kernel %s never ran: add a case that reaches it\n", kernel);
      ++missing;
    }
  }
  std::printf("%zu kernels, %d never ran\n", sizeof kernels / sizeof *kernels, missing);
  failures += missing;
}
#endif

} // namespace

int main(int argc, char **argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: the CUDA conformance suite is skipped here\n");
    return 77;
  }
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
#if !defined(ZRT_CUDA_ON_CPU)
    if (arg == "--collectives")
      return collectives();
#endif
    if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--fail-fast") {
      failFast = true;
    } else {
      std::fprintf(stderr, "usage: %s [--fail-fast] [--only elementwise|optimizers|matmuls|rows|attention|layouts|fused]"
#if !defined(ZRT_CUDA_ON_CPU)
                           " | --collectives"
#endif
                           "\n", argv[0]);
      return 2;
    }
  }
  auto run = [&](const char *group) { return only.empty() || only == group; };
  std::mt19937 rng(1234);
  if (run("elementwise"))
    elementwise(rng);
  if (run("optimizers")) {
    optimizers(rng);
    gradNorm(rng);
    nonFinite();
  }
  if (run("matmuls"))
    matmuls(rng);
  // The row kernels run a block per row and sum parameter gradients over chunks of 64 rows: one
  // row, a row shorter than the block, one of several block widths with a ragged end over several
  // chunks, and a 50K vocabulary's rows.
  if (run("rows")) {
    for (auto [R, C] : {std::pair<int64_t, int64_t>{1, 300}, {37, 129}, {203, 1000}, {6, 50304}})
      rowsAt(rng, R, C);
    for (int64_t R : {1, 37})
      vocabParallel(rng, R);
  }
  if (run("attention"))
    attention(rng);
  if (run("layouts"))
    layouts(rng);
  if (run("fused"))
    fusedMatmuls(rng);
#if defined(ZRT_CUDA_ON_CPU)
  if (only.empty())
    inventory();
#endif
  std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
