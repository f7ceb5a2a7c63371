//===- ZcCollectiveOps.cpp - verifiers of collectives, wait and release ---===//

#include "dialects/zc/ZcDialect.h"
#include "dialects/zc/ZcVerifyUtils.h"

using namespace mlir;
using namespace mlir::zc;
using namespace mlir::zc::detail;

LogicalResult mlir::zc::detail::verifyWaitedOnce(Operation *start) {
  Value handle = start->getResult(0);
  if (!handle.hasOneUse() || !isa<WaitOp>(*handle.getUsers().begin()))
    return start->emitOpError("handle must be waited on by exactly one zc.wait");
  return success();
}

namespace {
RankedTensorType awaited(Value handle) {
  return cast<AsyncType>(handle.getType()).getValueType();
}
} // namespace

int64_t mlir::zc::sequenceSplitAxis(RankedTensorType whole, int64_t ranks) {
  for (int64_t axis = 0; axis < whole.getRank(); ++axis)
    if (whole.getDimSize(axis) != 1)
      return ranks > 0 && whole.getDimSize(axis) % ranks == 0 ? axis : -1;
  return -1;
}

RankedTensorType mlir::zc::sequenceShardType(RankedTensorType whole, int64_t ranks) {
  int64_t axis = sequenceSplitAxis(whole, ranks);
  if (axis < 0)
    return nullptr;
  SmallVector<int64_t> shape(whole.getShape());
  shape[axis] /= ranks;
  return whole.clone(shape);
}

namespace {
/// `local` is one of `ranks` contiguous parts of `whole` (sequenceShardType).
LogicalResult verifySequenceShard(Operation *op, RankedTensorType local, RankedTensorType whole, int64_t ranks) {
  if (sequenceShardType(whole, ranks) != local)
    return op->emitOpError() << local << " must be one of " << ranks << " parts of " << whole
                             << " split along its first axis longer than 1 (sequence parallelism)";
  return success();
}

/// Sequence parallelism's pairs: `local` is `whole` with its leading axis split `ranks` ways,
/// or, without the split, the same type.
LogicalResult verifySequencePair(Operation *op, bool split, RankedTensorType local, RankedTensorType whole,
                                 int64_t ranks) {
  if (split)
    return verifySequenceShard(op, local, whole, ranks);
  if (local != whole)
    return op->emitOpError() << "input and result must have the same type without `sequence`, got " << local
                             << " and " << whole;
  return success();
}
} // namespace

LogicalResult AllGatherOp::verify() {
  if (getAxis() == MeshAxis::tensor) // sequence parallelism's (hpZ's groups gather buckets, as the data axis)
    return verifySequenceShard(*this, tensorOf(getInput()), tensorOf(getResult()), getRanks());
  return verifyShardedPair(*this, tensorOf(getInput()), tensorOf(getResult()), getRanks());
}

namespace {
/// A reduce-scatter's shapes: the leading axis split, or ZeRO's padded form (any
/// input, flattened and zero-padded to `ranks` 1-D shards).
LogicalResult verifyReduceScatterShapes(Operation *op, RankedTensorType input, RankedTensorType result,
                                        int64_t ranks) {
  if (result.getRank() == 1 && input.getElementType() == result.getElementType() &&
      result.getDimSize(0) == (input.getNumElements() + ranks - 1) / ranks)
    return success();
  return verifyShardedPair(op, result, input, ranks);
}
} // namespace

LogicalResult ReduceScatterOp::verify() {
  // Sequence parallelism's activations; the data axis' (and an expert weight's group's) ZeRO shards.
  if (getAxis() != MeshAxis::data && getAxis() != MeshAxis::expert_data)
    return verifySequenceShard(*this, tensorOf(getResult()), tensorOf(getInput()), getRanks());
  return verifyReduceScatterShapes(*this, tensorOf(getInput()), tensorOf(getResult()), getRanks());
}

LogicalResult TpCopyOp::verify() {
  return verifySequencePair(*this, getSequence(), tensorOf(getInput()), tensorOf(getResult()), getRanks());
}

LogicalResult TpReduceOp::verify() {
  return verifySequencePair(*this, getSequence(), tensorOf(getResult()), tensorOf(getInput()), getRanks());
}

LogicalResult SpShardOp::verify() {
  return verifySequenceShard(*this, tensorOf(getResult()), tensorOf(getInput()), getRanks());
}

LogicalResult SpGatherOp::verify() {
  return verifySequenceShard(*this, tensorOf(getInput()), tensorOf(getResult()), getRanks());
}

LogicalResult AllGatherStartOp::verify() {
  if (failed(verifyShardedPair(*this, tensorOf(getInput()), awaited(getHandle()), getRanks())))
    return failure();
  return verifyWaitedOnce(*this);
}

LogicalResult ReduceScatterStartOp::verify() {
  if (failed(verifyReduceScatterShapes(*this, tensorOf(getInput()), awaited(getHandle()), getRanks())))
    return failure();
  return verifyWaitedOnce(*this);
}

LogicalResult AllReduceStartOp::verify() {
  if (tensorOf(getInput()) != awaited(getHandle()))
    return emitOpError() << "handle must produce the input's type " << getInput().getType()
                         << ", got " << awaited(getHandle());
  return verifyWaitedOnce(*this);
}

LogicalResult WaitOp::verify() {
  Operation *start = getHandle().getDefiningOp();
  if (!start || !isCollectiveStart(start))
    return emitOpError("handle must come from a zc.*_start op");
  if (start->getBlock() != (*this)->getBlock())
    return emitOpError("must be in the same block as its zc.*_start op");
  return success();
}

LogicalResult ReleaseOp::verify() {
  Block *block = (*this)->getBlock();
  for (Operation *user : getInput().getUsers()) {
    if (user == getOperation())
      continue;
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (ancestor && (*this)->isBeforeInBlock(ancestor))
    {
      InFlightDiagnostic diag = emitOpError("must be the last use of its operand, but '")
                                << user->getName() << "' uses it afterwards";
      diag.attachNote(user->getLoc()) << "later use here";
      return diag;
    }
  }
  return success();
}

namespace {
/// Elements of the bucket `zc.pack` makes of tensors of `types` over `ranks`.
FailureOr<int64_t> bucketElements(Operation *op, TypeRange types, int64_t ranks) {
  if (types.empty())
    return op->emitOpError("needs at least one tensor");
  if (failed(verifySameElementType(op, SmallVector<Type>(types))))
    return failure();
  int64_t shard = 0;
  for (Type t : types)
    shard += (cast<RankedTensorType>(t).getNumElements() + ranks - 1) / ranks;
  return shard * ranks;
}

LogicalResult verifyBucket(Operation *op, TypeRange tensors, RankedTensorType bucket, int64_t ranks) {
  FailureOr<int64_t> elements = bucketElements(op, tensors, ranks);
  if (failed(elements))
    return failure();
  auto expected = RankedTensorType::get({*elements}, cast<RankedTensorType>(tensors[0]).getElementType());
  if (bucket != expected)
    return op->emitOpError() << "bucket of these tensors over " << ranks << " ranks is " << expected
                             << ", got " << bucket;
  return success();
}
} // namespace

LogicalResult PackOp::verify() {
  return verifyBucket(*this, getInputs().getTypes(), tensorOf(getResult()), getRanks());
}

LogicalResult UnpackOp::verify() {
  return verifyBucket(*this, getResults().getTypes(), tensorOf(getInput()), getRanks());
}

namespace {
/// `local` is `whole` with axis `axis` holding 2 of its 2 x `ranks` chunks.
LogicalResult verifyContextChunks(Operation *op, RankedTensorType local, RankedTensorType whole, int64_t ranks,
                                  int64_t axis) {
  if (local.getElementType() != whole.getElementType() || local.getRank() != whole.getRank())
    return op->emitOpError() << local << " and " << whole << " must share element type and rank";
  if (axis >= whole.getRank())
    return op->emitOpError() << "axis " << axis << " is outside " << whole;
  for (int64_t d = 0; d < whole.getRank(); ++d)
    if (d == axis ? whole.getDimSize(d) != ranks * local.getDimSize(d) || whole.getDimSize(d) % (2 * ranks) != 0
                  : whole.getDimSize(d) != local.getDimSize(d))
      return op->emitOpError() << local << " must be " << whole << " with axis " << axis
                               << " holding 2 of its 2 x " << ranks << " chunks";
  return success();
}

/// `tokens` is [B, L, H x D] and `heads` [B, ranks x L, H / ranks x D], L even (two chunks).
LogicalResult verifyTokensHeads(Operation *op, RankedTensorType tokens, RankedTensorType heads, int64_t ranks,
                                int64_t numHeads) {
  if (tokens.getRank() != 3 || heads.getRank() != 3 || tokens.getElementType() != heads.getElementType())
    return op->emitOpError("expects [B, L, H x D] and [B, ranks x L, H / ranks x D] of one element type");
  if (numHeads % ranks != 0 || tokens.getDimSize(2) % numHeads != 0 || tokens.getDimSize(1) % 2 != 0)
    return op->emitOpError() << numHeads << " heads of " << tokens << " must split over " << ranks
                             << " context ranks, and the tokens into two chunks";
  if (heads.getDimSize(0) != tokens.getDimSize(0) || heads.getDimSize(1) != ranks * tokens.getDimSize(1) ||
      heads.getDimSize(2) * ranks != tokens.getDimSize(2))
    return op->emitOpError() << tokens << " (this rank's tokens) and " << heads
                             << " (this rank's heads) do not match over " << ranks << " context ranks";
  return success();
}
} // namespace

LogicalResult CpShardOp::verify() {
  return verifyContextChunks(*this, tensorOf(getResult()), tensorOf(getInput()), getRanks(), getAxis());
}

LogicalResult CpUnshardOp::verify() {
  return verifyContextChunks(*this, tensorOf(getInput()), tensorOf(getResult()), getRanks(), getAxis());
}

LogicalResult CpToHeadsOp::verify() {
  return verifyTokensHeads(*this, tensorOf(getInput()), tensorOf(getResult()), getRanks(), getHeads());
}

LogicalResult CpToTokensOp::verify() {
  return verifyTokensHeads(*this, tensorOf(getResult()), tensorOf(getInput()), getRanks(), getHeads());
}

LogicalResult PipeStashOp::verify() {
  auto arg = dyn_cast<BlockArgument>(getStash());
  auto fn = arg ? dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp()) : nullptr;
  auto role = fn ? fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "zc.input") : nullptr;
  if (!role || role.getValue() != "stash")
    return emitOpError("stash must be an argument of the function with zc.input = \"stash\"");
  return success();
}
