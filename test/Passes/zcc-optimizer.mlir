// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-optimizer -verify-diagnostics | FileCheck %s
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-optimizer="kind=sgd momentum=0.5" -verify-diagnostics | FileCheck %s --check-prefix=SGD
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-optimizer="micro-batches=2" -verify-diagnostics | FileCheck %s --check-prefix=ACCUM

// Tests AdamW with the model's hyperparameters, state tensors per parameter, and
// no weight decay on rank-1 parameters and on {zc.no_decay}.

module attributes {zc.optimizer = {kind = "adamw", lr = 3.0e-4, beta2 = 0.95, weight_decay = 0.1}} {
  zc.param @w : tensor<4x3xf32> = #zc.normal<std = 0.1>
  zc.param @e : tensor<3x3xf32> = #zc.normal<std = 0.1> {zc.no_decay}
  zc.param @b : tensor<3xf32> = #zc.zeros
  zc.forward @f(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
    %w = zc.param_ref @w : tensor<4x3xf32>
    %e = zc.param_ref @e : tensor<3x3xf32>
    %b = zc.param_ref @b : tensor<3xf32>
    %h = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
    %h2 = zc.matmul %h, %e : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x3xf32>
    %hb = zc.bias_add %h2, %b : tensor<2x3xf32>, tensor<3xf32>
    %l = zc.cross_entropy %hb, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
    zc.return %l : tensor<f32>
  }
}
// CHECK: zc.param @w
// CHECK-NEXT: zc.state @w.exp_avg : tensor<4x3xf32> of @w
// CHECK-NEXT: zc.state @w.exp_avg_sq : tensor<4x3xf32> of @w
// One micro-batch a step (the default): each gradient overwrites its buffer, none is cleared.
// CHECK: zc.grad_accumulate @w, %{{.+}} overwrite : tensor<4x3xf32>
// CHECK: func.func @f_update(%[[LR:.+]]: f64, %[[STEP:.+]]: i64) attributes {zc.role = "update"}
// CHECK: %[[GW:.+]] = zc.grad_ref @w : tensor<4x3xf32>
// CHECK: zc.adamw @w, %[[GW]] state(@w.exp_avg, @w.exp_avg_sq) lr %[[LR]] step %[[STEP]] {beta1 = 9.000000e-01 : f64, beta2 = 0.9499{{[0-9]+}} : f64, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64}
// CHECK-NOT: zc.grad_zero
// CHECK: zc.adamw @e, {{.+}} weight_decay = 0.000000e+00
// CHECK: zc.adamw @b, {{.+}} weight_decay = 0.000000e+00
// CHECK: return

// Two: the buffer sums them and the update clears it.
// ACCUM-NOT: overwrite
// ACCUM: zc.grad_accumulate @w, %{{.+}} : tensor<4x3xf32>
// ACCUM: zc.adamw @w
// ACCUM-NEXT: zc.grad_zero @w

// SGD: zc.state @w.momentum : tensor<4x3xf32> of @w
// SGD: zc.sgd @w, %{{.+}} state(@w.momentum) lr %{{.+}} {momentum = 5.000000e-01 : f64, weight_decay = 1.000000e-01 : f64}

// -----

// expected-error @+1 {{zc.optimizer has unknown key 'betas'}}
module attributes {zc.optimizer = {betas = 0.9}} {
  zc.param @w : tensor<4xf32> = #zc.zeros
  zc.forward @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
    %w = zc.param_ref @w : tensor<4xf32>
    %h = zc.add %x, %w : tensor<4xf32>
    %l = zc.mse %h, %y : tensor<4xf32> -> tensor<f32>
    zc.return %l : tensor<f32>
  }
}

// -----

// A parameter the loss does not depend on gets no gradient, no state and no update
// (as torch.optim skips a parameter whose gradient is None), with a warning.
zc.param @w : tensor<4x3xf32> = #zc.normal<std = 0.1>
// expected-warning @+1 {{'u' does not reach the loss: it gets no gradient and is never updated}}
zc.param @u : tensor<4x3xf32> = #zc.normal<std = 0.1>
// CHECK-NOT: zc.state @u
// CHECK-LABEL: func.func @dead_update
// CHECK-NOT: @u
// CHECK: zc.adamw @w
// CHECK-NOT: @u
// CHECK: return
// SGD-LABEL: func.func @dead_update
// SGD-NOT: @u
// SGD: return
zc.forward @dead(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4x3xf32>
  %u = zc.param_ref @u : tensor<4x3xf32>
  %h = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %unused = zc.matmul %x, %u : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %loss = zc.cross_entropy %h, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
