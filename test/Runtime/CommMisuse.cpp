// Misuses of the runtime that must end every rank with a message naming the call and the
// rank, never a hang: run by ctest through expect_failure.sh, one mode per test.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "zrt/zrt.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: zrt-comm-misuse mismatch|arena-overflow|misaligned|world-size|bad-handle\n");
    return 2;
  }
  const char *size = std::getenv("OMPI_COMM_WORLD_SIZE");
  int world = size ? std::atoi(size) : 1;
  const char *mode = argv[1];
  zrt_init(std::strcmp(mode, "world-size") == 0 ? world + 1 : world, 4096);
  std::vector<float> send(16, 1.f), recv(16 * world);
  if (std::strcmp(mode, "mismatch") == 0) {
    // Rank 0 contributes one element fewer than the others.
    zrt_all_gather(ZRT_DTYPE_F32, send.data(), recv.data(), zrt_rank() == 0 ? 4 : 5);
  } else if (std::strcmp(mode, "arena-overflow") == 0) {
    zrt_arena_ptr(4096 - 64, 128);
  } else if (std::strcmp(mode, "misaligned") == 0) {
    zrt_all_reduce(ZRT_DTYPE_F32, send.data(), reinterpret_cast<char *>(recv.data()) + 1, 4, 0);
  } else if (std::strcmp(mode, "bad-handle") == 0) {
    zrt_wait(42);
  }
  zrt_finalize();
  std::printf("no error was detected\n");
  return 0;
}
