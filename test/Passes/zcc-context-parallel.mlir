// RUN: zcc-opt %s -split-input-file -zcc-context-parallel="ranks=2" | FileCheck %s
// RUN: zcc-opt %s -split-input-file -zcc-context-parallel="ranks=2" -zcc-autodiff | FileCheck %s --check-prefix=STEP
// RUN: zcc-opt %s -split-input-file -zcc-context-parallel="ranks=2 mode=ring" -zcc-autodiff | FileCheck %s --check-prefix=RING

// Tests a GPT block over 2 context ranks: the ids and targets are cut to this rank's two chunks
// (8 tokens -> 4), the position table likewise (a bias over the flattened tokens), the norms,
// matmuls and the loss run on 4 tokens; q, k and v go to heads (the whole sequence, 1 of 2
// heads) and attention's output comes back.

zc.param @wte : tensor<16x8xf32> = #zc.normal<std = 0.02>
zc.param @wpe : tensor<8x8xf32> = #zc.normal<std = 0.01>
zc.param @ln_g : tensor<8xf32> = #zc.ones
zc.param @ln_b : tensor<8xf32> = #zc.zeros
zc.param @qkv_w : tensor<8x24xf32> = #zc.normal<std = 0.02>
zc.param @proj_w : tensor<8x8xf32> = #zc.normal<std = 0.02>
// CHECK: module attributes {zc.context_parallel = {mode = "ulysses", ranks = 2 : i64}}
// CHECK-LABEL: zc.forward @gpt
// CHECK-SAME: (%[[IDS:.+]]: tensor<2x8xi32>, %[[TGT:.+]]: tensor<2x8xi32>)
zc.forward @gpt(%ids: tensor<2x8xi32>, %tgt: tensor<2x8xi32>) -> tensor<f32> {
  // CHECK: %[[IDS_L:.+]] = zc.cp_shard %[[IDS]] ranks 2 axis 1 : tensor<2x8xi32> -> tensor<2x4xi32>
  // CHECK: %[[TGT_L:.+]] = zc.cp_shard %[[TGT]] ranks 2 axis 1 : tensor<2x8xi32> -> tensor<2x4xi32>
  %wte = zc.param_ref @wte : tensor<16x8xf32>
  %wpe = zc.param_ref @wpe : tensor<8x8xf32>
  // CHECK: zc.embedding %{{.+}}[%[[IDS_L]]] : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %tok = zc.embedding %wte[%ids] : tensor<16x8xf32>, tensor<2x8xi32> -> tensor<2x8x8xf32>
  // CHECK: %[[FLAT:.+]] = zc.reshape %{{.+}} : tensor<2x4x8xf32> -> tensor<2x32xf32>
  // CHECK: %[[POS:.+]] = zc.reshape %{{.+}} : tensor<8x8xf32> -> tensor<64xf32>
  // CHECK: %[[POS_L:.+]] = zc.cp_shard %[[POS]] ranks 2 axis 0 : tensor<64xf32> -> tensor<32xf32>
  // CHECK-NEXT: zc.bias_add %[[FLAT]], %[[POS_L]] : tensor<2x32xf32>, tensor<32xf32>
  %flat = zc.reshape %tok : tensor<2x8x8xf32> -> tensor<2x64xf32>
  %pos = zc.reshape %wpe : tensor<8x8xf32> -> tensor<64xf32>
  %emb = zc.bias_add %flat, %pos : tensor<2x64xf32>, tensor<64xf32>
  // CHECK: zc.reshape %{{.+}} : tensor<2x32xf32> -> tensor<2x4x8xf32>
  %x = zc.reshape %emb : tensor<2x64xf32> -> tensor<2x8x8xf32>
  %g = zc.param_ref @ln_g : tensor<8xf32>
  %b = zc.param_ref @ln_b : tensor<8xf32>
  // CHECK: zc.layernorm %{{.+}} : tensor<2x4x8xf32>, tensor<8xf32>
  %ln = zc.layernorm %x, %g, %b : tensor<2x8x8xf32>, tensor<8xf32>
  %w = zc.param_ref @qkv_w : tensor<8x24xf32>
  // CHECK: zc.matmul %{{.+}}, %{{.+}} : tensor<2x4x8xf32>, tensor<8x24xf32> -> tensor<2x4x24xf32>
  %qkv = zc.matmul %ln, %w : tensor<2x8x8xf32>, tensor<8x24xf32> -> tensor<2x8x24xf32>
  %q = zc.slice %qkv [0, 0, 0] : tensor<2x8x24xf32> -> tensor<2x8x8xf32>
  %k = zc.slice %qkv [0, 0, 8] : tensor<2x8x24xf32> -> tensor<2x8x8xf32>
  %v = zc.slice %qkv [0, 0, 16] : tensor<2x8x24xf32> -> tensor<2x8x8xf32>
  // CHECK: %[[Q:.+]] = zc.slice %{{.+}} [0, 0, 0] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
  // CHECK-NEXT: %[[QH:.+]] = zc.cp_to_heads %[[Q]] ranks 2 heads 2 : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  // CHECK: %[[A:.+]] = zc.causal_attention %[[QH]], %{{.+}}, %{{.+}} heads 1 : tensor<2x8x4xf32>
  // CHECK-NEXT: %[[AT:.+]] = zc.cp_to_tokens %[[A]] ranks 2 heads 2 : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
  %att = zc.causal_attention %q, %k, %v heads 2 : tensor<2x8x8xf32>
  %wp = zc.param_ref @proj_w : tensor<8x8xf32>
  // CHECK: zc.matmul %[[AT]], %{{.+}} : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
  %o = zc.matmul %att, %wp : tensor<2x8x8xf32>, tensor<8x8xf32> -> tensor<2x8x8xf32>
  %r = zc.add %x, %o : tensor<2x8x8xf32>
  %logits = zc.matmul %r, %wte transpose_rhs : tensor<2x8x8xf32>, tensor<16x8xf32> -> tensor<2x8x16xf32>
  // CHECK: zc.cross_entropy %{{.+}}, %[[TGT_L]] : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
  %loss = zc.cross_entropy %logits, %tgt : tensor<2x8x16xf32>, tensor<2x8xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
// Differentiated: the exchanges' gradients are the exchanges back, the position table's
// gradient is placed back in its whole rows (zeros elsewhere; the data-parallel average sums
// the context ranks' parts).
// STEP-LABEL: func.func @gpt_step
// STEP: zc.backward_seed
// STEP: zc.cp_to_heads %{{.+}} ranks 2 heads 2 : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
// STEP: zc.cp_to_tokens %{{.+}} ranks 2 heads 2 : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
// STEP: zc.cp_unshard %{{.+}} ranks 2 axis 0 : tensor<32xf32> -> tensor<64xf32>
// STEP: zc.grad_accumulate @wpe

// -----

// Tests the rotary embedding running on the whole sequence of this rank's heads (global
// positions), and grouped key/value heads exchanged by their own count.

zc.param @q_w : tensor<8x8xf32> = #zc.normal<std = 0.02>
zc.param @kv_w : tensor<8x4xf32> = #zc.normal<std = 0.02>
// CHECK-LABEL: zc.forward @rotary
zc.forward @rotary(%x: tensor<1x8x8xf32> {zc.input = "features"}, %y: tensor<1x8x8xf32> {zc.input = "values"}) -> tensor<f32> {
  // CHECK: %[[X:.+]] = zc.cp_shard %{{.+}} ranks 2 axis 1 : tensor<1x8x8xf32> -> tensor<1x4x8xf32>
  %wq = zc.param_ref @q_w : tensor<8x8xf32>
  %wkv = zc.param_ref @kv_w : tensor<8x4xf32>
  %q = zc.matmul %x, %wq : tensor<1x8x8xf32>, tensor<8x8xf32> -> tensor<1x8x8xf32>
  %k = zc.matmul %x, %wkv : tensor<1x8x8xf32>, tensor<8x4xf32> -> tensor<1x8x4xf32>
  // CHECK: %[[QH:.+]] = zc.cp_to_heads %{{.+}} ranks 2 heads 4 : tensor<1x4x8xf32> -> tensor<1x8x4xf32>
  %qr = zc.rotary %q heads 4 theta 10000.0 : tensor<1x8x8xf32>
  // CHECK: %[[KH:.+]] = zc.cp_to_heads %{{.+}} ranks 2 heads 2 : tensor<1x4x4xf32> -> tensor<1x8x2xf32>
  // CHECK: zc.rotary %[[QH]] heads 2 theta 1.000000e+04 : tensor<1x8x4xf32>
  // CHECK: zc.rotary %[[KH]] heads 1 theta 1.000000e+04 : tensor<1x8x2xf32>
  %kr = zc.rotary %k heads 2 theta 10000.0 : tensor<1x8x4xf32>
  // The value is k before its rotary: its one exchange serves both.
  // CHECK: zc.causal_attention %{{.+}}, %{{.+}}, %[[KH]] heads 2 kv_heads 1 : tensor<1x8x4xf32>, tensor<1x8x2xf32>
  %a = zc.causal_attention %qr, %kr, %k heads 4 kv_heads 2 : tensor<1x8x8xf32>, tensor<1x8x4xf32>
  %loss = zc.mse %a, %y : tensor<1x8x8xf32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// -----

// Tests auto's choice where the heads do not divide (3 over 2 ranks): the ring, every head on
// every rank, the attention and its gradient marked.

zc.param @w : tensor<6x6xf32> = #zc.normal<std = 0.02>
// CHECK: module attributes {zc.context_parallel = {mode = "ring", ranks = 2 : i64}}
// CHECK-LABEL: zc.forward @odd_heads
zc.forward @odd_heads(%x: tensor<1x8x6xf32> {zc.input = "features"}, %y: tensor<1x8x6xf32> {zc.input = "values"}) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<6x6xf32>
  %q = zc.matmul %x, %w : tensor<1x8x6xf32>, tensor<6x6xf32> -> tensor<1x8x6xf32>
  // CHECK-NOT: zc.cp_to_heads
  // CHECK: zc.causal_attention %{{.+}}, %{{.+}}, %{{.+}} heads 3 {zc.context_ring = 2 : i64} : tensor<1x4x6xf32>
  %a = zc.causal_attention %q, %q, %q heads 3 : tensor<1x8x6xf32>
  %loss = zc.mse %a, %y : tensor<1x8x6xf32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// Ring mode on the GPT block and the rotary one: no exchange of heads; attention, its
// gradient and the rotary embedding (both ways) run on this rank's tokens, marked.
// RING-LABEL: func.func @gpt_step
// RING-NOT: zc.cp_to_heads
// RING: zc.causal_attention {{.+}} heads 2 {zc.context_ring = 2 : i64} : tensor<2x4x8xf32>
// RING: zc.causal_attention_grad {{.+}}zc.context_ring = 2
// RING-LABEL: func.func @rotary_step
// RING: zc.rotary %{{.+}} heads 4 theta 1.000000e+04 {zc.context_ring = 2 : i64} : tensor<1x4x8xf32>
// RING: zc.causal_attention {{.+}} heads 4 kv_heads 2 {zc.context_ring = 2 : i64}
// RING: zc.rotary %{{.+}} heads 4 theta 1.000000e+04 inverse {zc.context_ring = 2 : i64}

// -----

// A MoE block over 2 context ranks: each routes its 4 of the 8 tokens (a sigmoid router with a
// balancing bias, group-limited, as DeepSeek-V3's), dispatches their 2 x 4 x 2 = 16 rows, runs
// the experts' products and SwiGLU on them and combines them back; the router z-loss is a mean
// over this rank's tokens.
zc.param @router : tensor<4x4xf32> = #zc.normal<std = 0.02>
zc.param @bias : tensor<4xf32> = #zc.zeros
zc.param @gate_up : tensor<4x4x12xf32> = #zc.normal<std = 0.02>
zc.param @down : tensor<4x6x4xf32> = #zc.normal<std = 0.02>
// CHECK-LABEL: zc.forward @moe
zc.forward @moe(%x: tensor<2x8x4xf32> {zc.input = "features"}, %y: tensor<2x8x4xf32> {zc.input = "values"}) -> tensor<f32> {
  %r = zc.param_ref @router : tensor<4x4xf32>
  %b = zc.param_ref @bias : tensor<4xf32>
  %wgu = zc.param_ref @gate_up : tensor<4x4x12xf32>
  %wd = zc.param_ref @down : tensor<4x6x4xf32>
  // CHECK: %[[LG:.+]] = zc.matmul {{.+}} -> tensor<2x4x4xf32>
  %logits = zc.matmul %x, %r : tensor<2x8x4xf32>, tensor<4x4xf32> -> tensor<2x8x4xf32>
  // CHECK: zc.moe_route %[[LG]] bias %{{.+}} : tensor<4xf32> top_k 2 sigmoid normalize scale 2.500000e+00 groups 2 topk_groups 1 : tensor<2x4x4xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<5xi32>
  %w, %e, %rows, %o = zc.moe_route %logits bias %b : tensor<4xf32> top_k 2 sigmoid normalize scale 2.5 groups 2 topk_groups 1
      : tensor<2x8x4xf32> -> tensor<2x8x2xf32>, tensor<2x8x2xi32>, tensor<2x8x2xi32>, tensor<5xi32>
  // CHECK: zc.moe_dispatch {{.+}} : tensor<2x4x4xf32>, tensor<2x4x2xi32> -> tensor<16x4xf32>
  %xs = zc.moe_dispatch %x, %rows : tensor<2x8x4xf32>, tensor<2x8x2xi32> -> tensor<32x4xf32>
  // CHECK: zc.grouped_matmul {{.+}} : tensor<16x4xf32>, tensor<4x4x12xf32>, tensor<5xi32> -> tensor<16x12xf32>
  %gu = zc.grouped_matmul %xs, %wgu, %o : tensor<32x4xf32>, tensor<4x4x12xf32>, tensor<5xi32> -> tensor<32x12xf32>
  // CHECK: zc.slice %{{.+}} [0, 0] : tensor<16x12xf32> -> tensor<16x6xf32>
  %g = zc.slice %gu [0, 0] : tensor<32x12xf32> -> tensor<32x6xf32>
  // CHECK: zc.slice %{{.+}} [0, 6] : tensor<16x12xf32> -> tensor<16x6xf32>
  %u = zc.slice %gu [0, 6] : tensor<32x12xf32> -> tensor<32x6xf32>
  %a = zc.silu %g : tensor<32x6xf32>
  // CHECK: zc.mul {{.+}} : tensor<16x6xf32>
  %h = zc.mul %a, %u : tensor<32x6xf32>
  // CHECK: zc.grouped_matmul {{.+}} : tensor<16x6xf32>, tensor<4x6x4xf32>, tensor<5xi32> -> tensor<16x4xf32>
  %ys = zc.grouped_matmul %h, %wd, %o : tensor<32x6xf32>, tensor<4x6x4xf32>, tensor<5xi32> -> tensor<32x4xf32>
  // CHECK: zc.moe_combine {{.+}} : tensor<16x4xf32>, tensor<2x4x2xf32>, tensor<2x4x2xi32> -> tensor<2x4x4xf32>
  %m = zc.moe_combine %ys, %w, %rows : tensor<32x4xf32>, tensor<2x8x2xf32>, tensor<2x8x2xi32> -> tensor<2x8x4xf32>
  // CHECK: zc.moe_z_loss %[[LG]] coef 1.000000e-03 : tensor<2x4x4xf32> -> tensor<f32>
  %z = zc.moe_z_loss %logits coef 0.001 : tensor<2x8x4xf32> -> tensor<f32>
  %mse = zc.mse %m, %y : tensor<2x8x4xf32> -> tensor<f32>
  %loss = zc.add %mse, %z : tensor<f32>
  zc.return %loss : tensor<f32>
}

// -----

// Hugging Face's load-balancing loss, every layer's routings pooled (joined along the tokens: a
// set of them, whatever the order): each rank's the whole sequence's, from its statistics summed
// over the context ranks, and so its gradient.
zc.param @router : tensor<4x4xf32> = #zc.normal<std = 0.02>
// CHECK-LABEL: zc.forward @aux_loss
zc.forward @aux_loss(%x: tensor<2x8x4xf32> {zc.input = "features"}, %y: tensor<2x8x4xf32> {zc.input = "values"}) -> tensor<f32> {
  %r = zc.param_ref @router : tensor<4x4xf32>
  %l = zc.matmul %x, %r : tensor<2x8x4xf32>, tensor<4x4xf32> -> tensor<2x8x4xf32>
  %w, %e, %rows, %o = zc.moe_route %l top_k 2 normalize
      : tensor<2x8x4xf32> -> tensor<2x8x2xf32>, tensor<2x8x2xi32>, tensor<2x8x2xi32>, tensor<5xi32>
  %lg = zc.concat %l, %l axis 1 : tensor<2x8x4xf32>, tensor<2x8x4xf32> -> tensor<2x16x4xf32>
  %ex = zc.concat %e, %e axis 1 : tensor<2x8x2xi32>, tensor<2x8x2xi32> -> tensor<2x16x2xi32>
  // CHECK: zc.concat {{.+}} axis 1 : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x8x4xf32>
  // CHECK: zc.moe_aux_loss {{.+}} coef 2.000000e-02 {zc.context_pooled = 2 : i64} : tensor<2x8x4xf32>, tensor<2x8x2xi32> -> tensor<f32>
  %aux = zc.moe_aux_loss %lg, %ex coef 0.02 : tensor<2x16x4xf32>, tensor<2x16x2xi32> -> tensor<f32>
  %mse = zc.mse %x, %y : tensor<2x8x4xf32> -> tensor<f32>
  %loss = zc.add %mse, %aux : tensor<f32>
  zc.return %loss : tensor<f32>
}
// STEP-LABEL: func.func @aux_loss_step
// STEP: zc.moe_aux_loss_grad {{.+}}zc.context_pooled = 2 : i64
