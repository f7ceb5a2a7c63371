//===- ZcOps.cpp - parameter and function ops, the ops' custom syntax -----===//
//
// Verifiers of the other op groups live in ZcComputeOps.cpp, ZcGradOps.cpp and
// ZcCollectiveOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/zc/ZcOpDefsShard.h"

using namespace mlir;
using namespace mlir::zc;

/// causal_attention's types: the query's (also the result's or the incoming gradient's), then
/// the key's and value's where they differ (grouped-query attention): `: tensor<..>[, tensor<..>]`.
ParseResult mlir::zc::parseAttentionTypes(OpAsmParser &parser, Type &query, Type &key, Type &value,
                                          Type &sameAsQuery) {
  if (parser.parseType(query))
    return failure();
  key = query;
  if (succeeded(parser.parseOptionalComma()) && parser.parseType(key))
    return failure();
  value = key;
  sameAsQuery = query;
  return success();
}
void mlir::zc::printAttentionTypes(OpAsmPrinter &p, Operation *, Type query, Type key, Type, Type) {
  p << query;
  if (key != query)
    p << ", " << key;
}

//===----------------------------------------------------------------------===//
// ParamOp / ParamRefOp
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  if (getTensorType().getNumElements() == 0)
    return emitOpError("parameter '") << getSymName() << "' has no elements";
  return success();
}

LogicalResult ParamRefOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, getNameAttr());
  if (!param)
    return emitOpError() << "'" << getNameAttr() << "' does not name a zc.param";
  if (param.getType() != getType())
    return emitOpError() << "result type " << getType() << " differs from parameter '"
                         << getNameAttr() << "' declared as " << param.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// ForwardOp / ReturnOp
//===----------------------------------------------------------------------===//

ParseResult ForwardOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType = [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
                          function_interface_impl::VariadicFlag, std::string &) {
    return builder.getFunctionType(argTypes, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false, getFunctionTypeAttrName(result.name),
      buildFuncType, getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void ForwardOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(p, *this, /*isVariadic=*/false,
                                           getFunctionTypeAttrName(), getArgAttrsAttrName(),
                                           getResAttrsAttrName());
}

LogicalResult ForwardOp::verify() {
  FunctionType type = getFunctionType();
  if (type.getNumInputs() == 0)
    return emitOpError("takes the batch as arguments, but has none");
  for (auto [index, argType] : llvm::enumerate(type.getInputs())) {
    auto tensor = dyn_cast<RankedTensorType>(argType);
    if (!tensor || !tensor.hasStaticShape())
      return emitOpError() << "argument #" << index
                           << " must be a statically shaped tensor, got " << argType;
  }
  if (type.getNumResults() != 1)
    return emitOpError("must return exactly one value, the loss; got ")
           << type.getNumResults();
  auto loss = dyn_cast<RankedTensorType>(type.getResult(0));
  if (!loss || loss.getRank() != 0 || !loss.getElementType().isF32())
    return emitOpError("must return the loss as tensor<f32>, got ") << type.getResult(0);
  return success();
}

LogicalResult ReturnOp::verify() {
  auto function = cast<ForwardOp>((*this)->getParentOp());
  ArrayRef<Type> expected = function.getFunctionType().getResults();
  if (getNumOperands() != expected.size())
    return emitOpError() << "returns " << getNumOperands() << " values but '"
                         << function.getSymName() << "' declares " << expected.size();
  for (auto [index, pair] : llvm::enumerate(llvm::zip(getOperandTypes(), expected)))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError() << "operand #" << index << " has type " << std::get<0>(pair)
                           << " but '" << function.getSymName() << "' returns "
                           << std::get<1>(pair);
  return success();
}
