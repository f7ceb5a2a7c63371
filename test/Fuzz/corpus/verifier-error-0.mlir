zc.param @w : tensor<4xf32> = #zc.zeros
func.func @g(%x: tensor<4x8xf32>, %b: tensor<4xf32>) {
  %0 = zc.bias_add %x, %b : tensor<4x8xf32>, tensor<4xf32>
  return
}
