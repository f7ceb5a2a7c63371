// RUN: zcc-opt %s -split-input-file -zcc-pipeline-stage="stages=2 stage=0 micro-batches=4" -verify-diagnostics | FileCheck %s --check-prefix=FIRST
// RUN: zcc-opt %s -split-input-file -zcc-pipeline-stage="stages=2 stage=1 micro-batches=4" -verify-diagnostics | FileCheck %s --check-prefix=LAST

// Tests the cut of a language model of two blocks into two stages: it falls between the blocks
// (where one activation, the residual stream, crosses), the first stage keeps the embedding
// and block 0, the last block 1 and the head; the tied table is on both, marked. Stage 0's step
// differentiates its output against an `activation_grad` argument and has a forward-only twin
// that sends the output to stage 1; stage 1 reads it as an `activation` argument through
// zc.stage_input (whose gradient autodiff sends back). The plan is on the module.

// FIRST: module attributes {zc.pipeline = {cuts = array<i64: 0, {{[67]}}, 12>, held_slots = array<i64: 2, 2, 2, 2, 2>, predicted_bubble = {{.+}} : f64, schedule = "1f1b", slots = 2 : i64, stage = 0 : i64
// FIRST: zc.param @wte : tensor<16x8xf32> = #zc.normal<std = 0.1> {zc.pipeline_tied}
// FIRST-NEXT: zc.param @w0 : tensor<8x8xf32>
// FIRST-NOT: zc.param @w1
// FIRST-LABEL: zc.forward @lm(
// FIRST-SAME: %[[GRAD:arg[0-9]+]]: tensor<2x4x8xf32> {zc.input = "activation_grad"}
// FIRST: %[[OUT:.+]] = zc.add
// FIRST-NEXT: %[[OBJ:.+]] = zc.stage_output %[[OUT]], %[[GRAD]] : tensor<2x4x8xf32> -> tensor<f32>
// FIRST-NEXT: zc.return %[[OBJ]]
// FIRST-LABEL: zc.forward @lm_stage_forward(
// FIRST-SAME: attributes {zc.forward_only}
// FIRST: zc.pipe_send %{{.+}} to stage 1 : tensor<2x4x8xf32>
// FIRST-NEXT: zc.return

// LAST: stage = 1 : i64
// LAST: zc.param @wte : tensor<16x8xf32> = #zc.normal<std = 0.1> {zc.pipeline_tied}
// LAST-NOT: zc.param @w0
// LAST: zc.param @w1 : tensor<8x8xf32>
// LAST-LABEL: zc.forward @lm(
// LAST-SAME: %[[IN:arg[0-9]+]]: tensor<2x4x8xf32> {zc.input = "activation"}
// LAST: %[[X:.+]] = zc.stage_input %[[IN]] from stage 0 : tensor<2x4x8xf32>
// LAST: zc.matmul %[[X]]
// LAST: zc.cross_entropy
// LAST-NOT: zc.forward @lm_stage_forward
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

// -----

// Tests that a model without enough single-activation cuts for the stages is refused.
// expected-error @+1 {{'zc.forward' op --pp 2: the forward has only 0 places where one activation crosses (between blocks); it cannot be cut into that many stages}}
zc.forward @f(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<f32> {
  %l = zc.mse %x, %y : tensor<4x8xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
