//===- ZcVerifyUtils.h - shape checks shared by the zc op verifiers -------===//
//
// Private to the dialect's .cpp files. Each helper emits an op error naming the
// operand and both sizes, so a user sees what to fix without reading the spec.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_DIALECTS_ZC_ZCVERIFYUTILS_H
#define ZCC_DIALECTS_ZC_ZCVERIFYUTILS_H

#include "dialects/zc/ZcDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace mlir::zc::detail {


/// `vector` is 1-D with the size of `input`'s last axis and `input`'s element type.
LogicalResult verifyLastAxisVector(Operation *op, RankedTensorType input,
                                   RankedTensorType vector, StringRef vectorName);

/// All of `types` share one element type.
LogicalResult verifySameElementType(Operation *op, ArrayRef<Type> types);

/// `labels` has `logits`' shape without its last (class) axis.
LogicalResult verifyLabelsMatchLogits(Operation *op, RankedTensorType logits,
                                      RankedTensorType labels);

/// A `softcap` attribute, where present, is positive and finite (attention's scores, the
/// cross-entropies' logits).
LogicalResult verifySoftcap(Operation *op);

/// `query` is `[B, T, C]` with `C` divisible by `numHeads`; `numHeads` is a multiple of
/// `kvHeads`, and `key` is `[B, T, kvHeads x C / numHeads]` of query's element type.
LogicalResult verifyAttentionShape(Operation *op, RankedTensorType query, RankedTensorType key, int64_t numHeads,
                                   int64_t kvHeads);

/// A box of shape `box` at `offsets` lies inside `whole`.
LogicalResult verifyBoxInside(Operation *op, ArrayRef<int64_t> offsets, RankedTensorType box,
                              RankedTensorType whole);

/// `gathered` is `shard` with its leading axis multiplied by `ranks` (the
/// shapes of all_gather; reduce_scatter reversed).
LogicalResult verifyShardedPair(Operation *op, RankedTensorType shard,
                                RankedTensorType gathered, int64_t ranks);

/// A started collective must be finished by exactly one zc.wait, or the
/// communication stream would hold a transfer nobody completes.
LogicalResult verifyWaitedOnce(Operation *start);

/// `layernorm`, `rmsnorm` and their gradients: gamma matches the last axis; epsilon > 0.
LogicalResult verifyLayerNormOperands(Operation *op, RankedTensorType input,
                                      RankedTensorType gamma, double epsilon);

/// An update op's offload attributes (zc.adamw, zc.sgd): `chunk` = [first, count] inside the
/// gradient's elements; a state on the NVMe tier only through `swap_slot` (which needs a
/// chunk), the chunk's states fitting the slot.
/// A zc.pack_shards of parameters on the NVMe tier reads their shards from its `swap_slot`.
LogicalResult verifyPackSlot(PackShardsOp op);

LogicalResult verifyUpdateOffload(Operation *op, ArrayRef<FlatSymbolRefAttr> states, RankedTensorType grad,
                                  DenseI64ArrayAttr chunk, IntegerAttr slot, SymbolTableCollection &symbolTable);

} // namespace mlir::zc::detail

#endif // ZCC_DIALECTS_ZC_ZCVERIFYUTILS_H
