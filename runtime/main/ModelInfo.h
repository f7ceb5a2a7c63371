// What the compiler tells the executable about the model (the zcc_model_json string the
// lowering emits): parameters with initializers and arena offsets, inputs, arena size.
#ifndef ZRT_MAIN_MODELINFO_H
#define ZRT_MAIN_MODELINFO_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace zrt::train {

struct Initializer {
  std::string kind; // zeros | ones | normal | uniform
  double std = 0, mean = 0, low = 0, high = 0;
};

struct ParamInfo {
  std::string name;
  std::vector<int64_t> shape;
  int64_t offset = 0, gradOffset = 0, bytes = 0;
  Initializer init;
  // ZeRO layout: `shards` ranks each own `shardElements` of the flattened tensor;
  // a sharded parameter stores only this rank's shard (zero-padded past the end).
  int64_t shards = 1, shardElements = 0, paramStorageBytes = 0, gradStorageBytes = 0;
  bool shardedParam = false;
  int64_t elements() const { return bytes / 4; }
  /// The elements of the whole tensor this rank stores: [first, first + count).
  int64_t storedFirst(int rank) const { return shardedParam ? rank * shardElements : 0; }
  int64_t storedCount(int rank) const {
    if (!shardedParam)
      return elements();
    int64_t first = storedFirst(rank);
    return first >= elements() ? 0 : std::min(shardElements, elements() - first);
  }
};

struct InputInfo {
  std::string role; // tokens | targets | features | labels | values
  std::vector<int64_t> shape; // one rank's micro-batch
  std::string dtype;          // f32 | i32
  int64_t bytes = 0;
  int64_t classes = 0; // ids: the number of distinct values (vocabulary, classes)
};

struct ModelInfo {
  std::string model, optimizer = "adamw";
  int64_t worldSize = 1, microBatches = 1, arenaBytes = 0, persistentBytes = 0;
  /// Model-state bytes per rank in the arena's persistent region, by kind.
  int64_t paramBytes = 0, gradBytes = 0, optimizerBytes = 0;
  double defaultLr = 1e-3;
  std::vector<ParamInfo> params;
  std::vector<InputInfo> inputs;
  int64_t rowsPerMicroBatch() const { return inputs.empty() ? 0 : inputs[0].shape[0]; }
};

/// Parses the JSON; a malformed description is a fatal error naming the field.
ModelInfo parseModelInfo(const char *json);

} // namespace zrt::train

#endif // ZRT_MAIN_MODELINFO_H
