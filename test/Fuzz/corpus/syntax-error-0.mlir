zc.param @w : tensor<4xf32> = #zc.zeros
zc.forward @f(%x: tensor<4xf32>) -> tensor<f32> {
  %y = zc.relu %x tensor<4xf32>
}
