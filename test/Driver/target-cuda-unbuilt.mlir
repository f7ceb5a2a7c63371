// UNSUPPORTED: cuda
// A zcc built without the CUDA backend refuses a --target=cuda executable, and says how to get the
// object instead.
// RUN: not zcc %zcc_src_root/examples/gpt.mlir --target=cuda -o %t.bin 2>&1 | FileCheck %s
// CHECK: zcc: error: this zcc was built without the CUDA backend (no CUDA toolkit, NCCL or MPI at build time); --emit=obj writes the object for a runtime built elsewhere
