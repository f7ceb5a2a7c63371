zc.param @w : tensor<4xf32> = #zc.zeros
zc.param @v : tensor<4xf32> = #zc.zeros
zc.forward @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4xf32>
  %l = zc.mse %x, %w : tensor<4xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
