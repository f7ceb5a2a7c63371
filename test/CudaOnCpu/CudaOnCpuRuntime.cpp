// The shim's state (shim/cuda_runtime.h, shim/CudaOnCpuLaunch.h): the pending error, the
// shared-memory opt-ins, the launch inventory, each CPU thread's dynamic shared memory.
#include <cuda_runtime.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>

namespace zrt::cudaoncpu {
namespace {

std::mutex mutex;
cudaError_t pending = cudaSuccess;
std::map<const void *, size_t> optIns;
std::map<std::string, long> launched;

bool reject(const Kernel &kernel, dim3 grid, dim3 block, size_t shared, const char *why) {
  std::fprintf(stderr, "cuda-on-cpu: launch of %s <<<(%u,%u,%u), (%u,%u,%u), %zu>>> rejected: %s\n", kernel.name,
               grid.x, grid.y, grid.z, block.x, block.y, block.z, shared, why);
  setError(cudaErrorInvalidConfiguration);
  return false;
}

} // namespace

void setError(cudaError_t error) {
  std::lock_guard<std::mutex> lock(mutex);
  if (pending == cudaSuccess)
    pending = error;
}

cudaError_t takeError() {
  std::lock_guard<std::mutex> lock(mutex);
  const cudaError_t error = pending;
  pending = cudaSuccess;
  return error;
}

void allowShared(const void *kernel, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  optIns[kernel] = bytes;
}

bool launchable(const Kernel &kernel, dim3 grid, dim3 block, size_t shared) {
  // The limits of every GPU since sm_30 (CUDA C++ Programming Guide, "Compute Capabilities").
  const unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (threads == 0 || threads > 1024 || block.z > 64)
    return reject(kernel, grid, block, shared, "a block has 1 to 1024 threads, at most 64 in z");
  if (kernel.maxThreads > 0 && threads > static_cast<unsigned long long>(kernel.maxThreads))
    return reject(kernel, grid, block, shared, "more threads than the kernel's __launch_bounds__");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535)
    return reject(kernel, grid, block, shared, "a grid is 1 to 2^31-1 blocks in x, 65535 in y and z");
  size_t allowed = kDefaultSharedBytes;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = kernel.address ? optIns.find(kernel.address) : optIns.end();
    if (it != optIns.end())
      allowed = it->second;
  }
  if (shared > allowed)
    return reject(kernel, grid, block, shared,
                  "more dynamic shared memory than 48 KiB or the kernel's cudaFuncSetAttribute opt-in");
  return true;
}

void runGrid(dim3 grid, dim3 block, std::uint32_t sharedBytes, ThreadBody body) {
  hipStream_t grids = hipStreamOfThisThread();
  ::hip::detail::launch(grid, block, sharedBytes, grids, [body] { body.run(body.closure); }, std::make_tuple());
  (void)hipStreamSynchronize(grids);
}

void recordLaunch(const char *name) {
  std::lock_guard<std::mutex> lock(mutex);
  ++launched[name];
}

std::map<std::string, long> launches() {
  std::lock_guard<std::mutex> lock(mutex);
  return launched;
}

void *dynamicShared(size_t alignment) {
  struct Buffer {
    void *data = nullptr;
    size_t bytes = 0, alignment = 0;
    ~Buffer() {
      if (data)
        ::operator delete(data, std::align_val_t(alignment));
    }
  };
  thread_local Buffer buffer;
  const size_t bytes = scratchpad_size(domain(::hip::detail::Tile::this_tile()));
  if (bytes != buffer.bytes || alignment != buffer.alignment) {
    if (buffer.data)
      ::operator delete(buffer.data, std::align_val_t(buffer.alignment));
    buffer.data = ::operator new(bytes ? bytes : 1, std::align_val_t(alignment));
    buffer.bytes = bytes;
    buffer.alignment = alignment;
  }
  return buffer.data;
}

} // namespace zrt::cudaoncpu
