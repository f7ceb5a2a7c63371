
// A parameter the user declared bf16 stays as it is and gets a master too.
zc.param @v : tensor<3xbf16> = #zc.ones
// CHECK: zc.param @v : tensor<3xbf16> = #zc.ones
zc.forward @scaled(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<f32> {
  // CHECK: zc.param_ref @v : tensor<3xbf16>
  // CHECK-NOT: zc.cast {{.+}} -> tensor<3xf32>
  %v = zc.param_ref @v : tensor<3xbf16>
  %vf = zc.cast %v : tensor<3xbf16> -> tensor<3xf32>
  %h = zc.mul %x, %vf : tensor<3xf32>
  %l = zc.mse %h, %y : tensor<3xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// OPT: zc.state @v.master : tensor<3xf32> of @v
// OPT: zc.adamw @v, {{.+}} master(@v.master)

// BAD: compute-type must be bf16 or f32, got 'f16'
