//===- InitAll.h - registers every dialect and pass zcc uses -------------===//

#ifndef ZCC_INITALL_H
#define ZCC_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace zcc {

/// The zc dialect and the upstream dialects zcc's pipeline produces.
void registerZccDialects(mlir::DialectRegistry &registry);

/// Every zcc pass and the named pipeline, for zcc-opt's command line.
void registerZccPasses();

} // namespace zcc

#endif // ZCC_INITALL_H
