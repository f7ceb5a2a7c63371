#include "main/Compression.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/Error.h"
#include "main/TierIo.h"
#include "main/Weights.h"
#include "zrt/FakeQuantize.h"
#include "zrt/zrt.h"

namespace zrt::train {
namespace {

const ParamInfo &paramNamed(const ModelInfo &model, const std::string &name) {
  for (const ParamInfo &p : model.params)
    if (p.name == name)
      return p;
  fatal("train", "compression: no parameter '%s' in the model description", name.c_str());
}

const StateInfo &stateNamed(const ModelInfo &model, const std::string &name) {
  for (const StateInfo &s : model.states)
    if (s.name == name)
      return s;
  fatal("train", "compression: no state '%s' in the model description", name.c_str());
}

/// DeepSpeed's TopKBinarizer on |w|: the ceil(keep n) largest magnitudes are 1. torch.sort
/// orders equal magnitudes arbitrarily; here the lower index wins, so every rank agrees.
std::vector<float> topMagnitudes(const std::vector<float> &w, double keep) {
  const int64_t n = static_cast<int64_t>(w.size());
  const int64_t kept = std::min<int64_t>(n, static_cast<int64_t>(std::ceil(keep * static_cast<double>(n))));
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto larger = [&](int64_t a, int64_t b) {
    const float ma = std::fabs(w[a]), mb = std::fabs(w[b]);
    return ma != mb ? ma > mb : a < b;
  };
  if (kept < n)
    std::nth_element(order.begin(), order.begin() + kept, order.end(), larger);
  std::vector<float> mask(n, 0.0f);
  for (int64_t i = 0; i < kept; ++i)
    mask[order[i]] = 1.0f;
  return mask;
}

/// zc.fake_quantize on the host, with the kernels' arithmetic and layout (zrt/FakeQuantize.h):
/// `groups` groups of runs of `width` values.
void fakeQuantize(std::vector<float> &values, int64_t groups, int64_t width, int32_t bits, bool asymmetric) {
  const int64_t size = static_cast<int64_t>(values.size()) / groups;
  for (int64_t g = 0; g < groups; ++g) {
    float lo = INFINITY, hi = -INFINITY, amax = 0;
    for (int64_t i = 0; i < size; ++i) {
      const float v = values[fakequant::groupIndex(g, i, groups, width)];
      lo = std::min(lo, v), hi = std::max(hi, v), amax = std::max(amax, std::fabs(v));
    }
    const fakequant::Grid grid = asymmetric ? fakequant::asymmetricGrid(lo, hi, bits) : fakequant::symmetricGrid(amax, bits);
    for (int64_t i = 0; i < size; ++i) {
      float &v = values[fakequant::groupIndex(g, i, groups, width)];
      v = fakequant::snapped(v, grid, bits, asymmetric);
    }
  }
}

} // namespace

/// The L1 norm of each slice of `w` (shape `shape`) at index i of `axis`, in double (torch
/// sums in f32: a difference only where two norms tie to rounding).
std::vector<float> sliceNorms(const std::vector<float> &w, const std::vector<int64_t> &shape, int64_t axis) {
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  const int64_t dim = shape[axis];
  std::vector<double> norms(dim, 0.0);
  for (size_t i = 0; i < w.size(); ++i)
    norms[(static_cast<int64_t>(i) / inner) % dim] += std::fabs(static_cast<double>(w[i]));
  return std::vector<float>(norms.begin(), norms.end());
}

void computePruningMasks(const ModelInfo &model) {
  for (const StateInfo &s : model.states) {
    if (s.role != "mask")
      continue;
    const ParamInfo &p = paramNamed(model, s.param);
    std::vector<float> values = readParamValues(p);
    if (s.rows >= static_cast<int64_t>(p.shape.size()))
      fatal("train", "row mask %s of axis %lld: %s has %zu axes", s.name.c_str(), static_cast<long long>(s.rows),
            p.name.c_str(), p.shape.size());
    // DeepSpeed's l1 masks: the largest magnitudes (sparse), or the rows with the largest L1 norms.
    std::vector<float> mask = topMagnitudes(s.rows >= 0 ? sliceNorms(values, p.shape, s.rows) : values, s.keep);
    if (static_cast<int64_t>(mask.size()) * 4 != s.bytes)
      fatal("train", "mask %s is %lld bytes; its parameter has %zu values", s.name.c_str(),
            static_cast<long long>(s.bytes), mask.size());
    writeModelState(s.tier, s.offset, mask.data(), s.bytes);
  }
}

void setStepGates(const ModelInfo &model, int64_t completedSteps) {
  if (model.stepGates.empty())
    return;
  std::vector<float> on;
  for (int64_t from : model.stepGates)
    on.push_back(completedSteps >= from ? 1.0f : 0.0f);
  zrt_set_step_gates(static_cast<int64_t>(on.size()), on.data());
}

void compressWeights(const ModelInfo &model, const ParamInfo &p, std::vector<float> &values) {
  for (const CompressedParam &c : model.compressed) {
    if (c.param != p.name)
      continue;
    if (c.bits) {
      // As the forward pass groups them: contiguous, or blocks of columns (a weight kept [in, out]).
      const int64_t n = static_cast<int64_t>(values.size());
      const int64_t width = c.columns && !p.wholeShape.empty() ? p.wholeShape.back() / c.groups : n / c.groups;
      fakeQuantize(values, c.groups, width, c.bits, c.asymmetric);
    }
    if (!c.mask.empty()) {
      const StateInfo &s = stateNamed(model, c.mask);
      std::vector<float> mask(values.size());
      readModelState(s.tier, s.offset, mask.data(), s.bytes);
      for (size_t i = 0; i < values.size(); ++i)
        values[i] *= mask[i];
    }
    if (!c.rowMask.empty()) {
      const StateInfo &s = stateNamed(model, c.rowMask);
      std::vector<float> mask(s.bytes / 4);
      readModelState(s.tier, s.offset, mask.data(), s.bytes);
      int64_t inner = 1;
      for (size_t d = c.rowAxis + 1; d < p.wholeShape.size(); ++d)
        inner *= p.wholeShape[d];
      const int64_t dim = static_cast<int64_t>(mask.size());
      if (c.rowAxis >= static_cast<int64_t>(p.wholeShape.size()) || p.wholeShape[c.rowAxis] != dim)
        fatal("train", "row mask %s does not fit axis %lld of %s", s.name.c_str(), static_cast<long long>(c.rowAxis),
              p.name.c_str());
      for (size_t i = 0; i < values.size(); ++i)
        values[i] *= mask[(static_cast<int64_t>(i) / inner) % dim];
    }
  }
}

} // namespace zrt::train
