// --precision bf16: the compiled step reads bf16 casts of the fp32 parameters, and the
// fp32 gradients reach the optimizer; the executable's model description keeps fp32 params.
// RUN: zcc %zcc_src_root/examples/mlp.mlir --precision bf16 --emit=mlir | FileCheck %s
// RUN: zcc %zcc_src_root/examples/mlp.mlir --precision bf16 --emit=mlir | FileCheck %s --check-prefix=JSON
// RUN: zcc %zcc_src_root/examples/mlp.mlir --precision bf16 -o %t.bin
// RUN: %t.bin --synthetic --steps 3 --log-every 1 | FileCheck %s --check-prefix=TRAIN

// CHECK: llvm.func @zcc_step
// CHECK: llvm.call @zrt_cast
// CHECK: llvm.call @zrt_matmul
// CHECK: llvm.func @zcc_update
// CHECK: llvm.call @zrt_adamw
// JSON: zcc_model_json
// JSON-SAME: \22name\22:\22fc1_w\22
// JSON-NOT: bf16

// TRAIN-COUNT-3: step {{[0-9]+}} | loss {{[0-9.]+}}
