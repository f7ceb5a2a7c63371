#include "main/Weights.h"
#include "main/TierIo.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "core/Error.h"
#include <nlohmann/json.hpp>
#include "main/Compression.h"
#include "main/Random.h"
#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace zrt::train {
namespace {

/// Stores the elements of the whole tensor this rank keeps (`wholeAt(i)` gives element
/// i of the whole tensor): the parameter buffer in its dtype, and the master copy in fp32.
template <class WholeAt> void store(const ParamInfo &p, WholeAt wholeAt) {
  const int rank = zrt_mesh_rank(p.shardAxis()), tensorRank = zrt_mesh_rank(ZRT_AXIS_TENSOR);
  const int expertRank = zrt_mesh_rank(ZRT_AXIS_EXPERT);
  // Element i of this rank's tensor-parallel (or expert-parallel) part.
  auto valueAt = [&](int64_t i) { return wholeAt(p.expertWholeIndex(p.wholeIndex(i, tensorRank), expertRank)); };
  Slice s = p.stored(rank);
  if (p.dtype == "bf16") {
    std::vector<bf16> w(s.count);
    for (int64_t j = 0; j < s.count; ++j)
      w[j] = bf16(valueAt(s.first + j));
    writeModelState(p.tier, p.offset, w.data(), s.count * 2);
  } else {
    std::vector<float> w(s.count);
    for (int64_t j = 0; j < s.count; ++j)
      w[j] = valueAt(s.first + j);
    writeModelState(p.tier, p.offset, w.data(), s.count * 4);
  }
  if (!p.hasMaster())
    return;
  Slice m = p.storedMaster(rank);
  std::vector<float> master(m.count);
  for (int64_t j = 0; j < m.count; ++j)
    master[j] = valueAt(m.first + j);
  writeModelState(p.masterTier, p.masterOffset, master.data(), m.count * 4);
}

} // namespace

void initializeWeights(const ModelInfo &model, uint64_t seed) {
  for (const ParamInfo &p : model.params) {
    const uint64_t key = streamKey(p.name, seed);
    const Initializer &init = p.init;
    // The kind is looked at once per parameter, not once per value: 2^28 string compares
    // were seconds of a 1 GiB parameter's start-up.
    if (init.kind == "zeros" || init.kind == "ones") {
      const float value = init.kind == "ones" ? 1.f : 0.f;
      store(p, [value](int64_t) { return value; });
    } else if (init.kind == "normal") {
      store(p, [&](int64_t i) { return static_cast<float>(init.mean + init.std * normal(key, i)); });
    } else {
      store(p, [&](int64_t i) {
        return static_cast<float>(init.low + (init.high - init.low) * uniform01(key, i));
      });
    }
  }
}

void readWeights(const ModelInfo &model, const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    fatal("train", "cannot open --init-weights %s", path.c_str());
  std::vector<float> whole;
  for (const ParamInfo &p : model.params) {
    whole.resize(p.wholeElements());
    if (!file.read(reinterpret_cast<char *>(whole.data()), whole.size() * sizeof(float)))
      fatal("train", "%s ends inside parameter %s", path.c_str(), p.name.c_str());
    store(p, [&](int64_t i) { return whole[i]; });
  }
  if (file.peek() != EOF)
    fatal("train", "%s is longer than the model's parameters", path.c_str());
}

void readSafetensors(const ModelInfo &model, const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    fatal("train", "cannot open --init %s", path.c_str());
  uint64_t headerBytes = 0;
  if (!file.read(reinterpret_cast<char *>(&headerBytes), 8) || headerBytes > (uint64_t(1) << 30))
    fatal("train", "%s is not a safetensors file (bad header length)", path.c_str());
  std::string header(headerBytes, '\0');
  if (!file.read(header.data(), headerBytes))
    fatal("train", "%s ends inside its header", path.c_str());
  std::string data((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  nlohmann::json tensors;
  try {
    tensors = nlohmann::json::parse(header);
  } catch (const nlohmann::json::exception &e) {
    fatal("train", "%s: the safetensors header is not JSON: %s", path.c_str(), e.what());
  }
  std::vector<float> whole;
  for (const ParamInfo &p : model.params) {
    if (!tensors.contains(p.name))
      fatal("train", "%s has no tensor '%s'", path.c_str(), p.name.c_str());
    const nlohmann::json &t = tensors[p.name];
    std::string dtype = t.value("dtype", "");
    std::vector<int64_t> shape = t.value("shape", std::vector<int64_t>{});
    std::vector<int64_t> range = t.value("data_offsets", std::vector<int64_t>{});
    if ((dtype != "F32" && dtype != "BF16") || shape != p.wholeShape || range.size() != 2)
      fatal("train", "%s: tensor '%s' must be F32 or BF16 of the parameter's shape", path.c_str(), p.name.c_str());
    const int64_t elementBytes = dtype == "F32" ? 4 : 2;
    if (range[0] < 0 || range[1] - range[0] != p.wholeElements() * elementBytes ||
        range[1] > static_cast<int64_t>(data.size()))
      fatal("train", "%s: tensor '%s' has bad data offsets (truncated file?)", path.c_str(), p.name.c_str());
    whole.resize(p.wholeElements());
    const char *bytes = data.data() + range[0];
    for (int64_t i = 0; i < p.wholeElements(); ++i) {
      if (dtype == "F32") {
        std::memcpy(&whole[i], bytes + 4 * i, 4);
      } else {
        bf16 v;
        std::memcpy(&v, bytes + 2 * i, 2);
        whole[i] = float(v);
      }
    }
    store(p, [&](int64_t i) { return whole[i]; });
  }
}

std::vector<float> readParamValues(const ParamInfo &p) {
  const int64_t offset = p.hasMaster() ? p.masterOffset : p.offset;
  const int32_t tier = p.hasMaster() ? p.masterTier : p.tier;
  bool sharded = p.hasMaster() ? p.shards > 1 : p.shardedParam;
  if (!sharded) {
    std::vector<float> values(p.elements());
    readModelState(tier, offset, values.data(), p.elements() * 4);
    return values;
  }
  std::vector<float> shard(p.shardElements), gathered(p.shards * p.shardElements);
  readModelState(tier, offset, shard.data(), p.shardElements * 4);
  zrt_host_all_gather(p.shardAxis(), shard.data(), gathered.data(), p.shardElements);
  gathered.resize(p.elements());
  return gathered;
}

void writeWeights(const ModelInfo &model, const std::string &path) {
  std::vector<std::vector<float>> whole;
  for (const ParamInfo &p : model.params) {
    std::vector<float> part = readParamValues(p);
    if (p.expertParallel()) { // every expert rank's experts, in order
      std::vector<float> values(p.wholeElements());
      zrt_host_all_gather(ZRT_AXIS_EXPERT, part.data(), values.data(), static_cast<int64_t>(part.size()));
      whole.push_back(std::move(values));
      continue;
    }
    if (!p.tensorParallel()) {
      whole.push_back(std::move(part));
      continue;
    }
    // Every tensor rank's part, then each element to its place in the whole tensor.
    std::vector<float> parts(part.size() * p.tpRanks), values(p.wholeElements());
    zrt_host_all_gather(ZRT_AXIS_TENSOR, part.data(), parts.data(), static_cast<int64_t>(part.size()));
    for (int t = 0; t < p.tpRanks; ++t)
      for (size_t i = 0; i < part.size(); ++i)
        values[p.wholeIndex(static_cast<int64_t>(i), t)] = parts[t * part.size() + i];
    whole.push_back(std::move(values));
  }
  if (zrt_rank() != 0)
    return;
  for (size_t i = 0; i < model.params.size(); ++i)
    compressWeights(model, model.params[i], whole[i]);
  std::string tmp = path + ".tmp";
  {
    std::ofstream file(tmp, std::ios::binary);
    const bool safetensors = path.size() >= 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0;
    if (safetensors) {
      // The header: each tensor's dtype, shape and byte range, padded with spaces to 8 bytes.
      nlohmann::json header = nlohmann::json::object();
      int64_t at = 0;
      for (size_t i = 0; i < model.params.size(); ++i) {
        const int64_t bytes = static_cast<int64_t>(whole[i].size() * sizeof(float));
        header[model.params[i].name] = {{"dtype", "F32"}, {"shape", model.params[i].wholeShape},
                                        {"data_offsets", {at, at + bytes}}};
        at += bytes;
      }
      std::string text = header.dump();
      text.append((8 - text.size() % 8) % 8, ' ');
      const uint64_t length = text.size();
      file.write(reinterpret_cast<const char *>(&length), 8);
      file.write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    for (const std::vector<float> &w : whole)
      file.write(reinterpret_cast<const char *>(w.data()), w.size() * sizeof(float));
    if (!file)
      fatal("train", "cannot write %s", tmp.c_str());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    fatal("train", "cannot rename %s to %s", tmp.c_str(), path.c_str());
}

} // namespace zrt::train
