//===- ZcCollectiveOps.cpp - verifiers of collectives, wait and release ---===//

#include "dialects/zc/ZcDialect.h"
#include "dialects/zc/ZcVerifyUtils.h"

using namespace mlir;
using namespace mlir::zc;
using namespace mlir::zc::detail;

namespace {
/// A started collective must be finished by exactly one zc.wait, or the
/// communication stream would hold a transfer nobody completes.
LogicalResult verifyWaitedOnce(Operation *start) {
  Value handle = start->getResult(0);
  if (!handle.hasOneUse() || !isa<WaitOp>(*handle.getUsers().begin()))
    return start->emitOpError("handle must be waited on by exactly one zc.wait");
  return success();
}

RankedTensorType awaited(Value handle) {
  return cast<AsyncType>(handle.getType()).getValueType();
}
} // namespace

LogicalResult AllGatherOp::verify() {
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
  return verifyReduceScatterShapes(*this, tensorOf(getInput()), tensorOf(getResult()), getRanks());
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
  if (!start || !isa<AllGatherStartOp, ReduceScatterStartOp, AllReduceStartOp>(start))
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
