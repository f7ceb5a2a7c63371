// The per-rank arena: one allocation sized by the compiler's memory plan; every buffer is an
// offset into it, so steady-state steps allocate nothing.
#ifndef ZRT_CORE_ARENA_H
#define ZRT_CORE_ARENA_H

#include <cstddef>
#include <cstdint>

namespace zrt {

class Arena {
public:
  /// Offsets handed out by the planner are multiples of this.
  static constexpr int64_t kAlignment = 64;

  Arena() = default;
  ~Arena();
  Arena(const Arena &) = delete;
  Arena &operator=(const Arena &) = delete;

  /// Allocates `bytes` (page-aligned, zeroed). Fatal when memory is short.
  void allocate(int64_t bytes);
  void release();

  /// The buffer [offset, offset + bytes); fatal when it is misaligned or does
  /// not fit, naming the call.
  void *at(int64_t offset, int64_t bytes, const char *call);

  int64_t size() const { return size_; }
  /// The largest offset + bytes ever handed out.
  int64_t highWater() const { return highWater_; }
  bool contains(const void *p) const;

private:
  char *base_ = nullptr;
  int64_t size_ = 0, highWater_ = 0;
};

} // namespace zrt

#endif // ZRT_CORE_ARENA_H
