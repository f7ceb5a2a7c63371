// Counter-based random numbers: value i of stream `key` depends on (key, i) only, so
// initial weights and synthetic data are the same whatever the world size or the
// order ranks generate them in.
#ifndef ZRT_MAIN_RANDOM_H
#define ZRT_MAIN_RANDOM_H

#include <cmath>
#include <cstdint>
#include <string>

namespace zrt::train {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// FNV-1a of a name, to give each parameter its own stream.
inline uint64_t streamKey(const std::string &name, uint64_t seed) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name)
    h = (h ^ c) * 1099511628211ull;
  return splitmix64(h ^ splitmix64(seed));
}

/// Uniform in (0, 1).
inline double uniform01(uint64_t key, uint64_t i) {
  return (double(splitmix64(key + splitmix64(i)) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/// Standard normal (Box-Muller on two independent uniforms of element i).
inline double normal(uint64_t key, uint64_t i) {
  double u1 = uniform01(key, 2 * i), u2 = uniform01(key, 2 * i + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

} // namespace zrt::train

#endif // ZRT_MAIN_RANDOM_H
