//===- ZcDialect.cpp - registration of the zc dialect and its attributes/types ===//

#include "dialects/zc/ZcDialect.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstdio>
#include <cstdlib>

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
  registerZcDialectOperations(this); // the shards' (dialects/zc/CMakeLists.txt)
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

/// The shortest decimal text that reads back to the same double (0.05, not
/// 0.050000000000000003), with a '.' or exponent so it parses as a float.
static SmallString<32> shortestFloatText(const llvm::APFloat &value) {
  double v = value.convertToDouble();
  char buffer[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, v);
    if (std::strtod(buffer, nullptr) == v)
      break;
  }
  // MLIR's lexer needs a '.' in a float literal, also before an exponent.
  StringRef digits(buffer);
  if (digits.contains('.') || digits.contains_insensitive("nan") ||
      digits.contains_insensitive("inf"))
    return SmallString<32>(digits);
  size_t exponent = digits.find('e');
  SmallString<32> text(digits.take_front(exponent));
  text += ".0";
  if (exponent != StringRef::npos)
    text += digits.drop_front(exponent);
  return text;
}

void mlir::zc::printF64Param(AsmPrinter &printer, const llvm::APFloat &value) {
  printer << shortestFloatText(value);
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
    return emitError() << "normal initializer needs a positive finite std, got "
                       << shortestFloatText(stdFloat);
  if (!std::isfinite(mean))
    return emitError() << "normal initializer needs a finite mean, got "
                       << shortestFloatText(meanFloat);
  return success();
}

LogicalResult UniformInitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      llvm::APFloat lowFloat, llvm::APFloat highFloat) {
  double low = lowFloat.convertToDouble(), high = highFloat.convertToDouble();
  if (!std::isfinite(low) || !std::isfinite(high))
    return emitError() << "uniform initializer needs finite bounds";
  if (!(low < high))
    return emitError() << "uniform initializer needs low < high, got ["
                       << shortestFloatText(lowFloat) << ", " << shortestFloatText(highFloat)
                       << ")";
  return success();
}
