//===- zcc-opt.cpp - mlir-opt with the zc dialect and every zcc pass ------===//
//
// What the lit suite drives: any pass or the whole zcc pipeline on any IR.
//
//===----------------------------------------------------------------------===//

#include "zcc/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  zcc::registerZccDialects(registry);
  zcc::registerZccPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "zcc optimizer driver\n", registry));
}
