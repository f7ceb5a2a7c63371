// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-fuse | FileCheck %s
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-fuse -zcc-optimizer -zcc-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// A pre-LN residual stream: r = x + f(ln1(x)), then ln2(r). Forward: the add and the layernorm
// reading it become add_layernorm (the sum goes on to the loss, and backward reads it).
// Backward: ln2's input gradient added to r's other gradient becomes layernorm_grad_add.

zc.param @g1 : tensor<8xf32> = #zc.ones
zc.param @b1 : tensor<8xf32> = #zc.zeros
zc.param @w : tensor<8x8xf32> = #zc.normal<std = 0.1>
zc.param @g2 : tensor<8xf32> = #zc.ones
zc.param @b2 : tensor<8xf32> = #zc.zeros
zc.forward @block(%x: tensor<2x3x8xf32> {zc.input = "features"}, %t: tensor<2x3x8xf32> {zc.input = "values"}) -> tensor<f32> {
  %g1 = zc.param_ref @g1 : tensor<8xf32>
  %b1 = zc.param_ref @b1 : tensor<8xf32>
  %w = zc.param_ref @w : tensor<8x8xf32>
  %h = zc.layernorm %x, %g1, %b1 : tensor<2x3x8xf32>, tensor<8xf32>
  %f = zc.matmul %h, %w : tensor<2x3x8xf32>, tensor<8x8xf32> -> tensor<2x3x8xf32>
  %r = zc.add %x, %f : tensor<2x3x8xf32>
  %g2 = zc.param_ref @g2 : tensor<8xf32>
  %b2 = zc.param_ref @b2 : tensor<8xf32>
  %n = zc.layernorm %r, %g2, %b2 {epsilon = 1.0e-06 : f64} : tensor<2x3x8xf32>, tensor<8xf32>
  %o = zc.add %n, %r : tensor<2x3x8xf32>
  %l = zc.mse %o, %t : tensor<2x3x8xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// CHECK-LABEL: func.func @block_step
// CHECK: %[[G2:.+]] = zc.param_ref @g2
// CHECK: %[[B2:.+]] = zc.param_ref @b2
// CHECK: %[[R:.+]], %[[N:.+]] = zc.add_layernorm %arg0, %{{.+}}, %[[G2]], %[[B2]] {epsilon = {{.+}} : f64} : tensor<2x3x8xf32>, tensor<8xf32>
// CHECK: zc.add %[[N]], %[[R]]
// The loss's gradient reaches r twice: through ln2 and directly.
// CHECK: %[[DY:.+]] = zc.mse_grad
// CHECK: %{{.+}}, %{{.+}}, %{{.+}} = zc.layernorm_grad_add %[[DY]], %[[R]], %[[G2]], %[[DY]] {epsilon = {{.+}} : f64} : tensor<2x3x8xf32>, tensor<8xf32>
// CHECK-NOT: zc.add
// The validation function (forward only) fuses the same way.
// CHECK-LABEL: func.func @block_eval
// CHECK: zc.add_layernorm

// LLVM-LABEL: llvm.func @zcc_step
// LLVM: llvm.call @zrt_add_layernorm(
// LLVM: llvm.call @zrt_layernorm_grad_add(

// -----

// The sum is read before the layernorm, and the layernorm's gain is defined after the add:
// the fused op has no place to run, so both stay.

zc.param @g : tensor<8xf32> = #zc.ones
zc.param @b : tensor<8xf32> = #zc.zeros
zc.forward @early(%x: tensor<2x8xf32> {zc.input = "features"}, %t: tensor<2x8xf32> {zc.input = "values"}) -> tensor<f32> {
  %s = zc.add %x, %x : tensor<2x8xf32>
  %u = zc.mul %s, %s : tensor<2x8xf32>
  %g = zc.param_ref @g : tensor<8xf32>
  %b = zc.param_ref @b : tensor<8xf32>
  %n = zc.layernorm %s, %g, %b : tensor<2x8xf32>, tensor<8xf32>
  %o = zc.add %n, %u : tensor<2x8xf32>
  %l = zc.mse %o, %t : tensor<2x8xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// CHECK-LABEL: func.func @early_step
// CHECK-NOT: zc.add_layernorm
// CHECK: zc.layernorm %
