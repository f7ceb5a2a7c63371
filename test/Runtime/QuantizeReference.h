// The f64 reference of block-wise quantization (zrt/Quantize.h's definition, written again
// without its helpers): every f32 division and product is done in f64 and rounded once to f32,
// which is the correctly rounded f32 result the kernels' IEEE operations must give. Shared by the
// CPU kernels' test (every ISA level) and the CUDA conformance suite.
#ifndef ZRT_TEST_QUANTIZEREFERENCE_H
#define ZRT_TEST_QUANTIZEREFERENCE_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace zrt::test {

inline int64_t referenceRowBytes(int64_t cols, int64_t block, int bits) {
  const int64_t blocks = (cols + block - 1) / block;
  const int64_t values = bits == 4 ? (cols + 1) / 2 : cols;
  return 4 * blocks + (values + 3) / 4 * 4;
}

/// x: the input values (already of the input's type, as doubles).
inline std::vector<uint8_t> referenceQuantize(const std::vector<double> &x, int64_t rows, int64_t cols,
                                              int64_t block, int bits) {
  const int64_t blocks = (cols + block - 1) / block, stride = referenceRowBytes(cols, block, bits);
  const double qmax = bits == 4 ? 7 : 127;
  std::vector<uint8_t> out(rows * stride, 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t first = b * block, last = std::min(cols, first + block);
      double amax = 0;
      for (int64_t c = first; c < last; ++c)
        amax = std::max(amax, std::fabs(x[r * cols + c]));
      const float scale = static_cast<float>(amax / qmax);
      std::memcpy(&out[r * stride + 4 * b], &scale, 4);
      for (int64_t c = first; c < last; ++c) {
        double level = 0;
        if (scale != 0.0f) {
          const float quotient = static_cast<float>(x[r * cols + c] / static_cast<double>(scale));
          level = std::nearbyint(static_cast<double>(quotient)); // ties to even
          level = std::min(qmax, std::max(-qmax, level));
        }
        const int q = static_cast<int>(level);
        uint8_t *values = &out[r * stride + 4 * blocks];
        if (bits == 8)
          values[c] = static_cast<uint8_t>(static_cast<int8_t>(q));
        else
          values[c / 2] |= static_cast<uint8_t>((q & 0xF) << (c % 2 ? 4 : 0));
      }
    }
  return out;
}

inline std::vector<double> referenceDequantize(const std::vector<uint8_t> &in, int64_t rows, int64_t cols,
                                               int64_t block, int bits) {
  const int64_t blocks = (cols + block - 1) / block, stride = referenceRowBytes(cols, block, bits);
  std::vector<double> y(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float scale;
      std::memcpy(&scale, &in[r * stride + 4 * (c / block)], 4);
      const uint8_t *values = &in[r * stride + 4 * blocks];
      int q = bits == 8 ? static_cast<int8_t>(values[c]) : (values[c / 2] >> (c % 2 ? 4 : 0)) & 0xF;
      if (bits == 4 && q >= 8)
        q -= 16;
      y[r * cols + c] = static_cast<float>(static_cast<double>(q) * static_cast<double>(scale));
    }
  return y;
}

/// Values that exercise the rounding: random magnitudes over several decades, whole blocks of
/// zeros, and quotients exactly halfway between levels (a block whose largest value makes the
/// scale a power of two, so that (k + 1/2) x scale is exact and must round to the even level).
inline std::vector<double> quantizationInputs(int64_t rows, int64_t cols, int64_t block, int bits, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1, 1), decade(-3, 2);
  std::vector<double> x(rows * cols);
  const double qmax = bits == 4 ? 7 : 127;
  const int64_t blocks = (cols + block - 1) / block;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t first = b * block, last = std::min(cols, first + block);
      const int kind = static_cast<int>((r * blocks + b) % 4);
      for (int64_t c = first; c < last; ++c) {
        double &v = x[r * cols + c];
        if (kind == 0)
          v = 0;
        else if (kind == 1) { // ties: the scale is 2^-3, values (k + 1/2) / 8
          const double scale = 0.125;
          v = c == first ? qmax * scale : (std::floor(unit(rng) * (qmax - 1)) + 0.5) * scale;
        } else
          v = unit(rng) * std::pow(10.0, decade(rng));
        v = static_cast<float>(v);
      }
    }
  return x;
}

/// DeepSpeed's fake quantization (deepspeed/compression/utils.py, SymQuantizer and AsymQuantizer)
/// as PyTorch runs it in f32, each operation in f64 and rounded once to f32 (exactly PyTorch's
/// f32 result). A group whose scale is 0 is returned as it is (DeepSpeed would give NaN).
inline std::vector<double> referenceFakeQuantize(const std::vector<double> &x, int64_t groups, int bits,
                                                 bool asymmetric, int64_t width = 0) {
  auto f = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  const int64_t size = static_cast<int64_t>(x.size()) / groups;
  if (width == 0)
    width = size; // contiguous groups
  // Value i of group g: runs of `width`, one every groups * width (zrt/FakeQuantize.h).
  auto at = [&](int64_t g, int64_t i) { return (i / width) * groups * width + g * width + i % width; };
  const double range = std::ldexp(1.0, bits);
  std::vector<double> y(x.size());
  for (int64_t g = 0; g < groups; ++g) {
    double lo = x[at(g, 0)], hi = lo, amax = 0;
    for (int64_t i = 0; i < size; ++i) {
      lo = std::min(lo, x[at(g, i)]);
      hi = std::max(hi, x[at(g, i)]);
      amax = std::max(amax, std::fabs(x[at(g, i)]));
    }
    const double scale = asymmetric ? f(f(hi - lo) / range) : f(f(2 * amax) / range);
    const double zero = asymmetric && scale != 0 ? f(std::nearbyint(f(lo / scale)) * scale) : 0;
    for (int64_t i = 0; i < size; ++i) {
      const double v = x[at(g, i)];
      if (scale == 0) {
        y[at(g, i)] = v;
        continue;
      }
      double q = std::nearbyint(f((asymmetric ? f(v - zero) : v) / scale));
      q = asymmetric ? std::min(range - 1, std::max(0.0, q)) : std::min(range / 2 - 1, std::max(-range / 2, q));
      y[at(g, i)] = asymmetric ? f(f(q * scale) + zero) : f(q * scale);
    }
  }
  return y;
}

} // namespace zrt::test

#endif // ZRT_TEST_QUANTIZEREFERENCE_H
