// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-fuse | FileCheck %s
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-fuse -zcc-optimizer -zcc-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// Llama's SwiGLU MLP, down(silu(gate(x)) * up(x)): the product becomes swiglu, and the three
// ops autodiff writes for it (mul by up, silu_grad, mul by silu(gate)) one swiglu_grad; the
// silu value is no longer kept for backward.

zc.param @wg : tensor<8x12xf32> = #zc.normal<std = 0.1>
zc.param @wu : tensor<8x12xf32> = #zc.normal<std = 0.1>
zc.param @wd : tensor<12x8xf32> = #zc.normal<std = 0.1>
zc.forward @mlp(%x: tensor<2x3x8xf32> {zc.input = "features"}, %t: tensor<2x3x8xf32> {zc.input = "values"}) -> tensor<f32> {
  %wg = zc.param_ref @wg : tensor<8x12xf32>
  %wu = zc.param_ref @wu : tensor<8x12xf32>
  %wd = zc.param_ref @wd : tensor<12x8xf32>
  %g = zc.matmul %x, %wg : tensor<2x3x8xf32>, tensor<8x12xf32> -> tensor<2x3x12xf32>
  %u = zc.matmul %x, %wu : tensor<2x3x8xf32>, tensor<8x12xf32> -> tensor<2x3x12xf32>
  %s = zc.silu %g : tensor<2x3x12xf32>
  %h = zc.mul %s, %u : tensor<2x3x12xf32>
  %d = zc.matmul %h, %wd : tensor<2x3x12xf32>, tensor<12x8xf32> -> tensor<2x3x8xf32>
  %l = zc.mse %d, %t : tensor<2x3x8xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// CHECK-LABEL: func.func @mlp_step
// CHECK: %[[G:.+]] = zc.matmul %arg0, %{{.+}} : {{.+}} -> tensor<2x3x12xf32>
// CHECK: %[[U:.+]] = zc.matmul %arg0, %{{.+}} : {{.+}} -> tensor<2x3x12xf32>
// CHECK: %[[H:.+]] = zc.swiglu %[[G]], %[[U]] : tensor<2x3x12xf32>
// CHECK: %[[DH:.+]] = zc.matmul %{{.+}}, %{{.+}} transpose_rhs : {{.+}} -> tensor<2x3x12xf32>
// CHECK: %[[DG:.+]], %[[DU:.+]] = zc.swiglu_grad %[[DH]], %[[G]], %[[U]] : tensor<2x3x12xf32>
// CHECK-NOT: zc.silu
// CHECK-NOT: zc.mul
// CHECK: return

// LLVM-LABEL: llvm.func @zcc_step
// LLVM: llvm.call @zrt_swiglu(
// LLVM: llvm.call @zrt_swiglu_grad(

// -----

// silu(gate) read by something else too: it must stay, and nothing is fused.

zc.param @wg : tensor<8x12xf32> = #zc.normal<std = 0.1>
zc.forward @shared(%x: tensor<2x8xf32> {zc.input = "features"}, %t: tensor<2x12xf32> {zc.input = "values"}) -> tensor<f32> {
  %wg = zc.param_ref @wg : tensor<8x12xf32>
  %g = zc.matmul %x, %wg : tensor<2x8xf32>, tensor<8x12xf32> -> tensor<2x12xf32>
  %s = zc.silu %g : tensor<2x12xf32>
  %h = zc.mul %s, %g : tensor<2x12xf32>
  %o = zc.add %h, %s : tensor<2x12xf32>
  %l = zc.mse %o, %t : tensor<2x12xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// CHECK-LABEL: func.func @shared_step
// CHECK-NOT: zc.swiglu
// CHECK: zc.silu_grad
