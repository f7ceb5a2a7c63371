// A kernel launch on HIP-CPU, what rewrite_launches.py turns `kernel<<<grid, block, shared,
// stream>>>(args)` into: checks the configuration as a GPU would (a rejected launch runs nothing
// and is the next cudaGetLastError's), records the kernel's name for the suite's inventory, then
// queues the grid on the stream (CudaOnCpuStreams.h).
#ifndef ZRT_CUDA_ON_CPU_LAUNCH_H
#define ZRT_CUDA_ON_CPU_LAUNCH_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace zrt::cudaoncpu {

struct Kernel {
  const char *name;
  int maxThreads;      // __launch_bounds__, 0 when it has none
  const void *address; // for cudaFuncSetAttribute's opt-in; null for a deduced template
};

/// Whether a GPU would launch it; when not, says why on stderr and sets the pending error.
bool launchable(const Kernel &kernel, dim3 grid, dim3 block, size_t sharedBytes);
void recordLaunch(const char *name);
/// Each kernel that ran, with its number of launches.
std::map<std::string, long> launches();

/// What each thread of a grid runs, behind one function pointer. HIP-CPU's launch (its tiled
/// domain and TBB's parallel loop, flattened around the body) is a template on the body: handed
/// each kernel's own body it was compiled for every launch site, most of a kernel file's compile
/// time under the sanitizers (the row kernels: 82 s, 13.5 s since). Handed
/// this one type it is compiled once, in CudaOnCpuRuntime.cpp; a thread pays one indirect call.
struct ThreadBody {
  void (*run)(const void *closure);
  const void *closure;
};
/// Runs the grid on HIP-CPU's fibers, on this thread's HIP-CPU stream, and waits for it.
void runGrid(dim3 grid, dim3 block, std::uint32_t sharedBytes, ThreadBody body);

template <class Body, class... Args>
void launch(const Kernel &kernel, dim3 grid, dim3 block, size_t sharedBytes, cudaStream_t stream, Body body,
            Args... args) {
  if (!launchable(kernel, grid, block, sharedBytes))
    return;
  recordLaunch(kernel.name);
  // The grid runs when the stream reaches it, from the stream's thread.
  enqueue(stream, [=] {
    auto thread = [&] { body(args...); };
    using Thread = decltype(thread);
    runGrid(grid, block, static_cast<std::uint32_t>(sharedBytes),
            {[](const void *closure) { (*static_cast<const Thread *>(closure))(); }, &thread});
  });
}

/// This block's dynamic shared memory (extern __shared__): the launch's bytes, aligned, one buffer
/// per CPU thread (the fibers of a block share it). Freshly allocated when the size changes, so a
/// read past the launch's bytes is AddressSanitizer's to see.
void *dynamicShared(size_t alignment);

} // namespace zrt::cudaoncpu

#define ZRT_CUDA_ON_CPU_DYNAMIC_SHARED(type, name, alignment)                                     \
  type *name = static_cast<type *>(::zrt::cudaoncpu::dynamicShared(alignment))

#endif // ZRT_CUDA_ON_CPU_LAUNCH_H
