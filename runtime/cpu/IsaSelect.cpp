// Picks the ISA level of the compute-bound kernels once per process (cpu/IsaKernels.h).
#include "cpu/IsaKernels.h"

#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "core/Error.h"

namespace zrt::cpu {

extern const IsaKernels kIsaKernels_generic;
#if ZRT_HAVE_ISA_AVX2
extern const IsaKernels kIsaKernels_avx2;
#endif
#if ZRT_HAVE_ISA_AVX512
extern const IsaKernels kIsaKernels_avx512;
#endif

namespace {
// Exactly the feature sets -march=x86-64-v3 / -v4 let the compiler use (AVX2, FMA, BMI1/2,
// F16C, LZCNT, MOVBE; then AVX-512 F/BW/CD/DQ/VL): asking for the level, not for a few of its
// features, keeps this test and the compiler flags from drifting apart.
bool cpuRunsAvx2() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("x86-64-v3");
#else
  return false;
#endif
}
bool cpuRunsAvx512() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("x86-64-v4");
#else
  return false;
#endif
}
} // namespace

const IsaKernels *isaKernelsFor(const char *isa) {
  if (std::strcmp(isa, "generic") == 0)
    return &kIsaKernels_generic;
#if ZRT_HAVE_ISA_AVX2
  if (std::strcmp(isa, "avx2") == 0 && cpuRunsAvx2())
    return &kIsaKernels_avx2;
#endif
#if ZRT_HAVE_ISA_AVX512
  if (std::strcmp(isa, "avx512") == 0 && cpuRunsAvx512())
    return &kIsaKernels_avx512;
#endif
  return nullptr;
}

const IsaKernels &isaKernels() {
  static const IsaKernels *chosen = [] {
    if (const char *forced = std::getenv("ZRT_ISA")) {
      const IsaKernels *k = isaKernelsFor(forced);
      if (!k)
        fatal("zrt_init", "ZRT_ISA=%s: not built in, or this CPU cannot run it "
                          "(levels: generic, avx2, avx512)", forced);
      return k;
    }
    for (const char *isa : {"avx512", "avx2"})
      if (const IsaKernels *k = isaKernelsFor(isa))
        return k;
    return &kIsaKernels_generic;
  }();
  return *chosen;
}

} // namespace zrt::cpu
