// RUN: zcc-opt %s -zcc-autodiff -zcc-fuse | FileCheck %s
// RUN: zcc-opt %s -zcc-autodiff -zcc-fuse -zcc-optimizer -zcc-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// An MLP block: x @ w1 + b1 -> gelu -> @ w2 + b2 -> cross-entropy. Forward: the first
// matmul takes its bias and GELU (keeping the pre-activation for backward), the second
// its bias. Backward: the matmul producing GELU's incoming gradient takes the GELU
// derivative and the bias gradient.

zc.param @w1 : tensor<8x16xf32> = #zc.normal<std = 0.1>
zc.param @b1 : tensor<16xf32> = #zc.zeros
zc.param @w2 : tensor<16x5xf32> = #zc.normal<std = 0.1>
zc.param @b2 : tensor<5xf32> = #zc.zeros
zc.forward @mlp(%x: tensor<4x8xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %w1 = zc.param_ref @w1 : tensor<8x16xf32>
  %b1 = zc.param_ref @b1 : tensor<16xf32>
  %h = zc.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %hb = zc.bias_add %h, %b1 : tensor<4x16xf32>, tensor<16xf32>
  %a = zc.gelu %hb : tensor<4x16xf32>
  %w2 = zc.param_ref @w2 : tensor<16x5xf32>
  %b2 = zc.param_ref @b2 : tensor<5xf32>
  %o = zc.matmul %a, %w2 : tensor<4x16xf32>, tensor<16x5xf32> -> tensor<4x5xf32>
  %ob = zc.bias_add %o, %b2 : tensor<4x5xf32>, tensor<5xf32>
  %loss = zc.cross_entropy %ob, %y : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @mlp_step
// CHECK: %[[PRE:.+]], %[[A:.+]] = zc.matmul_bias_gelu %arg0, %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xf32>, tensor<4x16xf32>
// CHECK: %[[LOGITS:.+]] = zc.matmul_bias %[[A]], %{{.+}}, %{{.+}} : tensor<4x16xf32>, tensor<16x5xf32>, tensor<5xf32> -> tensor<4x5xf32>
// CHECK: zc.cross_entropy %[[LOGITS]]
// CHECK: %[[DLOGITS:.+]] = zc.cross_entropy_grad
// CHECK: %[[DPRE:.+]], %[[DB1:.+]] = zc.matmul_dgelu_bgrad %[[DLOGITS]], %{{.+}}, %[[PRE]] transpose_rhs : tensor<4x5xf32>, tensor<16x5xf32>, tensor<4x16xf32> -> tensor<4x16xf32>, tensor<16xf32>
// CHECK-NOT: zc.gelu
// CHECK-NOT: zc.bias_add
// CHECK: zc.grad_accumulate @b1, %[[DB1]]
// CHECK-NOT: zc.gelu

// LLVM: llvm.call @zrt_matmul_bias_gelu(
// LLVM: llvm.call @zrt_matmul_bias(
// LLVM: llvm.call @zrt_matmul_dgelu_bgrad(
