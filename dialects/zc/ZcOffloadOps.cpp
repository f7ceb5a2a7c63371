//===- ZcOffloadOps.cpp - checks of the swap schedule's ops ---------------===//
//
// A swap names an NVMe-resident state (or a parameter's stored shard) and a range
// of it: the range must be inside the tensor and aligned as the store needs, and
// the bytes must fit the slot the module's zc.offload declares. The layout of a
// slot (what an update or a gather reads where) is defined once, here, for the
// pass that writes the swaps and the lowering that reads the slot.

#include "dialects/zc/ZcDialect.h"
#include "dialects/zc/ZcVerifyUtils.h"

using namespace mlir;
using namespace mlir::zc;

std::optional<Offload::Swapped> Offload::lookup(Operation *user, FlatSymbolRefAttr name) {
  Operation *symbol = SymbolTable::lookupNearestSymbolFrom(user, name);
  if (auto state = dyn_cast_or_null<StateOp>(symbol))
    return Swapped{name, state.getTensorType().getNumElements(), 4};
  if (auto param = dyn_cast_or_null<ParamOp>(symbol))
    return Swapped{name, ParamSharding::of(param).paramStorage(),
                   param.getTensorType().getElementTypeBitWidth() / 8};
  return std::nullopt;
}

SmallVector<std::pair<Offload::Swapped, int64_t>> Offload::slotLayout(Operation *op) {
  auto chunk = op->getAttrOfType<DenseI64ArrayAttr>("chunk");
  return slotLayout(op, chunk ? chunk[1] : -1); // an update's chunk; -1: each whole (a gather's shards)
}

SmallVector<std::pair<Offload::Swapped, int64_t>> Offload::slotLayout(Operation *op, int64_t count) {
  SmallVector<FlatSymbolRefAttr> names;
  auto paramOnNvme = [&](FlatSymbolRefAttr param) {
    Operation *symbol = SymbolTable::lookupNearestSymbolFrom(op, param);
    return symbol && tierOf(symbol) == "nvme";
  };
  if (auto adamw = dyn_cast<AdamWOp>(op)) {
    names = {adamw.getExpAvgAttr(), adamw.getExpAvgSqAttr()};
    if (adamw.getMasterAttr())
      names.push_back(adamw.getMasterAttr());
    if (paramOnNvme(adamw.getParamAttr()))
      names.push_back(adamw.getParamAttr());
  } else if (auto sgd = dyn_cast<SgdOp>(op)) {
    names = {sgd.getMomentumBufferAttr()};
    if (sgd.getMasterAttr())
      names.push_back(sgd.getMasterAttr());
    if (paramOnNvme(sgd.getParamAttr()))
      names.push_back(sgd.getParamAttr());
  } else if (auto pack = dyn_cast<PackShardsOp>(op)) {
    for (Attribute name : pack.getParams())
      names.push_back(cast<FlatSymbolRefAttr>(name));
  }
  SmallVector<std::pair<Swapped, int64_t>> layout;
  int64_t at = 0;
  for (FlatSymbolRefAttr name : names) {
    std::optional<Swapped> swapped = lookup(op, name);
    // Only what lives on the NVMe store goes through a slot (host-tier states are used in place).
    if (!swapped || tierOf(SymbolTable::lookupNearestSymbolFrom(op, name)) != "nvme")
      continue;
    layout.push_back({*swapped, at});
    at += swapBytes(count >= 0 ? count : swapped->elements, swapped->elementBytes);
  }
  return layout;
}

namespace {
/// The module's swap slots: {slots, slot_bytes, param_slots, param_slot_bytes}; null when it
/// declares none.
DictionaryAttr offloadOf(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  return module ? module->getAttrOfType<DictionaryAttr>(Offload::kModule) : DictionaryAttr();
}

LogicalResult verifySlot(Operation *op, int64_t slot, int64_t end) {
  DictionaryAttr offload = offloadOf(op);
  if (!offload)
    return op->emitOpError("needs the module's zc.offload = {slots, slot_bytes}");
  auto slots = offload.getAs<IntegerAttr>("slots");
  auto bytes = offload.getAs<IntegerAttr>("slot_bytes");
  if (!slots || !bytes)
    return op->emitOpError("zc.offload needs integer 'slots' and 'slot_bytes'");
  auto paramSlots = offload.getAs<IntegerAttr>("param_slots");
  auto paramBytes = offload.getAs<IntegerAttr>("param_slot_bytes");
  const int64_t all = slots.getInt() + (paramSlots ? paramSlots.getInt() : 0);
  if (slot < 0 || slot >= all)
    return op->emitOpError() << "slot " << slot << " is outside the module's " << all << " swap slots";
  const int64_t capacity = slot < slots.getInt() ? bytes.getInt() : paramBytes ? paramBytes.getInt() : 0;
  if (end > capacity)
    return op->emitOpError() << "ends at byte " << end << " of its slot, past the slot's " << capacity;
  return success();
}

LogicalResult verifySwap(Operation *op, FlatSymbolRefAttr name, int64_t first, int64_t count, int64_t slot,
                         int64_t at) {
  Operation *symbol = SymbolTable::lookupNearestSymbolFrom(op, name);
  std::optional<Offload::Swapped> swapped = Offload::lookup(op, name);
  if (!symbol || !swapped)
    return op->emitOpError() << "'" << name << "' does not name a zc.state or a zc.param";
  if (Offload::tierOf(symbol) != "nvme")
    return op->emitOpError() << name << " is not on the NVMe tier (zc.tier = \"nvme\")";
  if (first < 0 || count < 1 || first + count > swapped->elements)
    return op->emitOpError() << "elements [" << first << ", " << first + count << ") are outside " << name
                             << "'s " << swapped->elements;
  if ((first * swapped->elementBytes) % Offload::kStoreAlignment != 0 || at % Offload::kStoreAlignment != 0)
    return op->emitOpError() << "first (" << first << ") x " << swapped->elementBytes << " bytes and at (" << at
                             << ") must be multiples of " << Offload::kStoreAlignment << " (O_DIRECT)";
  return verifySlot(op, slot, at + Offload::swapBytes(count, swapped->elementBytes));
}
} // namespace

LogicalResult SwapInOp::verifySymbolUses(SymbolTableCollection &) {
  return verifySwap(*this, getStateAttr(), getFirst(), getCount(), getSlot(), getAt());
}

LogicalResult SwapOutOp::verifySymbolUses(SymbolTableCollection &) {
  return verifySwap(*this, getStateAttr(), getFirst(), getCount(), getSlot(), getAt());
}

LogicalResult SwapWaitOp::verify() { return verifySlot(*this, getSlot(), 0); }

LogicalResult mlir::zc::detail::verifyUpdateOffload(Operation *op, ArrayRef<FlatSymbolRefAttr> states,
                                                    RankedTensorType grad, DenseI64ArrayAttr chunk,
                                                    IntegerAttr slot, SymbolTableCollection &symbolTable) {
  if (chunk && (chunk.size() != 2 || chunk[0] < 0 || chunk[1] < 1 || chunk[0] + chunk[1] > grad.getNumElements()))
    return op->emitOpError() << "chunk must be [first, count] inside the " << grad.getNumElements() << " elements";
  if (slot && !chunk)
    return op->emitOpError("swap_slot needs a chunk = [first, count]");
  for (FlatSymbolRefAttr name : states) {
    if (!name)
      continue;
    Operation *symbol = symbolTable.lookupNearestSymbolFrom(op, name); // cached: one update per tensor
    if (symbol && Offload::tierOf(symbol) == "nvme" && !slot)
      return op->emitOpError() << (isa<ParamOp>(symbol) ? "parameter " : "state ") << name
                               << " is on the NVMe tier: the update reads it from a swap slot (swap_slot)";
  }
  if (!slot)
    return success();
  SmallVector<std::pair<Offload::Swapped, int64_t>> layout = Offload::slotLayout(op);
  if (layout.empty())
    return op->emitOpError("swap_slot: nothing this update reads is on the NVMe tier");
  int64_t end = 0;
  for (auto &[swapped, at] : layout)
    end = at + Offload::swapBytes(chunk[1], swapped.elementBytes);
  return verifySlot(op, slot.getInt(), end);
}

LogicalResult mlir::zc::detail::verifyPackSlot(PackShardsOp op) {
  IntegerAttr slot = op->getAttrOfType<IntegerAttr>("swap_slot");
  for (Attribute name : op.getParams()) {
    Operation *symbol = SymbolTable::lookupNearestSymbolFrom(op, cast<FlatSymbolRefAttr>(name));
    if (symbol && Offload::tierOf(symbol) == "nvme" && !slot)
      return op->emitOpError() << "parameter " << name
                               << " is on the NVMe tier: its shard is gathered from a swap slot (swap_slot)";
  }
  if (!slot)
    return success();
  for (Attribute name : op.getParams())
    if (Offload::tierOf(SymbolTable::lookupNearestSymbolFrom(op, cast<FlatSymbolRefAttr>(name))) != "nvme")
      return op->emitOpError() << "swap_slot: parameter " << name << " is not on the NVMe tier";
  int64_t end = 0;
  for (auto &[swapped, at] : Offload::slotLayout(op))
    end = at + Offload::swapBytes(swapped.elements, swapped.elementBytes);
  return verifySlot(op, slot.getInt(), end);
}

LogicalResult OffloadActivationOp::verify() {
  if (getSlot() < 0)
    return emitOpError() << "slot must be non-negative, got " << getSlot();
  for (Operation *other = getOperation()->getPrevNode(); other; other = other->getPrevNode())
    if (auto earlier = dyn_cast<OffloadActivationOp>(other); earlier && earlier.getSlot() == getSlot())
      return emitOpError() << "slot " << getSlot() << " is already used by an earlier zc.offload_activation";
  return success();
}

LogicalResult ReloadActivationOp::verify() {
  for (Operation *other = getOperation()->getPrevNode(); other; other = other->getPrevNode())
    if (auto offload = dyn_cast<OffloadActivationOp>(other); offload && offload.getSlot() == getSlot()) {
      if (offload.getValue().getType() != getResult().getType())
        return emitOpError() << "reloads slot " << getSlot() << " as " << getResult().getType()
                             << " but it holds " << offload.getValue().getType();
      return success();
    }
  return emitOpError() << "slot " << getSlot() << " has no zc.offload_activation before it in its block";
}
