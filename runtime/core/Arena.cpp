// The per-rank arena: one allocation, buffers as checked offsets into it.
#include "core/Arena.h"

#include <cstdlib>
#include <cstring>

#include "core/Error.h"

namespace zrt {

Arena::~Arena() { release(); }

void Arena::allocate(int64_t bytes) {
  release();
  if (bytes < 0)
    fatal("zrt_init", "negative arena size %lld", static_cast<long long>(bytes));
  if (bytes == 0)
    return;
  void *p = nullptr;
  size_t rounded = (static_cast<size_t>(bytes) + 4095) & ~size_t(4095);
  if (posix_memalign(&p, 4096, rounded) != 0 || !p)
    fatal("zrt_init", "cannot allocate a %lld-byte arena", static_cast<long long>(bytes));
  std::memset(p, 0, rounded);
  base_ = static_cast<char *>(p);
  size_ = bytes;
}

void Arena::release() {
  std::free(base_);
  base_ = nullptr;
  size_ = highWater_ = 0;
}

void *Arena::at(int64_t offset, int64_t bytes, const char *call) {
  if (offset < 0 || bytes < 0 || offset > size_ || bytes > size_ - offset)
    fatal(call, "buffer [%lld, %lld) overflows the %lld-byte arena", static_cast<long long>(offset),
          static_cast<long long>(offset + bytes), static_cast<long long>(size_));
  if (offset % kAlignment != 0)
    fatal(call, "arena offset %lld is not a multiple of %lld", static_cast<long long>(offset),
          static_cast<long long>(kAlignment));
  if (offset + bytes > highWater_)
    highWater_ = offset + bytes;
  return base_ + offset;
}

bool Arena::contains(const void *p) const {
  const char *c = static_cast<const char *>(p);
  return base_ && c >= base_ && c < base_ + size_;
}

} // namespace zrt
