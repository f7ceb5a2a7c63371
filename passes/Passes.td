//===- Passes.td - every zcc pass, one def each ----------------------------===//
//
// Conventions: CLI names start with `zcc-`; each def's description shows a
// small before/after IR example; each pass has test/Passes/<cli-name>.mlir.
// The passes arrive with the issues that build them (autodiff, optimizer,
// ZeRO stages, bucketing, scheduling, recomputation, memory planning,
// lowering); until then this file declares the group only.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_PASSES_TD
#define ZCC_PASSES_TD

include "mlir/Pass/PassBase.td"

#endif // ZCC_PASSES_TD
