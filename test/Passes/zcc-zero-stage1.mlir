// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer="micro-batches=2" -zcc-zero="stage=1 ranks=2 micro-batches=2" | FileCheck %s
// RUN: zcc-opt %s -zcc-mixed-precision -zcc-autodiff -zcc-optimizer="micro-batches=2" -zcc-zero="stage=1 ranks=2 micro-batches=2" | FileCheck %s --check-prefix=BF16

// ZeRO-1: the step is untouched (whole gradients accumulate over the micro-batches); the
// update reduce-scatters each whole gradient once, scales by 1/K, runs AdamW on this
// rank's shard of fp32 state and all-gathers the updated parameter in place.

// CHECK: zc.param @w1 : tensor<4x3xf32> {{.+}} {zc.shards = 2 : i64}
// CHECK: zc.state @w1.exp_avg : tensor<6xf32> of @w1
// CHECK: zc.state @w1.exp_avg_sq : tensor<6xf32> of @w1
// CHECK: zc.state @w2.exp_avg : tensor<8xf32> of @w2

// CHECK-LABEL: func.func @two_step
// CHECK-NOT: reduce_scatter
// CHECK-NOT: gather
// CHECK: zc.grad_accumulate @w2, %{{.+}} : tensor<3x5xf32>
// CHECK: zc.grad_accumulate @b1, %{{.+}} : tensor<3xf32>
// CHECK: zc.grad_accumulate @w1, %{{.+}} : tensor<4x3xf32>

// CHECK-LABEL: func.func @two_update
// CHECK-NEXT: %[[G:.+]] = zc.grad_ref @w1 : tensor<4x3xf32>
// CHECK-NEXT: %[[S:.+]] = zc.reduce_scatter avg %[[G]] ranks 2 : tensor<4x3xf32> -> tensor<6xf32>
// CHECK-NEXT: %[[M:.+]] = zc.scale %[[S]] by 5.000000e-01 : tensor<6xf32>
// CHECK-NEXT: zc.adamw @w1, %[[M]] state(@w1.exp_avg, @w1.exp_avg_sq) {{.+}} : tensor<6xf32>
// CHECK-NEXT: zc.all_gather_param @w1
// CHECK-NEXT: zc.grad_zero @w1
// @w2 has 15 elements: two shards of 8, the last one padded.
// CHECK: zc.reduce_scatter avg %{{.+}} ranks 2 : tensor<3x5xf32> -> tensor<8xf32>

// Mixed precision: the whole parameters and gradients are bf16 and reduce-scattered in
// bf16; the fp32 master is sharded like the moments, and AdamW rounds this rank's
// updated master shard into its slice of the bf16 parameter before the all-gather.
// BF16: zc.param @w1 : tensor<4x3xbf16> {{.+}} {zc.shards = 2 : i64}
// BF16-NEXT: zc.state @w1.master : tensor<6xf32> of @w1
// BF16-LABEL: func.func @two_update
// BF16-NEXT: %[[G:.+]] = zc.grad_ref @w1 : tensor<4x3xbf16>
// BF16-NEXT: %[[S:.+]] = zc.reduce_scatter avg %[[G]] ranks 2 : tensor<4x3xbf16> -> tensor<6xbf16>
// BF16-NEXT: %[[M:.+]] = zc.scale %[[S]] by 5.000000e-01 : tensor<6xbf16>
// BF16-NEXT: zc.adamw @w1, %[[M]] state(@w1.exp_avg, @w1.exp_avg_sq) master(@w1.master) {{.+}} : tensor<6xbf16>
// BF16-NEXT: zc.all_gather_param @w1

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
