// The CPU backend's one threading model: OpenMP static loops over independent items.
#ifndef ZRT_CPU_PARALLEL_H
#define ZRT_CPU_PARALLEL_H

#include <cstdint>
#include <cstdlib>

#include "core/Error.h"

#include "zrt/bf16.h"

// The kernels in this header and in the headers built on it are compiled once per x86 ISA
// level (cpu/IsaKernels.cpp). Each compilation puts them in its own inline namespace, so the
// linker never merges an AVX-512 instance of a template into code that runs on any CPU.
#ifndef ZRT_ISA
#define ZRT_ISA generic
#endif

namespace zrt::cpu {
inline namespace ZRT_ISA {

/// Runs fn(i) for i in [0, n); in parallel only when there is at least `grain`
/// work, since waking the thread team costs a few microseconds.
template <class F>
inline void parallelFor(int64_t n, int64_t grain, F &&fn) {
#pragma omp parallel for schedule(static) if (n >= grain)
  for (int64_t i = 0; i < n; ++i)
    fn(i);
}

/// Accumulation type: f32 for f32 and bf16 tensors, f64 for the f64 instances
/// the finite-difference tests use.
template <class T> struct AccOf { using type = float; };
template <> struct AccOf<double> { using type = double; };
template <class T> using Acc = typename AccOf<T>::type;

/// Elementwise work items below this run on one thread.
constexpr int64_t kElementGrain = 1 << 15;

/// Zeroed heap scratch of n values: std::vector's job in a kernel, but instantiated in this
/// ISA level's namespace. A std::vector<float> member the compiler does not inline is a weak
/// std:: symbol, which the linker may share between the AVX-512 build and generic code (seen
/// in the ASan build; test/Runtime/isa_symbols.sh checks for any such symbol).
template <class T> class Scratch {
public:
  explicit Scratch(int64_t n) : data_(static_cast<T *>(std::calloc(n > 0 ? n : 1, sizeof(T)))) {
    if (!data_)
      fatal("kernel", "out of memory for %lld values of scratch", static_cast<long long>(n));
  }
  ~Scratch() { std::free(data_); }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  T *data() { return data_; }
  T &operator[](int64_t i) { return data_[i]; }

private:
  T *data_;
};

/// The calling thread's workspace of at least n values of T, kept between calls and grown, never
/// shrunk; its contents are whatever the thread's last call left. For the kernels that need scratch
/// per call on every thread of a parallel loop (the attention's per-head buffers): a calloc and a free
/// per head each call cost page faults on fresh memory, every call in the sanitizer build, whose
/// allocator quarantines what is freed (a third of a sanitized GPT step's page faults). Plain
/// realloc, not std::vector, for the reason Scratch gives.
template <class T> T *threadWorkspace(int64_t n) {
  struct Buffer {
    T *data = nullptr;
    int64_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  if (n > buffer.size) {
    std::free(buffer.data);
    buffer.data = static_cast<T *>(std::malloc(static_cast<size_t>(n) * sizeof(T)));
    if (!buffer.data)
      fatal("kernel", "out of memory for %lld values of scratch", static_cast<long long>(n));
    buffer.size = n;
  }
  return buffer.data;
}

/// p[0, n) = 0, with no std:: algorithm instance (see Scratch).
template <class T> inline void zero(T *p, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    p[i] = T(0);
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_PARALLEL_H
