//===- ZcGradOps.cpp - verifiers of the backward ops ----------------------===//

#include "dialects/zc/ZcDialect.h"
#include "dialects/zc/ZcVerifyUtils.h"

#include "llvm/ADT/SmallVector.h"

using namespace mlir;
using namespace mlir::zc;
using namespace mlir::zc::detail;

LogicalResult LayerNormGradOp::verify() {
  return verifyLayerNormOperands(*this, tensorOf(getInput()), tensorOf(getGamma()),
                                 getEpsilon().convertToDouble());
}

LogicalResult RmsNormGradOp::verify() {
  return verifyLayerNormOperands(*this, tensorOf(getInput()), tensorOf(getGamma()),
                                 getEpsilon().convertToDouble());
}

LogicalResult CausalAttentionGradOp::verify() {
  return verifyAttentionShape(*this, tensorOf(getQuery()), tensorOf(getKey()), getNumHeads(), getKvHeads());
}

LogicalResult EmbeddingGradOp::verify() {
  RankedTensorType grad = tensorOf(getGrad()), ids = tensorOf(getIds()),
                   table = tensorOf(getResult());
  if (table.getRank() != 2)
    return emitOpError("result must be [vocab, channels], got ") << table;
  SmallVector<int64_t> expected(ids.getShape());
  expected.push_back(table.getDimSize(1));
  RankedTensorType expectedType = RankedTensorType::get(expected, table.getElementType());
  if (grad != expectedType)
    return emitOpError() << "grad must be " << expectedType << " (ids shape + channels), got "
                         << grad;
  return success();
}

LogicalResult CrossEntropyGradOp::verify() {
  if (failed(verifySoftcap(*this)))
    return failure();
  return verifyLabelsMatchLogits(*this, tensorOf(getLogits()), tensorOf(getLabels()));
}

LogicalResult ReduceSumOp::verify() {
  RankedTensorType input = tensorOf(getInput()), result = tensorOf(getResult());
  if (failed(verifySameElementType(*this, {input, result})))
    return failure();
  ArrayRef<int64_t> axes = getAxes();
  SmallVector<int64_t> expected;
  size_t next = 0;
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (next < axes.size() && axes[next] == d) {
      ++next;
      continue;
    }
    expected.push_back(input.getDimSize(d));
  }
  if (next != axes.size())
    return emitOpError("axes must be distinct, sorted and within [0, ")
           << input.getRank() << "), got [" << llvm::make_range(axes.begin(), axes.end())
           << "]";
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape must be "
                         << RankedTensorType::get(expected, input.getElementType()) << ", got "
                         << result;
  return success();
}

LogicalResult SliceGradOp::verify() {
  return verifyBoxInside(*this, getOffsets(), tensorOf(getGrad()), tensorOf(getResult()));
}
