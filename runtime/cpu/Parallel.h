// The CPU backend's one threading model: OpenMP static loops over independent items.
#ifndef ZRT_CPU_PARALLEL_H
#define ZRT_CPU_PARALLEL_H

#include <cstdint>

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

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_PARALLEL_H
