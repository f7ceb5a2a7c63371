// Tests that --help lists zcc's flags and --version names zcc and MLIR.
// RUN: zcc --help | FileCheck %s --check-prefix=HELP
// RUN: zcc --version | FileCheck %s --check-prefix=VERSION

// HELP: USAGE: zcc [options] <model.mlir>
// HELP-DAG: --emit=<value>
// HELP-DAG: =mlir
// HELP-DAG: -o <file>
// HELP-DAG: --verify-only
// HELP-DAG: --version

// VERSION: zcc {{[0-9]+\.[0-9]+\.[0-9]+}} (MLIR 22.
