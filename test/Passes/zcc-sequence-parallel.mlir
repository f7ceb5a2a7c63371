// RUN: zcc-opt %s -split-input-file -zcc-tensor-parallel="ranks=2" -zcc-sequence-parallel="ranks=2" | FileCheck %s
// RUN: zcc-opt %s -split-input-file -zcc-tensor-parallel="ranks=2" -zcc-sequence-parallel="ranks=2" -zcc-autodiff | FileCheck %s --check-prefix=STEP

// Tests a pre-LN block between a vocabulary-parallel embedding and head: the embedding's sum
// and the MLP's sum become reduce-scatters (each rank keeps 1 of the 2 sequences), the norms,
// the bias after the row matmul and the residual add run on that half, the regions' inputs
// are all-gathered (tp_copy sequence), and the parameters the split ops read (the norms'
// gain and bias, the row matmul's bias) are read through a tp_copy that sums their gradients.

zc.param @wte : tensor<16x16xf32> = #zc.normal<std = 0.02>
zc.param @ln_g : tensor<16xf32> = #zc.ones
zc.param @ln_b : tensor<16xf32> = #zc.zeros
zc.param @fc_w : tensor<16x64xf32> = #zc.normal<std = 0.02>
zc.param @out_w : tensor<64x16xf32> = #zc.normal<std = 0.02>
zc.param @out_b : tensor<16xf32> = #zc.zeros
zc.param @lnf_g : tensor<16xf32> = #zc.ones
zc.param @lnf_b : tensor<16xf32> = #zc.zeros
// Differentiated: forward reduce-scatters and all-gathers on the tensor axis; after the seed a
// region's input is gathered again for its weight gradient (zc.regather), the all-gather's
// gradient is a reduce-scatter, the reduce-scatter's an all-gather, and the split ops'
// parameter gradients are summed (zc.grad_sum).
// STEP-LABEL: func.func @gpt_step
// STEP: zc.reduce_scatter sum %{{.+}} ranks 2 on tensor : tensor<2x4x16xf32> -> tensor<1x4x16xf32>
// STEP: %[[LN:.+]] = zc.layernorm
// STEP-NEXT: zc.all_gather %[[LN]] ranks 2 on tensor : tensor<1x4x16xf32> -> tensor<2x4x16xf32>
// STEP: zc.backward_seed
// STEP: zc.all_gather %{{.+}} ranks 2 on tensor {zc.regather} : tensor<1x4x16xf32> -> tensor<2x4x16xf32>
// STEP: zc.reduce_scatter sum %{{.+}} ranks 2 on tensor : tensor<2x4x16xf32> -> tensor<1x4x16xf32>
// STEP: zc.all_reduce sum %{{.+}} ranks 2 on tensor {zc.grad_sum} : tensor<16xf32>
// STEP: zc.all_gather %{{.+}} ranks 2 on tensor : tensor<1x4x16xf32> -> tensor<2x4x16xf32>
// STEP: zc.all_gather %[[LN]] ranks 2 on tensor {zc.regather}
// STEP: return
// CHECK-LABEL: zc.forward @gpt
zc.forward @gpt(%ids: tensor<2x4xi32>, %tgt: tensor<2x4xi32>) -> tensor<f32> {
  %wte = zc.param_ref @wte : tensor<16x16xf32>
  // CHECK: %[[LOOKUP:.+]] = zc.embedding
  // CHECK-NEXT: %[[X:.+]] = zc.tp_reduce %[[LOOKUP]] ranks 2 sequence : tensor<2x4x16xf32> -> tensor<1x4x16xf32>
  %x = zc.embedding %wte[%ids] : tensor<16x16xf32>, tensor<2x4xi32> -> tensor<2x4x16xf32>
  // CHECK: %[[G:.+]] = zc.param_ref @ln_g
  // CHECK-NEXT: %[[GS:.+]] = zc.tp_copy %[[G]] ranks 2 {zc.grad_sum} : tensor<16xf32> -> tensor<16xf32>
  // CHECK: %[[B:.+]] = zc.param_ref @ln_b
  // CHECK-NEXT: %[[BS:.+]] = zc.tp_copy %[[B]] ranks 2 {zc.grad_sum} : tensor<16xf32> -> tensor<16xf32>
  %g = zc.param_ref @ln_g : tensor<16xf32>
  %b = zc.param_ref @ln_b : tensor<16xf32>
  // CHECK: %[[LN:.+]] = zc.layernorm %[[X]], %[[GS]], %[[BS]] : tensor<1x4x16xf32>, tensor<16xf32>
  // CHECK-NEXT: %[[IN:.+]] = zc.tp_copy %[[LN]] ranks 2 sequence : tensor<1x4x16xf32> -> tensor<2x4x16xf32>
  %ln = zc.layernorm %x, %g, %b : tensor<2x4x16xf32>, tensor<16xf32>
  %w1 = zc.param_ref @fc_w : tensor<16x64xf32>
  // CHECK: zc.matmul %[[IN]], %{{.+}} {zc.tp = "column"} : tensor<2x4x16xf32>, tensor<16x32xf32> -> tensor<2x4x32xf32>
  %h = zc.matmul %ln, %w1 : tensor<2x4x16xf32>, tensor<16x64xf32> -> tensor<2x4x64xf32>
  %a = zc.gelu %h : tensor<2x4x64xf32>
  %w2 = zc.param_ref @out_w : tensor<64x16xf32>
  %b2 = zc.param_ref @out_b : tensor<16xf32>
  // CHECK: %[[PARTIAL:.+]] = zc.matmul %{{.+}}, %{{.+}} {zc.tp = "row"} : tensor<2x4x32xf32>, tensor<32x16xf32> -> tensor<2x4x16xf32>
  // CHECK-NEXT: %[[SUM:.+]] = zc.tp_reduce %[[PARTIAL]] ranks 2 sequence : tensor<2x4x16xf32> -> tensor<1x4x16xf32>
  // CHECK: %[[BIAS:.+]] = zc.bias_add %[[SUM]], %{{.+}} : tensor<1x4x16xf32>, tensor<16xf32>
  // CHECK: %[[RES:.+]] = zc.add %[[X]], %[[BIAS]] : tensor<1x4x16xf32>
  %m = zc.matmul %a, %w2 : tensor<2x4x64xf32>, tensor<64x16xf32> -> tensor<2x4x16xf32>
  %mb = zc.bias_add %m, %b2 : tensor<2x4x16xf32>, tensor<16xf32>
  %r = zc.add %x, %mb : tensor<2x4x16xf32>
  %gf = zc.param_ref @lnf_g : tensor<16xf32>
  %bf = zc.param_ref @lnf_b : tensor<16xf32>
  // CHECK: %[[LNF:.+]] = zc.layernorm %[[RES]], %{{.+}}, %{{.+}} : tensor<1x4x16xf32>, tensor<16xf32>
  // The head's input: gathered as a region's (the vocabulary-parallel head is one).
  // CHECK-NEXT: %[[HEAD_IN:.+]] = zc.tp_copy %[[LNF]] ranks 2 sequence : tensor<1x4x16xf32> -> tensor<2x4x16xf32>
  // CHECK: zc.matmul %[[HEAD_IN]], %{{.+}} transpose_rhs {zc.tp = "vocab"}
  %lnf = zc.layernorm %r, %gf, %bf : tensor<2x4x16xf32>, tensor<16xf32>
  %logits = zc.matmul %lnf, %wte {transpose_rhs} : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
  %loss = zc.cross_entropy %logits, %tgt : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// -----

// Tests one sequence per micro-batch: the part is half the tokens (axis 1). A view that keeps
// the tokens contiguous stays split ([1, 4, 16] -> [1, 64]: the same half of the bytes); an
// op that is not token-wise (a softmax over the flattened sequence) reads the whole value
// (zc.sp_gather), and a replicated activation meeting the split stream (the input, whole on
// every rank) keeps this rank's half (zc.sp_shard).

zc.param @fc_w : tensor<16x32xf32> = #zc.normal<std = 0.02>
zc.param @out_w : tensor<32x16xf32> = #zc.normal<std = 0.02>
zc.param @head_w : tensor<64x4xf32> = #zc.normal<std = 0.02>
// CHECK-LABEL: zc.forward @one_sequence
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x16xf32>,
zc.forward @one_sequence(%x: tensor<1x4x16xf32>, %y: tensor<1x4xf32>) -> tensor<f32> {
  // CHECK: %[[XS:.+]] = zc.sp_shard %[[X]] ranks 2 : tensor<1x4x16xf32> -> tensor<1x2x16xf32>
  // CHECK: %[[IN:.+]] = zc.tp_copy %[[X]] ranks 2 : tensor<1x4x16xf32> -> tensor<1x4x16xf32>
  %w1 = zc.param_ref @fc_w : tensor<16x32xf32>
  %h = zc.matmul %x, %w1 : tensor<1x4x16xf32>, tensor<16x32xf32> -> tensor<1x4x32xf32>
  %a = zc.relu %h : tensor<1x4x32xf32>
  %w2 = zc.param_ref @out_w : tensor<32x16xf32>
  // CHECK: %[[SUM:.+]] = zc.tp_reduce %{{.+}} ranks 2 sequence : tensor<1x4x16xf32> -> tensor<1x2x16xf32>
  // CHECK-NEXT: %[[RES:.+]] = zc.add %[[XS]], %[[SUM]] : tensor<1x2x16xf32>
  // CHECK-NEXT: %[[FLAT:.+]] = zc.reshape %[[RES]] : tensor<1x2x16xf32> -> tensor<1x32xf32>
  // CHECK-NEXT: %[[WHOLE:.+]] = zc.sp_gather %[[FLAT]] ranks 2 : tensor<1x32xf32> -> tensor<1x64xf32>
  // CHECK-NEXT: zc.softmax %[[WHOLE]] : tensor<1x64xf32>
  %m = zc.matmul %a, %w2 : tensor<1x4x32xf32>, tensor<32x16xf32> -> tensor<1x4x16xf32>
  %r = zc.add %x, %m : tensor<1x4x16xf32>
  %flat = zc.reshape %r : tensor<1x4x16xf32> -> tensor<1x64xf32>
  %s = zc.softmax %flat : tensor<1x64xf32>
  %hw = zc.param_ref @head_w : tensor<64x4xf32>
  %p = zc.matmul %s, %hw : tensor<1x64xf32>, tensor<64x4xf32> -> tensor<1x4xf32>
  %loss = zc.mse %p, %y : tensor<1x4xf32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// -----

// Tests that a micro-batch whose tokens do not divide stays replicated: 3 rows over 2 ranks.

zc.param @fc_w : tensor<16x32xf32> = #zc.normal<std = 0.02>
zc.param @out_w : tensor<32x16xf32> = #zc.normal<std = 0.02>
// CHECK-LABEL: zc.forward @odd
// CHECK-NOT: sequence
// CHECK-NOT: zc.sp_
// CHECK: zc.return
zc.forward @odd(%x: tensor<3x16xf32>, %y: tensor<3x16xf32>) -> tensor<f32> {
  %w1 = zc.param_ref @fc_w : tensor<16x32xf32>
  %h = zc.matmul %x, %w1 : tensor<3x16xf32>, tensor<16x32xf32> -> tensor<3x32xf32>
  %a = zc.relu %h : tensor<3x32xf32>
  %w2 = zc.param_ref @out_w : tensor<32x16xf32>
  %m = zc.matmul %a, %w2 : tensor<3x32xf32>, tensor<32x16xf32> -> tensor<3x16xf32>
  %r = zc.add %x, %m : tensor<3x16xf32>
  %loss = zc.mse %r, %y : tensor<3x16xf32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
