#include "PipelineSchedule.h" // (beside it: zcc builds this file too)

#include <algorithm>
#include <cassert>

namespace zcc::pipeline {

std::optional<Schedule> parseSchedule(const std::string &name) {
  if (name == "1f1b")
    return Schedule::OneFOneB;
  if (name == "zb-h1")
    return Schedule::ZeroBubbleH1;
  return std::nullopt;
}

const char *scheduleName(Schedule schedule) {
  return schedule == Schedule::ZeroBubbleH1 ? "zb-h1" : "1f1b";
}

const char *scheduleNames() { return "1f1b, zb-h1"; }

int64_t slots(Schedule schedule, int64_t stage, int64_t stages, int64_t microBatches) {
  const int64_t inFlight = schedule == Schedule::ZeroBubbleH1 ? stages : stages - stage;
  return std::max<int64_t>(1, std::min(microBatches, inFlight));
}

namespace {

std::vector<Action> oneForwardOneBackward(int64_t stage, int64_t stages, int64_t K) {
  const int64_t n = slots(Schedule::OneFOneB, stage, stages, K);
  const int64_t warmUp = n - 1; // min(P - s - 1, K - 1): the steady state starts with a forward
  std::vector<Action> actions;
  int64_t forwards = 0, backwards = 0;
  for (; forwards < warmUp; ++forwards)
    actions.push_back({Work::Forward, forwards, forwards % n});
  while (backwards < K) {
    if (forwards < K) {
      actions.push_back({Work::Forward, forwards, forwards % n});
      ++forwards;
    }
    actions.push_back({Work::Backward, backwards, backwards % n});
    ++backwards;
  }
  return actions;
}

/// ZB-H1's table, built at unit costs (F = B = W = 1, no send time), micro-batch by micro-batch:
/// its forward on every stage in order, then its input-gradient backward from the last stage to
/// the first. A stage's pending W's go in front of an F or B when the F would exceed the stage's
/// in-flight limit, or when a W finishes before that F's or B's input arrives (filling what would
/// be idle time). The first micro-batch's round also decides the warm-up: each stage runs the
/// forwards that fit before the first backward reaches it, fewer than the stage after it.
std::vector<std::vector<Action>> zeroBubbleH1(int64_t P, int64_t K) {
  std::vector<std::vector<Action>> out(P);
  std::vector<int64_t> f(P, 0), b(P, 0), w(P, 0), limit(P);
  std::vector<double> free(P, 0);                                   // when each stage is next free
  std::vector<std::vector<double>> fEnd(P, std::vector<double>(K)), bEnd(P, std::vector<double>(K));
  for (int64_t s = 0; s < P; ++s)
    limit[s] = slots(Schedule::ZeroBubbleH1, s, P, K);
  auto put = [&](int64_t s, Work work) {
    int64_t &count = work == Work::Forward ? f[s] : work == Work::Backward ? b[s] : w[s];
    const int64_t m = count++;
    double end = free[s] + 1;
    if (work == Work::Forward && s > 0)
      end = std::max(end, fEnd[s - 1][m] + 1);
    if (work == Work::Backward)
      end = std::max(end, (s + 1 < P ? bEnd[s + 1][m] : fEnd[s][m]) + 1);
    if (work == Work::Forward)
      fEnd[s][m] = end;
    if (work == Work::Backward)
      bEnd[s][m] = end;
    free[s] = end;
    out[s].push_back({work, m, m % limit[s]});
  };
  // Pending W's that end no later than `arrival` (when the next work's input is there).
  auto fillBefore = [&](int64_t s, double arrival) {
    while (w[s] < b[s] && free[s] + 1 <= arrival)
      put(s, Work::Weight);
  };
  for (int64_t m = 0; m < K; ++m) {
    if (m == 0) {
      for (int64_t s = 0; s < P; ++s)
        put(s, Work::Forward);
      // Warm-up: stage s (before the last) runs forwards while they fit before micro-batch 0's
      // backward can start there, within its in-flight limit.
      std::vector<int64_t> warm(P, 0);
      double backwardStart = fEnd[P - 1][0] + 1; // when B 0 ends at the last stage
      for (int64_t s = P - 2; s >= 0; --s) {
        double clock = free[s];
        while (f[s] + warm[s] < K && f[s] + warm[s] < limit[s] && clock < backwardStart) {
          clock += 1;
          ++warm[s];
        }
        backwardStart = std::max(clock, backwardStart) + 1;
      }
      // A stage never runs more warm-up forwards than the one before it (their inputs come from it).
      for (int64_t s = 1; s < P; ++s)
        while (warm[s] > 0 && warm[s] >= warm[s - 1] && f[s] + warm[s] < K)
          --warm[s];
      for (int64_t s = 0; s < P; ++s)
        for (int64_t i = 0; i < warm[s]; ++i)
          put(s, Work::Forward);
      for (int64_t s = P - 1; s >= 0; --s)
        put(s, Work::Backward);
      continue;
    }
    // One more forward on each stage that has one left, as long as every later stage does too.
    std::vector<bool> forward(P);
    for (int64_t s = P - 1; s >= 0; --s)
      forward[s] = f[s] < K && (s + 1 == P || forward[s + 1]);
    for (int64_t s = 0; s < P; ++s) {
      if (!forward[s])
        continue;
      while (f[s] - w[s] >= limit[s]) {
        assert(w[s] < b[s] && "zb-h1: a full stage has no weight gradient to run");
        put(s, Work::Weight);
      }
      if (s > 0)
        fillBefore(s, fEnd[s - 1][f[s]]);
      put(s, Work::Forward);
    }
    for (int64_t s = P - 1; s >= 0; --s) {
      if (s + 1 < P)
        fillBefore(s, bEnd[s + 1][b[s]]);
      if (s == 0 && f[s] == K) // the first stage drains as it goes: nothing arrives after its last B
        while (w[s] < b[s])
          put(s, Work::Weight);
      put(s, Work::Backward);
    }
  }
  for (int64_t s = 0; s < P; ++s)
    while (w[s] < K)
      put(s, Work::Weight);
  return out;
}

} // namespace

std::vector<std::vector<Action>> table(Schedule schedule, int64_t stages, int64_t microBatches) {
  if (schedule == Schedule::ZeroBubbleH1)
    return zeroBubbleH1(stages, microBatches);
  std::vector<std::vector<Action>> out;
  for (int64_t s = 0; s < stages; ++s)
    out.push_back(oneForwardOneBackward(s, stages, microBatches));
  return out;
}

Timing timeTable(const std::vector<std::vector<Action>> &table, const std::vector<StageCosts> &costs) {
  const int64_t P = static_cast<int64_t>(table.size());
  int64_t K = 0;
  for (const std::vector<Action> &stage : table)
    for (const Action &a : stage)
      K = std::max(K, a.microBatch + 1);
  Timing t;
  t.stages.assign(P, {});
  std::vector<std::vector<double>> fEnd(P, std::vector<double>(K, -1)), bEnd(P, std::vector<double>(K, -1));
  std::vector<size_t> next(P, 0);
  std::vector<double> free(P, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t s = 0; s < P; ++s)
      while (next[s] < table[s].size()) {
        const Action &a = table[s][next[s]];
        const StageCosts &c = costs[s];
        double ready = 0, work = 0;
        if (a.work == Work::Forward) {
          if (s > 0 && fEnd[s - 1][a.microBatch] < 0)
            break;
          ready = s > 0 ? fEnd[s - 1][a.microBatch] + costs[s - 1].forwardSend : 0;
          work = c.forward;
        } else if (a.work == Work::Backward) {
          double input = s + 1 < P ? bEnd[s + 1][a.microBatch] : fEnd[s][a.microBatch];
          if (input < 0)
            break;
          ready = s + 1 < P ? input + costs[s + 1].backwardSend : input;
          work = c.backward;
        } else {
          work = c.weight; // after its B, which came earlier in this stage's list
        }
        Timed timed{a, std::max(ready, free[s]), 0};
        timed.end = timed.start + work;
        free[s] = timed.end;
        if (a.work == Work::Forward)
          fEnd[s][a.microBatch] = timed.end;
        else if (a.work == Work::Backward)
          bEnd[s][a.microBatch] = timed.end; // a W's end: nothing waits for it but its own stage
        t.stages[s].push_back(timed);
        ++next[s];
        progress = true;
      }
  }
  double busy = 0;
  for (int64_t s = 0; s < P; ++s) {
    assert(next[s] == table[s].size() && "pipeline schedule: a stage waits for work no stage does");
    t.span = std::max(t.span, free[s]);
    for (const Timed &timed : t.stages[s])
      busy += timed.end - timed.start;
  }
  t.bubble = t.span > 0 ? 1.0 - busy / (double(P) * t.span) : 0.0;
  return t;
}

} // namespace zcc::pipeline
