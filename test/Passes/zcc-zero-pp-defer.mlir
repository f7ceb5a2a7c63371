// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=4" -zcc-bucket="bucket-mb=0 gather-bucket-mb=0" -zcc-zero-pp="quantized-gradients=true ranks-per-node=2" | FileCheck %s

// qgZ in a backward pass of four reductions (one per layer, last layer's first): the work after
// a reduction's first hop moves to where the reduction two later is queued, its rest to where
// the one three later is (the end for the last ones), so at most three reductions hold their
// quantized buffers however many layers there are.

zc.param @w1 : tensor<8x8xf32> = #zc.normal<std = 0.1>
zc.param @w2 : tensor<8x8xf32> = #zc.normal<std = 0.1>
zc.param @w3 : tensor<8x8xf32> = #zc.normal<std = 0.1>
zc.param @w4 : tensor<8x16xf32> = #zc.normal<std = 0.1>
zc.forward @four(%x: tensor<2x8xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %w1 = zc.param_ref @w1 : tensor<8x8xf32>
  %h1 = zc.matmul %x, %w1 : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %w2 = zc.param_ref @w2 : tensor<8x8xf32>
  %h2 = zc.matmul %h1, %w2 : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %w3 = zc.param_ref @w3 : tensor<8x8xf32>
  %h3 = zc.matmul %h2, %w3 : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %w4 = zc.param_ref @w4 : tensor<8x16xf32>
  %l = zc.matmul %h3, %w4 : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  %loss = zc.cross_entropy %l, %y : tensor<2x16xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @four_step
// @w4's first hop (32 values per rank: 16 bytes of int4 and a scale), then @w3's (16 values: 12).
// CHECK: zc.all_to_all %{{.+}} ranks 2 on node : tensor<2x2x20xi8>
// CHECK: zc.all_to_all %{{.+}} ranks 2 on node : tensor<2x2x12xi8>
// @w4's second hop is queued where @w2's reduction is, before its first hop:
// CHECK: zc.all_to_all %{{.+}} ranks 2 on cross : tensor<2x20xi8>
// CHECK: zc.all_to_all %{{.+}} ranks 2 on node : tensor<2x2x12xi8>
// and @w4's accumulate where @w1's is, with @w3's second hop, before @w1's first hop:
// CHECK: zc.grad_accumulate @w4
// CHECK: zc.all_to_all %{{.+}} ranks 2 on cross : tensor<2x12xi8>
// CHECK: zc.all_to_all %{{.+}} ranks 2 on node : tensor<2x2x12xi8>
// CHECK: zc.grad_accumulate @w3
// CHECK: zc.grad_accumulate @w2
// CHECK: zc.grad_accumulate @w1
// CHECK: return
