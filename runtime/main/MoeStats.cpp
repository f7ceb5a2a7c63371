#include "main/MoeStats.h"

#include <algorithm>

#include "zrt/zrt.h"

namespace zrt::train {

bool routesTokens(const std::vector<ModelInfo> &stages) {
  return std::any_of(stages.begin(), stages.end(), [](const ModelInfo &m) { return m.moeLayers > 0; });
}

MoeStepStats gatherMoeStats(int64_t tensorParallel) {
  int64_t mine[6];
  zrt_moe_take_stats(mine);
  // f32 over the host gather: counts per step, far below 2^24 for the per-routing extremes; the
  // totals are summed in double below from each rank's exact-enough f32.
  const int kFields = 6;
  float send[kFields];
  for (int i = 0; i < kFields; ++i)
    send[i] = static_cast<float>(mine[i]);
  std::vector<float> all(static_cast<size_t>(kFields) * static_cast<size_t>(zrt_world_size()));
  zrt_host_all_gather(ZRT_AXIS_WORLD, send, all.data(), kFields);
  MoeStepStats s;
  double routings = 0, experts = 0, rows = 0, dropped = 0;
  bool first = true;
  for (size_t r = 0; r < all.size(); r += kFields) {
    const float *f = all.data() + r;
    if (f[0] <= 0)
      continue;
    routings += f[0], experts += f[1], rows += f[4], dropped += f[5];
    s.fewest = first ? int64_t(f[2]) : std::min(s.fewest, int64_t(f[2]));
    s.most = first ? int64_t(f[3]) : std::max(s.most, int64_t(f[3]));
    first = false;
  }
  const double tp = double(std::max<int64_t>(tensorParallel, 1));
  s.routings = int64_t(routings / tp + 0.5);
  s.mean = experts > 0 ? rows / experts : 0;
  s.dropped = int64_t(dropped / tp + 0.5);
  return s;
}

} // namespace zrt::train
