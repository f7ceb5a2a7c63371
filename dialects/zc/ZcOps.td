//===- ZcOps.td - every zc op, grouped by kind into included files ---------===//

#ifndef ZC_OPS_TD
#define ZC_OPS_TD

include "dialects/zc/ZcDialect.td"
include "dialects/zc/ZcAttrs.td"
include "dialects/zc/ZcTypes.td"

include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/OpAsmInterface.td"

include "dialects/zc/ZcModelOps.td"
include "dialects/zc/ZcComputeOps.td"
include "dialects/zc/ZcGradOps.td"
include "dialects/zc/ZcCollectiveOps.td"
include "dialects/zc/ZcTrainOps.td"
include "dialects/zc/ZcOffloadOps.td"
include "dialects/zc/ZcQuantizeOps.td"
include "dialects/zc/ZcMoeOps.td"

#endif // ZC_OPS_TD
