// RUN: zcc-opt %s -split-input-file -zcc-shard-batch="ranks=2 micro-batches=2" -verify-diagnostics | FileCheck %s

// Tests that axis 0 of the arguments is split over ranks x micro-batches and that
// every type downstream follows, through reshapes, embeddings and matmuls.

zc.param @wte : tensor<16x4xf32> = #zc.normal<std = 0.1>
zc.param @wpe : tensor<3x4xf32> = #zc.normal<std = 0.1>
// CHECK-LABEL: zc.forward @lm(%{{.+}}: tensor<2x3xi32>, %{{.+}}: tensor<2x3xi32>)
zc.forward @lm(%ids: tensor<8x3xi32>, %tgt: tensor<8x3xi32>) -> tensor<f32> {
  %wte = zc.param_ref @wte : tensor<16x4xf32>
  %wpe = zc.param_ref @wpe : tensor<3x4xf32>
  // CHECK: zc.embedding {{.+}} -> tensor<2x3x4xf32>
  %e = zc.embedding %wte[%ids] : tensor<16x4xf32>, tensor<8x3xi32> -> tensor<8x3x4xf32>
  // CHECK: zc.reshape {{.+}} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  %flat = zc.reshape %e : tensor<8x3x4xf32> -> tensor<8x12xf32>
  %pos = zc.reshape %wpe : tensor<3x4xf32> -> tensor<12xf32>
  // CHECK: zc.bias_add {{.+}} : tensor<2x12xf32>, tensor<12xf32>
  %x = zc.bias_add %flat, %pos : tensor<8x12xf32>, tensor<12xf32>
  // CHECK: zc.reshape {{.+}} : tensor<2x12xf32> -> tensor<6x4xf32>
  %rows = zc.reshape %x : tensor<8x12xf32> -> tensor<24x4xf32>
  // CHECK: zc.matmul {{.+}} transpose_rhs : tensor<6x4xf32>, tensor<16x4xf32> -> tensor<6x16xf32>
  %logits = zc.matmul %rows, %wte transpose_rhs : tensor<24x4xf32>, tensor<16x4xf32> -> tensor<24x16xf32>
  // CHECK: zc.reshape {{.+}} : tensor<6x16xf32> -> tensor<2x3x16xf32>
  %lg = zc.reshape %logits : tensor<24x16xf32> -> tensor<8x3x16xf32>
  // CHECK: zc.cross_entropy {{.+}} : tensor<2x3x16xf32>, tensor<2x3xi32> -> tensor<f32>
  %l = zc.cross_entropy %lg, %tgt : tensor<8x3x16xf32>, tensor<8x3xi32> -> tensor<f32>
  zc.return %l : tensor<f32>
}

// -----

zc.param @w : tensor<4xf32> = #zc.zeros
// expected-error @+1 {{the batch of argument #0 ('tensor<6x4xf32>') does not split into 2 ranks x 2 micro-batches}}
zc.forward @f(%x: tensor<6x4xf32>, %y: tensor<6x4xf32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4xf32>
  %h = zc.bias_add %x, %w : tensor<6x4xf32>, tensor<4xf32>
  %l = zc.mse %h, %y : tensor<6x4xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}

// -----

zc.param @w : tensor<4xf32> = #zc.zeros
zc.forward @f(%x: tensor<8x4xf32>, %y: tensor<4x8xf32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4xf32>
  %h = zc.bias_add %x, %w : tensor<8x4xf32>, tensor<4xf32>
  // expected-error @+1 {{'zc.transpose' op cannot be split across the batch: the permutation moves axis 0}}
  %t = zc.transpose %h [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %l = zc.mse %t, %y : tensor<4x8xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
