#include "main/LrSchedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace zrt::train {

int64_t decayEnd(const Flags &f) { return f.decaySteps >= 0 ? f.decaySteps : f.steps - 1; }

/// nanoGPT's get_lr and Megatron's OptimizerParamScheduler: linear warmup, then cosine or linear
/// decay from the peak to --min-lr at the decay's end, --min-lr after it; WSD holds the peak
/// until its decay's last --wsd-decay-steps.
double learningRate(const Flags &f, double peak, int64_t step /* from 0 */) {
  if (step < f.warmup)
    return peak * double(step + 1) / double(f.warmup);
  const int64_t end = decayEnd(f);
  if (f.schedule == "constant" || end <= f.warmup)
    return peak;
  const double minLr = f.minLr >= 0 ? f.minLr : peak / 10;
  if (step >= end)
    return minLr;
  if (f.schedule == "wsd") {
    const int64_t decay = f.wsdDecaySteps >= 0 ? f.wsdDecaySteps : std::max<int64_t>(1, (end - f.warmup) / 5);
    const int64_t start = std::max(f.warmup, end - decay);
    if (step < start)
      return peak;
    return minLr + (peak - minLr) * double(end - step) / double(end - start);
  }
  const double progress = double(step - f.warmup) / double(end - f.warmup);
  if (f.schedule == "linear")
    return minLr + (1 - progress) * (peak - minLr);
  return minLr + 0.5 * (1 + std::cos(M_PI * progress)) * (peak - minLr);
}

/// The schedule as train.bin's flags (a checkpoint records it; a resume compares it).
std::string scheduleText(const Flags &f) {
  std::string text = f.schedule;
  char number[64];
  if (f.minLr >= 0) {
    std::snprintf(number, sizeof number, " --min-lr %.9g", f.minLr);
    text += number;
  }
  if (f.decaySteps >= 0)
    text += " --lr-decay-steps " + std::to_string(f.decaySteps);
  if (f.wsdDecaySteps >= 0)
    text += " --wsd-decay-steps " + std::to_string(f.wsdDecaySteps);
  return text;
}

} // namespace zrt::train
