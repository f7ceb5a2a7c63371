//===- ZcVerifyUtils.cpp - shape checks shared by the zc op verifiers -----===//

#include "dialects/zc/ZcVerifyUtils.h"

#include <cmath>

#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace mlir::zc::detail {

LogicalResult verifyLastAxisVector(Operation *op, RankedTensorType input,
                                   RankedTensorType vector, StringRef vectorName) {
  if (input.getRank() < 1)
    return op->emitOpError("input must have at least one axis, got ") << input;
  if (vector.getRank() != 1)
    return op->emitOpError() << vectorName << " must be 1-D, got " << vector;
  int64_t lastAxis = input.getShape().back();
  if (vector.getDimSize(0) != lastAxis)
    return op->emitOpError() << vectorName << " has " << vector.getDimSize(0)
                             << " elements but the input's last axis has " << lastAxis;
  if (vector.getElementType() != input.getElementType())
    return op->emitOpError() << vectorName << " element type " << vector.getElementType()
                             << " differs from the input's " << input.getElementType();
  return success();
}

LogicalResult verifySameElementType(Operation *op, ArrayRef<Type> types) {
  Type first = cast<ShapedType>(types.front()).getElementType();
  for (Type t : types.drop_front())
    if (cast<ShapedType>(t).getElementType() != first)
      return op->emitOpError("operands and result must share one element type, got ")
             << first << " and " << cast<ShapedType>(t).getElementType();
  return success();
}

LogicalResult verifyLabelsMatchLogits(Operation *op, RankedTensorType logits,
                                      RankedTensorType labels) {
  if (logits.getRank() < 1)
    return op->emitOpError("logits must have a class axis, got ") << logits;
  if (labels.getShape() != logits.getShape().drop_back())
    return op->emitOpError("labels shape ")
           << labels << " must be the logits shape without its class axis (logits " << logits
           << ")";
  return success();
}

LogicalResult verifyAttentionShape(Operation *op, RankedTensorType query, RankedTensorType key, int64_t numHeads,
                                   int64_t kvHeads) {
  if (query.getRank() != 3)
    return op->emitOpError("expects [batch, time, channels] tensors, got ") << query;
  int64_t channels = query.getDimSize(2);
  if (channels % numHeads != 0)
    return op->emitOpError() << "channels (" << channels << ") are not divisible by the "
                             << numHeads << " heads";
  if (numHeads % kvHeads != 0)
    return op->emitOpError() << "the " << numHeads << " query heads do not split into groups of the " << kvHeads
                             << " key/value heads";
  auto expected = RankedTensorType::get({query.getDimSize(0), query.getDimSize(1), channels / numHeads * kvHeads},
                                        query.getElementType());
  if (key != expected)
    return op->emitOpError() << "key and value must be " << expected << " (" << kvHeads << " heads of "
                             << channels / numHeads << "), got " << key;
  AttentionVariant variant = AttentionVariant::of(op);
  if (op->hasAttr("scale") && !(variant.scale > 0.0 && std::isfinite(variant.scale)))
    return op->emitOpError() << "scale must be positive and finite, got " << variant.scale;
  return verifySoftcap(op);
}

LogicalResult verifySoftcap(Operation *op) {
  const double cap = logitSoftcap(op);
  if (op->hasAttr("softcap") && !(cap > 0.0 && std::isfinite(cap)))
    return op->emitOpError() << "softcap must be positive and finite, got " << cap;
  return success();
}

LogicalResult verifyBoxInside(Operation *op, ArrayRef<int64_t> offsets, RankedTensorType box,
                              RankedTensorType whole) {
  if (box.getRank() != whole.getRank())
    return op->emitOpError() << "rank of the box (" << box.getRank()
                             << ") differs from the rank of the whole tensor ("
                             << whole.getRank() << ")";
  if (static_cast<int64_t>(offsets.size()) != whole.getRank())
    return op->emitOpError() << "expects one offset per axis (" << whole.getRank()
                             << "), got " << offsets.size();
  for (auto [axis, offset] : llvm::enumerate(offsets)) {
    int64_t size = box.getDimSize(axis), extent = whole.getDimSize(axis);
    if (offset < 0 || offset + size > extent)
      return op->emitOpError() << "box [" << offset << ", " << offset + size << ") on axis "
                               << axis << " is outside [0, " << extent << ")";
  }
  if (box.getElementType() != whole.getElementType())
    return op->emitOpError("input and result must share one element type");
  return success();
}

LogicalResult verifyShardedPair(Operation *op, RankedTensorType shard,
                                RankedTensorType gathered, int64_t ranks) {
  if (shard.getRank() < 1 || shard.getRank() != gathered.getRank())
    return op->emitOpError() << "shard " << shard << " and gathered " << gathered
                             << " tensors must have the same rank, at least 1";
  if (shard.getElementType() != gathered.getElementType())
    return op->emitOpError("shard and gathered tensors must share one element type");
  if (shard.getShape().drop_front() != gathered.getShape().drop_front())
    return op->emitOpError() << "shard " << shard << " and gathered " << gathered
                             << " tensors must agree on every axis but the first";
  if (gathered.getDimSize(0) != ranks * shard.getDimSize(0))
    return op->emitOpError() << "gathered axis 0 (" << gathered.getDimSize(0)
                             << ") must be " << ranks << " ranks x shard axis 0 ("
                             << shard.getDimSize(0) << ")";
  return success();
}

LogicalResult verifyLayerNormOperands(Operation *op, RankedTensorType input,
                                      RankedTensorType gamma, double epsilon) {
  if (failed(verifyLastAxisVector(op, input, gamma, "gamma")))
    return failure();
  if (!(epsilon > 0.0))
    return op->emitOpError("epsilon must be positive, got ") << epsilon;
  return success();
}

} // namespace mlir::zc::detail
