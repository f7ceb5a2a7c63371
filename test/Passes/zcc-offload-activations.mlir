// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-offload-activations="min-bytes=1024" | FileCheck %s
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-offload-activations | FileCheck %s --check-prefix=DEFAULT

// Tests ZeRO-R's CPU checkpointing as zcc plans it: each forward value the backward pass reads (of
// at least min-bytes) goes to a host slot right after its last forward use and comes back right
// before its first backward use, which then reads the reloaded value; the logits (768 B) stay.

module {
  zc.param @w1 : tensor<64x64xf32> = #zc.normal<std = 0.1>
  zc.param @w2 : tensor<64x48xf32> = #zc.normal<std = 0.1>
  zc.forward @f(%x: tensor<4x64xf32>, %y: tensor<4xi32>) -> tensor<f32> {
    %w1 = zc.param_ref @w1 : tensor<64x64xf32>
    %w2 = zc.param_ref @w2 : tensor<64x48xf32>
    %h = zc.matmul %x, %w1 : tensor<4x64xf32>, tensor<64x64xf32> -> tensor<4x64xf32>
    %g = zc.gelu %h : tensor<4x64xf32>
    %o = zc.matmul %g, %w2 : tensor<4x64xf32>, tensor<64x48xf32> -> tensor<4x48xf32>
    %l = zc.cross_entropy %o, %y : tensor<4x48xf32>, tensor<4xi32> -> tensor<f32>
    zc.return %l : tensor<f32>
  }
}
// CHECK-LABEL: func.func @f_step
// CHECK: %[[H:.+]] = zc.matmul %arg0
// CHECK-NEXT: %[[G:.+]] = zc.gelu %[[H]]
// CHECK-NEXT: zc.offload_activation %[[H]] to slot 0 : tensor<4x64xf32>
// CHECK-NEXT: %[[O:.+]] = zc.matmul %[[G]]
// CHECK-NEXT: zc.offload_activation %[[G]] to slot 1 : tensor<4x64xf32>
// CHECK-NOT: zc.offload_activation
// CHECK: arith.constant {zc.backward_seed}
// CHECK: %[[DO:.+]] = zc.cross_entropy_grad %{{.+}}, %[[O]]
// CHECK: %[[G1:.+]] = zc.reload_activation slot 1 : tensor<4x64xf32>
// CHECK-NEXT: zc.matmul %[[G1]], %[[DO]] transpose_lhs
// CHECK-NEXT: %[[H1:.+]] = zc.reload_activation slot 0 : tensor<4x64xf32>
// CHECK-NEXT: zc.gelu_grad %{{.+}}, %[[H1]]
// The default threshold (64 KiB) leaves these small activations where they are.
// DEFAULT-NOT: zc.offload_activation
