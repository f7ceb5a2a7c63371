// The CUDA conformance suite's row kernels (ConformanceSupport.h): softmax, the normalizations,
// rotary, the losses and the fused LM head a block per row, the embedding, the vocabulary-parallel
// cross-entropy, and causal attention (the tensor-core kernels for bf16), against the CPU backend.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ConformanceSupport.h"
#include "cuda/AttentionPath.h"
#include "cuda/CudnnAttention.h"
#include "cuda/Kernels.h"
#include "cuda/RingAttention.h"
#include "zrt/MatmulCrossEntropy.h"
#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace conformance {

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
    for (double offset : {0.0, 1.0}) { // Gemma's gain, 1 + gamma
      const std::string what = offset ? " gain_offset 1 " : " ";
      zrt_rmsnorm(dt, xb.data(), gb.data(), cpu.data(), R, C, 1e-6, offset);
      zrt::cuda::rmsnorm(dt, dx.ptr, dg.ptr, out.ptr, R, C, 1e-6, offset, nullptr);
      compare("rmsnorm" + what + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
      zrt_rmsnorm_grad(dt, dyb.data(), xb.data(), gb.data(), cpu.data(), cpu2.data(), R, C, 1e-6, offset);
      zrt::cuda::rmsnormGrad(dt, ddy.ptr, dx.ptr, dg.ptr, out.ptr, out2.ptr, R, C, 1e-6, offset, nullptr);
      compare("rmsnorm_grad dx" + what + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
      compare("rmsnorm_grad dgamma" + what + name(dt), decode(out2.host(), dt), decode(cpu2, dt), tol * 10);
    }
    {
      // Rotary: 2 x 37 positions, 3 heads of 8; forward and inverse, two thetas.
      const int64_t B = 2, T = 37, H = 3, D = 8;
      Tensor q = random(dt, B * T * H * D, rng);
      auto qb = q.bytes();
      DeviceBuffer dq(qb), dout(qb.size());
      std::vector<unsigned char> want(qb.size());
      // The whole head, and its first quarter (GPT-NeoX's rotary_pct 0.25; the rest passed through).
      for (double theta : {10000.0, 500000.0})
        for (int32_t inverse : {0, 1})
          for (int64_t dims : {int64_t(0), D / 4}) {
            zrt_rotary(dt, qb.data(), want.data(), B, T, H * D, H, theta, inverse, dims);
            zrt::cuda::rotary(dt, dq.ptr, dout.ptr, B, T, H * D, H, theta, inverse != 0, dims, nullptr);
            compare(std::string("rotary ") + (inverse ? "inverse " : "") + std::to_string(int64_t(theta)) +
                        (dims ? " rotary_dims " + std::to_string(dims) + " " : " ") + name(dt),
                    decode(dout.host(), dt), decode(want, dt), tol);
          }
    }

    std::vector<int32_t> labels(R);
    for (auto &l : labels)
      l = static_cast<int32_t>(rng() % C);
    auto lb = raw(labels);
    DeviceBuffer dl(lb), loss(4), bad(4);
    float cpuLoss = 0;
    float one = 1.0f;
    std::vector<unsigned char> oneb(4);
    std::memcpy(oneb.data(), &one, 4);
    DeviceBuffer done(oneb);
    // Plain, and with Gemma 2's final-logit soft-cap (0.5: the inputs' range, so tanh bends).
    for (double softcap : {0.0, 0.5}) {
      const std::string cap = softcap > 0 ? "softcap 0.5 " : "";
      zrt_cross_entropy(dt, xb.data(), lb.data(), &cpuLoss, R, C, softcap);
      zrt::cuda::crossEntropy(dt, dx.ptr, static_cast<const int32_t *>(dl.ptr), static_cast<float *>(loss.ptr), R, C,
                              softcap, static_cast<int *>(bad.ptr), nullptr);
      compare("cross_entropy " + cap + name(dt), decode(loss.host(), 0), {cpuLoss}, 1e-5);
      compare("cross_entropy labels in range " + cap + name(dt), {float(flagOf(bad))}, {0.0f}, 0);
      zrt_cross_entropy_grad(dt, &one, xb.data(), lb.data(), cpu.data(), R, C, softcap);
      zrt::cuda::crossEntropyGrad(dt, static_cast<const float *>(done.ptr), dx.ptr,
                                  static_cast<const int32_t *>(dl.ptr), out.ptr, R, C, softcap,
                                  static_cast<int *>(bad.ptr), nullptr);
      compare("cross_entropy_grad " + cap + name(dt), decode(out.host(), dt), decode(cpu, dt), tol);
    }
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
      for (int64_t chunk : {R, (R + 2) / 3})
        for (double softcap : {0.0, 2.0}) { // plain, and Gemma 2's final-logit cap
          const auto layout = zrt::MatmulCrossEntropyLayout::of(R, classes, classes * C, chunk, eb);
          std::vector<unsigned char> cpuWs(layout.bytes), cpuDx(R * C * eb), cpuDw(classes * C * eb);
          DeviceBuffer ws(layout.bytes), gx(R * C * eb), gw(classes * C * eb);
          zrt_matmul_cross_entropy(dt, xb.data(), wb.data(), hlb.data(), &one, &cpuLoss, cpuDx.data(), cpuDw.data(),
                                   cpuWs.data(), R, classes, C, transW, chunk, softcap);
          zrt::cuda::matmulCrossEntropy(dt, dx.ptr, dw.ptr, static_cast<const int32_t *>(dhl.ptr),
                                        static_cast<const float *>(done.ptr), static_cast<float *>(loss.ptr), gx.ptr,
                                        gw.ptr, ws.ptr, R, classes, C, transW, chunk, softcap,
                                        static_cast<int *>(bad.ptr), nullptr);
          const std::string what = std::string("matmul_cross_entropy ") + (transW ? "[V, C] " : "[C, V] ") +
                                   "chunk " + std::to_string(chunk) + (softcap > 0 ? " softcap 2 " : " ") + name(dt);
          // In bf16 the logits are rounded to bf16 after products that sum in another order here
          // (cuBLASLt) than on the CPU: a logit may round one bf16 step (2^-8 of it) the other way,
          // and over a few rows the mean loss moves by that much. The f32 loss agrees to 1e-4.
          const double lossTol = dt == 1 ? 1.0 / 256 : 1e-4;
          compare(what + " loss", decode(loss.host(), 0), {cpuLoss}, lossTol);
          compare(what + " dx", decode(gx.host(), dt), decode(cpuDx, dt), tol * 10);
          compare(what + " dw", decode(gw.host(), dt), decode(cpuDw, dt), tol * 10);
          // The loss alone (the eval function's head).
          const auto lossLayout = zrt::MatmulCrossEntropyLayout::forLoss(R, classes, chunk, eb);
          std::vector<unsigned char> cpuLossWs(lossLayout.bytes);
          DeviceBuffer lossWs(lossLayout.bytes);
          zrt_matmul_cross_entropy_loss(dt, xb.data(), wb.data(), hlb.data(), &cpuLoss, cpuLossWs.data(), R, classes, C,
                                        transW, chunk, softcap);
          zrt::cuda::matmulCrossEntropyLoss(dt, dx.ptr, dw.ptr, static_cast<const int32_t *>(dhl.ptr),
                                            static_cast<float *>(loss.ptr), lossWs.ptr, R, classes, C, transW, chunk,
                                            softcap, static_cast<int *>(bad.ptr), nullptr);
          compare(what + " loss alone", decode(loss.host(), 0), {cpuLoss}, lossTol);
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
                              C, 0.0, static_cast<int *>(labelFlag.ptr), nullptr);
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
  for (int32_t dt : {0, 1})
    for (double softcap : {0.0, 2.0}) {
      const size_t eb = dt == 1 ? 2 : 4;
      const std::string cap = softcap > 0 ? "softcap 2 " : "";
      Tensor logits = random(dt, R * V, rng, 3.0f);
      std::vector<int32_t> labels(R);
      for (auto &l : labels)
        l = static_cast<int32_t>(rng() % V);
      auto whole = logits.bytes(), lb = raw(labels);
      float cpuLoss = 0, one = 1.0f;
      std::vector<unsigned char> cpuGrad(whole.size());
      zrt_cross_entropy(dt, whole.data(), lb.data(), &cpuLoss, R, V, softcap);
      zrt_cross_entropy_grad(dt, &one, whole.data(), lb.data(), cpuGrad.data(), R, V, softcap);
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
        zrt::cuda::vocabRowMaxima(dt, shards[rank]->ptr, static_cast<float *>(own.ptr), R, half, softcap, nullptr);
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
                               static_cast<const float *>(gathered.ptr), 2,
                               zrt::cuda::VocabRowStats{f, f + R, f + 2 * R},
                               R, zrt::cuda::VocabSlice{rank * half, half, V}, softcap, static_cast<int *>(bad.ptr),
                               nullptr);
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
      compare("cross_entropy_vocab_shard x2 " + cap + name(dt), decode(loss.host(), 0), {cpuLoss}, 1e-5);
      for (int rank = 0; rank < 2; ++rank) {
        DeviceBuffer grad(R * half * eb);
        zrt::cuda::vocabGrad(dt, static_cast<const float *>(done.ptr), shards[rank]->ptr,
                             static_cast<const int32_t *>(dl.ptr), all, grad.ptr, R,
                             zrt::cuda::VocabSlice{rank * half, half, V}, softcap, nullptr);
        std::vector<float> want = decode(cpuGrad, dt), mine;
        for (int64_t r = 0; r < R; ++r)
          mine.insert(mine.end(), want.begin() + r * V + rank * half, want.begin() + r * V + (rank + 1) * half);
        compare("cross_entropy_grad_vocab_shard rank " + std::to_string(rank) + " " + cap + name(dt),
                decode(grad.host(), dt), mine, dt == 1 ? 2e-2 : 1e-5);
      }
      compare(std::string("vocab_shard labels in range ") + name(dt), decode(bad.host(), 0), {0.0f}, 0);
    }
}

void attention(std::mt19937 &rng) {
  // Multi-head (G = H) and grouped-query attention; bf16 at these head sizes runs the tensor-core
  // kernels (FlashAttention.cu), D up to 128. zc's variants (a scale, soft-capped scores, sliding
  // windows shorter than a tile, across tiles and longer than the context) on the shapes that span
  // several tiles, where the flash kernels skip the tiles a window excludes. Each case on zcc's
  // kernels (ZRT_ATTENTION=own) and, where cuDNN takes it, again through cuDNN's fused attention
  // (on a GPU the real one; without one, test/CudaOnCpu/CpuSdpa.cpp's stand-in).
  struct Shape {
    int64_t B, T, D, H, G;
    bool variants;
  };
  const zrt::AttentionVariant plain{}, variants[] = {{0.3, 5.0, 0}, {0.0, 0.0, 7}, {0.2, 3.0, 70}, {0.0, 0.0, 500}};
  const std::string noCudnn = zrt::cuda::cudnnAttentionRefusal(zrt::cuda::SdpaProblem::of(1, 1, 64, 128, 2, 2, plain),
                                                               plain, zrt::cuda::cudnnSupport());
  if (!noCudnn.empty())
    std::printf("note attention: cuDNN's fused attention not checked here: %s\n", noCudnn.c_str());
  // The same inputs on every path the op can take: zcc's kernels, then cuDNN where it takes the op.
  auto run = [&](const Shape &sh, int32_t dt, const zrt::AttentionVariant &variant) {
    const int64_t B = sh.B, T = sh.T, D = sh.D, H = sh.H, G = sh.G;
    const int64_t C = H * D, Ckv = G * D;
    const double tol = dt == 1 ? 3e-2 : 1e-4;
    Tensor q = random(dt, B * T * C, rng), k = random(dt, B * T * Ckv, rng), v = random(dt, B * T * Ckv, rng),
           g = random(dt, B * T * C, rng);
    auto qb = q.bytes(), kb = k.bytes(), vb = v.bytes(), gb = g.bytes();
    DeviceBuffer dq(qb), dk(kb), dv(vb), dg(gb), out(qb.size()), o1(qb.size()), o2(kb.size()), o3(kb.size());
    std::vector<unsigned char> cpu(qb.size()), c1(qb.size()), c2(kb.size()), c3(kb.size());
    std::string shape = " T" + std::to_string(T) + " D" + std::to_string(D) + " H" + std::to_string(H) + " G" +
                        std::to_string(G) + " " + name(dt);
    if (variant.scale > 0.0 || variant.softcap > 0.0 || variant.window > 0)
      shape += " scale " + std::to_string(variant.scale) + " softcap " + std::to_string(variant.softcap) +
               " window " + std::to_string(variant.window);
    zrt_causal_attention(dt, qb.data(), kb.data(), vb.data(), cpu.data(), B, T, C, H, G, variant.scale,
                         variant.softcap, variant.window);
    zrt_causal_attention_grad(dt, gb.data(), qb.data(), kb.data(), vb.data(), c1.data(), c2.data(), c3.data(), B, T,
                              C, H, G, variant.scale, variant.softcap, variant.window);
    std::vector<zrt::cuda::AttentionPath> paths{zrt::cuda::AttentionPath::Own};
    if (zrt::cuda::cudnnAttentionRefusal(zrt::cuda::SdpaProblem::of(dt, B, T, C, H, G, variant), variant,
                                         zrt::cuda::cudnnSupport())
            .empty())
      paths.push_back(zrt::cuda::AttentionPath::Cudnn);
    for (zrt::cuda::AttentionPath path : paths) {
      zrt::cuda::setAttentionPath(path);
      const std::string what = shape + (path == zrt::cuda::AttentionPath::Cudnn ? " cudnn" : "");
      zrt::cuda::causalAttention(dt, dq.ptr, dk.ptr, dv.ptr, out.ptr, B, T, C, H, G, variant, nullptr);
      compare("causal_attention" + what, decode(out.host(), dt), decode(cpu, dt), tol);
      zrt::cuda::causalAttentionGrad(dt, dg.ptr, dq.ptr, dk.ptr, dv.ptr, o1.ptr, o2.ptr, o3.ptr, B, T, C, H, G,
                                     variant, nullptr);
      compare("causal_attention_grad dq" + what, decode(o1.host(), dt), decode(c1, dt), tol);
      compare("causal_attention_grad dk" + what, decode(o2.host(), dt), decode(c2, dt), tol);
      compare("causal_attention_grad dv" + what, decode(o3.host(), dt), decode(c3, dt), tol);
    }
  };
  // One position; one whole tile over three sequences; a tile and a bit; several with a ragged end; a
  // head size off the tensor cores' multiples of 16 (bf16 on the row kernels).
  for (Shape sh : {Shape{1, 1, 32, 2, 1, false}, Shape{3, 64, 48, 4, 4, false}, Shape{2, 17, 16, 3, 3, false},
                   Shape{2, 17, 16, 6, 2, true}, Shape{1, 200, 64, 4, 2, true}, Shape{1, 130, 128, 2, 1, true},
                   Shape{2, 33, 24, 4, 2, true}})
    for (int32_t dt : {0, 1}) {
      run(sh, dt, plain);
      if (sh.variants)
        for (const zrt::AttentionVariant &variant : variants)
          run(sh, dt, variant);
    }
  zrt::cuda::setAttentionPath(zrt::cuda::AttentionPath::Auto);
}

namespace {

/// Sequence chunk h of context rank r among `ranks` (Megatron's 2-chunk layout).
int64_t chunkOf(int64_t ranks, int64_t r, int64_t h) { return h == 0 ? r : 2 * ranks - 1 - r; }

/// Rank r's tokens of a whole [B, T, width] tensor: chunks r and 2 ranks - 1 - r of T / (2 ranks).
std::vector<float> contextRows(const std::vector<float> &whole, int64_t B, int64_t T, int64_t width, int64_t r,
                               int64_t ranks) {
  const int64_t half = T / (2 * ranks), L = 2 * half;
  std::vector<float> part(B * L * width);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < L; ++i) {
      const int64_t token = chunkOf(ranks, r, i / half) * half + i % half;
      std::copy_n(whole.begin() + (b * T + token) * width, width, part.begin() + (b * L + i) * width);
    }
  return part;
}

/// The inverse: rank r's rows written into their places of the whole tensor.
void placeContextRows(std::vector<float> &whole, const std::vector<float> &part, int64_t B, int64_t T, int64_t width,
                      int64_t r, int64_t ranks) {
  const int64_t half = T / (2 * ranks), L = 2 * half;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < L; ++i) {
      const int64_t token = chunkOf(ranks, r, i / half) * half + i % half;
      std::copy_n(part.begin() + (b * L + i) * width, width, whole.begin() + (b * T + token) * width);
    }
}

std::vector<float> floats(const DeviceBuffer &d) { return decode(d.host(), 0); }

} // namespace

void ringAttention(std::mt19937 &rng) {
  // The ring of `ranks` context ranks run here in one process: each rank's steps over every
  // rank's key/value block in the ring's order, the key/value gradients of each block summed over
  // the ranks it visits; the whole sequence's causal attention on the CPU is the reference. One
  // rank (diagonal and whole pairs of its own chunks), 2, 3 and 4 ranks, grouped-query heads and
  // head sizes off the tensor cores' multiples.
  struct Shape {
    int64_t ranks, B, half, D, H, G;
  };
  for (Shape sh : {Shape{1, 1, 3, 8, 2, 1}, Shape{2, 2, 5, 16, 4, 2}, Shape{3, 1, 6, 24, 3, 3},
                   Shape{4, 1, 4, 32, 4, 1}})
    for (int32_t dt : {0, 1}) {
      const int64_t ranks = sh.ranks, B = sh.B, D = sh.D, H = sh.H, G = sh.G, L = 2 * sh.half, T = ranks * L;
      const int64_t C = H * D, Ckv = G * D;
      const double tol = dt == 1 ? 3e-2 : 1e-4;
      const std::string what = " cp" + std::to_string(ranks) + " T" + std::to_string(T) + " D" + std::to_string(D) +
                               " H" + std::to_string(H) + " G" + std::to_string(G) + " " + name(dt);
      Tensor q = random(dt, B * T * C, rng), k = random(dt, B * T * Ckv, rng), v = random(dt, B * T * Ckv, rng),
             g = random(dt, B * T * C, rng);
      auto qb = q.bytes(), kb = k.bytes(), vb = v.bytes(), gb = g.bytes();
      std::vector<unsigned char> out(qb.size()), dq(qb.size()), dk(kb.size()), dv(kb.size());
      zrt_causal_attention(dt, qb.data(), kb.data(), vb.data(), out.data(), B, T, C, H, G, 0.0, 0.0, 0);
      zrt_causal_attention_grad(dt, gb.data(), qb.data(), kb.data(), vb.data(), dq.data(), dk.data(), dv.data(), B, T,
                                C, H, G, 0.0, 0.0, 0);
      // Each rank's tokens on the device.
      std::vector<std::unique_ptr<DeviceBuffer>> qs, ks, vs, gs;
      for (int64_t r = 0; r < ranks; ++r) {
        auto local = [&](const Tensor &x, int64_t width) {
          return std::make_unique<DeviceBuffer>(Tensor{dt, contextRows(x.values, B, T, width, r, ranks)}.bytes());
        };
        qs.push_back(local(q, C));
        ks.push_back(local(k, Ckv));
        vs.push_back(local(v, Ckv));
        gs.push_back(local(g, C));
      }
      std::vector<float> gotOut(B * T * C), gotDq(B * T * C), gotDk(B * T * Ckv), gotDv(B * T * Ckv);
      std::vector<std::unique_ptr<DeviceBuffer>> dks, dvs; // each block's f32 gradients, summed as it travels
      for (int64_t r = 0; r < ranks; ++r) {
        dks.push_back(std::make_unique<DeviceBuffer>(B * L * Ckv * sizeof(float)));
        dvs.push_back(std::make_unique<DeviceBuffer>(B * L * Ckv * sizeof(float)));
      }
      for (int64_t r = 0; r < ranks; ++r) {
        const zrt::cuda::RingShape s{B, L, C, H, G, r, ranks};
        DeviceBuffer acc(B * L * C * sizeof(float)), m(s.rows() * sizeof(float)), l(s.rows() * sizeof(float)),
            o(B * L * C * (dt == 1 ? 2 : 4)), delta(s.rows() * sizeof(float)), dqAcc(B * L * C * sizeof(float));
        auto *accF = static_cast<float *>(acc.ptr), *mF = static_cast<float *>(m.ptr), *lF = static_cast<float *>(l.ptr);
        zrt::cuda::ringAttentionBegin(s, accF, mF, lF, nullptr);
        for (int64_t step = 0; step < ranks; ++step) {
          const int64_t source = (r - step + ranks) % ranks;
          zrt::cuda::ringAttentionStep(dt, s, qs[r]->ptr, ks[source]->ptr, vs[source]->ptr, source, accF, mF, lF,
                                       nullptr);
        }
        zrt::cuda::ringAttentionEnd(dt, s, accF, mF, lF, o.ptr, nullptr);
        placeContextRows(gotOut, decode(o.host(), dt), B, T, C, r, ranks);
        zrt::cuda::ringAttentionGradBegin(dt, s, gs[r]->ptr, accF, static_cast<float *>(delta.ptr),
                                          static_cast<float *>(dqAcc.ptr), nullptr);
        for (int64_t step = 0; step < ranks; ++step) {
          const int64_t source = (r - step + ranks) % ranks;
          zrt::cuda::ringAttentionGradStep(dt, s, gs[r]->ptr, qs[r]->ptr, ks[source]->ptr, vs[source]->ptr, mF,
                                           static_cast<float *>(delta.ptr), source, static_cast<float *>(dqAcc.ptr),
                                           static_cast<float *>(dks[source]->ptr),
                                           static_cast<float *>(dvs[source]->ptr), nullptr);
        }
        placeContextRows(gotDq, floats(dqAcc), B, T, C, r, ranks);
      }
      for (int64_t r = 0; r < ranks; ++r) {
        placeContextRows(gotDk, floats(*dks[r]), B, T, Ckv, r, ranks);
        placeContextRows(gotDv, floats(*dvs[r]), B, T, Ckv, r, ranks);
      }
      compare("ring_attention" + what, gotOut, decode(out, dt), tol);
      compare("ring_attention_grad dq" + what, gotDq, decode(dq, dt), tol);
      compare("ring_attention_grad dk" + what, gotDk, decode(dk, dt), tol);
      compare("ring_attention_grad dv" + what, gotDv, decode(dv, dt), tol);

      // Rotary at the global positions of each rank's tokens, both ways; over the whole head and
      // over its first half (the rest passed through).
      for (int32_t inverse : {0, 1})
        for (int64_t dims : {int64_t(0), C / H / 2 - (C / H / 2) % 2}) {
          std::vector<unsigned char> whole(qb.size());
          zrt_rotary(dt, qb.data(), whole.data(), B, T, C, H, 10000.0, inverse, dims);
          std::vector<float> got(B * T * C);
          for (int64_t r = 0; r < ranks; ++r) {
            DeviceBuffer y(qs[r]->size);
            zrt::cuda::rotaryContext(dt, qs[r]->ptr, y.ptr, B, L, C, H, 10000.0, inverse != 0, dims, r, ranks,
                                     nullptr);
            placeContextRows(got, decode(y.host(), dt), B, T, C, r, ranks);
          }
          compare(std::string("rotary_context") + (inverse ? " inverse" : "") +
                      (dims ? " rotary_dims " + std::to_string(dims) : "") + what,
                  got, decode(whole, dt), dt == 1 ? 2e-2 : 1e-5);
        }
    }
}

} // namespace conformance
