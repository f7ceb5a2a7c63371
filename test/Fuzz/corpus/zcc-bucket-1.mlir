
// Mixed element types never share a bucket: the bf16 gradient is reduced on its own.
zc.param @w : tensor<4x3xf32> = #zc.normal<std = 0.1>
zc.param @s : tensor<3xbf16> = #zc.ones
zc.param @b : tensor<3xf32> = #zc.zeros
zc.forward @mixed(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4x3xf32>
  %h = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %s = zc.param_ref @s : tensor<3xbf16>
  %sf = zc.cast %s : tensor<3xbf16> -> tensor<3xf32>
  %hs = zc.bias_add %h, %sf : tensor<2x3xf32>, tensor<3xf32>
  %b = zc.param_ref @b : tensor<3xf32>
  %hb = zc.bias_add %hs, %b : tensor<2x3xf32>, tensor<3xf32>
  %loss = zc.cross_entropy %hb, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
// DP-LABEL: func.func @mixed_update
// DP: zc.all_reduce avg %{{.+}} ranks 2 : tensor<3xbf16>
// DP: %[[B:.+]] = zc.pack %{{.+}}, %{{.+}} ranks 1 : tensor<4x3xf32>, tensor<3xf32> -> tensor<15xf32>
// DP-NEXT: zc.all_reduce avg %[[B]] ranks 2 : tensor<15xf32>
// Z3-LABEL: func.func @mixed_step
// Z3: zc.reduce_scatter avg %{{.+}} ranks 2 : tensor<3xbf16> -> tensor<2xbf16>
// Z3: %[[B:.+]] = zc.pack {{.+}} ranks 2 : tensor<3xf32>, tensor<4x3xf32> -> tensor<16xf32>
// Z3-NEXT: zc.reduce_scatter avg %[[B]] ranks 2 : tensor<16xf32> -> tensor<8xf32>
