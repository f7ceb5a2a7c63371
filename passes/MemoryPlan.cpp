//===- MemoryPlan.cpp - arena offsets from live ranges --------------------===//

#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include <algorithm>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::zc;

int64_t mlir::zc::tensorBytes(RankedTensorType type) {
  return type.getNumElements() * (type.getElementTypeBitWidth() / 8);
}

namespace {
int64_t aligned(int64_t bytes) { return llvm::alignTo(bytes, kArenaAlignment); }

/// A buffer of the scratch region: its bytes and the op indices it lives over.
struct Interval {
  Value root;
  int64_t bytes, start, end, offset = -1;
};

/// First fit: the lowest offset where `bytes` fit between the buffers live now
/// (sorted by offset).
int64_t firstFit(const std::vector<Interval *> &live, int64_t bytes) {
  int64_t candidate = 0;
  for (Interval *other : live) {
    if (other->offset >= candidate + bytes)
      break;
    candidate = std::max(candidate, other->offset + aligned(other->bytes));
  }
  return candidate;
}

/// A collective over the tensor-parallel group.
bool onTensorAxis(Operation *def) {
  if (auto o = dyn_cast_or_null<AllReduceOp>(def))
    return o.getAxis() == MeshAxis::tensor;
  if (auto o = dyn_cast_or_null<AllReduceStartOp>(def))
    return o.getAxis() == MeshAxis::tensor;
  if (auto o = dyn_cast_or_null<AllGatherOp>(def))
    return o.getAxis() == MeshAxis::tensor;
  if (auto o = dyn_cast_or_null<ReduceScatterOp>(def))
    return o.getAxis() == MeshAxis::tensor;
  return false;
}

/// Whether `v` carries gathered parameter values (ZeRO-3's whole parameters, or
/// the gathered bucket they are unpacked from).
bool isGathered(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto wait = dyn_cast_or_null<WaitOp>(def))
    def = wait.getHandle().getDefiningOp();
  if (auto gather = dyn_cast_or_null<AllGatherOp>(def); gather && gather.getAxis() == MeshAxis::tensor)
    return false; // sequence parallelism's tokens
  if (isa_and_nonnull<GatherParamOp, AllGatherOp, AllGatherStartOp>(def))
    return true;
  if (auto dequantize = dyn_cast_or_null<DequantizeOp>(def)) // qwZ's gathered levels, as values
    return isGathered(dequantize.getInput());
  if (auto reshape = dyn_cast_or_null<ReshapeOp>(def))
    return isGathered(reshape.getInput());
  if (auto unpack = dyn_cast_or_null<UnpackOp>(def))
    return isGathered(unpack.getInput());
  return false;
}

} // namespace

BufferKind mlir::zc::bufferKindOf(Value v) {
  if (isGathered(v))
    return BufferKind::GatheredParam;
  Operation *def = v.getDefiningOp();
  if (auto wait = dyn_cast_or_null<WaitOp>(def))
    def = wait.getHandle().getDefiningOp();
  // The tensor axis' collectives carry the forward's and backward's activations (a region's
  // sum, the gathered or scattered tokens), kept for the backward like any other.
  if (onTensorAxis(def))
    return BufferKind::Activation;
  if (isa_and_nonnull<PackOp, PackShardsOp, UnpackOp, ReduceScatterOp, AllReduceOp, ReduceScatterStartOp,
                      AllReduceStartOp, AllToAllOp, AllToAllStartOp, QuantizeOp>(def))
    return BufferKind::Communication;
  return BufferKind::Activation;
}

namespace {

/// Gradients their op can write straight into the parameter's gradient buffer: read only by
/// an overwriting zc.grad_accumulate (one micro-batch a step) and exactly the buffer's type,
/// computed by a kernel (not a view, a reference or a collective's buffer). The accumulate
/// then has nothing to do: no scratch buffer, no copy.
DenseMap<Value, StringAttr> gradientsWrittenInPlace(Block &body, ModuleOp module) {
  DenseMap<Value, StringAttr> inPlace;
  for (auto acc : body.getOps<GradAccumulateOp>()) {
    Value grad = acc.getGrad();
    Operation *def = grad.getDefiningOp();
    if (!acc.getOverwrite() || !def || def->getBlock() != &body || !grad.hasOneUse() ||
        isa<ReshapeOp, ParamRefOp, GradRefOp, arith::ConstantOp>(def) || bufferKindOf(grad) != BufferKind::Activation)
      continue;
    auto param = SymbolTable::lookupSymbolIn(module, acc.getParamAttr().getAttr());
    auto paramOp = dyn_cast_or_null<ParamOp>(param);
    if (!paramOp)
      continue;
    RankedTensorType type = tensorOf(grad);
    if (type.getElementType() != paramOp.getTensorType().getElementType() ||
        type.getNumElements() != ParamSharding::of(paramOp).gradStorage())
      continue;
    inPlace[grad] = acc.getParamAttr().getAttr();
  }
  return inPlace;
}

/// Values a pipeline stage keeps for a later call of the micro-batch (zc.pipe_stash into a
/// stash argument: F's kept activations, B's output gradients for W) that their op can compute
/// in the micro-batch's slot itself: the value (or the value a reshape views) is computed by a
/// kernel in this body (not a view, a reference, a collective's awaited buffer), stashed once,
/// into an argument nothing else here reads or writes. The stash then has nothing to copy, and
/// the value takes no scratch. Before, every kept value was computed in the arena and copied
/// into its slot: 55 copies per micro-batch at a zero-bubble stage of an 8-layer GPT.
DenseMap<Value, BlockArgument> valuesComputedInStash(Block &body) {
  auto rootOf = [](Value v) {
    while (auto view = v.getDefiningOp<ReshapeOp>())
      v = view.getInput();
    return v;
  };
  DenseMap<Value, int> stashes; // how many stashes read each root
  for (auto stash : body.getOps<PipeStashOp>())
    ++stashes[rootOf(stash.getValue())];
  DenseMap<Value, BlockArgument> inStash;
  for (auto stash : body.getOps<PipeStashOp>()) {
    Value root = rootOf(stash.getValue());
    Operation *def = root.getDefiningOp();
    auto arg = dyn_cast<BlockArgument>(stash.getStash());
    if (!arg || arg.getOwner() != &body || !arg.hasOneUse() || !def || def->getBlock() != &body ||
        stashes[root] != 1 || isa<ParamRefOp, GradRefOp, WaitOp, arith::ConstantOp>(def) ||
        bufferKindOf(root) != BufferKind::Activation || tensorBytes(tensorOf(root)) != tensorBytes(tensorOf(arg)))
      continue;
    inStash[root] = arg;
  }
  return inStash;
}

/// Plans one function's scratch values; returns the region size it needs.
FailureOr<int64_t> planFunction(func::FuncOp fn, MemoryPlan &plan) {
  Block &body = fn.getBody().front();
  DenseMap<Value, StringAttr> gradientInPlace =
      gradientsWrittenInPlace(body, fn->getParentOfType<ModuleOp>());
  DenseMap<Value, BlockArgument> computedInStash = valuesComputedInStash(body);
  DenseMap<Value, Value> rootOf;            // view -> the value owning the bytes
  DenseMap<Value, int64_t> persistentOf;    // reference -> its persistent offset
  llvm::MapVector<Value, Interval> intervals;
  // Async collectives: the transfer reads its input and writes the awaited
  // result between the start and the wait, so the input lives until the wait
  // and the result from the start.
  DenseMap<Value, std::pair<int64_t, Value>> started; // handle -> (start index, input root)
  int64_t index = 0;
  for (Operation &op : body) {
    for (Value operand : op.getOperands()) {
      Value root = rootOf.lookup(operand);
      if (!root)
        root = operand;
      auto it = intervals.find(root);
      if (it != intervals.end())
        it->second.end = index;
    }
    if (isCollectiveStart(&op)) {
      Value input = op.getOperand(0);
      Value root = rootOf.lookup(input) ? rootOf.lookup(input) : input;
      started[op.getResult(0)] = {index, root};
      ++index;
      continue;
    }
    if (auto wait = dyn_cast<WaitOp>(op)) {
      auto [startIndex, inputRoot] = started.lookup(wait.getHandle());
      auto it = intervals.find(inputRoot);
      if (it != intervals.end())
        it->second.end = std::max(it->second.end, index);
      intervals[wait.getResult()] = Interval{wait.getResult(), tensorBytes(tensorOf(wait.getResult())),
                                             startIndex, index};
      ++index;
      continue;
    }
    if (auto ref = dyn_cast<ParamRefOp>(op)) {
      persistentOf[ref.getResult()] = plan.paramOffset.lookup(ref.getNameAttr().getAttr());
    } else if (auto ref = dyn_cast<GradRefOp>(op)) {
      persistentOf[ref.getResult()] = plan.gradOffset.lookup(ref.getParamAttr().getAttr());
    } else if (auto view = dyn_cast<ReshapeOp>(op)) {
      Value input = view.getInput();
      if (persistentOf.count(input))
        persistentOf[view.getResult()] = persistentOf[input];
      else if (auto arg = dyn_cast<BlockArgument>(input))
        plan.argumentOf[view.getResult()] = arg;
      else if (plan.argumentOf.count(input))
        plan.argumentOf[view.getResult()] = plan.argumentOf.lookup(input);
      else
        rootOf[view.getResult()] = rootOf.lookup(input) ? rootOf.lookup(input) : input;
    } else if (!isa<arith::ConstantOp>(op)) {
      for (Value result : op.getResults()) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (!type)
          return op.emitOpError("has a result the memory planner cannot place: ")
                 << result.getType();
        if (StringAttr param = gradientInPlace.lookup(result)) {
          persistentOf[result] = plan.gradOffset.lookup(param);
          continue;
        }
        if (BlockArgument stash = computedInStash.lookup(result)) {
          plan.argumentOf[result] = stash;
          continue;
        }
        if (isa<GroupedMatmulGradOp>(op) && result.use_empty()) // not computed: no buffer (groupedGradProducts)
          continue;
        int64_t bytes = tensorBytes(type);
        if (auto gather = dyn_cast<GatherParamOp>(op)) // the gathered shards, padding included
          bytes = ParamSharding::of(SymbolTable::lookupNearestSymbolFrom<ParamOp>(
                                        gather, gather.getParamAttr()))
                      .paddedElements() *
                  (type.getElementTypeBitWidth() / 8);
        intervals[result] = Interval{result, bytes, index, index};
      }
    }
    ++index;
  }

  // Linear scan in order of first liveness (an awaited result starts at its
  // collective's start, before values defined in between).
  std::vector<Interval *> byStart;
  for (auto &entry : intervals)
    byStart.push_back(&entry.second);
  llvm::stable_sort(byStart, [](Interval *a, Interval *b) { return a->start < b->start; });
  std::vector<Interval *> live; // sorted by offset
  int64_t regionBytes = 0;
  for (Interval *interval : byStart) {
    Interval &current = *interval;
    llvm::erase_if(live, [&](Interval *other) { return other->end < current.start; });
    current.offset = firstFit(live, current.bytes);
    live.insert(llvm::upper_bound(live, current.offset,
                                  [](int64_t offset, Interval *other) {
                                    return offset < other->offset;
                                  }),
                &current);
    regionBytes = std::max(regionBytes, current.offset + aligned(current.bytes));
  }

  FunctionPlan record;
  record.function = fn;
  record.regionBytes = regionBytes;
  for (Operation &op : body)
    record.ops.push_back(&op);
  int64_t peakTop = -1;
  for (auto &entry : intervals) {
    const Interval &i = entry.second;
    Operation *definer = record.ops[i.start];
    record.buffers.push_back({entry.first, definer, i.bytes, i.start, i.end, i.offset, bufferKindOf(entry.first)});
    // The peak: where the buffer reaching the region's top starts.
    if (i.offset + aligned(i.bytes) > peakTop) {
      peakTop = i.offset + aligned(i.bytes);
      record.peakIndex = i.start;
    }
  }
  plan.functions.push_back(std::move(record));

  for (auto &entry : intervals)
    plan.valueOffset[entry.first] = plan.persistentBytes + entry.second.offset;
  for (auto &[view, root] : rootOf)
    plan.valueOffset[view] = plan.valueOffset.lookup(root);
  for (auto &[ref, offset] : persistentOf)
    plan.valueOffset[ref] = offset;
  return regionBytes;
}
} // namespace

FailureOr<MemoryPlan> mlir::zc::planMemory(ModuleOp module, ArrayRef<func::FuncOp> functions) {
  MemoryPlan plan;
  int64_t offset = 0;
  auto place = [&](int64_t bytes) {
    int64_t at = offset;
    offset += aligned(bytes);
    return at;
  };
  // ZeRO: a shard, or the whole tensor padded to whole shards (ParamSharding).
  auto elementBytes = [](ParamOp param) { return param.getTensorType().getElementTypeBitWidth() / 8; };
  // A parameter offloaded (zcc-offload: ZeRO-3's shards) is laid out in its tier, like an
  // offloaded state below.
  auto placeInTier = [&](Operation *symbol, StringAttr name, int64_t elements, int64_t elementBytes) {
    StringRef tier = Offload::tierOf(symbol);
    int64_t &end = tier == "host" ? plan.hostTierBytes : plan.nvmeTierBytes;
    plan.stateTier[name] = tier == "host" ? MemoryPlan::kTierHost : MemoryPlan::kTierNvme;
    const int64_t at = end;
    end += Offload::swapBytes(elements, elementBytes);
    return at;
  };
  for (ParamOp param : module.getOps<ParamOp>()) {
    int64_t bytes = ParamSharding::of(param).paramStorage() * elementBytes(param);
    if (!Offload::tierOf(param).empty()) {
      plan.paramOffset[param.getSymNameAttr()] = placeInTier(param, param.getSymNameAttr(),
                                                             ParamSharding::of(param).paramStorage(), elementBytes(param));
      plan.offloadedParamBytes += bytes;
      continue;
    }
    plan.paramOffset[param.getSymNameAttr()] = place(bytes);
    plan.paramBytes += bytes;
  }
  for (ParamOp param : module.getOps<ParamOp>()) {
    int64_t bytes = ParamSharding::of(param).gradStorage() * elementBytes(param);
    plan.gradOffset[param.getSymNameAttr()] = place(bytes);
    plan.gradBytes += bytes;
  }
  // Optimizer state: in the arena, or laid out in its tier (zcc-offload) at the NVMe store's
  // alignment, each tensor padded to whole blocks so a chunk's swap never reads another's bytes.
  for (StateOp state : module.getOps<StateOp>()) {
    const int64_t bytes = tensorBytes(state.getTensorType());
    if (Offload::tierOf(state).empty()) {
      plan.stateOffset[state.getSymNameAttr()] = place(bytes);
      plan.stateBytes += bytes;
      continue;
    }
    plan.stateOffset[state.getSymNameAttr()] =
        placeInTier(state, state.getSymNameAttr(), state.getTensorType().getNumElements(), 4);
    plan.offloadedStateBytes += bytes;
  }
  // The NVMe swap slots: persistent (the update's working set), at the store's alignment.
  if (auto offload = module->getAttrOfType<DictionaryAttr>(Offload::kModule))
    if (auto slots = offload.getAs<IntegerAttr>("slots")) {
      offset = llvm::alignTo(offset, Offload::kStoreAlignment);
      plan.swapOffset = offset;
      plan.swapSlots = slots.getInt();
      plan.swapSlotBytes = offload.getAs<IntegerAttr>("slot_bytes").getInt();
      if (auto paramSlots = offload.getAs<IntegerAttr>("param_slots")) {
        plan.paramSwapSlots = paramSlots.getInt();
        plan.paramSwapSlotBytes = offload.getAs<IntegerAttr>("param_slot_bytes").getInt();
      }
      offset += plan.swapSlots * plan.swapSlotBytes + plan.paramSwapSlots * plan.paramSwapSlotBytes;
    }
  // Activations kept in host memory between the passes (zcc-offload-activations): one place
  // each in the host tier, after the states and shards.
  for (func::FuncOp fn : functions)
    fn.walk([&](OffloadActivationOp offload) {
      const int64_t bytes = tensorBytes(tensorOf(offload.getValue()));
      plan.activationOffset[offload.getSlot()] = plan.hostTierBytes;
      plan.hostTierBytes += llvm::alignTo(bytes, Offload::kStoreAlignment);
      plan.offloadedActivationBytes += bytes;
    });
  plan.persistentBytes = offset;
  for (func::FuncOp fn : functions) {
    FailureOr<int64_t> scratch = planFunction(fn, plan);
    if (failed(scratch))
      return failure();
    plan.scratchBytes = std::max(plan.scratchBytes, *scratch);
  }
  return plan;
}

StringRef mlir::zc::bufferKindName(BufferKind kind) {
  switch (kind) {
  case BufferKind::Param: return "params";
  case BufferKind::Grad: return "grads";
  case BufferKind::OptimizerState: return "optimizer_state";
  case BufferKind::GatheredParam: return "gathered_params";
  case BufferKind::Communication: return "communication_buffers";
  case BufferKind::Activation: return "activations";
  }
  return "?";
}

const FunctionPlan *MemoryPlan::peakFunction() const {
  const FunctionPlan *peak = nullptr;
  for (const FunctionPlan &fn : functions)
    if (!peak || fn.regionBytes > peak->regionBytes)
      peak = &fn;
  return peak;
}

int64_t MemoryPlan::peakLiveBytes(BufferKind kind) const {
  int64_t peak = 0;
  for (const FunctionPlan &fn : functions) {
    // A sweep over the buffers' live ranges: + at the first op, - after the last.
    std::vector<std::pair<int64_t, int64_t>> changes;
    for (const PlannedBuffer &b : fn.buffers)
      if (b.kind == kind) {
        changes.push_back({b.start, b.bytes});
        changes.push_back({b.end + 1, -b.bytes});
      }
    std::sort(changes.begin(), changes.end()); // at one index the ends (-) come before the starts
    int64_t live = 0;
    for (auto [index, delta] : changes) {
      live += delta;
      peak = std::max(peak, live);
    }
  }
  return peak;
}

std::map<BufferKind, int64_t> MemoryPlan::liveAt(const FunctionPlan &fn, int64_t index) const {
  std::map<BufferKind, int64_t> live{{BufferKind::Param, paramBytes + paramSwapSlots * paramSwapSlotBytes},
                                     {BufferKind::Grad, gradBytes},
                                     {BufferKind::OptimizerState, stateBytes + swapSlots * swapSlotBytes},
                                     {BufferKind::GatheredParam, 0},
                                     {BufferKind::Communication, 0},
                                     {BufferKind::Activation, 0}};
  for (const PlannedBuffer &b : fn.buffers)
    if (b.start <= index && index <= b.end)
      live[b.kind] += b.bytes;
  return live;
}
