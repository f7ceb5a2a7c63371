//===- ZcOffloadOps.cpp - checks of the swap schedule's ops ---------------===//
//
// A swap names an NVMe-resident state and a range of it: the range must be inside
// the state and aligned as the store needs, and the bytes must fit the slot the
// module's zc.offload declares.

#include "dialects/zc/ZcDialect.h"
#include "dialects/zc/ZcVerifyUtils.h"

using namespace mlir;
using namespace mlir::zc;

namespace {
/// The module's swap slots: {slots, slot_bytes}; null when it declares none.
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
  if (slot < 0 || slot >= slots.getInt())
    return op->emitOpError() << "slot " << slot << " is outside the module's " << slots.getInt() << " swap slots";
  if (end > bytes.getInt())
    return op->emitOpError() << "ends at byte " << end << " of its slot, past the slot's " << bytes.getInt();
  return success();
}

LogicalResult verifySwap(Operation *op, FlatSymbolRefAttr name, int64_t first, int64_t count, int64_t slot,
                         int64_t at, SymbolTableCollection &symbolTable) {
  auto state = symbolTable.lookupNearestSymbolFrom<StateOp>(op, name);
  if (!state)
    return op->emitOpError() << "'" << name << "' does not name a zc.state";
  if (Offload::tierOf(state) != "nvme")
    return op->emitOpError() << "state " << name << " is not on the NVMe tier (zc.tier = \"nvme\")";
  const int64_t elements = state.getTensorType().getNumElements();
  if (first < 0 || count < 1 || first + count > elements)
    return op->emitOpError() << "elements [" << first << ", " << first + count << ") are outside " << name
                             << "'s " << elements;
  if (first % Offload::kSwapChunkElements != 0 || at % Offload::kStoreAlignment != 0)
    return op->emitOpError() << "first (" << first << ") must be a multiple of " << Offload::kSwapChunkElements
                             << " and at (" << at << ") of " << Offload::kStoreAlignment << " (O_DIRECT)";
  return verifySlot(op, slot, at + Offload::swapStateBytes(count));
}
} // namespace

LogicalResult SwapInOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifySwap(*this, getStateAttr(), getFirst(), getCount(), getSlot(), getAt(), symbolTable);
}

LogicalResult SwapOutOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifySwap(*this, getStateAttr(), getFirst(), getCount(), getSlot(), getAt(), symbolTable);
}

LogicalResult SwapWaitOp::verify() { return verifySlot(*this, getSlot(), 0); }

LogicalResult mlir::zc::detail::verifyUpdateOffload(Operation *op, ArrayRef<FlatSymbolRefAttr> states,
                                            RankedTensorType grad, DenseI64ArrayAttr chunk, IntegerAttr slot,
                                            SymbolTableCollection &symbolTable) {
  int64_t count = grad.getNumElements();
  if (chunk) {
    if (chunk.size() != 2 || chunk[0] < 0 || chunk[1] < 1 || chunk[0] + chunk[1] > grad.getNumElements())
      return op->emitOpError() << "chunk must be [first, count] inside the " << grad.getNumElements()
                               << " elements";
    count = chunk[1];
  }
  if (slot && !chunk)
    return op->emitOpError("swap_slot needs a chunk = [first, count]");
  for (FlatSymbolRefAttr name : states) {
    if (!name)
      continue;
    auto state = symbolTable.lookupNearestSymbolFrom<StateOp>(op, name);
    if (state && Offload::tierOf(state) == "nvme" && !slot)
      return op->emitOpError() << "state " << name << " is on the NVMe tier: the update reads it from a swap slot "
                               << "(swap_slot)";
    if (state && slot && Offload::tierOf(state) != "nvme")
      return op->emitOpError() << "swap_slot: state " << name << " is not on the NVMe tier";
  }
  if (slot) {
    int64_t used = 0;
    for (FlatSymbolRefAttr name : states)
      used += name ? Offload::swapStateBytes(count) : 0;
    return verifySlot(op, slot.getInt(), used);
  }
  return success();
}
