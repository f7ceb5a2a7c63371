//===- ZcMoeOps.cpp - verifiers of the Mixture-of-Experts ops --------------===//
//
// The shapes tie together through the tokens S (the leading axes of the router's logits), the
// choices k, the experts E and the S x k dispatched rows; each check names the operand and the
// shape it must have.
//
//===----------------------------------------------------------------------===//

#include "dialects/zc/ZcDialect.h"
#include "dialects/zc/ZcVerifyUtils.h"

using namespace mlir;
using namespace mlir::zc;
using namespace mlir::zc::detail;

namespace {

/// `t` with its last axis replaced by `last`, in `element`.
RankedTensorType withLastAxis(RankedTensorType t, int64_t last, Type element) {
  SmallVector<int64_t> shape(t.getShape());
  shape.back() = last;
  return RankedTensorType::get(shape, element);
}

/// `value`'s type is `want`, or an error naming it.
LogicalResult expectType(Operation *op, StringRef name, Type got, Type want) {
  if (got != want)
    return op->emitOpError() << name << " must be " << want << ", got " << got;
  return success();
}

/// The router's logits `[S..., E]`: at least 2-D, and the number of experts at least top_k.
LogicalResult verifyLogits(Operation *op, RankedTensorType logits, int64_t topK) {
  if (logits.getRank() < 2)
    return op->emitOpError() << "logits must be [tokens..., experts], got " << logits;
  if (topK > logits.getShape().back())
    return op->emitOpError() << "top_k " << topK << " exceeds the " << logits.getShape().back() << " experts";
  return success();
}

/// `choices` ([S..., k] of the weights or rows) against `tokens` ([S..., C]): the same leading
/// axes. Returns k.
FailureOr<int64_t> choicesOf(Operation *op, RankedTensorType choices, RankedTensorType tokens, StringRef what) {
  if (choices.getRank() != tokens.getRank() || choices.getShape().drop_back() != tokens.getShape().drop_back())
    return op->emitOpError() << what << " " << tokens << " and the routing's " << choices
                             << " must share their leading (token) axes";
  return choices.getShape().back();
}

/// The dispatched rows `[S x k, C]` of `tokens` `[S..., C]` routed by `rows` `[S..., k]`.
LogicalResult verifyDispatched(Operation *op, RankedTensorType dispatched, RankedTensorType tokens,
                               RankedTensorType rows, StringRef what) {
  FailureOr<int64_t> k = choicesOf(op, rows, tokens, what);
  if (failed(k))
    return failure();
  int64_t channels = tokens.getShape().back();
  auto want = RankedTensorType::get({tokens.getNumElements() / std::max<int64_t>(channels, 1) * *k, channels},
                                    tokens.getElementType());
  return expectType(op, "the dispatched rows", dispatched, want);
}

/// The grouped product's operands: rows [M, K], weight [E, K, N], offsets [E + 1], result [M, N].
LogicalResult verifyGrouped(Operation *op, RankedTensorType input, RankedTensorType weight,
                            RankedTensorType offsets, RankedTensorType result) {
  if (input.getRank() != 2)
    return op->emitOpError() << "input must be the dispatched rows [rows, K], got " << input;
  if (weight.getRank() != 3 || weight.getDimSize(1) != input.getDimSize(1))
    return op->emitOpError() << "weight must be [experts, " << input.getDimSize(1) << ", N], got " << weight;
  if (failed(verifySameElementType(op, {input, weight, result})))
    return failure();
  if (failed(expectType(op, "offsets", offsets,
                        RankedTensorType::get({weight.getDimSize(0) + 1}, offsets.getElementType()))))
    return failure();
  return expectType(op, "result", result,
                    RankedTensorType::get({input.getDimSize(0), weight.getDimSize(2)}, input.getElementType()));
}

/// offsets [E + 1] for logits [S..., E].
LogicalResult verifyOffsets(Operation *op, RankedTensorType logits, RankedTensorType offsets) {
  return expectType(op, "offsets", offsets,
                    RankedTensorType::get({logits.getShape().back() + 1}, offsets.getElementType()));
}

} // namespace

LogicalResult MoeRouteOp::verify() {
  RankedTensorType logits = tensorOf(getLogits());
  const int64_t k = static_cast<int64_t>(getTopK());
  if (failed(verifyLogits(*this, logits, k)))
    return failure();
  if (getScale().convertToDouble() <= 0 || !std::isfinite(getScale().convertToDouble()))
    return emitOpError("scale must be positive and finite");
  if (Value bias = getBias())
    if (failed(expectType(*this, "bias", bias.getType(),
                          RankedTensorType::get({logits.getShape().back()}, logits.getElementType()))))
      return failure();
  RankedTensorType chosen = withLastAxis(logits, k, logits.getElementType());
  Type i32 = IntegerType::get(getContext(), 32);
  if (failed(expectType(*this, "weights", getWeights().getType(), chosen)) ||
      failed(expectType(*this, "experts", getExperts().getType(), chosen.clone(i32))) ||
      failed(expectType(*this, "rows", getRows().getType(), chosen.clone(i32))))
    return failure();
  return verifyOffsets(*this, logits, tensorOf(getOffsets()));
}

LogicalResult MoeRouteGradOp::verify() {
  RankedTensorType logits = tensorOf(getLogits());
  const int64_t k = static_cast<int64_t>(getTopK());
  if (failed(verifyLogits(*this, logits, k)))
    return failure();
  RankedTensorType chosen = withLastAxis(logits, k, logits.getElementType());
  if (failed(expectType(*this, "grad", getGrad().getType(), chosen)))
    return failure();
  return expectType(*this, "experts", getExperts().getType(), chosen.clone(IntegerType::get(getContext(), 32)));
}

LogicalResult MoeDispatchOp::verify() {
  return verifyDispatched(*this, tensorOf(getResult()), tensorOf(getInput()), tensorOf(getRows()), "input");
}

LogicalResult MoeDispatchGradOp::verify() {
  return verifyDispatched(*this, tensorOf(getGrad()), tensorOf(getResult()), tensorOf(getRows()), "result");
}

LogicalResult GroupedMatmulOp::verify() {
  return verifyGrouped(*this, tensorOf(getInput()), tensorOf(getWeight()), tensorOf(getOffsets()),
                       tensorOf(getResult()));
}

LogicalResult GroupedMatmulGradOp::verify() {
  return verifyGrouped(*this, tensorOf(getInput()), tensorOf(getWeight()), tensorOf(getOffsets()),
                       tensorOf(getGrad()));
}

/// moe_combine and its gradient: input [S x k, C], weights [S..., k] of input's element type,
/// rows [S..., k], the combined [S..., C].
static LogicalResult verifyCombine(Operation *op, RankedTensorType input, RankedTensorType weights,
                                   RankedTensorType rows, RankedTensorType combined) {
  if (failed(expectType(op, "rows", rows, weights.clone(rows.getElementType()))))
    return failure();
  if (failed(verifySameElementType(op, {input, weights, combined})))
    return failure();
  return verifyDispatched(op, input, combined, rows, "the combined tokens");
}

LogicalResult MoeCombineOp::verify() {
  return verifyCombine(*this, tensorOf(getInput()), tensorOf(getWeights()), tensorOf(getRows()),
                       tensorOf(getResult()));
}

LogicalResult MoeCombineGradOp::verify() {
  return verifyCombine(*this, tensorOf(getInput()), tensorOf(getWeights()), tensorOf(getRows()),
                       tensorOf(getGrad()));
}

LogicalResult MoeAuxLossOp::verify() {
  RankedTensorType logits = tensorOf(getLogits());
  if (failed(verifyLogits(*this, logits, static_cast<int64_t>(getTopK()))))
    return failure();
  return verifyOffsets(*this, logits, tensorOf(getOffsets()));
}

LogicalResult MoeAuxLossGradOp::verify() {
  RankedTensorType logits = tensorOf(getLogits());
  if (failed(verifyLogits(*this, logits, static_cast<int64_t>(getTopK()))))
    return failure();
  return verifyOffsets(*this, logits, tensorOf(getOffsets()));
}
