// What the compiler tells the executable about the model (the zcc_model_json string the
// lowering emits): parameters with initializers and arena offsets, inputs, arena size.
#ifndef ZRT_MAIN_MODELINFO_H
#define ZRT_MAIN_MODELINFO_H

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
  int64_t elements() const { return bytes / 4; }
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
  double defaultLr = 1e-3;
  std::vector<ParamInfo> params;
  std::vector<InputInfo> inputs;
  int64_t rowsPerMicroBatch() const { return inputs.empty() ? 0 : inputs[0].shape[0]; }
};

/// Parses the JSON; a malformed description is a fatal error naming the field.
ModelInfo parseModelInfo(const char *json);

} // namespace zrt::train

#endif // ZRT_MAIN_MODELINFO_H
