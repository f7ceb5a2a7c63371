#!/usr/bin/env python3
"""Checks that every zc op is round-tripped in ops.mlir and has an error case in invalid.mlir.

usage: check_op_coverage.py DIALECT_DIR OPS_MLIR INVALID_MLIR
"""
import pathlib
import re
import sys

# `def ZC_FooOp : ZC_<Kind>Op<"foo"` in any of the dialect's .td files.
OP_DEF = re.compile(r'^def\s+ZC_\w+Op\s*:\s*ZC_\w*Op<"([a-z_]+)"', re.M)


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    dialect_dir, ops_path, invalid_path = map(pathlib.Path, argv[1:])
    ops = sorted({m for td in dialect_dir.glob("*.td") for m in OP_DEF.findall(td.read_text())})
    if not ops:
        sys.exit(f"no op definitions found under {dialect_dir}")
    ops_text = ops_path.read_text()
    # An error case names the op in an expected-error or is the op in the
    # line an expected-error points at; requiring the quoted op name in the
    # diagnostic keeps it simple and strict.
    invalid_text = invalid_path.read_text()
    missing = []
    for op in ops:
        if not re.search(rf'"?zc\.{op}"?[\s(]', ops_text):
            missing.append(f"zc.{op}: not round-tripped in {ops_path.name}")
        if f"'zc.{op}' op" not in invalid_text and not re.search(
                rf"expected-error[^\n]*\n[^\n]*zc\.{op}\b", invalid_text):
            missing.append(f"zc.{op}: no error case in {invalid_path.name}")
    for line in missing:
        print(line)
    print(f"{len(ops)} ops checked, {len(missing)} gaps")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
