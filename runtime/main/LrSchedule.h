// The learning-rate schedule of --lr, --lr-schedule, --warmup, --min-lr, --lr-decay-steps and
// --wsd-decay-steps (nanoGPT's get_lr, Megatron's OptimizerParamScheduler).
#ifndef ZRT_MAIN_LRSCHEDULE_H
#define ZRT_MAIN_LRSCHEDULE_H

#include <cstdint>
#include <string>

#include "main/Flags.h"

namespace zrt::train {

/// The step the decay reaches --min-lr (0-based): --lr-decay-steps, else the last step.
int64_t decayEnd(const Flags &f);

/// Step `step`'s (from 0) learning rate: linear warmup, then cosine or linear decay from `peak` to
/// --min-lr at the decay's end, --min-lr after it; WSD holds the peak until its last decay steps.
double learningRate(const Flags &f, double peak, int64_t step);

/// The schedule as train.bin's flags (a checkpoint records it; a resume compares it).
std::string scheduleText(const Flags &f);

} // namespace zrt::train

#endif // ZRT_MAIN_LRSCHEDULE_H
