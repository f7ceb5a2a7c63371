//===- ZcDialect.cpp - registration of the zc dialect and its attributes/types ===//

#include "dialects/zc/ZcDialect.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::zc;

#include "dialects/zc/ZcDialect.cpp.inc"
#include "dialects/zc/ZcEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/zc/ZcAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/zc/ZcTypes.cpp.inc"

void ZcDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/zc/ZcAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/zc/ZcTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/zc/ZcOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Float parameters
//===----------------------------------------------------------------------===//

FailureOr<llvm::APFloat> mlir::zc::parseF64Param(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return llvm::APFloat(value);
}

void mlir::zc::printF64Param(AsmPrinter &printer, const llvm::APFloat &value) {
  // APFloat::toString gives the shortest digits that read back to the same
  // double; keep a '.' or exponent so the parser sees a float, not an integer.
  SmallString<32> text;
  value.toString(text);
  if (text.find_first_of(".eEnN") == StringRef::npos)
    text += ".0";
  printer << text;
}

//===----------------------------------------------------------------------===//
// Initializer attributes
//===----------------------------------------------------------------------===//

bool mlir::zc::isInitializerAttr(Attribute attr) {
  return isa<ZerosInitAttr, OnesInitAttr, NormalInitAttr, UniformInitAttr>(attr);
}

LogicalResult NormalInitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                     llvm::APFloat stdFloat, llvm::APFloat meanFloat) {
  double std = stdFloat.convertToDouble(), mean = meanFloat.convertToDouble();
  if (!(std > 0.0) || !std::isfinite(std))
    return emitError() << "normal initializer needs a positive finite std, got " << std;
  if (!std::isfinite(mean))
    return emitError() << "normal initializer needs a finite mean, got " << mean;
  return success();
}

LogicalResult UniformInitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      llvm::APFloat lowFloat, llvm::APFloat highFloat) {
  double low = lowFloat.convertToDouble(), high = highFloat.convertToDouble();
  if (!std::isfinite(low) || !std::isfinite(high))
    return emitError() << "uniform initializer needs finite bounds";
  if (!(low < high))
    return emitError() << "uniform initializer needs low < high, got [" << low << ", "
                       << high << ")";
  return success();
}
