// The pipeline schedules' tables (runtime/main/PipelineSchedule.h), which train.bin runs and zcc
// and the simulator time: every stage does each micro-batch's work once and in dependency
// order, never holds more micro-batches than its slots (nor two in one slot), and the tables
// run to the end when each stage waits for its inputs (no stage waits for work that never
// comes). The bubbles at unit costs against the published formulas.
#include "runtime/main/PipelineSchedule.h"
#include "runtime/cuda/PipeColors.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace zcc::pipeline;

namespace {

std::vector<StageCosts> unitCosts(Schedule schedule, int64_t P) {
  std::vector<StageCosts> costs(P);
  for (StageCosts &c : costs) {
    c.forward = 1;
    c.backward = splitsBackward(schedule) ? 1 : 2;
    c.weight = splitsBackward(schedule) ? 1 : 0;
  }
  return costs;
}

class Tables : public ::testing::TestWithParam<Schedule> {};

TEST_P(Tables, EveryStageRunsEachMicroBatchOnceInOrderWithinItsSlots) {
  const Schedule schedule = GetParam();
  for (int64_t P = 1; P <= 8; ++P)
    for (int64_t K = 1; K <= 20; ++K) {
      std::vector<std::vector<Action>> t = table(schedule, P, K);
      ASSERT_EQ(static_cast<int64_t>(t.size()), P);
      for (int64_t s = 0; s < P; ++s) {
        SCOPED_TRACE("P " + std::to_string(P) + " K " + std::to_string(K) + " stage " + std::to_string(s));
        const int64_t n = slots(schedule, s, P, K);
        std::map<char, std::vector<int64_t>> order; // each kind's micro-batches, in the order run
        std::set<int64_t> inFlight, backwardDone;
        std::map<int64_t, int64_t> slotOwner;
        int64_t peak = 0;
        for (const Action &a : t[s]) {
          ASSERT_GE(a.microBatch, 0);
          ASSERT_LT(a.microBatch, K);
          EXPECT_EQ(a.slot, a.microBatch % n);
          order[static_cast<char>(a.work)].push_back(a.microBatch);
          const bool last = a.work == Work::Weight || (a.work == Work::Backward && !splitsBackward(schedule));
          if (a.work == Work::Forward) {
            EXPECT_FALSE(slotOwner.count(a.slot)) << "micro-batch " << a.microBatch << " takes a slot in use";
            slotOwner[a.slot] = a.microBatch;
            inFlight.insert(a.microBatch);
          } else {
            EXPECT_TRUE(inFlight.count(a.microBatch)) << "backward of micro-batch " << a.microBatch << " before its F";
            EXPECT_EQ(slotOwner[a.slot], a.microBatch);
          }
          if (a.work == Work::Backward)
            backwardDone.insert(a.microBatch);
          if (a.work == Work::Weight)
            EXPECT_TRUE(backwardDone.count(a.microBatch)) << "W of micro-batch " << a.microBatch << " before its B";
          if (last) {
            inFlight.erase(a.microBatch);
            slotOwner.erase(a.slot);
          }
          peak = std::max<int64_t>(peak, inFlight.size());
        }
        EXPECT_LE(peak, n);
        EXPECT_TRUE(inFlight.empty());
        std::vector<int64_t> all(K);
        for (int64_t m = 0; m < K; ++m)
          all[m] = m;
        EXPECT_EQ(order['F'], all); // each kind in micro-batch order, each once
        EXPECT_EQ(order['B'], all);
        EXPECT_EQ(order['W'], splitsBackward(schedule) ? all : std::vector<int64_t>{});
      }
      // Timed with each stage waiting for its inputs, every stage gets through its list.
      Timing timing = timeTable(t, unitCosts(schedule, P));
      for (int64_t s = 0; s < P; ++s)
        ASSERT_EQ(timing.stages[s].size(), t[s].size()) << "P " << P << " K " << K << ": stage " << s << " stalls";
    }
}

INSTANTIATE_TEST_SUITE_P(Schedules, Tables, ::testing::Values(Schedule::OneFOneB, Schedule::ZeroBubbleH1),
                         [](const auto &info) { return info.param == Schedule::OneFOneB ? "OneFOneB" : "ZbH1"; });

TEST(PipelineSchedule, OneFOneBIsPipeDreamFlush) {
  // Stage s: min(P - s - 1, K) forwards, then one forward and one backward, then the backwards.
  std::vector<std::vector<Action>> t = table(Schedule::OneFOneB, 4, 8);
  auto text = [](const std::vector<Action> &stage) {
    std::string s;
    for (const Action &a : stage)
      s += (s.empty() ? "" : " ") + std::string(1, static_cast<char>(a.work)) + std::to_string(a.microBatch);
    return s;
  };
  EXPECT_EQ(text(t[0]), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(text(t[3]), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
  for (int64_t s = 0; s < 4; ++s)
    EXPECT_EQ(slots(Schedule::OneFOneB, s, 4, 8), 4 - s);
  EXPECT_EQ(slots(Schedule::OneFOneB, 0, 4, 2), 2);
}

TEST(PipelineSchedule, BubblesAtUnitCostsMatchThePapers) {
  // 1F1B: (P - 1)(F + B + W) idle per stage, over a span of K(F + B + W) + that.
  // ZB-H1 (Qi et al. 2024, table 1): (P - 1)(F + B - W), at 1F1B's peak of P in flight.
  for (auto [P, K] : std::vector<std::pair<int64_t, int64_t>>{{2, 4}, {4, 8}, {4, 16}, {8, 16}, {8, 32}}) {
    SCOPED_TRACE("P " + std::to_string(P) + " K " + std::to_string(K));
    Timing oneF = timeTable(table(Schedule::OneFOneB, P, K), unitCosts(Schedule::OneFOneB, P));
    Timing zb = timeTable(table(Schedule::ZeroBubbleH1, P, K), unitCosts(Schedule::ZeroBubbleH1, P));
    EXPECT_DOUBLE_EQ(oneF.span, 3.0 * K + 3.0 * (P - 1));
    EXPECT_DOUBLE_EQ(zb.span, 3.0 * K + 1.0 * (P - 1));
    EXPECT_LE(zb.span - 3.0 * K, 0.5 * (oneF.span - 3.0 * K)); // idle time: a third of 1F1B's
    for (int64_t s = 0; s < P; ++s)
      EXPECT_EQ(slots(Schedule::ZeroBubbleH1, s, P, K), std::min(K, P));
  }
  Timing oneF = timeTable(table(Schedule::OneFOneB, 4, 8), unitCosts(Schedule::OneFOneB, 4));
  Timing zb = timeTable(table(Schedule::ZeroBubbleH1, 4, 8), unitCosts(Schedule::ZeroBubbleH1, 4));
  EXPECT_NEAR(oneF.bubble, 9.0 / 33.0, 1e-12);
  EXPECT_NEAR(zb.bubble, 3.0 / 27.0, 1e-12);
}

TEST(PipelineSchedule, TimingWaitsForTheNeighboursAndTheirSends) {
  // Two stages, one micro-batch, 1F1B: F0 on stage 0 [0, 1], sent in 0.5, F0 on stage 1
  // [1.5, 2.5], B0 there [2.5, 4.5], sent back in 0.25, B0 on stage 0 [4.75, 6.75].
  std::vector<StageCosts> costs(2, StageCosts{1, 2, 0, 0.5, 0.25});
  Timing t = timeTable(table(Schedule::OneFOneB, 2, 1), costs);
  ASSERT_EQ(t.stages[0].size(), 2u);
  EXPECT_DOUBLE_EQ(t.stages[1][0].start, 1.5);
  EXPECT_DOUBLE_EQ(t.stages[1][1].end, 4.5);
  EXPECT_DOUBLE_EQ(t.stages[0][1].start, 4.75);
  EXPECT_DOUBLE_EQ(t.span, 6.75);
}

TEST(PipelineSchedule, InterleavedRunsEachChunksMicroBatchesOnceInOrderWithinItsSlots) {
  for (int64_t P = 2; P <= 8; ++P)
    for (int64_t V = 2; V <= 4; ++V)
      for (int64_t K = P; K <= 4 * P; K += P) {
        SCOPED_TRACE("P " + std::to_string(P) + " V " + std::to_string(V) + " K " + std::to_string(K));
        ASSERT_EQ(problem(Schedule::Interleaved1F1B, P, K, V), "");
        std::vector<std::vector<Action>> t = table(Schedule::Interleaved1F1B, P, K, V);
        ASSERT_EQ(static_cast<int64_t>(t.size()), P);
        for (int64_t s = 0; s < P; ++s) {
          std::vector<int64_t> n(V); // each chunk's own slots: the most it holds at once
          for (int64_t c = 0; c < V; ++c)
            n[c] = slots(Schedule::Interleaved1F1B, s, P, K, V, c);
          std::map<std::pair<int64_t, char>, std::vector<int64_t>> order; // (chunk, kind): micro-batches
          std::map<std::pair<int64_t, int64_t>, int64_t> slotOwner;          // (chunk, slot): micro-batch
          std::vector<int64_t> inFlight(V, 0), peak(V, 0);
          for (const Action &a : t[s]) {
            ASSERT_GE(a.chunk, 0);
            ASSERT_LT(a.chunk, V);
            EXPECT_EQ(a.slot, a.microBatch % n[a.chunk]);
            order[{a.chunk, static_cast<char>(a.work)}].push_back(a.microBatch);
            ASSERT_NE(a.work, Work::Weight);
            if (a.work == Work::Forward) {
              EXPECT_FALSE((slotOwner.count({a.chunk, a.slot}))) << "chunk " << a.chunk << " micro-batch "
                                                               << a.microBatch << " takes a slot in use";
              slotOwner[{a.chunk, a.slot}] = a.microBatch;
              peak[a.chunk] = std::max(peak[a.chunk], ++inFlight[a.chunk]);
            } else {
              EXPECT_EQ((slotOwner[{a.chunk, a.slot}]), a.microBatch) << "a backward before its forward";
              slotOwner.erase({a.chunk, a.slot});
              --inFlight[a.chunk];
            }
          }
          EXPECT_EQ(peak, n) << "a chunk's slots are the most it holds at once, no more";
          std::vector<int64_t> all(K);
          for (int64_t m = 0; m < K; ++m)
            all[m] = m;
          for (int64_t c = 0; c < V; ++c) {
            EXPECT_EQ((order[{c, 'F'}]), all) << "stage " << s << " chunk " << c;
            EXPECT_EQ((order[{c, 'B'}]), all) << "stage " << s << " chunk " << c;
          }
        }
        // At unit costs per virtual stage (a chunk's F 1/V, its B 2/V): Megatron-LM's bubble,
        // (P - 1)(F + B) / V, over K(F + B) of work.
        std::vector<StageCosts> costs(P * V, StageCosts{1.0 / V, 2.0 / V, 0, 0, 0});
        Timing timing = timeTable(t, costs);
        for (int64_t s = 0; s < P; ++s)
          ASSERT_EQ(timing.stages[s].size(), t[s].size()) << "stage " << s << " stalls";
        EXPECT_NEAR(timing.span, 3.0 * K + 3.0 * (P - 1) / V, 1e-9);
      }
}

TEST(PipelineSchedule, InterleavedIsMegatronsOrder) {
  // P 2, V 2, K 4: rank 0 warms up with (P - 1) 2 + (V - 1) P = 4 forwards (both chunks' first
  // group of P micro-batches), then one forward (chunk 0's next group) and one backward (the last
  // chunk's first group first), then the backwards left.
  std::vector<std::vector<Action>> t = table(Schedule::Interleaved1F1B, 2, 4, 2);
  auto text = [](const std::vector<Action> &stage) {
    std::string s;
    for (const Action &a : stage)
      s += (s.empty() ? "" : " ") + actionText(a, true);
    return s;
  };
  EXPECT_EQ(text(t[0]), "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0");
  EXPECT_EQ(text(t[1]), "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 F3.1 B3.1 B2.0 B3.0");
  EXPECT_EQ(actionText(t[0][0], false), "F0");
  // Against 1F1B at the same P and K, the same total work per rank split into V chunks: the
  // bubble shrinks by V.
  Timing oneF = timeTable(table(Schedule::OneFOneB, 4, 8), std::vector<StageCosts>(4, StageCosts{1, 2, 0, 0, 0}));
  Timing inter = timeTable(table(Schedule::Interleaved1F1B, 4, 8, 2),
                           std::vector<StageCosts>(8, StageCosts{0.5, 1, 0, 0, 0}));
  EXPECT_NEAR(oneF.span - 24, 9, 1e-9);
  EXPECT_NEAR(inter.span - 24, 4.5, 1e-9);
}

TEST(PipelineSchedule, ZeroBubbleVRunsEachChunksMicroBatchesOnceInOrderWithinItsSlots) {
  for (int64_t P = 2; P <= 8; ++P)
    for (int64_t K = 1; K <= 4 * P; ++K) {
      SCOPED_TRACE("P " + std::to_string(P) + " K " + std::to_string(K));
      ASSERT_EQ(problem(Schedule::ZeroBubbleV, P, K, 2), "");
      std::vector<std::vector<Action>> t = table(Schedule::ZeroBubbleV, P, K, 2);
      ASSERT_EQ(static_cast<int64_t>(t.size()), P);
      for (int64_t s = 0; s < P; ++s) {
        const int64_t n[2] = {slots(Schedule::ZeroBubbleV, s, P, K, 2, 0), slots(Schedule::ZeroBubbleV, s, P, K, 2, 1)};
        std::map<std::pair<int64_t, char>, std::vector<int64_t>> order;
        std::map<std::pair<int64_t, int64_t>, int64_t> slotOwner;
        std::set<std::pair<int64_t, int64_t>> backwardDone;
        int64_t inFlight[2] = {0, 0}, peak[2] = {0, 0};
        for (const Action &a : t[s]) {
          ASSERT_GE(a.chunk, 0);
          ASSERT_LT(a.chunk, 2);
          EXPECT_EQ(a.slot, a.microBatch % n[a.chunk]);
          order[{a.chunk, static_cast<char>(a.work)}].push_back(a.microBatch);
          if (a.work == Work::Forward) {
            EXPECT_FALSE((slotOwner.count({a.chunk, a.slot}))) << "a slot in use taken";
            slotOwner[{a.chunk, a.slot}] = a.microBatch;
            peak[a.chunk] = std::max(peak[a.chunk], ++inFlight[a.chunk]);
          } else {
            EXPECT_EQ((slotOwner[{a.chunk, a.slot}]), a.microBatch) << "a backward before its forward";
          }
          if (a.work == Work::Backward)
            backwardDone.insert({a.chunk, a.microBatch});
          if (a.work == Work::Weight) {
            EXPECT_TRUE(backwardDone.count({a.chunk, a.microBatch})) << "a W before its B";
            slotOwner.erase({a.chunk, a.slot});
            --inFlight[a.chunk];
          }
        }
        EXPECT_EQ(peak[0], n[0]);
        EXPECT_EQ(peak[1], n[1]);
        std::vector<int64_t> all(K);
        for (int64_t m = 0; m < K; ++m)
          all[m] = m;
        for (int64_t c = 0; c < 2; ++c)
          for (char kind : {'F', 'B', 'W'})
            EXPECT_EQ((order[{c, kind}]), all) << "stage " << s << " chunk " << c << " " << kind;
      }
      Timing timing = timeTable(t, std::vector<StageCosts>(2 * P, StageCosts{1, 1, 1, 0, 0}), Placement::Vee);
      for (int64_t s = 0; s < P; ++s)
        ASSERT_EQ(timing.stages[s].size(), t[s].size()) << "stage " << s << " stalls";
    }
}

TEST(PipelineSchedule, ZeroBubbleVIsPyTorchsOrderInAVee) {
  // The V: rank r holds stages r and 2P - 1 - r; rank 0 the first and the last.
  for (int64_t P = 2; P <= 8; ++P)
    for (int64_t j = 0; j < 2 * P; ++j) {
      const int64_t r = rankOfStage(Placement::Vee, j, P), c = chunkOfStage(Placement::Vee, j, P);
      EXPECT_EQ(stageOf(Placement::Vee, r, c, P), j);
      EXPECT_EQ(r, j < P ? j : 2 * P - 1 - j);
      EXPECT_EQ(stageOf(Placement::Loop, rankOfStage(Placement::Loop, j, P), chunkOfStage(Placement::Loop, j, P), P), j);
    }
  // P 2, K 4 (PyTorch's ScheduleZBVZeroBubble at pp 2, written out by hand): rank 0 runs 3
  // forwards of chunk 0, then chunk 1's F B W twice, then the steady F B W pairs, then the tail.
  std::vector<std::vector<Action>> t = table(Schedule::ZeroBubbleV, 2, 4, 2);
  auto text = [](const std::vector<Action> &stage) {
    std::string s;
    for (const Action &a : stage)
      s += (s.empty() ? "" : " ") + actionText(a, true);
    return s;
  };
  EXPECT_EQ(text(t[0]), "F0.0 F1.0 F2.0 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 F3.0 B0.0 W0.0 F2.1 B2.1 W2.1 B1.0 W1.0 F3.1 "
                        "B3.1 W3.1 B2.0 W2.0 B3.0 W3.0");
  EXPECT_EQ(text(t[1]), "F0.0 F0.1 F1.0 F1.1 B0.1 W0.1 F2.0 B0.0 W0.0 F2.1 B1.1 W1.1 F3.0 B1.0 W1.0 F3.1 B2.1 W2.1 "
                        "B2.0 B3.1 B3.0 W2.0 W3.1 W3.0");
  // At F = B = W = 1 with no send time the V fills its bubble but for the ends: the span is
  // within P - 1 units of the work, 6K (1F1B: 3(P - 1) per chunk's worth, ZB-H1: P - 1).
  for (auto [P, K] : std::vector<std::pair<int64_t, int64_t>>{{2, 8}, {4, 8}, {4, 16}, {8, 32}}) {
    SCOPED_TRACE("P " + std::to_string(P) + " K " + std::to_string(K));
    Timing zbv = timeTable(table(Schedule::ZeroBubbleV, P, K, 2), std::vector<StageCosts>(2 * P, StageCosts{1, 1, 1, 0, 0}),
                           Placement::Vee);
    Timing zb = timeTable(table(Schedule::ZeroBubbleH1, P, K), unitCosts(Schedule::ZeroBubbleH1, P));
    // The same work per rank: ZB-H1 at F = B = W = 2 per rank, ZB-V at 1 per chunk.
    EXPECT_LE(zbv.span - 6.0 * K, 0.5 * (2 * zb.span - 6.0 * K));
    EXPECT_LE(zbv.bubble, zb.bubble);
    // 1F1B's first stage holds P micro-batches of the whole stage: 2P chunks' worth. Each chunk
    // keeps its own peak's slots, and the two peaks come at different times: one more at most.
    for (int64_t s = 0; s < P; ++s)
      EXPECT_LE(slots(Schedule::ZeroBubbleV, s, P, K, 2, 0) + slots(Schedule::ZeroBubbleV, s, P, K, 2, 1),
                std::min(2 * K, 2 * P + 1));
  }
}

TEST(PipelineSchedule, ProblemsAreNamed) {
  EXPECT_EQ(problem(Schedule::OneFOneB, 4, 3), "");
  EXPECT_NE(problem(Schedule::OneFOneB, 4, 8, 2).find("one chunk"), std::string::npos);
  EXPECT_NE(problem(Schedule::Interleaved1F1B, 4, 8, 1).find("at least 2 chunks"), std::string::npos);
  EXPECT_NE(problem(Schedule::Interleaved1F1B, 1, 8, 2).find("at least 2 pipeline ranks"), std::string::npos);
  EXPECT_NE(problem(Schedule::Interleaved1F1B, 4, 6, 2).find("not a multiple of 4"), std::string::npos);
  EXPECT_NE(problem(Schedule::ZeroBubbleV, 4, 8, 4).find("runs 2 chunks"), std::string::npos);
  EXPECT_NE(problem(Schedule::ZeroBubbleV, 1, 8, 2).find("at least 2 pipeline ranks"), std::string::npos);
  EXPECT_EQ(problem(Schedule::ZeroBubbleV, 4, 6, 2), "");
}

// Each input's buffers (heldSlots of its hold): micro-batch m in buffer m % n, no two micro-batches
// in one buffer while either holds it (from its first piece of work of the span's kinds to its last),
// n the fewest that allow it (held during one piece of work: 2, so one may be received while one
// is read); a receive started after bufferFreedAfter's work overwrites no micro-batch's buffer
// still in use; and under zero-bubble W's inputs from B take fewer buffers than a slot each.
TEST(PipelineSchedule, EachHoldsBuffersKeepItsMicroBatchesApart) {
  const Hold allHolds[] = {Hold::ForwardToBackward, Hold::ForwardToWeight, Hold::BackwardToWeight, Hold::Forward,
                           Hold::Backward};
  for (Schedule schedule : {Schedule::OneFOneB, Schedule::ZeroBubbleH1, Schedule::Interleaved1F1B, Schedule::ZeroBubbleV})
    for (int64_t P = 2; P <= 6; ++P)
      for (int64_t K = 1; K <= 3 * P; ++K) {
        const int64_t V = schedule == Schedule::Interleaved1F1B || schedule == Schedule::ZeroBubbleV ? 2 : 1;
        if (!problem(schedule, P, K, V).empty())
          continue;
        const std::vector<std::vector<Action>> t = table(schedule, P, K, V);
        for (int64_t r = 0; r < P; ++r)
          for (int64_t chunk = 0; chunk < V; ++chunk)
            for (Hold hold : allHolds) {
              const int64_t n = heldSlots(schedule, r, P, K, V, chunk, hold);
              std::string where = std::string(scheduleName(schedule)) + " P " + std::to_string(P) + " K " +
                                  std::to_string(K) + " rank " + std::to_string(r) + " chunk " +
                                  std::to_string(chunk) + " " + holdName(hold);
              ASSERT_GE(n, 1) << where;
              // Each micro-batch's span: its first and last held piece of work in the rank's list.
              std::vector<int64_t> first(K, -1), last(K, -1);
              const std::vector<Action> &list = t[r];
              for (size_t i = 0; i < list.size(); ++i)
                if (list[i].chunk == chunk && holds(hold, list[i].work)) {
                  if (first[list[i].microBatch] < 0)
                    first[list[i].microBatch] = static_cast<int64_t>(i);
                  last[list[i].microBatch] = static_cast<int64_t>(i);
                }
              for (int64_t m = 0; m < K; ++m)
                for (int64_t o = 0; o < m; ++o)
                  if (first[o] <= last[m] && first[m] <= last[o])
                    EXPECT_NE(o % n, m % n) << where << ": micro-batches " << m << " and " << o << " share a buffer";
              int64_t peak = 1; // the most spans over one piece of work
              for (size_t i = 0; i < t[r].size(); ++i) {
                int64_t over = 0;
                for (int64_t m = 0; m < K; ++m)
                  over += first[m] <= int64_t(i) && int64_t(i) <= last[m] ? 1 : 0;
                peak = std::max(peak, over);
              }
              if (hold == Hold::Forward || hold == Hold::Backward)
                EXPECT_EQ(n, std::min<int64_t>(2, slots(schedule, r, P, K, V, chunk))) << where;
              else if (splitsBackward(schedule) ? !(hold == Hold::ForwardToWeight && schedule == Schedule::ZeroBubbleH1)
                                                : hold == Hold::ForwardToBackward) // zb-h1's F to W: its limit
                EXPECT_EQ(n, peak) << where << ": more buffers than micro-batches held at once";
              // A receive into the buffer of list[j]'s micro-batch, started after freedAfter's work.
              for (size_t j = 0; j < list.size(); ++j) {
                if (list[j].chunk != chunk || !holds(hold, list[j].work) || first[list[j].microBatch] != int64_t(j))
                  continue;
                const int64_t after = bufferFreedAfter(list, j, hold, n);
                for (size_t i = static_cast<size_t>(after + 1); i < j; ++i)
                  EXPECT_FALSE(list[i].chunk == chunk && holds(hold, list[i].work) &&
                               list[i].microBatch != list[j].microBatch && list[i].microBatch % n == list[j].microBatch % n)
                      << where << ": a receive for micro-batch " << list[j].microBatch << " overwrites "
                      << list[i].microBatch << "'s buffer";
              }
            }
      }
  // The saving: under zb-h1 at P 4 over 8 micro-batches, stage 1 keeps what W reads from B in 2
  // buffers, not the 4 slots; the last stage's F receives nothing it keeps past its B.
  EXPECT_EQ(heldSlots(Schedule::ZeroBubbleH1, 1, 4, 8, 1, 0, Hold::BackwardToWeight), 2);
  EXPECT_EQ(heldSlots(Schedule::ZeroBubbleH1, 1, 4, 8, 1, 0, Hold::ForwardToWeight), 4);
  EXPECT_EQ(heldSlots(Schedule::ZeroBubbleH1, 3, 4, 8, 1, 0, Hold::ForwardToBackward), 1);
  EXPECT_EQ(heldSlots(Schedule::OneFOneB, 0, 4, 8, 1, 0, Hold::Backward), 2);
}

TEST(PipelineSchedule, NamesRoundTrip) {
  for (Schedule s : {Schedule::OneFOneB, Schedule::ZeroBubbleH1, Schedule::Interleaved1F1B, Schedule::ZeroBubbleV})
    EXPECT_EQ(parseSchedule(scheduleName(s)), s);
  EXPECT_FALSE(parseSchedule("gpipe"));
  EXPECT_FALSE(parseSchedule("ZB-H1"));
  for (Hold h : {Hold::ForwardToBackward, Hold::ForwardToWeight, Hold::BackwardToWeight, Hold::Forward, Hold::Backward})
    EXPECT_EQ(parseHold(holdName(h)), h);
  EXPECT_FALSE(parseHold("weight"));
}

} // namespace

// The CUDA backend's pipeline channels (runtime/cuda/PipeColors.h): a rank sends on its own
// colour's communicator and receives on its neighbours', so its send and receive streams never
// share one; neighbours round the ring (interleaved pipelines send from the last rank to the
// first) have different colours at every pipeline size.
TEST(PipeColors, NeighboursRoundTheRingDiffer) {
  for (int pp = 2; pp <= 17; ++pp) {
    std::set<int> used;
    for (int r = 0; r < pp; ++r) {
      const int color = zrt::cuda::pipeColor(r, pp);
      ASSERT_GE(color, 0);
      ASSERT_LT(color, zrt::cuda::pipeColors(pp)) << "pp " << pp << " rank " << r;
      EXPECT_NE(color, zrt::cuda::pipeColor((r + 1) % pp, pp)) << "pp " << pp << " ranks " << r << ", " << r + 1;
      used.insert(color);
    }
    EXPECT_EQ(static_cast<int>(used.size()), zrt::cuda::pipeColors(pp)) << "pp " << pp << ": a colour unused";
  }
}
