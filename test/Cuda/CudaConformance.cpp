// The CUDA backend against the CPU backend, op by op, on random data (f32 and bf16), and
// NCCL collectives against their definition (--collectives, under mpirun, a GPU per rank).
// The elementwise ops, optimizers, matmuls and layouts are here, the row kernels and attention in
// RowConformance.cpp.
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
#include <tuple>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "ConformanceSupport.h"
#include "../Runtime/QuantizeReference.h"
#include "cuda/Kernels.h"
#include "cuda/Matmul.h"
#if !defined(ZRT_CUDA_ON_CPU)

#include "cuda/Device.h"
#include "cuda/NcclCommunicator.h"
#endif
#include "zrt/KernelMath.h"
#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace {

using namespace conformance;

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
    binary("gelu_erf_grad", zrt_gelu_erf_grad, zrt::cuda::geluErfGrad, dt == 1 ? 1e-2 : 1e-5);
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
    zrt_gelu_erf(dt, ab.data(), cpu.data(), n);
    zrt::cuda::geluErf(dt, da.ptr, dout.ptr, n, nullptr);
    compare(std::string("gelu_erf ") + name(dt), decode(dout.host(), dt), decode(cpu, dt), dt == 1 ? 1e-2 : 1e-5);
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
      local(4), sum(8), outNorm(4), coef(4), kept(4);
  double *p = static_cast<double *>(partials.ptr);
  // NaN in every partial first: the 777 values take 4 of the tensor's kGradNormBlocks slots, and
  // the kernel must zero the other 124 (a stale partial of an earlier step would be summed).
  cudaMemset(partials.ptr, 0xff, 2 * zrt::cuda::kGradNormBlocks * sizeof(double));
  zrt::cuda::sumOfSquares(0, da.ptr, n0, weights[0], p, nullptr);
  zrt::cuda::sumOfSquares(1, db.ptr, n1, weights[1], p + zrt::cuda::kGradNormBlocks, nullptr);
  // Two adds (zrt_grad_norm_add's, one program each): the second continues the first's f64 sum.
  zrt::cuda::sumPartials(p, zrt::cuda::kGradNormBlocks, /*first=*/true, static_cast<double *>(sum.ptr),
                         static_cast<float *>(local.ptr), nullptr);
  zrt::cuda::sumPartials(p + zrt::cuda::kGradNormBlocks, zrt::cuda::kGradNormBlocks, /*first=*/false,
                         static_cast<double *>(sum.ptr), static_cast<float *>(local.ptr), nullptr);
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
        compare(std::string("non_finite ") + name(dt) + " " + std::to_string(bad) + " at " + std::to_string(at),
                {float(flagOf(flag))}, {want}, 0);
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


/// The gradients a training step sums over many rows: reduce_sum over leading axes (the bias
/// gradients: column sums in chunks of rows, several chunks and a ragged one here, a column count
/// that leaves a tile partly idle) and the embedding table's gradient (a block per table row
/// scanning the ids in chunks: 700 tokens over 37 rows, so rows repeat within and across chunks,
/// some rows get none, and 300 channels give threads more than one column).
void trainingSums(std::mt19937 &rng) {
  for (int32_t dt : {0, 1}) {
    const size_t eb = dt == 1 ? 2 : 4;
    const int64_t shape[3] = {150, 3, 70}, n = 150 * 3 * 70;
    Tensor x = random(dt, n, rng);
    auto xb = x.bytes();
    DeviceBuffer dx(xb), out(n * eb);
    for (int32_t mask : {0b001, 0b011, 0b111}) {
      const int64_t outCount = mask == 0b001 ? 3 * 70 : mask == 0b011 ? 70 : 1;
      std::vector<unsigned char> cpu(outCount * eb);
      zrt_reduce_sum(dt, xb.data(), cpu.data(), shape, 3, mask);
      zrt::cuda::reduceSum(dt, dx.ptr, out.ptr, shape, 3, mask, nullptr);
      std::vector<float> got = decode(out.host(), dt);
      got.resize(outCount);
      // Up to 450 terms summed in another order than the CPU's (chunks of 64 rows, then the
      // chunks): f32 rounding of partial sums near 20 is a few 1e-5 of a sum near 1.
      compare(std::string("reduce_sum leading mask ") + std::to_string(mask) + " " + name(dt), got, decode(cpu, dt),
              dt == 1 ? 2e-2 : 1e-4);
    }
    const int64_t tokens = 700, vocab = 37, channels = 300;
    std::vector<int32_t> ids(tokens);
    for (auto &id : ids)
      id = static_cast<int32_t>(rng() % (vocab - 3)); // the last 3 rows get no token
    Tensor dy = random(dt, tokens * channels, rng);
    auto dyb = dy.bytes(), ib = raw(ids);
    DeviceBuffer ddy(dyb), di(ib), dtab(vocab * channels * eb);
    std::vector<unsigned char> tab(vocab * channels * eb);
    zrt_embedding_grad(dt, dyb.data(), ib.data(), tab.data(), tokens, vocab, channels);
    zrt::cuda::embeddingGrad(dt, ddy.ptr, static_cast<const int32_t *>(di.ptr), dtab.ptr, tokens,
                             zrt::cuda::VocabSlice{0, vocab, vocab}, channels, nullptr);
    compare(std::string("embedding_grad 700 tokens ") + name(dt), decode(dtab.host(), dt), decode(tab, dt), 0);

    // Boxes narrower along one axis (strided copies: q/k/v out of the fused projection and
    // their gradients back), the whole tensor, and one narrower along two axes (the kernel).
    const int64_t whole[3] = {4, 6, 30}, wholeN = 4 * 6 * 30;
    struct Box {
      int64_t shape[3], at[3];
    };
    for (const Box &b : {Box{{4, 6, 10}, {0, 0, 10}}, Box{{4, 2, 30}, {0, 3, 0}}, Box{{1, 6, 30}, {2, 0, 0}},
                         Box{{4, 6, 30}, {0, 0, 0}}, Box{{4, 2, 10}, {0, 1, 20}}}) {
      const int64_t boxN = b.shape[0] * b.shape[1] * b.shape[2];
      Tensor t = random(dt, wholeN, rng);
      auto tb = t.bytes();
      DeviceBuffer dtens(tb), dbox(boxN * eb);
      std::vector<unsigned char> cpuBox(boxN * eb);
      zrt_slice(dt, tb.data(), whole, cpuBox.data(), b.shape, 3, b.at);
      zrt::cuda::slice(dt, dtens.ptr, whole, dbox.ptr, b.shape, 3, b.at, nullptr);
      const std::string what = std::to_string(b.shape[0]) + "x" + std::to_string(b.shape[1]) + "x" +
                               std::to_string(b.shape[2]) + " of 4x6x30 " + name(dt);
      compare("slice " + what, decode(dbox.host(), dt), decode(cpuBox, dt), 0);
      // Into another tensor: the copy must leave the rest of it as it was.
      Tensor other = random(dt, wholeN, rng);
      auto ob = other.bytes();
      std::vector<unsigned char> cpuOther(ob);
      DeviceBuffer dother(ob);
      zrt_insert(dt, cpuBox.data(), b.shape, cpuOther.data(), whole, 3, b.at);
      zrt::cuda::insert(dt, dbox.ptr, b.shape, dother.ptr, whole, 3, b.at, nullptr);
      compare("insert " + what, decode(dother.host(), dt), decode(cpuOther, dt), 0);
    }
  }
}

/// Block-wise quantization (zrt/Quantize.h) against the f64 reference, bitwise: bytes (scales,
/// levels, padding) and the dequantized values, in f32 and bf16, 8 and 4 bits, a short last block,
/// an odd row at 4 bits, and more blocks than one launch's grid holds (each thread block loops:
/// 66,000 blocks against the grid's 65,535, so the last 465 thread blocks take a second one).
void quantization() {
  struct Shape {
    int64_t rows, cols, block;
  };
  for (Shape s : {Shape{3, 1000, 128}, Shape{5, 257, 64}, Shape{2, 31, 2}, Shape{33000, 4, 2}})
    for (int32_t dt : {0, 1})
      for (int bits : {8, 4}) {
        std::vector<double> x = zrt::test::quantizationInputs(s.rows, s.cols, s.block, bits, 5 + bits);
        Tensor t{dt, std::vector<float>(x.size())};
        for (size_t i = 0; i < x.size(); ++i) {
          t.values[i] = dt == 1 ? float(zrt::bf16(static_cast<float>(x[i]))) : static_cast<float>(x[i]);
          x[i] = t.values[i];
        }
        const std::vector<uint8_t> want = zrt::test::referenceQuantize(x, s.rows, s.cols, s.block, bits);
        auto tb = t.bytes();
        DeviceBuffer dx(tb), dq(want.size()), dy(tb.size());
        zrt::cuda::quantize(dt, dx.ptr, dq.ptr, s.rows, s.cols, s.block, bits, nullptr);
        const std::vector<unsigned char> got = dq.host();
        size_t wrong = 0, first = 0;
        for (size_t i = 0; i < want.size(); ++i)
          if (got[i] != want[i] && !wrong++)
            first = i;
        const std::string what = "quantize " + std::to_string(s.rows) + "x" + std::to_string(s.cols) + " block " +
                                 std::to_string(s.block) + " int" + std::to_string(bits) + " " + name(dt);
        std::printf("%s %-40s %zu wrong bytes%s\n", wrong ? "FAIL" : "ok  ", what.c_str(), wrong,
                    wrong ? (" from " + std::to_string(first)).c_str() : "");
        failures += wrong != 0;
        if (wrong && failFast)
          std::exit(1);
        zrt::cuda::dequantize(dt, dq.ptr, dy.ptr, s.rows, s.cols, s.block, bits, nullptr);
        std::vector<double> back = zrt::test::referenceDequantize(want, s.rows, s.cols, s.block, bits);
        std::vector<float> wantBack(back.size());
        for (size_t i = 0; i < back.size(); ++i)
          wantBack[i] = dt == 1 ? float(zrt::bf16(static_cast<float>(back[i]))) : static_cast<float>(back[i]);
        compare("de" + what, decode(dy.host(), dt), wantBack, 0);
      }
  // Compression training's fake quantization (DeepSpeed's quantizers), f32 as the reference computes
  // it; more groups than one launch's grid, and the gate off (a copy).
  // Contiguous groups, and (width 70) blocks of columns of a [1000, 210] tensor.
  for (bool asymmetric : {false, true})
    for (auto [groups, bits, width] : {std::tuple<int64_t, int, int64_t>{1, 8, 210000}, {3, 4, 70000},
                                       {70000, 2, 3}, {3, 8, 70}}) {
      const int64_t n = 210000;
      std::vector<double> x = zrt::test::quantizationInputs(1, n, 64, 8, 17 + bits);
      Tensor t{0, std::vector<float>(n)};
      for (int64_t i = 0; i < n; ++i)
        x[i] = t.values[i] = static_cast<float>(x[i] * 0.02);
      std::vector<double> want = zrt::test::referenceFakeQuantize(x, groups, bits, asymmetric, width);
      std::vector<float> wantF(want.begin(), want.end());
      auto tb = t.bytes();
      const float on = 1.0f, off = 0.0f;
      std::vector<unsigned char> onb(4), offb(4);
      std::memcpy(onb.data(), &on, 4);
      std::memcpy(offb.data(), &off, 4);
      DeviceBuffer dx(tb), dy(tb.size()), gateOn(onb), gateOff(offb);
      const std::string what = std::string("fake_quantize ") + (asymmetric ? "asym" : "sym") + " " +
                               std::to_string(groups) + " groups of runs of " + std::to_string(width) + " int" +
                               std::to_string(bits);
      zrt::cuda::fakeQuantize(0, dx.ptr, gateOn.ptr, dy.ptr, n, groups, width, bits, asymmetric, nullptr);
      compare(what, decode(dy.host(), 0), wantF, 0);
      zrt::cuda::fakeQuantize(0, dx.ptr, gateOff.ptr, dy.ptr, n, groups, width, bits, asymmetric, nullptr);
      compare(what + " gate off", decode(dy.host(), 0), t.values, 0);
    }
  // Sparse pruning's mask (zc.apply_mask): exact products by 0 and 1 with the gate on, a copy off.
  for (int32_t dt : {0, 1}) {
    const int64_t n = 210000;
    std::vector<double> x = zrt::test::quantizationInputs(1, n, 64, 8, 29);
    Tensor t{dt, std::vector<float>(n)}, mask{0, std::vector<float>(n)};
    std::vector<float> masked(n);
    for (int64_t i = 0; i < n; ++i) {
      t.values[i] = dt == 1 ? float(zrt::bf16(static_cast<float>(x[i]))) : static_cast<float>(x[i]);
      mask.values[i] = (i * 7919) % 3 ? 1.0f : 0.0f;
      masked[i] = t.values[i] * mask.values[i];
    }
    const float on = 1.0f, off = 0.0f;
    std::vector<unsigned char> onb(4), offb(4);
    std::memcpy(onb.data(), &on, 4);
    std::memcpy(offb.data(), &off, 4);
    auto tb = t.bytes();
    DeviceBuffer dx(tb), dm(mask.bytes()), dy(tb.size()), gateOn(onb), gateOff(offb);
    zrt::cuda::applyMask(dt, dx.ptr, gateOn.ptr, dm.ptr, dy.ptr, n, n, 1, nullptr);
    compare(std::string("apply_mask ") + name(dt), decode(dy.host(), dt), masked, 0);
    zrt::cuda::applyMask(dt, dx.ptr, gateOff.ptr, dm.ptr, dy.ptr, n, n, 1, nullptr);
    compare(std::string("apply_mask gate off ") + name(dt), decode(dy.host(), dt), t.values, 0);
    // Row pruning's mask: one value per index of axis 1 of a [70, 300, 10] tensor.
    std::vector<float> rows(n);
    for (int64_t i = 0; i < n; ++i)
      rows[i] = t.values[i] * mask.values[(i / 10) % 300];
    zrt::cuda::applyMask(dt, dx.ptr, gateOn.ptr, dm.ptr, dy.ptr, n, 300, 10, nullptr);
    compare(std::string("apply_mask rows ") + name(dt), decode(dy.host(), dt), rows, 0);
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
  // The control communicator is the runtime's MPI one, which initializes MPI itself (a second
  // MPI_Init here aborted the first run on a GPU, 2026-11-26).
  auto control = zrt::createMpiCommunicator(nullptr, nullptr);
  const int rank = control->rank(), ranks = control->size();
  zrt::cuda::selectDevice();
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  auto comm = zrt::cuda::createNcclCommunicator(std::move(control), stream);
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
  // Ring attention's step: this rank's block to the next, the previous rank's into recv.
  comm->sendRecv(send.ptr, recv.ptr, count * 4, (rank + 1) % ranks, (rank + ranks - 1) % ranks);
  cudaStreamSynchronize(stream);
  want.assign(count, 0);
  for (int64_t i = 0; i < count; ++i)
    want[i] = float((rank + ranks - 1) % ranks + 1) * 0.5f + float(i % 7);
  got = decode(recv.host(), 0);
  got.resize(count);
  compare("nccl ring send/recv (rank " + std::to_string(rank) + ")", got, want, 0);
  // Context parallelism's all-to-all: block p of each rank to rank p.
  comm->run({zrt::Collective::AllToAll, 0, send.ptr, recv.ptr, count, false, 0});
  cudaStreamSynchronize(stream);
  want.assign(count * ranks, 0);
  for (int r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < count; ++i)
      want[r * count + i] = float(r + 1) * 0.5f + float((rank * count + i) % 7);
  compare("nccl all_to_all (rank " + std::to_string(rank) + ")", decode(recv.host(), 0), want, 0);
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
  using namespace conformance;
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
      std::fprintf(stderr, "usage: %s [--fail-fast] [--only elementwise|optimizers|matmuls|sums|quantize|rows|attention|ring|layouts|fused|moe]"
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
  if (run("sums"))
    trainingSums(rng);
  if (run("quantize"))
    quantization();
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
  if (run("ring"))
    ringAttention(rng);
  if (run("layouts"))
    layouts(rng);
  if (run("fused"))
    fusedMatmuls(rng);
  if (run("moe"))
    moe(rng);
#if defined(ZRT_CUDA_ON_CPU)
  if (only.empty())
    inventory();
#endif
  std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
