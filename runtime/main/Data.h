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

struct DataOptions {
  std::string path;  // --data (empty: --synthetic)
  std::string dtype; // --data-dtype: text | uint8 | uint16 | uint32 | megatron (empty: from the file)
  std::string order = "sequential"; // --data-order: sequential | random
  bool synthetic = false;
  uint64_t seed = 0;
};

/// --data FILE, memory-mapped (never read whole): a text file (its bytes are the tokens),
/// nanoGPT's .bin (little-endian uint16; uint32 with --data-dtype uint32), or Megatron-LM's
/// indexed dataset (PREFIX.idx + PREFIX.bin, named by PREFIX or either file). Row q is a
/// window of T tokens and its targets shifted by one: in order, the window starting at
/// (q * T) mod (length - T - 1); random, at a seeded hash of q. Needs inputs (tokens, targets).
/// --synthetic: a seeded Markov text for tokens; for features/labels a fixed random
/// linear teacher labels Gaussian features; for features/values it gives the values.
std::unique_ptr<DataSource> openData(const ModelInfo &model, const DataOptions &options);

} // namespace zrt::train

#endif // ZRT_MAIN_DATA_H
