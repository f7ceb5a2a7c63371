// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-report="format=json micro-batches=2" -o /dev/null | FileCheck %s
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-data-parallel="ranks=2" -zcc-report -o /dev/null | FileCheck %s --check-prefix=DP

// ZeRO-3 over 2 ranks: shards of 6 (@w1), 2 (@b1) and 8 (@w2) floats = 16 floats of
// params, grads and each AdamW moment. Per step (2 micro-batches): 2 x (3 forward gathers
// + 1 backward gather of @w2) and 2 x 3 reduce-scatters, each sending one shard:
// 2 x (6 + 2 + 8 + 8) x 4 B gathered + 2 x (6 + 2 + 8) x 4 B reduce-scattered = 320 B.
// CHECK: "collectives": {
// CHECK-NEXT: "all_gather": 8,
// CHECK-NEXT: "all_reduce": 0,
// CHECK-NEXT: "reduce_scatter": 6
// CHECK: "comm_bytes": 320,
// Peak gathered: @w2 (padded to 16 floats) alone, or @w1 (12) alone: 64 bytes.
// CHECK: "gathered_param_peak_bytes": 64,
// CHECK: "grad_bytes": 64,
// CHECK: "model_state_bytes": 256,
// CHECK: "optimizer_bytes": 128,
// CHECK: "param_bytes": 64,
// CHECK: "param_tensors": 3

// Stage 0: whole buffers (30 floats), one averaging all-reduce per gradient.
// DP: param_bytes 120
// DP: optimizer_bytes 240
// DP: per step: all_gather 0, reduce_scatter 0, all_reduce 3, comm_bytes 120

zc.param @w1 : tensor<4x3xf32> = #zc.normal<std = 0.1>
zc.param @b1 : tensor<3xf32> = #zc.zeros
zc.param @w2 : tensor<3x5xf32> = #zc.normal<std = 0.1>
zc.forward @two(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %w1 = zc.param_ref @w1 : tensor<4x3xf32>
  %b1 = zc.param_ref @b1 : tensor<3xf32>
  %h = zc.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %hb = zc.bias_add %h, %b1 : tensor<2x3xf32>, tensor<3xf32>
  %a = zc.relu %hb : tensor<2x3xf32>
  %w2 = zc.param_ref @w2 : tensor<3x5xf32>
  %logits = zc.matmul %a, %w2 : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x5xf32>
  %loss = zc.cross_entropy %logits, %y : tensor<2x5xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
