// RUN: zcc-opt %s -split-input-file -zcc-mixed-precision | FileCheck %s
// RUN: zcc-opt %s -split-input-file -zcc-mixed-precision -zcc-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: zcc-opt %s -split-input-file -zcc-mixed-precision="compute-type=f32" | FileCheck %s --check-prefix=F32
// RUN: not zcc-opt %s -split-input-file -zcc-mixed-precision="compute-type=f16" 2>&1 | FileCheck %s --check-prefix=BAD

// Tests that compute ops run in bf16, that each fp32 value is cast once however often it is
// read, that float inputs are cast on entry, and that the loss stays fp32.

zc.param @w : tensor<4x3xf32> = #zc.normal<std = 0.1>
zc.param @b : tensor<3xf32> = #zc.zeros
// CHECK-LABEL: zc.forward @mlp
// F32-LABEL: zc.forward @mlp
// F32-NOT: bf16
zc.forward @mlp(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  // CHECK: %[[X:.+]] = zc.cast %{{.+}} : tensor<2x4xf32> -> tensor<2x4xbf16>
  // CHECK: %[[W:.+]] = zc.param_ref @w : tensor<4x3xf32>
  // CHECK-NEXT: %[[WL:.+]] = zc.cast %[[W]] : tensor<4x3xf32> -> tensor<4x3xbf16>
  // CHECK: %[[B:.+]] = zc.param_ref @b : tensor<3xf32>
  // CHECK-NEXT: %[[BL:.+]] = zc.cast %[[B]] : tensor<3xf32> -> tensor<3xbf16>
  %w = zc.param_ref @w : tensor<4x3xf32>
  %b = zc.param_ref @b : tensor<3xf32>
  // CHECK: %[[H:.+]] = zc.matmul %[[X]], %[[WL]] : tensor<2x4xbf16>, tensor<4x3xbf16> -> tensor<2x3xbf16>
  %h = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  // CHECK: %[[Z:.+]] = zc.bias_add %[[H]], %[[BL]] : tensor<2x3xbf16>, tensor<3xbf16>
  %z = zc.bias_add %h, %b : tensor<2x3xf32>, tensor<3xf32>
  // The second read of @b reuses its cast.
  // CHECK-NOT: zc.cast
  // CHECK: zc.bias_add %[[Z]], %[[BL]] : tensor<2x3xbf16>, tensor<3xbf16>
  %z2 = zc.bias_add %z, %b : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: zc.cross_entropy {{.+}} : tensor<2x3xbf16>, tensor<2xi32> -> tensor<f32>
  %loss = zc.cross_entropy %z2, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// The gradient of the bf16 cast is a cast back: @b's two contributions meet in bf16,
// and the optimizer gets an fp32 gradient.
// GRAD-LABEL: func.func @mlp_step
// GRAD: %[[DB:.+]] = zc.add {{.+}} : tensor<3xbf16>
// GRAD: %[[DB32:.+]] = zc.cast %[[DB]] : tensor<3xbf16> -> tensor<3xf32>
// GRAD: zc.grad_accumulate @b, %[[DB32]] : tensor<3xf32>

// -----

// The embedding gathers (and its gradient scatter-adds) fp32 rows; the tied head reads
// the table through one bf16 cast.
zc.param @wte : tensor<16x4xf32> = #zc.normal<std = 0.1>
// CHECK-LABEL: zc.forward @lm
zc.forward @lm(%ids: tensor<2x3xi32>, %tgt: tensor<2x3xi32>) -> tensor<f32> {
  // CHECK: %[[T:.+]] = zc.param_ref @wte : tensor<16x4xf32>
  // CHECK-NEXT: %[[TL:.+]] = zc.cast %[[T]] : tensor<16x4xf32> -> tensor<16x4xbf16>
  %wte = zc.param_ref @wte : tensor<16x4xf32>
  // CHECK: %[[E:.+]] = zc.embedding %[[T]][%{{.+}}] : tensor<16x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  // CHECK-NEXT: %[[EL:.+]] = zc.cast %[[E]] : tensor<2x3x4xf32> -> tensor<2x3x4xbf16>
  %e = zc.embedding %wte[%ids] : tensor<16x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  // CHECK: zc.gelu %[[EL]] : tensor<2x3x4xbf16>
  %g = zc.gelu %e : tensor<2x3x4xf32>
  // CHECK: zc.matmul %{{.+}}, %[[TL]] transpose_rhs : tensor<2x3x4xbf16>, tensor<16x4xbf16> -> tensor<2x3x16xbf16>
  %logits = zc.matmul %g, %wte transpose_rhs : tensor<2x3x4xf32>, tensor<16x4xf32> -> tensor<2x3x16xf32>
  // CHECK: zc.cross_entropy {{.+}} -> tensor<f32>
  %loss = zc.cross_entropy %logits, %tgt : tensor<2x3x16xf32>, tensor<2x3xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// BAD: compute-type must be bf16 or f32, got 'f16'
