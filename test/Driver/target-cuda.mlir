// REQUIRES: cuda
// UNSUPPORTED: gpu
// --target=cuda compiles and links a train.bin against the CUDA runtime (cuBLASLt, NCCL)
// on a machine without a GPU; started here, it stops at once with a clear message.
// RUN: zcc %zcc_src_root/examples/gpt.mlir --target=cuda --world-size 1 -o %t.bin
// RUN: %t.bin --describe | FileCheck %s --check-prefix=DESCRIBE
// RUN: not %t.bin --data %zcc_src_root/docs/dialect.md --steps 1 2>&1 | FileCheck %s
// RUN: zcc %zcc_src_root/examples/gpt.mlir --target=cuda --world-size 2 --zero-stage 3 --precision bf16 -o %t2.bin
// RUN: not zcc %zcc_src_root/examples/gpt.mlir --target=tpu -o %t3.bin 2>&1 | FileCheck %s --check-prefix=BAD

// DESCRIBE: "model":"gpt"
// CHECK: zrt: rank 0: cuda: no usable CUDA device ({{.+}}): this train.bin was compiled with --target=cuda; compile with --target=cpu to train on the CPU
// BAD: zcc: error: --target must be cpu or cuda, got tpu
