// The training data: every rank fills its slice of the global batch of each step.
// Global row q of the run is the same row whatever the world size, and step s uses rows
// [s * B, (s + 1) * B), so the loss curve does not depend on the world size.
#ifndef ZRT_MAIN_DATA_H
#define ZRT_MAIN_DATA_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "main/ModelInfo.h"

namespace zrt::train {

class DataSource {
public:
  virtual ~DataSource() = default;
  /// Writes global row `row` into each input's buffer at row position `slot`.
  virtual void fillRow(int64_t row, int64_t slot, const std::vector<void *> &buffers) = 0;
  virtual std::string describe() const = 0;
};

/// --data FILE: a text file read as bytes, or (.bin) little-endian uint16 tokens as
/// nanoGPT writes them. Row q is the window starting at (q * T) mod (length - T - 1),
/// targets shifted by one token. Needs inputs (tokens, targets).
/// --synthetic: a seeded Markov text for tokens; for features/labels a fixed random
/// linear teacher labels Gaussian features; for features/values it gives the values.
std::unique_ptr<DataSource> openData(const ModelInfo &model, const std::string &path,
                                     bool synthetic, uint64_t seed);

} // namespace zrt::train

#endif // ZRT_MAIN_DATA_H
