// Context parallelism's data movement on the CPU backend: this rank's chunks of the sequence
// (zrt_context_chunks) and DeepSpeed-Ulysses' exchange between token and head sharding
// (zrt_context_exchange), built on the ABI's mesh queries and all-to-all.
// The layout is zrt::math::contextChunk's (Megatron-LM's).
#include "zrt/zrt.h"

#include <cstring>
#include <vector>

#include "core/Error.h"
#include "zrt/KernelMath.h"

using namespace zrt;

namespace {

struct Chunks {
  int64_t ranks, rank, chunk; // chunk: tokens of one of the 2 cp chunks
  /// Chunk index of this rank's half `h` (0 or 1) of rank `r`'s tokens.
  int64_t of(int64_t r, int h) const { return math::contextChunk(ranks, r, h); }
};

Chunks chunksOf(const char *call, int32_t axis, int64_t length) {
  Chunks c{zrt_mesh_size(axis), zrt_mesh_rank(axis), 0};
  if (length < 0 || length % (2 * c.ranks) != 0)
    fatal(call, "%lld tokens do not split into 2 x %lld chunks", static_cast<long long>(length),
          static_cast<long long>(c.ranks));
  c.chunk = length / (2 * c.ranks);
  return c;
}

/// Scratch for the exchange's packed blocks, grown once to the largest exchange.
std::vector<char> &scratch(int which) {
  static std::vector<char> buffers[2];
  return buffers[which];
}

} // namespace

extern "C" {

void zrt_context_chunks(int32_t axis, int64_t elementBytes, const void *whole, void *part, int64_t outer,
                        int64_t length, int64_t inner, int32_t inverse) {
  const Chunks c = chunksOf("zrt_context_chunks", axis, length);
  if (elementBytes <= 0 || outer < 0 || inner < 0)
    fatal("zrt_context_chunks", "bad sizes: element %lld B, outer %lld, inner %lld",
          static_cast<long long>(elementBytes), static_cast<long long>(outer), static_cast<long long>(inner));
  auto *w = static_cast<char *>(const_cast<void *>(whole));
  auto *p = static_cast<char *>(part);
  const int64_t run = c.chunk * inner * elementBytes, local = length / c.ranks;
  if (inverse)
    std::memset(w, 0, static_cast<size_t>(outer * length * inner * elementBytes));
  for (int64_t o = 0; o < outer; ++o)
    for (int h = 0; h < 2; ++h) {
      char *wholeAt = w + ((o * length + c.of(c.rank, h) * c.chunk) * inner) * elementBytes;
      char *partAt = p + ((o * local + h * c.chunk) * inner) * elementBytes;
      if (inverse)
        std::memcpy(wholeAt, partAt, static_cast<size_t>(run));
      else
        std::memcpy(partAt, wholeAt, static_cast<size_t>(run));
    }
}

void zrt_context_exchange(int32_t axis, int32_t dtype, const void *x, void *y, int64_t batch, int64_t tokens,
                          int64_t heads, int64_t headSize, int32_t toHeads) {
  const char *call = "zrt_context_exchange";
  const int64_t ranks = zrt_mesh_size(axis);
  const Chunks c = chunksOf(call, axis, tokens * ranks);
  if (heads % ranks != 0)
    fatal(call, "%lld heads do not split over %lld context ranks", static_cast<long long>(heads),
          static_cast<long long>(ranks));
  const int64_t eb = dtype == ZRT_DTYPE_BF16 ? 2 : 4;
  const int64_t width = heads * headSize, group = width / ranks; // a token's values, and one rank's heads'
  const int64_t block = batch * tokens * group;                   // elements each rank sends each other
  std::vector<char> &send = scratch(0), &recv = scratch(1);
  if (static_cast<int64_t>(send.size()) < block * ranks * eb) {
    send.resize(block * ranks * eb);
    recv.resize(block * ranks * eb);
  }
  const auto *in = static_cast<const char *>(x);
  auto *out = static_cast<char *>(y);
  const int64_t half = c.chunk; // tokens of one chunk: half of a rank's
  if (toHeads) {
    // Block q: this rank's tokens, heads group q.
    for (int64_t q = 0; q < ranks; ++q)
      for (int64_t row = 0; row < batch * tokens; ++row)
        std::memcpy(send.data() + ((q * batch * tokens + row) * group) * eb, in + (row * width + q * group) * eb,
                    group * eb);
    zrt_all_to_all_on(axis, dtype, send.data(), recv.data(), block);
    // Block s: rank s's tokens (its two chunks) of this rank's heads, into sequence order.
    for (int64_t s = 0; s < ranks; ++s)
      for (int64_t b = 0; b < batch; ++b)
        for (int h = 0; h < 2; ++h)
          std::memcpy(out + ((b * tokens * ranks + c.of(s, h) * half) * group) * eb,
                      recv.data() + ((s * batch * tokens + b * tokens + h * half) * group) * eb,
                      half * group * eb);
  } else {
    // Block s: rank s's tokens of this rank's heads, from the sequence.
    for (int64_t s = 0; s < ranks; ++s)
      for (int64_t b = 0; b < batch; ++b)
        for (int h = 0; h < 2; ++h)
          std::memcpy(send.data() + ((s * batch * tokens + b * tokens + h * half) * group) * eb,
                      in + ((b * tokens * ranks + c.of(s, h) * half) * group) * eb, half * group * eb);
    zrt_all_to_all_on(axis, dtype, send.data(), recv.data(), block);
    // Block q: this rank's tokens of heads group q.
    for (int64_t q = 0; q < ranks; ++q)
      for (int64_t row = 0; row < batch * tokens; ++row)
        std::memcpy(out + (row * width + q * group) * eb, recv.data() + ((q * batch * tokens + row) * group) * eb,
                    group * eb);
  }
}

} // extern "C"
