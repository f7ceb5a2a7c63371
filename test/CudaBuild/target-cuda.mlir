// REQUIRES: cuda
// UNSUPPORTED: gpu
// --target=cuda compiles and links a train.bin against the CUDA runtime (cuBLASLt, NCCL)
// on a machine without a GPU; started here, it stops at once with a clear message.
// RUN: zcc %zcc_src_root/examples/gpt.mlir --target=cuda --world-size 1 -o %t.bin
// RUN: %t.bin --describe | FileCheck %s --check-prefix=DESCRIBE
// RUN: not %t.bin --data %zcc_src_root/test/Inputs/corpus.txt --steps 1 2>&1 | FileCheck %s
// RUN: zcc %zcc_src_root/examples/gpt.mlir --target=cuda --world-size 2 --zero-stage 3 --param-persistence-threshold 0 --precision bf16 -o %t2.bin
// RUN: not zcc %zcc_src_root/examples/gpt.mlir --target=tpu -o %t3.bin 2>&1 | FileCheck %s --check-prefix=BAD
// ZeRO-Offload on the GPU: the optimizer state (and ZeRO-3's shards) in host memory, updated by
// the CPU, and activations in host memory between the passes; ZeRO-Infinity: state and shards on
// NVMe, swapped into the arena's device slots. The train.bins link the host side of both.
// RUN: zcc %zcc_src_root/examples/gpt.mlir --target=cuda --world-size 2 --zero-stage 3 --param-persistence-threshold 0 --precision bf16 --offload-optimizer cpu --offload-param cpu --offload-activations cpu -o %t4.bin
// RUN: %t4.bin --describe | FileCheck %s --check-prefix=OFFLOAD
// RUN: zcc %zcc_src_root/examples/gpt.mlir --target=cuda --world-size 2 --zero-stage 3 --param-persistence-threshold 0 --offload-optimizer nvme --offload-param nvme -o %t5.bin
// RUN: %t5.bin --describe | FileCheck %s --check-prefix=NVME
// Context parallelism in both modes: ring attention's kernels and NCCL ring links too.
// RUN: zcc %zcc_src_root/examples/gpt.mlir --target=cuda --world-size 2 --cp 2 --cp-mode ring -o %t6.bin
// RUN: %t6.bin --describe | FileCheck %s --check-prefix=CONTEXT
// RUN: zcc %zcc_src_root/examples/gpt.mlir --target=cuda --world-size 2 --cp 2 --cp-mode ulysses -o %t7.bin
// RUN: %t7.bin --describe | FileCheck %s --check-prefix=CONTEXT

// DESCRIBE: "model":"gpt"
// CHECK: zrt: rank 0: cuda: no usable CUDA device ({{.+}}): this train.bin was compiled with --target=cuda; compile with --target=cpu to train on the CPU
// BAD: zcc: error: --target must be cpu or cuda, got tpu
// OFFLOAD: "tiers":{"host_bytes":{{[1-9][0-9]*}}
// CONTEXT: "mesh":{"cp":2,"pp":1,"tp":1}
// NVME: "tiers":{"host_bytes":0,"nvme_bytes":{{[1-9][0-9]*}}
