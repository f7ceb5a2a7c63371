// Tests that --verify-only accepts a valid model silently with exit 0, that zcc
// writes an executable by default, and the lowered module or LLVM IR on request.
// RUN: zcc %s --verify-only 2>&1 | count 0
// RUN: zcc %s -o %t.bin && %t.bin --help | FileCheck %s --check-prefix=EXE
// RUN: zcc %s --emit=mlir | FileCheck %s
// RUN: zcc %s --emit=llvm | FileCheck %s --check-prefix=LLVM
// RUN: zcc %s --emit=obj -o %t.o && test -s %t.o
// RUN: not zcc %s 2>&1 | FileCheck %s --check-prefix=NO-OUTPUT

// EXE: usage: train.bin
// CHECK-LABEL: llvm.func @zcc_step
// CHECK: llvm.call @zrt_matmul
// CHECK: llvm.call @zrt_cross_entropy
// CHECK-LABEL: llvm.func @zcc_update
// CHECK: llvm.call @zrt_adamw
// CHECK: llvm.mlir.global external constant @zcc_model_json
// LLVM: define float @zcc_step(ptr %0, ptr %1)
// LLVM: define void @zcc_update(ptr %0, double %1, i64 %2)
// NO-OUTPUT: zcc: error: an executable needs -o FILE
zc.param @w : tensor<4x3xf32> = #zc.normal<std = 0.1>
zc.forward @f(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4x3xf32>
  %l = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %loss = zc.cross_entropy %l, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
