// RUN: zcc-opt %s -split-input-file -zcc-verify-model -verify-diagnostics | FileCheck %s

// Tests that a well-formed model passes unchanged.

// CHECK: zc.param @w
// CHECK-LABEL: zc.forward @ok
zc.param @w : tensor<4x3xf32> = #zc.normal<std = 0.1>
zc.forward @ok(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  // CHECK: zc.param_ref @w
  %w = zc.param_ref @w : tensor<4x3xf32>
  %l = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %loss = zc.cross_entropy %l, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// -----

// Tests that a module without a forward function is rejected.

// expected-error @below {{the model has no zc.forward function (a batch in, a loss out)}}
module {
  zc.param @w : tensor<4xf32> = #zc.zeros
}

// -----

// Tests that a second forward function is rejected, pointing at the first.

zc.param @w : tensor<4x3xf32> = #zc.zeros
// expected-note @+1 {{first forward function here}}
zc.forward @a(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4x3xf32>
  %l = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %loss = zc.cross_entropy %l, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
// expected-error @+1 {{'zc.forward' op is a second forward function; a model has exactly one}}
zc.forward @b(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %loss = zc.mse %x, %y : tensor<2x3xf32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// -----

// Tests that a model with nothing to train is rejected.

// expected-error @below {{the model has no zc.param: there is nothing to train}}
module {
  zc.forward @f(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
    %loss = zc.mse %x, %y : tensor<2x3xf32> -> tensor<f32>
    zc.return %loss : tensor<f32>
  }
}

// -----

// Tests that a parameter the forward function never reads is rejected.

zc.param @w : tensor<4x3xf32> = #zc.zeros
// expected-error @+1 {{'zc.param' op 'unused' is never read by the forward function}}
zc.param @unused : tensor<3xf32> = #zc.zeros
zc.forward @f(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4x3xf32>
  %l = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %loss = zc.cross_entropy %l, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
