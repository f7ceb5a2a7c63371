#include "PipelineSchedule.h" // (beside it: zcc builds this file too)

#include <algorithm>
#include <cassert>

namespace zcc::pipeline {

std::optional<Schedule> parseSchedule(const std::string &name) {
  if (name == "1f1b")
    return Schedule::OneFOneB;
  if (name == "zb-h1")
    return Schedule::ZeroBubbleH1;
  if (name == "interleaved-1f1b")
    return Schedule::Interleaved1F1B;
  if (name == "zbv")
    return Schedule::ZeroBubbleV;
  return std::nullopt;
}

const char *scheduleName(Schedule schedule) {
  switch (schedule) {
  case Schedule::ZeroBubbleH1:
    return "zb-h1";
  case Schedule::Interleaved1F1B:
    return "interleaved-1f1b";
  case Schedule::ZeroBubbleV:
    return "zbv";
  case Schedule::OneFOneB:
    break;
  }
  return "1f1b";
}

const char *scheduleNames() { return "1f1b, zb-h1, interleaved-1f1b, zbv"; }

std::string problem(Schedule schedule, int64_t stages, int64_t microBatches, int64_t chunks) {
  const std::string name = scheduleName(schedule);
  if (stages < 1 || microBatches < 1)
    return "a pipeline needs at least one stage and one micro-batch";
  if (!interleaves(schedule))
    return chunks == 1 ? "" : name + " runs one chunk of layers per rank, not " + std::to_string(chunks);
  if (fixedChunks(schedule) && chunks != fixedChunks(schedule))
    return name + " runs " + std::to_string(fixedChunks(schedule)) + " chunks of layers per rank (its V), not " +
           std::to_string(chunks) + " (--pp-interleave)";
  if (schedule == Schedule::ZeroBubbleV)
    return stages < 2 ? name + " needs at least 2 pipeline ranks" : "";
  if (chunks < 2)
    return name + " needs at least 2 chunks of layers per rank (--pp-interleave), got " + std::to_string(chunks);
  if (stages < 2)
    return name + " needs at least 2 pipeline ranks";
  if (microBatches % stages != 0)
    return name + " runs the micro-batches in groups of the " + std::to_string(stages) +
           " pipeline ranks (Megatron-LM's condition): " + std::to_string(microBatches) +
           " micro-batches (--grad-accum) are not a multiple of " + std::to_string(stages);
  return "";
}

namespace {

/// Megatron-LM's interleaved 1F1B at rank r (forward_backward_pipelining_with_interleaving): the
/// K V forwards in groups of P micro-batches per chunk, the backwards in the same groups from the
/// last chunk down; slots left 0 (interleavedTable sets them).
std::vector<Action> interleavedOrder(int64_t r, int64_t P, int64_t K, int64_t V) {
  const int64_t total = K * V;
  const int64_t warmUp = K == P ? total : std::min(total, (P - r - 1) * 2 + (V - 1) * P);
  auto action = [&](Work work, int64_t k) {
    int64_t chunk = (k % (P * V)) / P;
    if (work == Work::Backward)
      chunk = V - 1 - chunk;
    return Action{work, (k / (P * V)) * P + k % P, 0, chunk};
  };
  std::vector<Action> actions;
  for (int64_t k = 0; k < warmUp; ++k)
    actions.push_back(action(Work::Forward, k));
  for (int64_t k = 0; k < total - warmUp; ++k) {
    actions.push_back(action(Work::Forward, warmUp + k));
    actions.push_back(action(Work::Backward, k));
  }
  for (int64_t k = total - warmUp; k < total; ++k)
    actions.push_back(action(Work::Backward, k));
  return actions;
}

/// The most micro-batches chunk `chunk` holds at once in `actions` (at least 1) from their
/// `from` work to their `to` work (W where the list has none: its B).
int64_t peakHeld(const std::vector<Action> &actions, int64_t chunk, Work from, Work to) {
  const bool split = std::any_of(actions.begin(), actions.end(), [](const Action &a) { return a.work == Work::Weight; });
  if (!split && to == Work::Weight)
    to = Work::Backward;
  if (from == to) // held during one piece of work
    return 1;
  int64_t held = 0, peak = 1;
  for (const Action &a : actions)
    if (a.chunk == chunk && (a.work == from || a.work == to))
      peak = std::max(peak, held += a.work == from ? 1 : -1);
  return peak;
}

/// The most micro-batches chunk `chunk` holds in flight at once in `actions` (at least 1): from
/// an F to its last piece of backward (its W when the list has W's, else its B).
int64_t peakInFlight(const std::vector<Action> &actions, int64_t chunk) {
  return peakHeld(actions, chunk, Work::Forward, Work::Weight);
}

/// ZB-V's order at rank r of P (PyTorch's ScheduleZBVZeroBubble._calculate_single_rank_operations):
/// chunk 0 is virtual stage r, chunk 1 stage 2P - 1 - r. Built over max(K, 2P - 1) micro-batches,
/// the pipeline's fill, then the work of micro-batches past the step's K dropped (as PyTorch
/// does); slots left 0.
std::vector<Action> zeroBubbleVOrder(int64_t r, int64_t P, int64_t K) {
  const int64_t n = std::max(K, 2 * P - 1);
  std::vector<Action> actions;
  int64_t f[2] = {0, 0}, b[2] = {0, 0}, w[2] = {0, 0};
  auto put = [&](Work work, int64_t chunk) {
    int64_t &count = work == Work::Forward ? f[chunk] : work == Work::Backward ? b[chunk] : w[chunk];
    if (count < K)
      actions.push_back({work, count, 0, chunk});
    ++count;
  };
  for (int64_t i = 0; i < 2 * (P - r) - 1; ++i)
    put(Work::Forward, 0);
  for (int64_t i = 0; i < r; ++i) {
    put(Work::Forward, 1);
    put(Work::Forward, 0);
  }
  for (int64_t i = 0; i < P - r; ++i) {
    put(Work::Forward, 1);
    put(Work::Backward, 1);
    put(Work::Weight, 1);
  }
  while (f[1] < f[0] || f[0] < n) {
    if (f[0] < n)
      put(Work::Forward, 0);
    put(Work::Backward, 0);
    put(Work::Weight, 0);
    put(Work::Forward, 1);
    put(Work::Backward, 1);
    put(Work::Weight, 1);
  }
  for (int64_t i = 0; i < r; ++i) {
    put(Work::Backward, 0);
    put(Work::Backward, 1);
  }
  for (int64_t i = 0; i < P - r; ++i) {
    put(Work::Backward, 0);
    put(Work::Weight, 0);
  }
  while (w[1] < b[1])
    put(Work::Weight, 1);
  while (w[0] < b[0])
    put(Work::Weight, 0);
  assert(f[0] == n && b[0] == n && w[0] == n && f[1] == n && b[1] == n && w[1] == n && "zbv: unbalanced order");
  return actions;
}

/// Each rank's order, each chunk's slots the most micro-batches it holds at once.
std::vector<Action> withSlots(std::vector<Action> actions, int64_t chunks) {
  std::vector<int64_t> n(chunks);
  for (int64_t c = 0; c < chunks; ++c)
    n[c] = peakInFlight(actions, c);
  for (Action &a : actions)
    a.slot = a.microBatch % n[a.chunk];
  return actions;
}

std::vector<std::vector<Action>> interleavedTable(Schedule schedule, int64_t P, int64_t K, int64_t V) {
  std::vector<std::vector<Action>> out;
  for (int64_t r = 0; r < P; ++r)
    out.push_back(withSlots(schedule == Schedule::ZeroBubbleV ? zeroBubbleVOrder(r, P, K) : interleavedOrder(r, P, K, V), V));
  return out;
}

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

int64_t slots(Schedule schedule, int64_t stage, int64_t stages, int64_t microBatches, int64_t chunks, int64_t chunk) {
  if (schedule == Schedule::ZeroBubbleV)
    return peakInFlight(zeroBubbleVOrder(stage, stages, microBatches), chunk);
  if (interleaves(schedule))
    return peakInFlight(interleavedOrder(stage, stages, microBatches, chunks), chunk);
  const int64_t inFlight = schedule == Schedule::ZeroBubbleH1 ? stages : stages - stage;
  return std::max<int64_t>(1, std::min(microBatches, inFlight));
}

const char *holdName(Hold hold) {
  switch (hold) {
  case Hold::ForwardToBackward:
    return "forward-backward";
  case Hold::ForwardToWeight:
    return "forward-weight";
  case Hold::BackwardToWeight:
    return "backward-weight";
  case Hold::Forward:
    return "forward";
  case Hold::Backward:
    return "backward";
  }
  return "?";
}

std::optional<Hold> parseHold(const std::string &name) {
  for (Hold hold :
       {Hold::ForwardToBackward, Hold::ForwardToWeight, Hold::BackwardToWeight, Hold::Forward, Hold::Backward})
    if (name == holdName(hold))
      return hold;
  return std::nullopt;
}

bool holds(Hold hold, Work work) {
  switch (hold) {
  case Hold::ForwardToBackward:
    return work != Work::Weight;
  case Hold::ForwardToWeight:
    return true;
  case Hold::BackwardToWeight:
    return work != Work::Forward;
  case Hold::Forward:
    return work == Work::Forward;
  case Hold::Backward:
    return work == Work::Backward;
  }
  return true;
}

int64_t heldSlots(Schedule schedule, int64_t stage, int64_t stages, int64_t microBatches, int64_t chunks,
                  int64_t chunk, Hold hold) {
  const int64_t inFlight = slots(schedule, stage, stages, microBatches, chunks, chunk);
  if (hold == Hold::Forward || hold == Hold::Backward)
    return std::min<int64_t>(2, inFlight);
  // Without W every other input is held from F to B: the slots. From F to W: the slots too.
  if (!splitsBackward(schedule) || hold == Hold::ForwardToWeight)
    return inFlight;
  // One rank's list (ZB-H1's table is built for all stages together).
  const std::vector<Action> actions = schedule == Schedule::ZeroBubbleV
                                          ? zeroBubbleVOrder(stage, stages, microBatches)
                                          : table(schedule, stages, microBatches, chunks)[stage];
  return hold == Hold::ForwardToBackward ? peakHeld(actions, chunk, Work::Forward, Work::Backward)
                                         : peakHeld(actions, chunk, Work::Backward, Work::Weight);
}

int64_t bufferFreedAfter(const std::vector<Action> &actions, size_t j, Hold hold, int64_t buffers) {
  const Action &a = actions[j];
  for (size_t k = j; k-- > 0;)
    if (actions[k].chunk == a.chunk && holds(hold, actions[k].work) && actions[k].microBatch != a.microBatch &&
        actions[k].microBatch % buffers == a.microBatch % buffers)
      return static_cast<int64_t>(k);
  return -1;
}

std::string actionText(const Action &action, bool chunked) {
  std::string text = std::string(1, static_cast<char>(action.work)) + std::to_string(action.microBatch);
  return chunked ? text + "." + std::to_string(action.chunk) : text;
}

std::vector<std::vector<Action>> table(Schedule schedule, int64_t stages, int64_t microBatches, int64_t chunks) {
  assert(problem(schedule, stages, microBatches, chunks).empty() && "pipeline schedule: unsupported arguments");
  if (schedule == Schedule::ZeroBubbleH1)
    return zeroBubbleH1(stages, microBatches);
  if (interleaves(schedule))
    return interleavedTable(schedule, stages, microBatches, chunks);
  std::vector<std::vector<Action>> out;
  for (int64_t s = 0; s < stages; ++s)
    out.push_back(oneForwardOneBackward(s, stages, microBatches));
  return out;
}

Timing timeTable(const std::vector<std::vector<Action>> &table, const std::vector<StageCosts> &costs,
                 Placement placement) {
  const int64_t P = static_cast<int64_t>(table.size());
  int64_t K = 0, V = 1;
  for (const std::vector<Action> &stage : table)
    for (const Action &a : stage) {
      K = std::max(K, a.microBatch + 1);
      V = std::max(V, a.chunk + 1);
    }
  const int64_t J = P * V; // virtual stages: rank s's chunk c is stageOf(placement, s, c, P)
  assert(static_cast<int64_t>(costs.size()) == J && "pipeline schedule: one cost per (virtual) stage");
  Timing t;
  t.stages.assign(P, {});
  std::vector<std::vector<double>> fEnd(J, std::vector<double>(K, -1)), bEnd(J, std::vector<double>(K, -1));
  std::vector<size_t> next(P, 0);
  std::vector<double> free(P, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t s = 0; s < P; ++s)
      while (next[s] < table[s].size()) {
        const Action &a = table[s][next[s]];
        const int64_t j = stageOf(placement, s, a.chunk, P);
        const StageCosts &c = costs[j];
        // What a message from virtual stage `from` adds: nothing between two chunks of one rank.
        auto sent = [&](int64_t from, double seconds) {
          return rankOfStage(placement, from, P) == s ? 0.0 : seconds;
        };
        double ready = 0, work = 0;
        if (a.work == Work::Forward) {
          if (j > 0 && fEnd[j - 1][a.microBatch] < 0)
            break;
          ready = j > 0 ? fEnd[j - 1][a.microBatch] + sent(j - 1, costs[j - 1].forwardSend) : 0;
          work = c.forward;
        } else if (a.work == Work::Backward) {
          double input = j + 1 < J ? bEnd[j + 1][a.microBatch] : fEnd[j][a.microBatch];
          if (input < 0)
            break;
          ready = j + 1 < J ? input + sent(j + 1, costs[j + 1].backwardSend) : input;
          work = c.backward;
        } else {
          work = c.weight; // after its B, which came earlier in this stage's list
        }
        Timed timed{a, std::max(ready, free[s]), 0};
        timed.end = timed.start + work;
        free[s] = timed.end;
        if (a.work == Work::Forward)
          fEnd[j][a.microBatch] = timed.end;
        else if (a.work == Work::Backward)
          bEnd[j][a.microBatch] = timed.end; // a W's end: nothing waits for it but its own stage
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
