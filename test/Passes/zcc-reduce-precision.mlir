// RUN: zcc-opt %s -zcc-mixed-precision -zcc-autodiff -zcc-optimizer -zcc-zero="stage=2 ranks=2" -zcc-reduce-precision="precision=fp32" | FileCheck %s
// RUN: zcc-opt %s -zcc-mixed-precision -zcc-autodiff -zcc-optimizer -zcc-data-parallel="ranks=2" -zcc-reduce-precision="precision=fp32" | FileCheck %s --check-prefix=DP
// RUN: zcc-opt %s -zcc-mixed-precision -zcc-autodiff -zcc-optimizer -zcc-zero="stage=2 ranks=2" -zcc-reduce-precision | FileCheck %s --check-prefix=SAME
// RUN: not zcc-opt %s -zcc-reduce-precision="precision=fp16" 2>&1 | FileCheck %s --check-prefix=BAD

// fp32 gradient reductions under bf16 compute (FSDP2's reduce_dtype=float32): each bf16
// gradient is cast up, reduce-scattered (ZeRO-2) or all-reduced (plain data parallelism) in
// fp32, and the result cast back where the shard buffer or the optimizer reads it.

// CHECK-LABEL: func.func @two_step
// CHECK: %[[DW2:.+]] = zc.matmul {{.+}} -> tensor<3x5xbf16>
// CHECK-NEXT: %[[UP:.+]] = zc.cast %[[DW2]] : tensor<3x5xbf16> -> tensor<3x5xf32>
// CHECK-NEXT: %[[RS:.+]] = zc.reduce_scatter avg %[[UP]] ranks 2 : tensor<3x5xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[DOWN:.+]] = zc.cast %[[RS]] : tensor<8xf32> -> tensor<8xbf16>
// CHECK-NEXT: zc.grad_accumulate @w2, %[[DOWN]] overwrite : tensor<8xbf16>
// CHECK-NOT: reduce_scatter avg {{.+}}xbf16>

// DP-LABEL: func.func @two_update
// DP: %[[G:.+]] = zc.grad_ref @w1 : tensor<4x3xbf16>
// DP-NEXT: %[[UP:.+]] = zc.cast %[[G]] : tensor<4x3xbf16> -> tensor<4x3xf32>
// DP-NEXT: %[[AR:.+]] = zc.all_reduce avg %[[UP]] ranks 2 : tensor<4x3xf32>
// DP-NEXT: %[[DOWN:.+]] = zc.cast %[[AR]] : tensor<4x3xf32> -> tensor<4x3xbf16>
// DP-NEXT: zc.adamw @w1, %[[DOWN]]

// SAME-LABEL: func.func @two_step
// SAME: zc.reduce_scatter avg {{.+}} : tensor<3x5xbf16> -> tensor<8xbf16>
// SAME-NOT: zc.cast {{.+}} -> tensor<8xf32>

// BAD: zcc-reduce-precision: precision must be fp32 or bf16, got 'fp16'

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
