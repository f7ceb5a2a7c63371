//===- Driver.h - the zcc command-line driver ----------------------------===//

#ifndef ZCC_DRIVER_H
#define ZCC_DRIVER_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace zcc {

/// Runs `zcc` with the given command line; returns the process exit code
/// (0 on success, 1 on any diagnosed error).
int runZccMain(int argc, char **argv);

/// Model-level checks beyond op verification: one zc.forward, at least one
/// zc.param, every parameter read somewhere. Emits located errors.
mlir::LogicalResult verifyModel(mlir::ModuleOp module);

} // namespace zcc

#endif // ZCC_DRIVER_H
