// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-fuse=head-chunk-bytes=320 | FileCheck %s
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-fuse | FileCheck %s --check-prefix=WHOLE
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-fuse -zcc-optimizer -zcc-lower-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-recompute=policy=selective -zcc-fuse | FileCheck %s --check-prefix=RECOMPUTE
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-recompute=policy=full -zcc-fuse | FileCheck %s --check-prefix=RECOMPUTE

// A tied language-model head on [batch, time, channels] activations: the logits matmul, the
// cross-entropy, its gradient and the two matmuls autodiff writes for it (through row
// reshapes) become one zc.matmul_cross_entropy at the backward seed. 320 bytes of f32
// logits over 16 classes are 5 rows a chunk; the embedding's and the head's gradients of the
// tied table still meet in one add.

zc.param @wte : tensor<16x8xf32> = #zc.normal<std = 0.1>
zc.param @g : tensor<8xf32> = #zc.ones
zc.param @b : tensor<8xf32> = #zc.zeros
zc.forward @lm(%tokens: tensor<2x4xi32> {zc.input = "tokens"}, %targets: tensor<2x4xi32> {zc.input = "targets"}) -> tensor<f32> {
  %wte = zc.param_ref @wte : tensor<16x8xf32>
  %g = zc.param_ref @g : tensor<8xf32>
  %b = zc.param_ref @b : tensor<8xf32>
  %x = zc.embedding %wte[%tokens] : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %h = zc.layernorm %x, %g, %b : tensor<2x4x8xf32>, tensor<8xf32>
  %logits = zc.matmul %h, %wte transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  %loss = zc.cross_entropy %logits, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @lm_step
// CHECK: %[[H:.+]] = zc.layernorm
// CHECK-NOT: zc.cross_entropy
// CHECK: %[[SEED:.+]] = arith.constant {zc.backward_seed}
// CHECK: %[[LOSS:.+]], %[[DH:.+]], %[[DW:.+]], %{{.+}} = zc.matmul_cross_entropy %[[H]], %{{.+}}, %arg1, %[[SEED]] transpose_weight chunk_rows 5 : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32> -> tensor<384xi8>
// CHECK-NOT: zc.matmul
// CHECK-NOT: zc.cross_entropy
// CHECK: zc.layernorm_grad %[[DH]]
// CHECK: %[[DEMB:.+]] = zc.embedding_grad
// CHECK: %[[SUM:.+]] = zc.add %[[DW]], %[[DEMB]]
// CHECK: zc.grad_accumulate @wte, %[[SUM]]
// CHECK: return %[[LOSS]]

// With the default budget the whole batch is one chunk.
// WHOLE-LABEL: func.func @lm_step
// WHOLE: zc.matmul_cross_entropy {{.+}} chunk_rows 8 :

// The eval function (the loss alone, forward only) chunks its head too: no op holds its logits.
// CHECK-LABEL: func.func @lm_eval
// CHECK: %[[EH:.+]] = zc.layernorm
// CHECK-NEXT: %[[ELOSS:.+]], %{{.+}} = zc.matmul_cross_entropy_loss %[[EH]], %{{.+}}, %arg1 transpose_weight chunk_rows 5 : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32> -> tensor<384xi8>
// CHECK-NEXT: return %[[ELOSS]]

// LLVM: llvm.call @zrt_matmul_cross_entropy(
// LLVM: llvm.call @zrt_matmul_cross_entropy_loss(

// Under recomputation the backward pass reads recomputed copies of the head's input (and, with
// full, of its logits): the head still fuses, on the forward's own input at the start of the
// backward pass, the copies it no longer needs are gone and those later ops read (the
// embedding under the layernorm's gradient) run after it. Without this the logits stayed
// whole and recomputation kept more memory than none (GPT-2 124M at ZeRO-3: selective 1.05x).
// RECOMPUTE-LABEL: func.func @lm_step
// RECOMPUTE: %[[H:.+]] = zc.layernorm
// RECOMPUTE-NOT: zc.recomputed
// RECOMPUTE: zc.matmul_cross_entropy %[[H]], %{{.+}}, %arg1, %{{.+}} transpose_weight
// RECOMPUTE-NOT: zc.cross_entropy_grad
// RECOMPUTE-NOT: zc.layernorm {{.*}}zc.recomputed
// RECOMPUTE: zc.embedding {{.+}} {zc.recomputed}
// RECOMPUTE-NEXT: zc.layernorm_grad

// -----

// An untied head on 2-D rows, its weight [channels, classes]: no reshapes, weight gradient
// x^T dlogits.

zc.param @w : tensor<8x16xf32> = #zc.normal<std = 0.1>
zc.param @c : tensor<8xf32> = #zc.zeros
zc.forward @head(%x: tensor<8x8xf32> {zc.input = "features"}, %y: tensor<8xi32> {zc.input = "labels"}) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<8x16xf32>
  %c = zc.param_ref @c : tensor<8xf32>
  %xg = zc.bias_add %x, %c : tensor<8x8xf32>, tensor<8xf32>
  %logits = zc.matmul %xg, %w : tensor<8x8xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %loss = zc.cross_entropy %logits, %y : tensor<8x16xf32>, tensor<8xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @head_step
// CHECK: %{{.+}}, %{{.+}}, %[[DW:.+]], %{{.+}} = zc.matmul_cross_entropy %{{.+}}, %{{.+}}, %arg1, %{{.+}} chunk_rows 5 : tensor<8x8xf32>, tensor<8x16xf32>, tensor<8xi32> -> tensor<384xi8>
// CHECK-NOT: zc.matmul
// CHECK-DAG: zc.grad_accumulate @w, %[[DW]]
// CHECK-DAG: zc.grad_accumulate @c

// -----

// Logits read by anything else (here a second loss) stay unfused.

zc.param @w : tensor<8x16xf32> = #zc.normal<std = 0.1>
zc.forward @two(%x: tensor<8x8xf32> {zc.input = "features"}, %y: tensor<8xi32> {zc.input = "labels"}) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<8x16xf32>
  %xg = zc.gelu %x : tensor<8x8xf32>
  %logits = zc.matmul %xg, %w : tensor<8x8xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %sq = zc.mul %logits, %logits : tensor<8x16xf32>
  %l1 = zc.cross_entropy %logits, %y : tensor<8x16xf32>, tensor<8xi32> -> tensor<f32>
  %l2 = zc.cross_entropy %sq, %y : tensor<8x16xf32>, tensor<8xi32> -> tensor<f32>
  %loss = zc.add %l1, %l2 : tensor<f32>
  zc.return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @two_step
// CHECK-NOT: zc.matmul_cross_entropy
// CHECK: zc.cross_entropy_grad
// CHECK-NOT: zc.matmul_cross_entropy
// CHECK-LABEL: func.func @two_eval
// CHECK-NOT: zc.matmul_cross_entropy
// CHECK: return

// -----

// Gemma 2's final-logit soft-cap: autodiff's gradient carries it, and both fused heads (the
// step's and the eval's) read the logits capped; it reaches the runtime as the calls' last
// argument.

zc.param @wte : tensor<16x8xf32> = #zc.normal<std = 0.1>
zc.forward @capped(%tokens: tensor<2x4xi32> {zc.input = "tokens"}, %targets: tensor<2x4xi32> {zc.input = "targets"}) -> tensor<f32> {
  %wte = zc.param_ref @wte : tensor<16x8xf32>
  %x = zc.embedding %wte[%tokens] : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %logits = zc.matmul %x, %wte transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  %loss = zc.cross_entropy %logits, %targets softcap 30.0 : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @capped_step
// CHECK: zc.matmul_cross_entropy {{.+}} transpose_weight chunk_rows 5 softcap 3.000000e+01 :
// CHECK-LABEL: func.func @capped_eval
// CHECK: zc.matmul_cross_entropy_loss {{.+}} transpose_weight chunk_rows 5 softcap 3.000000e+01 :
// LLVM: %[[CAP:.+]] = llvm.mlir.constant(3.000000e+01 : f64) : f64
// LLVM: llvm.call @zrt_matmul_cross_entropy({{.+}}, %[[CAP]])
