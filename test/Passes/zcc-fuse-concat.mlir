// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-fuse | FileCheck %s
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-fuse -zcc-optimizer -zcc-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// One projection sliced into three parts (attention's q, k and v): autodiff sums three
// slice_grads, each zero-filling the whole [2, 4, 12] gradient; zcc-fuse writes the sum as
// the concatenation of the three gradients, in the order of their offsets.

zc.param @w : tensor<6x12xf32> = #zc.normal<std = 0.1>
zc.forward @qkv(%x: tensor<2x4x6xf32> {zc.input = "features"}, %y: tensor<2x4xi32> {zc.input = "labels"}) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<6x12xf32>
  %p = zc.matmul %x, %w : tensor<2x4x6xf32>, tensor<6x12xf32> -> tensor<2x4x12xf32>
  %q = zc.slice %p [0, 0, 0] : tensor<2x4x12xf32> -> tensor<2x4x4xf32>
  %k = zc.slice %p [0, 0, 4] : tensor<2x4x12xf32> -> tensor<2x4x4xf32>
  %v = zc.slice %p [0, 0, 8] : tensor<2x4x12xf32> -> tensor<2x4x4xf32>
  %a = zc.causal_attention %q, %k, %v heads 2 : tensor<2x4x4xf32>
  %loss = zc.cross_entropy %a, %y : tensor<2x4x4xf32>, tensor<2x4xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
// CHECK-LABEL: func.func @qkv_step
// CHECK: %[[DQ:.+]], %[[DK:.+]], %[[DV:.+]] = zc.causal_attention_grad
// CHECK-NOT: zc.slice_grad
// CHECK-NOT: zc.add
// CHECK: %[[DP:.+]] = zc.concat %[[DQ]], %[[DK]], %[[DV]] axis 2 : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x12xf32>
// CHECK: zc.matmul %{{.+}}, %{{.+}} transpose_lhs
// CHECK-NOT: zc.slice_grad

// LLVM-LABEL: llvm.func @zcc_step
// LLVM-NOT: zrt_fill_zero
// LLVM-COUNT-3: llvm.call @zrt_insert(
// LLVM-NOT: zrt_add
// LLVM-LABEL: llvm.func @zcc_update

// -----

// Two slices that leave a gap (columns 4-7 are never read) are not a concatenation: the
// slice_grads and their sum stay.

zc.param @w : tensor<6x12xf32> = #zc.normal<std = 0.1>
zc.forward @gap(%x: tensor<2x6xf32> {zc.input = "features"}, %y: tensor<2xi32> {zc.input = "labels"}) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<6x12xf32>
  %p = zc.matmul %x, %w : tensor<2x6xf32>, tensor<6x12xf32> -> tensor<2x12xf32>
  %a = zc.slice %p [0, 0] : tensor<2x12xf32> -> tensor<2x4xf32>
  %b = zc.slice %p [0, 8] : tensor<2x12xf32> -> tensor<2x4xf32>
  %s = zc.mul %a, %b : tensor<2x4xf32>
  %loss = zc.cross_entropy %s, %y : tensor<2x4xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
// CHECK-LABEL: func.func @gap_step
// CHECK: zc.slice_grad
// CHECK: zc.slice_grad
// CHECK: zc.add
// CHECK-NOT: zc.concat

// -----

// Overlapping boxes (columns 0-7 and 4-11) add where they meet: not a concatenation either.

zc.param @w : tensor<6x12xf32> = #zc.normal<std = 0.1>
zc.forward @overlap(%x: tensor<2x6xf32> {zc.input = "features"}, %y: tensor<2xi32> {zc.input = "labels"}) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<6x12xf32>
  %p = zc.matmul %x, %w : tensor<2x6xf32>, tensor<6x12xf32> -> tensor<2x12xf32>
  %a = zc.slice %p [0, 0] : tensor<2x12xf32> -> tensor<2x8xf32>
  %b = zc.slice %p [0, 4] : tensor<2x12xf32> -> tensor<2x8xf32>
  %s = zc.mul %a, %b : tensor<2x8xf32>
  %loss = zc.cross_entropy %s, %y : tensor<2x8xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
// CHECK-LABEL: func.func @overlap_step
// CHECK: zc.slice_grad
// CHECK: zc.slice_grad
// CHECK: zc.add
// CHECK-NOT: zc.concat
