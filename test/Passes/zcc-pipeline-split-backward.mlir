// RUN: zcc-opt %s -zcc-pipeline-stage="stages=2 stage=1 micro-batches=4 schedule=zb-h1" -zcc-autodiff -zcc-pipeline-split-backward | FileCheck %s
// RUN: zcc-opt %s -zcc-pipeline-stage="stages=2 stage=0 micro-batches=4 schedule=zb-h1" -zcc-autodiff -zcc-pipeline-keep -zcc-pipeline-split-backward | FileCheck %s --check-prefix=FIRST
// RUN: zcc-opt %s -zcc-pipeline-stage="stages=2 stage=1 micro-batches=4" -zcc-autodiff -zcc-pipeline-split-backward | FileCheck %s --check-prefix=ONEF
// RUN: not zcc-opt %s -zcc-pipeline-stage="stages=2 stage=1 micro-batches=4 schedule=gpipe" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not zcc-opt %s -zcc-pipeline-stage="stages=2 stage=1 micro-batches=4 schedule=interleaved-1f1b" 2>&1 | FileCheck %s --check-prefix=CHUNKS
// RUN: zcc-opt %s -zcc-pipeline-stage="stages=2 stage=1 micro-batches=4 schedule=zb-h1" -zcc-autodiff -zcc-pipeline-split-backward -zcc-optimizer -zcc-lower-to-llvm 2>/dev/null | FileCheck %s --check-prefix=LOWERED

// Tests that under the zero-bubble schedule a stage's step keeps what the input's gradient
// (sent to the previous stage) and the loss need (B), and a `weight` function gets the weight
// gradients and their accumulation (W). W reads the stage's arguments (here the activation the
// stage received) directly, and what it needs of B through `stash` arguments every function of
// the stage gets, which B fills last. Parameter reads and views are taken again in W. The first
// stage's input (the tokens) has no gradient: its B is only the objective, and W the whole
// backward, the embedding's gradient included. Under 1F1B the pass leaves the step whole.

// CHECK: zc.pipeline = {{{.*}}schedule = "zb-h1", slots = 2
// Lowered, each value B keeps for W is computed in the micro-batch's stash slot itself (the
// memory plan places it in the stash argument's buffer): the kernels write there, and the
// stashes copy nothing (before: a zrt_copy each, 55 per micro-batch at a stage of an 8-layer GPT).
// LOWERED-LABEL: llvm.func @zcc_step(
// LOWERED: %[[SXP:.+]] = llvm.getelementptr %arg1[3]
// LOWERED-NEXT: %[[SX:.+]] = llvm.load %[[SXP]]
// LOWERED-NEXT: %[[SDLP:.+]] = llvm.getelementptr %arg1[4]
// LOWERED-NEXT: %[[SDL:.+]] = llvm.load %[[SDLP]]
// LOWERED-NEXT: %[[SDHP:.+]] = llvm.getelementptr %arg1[5]
// LOWERED-NEXT: %[[SDH:.+]] = llvm.load %[[SDHP]]
// LOWERED-NOT: zrt_copy
// LOWERED: llvm.call @zrt_add(%{{.+}}, %{{.+}}, %{{.+}}, %[[SX]],
// LOWERED-NOT: zrt_copy
// LOWERED: llvm.call @zrt_cross_entropy_grad(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[SDL]],
// LOWERED-NOT: zrt_copy
// LOWERED: llvm.call @zrt_gelu_grad(%{{.+}}, %{{.+}}, %{{.+}}, %[[SDH]],
// LOWERED-NOT: zrt_copy
// LOWERED: llvm.return

// CHECK-LABEL: func.func @lm_step(
// CHECK-SAME: %[[IN:arg2]]: tensor<2x4x8xf32> {zc.input = "activation"}
// CHECK-SAME: %[[SX:arg3]]: tensor<2x4x8xf32> {zc.input = "stash"}
// CHECK-SAME: %[[SDLOGITS:arg4]]: tensor<2x4x16xf32> {zc.input = "stash"}
// CHECK-SAME: %[[SDH:arg5]]: tensor<2x4x8xf32> {zc.input = "stash"}
// CHECK-SAME: attributes {zc.role = "step"}
// CHECK: %[[X:.+]] = zc.add %[[IN]]
// CHECK: %[[LOSS:.+]] = zc.cross_entropy
// CHECK: %[[DLOGITS:.+]] = zc.cross_entropy_grad
// CHECK: %[[DH:.+]] = zc.gelu_grad
// CHECK: %[[DIN:.+]] = zc.add
// CHECK-NEXT: zc.pipe_send %[[DIN]] to stage 0
// CHECK-NEXT: zc.pipe_stash %[[X]] into %[[SX]]
// CHECK-NEXT: zc.pipe_stash %[[DLOGITS]] into %[[SDLOGITS]]
// CHECK-NEXT: zc.pipe_stash %[[DH]] into %[[SDH]]
// CHECK-NEXT: return %[[LOSS]]
// CHECK-LABEL: func.func @lm_step_weight(
// CHECK-SAME: %[[WIN:arg2]]: tensor<2x4x8xf32> {zc.input = "activation"}
// CHECK-SAME: %[[WX:arg3]]: tensor<2x4x8xf32> {zc.input = "stash"}
// CHECK-SAME: %[[WDLOGITS:arg4]]: tensor<2x4x16xf32> {zc.input = "stash"}
// CHECK-SAME: %[[WDH:arg5]]: tensor<2x4x8xf32> {zc.input = "stash"}
// CHECK-SAME: attributes {zc.role = "weight"}
// CHECK-NOT: zc.cross_entropy
// CHECK-NOT: zc.gelu_grad
// CHECK: zc.reshape %[[WX]]
// CHECK: zc.reshape %[[WDLOGITS]]
// CHECK: zc.reshape %[[WIN]]
// CHECK: zc.reshape %[[WDH]]
// CHECK: zc.grad_accumulate @wte
// CHECK: zc.grad_accumulate @w1
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: return %[[ZERO]]

// FIRST-LABEL: func.func @lm_step(
// FIRST-NEXT: %[[OBJ:.+]] = zc.stage_output
// FIRST-NEXT: return %[[OBJ]]
// FIRST-LABEL: func.func @lm_step_weight(
// FIRST-SAME: %[[TOKENS:arg0]]: tensor<2x4xi32>
// FIRST-SAME: %[[GRAD:arg2]]: tensor<2x4x8xf32> {zc.input = "activation_grad"}
// FIRST-SAME: %[[PRE:arg3]]: tensor<2x4x8xf32> {zc.input = "stash"}
// FIRST: zc.gelu_grad %[[GRAD]], %[[PRE]]
// FIRST: zc.param_ref @w0
// FIRST: zc.embedding_grad %{{.+}}[%[[TOKENS]]]
// FIRST: zc.grad_accumulate @w0
// FIRST: zc.grad_accumulate @wte
// FIRST-LABEL: func.func @lm_stage_forward(
// FIRST-SAME: %{{.+}}: tensor<2x4x8xf32> {zc.input = "stash"}
// FIRST-SAME: attributes {zc.role = "forward"}

// ONEF-NOT: zc.role = "weight"
// ONEF-NOT: zc.pipe_stash
// ONEF: zc.grad_accumulate @wte
// ONEF: zc.grad_accumulate @w1

// BAD: zcc-pipeline-stage: unknown schedule 'gpipe' (one of 1f1b, zb-h1, interleaved-1f1b, zbv)
// CHUNKS: zcc-pipeline-stage: interleaved-1f1b needs at least 2 chunks of layers per rank (--pp-interleave), got 1
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
