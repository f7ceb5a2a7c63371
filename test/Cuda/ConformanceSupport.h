// What the CUDA conformance suite's cases share (CudaConformance.cpp, RowConformance.cpp): host
// tensors in f32 or bf16, device buffers, the comparison with the CPU backend's result and the
// failure count, and the groups of cases each file defines.
#ifndef ZRT_TEST_CUDA_CONFORMANCE_SUPPORT_H
#define ZRT_TEST_CUDA_CONFORMANCE_SUPPORT_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "zrt/bf16.h"

namespace conformance {

inline int failures = 0;
inline bool failFast = false; // --fail-fast: stop at the first mismatch (the broken copies' tests)

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

inline std::vector<float> decode(const std::vector<unsigned char> &b, int32_t dtype) {
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

inline Tensor random(int32_t dtype, size_t n, std::mt19937 &rng, float scale = 1.0f) {
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

inline void compare(const std::string &what, const std::vector<float> &got, const std::vector<float> &want, double tol) {
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < want.size() && got.size() == want.size(); ++i) {
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

inline const char *name(int32_t dtype) { return dtype == 1 ? "bf16" : "f32"; }

inline std::vector<unsigned char> raw(const std::vector<int32_t> &v) {
  std::vector<unsigned char> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

/// An error flag the kernels raise (an int in device memory).
inline int32_t flagOf(const DeviceBuffer &flag) {
  const std::vector<unsigned char> b = flag.host();
  int32_t value;
  std::memcpy(&value, b.data(), 4);
  return value;
}

// The row kernels' groups (RowConformance.cpp): the row-wise ops and losses at R rows of C columns,
// the vocabulary-parallel cross-entropy at R rows, and attention.
void rowsAt(std::mt19937 &rng, int64_t R, int64_t C);
void vocabParallel(std::mt19937 &rng, int64_t R);
void attention(std::mt19937 &rng);
// Ring attention's step kernels and rotary at context positions, over a ring of ranks simulated here.
void ringAttention(std::mt19937 &rng);
// The Mixture-of-Experts kernels (MoeConformance.cpp).
void moe(std::mt19937 &rng);

} // namespace conformance

#endif // ZRT_TEST_CUDA_CONFORMANCE_SUPPORT_H
