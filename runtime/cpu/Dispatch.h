// From the C ABI's (dtype, void *) arguments to the typed kernel templates.
#ifndef ZRT_CPU_DISPATCH_H
#define ZRT_CPU_DISPATCH_H

#include <cstdint>
#include <type_traits>

#include "core/Error.h"
#include "cpu/Parallel.h"
#include "zrt/zrt.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

/// Calls fn with a typed null pointer selecting the element type of `dtype`.
template <class F> void dispatch(const char *call, int32_t dtype, F &&fn) {
  switch (dtype) {
  case ZRT_DTYPE_F32:
    fn(static_cast<float *>(nullptr));
    return;
  case ZRT_DTYPE_BF16:
    fn(static_cast<bf16 *>(nullptr));
    return;
  default:
    fatal(call, "unknown dtype %d (0 = f32, 1 = bf16)", dtype);
  }
}

template <class T> const T *in(const void *p) { return static_cast<const T *>(p); }
template <class T> T *out(void *p) { return static_cast<T *>(p); }

} // namespace ZRT_ISA
} // namespace zrt::cpu

/// Runs `body` with T bound to the element type of `dtype`.
#define ZRT_TYPED(call, dtype, body)                                                             \
  ::zrt::cpu::dispatch(call, dtype, [&](auto *tag) {                                             \
    using T = std::remove_pointer_t<decltype(tag)>;                                              \
    body;                                                                                        \
  })

#endif // ZRT_CPU_DISPATCH_H
