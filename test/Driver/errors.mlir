// Tests the driver's error contract: `file:line:col: error: ...` on stderr,
// exit code 1, and no output file left behind. The driver's stderr is the
// product here, so these cases check it directly (op verifier errors are
// tested with -verify-diagnostics under test/Dialect).

// A syntax error, located.
// RUN: not zcc %S/Inputs/syntax-error.mlir --verify-only 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: syntax-error.mlir:3:18: error: expected ':'

// A verifier error, located at the op.
// RUN: not zcc %S/Inputs/verifier-error.mlir --verify-only 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: verifier-error.mlir:3:8: error: 'zc.bias_add' op bias has 4 elements but the input's last axis has 8

// A model-level error from the pipeline, located; the exit code is exactly 1
// and -o is not created.
// RUN: rm -f %t.out
// RUN: not zcc %S/Inputs/unused-param.mlir -o %t.out 2>&1 | FileCheck %s --check-prefix=MODEL
// RUN: test ! -e %t.out
// RUN: zcc %S/Inputs/unused-param.mlir -o %t.out 2>/dev/null; test $? -eq 1
// MODEL: unused-param.mlir:2:1: error: 'zc.param' op 'v' is never read by the forward function

// A missing input file.
// RUN: not zcc %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: zcc: error: cannot open input file '{{.*}}does-not-exist.mlir'

// An output path that cannot be written.
// RUN: not zcc %zcc_src_root/examples/mlp.mlir --emit=mlir -o %t.no-such-dir/x.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: zcc: error: {{.*}}no-such-dir/x.mlir

// Option values the pipeline does not support.
// RUN: not zcc %zcc_src_root/examples/mlp.mlir --precision fp16 -o %t.fp16 2>&1 | FileCheck %s --check-prefix=PRECISION
// PRECISION: zcc: error: --precision must be fp32 or bf16, got fp16
// RUN: not zcc %zcc_src_root/examples/mlp.mlir --world-size 0 -o %t.ws 2>&1 | FileCheck %s --check-prefix=WORLD
// WORLD: zcc: error: --world-size must be at least 1, got 0

// Brackets nested past what MLIR's recursive parser survives (the fuzzer's
// stack overflow): refused, located at the first bracket too deep, before parsing.
// Strings and comments do not count, and `->` closes nothing.
// RUN: %python -c "print('zc.param @w : ' + '[' * 20000 + ']' * 20000)" > %t.deep.mlir
// RUN: not zcc %t.deep.mlir -o %t.deep.bin 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: test ! -e %t.deep.bin
// DEEP: deep.mlir:1:271: error: brackets nested deeper than 256 levels
// RUN: zcc %S/Inputs/brackets-in-comments-and-strings.mlir --verify-only
