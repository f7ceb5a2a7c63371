// RUN: zcc-opt %s -zcc-autodiff -zcc-fuse | FileCheck %s
// RUN: zcc-opt %s -zcc-autodiff -zcc-fuse -zcc-optimizer -zcc-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// The exact (erf) GELU (GPT-NeoX / Pythia's `gelu`): autodiff's gradient is the exact one, and
// zcc-fuse leaves both as separate ops (the matmul epilogues compute the tanh form); the matmul
// still takes its bias. They lower to zrt_gelu_erf and zrt_gelu_erf_grad.

zc.param @w1 : tensor<8x16xf32> = #zc.normal<std = 0.1>
zc.param @b1 : tensor<16xf32> = #zc.zeros
zc.param @w2 : tensor<16x5xf32> = #zc.normal<std = 0.1>
zc.forward @mlp(%x: tensor<4x8xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %w1 = zc.param_ref @w1 : tensor<8x16xf32>
  %b1 = zc.param_ref @b1 : tensor<16xf32>
  %h = zc.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %hb = zc.bias_add %h, %b1 : tensor<4x16xf32>, tensor<16xf32>
  %a = zc.gelu %hb exact : tensor<4x16xf32>
  %w2 = zc.param_ref @w2 : tensor<16x5xf32>
  %o = zc.matmul %a, %w2 : tensor<4x16xf32>, tensor<16x5xf32> -> tensor<4x5xf32>
  %loss = zc.cross_entropy %o, %y : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @mlp_step
// CHECK-NOT: zc.matmul_bias_gelu
// CHECK: %[[PRE:.+]] = zc.matmul_bias %arg0
// CHECK: zc.gelu %[[PRE]] exact : tensor<4x16xf32>
// CHECK-NOT: zc.matmul_dgelu_bgrad
// CHECK: zc.gelu_grad %{{.+}}, %[[PRE]] exact : tensor<4x16xf32>
// CHECK-NOT: zc.matmul_dgelu_bgrad

// LLVM: llvm.call @zrt_gelu_erf(
// LLVM: llvm.call @zrt_gelu_erf_grad(
