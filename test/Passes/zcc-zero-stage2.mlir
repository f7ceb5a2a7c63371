// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=2 ranks=2" | FileCheck %s

// ZeRO-2: each gradient is reduce-scattered right after its last contribution and only
// the shard is accumulated (the whole gradient dies there); parameters stay whole and are
// all-gathered in place after the shard-wise update.

// CHECK: zc.param @w1 : tensor<4x3xf32> {{.+}} {zc.shard_grad, zc.shards = 2 : i64}

// CHECK-LABEL: func.func @two_step
// CHECK-NOT: gather
// CHECK: zc.param_ref @w1 : tensor<4x3xf32>
// CHECK: %[[DW2:.+]] = zc.matmul {{.+}} transpose_lhs : {{.+}} -> tensor<3x5xf32>
// CHECK-NEXT: %[[DW2S:.+]] = zc.reduce_scatter avg %[[DW2]] ranks 2 : tensor<3x5xf32> -> tensor<8xf32>
// CHECK-NEXT: zc.grad_accumulate @w2, %[[DW2S]] overwrite : tensor<8xf32>
// CHECK: %[[DB1:.+]] = zc.reduce_sum
// CHECK-NEXT: %[[DB1S:.+]] = zc.reduce_scatter avg %[[DB1]] ranks 2 : tensor<3xf32> -> tensor<2xf32>
// CHECK-NEXT: zc.grad_accumulate @b1, %[[DB1S]] overwrite : tensor<2xf32>
// CHECK: %[[DW1:.+]] = zc.matmul
// CHECK-NEXT: %[[DW1S:.+]] = zc.reduce_scatter avg %[[DW1]] ranks 2 : tensor<4x3xf32> -> tensor<6xf32>
// CHECK-NEXT: zc.grad_accumulate @w1, %[[DW1S]] overwrite : tensor<6xf32>

// CHECK-LABEL: func.func @two_update
// CHECK-NEXT: %[[G:.+]] = zc.grad_ref @w1 : tensor<6xf32>
// CHECK-NEXT: zc.adamw @w1, %[[G]] {{.+}} : tensor<6xf32>
// CHECK-NEXT: zc.all_gather_param @w1
// CHECK-NOT: zc.grad_zero

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
