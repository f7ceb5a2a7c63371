//===- MemoryPlanPasses.cpp - budget check and test printing of the plan ---===//
//
// zcc-memory-plan checks the plan zcc-lower-to-llvm will use (planMemory is a
// deterministic function of the module) against a per-rank budget, so an
// out-of-memory is a compile-time error naming where memory peaks and what is
// live there, not a crash after start-up. zcc-test-print-memory-plan prints
// every buffer's live range and offset for lit tests.
//
//===----------------------------------------------------------------------===//

#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCMEMORYPLAN
#define GEN_PASS_DEF_ZCCTESTPRINTMEMORYPLAN
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

FailureOr<MemoryPlan> planOf(ModuleOp module) {
  func::FuncOp step = functionWithRole(module, "step"), update = functionWithRole(module, "update");
  if (!step || !update)
    return module.emitError("nothing to plan: run zcc-autodiff and zcc-optimizer first");
  return planMemory(module, plannedFunctions(module));
}

std::string mib(int64_t bytes) { return llvm::formatv("{0:F2} MiB", double(bytes) / (1 << 20)).str(); }

struct ZccMemoryPlanPass : zc::impl::ZccMemoryPlanBase<ZccMemoryPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<MemoryPlan> plan = planOf(module);
    if (failed(plan))
      return signalPassFailure();
    // A pipeline stage's input slots (each micro-batch in flight's inputs and kept
    // activations) are train.bin's buffers beside the arena.
    const int64_t slotBytes = pipelineSlotBytes(module), total = plan->totalBytes() + slotBytes;
    if (budget <= 0 || total <= budget)
      return;
    const FunctionPlan *peak = plan->peakFunction();
    Operation *at = peak->ops[peak->peakIndex];
    InFlightDiagnostic diag = at->emitError()
                              << "the memory plan needs " << total << " bytes per rank (" << mib(total)
                              << (slotBytes ? ", of which the pipeline's input slots " + mib(slotBytes) : std::string())
                              << "), over the budget of " << int64_t(budget) << " bytes ("
                              << mib(budget) << "); it peaks here, in @" << func::FuncOp(peak->function).getSymName()
                              << ": persistent " << plan->persistentBytes << " (params " << plan->paramBytes
                              << ", grads " << plan->gradBytes << ", optimizer state " << plan->stateBytes
                              << "), scratch " << plan->scratchBytes;
    // The largest buffers live at the peak, each at its definition.
    std::vector<const PlannedBuffer *> live;
    for (const PlannedBuffer &b : peak->buffers)
      if (b.start <= peak->peakIndex && peak->peakIndex <= b.end)
        live.push_back(&b);
    llvm::sort(live, [](const PlannedBuffer *a, const PlannedBuffer *b) { return a->bytes > b->bytes; });
    for (const PlannedBuffer *b : ArrayRef(live).take_front(5))
      diag.attachNote(b->definer->getLoc())
          << "live at the peak: " << b->bytes << " bytes (" << bufferKindName(b->kind) << ") from '"
          << b->definer->getName() << "'";
    // What would take the activations out of the arena, when they are a share of the peak.
    int64_t activations = 0;
    for (const PlannedBuffer *b : live)
      if (b->kind == BufferKind::Activation)
        activations += b->bytes;
    if (activations > 0 && plan->offloadedActivationBytes == 0)
      diag.attachNote() << activations << " bytes of activations live at the peak: --recompute selective|full "
                        << "computes them again in backward, --offload-activations cpu keeps them in host memory "
                        << "between the passes";
    signalPassFailure();
  }
};

struct ZccTestPrintMemoryPlanPass : zc::impl::ZccTestPrintMemoryPlanBase<ZccTestPrintMemoryPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<MemoryPlan> plan = planOf(getOperation());
    if (failed(plan))
      return signalPassFailure();
    llvm::raw_ostream &os = llvm::outs();
    os << "persistent " << plan->persistentBytes << " (params " << plan->paramBytes << ", grads "
       << plan->gradBytes << ", optimizer_state " << plan->stateBytes << ")\n";
    for (auto &[name, offset] : plan->paramOffset)
      os << "  param @" << name.getValue() << " at " << offset << "\n";
    for (auto &[name, offset] : plan->gradOffset)
      os << "  grad @" << name.getValue() << " at " << offset << "\n";
    for (auto &[name, offset] : plan->stateOffset)
      os << "  state @" << name.getValue() << " at " << offset << "\n";
    for (const FunctionPlan &fn : plan->functions) {
      os << "@" << func::FuncOp(fn.function).getSymName() << ": scratch " << fn.regionBytes << ", peak at op "
         << fn.peakIndex << " (" << fn.ops[fn.peakIndex]->getName() << ")\n";
      for (const PlannedBuffer &b : fn.buffers)
        os << "  [" << b.start << ", " << b.end << "] " << b.definer->getName() << " " << b.bytes
           << " bytes at " << plan->persistentBytes + b.offset << " (" << bufferKindName(b.kind) << ")\n";
    }
    os << "arena " << plan->totalBytes() << "\n";
  }
};

} // namespace
