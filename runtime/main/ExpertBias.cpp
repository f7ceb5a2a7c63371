#include "main/ExpertBias.h"

#include <cmath>
#include <set>
#include <string>

#include "core/Error.h"
#include "main/TierIo.h"
#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace zrt::train {
namespace {

/// Adds `delta[i]` to element i of the whole bias wherever this rank stores it: the parameter
/// buffer in its dtype and, where there is one, the fp32 master copy.
void addToStored(const ParamInfo &p, const std::vector<float> &delta) {
  const int rank = zrt_mesh_rank(p.shardAxis());
  const Slice s = p.stored(rank);
  if (p.dtype == "bf16") {
    std::vector<bf16> w(s.count);
    readModelState(p.tier, p.offset, w.data(), s.count * 2);
    for (int64_t j = 0; j < s.count; ++j)
      w[j] = bf16(float(w[j]) + delta[s.first + j]);
    writeModelState(p.tier, p.offset, w.data(), s.count * 2);
  } else {
    std::vector<float> w(s.count);
    readModelState(p.tier, p.offset, w.data(), s.count * 4);
    for (int64_t j = 0; j < s.count; ++j)
      w[j] += delta[s.first + j];
    writeModelState(p.tier, p.offset, w.data(), s.count * 4);
  }
  if (!p.hasMaster())
    return;
  const Slice m = p.storedMaster(rank);
  std::vector<float> master(m.count);
  readModelState(p.masterTier, p.masterOffset, master.data(), m.count * 4);
  for (int64_t j = 0; j < m.count; ++j)
    master[j] += delta[m.first + j];
  writeModelState(p.masterTier, p.masterOffset, master.data(), m.count * 4);
}

} // namespace

ExpertBiases::ExpertBiases(const std::vector<ModelInfo> &stages) {
  std::set<std::string> seen;
  for (const ModelInfo &m : stages) {
    for (const ParamInfo &p : m.params)
      if (p.expertBias && seen.insert(p.name).second) {
        if (p.tensorParallel() || p.expertParallel() || p.shape.size() != 1)
          fatal("train", "the balancing bias '%s' must be one whole [experts] vector on every rank", p.name.c_str());
        biases.push_back(&p);
      }
    for (const StateInfo &s : m.states)
      if (s.role == "secondary" && seen.count(s.param))
        fatal("train", "the balancing bias '%s' has a ZeRO++ secondary shard, which its update would leave "
                       "stale: compile without --zero-hpz-partition-size",
              s.param.c_str());
  }
}

void ExpertBiases::discard() {
  std::vector<float> dropped;
  for (const ParamInfo *p : biases) {
    dropped.resize(static_cast<size_t>(p->elements()));
    zrt_moe_take_load(p->name.c_str(), dropped.data(), p->elements());
  }
}

void ExpertBiases::update(const std::vector<const ModelInfo *> &held, double rate) {
  // One reduction for all of them: each bias's loads at its place in the list.
  std::vector<size_t> at;
  size_t total = 0;
  for (const ParamInfo *p : biases) {
    at.push_back(total);
    total += static_cast<size_t>(p->elements());
  }
  std::vector<float> mine(total), loads(total);
  for (size_t b = 0; b < biases.size(); ++b)
    zrt_moe_take_load(biases[b]->name.c_str(), mine.data() + at[b], biases[b]->elements());
  // Loads are counts far below 2^24 a step: exact in f32, and so is their sum.
  zrt_host_all_reduce(ZRT_AXIS_WORLD, mine.data(), loads.data(), static_cast<int64_t>(total), 0);

  for (const ModelInfo *m : held)
    for (const ParamInfo &p : m->params) {
      if (!p.expertBias)
        continue;
      size_t b = 0;
      while (biases[b]->name != p.name)
        ++b;
      const int64_t experts = p.elements();
      const float *load = loads.data() + at[b];
      double sum = 0;
      for (int64_t e = 0; e < experts; ++e)
        sum += load[e];
      const double mean = sum / static_cast<double>(experts);
      std::vector<float> delta(static_cast<size_t>(experts));
      for (int64_t e = 0; e < experts; ++e) // overloaded: down; underloaded: up; at the mean: stays
        delta[e] = static_cast<float>(rate * ((load[e] < mean) - (load[e] > mean)));
      addToStored(p, delta);
    }
}

} // namespace zrt::train
