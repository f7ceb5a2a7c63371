//===- Driver.h - the zcc command-line driver ----------------------------===//

#ifndef ZCC_DRIVER_H
#define ZCC_DRIVER_H

namespace zcc {

/// Runs `zcc` with the given command line; returns the process exit code
/// (0 on success, 1 on any diagnosed error).
int runZccMain(int argc, char **argv);

} // namespace zcc

#endif // ZCC_DRIVER_H
