// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" | FileCheck %s
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2 persistence-threshold=3" | FileCheck %s --check-prefix=PERSIST
// RUN: zcc-opt %s -zcc-mixed-precision -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" | FileCheck %s --check-prefix=BF16

// ZeRO-3 on a two-layer model: each parameter is stored as a shard of ceil(numel / 2)
// elements, all-gathered right before its first use in the forward pass and released
// right after its last one, gathered again for its backward use; each gradient is
// reduce-scattered right after its last contribution. @w2 (15 elements) pads to 2 x 8.

// CHECK: zc.param @w1 : tensor<4x3xf32> {{.+}} {zc.shard_grad, zc.shard_param, zc.shards = 2 : i64}
// CHECK: zc.state @w1.exp_avg : tensor<6xf32> of @w1
// CHECK: zc.param @b1 : tensor<3xf32> {{.+}} {zc.shard_grad, zc.shard_param, zc.shards = 2 : i64}
// CHECK: zc.state @w2.exp_avg : tensor<8xf32> of @w2

// CHECK-LABEL: func.func @two_step
// CHECK-NEXT: %[[W1:.+]] = zc.gather_param @w1 : tensor<4x3xf32>
// CHECK-NEXT: %[[H:.+]] = zc.matmul %{{.+}}, %[[W1]]
// CHECK-NEXT: zc.release %[[W1]]
// CHECK-NEXT: %[[B1:.+]] = zc.gather_param @b1 : tensor<3xf32>
// CHECK-NEXT: zc.bias_add %[[H]], %[[B1]]
// CHECK-NEXT: zc.release %[[B1]]
// CHECK-NEXT: zc.relu
// CHECK-NEXT: %[[W2:.+]] = zc.gather_param @w2 : tensor<3x5xf32>
// CHECK-NEXT: zc.matmul %{{.+}}, %[[W2]]
// CHECK-NEXT: zc.release %[[W2]]
// CHECK-NEXT: zc.cross_entropy
// CHECK-NEXT: arith.constant {zc.backward_seed}
// CHECK-NEXT: zc.cross_entropy_grad
// Backward: @w2 again for the input gradient, released right after.
// CHECK-NEXT: %[[W2B:.+]] = zc.gather_param @w2 : tensor<3x5xf32>
// CHECK-NEXT: zc.matmul %{{.+}}, %[[W2B]] transpose_rhs
// CHECK-NEXT: zc.release %[[W2B]]
// CHECK-NEXT: %[[DW2:.+]] = zc.matmul {{.+}} transpose_lhs : {{.+}} -> tensor<3x5xf32>
// CHECK-NEXT: %[[DW2S:.+]] = zc.reduce_scatter avg %[[DW2]] ranks 2 : tensor<3x5xf32> -> tensor<8xf32>
// CHECK-NEXT: zc.grad_accumulate @w2, %[[DW2S]] overwrite : tensor<8xf32>
// CHECK-NEXT: zc.relu_grad
// CHECK-NEXT: %[[DB1:.+]] = zc.reduce_sum
// CHECK-NEXT: %[[DB1S:.+]] = zc.reduce_scatter avg %[[DB1]] ranks 2 : tensor<3xf32> -> tensor<2xf32>
// CHECK-NEXT: zc.grad_accumulate @b1, %[[DB1S]] overwrite
// CHECK-NEXT: %[[DW1:.+]] = zc.matmul
// CHECK-NEXT: %[[DW1S:.+]] = zc.reduce_scatter avg %[[DW1]] ranks 2 : tensor<4x3xf32> -> tensor<6xf32>
// CHECK-NEXT: zc.grad_accumulate @w1, %[[DW1S]] overwrite
// CHECK-NEXT: return

// The update runs on the shards; stage 3 stores shards, so nothing is gathered after it.
// CHECK-LABEL: func.func @two_update
// CHECK-NOT: all_gather
// CHECK: %[[G:.+]] = zc.grad_ref @w1 : tensor<6xf32>
// CHECK-NEXT: zc.adamw @w1, %[[G]] {{.+}} : tensor<6xf32>
// CHECK-NOT: zc.grad_zero
// CHECK-NOT: all_gather

// With a persistence threshold of 3 elements, @b1 stays whole (read with param_ref,
// refreshed after its shard-wise update) while its gradient and state are still sharded.
// PERSIST: zc.param @b1 : tensor<3xf32> {{.+}} {zc.shard_grad, zc.shards = 2 : i64}
// PERSIST-LABEL: func.func @two_step
// PERSIST: zc.param_ref @b1 : tensor<3xf32>
// PERSIST-NOT: zc.gather_param @b1
// PERSIST-LABEL: func.func @two_update
// PERSIST: zc.adamw @b1
// PERSIST-NEXT: zc.all_gather_param @b1

// Mixed precision: bf16 shards are gathered (half of fp32's traffic), bf16 gradients
// reduce-scattered; AdamW updates this rank's fp32 master shard and rounds it into the
// bf16 parameter shard.
// BF16: zc.param @w1 : tensor<4x3xbf16> {{.+}} {zc.shard_grad, zc.shard_param, zc.shards = 2 : i64}
// BF16-NEXT: zc.state @w1.master : tensor<6xf32> of @w1
// BF16-LABEL: func.func @two_step
// BF16: %[[W1:.+]] = zc.gather_param @w1 : tensor<4x3xbf16>
// BF16: zc.reduce_scatter avg %{{.+}} ranks 2 : tensor<4x3xbf16> -> tensor<6xbf16>
// BF16-LABEL: func.func @two_update
// BF16: %[[G:.+]] = zc.grad_ref @w1 : tensor<6xbf16>
// BF16-NEXT: zc.adamw @w1, %[[G]] state(@w1.exp_avg, @w1.exp_avg_sq) master(@w1.master) {{.+}} : tensor<6xbf16>

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
