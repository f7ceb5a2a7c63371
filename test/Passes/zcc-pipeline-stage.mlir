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

// -----

// Tests a model whose loss adds a MoE router's load-balancing loss of block 0 (written after the
// cross-entropy, as an importer emits it): the sum does not tie the blocks together. The loss
// moves up to its router, the cut falls between the blocks, and each stage returns its own terms:
// stage 0 its objective plus the router's loss (train.bin adds the stages' losses), stage 1 the
// cross-entropy alone.
// FIRST-LABEL: zc.forward @moe(
// FIRST: %[[L0:.+]] = zc.matmul %{{.+}}, %{{.+}} : tensor<2x4x8xf32>, tensor<8x4xf32> -> tensor<2x4x4xf32>
// FIRST: %{{.+}}, %[[E0:.+]], %{{.+}}, %{{.+}} = zc.moe_route %[[L0]] top_k 2
// FIRST-NEXT: %[[AUX:.+]] = zc.moe_aux_loss %[[L0]], %[[E0]] coef 1.000000e-02
// FIRST: %[[OBJ:.+]] = zc.stage_output
// FIRST-NEXT: %[[TOTAL:.+]] = zc.add %[[OBJ]], %[[AUX]] : tensor<f32>
// FIRST-NEXT: zc.return %[[TOTAL]]
// FIRST-LABEL: zc.forward @moe_stage_forward(
// LAST-LABEL: zc.forward @moe(
// LAST-NOT: zc.moe_aux_loss
// LAST: %[[CE:.+]] = zc.cross_entropy
// LAST-NEXT: zc.return %[[CE]]
zc.param @wte : tensor<16x8xf32> = #zc.normal<std = 0.1>
zc.param @router : tensor<8x4xf32> = #zc.normal<std = 0.1>
zc.param @w1 : tensor<8x8xf32> = #zc.normal<std = 0.1>
zc.param @head : tensor<8x16xf32> = #zc.normal<std = 0.1>
zc.forward @moe(%ids: tensor<2x4xi32>, %tgt: tensor<2x4xi32>) -> tensor<f32> {
  %wte = zc.param_ref @wte : tensor<16x8xf32>
  %x = zc.embedding %wte[%ids] : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %router = zc.param_ref @router : tensor<8x4xf32>
  %l0 = zc.matmul %x, %router : tensor<2x4x8xf32>, tensor<8x4xf32> -> tensor<2x4x4xf32>
  %w, %e, %r, %o = zc.moe_route %l0 top_k 2 : tensor<2x4x4xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<5xi32>
  %xs = zc.moe_dispatch %x, %r : tensor<2x4x8xf32>, tensor<2x4x2xi32> -> tensor<16x8xf32>
  %y0 = zc.moe_combine %xs, %w, %r : tensor<16x8xf32>, tensor<2x4x2xf32>, tensor<2x4x2xi32> -> tensor<2x4x8xf32>
  %x1 = zc.add %x, %y0 : tensor<2x4x8xf32>
  %w1 = zc.param_ref @w1 : tensor<8x8xf32>
  %h1 = zc.matmul %x1, %w1 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
  %g1 = zc.gelu %h1 : tensor<2x4x8xf32>
  %x2 = zc.add %x1, %g1 : tensor<2x4x8xf32>
  %head = zc.param_ref @head : tensor<8x16xf32>
  %logits = zc.matmul %x2, %head : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  %ce = zc.cross_entropy %logits, %tgt : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
  %aux = zc.moe_aux_loss %l0, %e coef 0.01 : tensor<2x4x4xf32>, tensor<2x4x2xi32> -> tensor<f32>
  %loss = zc.add %ce, %aux : tensor<f32>
  zc.return %loss : tensor<f32>
}

// -----

// Tests that a cut leaving one stage most of the work is said: a loss pooled over both blocks'
// router logits (Hugging Face's load_balancing_loss_func) reads block 0 at the end, so the only
// cut left is after the embedding.
// expected-warning @+1 {{--pp 2: the costliest stage does 85% of the work: the forward has only 2 places where one activation crosses (values that several blocks feed tie them together; a MoE model: zcc-import --moe-aux-loss per-layer)}}
zc.forward @pooled(%ids: tensor<2x4xi32>, %tgt: tensor<2x4xi32>) -> tensor<f32> {
  %wte = zc.param_ref @wte : tensor<16x8xf32>
  %x = zc.embedding %wte[%ids] : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %router = zc.param_ref @router : tensor<8x4xf32>
  %l0 = zc.matmul %x, %router : tensor<2x4x8xf32>, tensor<8x4xf32> -> tensor<2x4x4xf32>
  %g0 = zc.gelu %x : tensor<2x4x8xf32>
  %x1 = zc.add %x, %g0 : tensor<2x4x8xf32>
  %l1 = zc.matmul %x1, %router : tensor<2x4x8xf32>, tensor<8x4xf32> -> tensor<2x4x4xf32>
  %g1 = zc.gelu %x1 : tensor<2x4x8xf32>
  %x2 = zc.add %x1, %g1 : tensor<2x4x8xf32>
  %head = zc.param_ref @head : tensor<8x16xf32>
  %logits = zc.matmul %x2, %head : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  %ce = zc.cross_entropy %logits, %tgt : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
  %pooled = zc.concat %l0, %l1 axis 1 : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x8x4xf32>
  %z = zc.moe_z_loss %pooled coef 0.001 : tensor<2x8x4xf32> -> tensor<f32>
  %loss = zc.add %ce, %z : tensor<f32>
  zc.return %loss : tensor<f32>
}
zc.param @wte : tensor<16x8xf32> = #zc.normal<std = 0.1>
zc.param @router : tensor<8x4xf32> = #zc.normal<std = 0.1>
zc.param @head : tensor<8x16xf32> = #zc.normal<std = 0.1>
