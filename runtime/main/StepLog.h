// What train.bin tells the user: the start-up lines (model, mesh, backend, matmul paths, model
// state per rank) and each logged step, as a console line and as one JSON object of --log-json
// (the loss, learning rate, gradient norm, validation loss, times, memory, traffic, swaps).
#ifndef ZRT_MAIN_STEPLOG_H
#define ZRT_MAIN_STEPLOG_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "main/Data.h"
#include "main/ModelInfo.h"
#include "main/MoeStats.h"
#include "zrt/zrt.h"

namespace zrt::train {

/// One logged step's values (the loss is the global batch's mean).
struct StepRecord {
  int64_t step = 0; // from 1
  float loss = 0;
  double lr = 0, gradNorm = 0;
  double valLoss = 0, bestValLoss = 0; // NaN: no evaluation at this step
  double seconds = 0, updateSeconds = 0;
  int64_t rows = 0, tokensPerRow = 1; // the global batch, for tokens (or samples) per second
  MoeStepStats moe;                    // routings 0: no Mixture-of-Experts layer
};

/// Rank 0's log: console lines, and the --log-json file when asked for (opened here: a path that
/// cannot be written stops the run before its first step).
class StepLog {
public:
  StepLog(bool enabled, const std::string &jsonPath);
  ~StepLog() { close(); }
  StepLog(const StepLog &) = delete;
  StepLog &operator=(const StepLog &) = delete;

  /// The step's line (and its validation line), and its JSON object; `before` and `now` are the
  /// runtime's counters at the previous logged step and now (traffic and swaps in between).
  void write(const ModelInfo &m, const StepRecord &r, const zrt_counters &before, const zrt_counters &now);
  void close();

private:
  FILE *json_ = nullptr;
};

/// The start-up lines rank 0 prints: model (its parameters over every stage program in `stages`,
/// the arena each rank allocates), mesh, backend, matmul paths, clipping, state per rank (`model`:
/// rank 0's first program).
void printRunBanner(const std::vector<ModelInfo> &stages, const ModelInfo &model, int64_t arenaBytes,
                    const DataSource &data, int batchRanks, int dataRanks, int64_t globalRows, const char *matmulLine);

/// Bytes the collectives sent, over every link.
int64_t bytesSent(const zrt_counters &c);

/// The process's peak resident set (VmHWM).
int64_t peakRssBytes();

} // namespace zrt::train

#endif // ZRT_MAIN_STEPLOG_H
