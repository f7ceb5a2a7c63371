//===- ZcComputeOps.cpp - verifiers of the forward compute ops ------------===//

#include "dialects/zc/ZcDialect.h"
#include "dialects/zc/ZcVerifyUtils.h"

#include "zrt/MatmulCrossEntropy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;
using namespace mlir::zc;
using namespace mlir::zc::detail;

LogicalResult CastOp::verify() {
  if (getInput().getType().getElementType() == getResult().getType().getElementType())
    return emitOpError("casts to the element type it already has (")
           << getInput().getType().getElementType() << ")";
  return success();
}

namespace {
/// The shapes of a (possibly transposed, batched or shared-rhs) matmul.
LogicalResult verifyMatmulShapes(Operation *op, RankedTensorType lhs, RankedTensorType rhs, RankedTensorType result,
                                 bool transposeLhs, bool transposeRhs) {
  if (failed(verifySameElementType(op, {lhs, rhs, result})))
    return failure();
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return op->emitOpError("operands must have at least 2 axes, got ") << lhs << " and " << rhs;
  ArrayRef<int64_t> lhsBatch = lhs.getShape().drop_back(2);
  ArrayRef<int64_t> rhsBatch = rhs.getShape().drop_back(2);
  if (rhs.getRank() != 2 && rhsBatch != lhsBatch)
    return op->emitOpError("rhs must be 2-D or have the batch axes of lhs, got ") << lhs << " and " << rhs;
  int64_t m = lhs.getDimSize(lhs.getRank() - 2), kLhs = lhs.getShape().back();
  if (transposeLhs)
    std::swap(m, kLhs);
  int64_t kRhs = rhs.getDimSize(rhs.getRank() - 2), n = rhs.getShape().back();
  if (transposeRhs)
    std::swap(kRhs, n);
  if (kLhs != kRhs)
    return op->emitOpError() << "contracting sizes differ: lhs has " << kLhs << ", rhs has " << kRhs;
  SmallVector<int64_t> expected(lhsBatch);
  expected.append({m, n});
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError() << "result shape must be " << RankedTensorType::get(expected, result.getElementType())
                             << ", got " << result;
  return success();
}

} // namespace

LogicalResult MatmulBiasOp::verify() {
  if (failed(verifyMatmulShapes(*this, tensorOf(getLhs()), tensorOf(getRhs()), tensorOf(getResult()),
                                getTransposeLhs(), getTransposeRhs())))
    return failure();
  return verifyLastAxisVector(*this, tensorOf(getResult()), tensorOf(getBias()), "bias");
}

LogicalResult MatmulBiasGeluOp::verify() {
  if (failed(verifyMatmulShapes(*this, tensorOf(getLhs()), tensorOf(getRhs()), tensorOf(getResult()),
                                getTransposeLhs(), getTransposeRhs())))
    return failure();
  if (getPre().getType() != getResult().getType())
    return emitOpError("pre and result must have one type, got ") << getPre().getType() << " and "
                                                                   << getResult().getType();
  return verifyLastAxisVector(*this, tensorOf(getResult()), tensorOf(getBias()), "bias");
}

LogicalResult MatmulDgeluBgradOp::verify() {
  if (failed(verifyMatmulShapes(*this, tensorOf(getLhs()), tensorOf(getRhs()), tensorOf(getDpre()),
                                getTransposeLhs(), getTransposeRhs())))
    return failure();
  if (getPre().getType() != getDpre().getType())
    return emitOpError("pre and dpre must have one type, got ") << getPre().getType() << " and "
                                                                << getDpre().getType();
  return verifyLastAxisVector(*this, tensorOf(getDpre()), tensorOf(getDbias()), "dbias");
}

namespace {
/// The head's sizes: rows (positions), classes and channels, from the operands' shapes.
struct HeadShape {
  int64_t rows, classes, channels;
};
HeadShape headShape(RankedTensorType input, RankedTensorType weight, bool transposeWeight) {
  int64_t channels = input.getShape().back();
  int64_t classes = weight.getDimSize(transposeWeight ? 0 : 1);
  return {input.getNumElements() / std::max<int64_t>(channels, 1), classes, channels};
}
} // namespace

RankedTensorType MatmulCrossEntropyOp::workspaceType(RankedTensorType input, RankedTensorType weight,
                                                     int64_t chunkRows) {
  // Either layout of the weight: classes = its elements / the input's channels.
  int64_t channels = std::max<int64_t>(input.getShape().back(), 1);
  auto layout = zrt::MatmulCrossEntropyLayout::of(input.getNumElements() / channels,
                                                  weight.getNumElements() / channels, weight.getNumElements(),
                                                  chunkRows, input.getElementTypeBitWidth() / 8);
  return RankedTensorType::get({layout.bytes}, IntegerType::get(input.getContext(), 8));
}

void MatmulCrossEntropyOp::build(OpBuilder &b, OperationState &state, Value input, Value weight, Value labels,
                                 Value grad, bool transposeWeight, int64_t chunkRows, double softcap) {
  RankedTensorType inputType = tensorOf(input), weightType = tensorOf(weight);
  build(b, state, RankedTensorType::get({}, b.getF32Type()), inputType, weightType,
        workspaceType(inputType, weightType, chunkRows), input, weight, labels, grad, transposeWeight, chunkRows,
        softcap > 0.0 ? b.getF64FloatAttr(softcap) : FloatAttr());
}

/// The fused heads' shared checks: shapes, labels, chunk and the workspace's type.
template <class HeadOp> LogicalResult verifyHead(HeadOp op) {
  if (failed(verifySoftcap(op)))
    return failure();
  RankedTensorType input = tensorOf(op.getInput()), weight = tensorOf(op.getWeight()),
                   labels = tensorOf(op.getLabels());
  if (failed(verifySameElementType(op, {input, weight})))
    return failure();
  if (input.getRank() < 2 || weight.getRank() != 2)
    return op.emitOpError("expects an input of at least 2 axes and a 2-D weight, got ") << input << " and " << weight;
  HeadShape h = headShape(input, weight, op.getTransposeWeight());
  int64_t weightChannels = weight.getDimSize(op.getTransposeWeight() ? 1 : 0);
  if (weightChannels != h.channels)
    return op.emitOpError() << "contracting sizes differ: input has " << h.channels << " channels, weight "
                            << weightChannels;
  if (labels.getShape() != input.getShape().drop_back())
    return op.emitOpError("labels shape ") << labels << " must be the input shape without its channel axis (input "
                                           << input << ")";
  if (op.getChunkRows() < 1 || op.getChunkRows() > h.rows)
    return op.emitOpError() << "chunk_rows must be in [1, " << h.rows << "], got " << op.getChunkRows();
  RankedTensorType expected = HeadOp::workspaceType(input, weight, op.getChunkRows());
  if (op.getWorkspace().getType() != expected)
    return op.emitOpError("workspace must be ") << expected << " for these shapes and chunk, got "
                                                << op.getWorkspace().getType();
  return success();
}

LogicalResult MatmulCrossEntropyOp::verify() { return verifyHead(*this); }

RankedTensorType MatmulCrossEntropyLossOp::workspaceType(RankedTensorType input, RankedTensorType weight,
                                                         int64_t chunkRows) {
  int64_t channels = std::max<int64_t>(input.getShape().back(), 1);
  auto layout = zrt::MatmulCrossEntropyLayout::forLoss(input.getNumElements() / channels,
                                                       weight.getNumElements() / channels, chunkRows,
                                                       input.getElementTypeBitWidth() / 8);
  return RankedTensorType::get({layout.bytes}, IntegerType::get(input.getContext(), 8));
}

void MatmulCrossEntropyLossOp::build(OpBuilder &b, OperationState &state, Value input, Value weight, Value labels,
                                     bool transposeWeight, int64_t chunkRows, double softcap) {
  RankedTensorType inputType = tensorOf(input), weightType = tensorOf(weight);
  build(b, state, RankedTensorType::get({}, b.getF32Type()), workspaceType(inputType, weightType, chunkRows), input,
        weight, labels, transposeWeight, chunkRows, softcap > 0.0 ? b.getF64FloatAttr(softcap) : FloatAttr());
}

LogicalResult MatmulCrossEntropyLossOp::verify() { return verifyHead(*this); }

LogicalResult MatmulOp::verify() {
  return verifyMatmulShapes(*this, tensorOf(getLhs()), tensorOf(getRhs()), tensorOf(getResult()), getTransposeLhs(),
                            getTransposeRhs());
}


LogicalResult BiasAddOp::verify() {
  return verifyLastAxisVector(*this, tensorOf(getInput()), tensorOf(getBias()), "bias");
}

LogicalResult LayerNormOp::verify() {
  return verifyLayerNormOperands(*this, tensorOf(getInput()), tensorOf(getGamma()),
                                 getEpsilon().convertToDouble());
}

LogicalResult AddLayerNormOp::verify() {
  return verifyLayerNormOperands(*this, tensorOf(getLhs()), tensorOf(getGamma()), getEpsilon().convertToDouble());
}

LogicalResult LayerNormGradAddOp::verify() {
  return verifyLayerNormOperands(*this, tensorOf(getInput()), tensorOf(getGamma()), getEpsilon().convertToDouble());
}

LogicalResult RmsNormOp::verify() {
  return verifyLayerNormOperands(*this, tensorOf(getInput()), tensorOf(getGamma()),
                                 getEpsilon().convertToDouble());
}

LogicalResult RotaryOp::verify() {
  RankedTensorType input = tensorOf(getInput());
  if (input.getRank() != 3)
    return emitOpError("input must be [batch, time, channels], got ") << input;
  int64_t channels = input.getDimSize(2), heads = getNumHeads();
  if (channels % heads != 0 || (channels / heads) % 2 != 0)
    return emitOpError() << "channels (" << channels << ") must be " << heads
                         << " heads of an even size";
  if (!(getTheta().convertToDouble() > 0.0))
    return emitOpError("theta must be positive, got ") << getTheta().convertToDouble();
  if (auto dims = getRotaryDims(); dims && (*dims % 2 != 0 || static_cast<int64_t>(*dims) > channels / heads))
    return emitOpError() << "rotary_dims (" << *dims << ") must be even and at most the head's "
                         << channels / heads << " channels";
  return success();
}

LogicalResult CausalAttentionOp::verify() {
  return verifyAttentionShape(*this, tensorOf(getQuery()), tensorOf(getKey()), getNumHeads(), getKvHeads());
}

LogicalResult EmbeddingOp::verify() {
  RankedTensorType table = tensorOf(getTable()), ids = tensorOf(getIds()),
                   result = tensorOf(getResult());
  if (table.getRank() != 2)
    return emitOpError("table must be [vocab, channels], got ") << table;
  SmallVector<int64_t> expected(ids.getShape());
  expected.push_back(table.getDimSize(1));
  RankedTensorType expectedType = RankedTensorType::get(expected, table.getElementType());
  if (result != expectedType)
    return emitOpError() << "result must be " << expectedType << " (ids shape + channels), got "
                         << result;
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType input = tensorOf(getInput()), result = tensorOf(getResult());
  if (failed(verifySameElementType(*this, {input, result})))
    return failure();
  if (input.getNumElements() != result.getNumElements())
    return emitOpError() << "cannot reshape " << input.getNumElements() << " elements into "
                         << result.getNumElements();
  return success();
}

LogicalResult TransposeOp::verify() {
  RankedTensorType input = tensorOf(getInput()), result = tensorOf(getResult());
  if (failed(verifySameElementType(*this, {input, result})))
    return failure();
  ArrayRef<int64_t> perm = getPermutation();
  if (static_cast<int64_t>(perm.size()) != input.getRank())
    return emitOpError() << "permutation has " << perm.size() << " entries for a rank-"
                         << input.getRank() << " input";
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> expected;
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= input.getRank() || seen[axis])
      return emitOpError("permutation must list every axis exactly once, got [")
             << llvm::make_range(perm.begin(), perm.end()) << "]";
    seen[axis] = true;
    expected.push_back(input.getDimSize(axis));
  }
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape must be "
                         << RankedTensorType::get(expected, input.getElementType()) << ", got "
                         << result;
  return success();
}

LogicalResult SliceOp::verify() {
  return verifyBoxInside(*this, getOffsets(), tensorOf(getResult()), tensorOf(getInput()));
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  RankedTensorType result = tensorOf(getResult());
  int64_t axis = getAxis();
  if (axis >= result.getRank())
    return emitOpError() << "axis " << axis << " is out of range for rank " << result.getRank();
  int64_t total = 0;
  for (auto [index, value] : llvm::enumerate(getInputs())) {
    RankedTensorType input = tensorOf(value);
    if (input.getRank() != result.getRank() ||
        input.getElementType() != result.getElementType())
      return emitOpError() << "input #" << index << " " << input
                           << " must have the result's rank and element type";
    for (int64_t d = 0; d < result.getRank(); ++d)
      if (d != axis && input.getDimSize(d) != result.getDimSize(d))
        return emitOpError() << "input #" << index << " has size " << input.getDimSize(d)
                             << " on axis " << d << ", the result has "
                             << result.getDimSize(d);
    total += input.getDimSize(axis);
  }
  if (total != result.getDimSize(axis))
    return emitOpError() << "inputs add up to " << total << " on axis " << axis
                         << " but the result has " << result.getDimSize(axis);
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  if (failed(verifySoftcap(*this)))
    return failure();
  return verifyLabelsMatchLogits(*this, tensorOf(getLogits()), tensorOf(getLabels()));
}
