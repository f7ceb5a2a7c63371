// Brackets in comments and strings do not nest (test/Driver/errors.mlir): [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[

zc.param @fc1_w : tensor<784x256xf32> = #zc.normal<std = 0.05>
zc.param @fc1_b : tensor<256xf32> = #zc.zeros loc("((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((")
zc.param @fc2_w : tensor<256x128xf32> = #zc.normal<std = 0.088>
zc.param @fc2_b : tensor<128xf32> = #zc.zeros
zc.param @fc3_w : tensor<128x10xf32> = #zc.uniform<low = -0.088, high = 0.088>
zc.param @fc3_b : tensor<10xf32> = #zc.zeros

zc.forward @mlp(%x: tensor<64x784xf32>, %labels: tensor<64xi32>) -> tensor<f32> {
  %fc1_w = zc.param_ref @fc1_w : tensor<784x256xf32>
  %fc1_b = zc.param_ref @fc1_b : tensor<256xf32>
  %h1_mm = zc.matmul %x, %fc1_w : tensor<64x784xf32>, tensor<784x256xf32> -> tensor<64x256xf32>
  %h1_pre = zc.bias_add %h1_mm, %fc1_b : tensor<64x256xf32>, tensor<256xf32>
  %h1 = zc.relu %h1_pre : tensor<64x256xf32>

  %fc2_w = zc.param_ref @fc2_w : tensor<256x128xf32>
  %fc2_b = zc.param_ref @fc2_b : tensor<128xf32>
  %h2_mm = zc.matmul %h1, %fc2_w : tensor<64x256xf32>, tensor<256x128xf32> -> tensor<64x128xf32>
  %h2_pre = zc.bias_add %h2_mm, %fc2_b : tensor<64x128xf32>, tensor<128xf32>
  %h2 = zc.relu %h2_pre : tensor<64x128xf32>

  %fc3_w = zc.param_ref @fc3_w : tensor<128x10xf32>
  %fc3_b = zc.param_ref @fc3_b : tensor<10xf32>
  %logits_mm = zc.matmul %h2, %fc3_w : tensor<64x128xf32>, tensor<128x10xf32> -> tensor<64x10xf32>
  %logits = zc.bias_add %logits_mm, %fc3_b : tensor<64x10xf32>, tensor<10xf32>
  %loss = zc.cross_entropy %logits, %labels : tensor<64x10xf32>, tensor<64xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
