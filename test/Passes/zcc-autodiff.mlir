// RUN: zcc-opt %s -split-input-file -zcc-autodiff -verify-diagnostics | FileCheck %s

// Tests the matmul, bias_add, relu and cross-entropy rules, and that the forward
// becomes @<name>_step with one grad_accumulate per parameter.

zc.param @w : tensor<4x3xf32> = #zc.normal<std = 0.1>
zc.param @b : tensor<3xf32> = #zc.zeros
// CHECK-LABEL: func.func @mlp_step
// CHECK-SAME: attributes {zc.role = "step"}
zc.forward @mlp(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4x3xf32>
  %b = zc.param_ref @b : tensor<3xf32>
  %h = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %hb = zc.bias_add %h, %b : tensor<2x3xf32>, tensor<3xf32>
  %r = zc.relu %hb : tensor<2x3xf32>
  %l = zc.cross_entropy %r, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// CHECK: %[[L:.+]] = zc.cross_entropy %[[R:.+]], %{{.+}}
// CHECK: %[[ONE:.+]] = arith.constant {zc.backward_seed} dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DR:.+]] = zc.cross_entropy_grad %[[ONE]], %[[R]], %{{.+}}
// CHECK: %[[DHB:.+]] = zc.relu_grad %[[DR]], %[[HB:.+]] : tensor<2x3xf32>
// CHECK: %[[DB:.+]] = zc.reduce_sum %[[DHB]] [0] : tensor<2x3xf32> -> tensor<3xf32>
// The input %x needs no gradient: only dW is computed.
// CHECK-NOT: transpose_rhs
// CHECK: %[[DW:.+]] = zc.matmul %{{.+}}, %[[DHB]] transpose_lhs : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK: zc.grad_accumulate @b, %[[DB]]
// CHECK: zc.grad_accumulate @w, %[[DW]]
// CHECK: return %[[L]] : tensor<f32>
// CHECK-NOT: zc.forward

// -----

// Tests that a parameter read twice (tied embedding and LM head) gets the sum of
// both contributions, and that a branch not reaching the loss costs nothing.

zc.param @wte : tensor<8x4xf32> = #zc.normal<std = 0.1>
// CHECK-LABEL: func.func @lm_step
zc.forward @lm(%ids: tensor<2x3xi32>, %tgt: tensor<2x3xi32>) -> tensor<f32> {
  %wte = zc.param_ref @wte : tensor<8x4xf32>
  %e = zc.embedding %wte[%ids] : tensor<8x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %unused = zc.gelu %e : tensor<2x3x4xf32>
  %wte2 = zc.param_ref @wte : tensor<8x4xf32>
  %logits = zc.matmul %e, %wte2 transpose_rhs : tensor<2x3x4xf32>, tensor<8x4xf32> -> tensor<2x3x8xf32>
  %l = zc.cross_entropy %logits, %tgt : tensor<2x3x8xf32>, tensor<2x3xi32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// CHECK-NOT: zc.gelu
// CHECK: %[[DL:.+]] = zc.cross_entropy_grad
// The shared 2-D rhs: its gradient sums over the batch by flattening the rows.
// CHECK-DAG: %[[DE:.+]] = zc.matmul %[[DL]], %{{.+}} : tensor<2x3x8xf32>, tensor<8x4xf32> -> tensor<2x3x4xf32>
// CHECK-DAG: %[[FD:.+]] = zc.reshape %[[DL]] : tensor<2x3x8xf32> -> tensor<6x8xf32>
// CHECK-DAG: %[[FE:.+]] = zc.reshape %{{.+}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK: %[[DW2:.+]] = zc.matmul %[[FD]], %[[FE]] transpose_lhs : tensor<6x8xf32>, tensor<6x4xf32> -> tensor<8x4xf32>
// CHECK: %[[DW1:.+]] = zc.embedding_grad %[[DE]][%{{.+}}] : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<8x4xf32>
// CHECK: %[[SUM:.+]] = zc.add %[[DW2]], %[[DW1]] : tensor<8x4xf32>
// CHECK: zc.grad_accumulate @wte, %[[SUM]]

// -----

// Tests the layernorm, attention, gelu, sub/mul/scale, slice/concat, reshape and
// transpose rules.

zc.param @g : tensor<4xf32> = #zc.ones
zc.param @beta : tensor<4xf32> = #zc.zeros
zc.param @m : tensor<1x2x4xf32> = #zc.ones
// CHECK-LABEL: func.func @blocks_step
zc.forward @blocks(%x: tensor<1x2x4xf32>, %t: tensor<1x2x4xf32>) -> tensor<f32> {
  %g = zc.param_ref @g : tensor<4xf32>
  %beta = zc.param_ref @beta : tensor<4xf32>
  %m = zc.param_ref @m : tensor<1x2x4xf32>
  %xm = zc.mul %x, %m : tensor<1x2x4xf32>
  %n = zc.layernorm %xm, %g, %beta : tensor<1x2x4xf32>, tensor<4xf32>
  %a = zc.causal_attention %n, %n, %n heads 2 scale 0.5 softcap 20.0 window 1 : tensor<1x2x4xf32>
  %s = zc.slice %a [0, 0, 0] : tensor<1x2x4xf32> -> tensor<1x2x2xf32>
  %c = zc.concat %s, %s axis 2 : tensor<1x2x2xf32>, tensor<1x2x2xf32> -> tensor<1x2x4xf32>
  %tr = zc.transpose %c [0, 2, 1] : tensor<1x2x4xf32> -> tensor<1x4x2xf32>
  %rs = zc.reshape %tr : tensor<1x4x2xf32> -> tensor<1x2x4xf32>
  %ge = zc.gelu %rs : tensor<1x2x4xf32>
  %d = zc.sub %ge, %n : tensor<1x2x4xf32>
  %sc = zc.scale %d by 0.5 : tensor<1x2x4xf32>
  %l = zc.mse %sc, %t : tensor<1x2x4xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// CHECK: zc.mse_grad
// CHECK: zc.scale %{{.+}} by 5.000000e-01
// CHECK: zc.scale %{{.+}} by -1.000000e+00
// CHECK: zc.gelu_grad
// CHECK: zc.reshape %{{.+}} : tensor<1x2x4xf32> -> tensor<1x4x2xf32>
// CHECK: zc.transpose %{{.+}} [0, 2, 1] : tensor<1x4x2xf32> -> tensor<1x2x4xf32>
// CHECK: zc.slice %{{.+}} [0, 0, 0] : tensor<1x2x4xf32> -> tensor<1x2x2xf32>
// CHECK: zc.slice %{{.+}} [0, 0, 2] : tensor<1x2x4xf32> -> tensor<1x2x2xf32>
// CHECK: zc.add
// CHECK: zc.slice_grad %{{.+}} [0, 0, 0] : tensor<1x2x2xf32> -> tensor<1x2x4xf32>
// CHECK: zc.causal_attention_grad %{{.+}} heads 2 scale 5.000000e-01 softcap 2.000000e+01 window 1 :
// CHECK: zc.layernorm_grad
// CHECK: zc.mul %{{.+}}, %{{.+}} : tensor<1x2x4xf32>
// CHECK-DAG: zc.grad_accumulate @m
// CHECK-DAG: zc.grad_accumulate @g
// CHECK-DAG: zc.grad_accumulate @beta

// -----

// Llama's rules: rmsnorm (input and gain), rotary (the inverse rotation, over the same rotary_dims), the SwiGLU
// product silu(gate) * up.

zc.param @ng : tensor<8xf32> = #zc.ones
zc.param @up : tensor<2x3x8xf32> = #zc.ones
// CHECK-LABEL: func.func @llama_step
zc.forward @llama(%x: tensor<2x3x8xf32>, %t: tensor<2x3x8xf32>) -> tensor<f32> {
  %ng = zc.param_ref @ng : tensor<8xf32>
  %up = zc.param_ref @up : tensor<2x3x8xf32>
  %n = zc.rmsnorm %x, %ng {epsilon = 1.0e-05 : f64} : tensor<2x3x8xf32>, tensor<8xf32>
  %r = zc.rotary %n heads 2 theta 10000.0 rotary_dims 2 : tensor<2x3x8xf32>
  %s = zc.silu %r : tensor<2x3x8xf32>
  %p = zc.mul %s, %up : tensor<2x3x8xf32>
  %l = zc.mse %p, %t : tensor<2x3x8xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// CHECK: zc.mse_grad
// CHECK: %[[DS:.+]] = zc.mul
// CHECK: %[[DR:.+]] = zc.silu_grad %[[DS]], %{{.+}} : tensor<2x3x8xf32>
// CHECK: %[[DN:.+]] = zc.rotary %[[DR]] heads 2 theta 1.000000e+04 inverse rotary_dims 2 : tensor<2x3x8xf32>
// CHECK: %{{.+}}, %[[DG:.+]] = zc.rmsnorm_grad %[[DN]], %{{.+}}, %{{.+}} {epsilon = 1.000000e-05 : f64} : tensor<2x3x8xf32>, tensor<8xf32>
// CHECK: zc.grad_accumulate @ng, %[[DG]]

// -----

// Grouped-query attention: the key/value gradients have the key/value heads' shape.

zc.param @wk : tensor<2x3x2xf32> = #zc.ones
// CHECK-LABEL: func.func @gqa_step
zc.forward @gqa(%q: tensor<2x3x8xf32>, %t: tensor<2x3x8xf32>) -> tensor<f32> {
  %wk = zc.param_ref @wk : tensor<2x3x2xf32>
  %a = zc.causal_attention %q, %wk, %wk heads 4 kv_heads 1 : tensor<2x3x8xf32>, tensor<2x3x2xf32>
  %l = zc.mse %a, %t : tensor<2x3x8xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// CHECK: %{{.+}}, %[[DK:.+]], %[[DV:.+]] = zc.causal_attention_grad %{{.+}}, %arg0, %{{.+}}, %{{.+}} heads 4 kv_heads 1 : tensor<2x3x8xf32>, tensor<2x3x2xf32>
// CHECK: %[[DW:.+]] = zc.add %[[DK]], %[[DV]] : tensor<2x3x2xf32>
// CHECK: zc.grad_accumulate @wk, %[[DW]]

// -----

// Compression training's fake quantization: the straight-through estimator, the weight's gradient is
// the product's, untouched; the gate (a step input) gets none.

zc.param @wq : tensor<3x4xf32> = #zc.ones
// CHECK-LABEL: func.func @ste_step
zc.forward @ste(%x: tensor<2x3xf32>, %t: tensor<2x4xf32>, %gate: tensor<f32> {zc.input = "compression_gate"}) -> tensor<f32> {
  %w = zc.param_ref @wq : tensor<3x4xf32>
  %q = zc.fake_quantize %w, %gate bits 8 groups 1 : tensor<3x4xf32>
  %y = zc.matmul %x, %q : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %l = zc.mse %y, %t : tensor<2x4xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// CHECK: %[[DW:.+]] = zc.matmul %arg0, %{{.+}} transpose_lhs : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: zc.grad_accumulate @wq, %[[DW]]

// -----

// Tests the Mixture-of-Experts rules: the route's weights get zc.moe_route_grad (the choice, its
// integer results, none); the grouped products one grouped_matmul_grad each, whose weight
// gradient is the expert weights'; combine and dispatch their gradients; the router's logits
// the sum of the route's, the load-balancing loss's and the z-loss's contributions.

zc.param @router : tensor<8x4xf32> = #zc.ones
zc.param @experts : tensor<4x8x8xf32> = #zc.ones
zc.param @shift : tensor<2x3x8xf32> = #zc.ones
// CHECK-LABEL: func.func @moe_step
zc.forward @moe(%x0: tensor<2x3x8xf32>, %t: tensor<2x3x8xf32>) -> tensor<f32> {
  %s = zc.param_ref @shift : tensor<2x3x8xf32>
  %x = zc.add %x0, %s : tensor<2x3x8xf32>
  %r = zc.param_ref @router : tensor<8x4xf32>
  %ew = zc.param_ref @experts : tensor<4x8x8xf32>
  %logits = zc.matmul %x, %r : tensor<2x3x8xf32>, tensor<8x4xf32> -> tensor<2x3x4xf32>
  %w, %e, %rows, %o = zc.moe_route %logits top_k 2 normalize
      : tensor<2x3x4xf32> -> tensor<2x3x2xf32>, tensor<2x3x2xi32>, tensor<2x3x2xi32>, tensor<5xi32>
  %xs = zc.moe_dispatch %x, %rows : tensor<2x3x8xf32>, tensor<2x3x2xi32> -> tensor<12x8xf32>
  %h = zc.grouped_matmul %xs, %ew, %o : tensor<12x8xf32>, tensor<4x8x8xf32>, tensor<5xi32> -> tensor<12x8xf32>
  %y = zc.moe_combine %h, %w, %rows : tensor<12x8xf32>, tensor<2x3x2xf32>, tensor<2x3x2xi32> -> tensor<2x3x8xf32>
  %l = zc.mse %y, %t : tensor<2x3x8xf32> -> tensor<f32>
  %aux = zc.moe_aux_loss %logits, %e coef 0.01 : tensor<2x3x4xf32>, tensor<2x3x2xi32> -> tensor<f32>
  %z = zc.moe_z_loss %logits coef 0.001 : tensor<2x3x4xf32> -> tensor<f32>
  %la = zc.add %l, %aux : tensor<f32>
  %lz = zc.add %la, %z : tensor<f32>
  zc.return %lz : tensor<f32>
}
// CHECK: %[[W:.+]], %[[E:.+]], %[[ROWS:.+]], %[[O:.+]] = zc.moe_route
// CHECK: %[[DZ:.+]] = zc.moe_z_loss_grad %{{.+}}, %[[LOGITS:.+]] coef 1.000000e-03 : tensor<2x3x4xf32>
// CHECK: %[[DA:.+]] = zc.moe_aux_loss_grad %{{.+}}, %[[LOGITS]], %[[E]] coef 1.000000e-02 : tensor<2x3x4xf32>, tensor<2x3x2xi32>
// CHECK: %[[S1:.+]] = zc.add %[[DZ]], %[[DA]]
// CHECK: %[[DYS:.+]], %[[DW:.+]] = zc.moe_combine_grad %{{.+}}, %{{.+}}, %[[W]], %[[ROWS]]
// CHECK: %[[DXS:.+]], %[[DEW:.+]] = zc.grouped_matmul_grad %[[DYS]], %{{.+}}, %{{.+}}, %[[O]]
// CHECK: zc.moe_dispatch_grad %[[DXS]], %[[ROWS]] : tensor<12x8xf32>, tensor<2x3x2xi32> -> tensor<2x3x8xf32>
// CHECK: %[[DR:.+]] = zc.moe_route_grad %[[DW]], %[[LOGITS]], %[[E]], %[[ROWS]] top_k 2 normalize
// CHECK: zc.add %[[S1]], %[[DR]]
// CHECK-DAG: zc.grad_accumulate @experts, %[[DEW]]
// CHECK-DAG: zc.grad_accumulate @router

// -----

zc.param @w : tensor<4xf32> = #zc.zeros
zc.forward @bad(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4xf32>
  %h = zc.add %x, %w : tensor<4xf32>
  %a = zc.all_reduce sum %h ranks 2 : tensor<4xf32>
  // expected-error @-1 {{'zc.all_reduce' op has no gradient rule (autodiff)}}
  %l = zc.mse %a, %y : tensor<4xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
