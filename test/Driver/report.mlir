// --report prints each rank's plan; --report=json writes it next to the output. The MLP
// (235146 parameters, 6 tensors) at 2 ranks, ZeRO-3: every buffer is a padded shard.
// RUN: zcc %zcc_src_root/examples/mlp.mlir --world-size 2 --zero-stage 3 --param-persistence-threshold 0 --emit=mlir -o %t.mlir --report --bucket-mb 0 --gather-bucket-mb 0 --no-overlap | FileCheck %s
// RUN: zcc %zcc_src_root/examples/mlp.mlir --world-size 2 --zero-stage 3 --param-persistence-threshold 0 --emit=mlir -o %t.mlir --report | FileCheck %s --check-prefix=BUCKET
// RUN: zcc %zcc_src_root/examples/mlp.mlir --world-size 2 --zero-stage 3 --param-persistence-threshold 0 --emit=mlir -o %t.mlir --report=json
// RUN: FileCheck %s --check-prefix=JSON < %t.mlir.report.json
// RUN: zcc %zcc_src_root/examples/mlp.mlir --world-size 2 --zero-stage 3 --emit=mlir -o %t.mlir --report | FileCheck %s --check-prefix=PERSIST
// RUN: not zcc %zcc_src_root/examples/mlp.mlir --report=xml -o %t.x 2>&1 | FileCheck %s --check-prefix=BAD

// Without buckets: one collective per tensor.
// CHECK: zcc plan, per rank:
// CHECK-NEXT: param_bytes 470292
// CHECK-NEXT: grad_bytes 470292
// CHECK-NEXT: optimizer_bytes 940584
// CHECK-NEXT: model_state_bytes 1881168
// The largest layer (784x256 weights, 802816 B) and its bias (1024 B): the fused matmul_bias
// reads both.
// CHECK-NEXT: gathered_param_peak_bytes 803840
// CHECK-NEXT: per step: all_gather 8, reduce_scatter 6, all_reduce 0, comm_bytes 1008680

// Default buckets (1 MiB here): the six parameters in two gather groups (forward,
// backward) and one gradient reduce-scatter; the same bytes sent.
// BUCKET: gathered_param_peak_bytes 940584
// BUCKET-NEXT: per step: all_gather 2, reduce_scatter 1, all_reduce 0, comm_bytes 1008680

// JSON: "comm_bytes": 1008680
// JSON: "param_tensors": 6

// The default persistence threshold (DeepSpeed's, 100000 elements): only fc1's weights
// (200704) are sharded and gathered; the rest stays whole on each rank (401408 + 137768 B).
// PERSIST: param_bytes 539176
// PERSIST: gathered_param_peak_bytes 802816

// BAD: zcc: error: --report is text or json, got xml
