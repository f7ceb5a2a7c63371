// RUN: zcc-opt %s -zcc-pipeline-stage="stages=2 stage=0 micro-batches=4" -zcc-autodiff -zcc-pipeline-keep | FileCheck %s
// RUN: zcc-opt %s -zcc-pipeline-stage="stages=2 stage=0 micro-batches=4" -zcc-autodiff -zcc-recompute="policy=full" -zcc-pipeline-keep | FileCheck %s --check-prefix=FULL
// RUN: zcc-opt %s -zcc-pipeline-stage="stages=2 stage=1 micro-batches=4" -zcc-autodiff -zcc-pipeline-keep | FileCheck %s --check-prefix=LAST

// Tests that stage 0 of two keeps what its backward reads instead of computing its forward
// twice: the step is the backward alone, reading `stash` arguments (GELU's input for its
// gradient, the block input for the weight gradient); the forward-only function is the step's
// forward, sends its output, then copies those values into the same arguments. Parameter reads
// are taken again in the step, right before their reader. Under full recomputation only the block input is kept and the
// product is recomputed in the step. The last stage, whose step runs its forward once, is left
// as it is.

// CHECK-LABEL: func.func @lm_step(
// CHECK-SAME: %[[TOKENS:arg0]]: tensor<2x4xi32> {{{.*}}zc.input = "tokens"}
// CHECK-SAME: %[[GRAD:arg2]]: tensor<2x4x8xf32> {zc.input = "activation_grad"}
// CHECK-SAME: %[[PRE:arg3]]: tensor<2x4x8xf32> {zc.input = "stash"}
// CHECK-SAME: %[[X:arg4]]: tensor<2x4x8xf32> {zc.input = "stash"}
// CHECK-SAME: attributes {zc.role = "step"}
// CHECK-NEXT: %[[OBJ:.+]] = zc.stage_output %[[GRAD]], %[[GRAD]]
// CHECK-NOT: zc.embedding %
// CHECK-NOT: zc.gelu %
// CHECK: %[[DPRE:.+]] = zc.gelu_grad %[[GRAD]], %[[PRE]]
// CHECK-NEXT: %[[W0:.+]] = zc.param_ref @w0
// CHECK-NEXT: zc.matmul %[[DPRE]], %[[W0]] transpose_rhs
// CHECK: zc.reshape %[[X]]
// CHECK: zc.embedding_grad %{{.+}}[%[[TOKENS]]]
// CHECK: return %[[OBJ]]
// CHECK-LABEL: func.func @lm_stage_forward(
// CHECK-SAME: %[[FGRAD:arg2]]: tensor<2x4x8xf32> {zc.input = "activation_grad"}
// CHECK-SAME: %[[FPRE:arg3]]: tensor<2x4x8xf32> {zc.input = "stash"}
// CHECK-SAME: %[[FX:arg4]]: tensor<2x4x8xf32> {zc.input = "stash"}
// CHECK-SAME: attributes {zc.role = "forward"}
// CHECK: %[[E:.+]] = zc.embedding
// CHECK: %[[H:.+]] = zc.matmul %[[E]]
// CHECK: %[[G:.+]] = zc.gelu %[[H]]
// CHECK: %[[OUT:.+]] = zc.add %[[E]], %[[G]]
// CHECK-NEXT: zc.pipe_send %[[OUT]] to stage 1
// CHECK-NEXT: zc.pipe_stash %[[H]] into %[[FPRE]]
// CHECK-NEXT: zc.pipe_stash %[[E]] into %[[FX]]
// CHECK-NEXT: %[[FOBJ:.+]] = zc.stage_output %[[OUT]], %[[FGRAD]]
// CHECK-NEXT: return %[[FOBJ]]

// FULL-LABEL: func.func @lm_step(
// FULL-SAME: %[[X:arg3]]: tensor<2x4x8xf32> {zc.input = "stash"})
// FULL: %[[H:.+]] = zc.matmul %[[X]], %{{.+}} {zc.recomputed}
// FULL: zc.gelu_grad %{{.+}}, %[[H]]
// FULL-LABEL: func.func @lm_stage_forward(
// FULL: zc.pipe_send
// FULL-NEXT: zc.pipe_stash %{{.+}} into %arg3
// FULL-NEXT: zc.stage_output

// LAST-NOT: zc.input = "stash"
// LAST-NOT: zc.pipe_stash
// LAST-LABEL: func.func @lm_step(
// LAST-SAME: %[[IN:arg2]]: tensor<2x4x8xf32> {zc.input = "activation"})
// LAST: zc.matmul %[[IN]]
// LAST: zc.cross_entropy
zc.param @wte : tensor<16x8xf32> = #zc.normal<std = 0.1>
zc.param @w0 : tensor<8x8xf32> = #zc.normal<std = 0.1>
zc.param @w1 : tensor<8x8xf32> = #zc.normal<std = 0.1>
zc.forward @lm(%ids: tensor<2x4xi32>, %tgt: tensor<2x4xi32>) -> tensor<f32> {
  %wte = zc.param_ref @wte : tensor<16x8xf32>
  %x = zc.embedding %wte[%ids] : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %w0 = zc.param_ref @w0 : tensor<8x8xf32>
  %h0 = zc.matmul %x, %w0 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
  %g0 = zc.gelu %h0 : tensor<2x4x8xf32>
  %x1 = zc.add %x, %g0 : tensor<2x4x8xf32>
  %w1 = zc.param_ref @w1 : tensor<8x8xf32>
  %h1 = zc.matmul %x1, %w1 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
  %g1 = zc.gelu %h1 : tensor<2x4x8xf32>
  %x2 = zc.add %x1, %g1 : tensor<2x4x8xf32>
  %logits = zc.matmul %x2, %wte transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  %l = zc.cross_entropy %logits, %tgt : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
