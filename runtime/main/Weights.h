// The parameters' values in the arena: seeded initialization, --init-weights and
// --export-weights. Files hold every parameter whole, raw f32, in model order; each
// rank stores its part: its tensor-parallel slice (if split), of which the whole or a
// ZeRO-3 shard over the data-parallel ranks, and under mixed precision the fp32 master
// copy (whole, or a shard when the state is partitioned) with the parameter holding its
// bf16 rounding. The rank's mesh coordinates come from the runtime (zrt_mesh_rank).
#ifndef ZRT_MAIN_WEIGHTS_H
#define ZRT_MAIN_WEIGHTS_H

#include <cstdint>
#include <string>
#include <vector>

#include "main/ModelInfo.h"

namespace zrt::train {

/// Element i of each tensor depends on (name, seed, i) only, so every world size and
/// every ZeRO stage starts from the same weights.
void initializeWeights(const ModelInfo &model, uint64_t seed);

/// Fatal error on a missing, short or long file.
void readWeights(const ModelInfo &model, const std::string &path);

/// A safetensors file (as `zcc-ckpt consolidate` writes, or PyTorch's safetensors):
/// every parameter by name, F32 (or BF16) with the parameter's shape. Fatal error on a
/// missing, misshapen or malformed tensor.
void readSafetensors(const ModelInfo &model, const std::string &path);

/// This rank's tensor-parallel part of `p` in fp32 (the master copy where there is one),
/// all-gathered over the data-parallel ranks where ZeRO shards it: collective.
std::vector<float> readParamValues(const ParamInfo &p);

/// Every rank takes part (shards and tensor-parallel slices are all-gathered); rank 0 writes the file, through a
/// temporary file renamed into place, so a failure never leaves half a file. The values
/// written are the fp32 master values where there is a master, compressed as the forward
/// pass reads them where the model is compiled with --compression. A path ending in
/// .safetensors gets a safetensors file (F32, by parameter name), else raw f32 in model order.
void writeWeights(const ModelInfo &model, const std::string &path);

} // namespace zrt::train

#endif // ZRT_MAIN_WEIGHTS_H
