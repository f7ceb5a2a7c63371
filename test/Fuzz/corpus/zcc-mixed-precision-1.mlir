
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

