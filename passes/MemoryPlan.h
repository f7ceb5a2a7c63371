//===- MemoryPlan.h - every tensor's place in the rank's arena -----------===//
//
// One arena per rank: a persistent region (parameters, their gradients, optimizer
// state) followed by a scratch region that the step and the update functions
// share (they never run at the same time). Scratch values get offsets by first fit
// over their live ranges; views (`zc.reshape`) and references (`zc.param_ref`,
// `zc.grad_ref`) take their source's bytes. All offsets are 64-byte aligned.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_PASSES_MEMORYPLAN_H
#define ZCC_PASSES_MEMORYPLAN_H

#include "dialects/zc/ZcDialect.h"
#include "runtime/main/PipelineSchedule.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <vector>

namespace mlir::zc {

constexpr int64_t kArenaAlignment = 64;

/// Bytes of a static tensor.
int64_t tensorBytes(RankedTensorType type);

/// What a buffer holds, for budgets, reports and pictures.
enum class BufferKind { Param, Grad, OptimizerState, GatheredParam, Communication, Activation };
StringRef bufferKindName(BufferKind kind);
/// What the scratch buffer of value `v` holds (Activation, GatheredParam or Communication).
BufferKind bufferKindOf(Value v);

/// One scratch buffer of a planned function: live over ops [start, end] (indices
/// in the function's body), at `offset` of the scratch region.
struct PlannedBuffer {
  Value value;
  Operation *definer; // the op that produces it (a zc.wait's start for an awaited result)
  int64_t bytes, start, end, offset;
  BufferKind kind;
};

/// A function's scratch plan: its buffers, and where its scratch use peaks.
struct FunctionPlan {
  func::FuncOp function;
  std::vector<PlannedBuffer> buffers;
  std::vector<Operation *> ops; // the body, by index
  int64_t regionBytes = 0;
  int64_t peakIndex = 0; // the op where the buffers live at once reach the region's top
};

struct MemoryPlan {
  /// Persistent buffers by symbol: a parameter, its gradient, a state tensor.
  llvm::MapVector<StringAttr, int64_t> paramOffset, gradOffset, stateOffset;
  int64_t persistentBytes = 0;
  /// Arena offsets of the values of the planned functions (arguments excluded:
  /// the batch comes from the caller's buffers).
  DenseMap<Value, int64_t> valueOffset;
  /// Values in a function argument's buffer (the caller's): views of an argument, and values computed
  /// in the stash argument that keeps them (valuesComputedInStash, MemoryPlan.cpp).
  DenseMap<Value, BlockArgument> argumentOf;
  /// Largest scratch region any function needs, after `persistentBytes`.
  int64_t scratchBytes = 0;
  /// Persistent bytes by kind (Param, Grad, OptimizerState) in the arena.
  int64_t paramBytes = 0, gradBytes = 0, stateBytes = 0;
  /// Offload (zcc-offload): the states and parameter shards outside the arena (`stateOffset`,
  /// `paramOffset` are then offsets in their tier), each tier's size, and the NVMe swap slots
  /// at `swapOffset` of the arena: the update's, then the gathers' (zc.offload's slot ids).
  static constexpr int32_t kTierHost = 1, kTierNvme = 2; // zrt_tier
  llvm::DenseMap<StringAttr, int32_t> stateTier;
  int64_t hostTierBytes = 0, nvmeTierBytes = 0, offloadedStateBytes = 0, offloadedParamBytes = 0;
  int64_t swapOffset = 0, swapSlots = 0, swapSlotBytes = 0, paramSwapSlots = 0, paramSwapSlotBytes = 0;
  /// zcc-offload-activations: each zc.offload_activation slot's offset in the host tier.
  llvm::DenseMap<int64_t, int64_t> activationOffset;
  int64_t offloadedActivationBytes = 0;
  /// Where state or parameter `name` lives: 0 the arena, else its zrt_tier.
  int32_t tierOf(StringAttr name) const { return stateTier.lookup(name); }
  /// The arena offset of swap slot `slot`.
  int64_t slotOffset(int64_t slot) const {
    return slot < swapSlots ? swapOffset + slot * swapSlotBytes
                            : swapOffset + swapSlots * swapSlotBytes + (slot - swapSlots) * paramSwapSlotBytes;
  }
  std::vector<FunctionPlan> functions;
  /// The function whose scratch region is the largest (the arena's peak).
  const FunctionPlan *peakFunction() const;
  /// Live bytes by kind at op `index` of `fn` (persistent kinds included).
  std::map<BufferKind, int64_t> liveAt(const FunctionPlan &fn, int64_t index) const;
  /// The most scratch bytes of `kind` live at once in any one planned function (activations
  /// peak where the backward starts, not necessarily at the arena's peak). The arena holds at
  /// least this beside its persistent region.
  int64_t peakLiveBytes(BufferKind kind) const;
  int64_t totalBytes() const { return persistentBytes + scratchBytes; }
};

/// Plans `functions` (values defined by ops with results; arith.constant
/// excluded: constants are read-only globals). Fails on an op whose result
/// cannot be placed.
FailureOr<MemoryPlan> planMemory(ModuleOp module, ArrayRef<func::FuncOp> functions);

/// How long a pipeline stage holds its input `i` (an argument of each of its functions) for a
/// micro-batch: from the work that first writes it (F: the data, the activation received, what
/// the forward stashes; B: the output's gradient received, what B stashes for W) to the last that
/// reads it (W where the weight gradients read it, else B).
zcc::pipeline::Hold pipelineInputHold(ModuleOp module, unsigned i);

/// The buffers train.bin gives a pipeline stage's input `i` (zc.pipeline's held_slots of its
/// hold; micro-batch m uses buffer m mod that). 1 off a pipeline.
int64_t pipelineInputSlots(ModuleOp module, unsigned i);

/// A pipeline stage's input slots outside the arena (train.bin's buffers for the arguments of
/// each micro-batch in flight, the schedule's): the bytes of the step's arguments with
/// `zc.input` = `role` (every argument when empty), each times its buffers
/// (pipelineInputSlots). 0 off a pipeline.
int64_t pipelineSlotBytes(ModuleOp module, StringRef role = "");

/// --report's description of them (passes/PipelineInputs.cpp): each hold's buffers by
/// zcc::pipeline::holdName; each input's role, hold, buffers and bytes; and the text report's
/// " (buffers: a from F to B, b from F to W, ...)" for the holds the stage's inputs have.
llvm::json::Object pipelineHeldSlotsJson(ModuleOp module);
llvm::json::Array pipelineInputsJson(ModuleOp module);
std::string pipelineBuffersText(ModuleOp module);

} // namespace mlir::zc

#endif // ZCC_PASSES_MEMORYPLAN_H
