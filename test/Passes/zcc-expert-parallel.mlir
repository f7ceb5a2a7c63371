// RUN: zcc-opt %s -split-input-file -zcc-expert-parallel="ranks=2" -verify-diagnostics | FileCheck %s
// RUN: zcc-opt %s -split-input-file -zcc-expert-parallel="ranks=2" -zcc-autodiff -verify-diagnostics | FileCheck %s --check-prefix=STEP
// RUN: zcc-opt %s -split-input-file -zcc-expert-parallel="ranks=2 max-rows-per-expert=40" -verify-diagnostics | FileCheck %s --check-prefix=BOUND

// A Mixtral block's experts over 2 expert-parallel ranks: 4 experts of [8, 12] become 2 on each
// rank (zc.ep_split); the 64 dispatched rows (32 tokens x top 2) go to their experts' ranks
// (ep_dispatch), received into at most 2 x 64 rows (every rank's rows; each expert at most 2 x 32,
// a token choosing it once), the SwiGLU's products and ops run on them with this rank's experts'
// offsets, and ep_combine brings them back before moe_combine. The routing and its offsets stay
// the rank's own.

zc.param @router : tensor<8x4xf32> = #zc.normal<std = 0.02>
zc.param @gate : tensor<4x8x12xf32> = #zc.normal<std = 0.02>
zc.param @up : tensor<4x8x12xf32> = #zc.normal<std = 0.02>
zc.param @down : tensor<4x12x8xf32> = #zc.normal<std = 0.02>
// CHECK: module attributes {zc.expert_parallel = {ranks = 2 : i64}}
// CHECK-DAG: zc.param @router : tensor<8x4xf32>
// CHECK-DAG: zc.param @gate : tensor<2x8x12xf32> = #zc.normal<std = 0.02> {zc.ep_split = {ranks = 2 : i64}}
// CHECK-DAG: zc.param @down : tensor<2x12x8xf32> = #zc.normal<std = 0.02> {zc.ep_split = {ranks = 2 : i64}}
zc.forward @moe(%x: tensor<2x16x8xf32>, %t: tensor<2x16x8xf32>) -> tensor<f32> {
  %r = zc.param_ref @router : tensor<8x4xf32>
  %logits = zc.matmul %x, %r : tensor<2x16x8xf32>, tensor<8x4xf32> -> tensor<2x16x4xf32>
  // CHECK: %[[W:.+]], %{{.+}}, %[[ROWS:.+]], %[[OFFS:.+]] = zc.moe_route
  // CHECK-NEXT: %[[ALL:.+]], %[[LOCAL:.+]] = zc.ep_counts %[[OFFS]] ranks 2 rows 128 dispatched 64 : tensor<5xi32> -> tensor<2x5xi32>, tensor<3xi32>
  // BOUND: zc.ep_counts %{{.+}} ranks 2 rows 80 dispatched 64 max_rows 40
  %w, %e, %rows, %offs = zc.moe_route %logits top_k 2 normalize : tensor<2x16x4xf32> -> tensor<2x16x2xf32>, tensor<2x16x2xi32>, tensor<2x16x2xi32>, tensor<5xi32>
  // CHECK: %[[XS:.+]] = zc.moe_dispatch
  // CHECK-NEXT: %[[XR:.+]] = zc.ep_dispatch %[[XS]], %[[ALL]] ranks 2 : tensor<64x8xf32>, tensor<2x5xi32> -> tensor<128x8xf32>
  %xs = zc.moe_dispatch %x, %rows : tensor<2x16x8xf32>, tensor<2x16x2xi32> -> tensor<64x8xf32>
  %wg = zc.param_ref @gate : tensor<4x8x12xf32>
  // CHECK: zc.grouped_matmul %[[XR]], %{{.+}}, %[[LOCAL]] : tensor<128x8xf32>, tensor<2x8x12xf32>, tensor<3xi32> -> tensor<128x12xf32>
  %g = zc.grouped_matmul %xs, %wg, %offs : tensor<64x8xf32>, tensor<4x8x12xf32>, tensor<5xi32> -> tensor<64x12xf32>
  %wu = zc.param_ref @up : tensor<4x8x12xf32>
  %u = zc.grouped_matmul %xs, %wu, %offs : tensor<64x8xf32>, tensor<4x8x12xf32>, tensor<5xi32> -> tensor<64x12xf32>
  // CHECK: zc.silu %{{.+}} : tensor<128x12xf32>
  // CHECK: zc.mul %{{.+}}, %{{.+}} : tensor<128x12xf32>
  %a = zc.silu %g : tensor<64x12xf32>
  %h = zc.mul %a, %u : tensor<64x12xf32>
  %wd = zc.param_ref @down : tensor<4x12x8xf32>
  // CHECK: %[[YR:.+]] = zc.grouped_matmul %{{.+}}, %{{.+}}, %[[LOCAL]] : tensor<128x12xf32>, tensor<2x12x8xf32>, tensor<3xi32> -> tensor<128x8xf32>
  // CHECK-NEXT: %[[YS:.+]] = zc.ep_combine %[[YR]], %[[ALL]] ranks 2 : tensor<128x8xf32>, tensor<2x5xi32> -> tensor<64x8xf32>
  // CHECK-NEXT: zc.moe_combine %[[YS]], %[[W]], %[[ROWS]]
  %ys = zc.grouped_matmul %h, %wd, %offs : tensor<64x12xf32>, tensor<4x12x8xf32>, tensor<5xi32> -> tensor<64x8xf32>
  %y = zc.moe_combine %ys, %w, %rows : tensor<64x8xf32>, tensor<2x16x2xf32>, tensor<2x16x2xi32> -> tensor<2x16x8xf32>
  %loss = zc.mse %y, %t : tensor<2x16x8xf32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
// The backward: each exchange's gradient is the other, with the same counts, around the experts'
// gradient products on the received rows.
// STEP-LABEL: func.func @moe_step
// STEP: %[[ALL:.+]], %[[LOCAL:.+]] = zc.ep_counts
// STEP: zc.moe_combine_grad
// STEP: %[[DYR:.+]] = zc.ep_dispatch %{{.+}}, %[[ALL]] ranks 2 : tensor<64x8xf32>, tensor<2x5xi32> -> tensor<128x8xf32>
// STEP: zc.grouped_matmul_grad %[[DYR]], %{{.+}}, %{{.+}}, %[[LOCAL]] : tensor<128x8xf32>, tensor<128x12xf32>, tensor<2x12x8xf32>, tensor<3xi32>
// STEP: zc.ep_combine %{{.+}}, %[[ALL]] ranks 2 : tensor<128x8xf32>, tensor<2x5xi32> -> tensor<64x8xf32>

// -----

// Experts the group does not divide.
zc.param @gate : tensor<3x8x12xf32> = #zc.normal<std = 0.02>
zc.forward @odd(%x: tensor<2x16x8xf32>, %logits: tensor<2x16x3xf32>, %t: tensor<64x12xf32>) -> tensor<f32> {
  // expected-error @+1 {{'zc.moe_route' op --ep 2 does not divide this layer's 3 experts}}
  %w, %e, %rows, %offs = zc.moe_route %logits top_k 2 : tensor<2x16x3xf32> -> tensor<2x16x2xf32>, tensor<2x16x2xi32>, tensor<2x16x2xi32>, tensor<4xi32>
  %xs = zc.moe_dispatch %x, %rows : tensor<2x16x8xf32>, tensor<2x16x2xi32> -> tensor<64x8xf32>
  %wg = zc.param_ref @gate : tensor<3x8x12xf32>
  %g = zc.grouped_matmul %xs, %wg, %offs : tensor<64x8xf32>, tensor<3x8x12xf32>, tensor<4xi32> -> tensor<64x12xf32>
  %s = zc.mse %g, %t : tensor<64x12xf32> -> tensor<f32>
  zc.return %s : tensor<f32>
}

// -----

// An op that mixes the experts' rows with the dispatching rank's own (here: the rows' sum over
// every row, which on an expert's rank would be other ranks' tokens).
zc.param @gate : tensor<4x8x12xf32> = #zc.normal<std = 0.02>
zc.forward @mixed(%x: tensor<2x16x8xf32>, %logits: tensor<2x16x4xf32>, %bias: tensor<64x12xf32>,
                  %t: tensor<64x12xf32>) -> tensor<f32> {
  %w, %e, %rows, %offs = zc.moe_route %logits top_k 2 : tensor<2x16x4xf32> -> tensor<2x16x2xf32>, tensor<2x16x2xi32>, tensor<2x16x2xi32>, tensor<5xi32>
  %xs = zc.moe_dispatch %x, %rows : tensor<2x16x8xf32>, tensor<2x16x2xi32> -> tensor<64x8xf32>
  %wg = zc.param_ref @gate : tensor<4x8x12xf32>
  %g = zc.grouped_matmul %xs, %wg, %offs : tensor<64x8xf32>, tensor<4x8x12xf32>, tensor<5xi32> -> tensor<64x12xf32>
  // expected-error @+1 {{'zc.add' op zcc-expert-parallel: mixes the experts' rows with a value that is not theirs}}
  %h = zc.add %g, %bias : tensor<64x12xf32>
  %s = zc.mse %h, %t : tensor<64x12xf32> -> tensor<f32>
  zc.return %s : tensor<f32>
}
