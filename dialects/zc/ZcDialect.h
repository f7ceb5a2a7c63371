//===- ZcDialect.h - the zc dialect, its attributes, types and ops -------===//
//
// The one header users of the dialect include.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_DIALECTS_ZC_ZCDIALECT_H
#define ZCC_DIALECTS_ZC_ZCDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::zc {
// Parses and prints the float parameters of initializer attributes in their
// shortest round-tripping form.
FailureOr<llvm::APFloat> parseF64Param(AsmParser &parser);
void printF64Param(AsmPrinter &printer, const llvm::APFloat &value);
} // namespace mlir::zc

#include "dialects/zc/ZcDialect.h.inc"
#include "dialects/zc/ZcEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/zc/ZcAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/zc/ZcTypes.h.inc"

#define GET_OP_CLASSES
#include "dialects/zc/ZcOps.h.inc"

namespace mlir::zc {
/// True for the attributes `zc.param` accepts as an initializer.
bool isInitializerAttr(Attribute attr);

/// The static tensor type of a zc value (every zc tensor operand and result is one).
inline RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }
} // namespace mlir::zc

#endif // ZCC_DIALECTS_ZC_ZCDIALECT_H
