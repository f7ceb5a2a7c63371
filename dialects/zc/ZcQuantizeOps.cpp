//===- ZcQuantizeOps.cpp - checks of the quantized-communication ops -------===//
//
// Shapes follow the runtime's byte layout (zrt/Quantize.h): a quantized row's
// length is defined there once, for these checks, the passes and the kernels.
//
//===----------------------------------------------------------------------===//

#include "dialects/zc/ZcDialect.h"
#include "dialects/zc/ZcVerifyUtils.h"

#include "zrt/Quantize.h"

using namespace mlir;
using namespace mlir::zc;

namespace {

/// The float and quantized tensors of a quantize/dequantize pair agree with `block` and `bits`.
LogicalResult verifyQuantizedPair(Operation *op, RankedTensorType values, RankedTensorType bytes, int64_t block,
                                  int32_t bits) {
  if (bits != 8 && bits != 4)
    return op->emitOpError() << "bits must be 8 or 4, got " << bits;
  if (bits == 4 && block % 2)
    return op->emitOpError() << "a 4-bit block must hold an even number of values (a byte never spans "
                                "two blocks), got "
                             << block;
  if (values.getRank() == 0 || values.getRank() != bytes.getRank())
    return op->emitOpError() << "the values " << values << " and the quantized rows " << bytes
                             << " must have the same rank, at least 1";
  for (int64_t d = 0; d + 1 < values.getRank(); ++d)
    if (values.getDimSize(d) != bytes.getDimSize(d))
      return op->emitOpError() << "axis " << d << " differs: " << values << " and " << bytes;
  const int64_t cols = values.getShape().back();
  const int64_t want = zrt::quant::rowBytes(cols, block, bits);
  if (bytes.getShape().back() != want)
    return op->emitOpError() << "a row of " << cols << " values in blocks of " << block << " at " << bits
                             << " bits is " << want << " bytes, got " << bytes.getShape().back();
  return success();
}

/// The `zc.state` tensors a secondary-shard op names, with their total element count.
FailureOr<int64_t> secondaryElements(Operation *op, ArrayAttr states, Type element,
                                     SymbolTableCollection &symbolTable) {
  if (states.empty())
    return op->emitOpError("names no secondary shard");
  int64_t total = 0;
  for (Attribute a : states) {
    auto state = symbolTable.lookupNearestSymbolFrom<StateOp>(op, cast<FlatSymbolRefAttr>(a));
    if (!state)
      return op->emitOpError() << a << " is not a zc.state";
    if (state.getTensorType().getElementType() != element)
      return op->emitOpError() << a << " holds " << state.getTensorType().getElementType() << ", the bucket "
                               << element;
    total += state.getTensorType().getNumElements();
  }
  return total;
}

/// An all-to-all's buffer: `ranks` equal blocks of the leading axis, on a group that has one.
LogicalResult verifyExchange(Operation *op, RankedTensorType type, uint64_t ranks, MeshAxis axis) {
  if (type.getRank() == 0 || type.getDimSize(0) % static_cast<int64_t>(ranks))
    return op->emitOpError() << "the leading axis of " << type << " must be " << ranks << " equal blocks";
  if (axis == MeshAxis::pipeline)
    return op->emitOpError("has no all-to-all on the pipeline axis");
  return success();
}

LogicalResult verifyGroup(Operation *op, int64_t ranks, int64_t group) {
  if (ranks % group)
    return op->emitOpError() << "groups of " << group << " ranks do not divide " << ranks;
  return success();
}

} // namespace

LogicalResult QuantizeOp::verify() {
  return verifyQuantizedPair(*this, tensorOf(getInput()), tensorOf(getResult()), getBlock(), getBits());
}

LogicalResult DequantizeOp::verify() {
  return verifyQuantizedPair(*this, tensorOf(getResult()), tensorOf(getInput()), getBlock(), getBits());
}

LogicalResult FakeQuantizeOp::verify() {
  if (getBits() < 2 || getBits() > 8)
    return emitOpError() << "bits must be 2 to 8 (DeepSpeed's ternary and binary quantizers are not supported), got "
                         << getBits();
  if (getGroups().has_value() == getPerRow())
    return emitOpError() << "takes `groups G` or `per_row`, one of them";
  const int64_t n = tensorOf(getInput()).getNumElements();
  if (getGroups() && n % static_cast<int64_t>(*getGroups()))
    return emitOpError() << *getGroups() << " groups do not divide the " << n << " values";
  if (getColumns()) {
    RankedTensorType type = tensorOf(getInput());
    if (!getGroups() || type.getRank() < 1 || type.getShape().back() % static_cast<int64_t>(*getGroups()))
      return emitOpError() << "`columns` takes `groups G` dividing the last axis of " << type;
  }
  return success();
}

LogicalResult ApplyMaskOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto mask = symbolTable.lookupNearestSymbolFrom<StateOp>(*this, getMaskAttr());
  if (!mask || !mask.getMaskKeepAttr())
    return emitOpError() << getMaskAttr() << " is not a mask (zc.state ... mask keep R)";
  RankedTensorType input = tensorOf(getInput());
  if (std::optional<uint64_t> axis = getAxis()) {
    if (!mask.getMaskRows() || *axis >= static_cast<uint64_t>(input.getRank()) ||
        mask.getTensorType().getShape() != ArrayRef<int64_t>{input.getDimSize(*axis)})
      return emitOpError() << "axis " << *axis << " of " << getInput().getType() << " needs a row mask of its size, got "
                           << mask.getType();
    return success();
  }
  if (mask.getMaskRows())
    return emitOpError() << getMaskAttr() << " is a row mask: name the input's axis it covers";
  if (mask.getTensorType().getShape() != input.getShape())
    return emitOpError() << "mask " << mask.getType() << " differs from the input's shape " << getInput().getType();
  return success();
}

LogicalResult AllToAllOp::verify() { return verifyExchange(*this, tensorOf(getInput()), getRanks(), getAxis()); }

LogicalResult AllToAllStartOp::verify() {
  RankedTensorType type = tensorOf(getInput());
  if (type != cast<AsyncType>(getHandle().getType()).getValueType())
    return emitOpError() << "the handle must yield the input's type " << type;
  if (failed(verifyExchange(*this, type, getRanks(), getAxis())))
    return failure();
  return detail::verifyWaitedOnce(*this);
}

LogicalResult KeepSecondaryOp::verify() { return verifyGroup(*this, getRanks(), getGroup()); }

LogicalResult KeepSecondaryOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  RankedTensorType input = tensorOf(getInput());
  FailureOr<int64_t> kept = secondaryElements(*this, getStates(), input.getElementType(), symbolTable);
  if (failed(kept))
    return failure();
  // Each rank keeps 1 / group of the bucket: R = ranks / group chunks.
  if (input.getRank() != 1 || *kept * static_cast<int64_t>(getGroup()) != input.getNumElements())
    return emitOpError() << "the secondary shards hold " << *kept << " elements, 1/" << getGroup() << " of "
                         << input << " must";
  return success();
}

LogicalResult PackSecondaryOp::verify() { return verifyGroup(*this, getRanks(), getGroup()); }

LogicalResult PackSecondaryOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  RankedTensorType result = tensorOf(getResult());
  FailureOr<int64_t> kept = secondaryElements(*this, getStates(), result.getElementType(), symbolTable);
  if (failed(kept))
    return failure();
  if (result.getRank() != 1 || *kept != result.getNumElements())
    return emitOpError() << "the secondary shards hold " << *kept << " elements, the result " << result;
  return success();
}
