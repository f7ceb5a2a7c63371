// --precision bf16: parameters and gradients are stored in bf16, the step reads the
// parameters directly (only the float input is cast), and the update runs AdamW on the
// fp32 master copies, rounding them into the bf16 parameters.
// RUN: zcc %zcc_src_root/examples/mlp.mlir --precision bf16 --emit=mlir | FileCheck %s
// RUN: zcc %zcc_src_root/examples/mlp.mlir --precision bf16 --emit=mlir | FileCheck %s --check-prefix=JSON
// RUN: zcc %zcc_src_root/examples/mlp.mlir --precision bf16 -o %t.bin
// RUN: %t.bin --synthetic --steps 3 --log-every 1 | FileCheck %s --check-prefix=TRAIN

// CHECK: llvm.func @zcc_step
// CHECK: llvm.call @zrt_cast
// CHECK-NOT: llvm.call @zrt_cast
// CHECK: llvm.call @zrt_matmul
// CHECK: llvm.func @zcc_update
// CHECK-COUNT-6: llvm.call @zrt_adamw
// JSON: zcc_model_json
// JSON-SAME: \22dtype\22:\22bf16\22,{{.*}}\22master_offset\22:{{[0-9]+}},\22master_tier\22:0,\22name\22:\22fc1_w\22
// JSON-SAME: \22role\22:\22master\22

// Model state, 235146 values: bf16 params and grads (2 + 2 bytes each), fp32 master and
// moments (12 bytes each).
// TRAIN: model state per rank: params 470292 B, grads 470292 B, optimizer 2821752 B
// TRAIN-COUNT-3: step {{[0-9]+}} | loss {{[0-9.]+}}
