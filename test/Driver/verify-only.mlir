// Tests that --verify-only accepts a valid model silently with exit 0, and
// that without it zcc writes the verified module to -o.
// RUN: zcc %s --verify-only 2>&1 | count 0
// RUN: zcc %s -o %t.mlir && FileCheck %s < %t.mlir
// RUN: zcc %s --emit=mlir | FileCheck %s

// CHECK: zc.param @w : tensor<4x3xf32> = #zc.normal<std = 0.1>
// CHECK-LABEL: zc.forward @f
// CHECK: zc.cross_entropy
zc.param @w : tensor<4x3xf32> = #zc.normal<std = 0.1>
zc.forward @f(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4x3xf32>
  %l = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %loss = zc.cross_entropy %l, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
