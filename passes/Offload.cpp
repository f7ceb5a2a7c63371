//===- Offload.cpp - optimizer state on host memory or NVMe ---------------===//
//
// ZeRO-Offload keeps the optimizer's fp32 state (moments, master weights) in
// host memory and runs the optimizer there; ZeRO-Infinity swaps it to NVMe.
// DeepSpeed reacts at run time (hooks, an I/O engine reading ahead of the
// optimizer's sub-groups); zcc knows the whole update ahead of time, so this pass
// writes the swap schedule into the update function:
//
//   for chunk j (in update order, over all parameters):
//     zc.swap_wait slot(j)                 // its states, read slots - 1 chunks ago
//     zc.adamw ... {chunk = [first, count], swap_slot = slot(j)}
//     zc.swap_out <its states>  slot(j)    // write-behind
//     zc.swap_wait slot(j + slots - 1)     // that slot's write, one update old
//     zc.swap_in <chunk j + slots - 1>     // read-ahead
//
// Each update op is replaced at its own place by its chunks (the swaps name states
// by symbol, so a read-ahead can name a later parameter's state anywhere), and
// everything else in the update function (gradient clears, ZeRO's parameter
// refresh) keeps its place and order.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCOFFLOAD
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

/// One chunk of one update op: its states, the elements, the slot it runs in.
struct Chunk {
  Operation *update;
  SmallVector<FlatSymbolRefAttr, 3> states; // in the slot's order
  int64_t first, count, slot;
};

/// The update op's states in their slot order (the lowering reads them in this order).
SmallVector<FlatSymbolRefAttr, 3> statesOf(Operation *op) {
  SmallVector<FlatSymbolRefAttr, 3> states;
  if (auto adamw = dyn_cast<AdamWOp>(op))
    states = {adamw.getExpAvgAttr(), adamw.getExpAvgSqAttr()};
  else
    states = {cast<SgdOp>(op).getMomentumBufferAttr()};
  FlatSymbolRefAttr master = isa<AdamWOp>(op) ? cast<AdamWOp>(op).getMasterAttr() : cast<SgdOp>(op).getMasterAttr();
  if (master)
    states.push_back(master);
  return states;
}

int64_t elementsOf(Operation *update) { return tensorOf(update->getOperand(0)).getNumElements(); }

struct ZccOffloadPass : zc::impl::ZccOffloadBase<ZccOffloadPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (optimizer == "none")
      return;
    if (optimizer != "host" && optimizer != "nvme") {
      module.emitError("zcc-offload: optimizer must be none, host or nvme, got '") << std::string(optimizer) << "'";
      return signalPassFailure();
    }
    Builder b(module.getContext());
    for (StateOp state : module.getOps<StateOp>())
      state->setAttr(Offload::kTier, b.getStringAttr(optimizer));
    if (optimizer == "host") {
      module->setAttr(Offload::kModule, b.getDictionaryAttr({b.getNamedAttr("tier", b.getStringAttr("host"))}));
      return;
    }

    if (slots < 2) {
      module.emitError("zcc-offload: NVMe swapping needs at least 2 slots (one updating, one reading ahead), got ")
          << static_cast<int64_t>(slots);
      return signalPassFailure();
    }
    func::FuncOp update = functionWithRole(module, "update");
    if (!update) {
      module.emitError("zcc-offload: no update function: run zcc-optimizer first");
      return signalPassFailure();
    }
    SmallVector<Operation *> updates;
    update.walk([&](Operation *op) {
      if (isa<AdamWOp, SgdOp>(op))
        updates.push_back(op);
    });

    // The chunks: as many elements as fit a slot with all of the op's states, in whole
    // store blocks.
    std::vector<Chunk> chunks;
    for (Operation *op : updates) {
      SmallVector<FlatSymbolRefAttr, 3> states = statesOf(op);
      const int64_t perElement = 4 * static_cast<int64_t>(states.size());
      const int64_t capacity =
          slotBytes / perElement / Offload::kSwapChunkElements * Offload::kSwapChunkElements;
      if (capacity < Offload::kSwapChunkElements) {
        op->emitOpError("zcc-offload: a swap slot of ")
            << static_cast<int64_t>(slotBytes) << " bytes cannot hold " << Offload::kSwapChunkElements << " elements of its "
            << states.size() << " states";
        return signalPassFailure();
      }
      const int64_t n = elementsOf(op);
      for (int64_t first = 0; first < n; first += capacity)
        chunks.push_back({op, states, first, std::min(capacity, n - first), 0});
    }
    // A slot is as large as the largest chunk needs (small models need less than slot-bytes).
    int64_t used = Offload::kStoreAlignment;
    for (size_t j = 0; j < chunks.size(); ++j) {
      chunks[j].slot = static_cast<int64_t>(j) % slots;
      used = std::max<int64_t>(used, chunks[j].states.size() * Offload::swapStateBytes(chunks[j].count));
    }
    module->setAttr(Offload::kModule,
                    b.getDictionaryAttr({b.getNamedAttr("tier", b.getStringAttr("nvme")),
                                         b.getNamedAttr("slots", b.getI64IntegerAttr(slots)),
                                         b.getNamedAttr("slot_bytes", b.getI64IntegerAttr(used)),
                                         b.getNamedAttr("nvme_path", b.getStringAttr(nvmePath))}));
    if (chunks.empty())
      return;

    auto swap = [&](OpBuilder &ob, Location loc, const Chunk &c, bool in) {
      int64_t at = 0;
      for (FlatSymbolRefAttr state : c.states) {
        if (in)
          SwapInOp::create(ob, loc, state, ob.getI64IntegerAttr(c.first), ob.getI64IntegerAttr(c.count),
                           ob.getI64IntegerAttr(c.slot), ob.getI64IntegerAttr(at));
        else
          SwapOutOp::create(ob, loc, state, ob.getI64IntegerAttr(c.first), ob.getI64IntegerAttr(c.count),
                            ob.getI64IntegerAttr(c.slot), ob.getI64IntegerAttr(at));
        at += Offload::swapStateBytes(c.count);
      }
    };
    // Prologue: the first slots - 1 chunks read ahead, before the first update.
    const int64_t ahead = slots - 1;
    {
      OpBuilder ob(updates.front());
      for (int64_t j = 0; j < std::min<int64_t>(ahead, chunks.size()); ++j)
        swap(ob, updates.front()->getLoc(), chunks[j], true);
    }
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Chunk &c = chunks[j];
      OpBuilder ob(c.update);
      Location loc = c.update->getLoc();
      SwapWaitOp::create(ob, loc, c.slot);
      Operation *chunkOp = ob.clone(*c.update);
      chunkOp->setAttr("chunk", b.getDenseI64ArrayAttr({c.first, c.count}));
      chunkOp->setAttr("swap_slot", b.getI64IntegerAttr(c.slot));
      swap(ob, loc, c, false);
      const size_t next = j + ahead;
      if (next < chunks.size()) {
        if (next >= static_cast<size_t>(slots)) // the slot's last write, issued one update ago
          SwapWaitOp::create(ob, loc, chunks[next].slot);
        swap(ob, loc, chunks[next], true);
      }
      const bool lastOfOp = j + 1 == chunks.size() || chunks[j + 1].update != c.update;
      if (lastOfOp)
        c.update->erase();
    }
    // Every write is on the store before the update function returns (a checkpoint, or the
    // next step's reads, may follow).
    Operation *terminator = update.getBody().front().getTerminator();
    OpBuilder ob(terminator);
    for (int64_t s = 0; s < std::min<int64_t>(slots, chunks.size()); ++s)
      SwapWaitOp::create(ob, terminator->getLoc(), s);
  }
};

} // namespace
