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

