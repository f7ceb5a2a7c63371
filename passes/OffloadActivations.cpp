//===- OffloadActivations.cpp - activations in host memory between the passes -===//
//
// ZeRO-R's CPU checkpointing: an activation the backward pass reads waits out
// the rest of the forward pass in host memory instead of the arena. DeepSpeed
// copies its activation checkpoints to the CPU in the checkpointed function's
// forward hook and back in its backward; zcc sees the whole step, so it moves
// every activation that crosses from the forward to the backward pass (the
// checkpoints, under --recompute), each at its exact last and first use:
//
//   %h = zc.gelu %x ...                  // forward
//   ... last forward use of %h ...
//   zc.offload_activation %h to slot 3   // %h's arena bytes are free after this
//   ... the rest of the forward pass, the backward of the later layers ...
//   %h.1 = zc.reload_activation slot 3   // right before the first backward use
//   ... backward uses read %h.1 ...
//
// The memory plan places each slot in the host tier (MemoryPlan::activationOffset).
//
//===----------------------------------------------------------------------===//

#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCOFFLOADACTIVATIONS
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

struct ZccOffloadActivationsPass : zc::impl::ZccOffloadActivationsBase<ZccOffloadActivationsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t slot = 0;
    for (auto fn : module.getOps<func::FuncOp>())
      if (auto role = fn->getAttrOfType<StringAttr>("zc.role"); role && role.getValue() == "step")
        offloadIn(fn, slot);
  }

  /// The value owning `v`'s bytes (through views), or null when the bytes are not the step's
  /// own scratch (a function argument, a parameter's or gradient's persistent buffer).
  static Value ownerOf(Value v) {
    while (auto view = v.getDefiningOp<ReshapeOp>())
      v = view.getInput();
    Operation *def = v.getDefiningOp();
    if (!def || isa<ParamRefOp, GradRefOp, arith::ConstantOp>(def))
      return Value();
    return v;
  }

  void offloadIn(func::FuncOp fn, int64_t &slot) {
    Block &body = fn.getBody().front();
    Operation *seed = nullptr;
    for (auto c : body.getOps<arith::ConstantOp>())
      if (c->hasAttr(kBackwardSeedAttr))
        seed = c;
    if (!seed)
      return; // no backward pass here
    auto isBackward = [&](Operation *op) { return !op->isBeforeInBlock(seed); };

    struct Move {
      Value value;
      Operation *lastForwardUse; // the offload goes after it (or after the definition)
      Operation *firstBackwardUse;
    };
    SmallVector<Move> moves;
    for (Operation &op : body) {
      if (&op == seed)
        break;
      for (Value v : op.getResults()) {
        auto type = dyn_cast<RankedTensorType>(v.getType());
        Value owner = ownerOf(v);
        // Only the step's own activations: gathered parameters are gathered again for the
        // backward pass, and collective buffers live in their schedule.
        if (!type || !owner || bufferKindOf(owner) != BufferKind::Activation || tensorBytes(type) < minBytes)
          continue;
        Operation *lastForward = &op, *firstBackward = nullptr;
        bool returned = false;
        for (Operation *user : v.getUsers()) {
          if (user->hasTrait<OpTrait::IsTerminator>())
            returned = true;
          else if (!isBackward(user)) {
            if (lastForward->isBeforeInBlock(user))
              lastForward = user;
          } else if (!firstBackward || user->isBeforeInBlock(firstBackward)) {
            firstBackward = user;
          }
        }
        if (firstBackward && !returned)
          moves.push_back({v, lastForward, firstBackward});
      }
    }
    for (Move &m : moves) {
      OpBuilder after(m.lastForwardUse->getContext());
      after.setInsertionPointAfter(m.lastForwardUse);
      Location loc = m.value.getLoc();
      OffloadActivationOp::create(after, loc, m.value, slot);
      OpBuilder before(m.firstBackwardUse);
      Value back = ReloadActivationOp::create(before, loc, m.value.getType(), slot).getResult();
      m.value.replaceUsesWithIf(back, [&](OpOperand &use) { return isBackward(use.getOwner()); });
      ++slot;
    }
  }
};

} // namespace
