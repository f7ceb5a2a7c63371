// RUN: zcc-opt %s -split-input-file -zcc-mixed-precision | FileCheck %s
// RUN: zcc-opt %s -split-input-file -zcc-mixed-precision -zcc-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: zcc-opt %s -split-input-file -zcc-mixed-precision -zcc-autodiff -zcc-optimizer | FileCheck %s --check-prefix=OPT
// RUN: zcc-opt %s -split-input-file -zcc-mixed-precision="compute-type=f32" | FileCheck %s --check-prefix=F32
// RUN: not zcc-opt %s -split-input-file -zcc-mixed-precision="compute-type=f16" 2>&1 | FileCheck %s --check-prefix=BAD

// Tests that parameters are stored in bf16 and read as they are, that compute ops run in
// bf16, that float inputs are cast once on entry however often they are read, that the
// loss stays fp32, and that the optimizer updates each bf16 parameter through an fp32
// master copy.

zc.param @w : tensor<4x3xf32> = #zc.normal<std = 0.1>
zc.param @b : tensor<3xf32> = #zc.zeros
// CHECK: zc.param @w : tensor<4x3xbf16> = #zc.normal<std = 0.1>
// CHECK: zc.param @b : tensor<3xbf16> = #zc.zeros
// CHECK-LABEL: zc.forward @mlp
// F32-LABEL: zc.forward @mlp
// F32-NOT: bf16
zc.forward @mlp(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  // CHECK: %[[X:.+]] = zc.cast %{{.+}} : tensor<2x4xf32> -> tensor<2x4xbf16>
  // CHECK-NOT: zc.cast
  // CHECK: %[[W:.+]] = zc.param_ref @w : tensor<4x3xbf16>
  // CHECK: %[[B:.+]] = zc.param_ref @b : tensor<3xbf16>
  %w = zc.param_ref @w : tensor<4x3xf32>
  %b = zc.param_ref @b : tensor<3xf32>
  // CHECK: %[[H:.+]] = zc.matmul %[[X]], %[[W]] : tensor<2x4xbf16>, tensor<4x3xbf16> -> tensor<2x3xbf16>
  %h = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  // CHECK: %[[Z:.+]] = zc.bias_add %[[H]], %[[B]] : tensor<2x3xbf16>, tensor<3xbf16>
  %z = zc.bias_add %h, %b : tensor<2x3xf32>, tensor<3xf32>
  // CHECK-NOT: zc.cast
  // CHECK: zc.bias_add %[[Z]], %[[B]] : tensor<2x3xbf16>, tensor<3xbf16>
  %z2 = zc.bias_add %z, %b : tensor<2x3xf32>, tensor<3xf32>
  // The input's second reader reuses its cast.
  // CHECK-NOT: zc.cast
  // CHECK: zc.matmul %[[X]], %[[W]]
  %h2 = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z3 = zc.add %z2, %h2 : tensor<2x3xf32>
  // CHECK: zc.cross_entropy {{.+}} : tensor<2x3xbf16>, tensor<2xi32> -> tensor<f32>
  %loss = zc.cross_entropy %z3, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// @b's two gradient contributions meet in bf16, and the gradient buffers are bf16.
// GRAD-LABEL: func.func @mlp_step
// GRAD: %[[DB:.+]] = zc.add {{.+}} : tensor<3xbf16>
// GRAD-NOT: zc.cast
// GRAD: zc.grad_accumulate @b, %[[DB]] : tensor<3xbf16>

// Each parameter: an fp32 master copy besides the two moments; AdamW reads the bf16
// gradient and names the master.
// OPT: zc.param @w : tensor<4x3xbf16>
// OPT-NEXT: zc.state @w.master : tensor<4x3xf32> of @w
// OPT-NEXT: zc.state @w.exp_avg : tensor<4x3xf32> of @w
// OPT-NEXT: zc.state @w.exp_avg_sq : tensor<4x3xf32> of @w
// OPT-LABEL: func.func @mlp_update
// OPT: %[[G:.+]] = zc.grad_ref @w : tensor<4x3xbf16>
// OPT: zc.adamw @w, %[[G]] state(@w.exp_avg, @w.exp_avg_sq) master(@w.master) lr {{.+}} : tensor<4x3xbf16>

// -----

// The embedding gathers (and its gradient scatter-adds) fp32 rows of the bf16 table read
// through a cast up; the tied head reads the bf16 table itself, and the two gradient
// contributions meet in bf16.
zc.param @wte : tensor<16x4xf32> = #zc.normal<std = 0.1>
// CHECK-LABEL: zc.forward @lm
// F32-LABEL: zc.forward @lm
zc.forward @lm(%ids: tensor<2x3xi32>, %tgt: tensor<2x3xi32>) -> tensor<f32> {
  // CHECK: %[[T:.+]] = zc.param_ref @wte : tensor<16x4xbf16>
  // CHECK-NEXT: %[[TF:.+]] = zc.cast %[[T]] : tensor<16x4xbf16> -> tensor<16x4xf32>
  %wte = zc.param_ref @wte : tensor<16x4xf32>
  // CHECK: %[[E:.+]] = zc.embedding %[[TF]][%{{.+}}] : tensor<16x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  // CHECK-NEXT: %[[EL:.+]] = zc.cast %[[E]] : tensor<2x3x4xf32> -> tensor<2x3x4xbf16>
  %e = zc.embedding %wte[%ids] : tensor<16x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  // CHECK: zc.gelu %[[EL]] : tensor<2x3x4xbf16>
  %g = zc.gelu %e : tensor<2x3x4xf32>
  // CHECK: zc.matmul %{{.+}}, %[[T]] transpose_rhs : tensor<2x3x4xbf16>, tensor<16x4xbf16> -> tensor<2x3x16xbf16>
  %logits = zc.matmul %g, %wte transpose_rhs : tensor<2x3x4xf32>, tensor<16x4xf32> -> tensor<2x3x16xf32>
  // CHECK: zc.cross_entropy {{.+}} -> tensor<f32>
  %loss = zc.cross_entropy %logits, %tgt : tensor<2x3x16xf32>, tensor<2x3xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
// GRAD-LABEL: func.func @lm_step
// GRAD: %[[DE:.+]] = zc.embedding_grad {{.+}} -> tensor<16x4xf32>
// GRAD: %[[DEL:.+]] = zc.cast %[[DE]] : tensor<16x4xf32> -> tensor<16x4xbf16>
// GRAD: %[[SUM:.+]] = zc.add %{{.+}}, %[[DEL]] : tensor<16x4xbf16>
// GRAD: zc.grad_accumulate @wte, %[[SUM]] : tensor<16x4xbf16>

// -----

// A parameter the user declared bf16 stays as it is and gets a master too.
zc.param @v : tensor<3xbf16> = #zc.ones
// CHECK: zc.param @v : tensor<3xbf16> = #zc.ones
zc.forward @scaled(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<f32> {
  // CHECK: zc.param_ref @v : tensor<3xbf16>
  // CHECK-NOT: zc.cast {{.+}} -> tensor<3xf32>
  %v = zc.param_ref @v : tensor<3xbf16>
  %vf = zc.cast %v : tensor<3xbf16> -> tensor<3xf32>
  %h = zc.mul %x, %vf : tensor<3xf32>
  %l = zc.mse %h, %y : tensor<3xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// OPT: zc.state @v.master : tensor<3xf32> of @v
// OPT: zc.adamw @v, {{.+}} master(@v.master)

// -----

// A routing's balancing bias (read only as zc.moe_route's `bias`) stays fp32 and gets no master:
// train.bin moves it by steps of 1e-3, which bf16 would round away. The router weight goes low
// and is read cast up, as the router's product stays fp32.
zc.param @router : tensor<4x8xf32> = #zc.normal<std = 0.1>
zc.param @router_bias : tensor<8xf32> = #zc.zeros
// CHECK: zc.param @router : tensor<4x8xbf16>
// CHECK: zc.param @router_bias : tensor<8xf32> = #zc.zeros
zc.forward @routed(%x: tensor<2x3x4xf32>) -> tensor<f32> {
  // CHECK: zc.param_ref @router_bias : tensor<8xf32>
  // CHECK-NOT: zc.cast {{.+}} -> tensor<8xf32>
  // CHECK: zc.moe_route %{{.+}} bias %{{.+}} : tensor<8xf32>
  %r = zc.param_ref @router : tensor<4x8xf32>
  %b = zc.param_ref @router_bias : tensor<8xf32>
  %logits = zc.matmul %x, %r : tensor<2x3x4xf32>, tensor<4x8xf32> -> tensor<2x3x8xf32>
  %w, %e, %rows, %o = zc.moe_route %logits bias %b : tensor<8xf32> top_k 2 sigmoid normalize
      : tensor<2x3x8xf32> -> tensor<2x3x2xf32>, tensor<2x3x2xi32>, tensor<2x3x2xi32>, tensor<9xi32>
  %l = zc.moe_aux_loss %logits, %e coef 1.0e-02 : tensor<2x3x8xf32>, tensor<2x3x2xi32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// OPT-NOT: @router_bias.master
// OPT-NOT: zc.adamw @router_bias

// BAD: compute-type must be bf16 or f32, got 'f16'
