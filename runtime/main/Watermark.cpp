#include "main/Watermark.h"

#include <algorithm>
#include <vector>

#include "zrt/zrt.h"

namespace zrt::train {
namespace {

/// The scratch region is painted with this byte at start-up; the highest byte that
/// no longer holds it is the arena's measured high-water mark (a kernel writing any
/// value there, the canary included only by a 2^-64 chance per word).
constexpr unsigned char kCanary = 0xA5;

} // namespace

void paintScratch(const ModelInfo &m) {
  zrt_arena_fill(m.arenaBase + m.persistentBytes, kCanary, m.arenaBytes - m.persistentBytes);
}

int64_t measuredHighWater(const ModelInfo &m) {
  // Back from the scratch region's end, 1 MiB at a time: a copy of the whole region would itself
  // raise the peak RSS the same log line reports (by the scratch's size).
  constexpr int64_t kPiece = int64_t(1) << 20;
  std::vector<unsigned char> piece(kPiece);
  int64_t end = m.arenaBytes - m.persistentBytes;
  while (end > 0) {
    const int64_t n = std::min(kPiece, end), from = end - n;
    zrt_arena_read(m.arenaBase + m.persistentBytes + from, piece.data(), n);
    int64_t written = n;
    while (written > 0 && piece[written - 1] == kCanary)
      --written;
    if (written > 0)
      return m.persistentBytes + from + written;
    end = from;
  }
  return m.persistentBytes;
}

} // namespace zrt::train
