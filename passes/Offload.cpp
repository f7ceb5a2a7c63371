//===- Offload.cpp - optimizer state and parameters on host memory or NVMe -===//
//
// ZeRO-Offload keeps the optimizer's fp32 state (moments, master weights) in
// host memory and runs the optimizer there; ZeRO-Infinity swaps it, and the
// parameters' shards, to NVMe. DeepSpeed reacts at run time (hooks, an I/O engine
// reading ahead of the optimizer's sub-groups and of the parameters' fetches); zcc
// knows the whole step ahead of time, so this pass writes the swap schedule into it.
//
// The update (the optimizer state, and with `param` the parameters' shards):
//
//   for chunk j (in update order, over all parameters):
//     zc.swap_wait slot(j)                 // its tensors, read slots - 1 chunks ago
//     zc.adamw ... {chunk = [first, count], swap_slot = slot(j)}
//     zc.swap_out <its tensors> slot(j)    // write-behind
//     zc.swap_wait slot(j + slots - 1)     // that slot's write, one update old
//     zc.swap_in <chunk j + slots - 1>     // read-ahead
//
// Each update op is replaced at its own place by its chunks (the swaps name their
// tensors by symbol, so a read-ahead can name a later parameter's anywhere), and
// everything else in the update function keeps its place and order.
//
// The step (`param`, ZeRO-3): every zc.pack_shards, which packs this rank's shards for
// a parameter group's all-gather, reads them from a parameter slot instead of the
// arena; the slot is filled `param-slots - 1` gathers ahead (read-only: nothing is
// written back, and a slot is free again once its pack has copied it).
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

/// One transfer unit: the op that uses it, the elements, the slot it goes through.
struct Chunk {
  Operation *op;
  int64_t first, count, slot;
};

int64_t elementsOf(Operation *update) { return tensorOf(update->getOperand(0)).getNumElements(); }

/// The swaps of chunk `c` between its tensors' tier and its slot (whole tensors: count -1).
void swap(OpBuilder &ob, Location loc, const Chunk &c, bool in) {
  for (auto &[tensor, at] : Offload::slotLayout(c.op, c.count)) {
    const int64_t count = c.count >= 0 ? c.count : tensor.elements;
    auto i64 = [&](int64_t v) { return ob.getI64IntegerAttr(v); };
    if (in)
      SwapInOp::create(ob, loc, tensor.name, i64(c.first), i64(count), i64(c.slot), i64(at));
    else
      SwapOutOp::create(ob, loc, tensor.name, i64(c.first), i64(count), i64(c.slot), i64(at));
  }
}

/// The end of chunk `c`'s tensors in its slot.
int64_t slotEnd(const Chunk &c) {
  int64_t end = 0;
  for (auto &[tensor, at] : Offload::slotLayout(c.op, c.count))
    end = at + Offload::swapBytes(c.count >= 0 ? c.count : tensor.elements, tensor.elementBytes);
  return end;
}

struct ZccOffloadPass : zc::impl::ZccOffloadBase<ZccOffloadPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (optimizer == "none" && param == "none")
      return;
    for (const std::string &tier : {std::string(optimizer), std::string(param)})
      if (tier != "none" && tier != "host" && tier != "nvme") {
        module.emitError("zcc-offload: optimizer and param must be none, host or nvme, got '") << tier << "'";
        return signalPassFailure();
      }
    if (param != "none" && optimizer == "none") {
      // DeepSpeed too: offload_param needs offload_optimizer (a parameter's shard is updated
      // where its optimizer state is).
      module.emitError("zcc-offload: parameters offload with the optimizer state (--offload-optimizer)");
      return signalPassFailure();
    }
    Builder b(module.getContext());
    for (StateOp state : module.getOps<StateOp>())
      if (!state.getMaskKeepAttr()) // a pruning mask is read by the forward pass: it stays in the arena
        state->setAttr(Offload::kTier, b.getStringAttr(optimizer));
    // Parameters: the shards ZeRO-3 partitions (a parameter kept whole on every rank, under the
    // persistence threshold, stays in the arena: every step reads it).
    SmallVector<ParamOp> offloadedParams;
    if (param != "none") {
      for (ParamOp p : module.getOps<ParamOp>())
        if (ParamSharding::of(p).param) {
          p->setAttr(Offload::kTier, b.getStringAttr(param));
          offloadedParams.push_back(p);
        }
      if (offloadedParams.empty()) {
        module.emitError("zcc-offload: --offload-param moves ZeRO-3's parameter shards, and no parameter is "
                         "partitioned: use --zero-stage 3 over more than one data-parallel rank");
        return signalPassFailure();
      }
      if (failed(checkParamUsers(module, offloadedParams)))
        return signalPassFailure();
    }
    if (optimizer == "host" && param != "nvme") {
      module->setAttr(Offload::kModule, b.getDictionaryAttr({b.getNamedAttr("tier", b.getStringAttr("host"))}));
      return;
    }
    if (slots < 2 || paramSlots < 2) {
      module.emitError("zcc-offload: NVMe swapping needs at least 2 slots (one in use, one reading ahead), got ")
          << static_cast<int64_t>(slots) << " and " << static_cast<int64_t>(paramSlots);
      return signalPassFailure();
    }
    func::FuncOp update = functionWithRole(module, "update"), step = functionWithRole(module, "step");
    if (!update || !step) {
      module.emitError("zcc-offload: no step and update functions: run zcc-autodiff and zcc-optimizer first");
      return signalPassFailure();
    }
    int64_t updateSlotBytes = Offload::kStoreAlignment, paramSlotBytes = 0;
    if (optimizer == "nvme" || param == "nvme")
      if (failed(scheduleUpdate(update, updateSlotBytes)))
        return signalPassFailure();
    if (param == "nvme") {
      scheduleGathers(step, paramSlotBytes);
      for (func::FuncOp forward : forwardOnlyFunctions(module)) // the validation loss gathers too
        scheduleGathers(forward, paramSlotBytes);
    }
    SmallVector<NamedAttribute> record{b.getNamedAttr("tier", b.getStringAttr("nvme")),
                                       b.getNamedAttr("slots", b.getI64IntegerAttr(slots)),
                                       b.getNamedAttr("slot_bytes", b.getI64IntegerAttr(updateSlotBytes)),
                                       b.getNamedAttr("nvme_path", b.getStringAttr(nvmePath))};
    if (param == "nvme") {
      record.push_back(b.getNamedAttr("param_slots", b.getI64IntegerAttr(paramSlots)));
      record.push_back(b.getNamedAttr("param_slot_bytes", b.getI64IntegerAttr(paramSlotBytes)));
    }
    module->setAttr(Offload::kModule, b.getDictionaryAttr(record));
  }

  /// An offloaded parameter's stored shard is only read by the gathers' packs and written by
  /// its update; anything else reading it would read the arena where it no longer is.
  LogicalResult checkParamUsers(ModuleOp module, ArrayRef<ParamOp> params) {
    for (ParamOp p : params) {
      std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(p.getSymNameAttr(), module);
      for (const SymbolTable::SymbolUse &use : uses ? *uses : SymbolTable::UseRange({})) {
        Operation *user = use.getUser();
        if (isa<PackShardsOp, AdamWOp, SgdOp, GradAccumulateOp, GradRefOp, GradZeroOp, StateOp>(user))
          continue;
        return user->emitOpError("reads parameter ")
               << use.getSymbolRef() << " whose shard --offload-param moves off the arena; only ZeRO-3's gathers "
               << "(zc.pack_shards) and its update may";
      }
    }
    return success();
  }

  /// The update in chunks through the swap slots [0, slots) (see the file comment).
  LogicalResult scheduleUpdate(func::FuncOp update, int64_t &slotBytesUsed) {
    SmallVector<Operation *> updates;
    update.walk([&](Operation *op) {
      if (isa<AdamWOp, SgdOp>(op))
        updates.push_back(op);
    });
    // The chunks: as many elements as fit a slot with all of the op's tensors, starting where
    // every tensor's bytes are store-aligned.
    std::vector<Chunk> chunks;
    for (Operation *op : updates) {
      int64_t perElement = 0, granularity = 1;
      SmallVector<std::pair<Offload::Swapped, int64_t>> layout = Offload::slotLayout(op, 0);
      if (layout.empty())
        continue; // nothing of this parameter swaps (its state stays where it is)
      for (auto &[tensor, at] : layout) {
        perElement += tensor.elementBytes;
        granularity = std::max(granularity, Offload::kStoreAlignment / tensor.elementBytes);
      }
      const int64_t capacity = slotBytes / perElement / granularity * granularity;
      if (capacity < granularity) {
        op->emitOpError("zcc-offload: a swap slot of ")
            << static_cast<int64_t>(slotBytes) << " bytes cannot hold " << granularity << " elements of its "
            << layout.size() << " swapped tensors";
        return failure();
      }
      const int64_t n = elementsOf(op);
      for (int64_t first = 0; first < n; first += capacity)
        chunks.push_back({op, first, std::min(capacity, n - first), 0});
    }
    if (chunks.empty())
      return success();
    for (size_t j = 0; j < chunks.size(); ++j) {
      chunks[j].slot = static_cast<int64_t>(j) % slots;
      slotBytesUsed = std::max(slotBytesUsed, slotEnd(chunks[j]));
    }
    // Prologue: the first slots - 1 chunks read ahead, before the first update.
    const int64_t ahead = slots - 1;
    {
      OpBuilder ob(chunks.front().op);
      for (int64_t j = 0; j < std::min<int64_t>(ahead, chunks.size()); ++j)
        swap(ob, chunks.front().op->getLoc(), chunks[j], true);
    }
    Builder b(update.getContext());
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Chunk &c = chunks[j];
      OpBuilder ob(c.op);
      Location loc = c.op->getLoc();
      SwapWaitOp::create(ob, loc, c.slot);
      Operation *chunkOp = ob.clone(*c.op);
      chunkOp->setAttr("chunk", b.getDenseI64ArrayAttr({c.first, c.count}));
      chunkOp->setAttr("swap_slot", b.getI64IntegerAttr(c.slot));
      swap(ob, loc, c, false);
      const size_t next = j + ahead;
      if (next < chunks.size()) {
        if (next >= static_cast<size_t>(slots)) // the slot's last write, issued one update ago
          SwapWaitOp::create(ob, loc, chunks[next].slot);
        swap(ob, loc, chunks[next], true);
      }
      if (j + 1 == chunks.size() || chunks[j + 1].op != c.op)
        c.op->erase();
    }
    // Every write is on the store before the update function returns (a checkpoint, or the
    // next step's reads, may follow).
    Operation *terminator = update.getBody().front().getTerminator();
    OpBuilder ob(terminator);
    for (int64_t s = 0; s < std::min<int64_t>(slots, chunks.size()); ++s)
      SwapWaitOp::create(ob, terminator->getLoc(), s);
    return success();
  }

  /// Every gather's shards through the parameter slots [slots, slots + param-slots), read
  /// param-slots - 1 gathers ahead (see the file comment).
  void scheduleGathers(func::FuncOp step, int64_t &slotBytesUsed) {
    std::vector<Chunk> packs;
    step.walk([&](PackShardsOp pack) {
      if (Offload::tierOf(SymbolTable::lookupNearestSymbolFrom(pack, cast<FlatSymbolRefAttr>(pack.getParams()[0]))) ==
          "nvme")
        packs.push_back({pack, 0, -1, slots + static_cast<int64_t>(packs.size()) % paramSlots});
    });
    if (packs.empty())
      return;
    Builder b(step.getContext());
    const int64_t ahead = paramSlots - 1;
    {
      OpBuilder ob = OpBuilder::atBlockBegin(&step.getBody().front());
      for (int64_t j = 0; j < std::min<int64_t>(ahead, packs.size()); ++j)
        swap(ob, packs.front().op->getLoc(), packs[j], true);
    }
    for (size_t j = 0; j < packs.size(); ++j) {
      const Chunk &c = packs[j];
      slotBytesUsed = std::max(slotBytesUsed, slotEnd(c));
      OpBuilder ob(c.op);
      SwapWaitOp::create(ob, c.op->getLoc(), c.slot);
      c.op->setAttr("swap_slot", b.getI64IntegerAttr(c.slot));
      // The pack copied the slot: it is free for the gather `ahead` further on.
      ob.setInsertionPointAfter(c.op);
      if (j + ahead < packs.size())
        swap(ob, c.op->getLoc(), packs[j + ahead], true);
    }
  }
};

} // namespace
