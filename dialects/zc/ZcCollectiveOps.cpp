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

LogicalResult ReduceScatterOp::verify() {
  // ZeRO's padded form: any input, flattened and zero-padded to `ranks` 1-D shards.
  RankedTensorType input = tensorOf(getInput()), result = tensorOf(getResult());
  int64_t ranks = getRanks();
  if (result.getRank() == 1 && input.getElementType() == result.getElementType() &&
      result.getDimSize(0) == (input.getNumElements() + ranks - 1) / ranks)
    return success();
  return verifyShardedPair(*this, result, input, ranks);
}

LogicalResult AllGatherStartOp::verify() {
  if (failed(verifyShardedPair(*this, tensorOf(getInput()), awaited(getHandle()), getRanks())))
    return failure();
  return verifyWaitedOnce(*this);
}

LogicalResult ReduceScatterStartOp::verify() {
  if (failed(verifyShardedPair(*this, awaited(getHandle()), tensorOf(getInput()), getRanks())))
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
