//===- ZcMoeOps.cpp - verifiers of the Mixture-of-Experts ops --------------===//
//
// The shapes tie together through the tokens S (the leading axes of the router's logits), the
// choices k, the experts E and the S x k dispatched rows; each check names the operand and the
// shape it must have.
//
//===----------------------------------------------------------------------===//

#include "dialects/zc/ZcDialect.h"
#include "dialects/zc/ZcVerifyUtils.h"

#include "zrt/MoeLayout.h"

#include <cmath>

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

/// The dispatched rows `[R, C]` of `tokens` `[S..., C]` routed by `rows` `[S..., k]`: R = S x k
/// dropless; with a capacity, moe_route's dispatched rows (at most S x k where the routing is
/// not in sight).
LogicalResult verifyDispatched(Operation *op, RankedTensorType dispatched, RankedTensorType tokens, Value rowsValue,
                               StringRef what) {
  RankedTensorType rows = tensorOf(rowsValue);
  FailureOr<int64_t> k = choicesOf(op, rows, tokens, what);
  if (failed(k))
    return failure();
  const int64_t channels = tokens.getShape().back(),
                choices = tokens.getNumElements() / std::max<int64_t>(channels, 1) * *k;
  int64_t want = choices;
  if (auto route = rowsValue.getDefiningOp<MoeRouteOp>())
    want = route.getDispatchedRows();
  else if (dispatched.getRank() == 2 && dispatched.getDimSize(0) <= choices)
    want = dispatched.getDimSize(0);
  return expectType(op, "the dispatched rows", dispatched,
                    RankedTensorType::get({want, channels}, tokens.getElementType()));
}

/// The grouped product's operands: rows [M, K], weight [E, K, N], offsets [E + 1], result [M, N].
LogicalResult verifyGrouped(Operation *op, RankedTensorType input, RankedTensorType weight,
                            RankedTensorType offsets, RankedTensorType result, bool transposed) {
  if (input.getRank() != 2)
    return op->emitOpError() << "input must be the dispatched rows [rows, K], got " << input;
  const int64_t kAxis = transposed ? 2 : 1, nAxis = transposed ? 1 : 2;
  if (weight.getRank() != 3 || weight.getDimSize(kAxis) != input.getDimSize(1))
    return op->emitOpError() << "weight must be [experts, "
                             << (transposed ? "N, " + std::to_string(input.getDimSize(1))
                                            : std::to_string(input.getDimSize(1)) + ", N")
                             << "]" << (transposed ? " (transpose_rhs)" : "") << ", got " << weight;
  if (failed(verifySameElementType(op, {input, weight, result})))
    return failure();
  if (failed(expectType(op, "offsets", offsets,
                        RankedTensorType::get({weight.getDimSize(0) + 1}, offsets.getElementType()))))
    return failure();
  return expectType(op, "result", result,
                    RankedTensorType::get({input.getDimSize(0), weight.getDimSize(nAxis)}, input.getElementType()));
}

/// offsets [E + 1] for logits [S..., E].
LogicalResult verifyOffsets(Operation *op, RankedTensorType logits, RankedTensorType offsets) {
  return expectType(op, "offsets", offsets,
                    RankedTensorType::get({logits.getShape().back() + 1}, offsets.getElementType()));
}

} // namespace

int64_t MoeRouteOp::getDispatchedRows() {
  RankedTensorType logits = tensorOf(getLogits());
  const int64_t experts = logits.getShape().back();
  return zrt::moeDispatchedRows(logits.getNumElements() / std::max<int64_t>(experts, 1), experts,
                                static_cast<int64_t>(getTopK()), getCapacityFactorOrZero());
}

StringAttr MoeRouteOp::getBiasParam() {
  Value v = getBias();
  while (v) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return {};
    if (auto ref = dyn_cast<ParamRefOp>(def))
      return ref.getNameAttr().getAttr();
    if (auto gathered = dyn_cast<GatherParamOp>(def))
      return gathered.getParamAttr().getAttr();
    if (!isa<CastOp, ReshapeOp>(def))
      return {};
    v = def->getOperand(0);
  }
  return {};
}

llvm::DenseSet<StringAttr> mlir::zc::expertBiasParams(ModuleOp module) {
  llvm::DenseSet<StringAttr> biases;
  module.walk([&](MoeRouteOp route) {
    if (StringAttr bias = route.getBiasParam())
      biases.insert(bias);
  });
  return biases;
}

LogicalResult MoeRouteOp::verify() {
  RankedTensorType logits = tensorOf(getLogits());
  const int64_t k = static_cast<int64_t>(getTopK());
  if (failed(verifyLogits(*this, logits, k)))
    return failure();
  if (getScale().convertToDouble() <= 0 || !std::isfinite(getScale().convertToDouble()))
    return emitOpError("scale must be positive and finite");
  if (getCapacityFactor() && !(getCapacityFactorOrZero() > 0 && std::isfinite(getCapacityFactorOrZero())))
    return emitOpError("capacity_factor must be positive and finite (leave it out for dropless routing)");
  if (static_cast<bool>(getGroups()) != static_cast<bool>(getTopkGroups()))
    return emitOpError("groups and topk_groups come together (DeepSeek-V3's n_group and topk_group)");
  if (getGroups()) {
    const int64_t experts = logits.getShape().back(), groups = static_cast<int64_t>(*getGroups()),
                  kept = static_cast<int64_t>(*getTopkGroups());
    if (experts % groups != 0 || experts / groups < 2)
      return emitOpError() << "groups " << groups << " must divide the " << experts
                           << " experts into groups of at least 2 (a group scores its two best)";
    if (kept > groups)
      return emitOpError() << "topk_groups " << kept << " exceeds the " << groups << " groups";
    if (k > kept * (experts / groups))
      return emitOpError() << "top_k " << k << " exceeds the " << kept * (experts / groups)
                           << " experts of the topk_groups " << kept << " groups";
  }
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
  // rows has the experts' type (AllTypesMatch).
  return expectType(*this, "experts", getExperts().getType(), chosen.clone(IntegerType::get(getContext(), 32)));
}

LogicalResult MoeDispatchOp::verify() {
  return verifyDispatched(*this, tensorOf(getResult()), tensorOf(getInput()), getRows(), "input");
}

LogicalResult MoeDispatchGradOp::verify() {
  return verifyDispatched(*this, tensorOf(getGrad()), tensorOf(getResult()), getRows(), "result");
}

LogicalResult GroupedMatmulOp::verify() {
  return verifyGrouped(*this, tensorOf(getInput()), tensorOf(getWeight()), tensorOf(getOffsets()),
                       tensorOf(getResult()), getTransposeRhs());
}

LogicalResult GroupedMatmulGradOp::verify() {
  return verifyGrouped(*this, tensorOf(getInput()), tensorOf(getWeight()), tensorOf(getOffsets()),
                       tensorOf(getGrad()), getTransposeRhs());
}

/// moe_combine and its gradient: input [R, C], weights [S..., k] of input's element type,
/// rows [S..., k], the combined [S..., C].
static LogicalResult verifyCombine(Operation *op, RankedTensorType input, RankedTensorType weights, Value rows,
                                   RankedTensorType combined) {
  if (failed(expectType(op, "rows", rows.getType(), weights.clone(tensorOf(rows).getElementType()))))
    return failure();
  if (failed(verifySameElementType(op, {input, weights, combined})))
    return failure();
  return verifyDispatched(op, input, combined, rows, "the combined tokens");
}

LogicalResult MoeCombineOp::verify() {
  return verifyCombine(*this, tensorOf(getInput()), tensorOf(getWeights()), getRows(), tensorOf(getResult()));
}

LogicalResult MoeCombineGradOp::verify() {
  return verifyCombine(*this, tensorOf(getInput()), tensorOf(getWeights()), getRows(), tensorOf(getGrad()));
}

/// The load-balancing loss's logits [S..., E] and choices [S..., k], k at most E.
static LogicalResult verifyAuxOperands(Operation *op, RankedTensorType logits, RankedTensorType experts) {
  if (logits.getRank() < 2)
    return op->emitOpError() << "logits must be [tokens..., experts], got " << logits;
  if (experts.getRank() != logits.getRank() || experts.getShape().drop_back() != logits.getShape().drop_back())
    return op->emitOpError() << "experts " << experts << " must be the routing's choices [tokens..., k] of the "
                             << logits << " logits";
  return verifyLogits(op, logits, experts.getShape().back());
}

/// moe_shared_gate and its gradient: the gate one value per token of the shared output.
static LogicalResult verifySharedGate(Operation *op, RankedTensorType shared, RankedTensorType gate) {
  SmallVector<int64_t> perToken(shared.getShape());
  if (perToken.empty())
    return op->emitOpError() << "shared must be [tokens..., C], got " << shared;
  perToken.back() = 1;
  return expectType(op, "gate", gate, shared.clone(perToken));
}

LogicalResult MoeSharedGateOp::verify() {
  return verifySharedGate(*this, tensorOf(getShared()), tensorOf(getGate()));
}

LogicalResult MoeSharedGateGradOp::verify() {
  return verifySharedGate(*this, tensorOf(getShared()), tensorOf(getGate()));
}

LogicalResult MoeAuxLossOp::verify() {
  return verifyAuxOperands(*this, tensorOf(getLogits()), tensorOf(getExperts()));
}

LogicalResult MoeAuxLossGradOp::verify() {
  return verifyAuxOperands(*this, tensorOf(getLogits()), tensorOf(getExperts()));
}

LogicalResult EpCountsOp::verify() {
  RankedTensorType offsets = tensorOf(getOffsets());
  const int64_t ranks = static_cast<int64_t>(getRanks());
  if (offsets.getRank() != 1 || offsets.getDimSize(0) < 2)
    return emitOpError() << "offsets must be moe_route's [experts + 1], got " << offsets;
  const int64_t experts = offsets.getDimSize(0) - 1;
  if (experts % ranks != 0)
    return emitOpError() << experts << " experts do not divide over " << ranks << " expert-parallel ranks";
  if (failed(expectType(*this, "all", getAll().getType(), offsets.clone({ranks, experts + 1}))))
    return failure();
  return expectType(*this, "local_offsets", getLocalOffsets().getType(), offsets.clone({experts / ranks + 1}));
}

/// ep_dispatch and ep_combine: `local` [R, C] on the dispatching rank, `received` [M, C] on the
/// experts' rank, the counts [ranks, E + 1] of an ep_counts over as many ranks.
static LogicalResult verifyExchange(Operation *op, RankedTensorType local, RankedTensorType received, Value counts,
                                    int64_t ranks) {
  RankedTensorType c = tensorOf(counts);
  if (c.getRank() != 2 || c.getDimSize(0) != ranks || c.getDimSize(1) < 2)
    return op->emitOpError() << "counts must be a zc.ep_counts' `all` [" << ranks << ", experts + 1], got " << c;
  if (local.getRank() != 2 || received.getRank() != 2 || local.getDimSize(1) != received.getDimSize(1))
    return op->emitOpError() << "the rows must be [rows, C] on both sides, got " << local << " and " << received;
  return verifySameElementType(op, {local, received});
}

LogicalResult EpDispatchOp::verify() {
  return verifyExchange(*this, tensorOf(getInput()), tensorOf(getResult()), getCounts(),
                        static_cast<int64_t>(getRanks()));
}

LogicalResult EpCombineOp::verify() {
  return verifyExchange(*this, tensorOf(getResult()), tensorOf(getInput()), getCounts(),
                        static_cast<int64_t>(getRanks()));
}

LogicalResult EpDispatchStartOp::verify() {
  return verifyExchange(*this, tensorOf(getInput()), cast<AsyncType>(getHandle().getType()).getValueType(),
                        getCounts(), static_cast<int64_t>(getRanks()));
}

LogicalResult EpCombineStartOp::verify() {
  return verifyExchange(*this, cast<AsyncType>(getHandle().getType()).getValueType(), tensorOf(getInput()),
                        getCounts(), static_cast<int64_t>(getRanks()));
}
