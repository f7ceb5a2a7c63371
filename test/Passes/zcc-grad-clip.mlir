// RUN: zcc-opt %s -zcc-grad-clip="max-norm=1.0 data-ranks=2 tensor-parallel=2" | FileCheck %s
// RUN: zcc-opt %s -zcc-grad-clip="max-norm=0 data-ranks=2 tensor-parallel=2" | FileCheck %s --check-prefix=OFF

// Tests that the update computes the global gradient norm once every gradient's reduction is done,
// each piece weighted by 1 / the ranks holding the same values, and that the optimizers then read
// the clipped gradient; the rest of the update (here a gradient cleared for the next step) moves
// after the norm. With max-norm 0 the norm is still computed and nothing is scaled.

// @a: a ZeRO shard of a tensor-parallel slice (every rank's piece differs): weight 1.
zc.param @a : tensor<8x4xf32> = #zc.zeros {zc.shards = 2 : i64, zc.tp_split = {axis = 1 : i64, segments = array<i64: 8>}}
// @b: replicated over the 2 data-parallel and the 2 tensor-parallel ranks: 1/4.
zc.param @b : tensor<4xf32> = #zc.zeros
// @c: tied across the first and last pipeline stage, a ZeRO shard, kept whole by tensor ranks: 1/4.
zc.param @c : tensor<6xf32> = #zc.zeros {zc.shards = 2 : i64, zc.shard_grad, zc.pipeline_tied}
zc.state @a.m : tensor<16xf32> of @a
zc.state @b.m : tensor<4xf32> of @b
zc.state @c.m : tensor<3xf32> of @c

// CHECK-LABEL: func.func @update
func.func @update(%lr: f64) attributes {zc.role = "update"} {
  // CHECK: %[[A:.+]] = zc.reduce_scatter avg
  // CHECK: %[[B:.+]] = zc.all_reduce avg
  // CHECK: %[[C:.+]] = zc.grad_ref @c
  // CHECK: %[[NORM:.+]], %[[COEF:.+]] = zc.grad_norm %[[A]], %[[B]], %[[C]] {max_norm = 1.000000e+00 : f64, weights = [1.000000e+00, 2.500000e-01, 2.500000e-01]}
  // CHECK-NEXT: zc.sgd @a, %[[A]] state(@a.m) lr %{{.+}} scale %[[COEF]]
  // CHECK-NEXT: zc.grad_zero @a
  // CHECK-NEXT: zc.sgd @b, %[[B]] state(@b.m) lr %{{.+}} scale %[[COEF]]
  // CHECK-NEXT: zc.sgd @c, %[[C]] state(@c.m) lr %{{.+}} scale %[[COEF]]
  %ga = zc.grad_ref @a : tensor<8x4xf32>
  %sa = zc.reduce_scatter avg %ga ranks 2 : tensor<8x4xf32> -> tensor<16xf32>
  zc.sgd @a, %sa state(@a.m) lr %lr {momentum = 0.9 : f64, weight_decay = 0.0 : f64} : tensor<16xf32>
  zc.grad_zero @a
  %gb = zc.grad_ref @b : tensor<4xf32>
  %rb = zc.all_reduce avg %gb ranks 2 : tensor<4xf32>
  zc.sgd @b, %rb state(@b.m) lr %lr {momentum = 0.9 : f64, weight_decay = 0.0 : f64} : tensor<4xf32>
  %gc = zc.grad_ref @c : tensor<3xf32>
  zc.sgd @c, %gc state(@c.m) lr %lr {momentum = 0.9 : f64, weight_decay = 0.0 : f64} : tensor<3xf32>
  return
}
// OFF: zc.grad_norm {{.+}} {max_norm = 0.000000e+00 : f64
// OFF-NOT: scale
