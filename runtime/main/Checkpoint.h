// Sharded checkpoints of a training run: each rank saves the bytes it owns of every
// parameter and optimizer state (exactly its arena's persistent buffers but the gradients,
// which are zero between steps), rank 0 a JSON manifest that describes the layout (shapes,
// dtypes, shards, world size, ZeRO stage), the step, seed and data, and each rank file's
// size and CRC-32. A checkpoint is complete when its manifest exists: files are written
// to a temporary name (the writing process's own: main/CheckpointLease.h), fsync'ed and renamed, the manifest last, so a crash while saving
// leaves the previous checkpoint intact.
//
//   D/step-00000010/rank-0.bin ... rank-(N-1).bin, manifest.json
//
// tools/zcc-ckpt reads the same layout to inspect, consolidate (safetensors) and reshard.
#ifndef ZRT_MAIN_CHECKPOINT_H
#define ZRT_MAIN_CHECKPOINT_H

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "main/ModelInfo.h"

namespace zrt::train {

struct RunIdentity {
  uint64_t seed = 0;
  std::string data; // the data source's description
  // The learning-rate schedule the run follows: a resumed run that would follow another
  // one is refused (as Megatron does) unless `overrideSchedule` says to take this run's.
  double peakLr = 0;
  std::string schedule;
  int64_t warmup = 0, steps = 0;
  bool overrideSchedule = false;
  // The lowest validation loss so far (NaN: none yet): saved in the manifest, restored on resume.
  double bestValLoss = std::nan("");
  // The path of every product (zrt_matmul_plan_text): paths round differently, so a resumed run
  // installs the plan the run started with (zrt_plan_matmuls' `recorded`). Empty: none kept.
  std::string matmulPlan;
};

/// mkdir -p: a fatal error naming the path when it cannot be created.
void makeDirs(const std::string &path);

/// Every rank calls it (it synchronizes the ranks); keeps the newest `keep` checkpoints.
/// `stages` are every pipeline stage's description (one without --pp), `held` this rank's, placed
/// in its arena (one, or an interleaved rank's chunks in order: its file holds them one after the
/// other): the manifest records each stage's layout and where it starts in its rank's file.
void saveCheckpoint(const std::vector<ModelInfo> &stages, const std::vector<const ModelInfo *> &held,
                    const std::string &dir, int64_t step, const RunIdentity &run, int keep);

/// Loads the newest complete checkpoint of `dir` into the arena (zrt_arena_write); returns its step, or 0
/// when `dir` holds none. A checkpoint that does not match this program (another model,
/// world size or layout), or whose files are missing, truncated or corrupt, is a fatal
/// error naming the problem, before any step runs.
/// Restores run.bestValLoss and run.matmulPlan from the manifest.
int64_t resumeCheckpoint(const std::vector<ModelInfo> &stages, const std::vector<const ModelInfo *> &held,
                         const std::string &dir, RunIdentity &run);

} // namespace zrt::train

#endif // ZRT_MAIN_CHECKPOINT_H
