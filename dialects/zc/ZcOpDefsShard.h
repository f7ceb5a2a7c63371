//===- ZcOpDefsShard.h - what the zc ops' generated definitions need ------===//
//
// Each shard of the generated op definitions (ZcOpDefs<N>.cpp, dialects/zc/CMakeLists.txt) and
// ZcOps.cpp, which defines the custom syntax those definitions call, include this.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_DIALECTS_ZC_ZCOPDEFSSHARD_H
#define ZCC_DIALECTS_ZC_ZCOPDEFSSHARD_H

#include "dialects/zc/ZcDialect.h"

#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"

namespace mlir::zc {
/// `custom<AttentionTypes>`: causal_attention's and its gradient's types (ZcOps.cpp).
ParseResult parseAttentionTypes(OpAsmParser &parser, Type &query, Type &key, Type &value, Type &sameAsQuery);
void printAttentionTypes(OpAsmPrinter &p, Operation *op, Type query, Type key, Type value, Type sameAsQuery);
} // namespace mlir::zc

#endif // ZCC_DIALECTS_ZC_ZCOPDEFSSHARD_H
