// RUN: zcc-opt %s -zcc-data-parallel="ranks=4 micro-batches=2" | FileCheck %s
// RUN: zcc-opt %s -zcc-data-parallel | FileCheck %s --check-prefix=ONE

// Tests that stage 0 averages every gradient across the ranks before the update,
// once per step, and divides the accumulated micro-batch sum by K.

zc.param @w : tensor<4x3xf32> = #zc.zeros
zc.state @w.m : tensor<4x3xf32> of @w
// CHECK-LABEL: func.func @update
func.func @update(%lr: f64) {
  // CHECK: %[[G:.+]] = zc.grad_ref @w
  // CHECK: %[[R:.+]] = zc.all_reduce avg %[[G]] ranks 4 : tensor<4x3xf32>
  // CHECK: %[[S:.+]] = zc.scale %[[R]] by 5.000000e-01
  // CHECK: zc.sgd @w, %[[S]]
  %g = zc.grad_ref @w : tensor<4x3xf32>
  zc.sgd @w, %g state(@w.m) lr %lr {momentum = 0.9 : f64, weight_decay = 0.0 : f64} : tensor<4x3xf32>
  return
}
// ONE-NOT: zc.all_reduce
// ONE-NOT: zc.scale
