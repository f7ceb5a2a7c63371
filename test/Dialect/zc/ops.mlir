// RUN: zcc-opt %s -split-input-file | zcc-opt -split-input-file | FileCheck %s
// RUN: zcc-opt %s -split-input-file -mlir-print-op-generic | zcc-opt -split-input-file | FileCheck %s

// Tests that parameters, initializers, param_ref, forward and return round-trip.

// CHECK: zc.param @w : tensor<784x10xf32> = #zc.normal<std = 0.02>
// CHECK: zc.param @w_mean : tensor<4xf32> = #zc.normal<std = 1.0, mean = 0.5>
// CHECK: zc.param @b : tensor<10xf32> = #zc.zeros
// CHECK: zc.param @g : tensor<10xbf16> = #zc.ones {zc.no_decay}
// CHECK: zc.param @u : tensor<3x5xf32> = #zc.uniform<low = -0.125, high = 0.125>
// CHECK: zc.param @tiny : tensor<2xf32> = #zc.uniform<low = -1.0e-30, high = 3.0e+20>
zc.param @w : tensor<784x10xf32> = #zc.normal<std = 0.02>
zc.param @w_mean : tensor<4xf32> = #zc.normal<std = 1.0, mean = 0.5>
zc.param @b : tensor<10xf32> = #zc.zeros
zc.param @g : tensor<10xbf16> = #zc.ones {zc.no_decay}
zc.param @u : tensor<3x5xf32> = #zc.uniform<low = -0.125, high = 0.125>
zc.param @tiny : tensor<2xf32> = #zc.uniform<low = -1.0e-30, high = 3.0e20>

// CHECK-LABEL: zc.forward @loss
// CHECK-SAME: (%[[X:.+]]: tensor<32x784xf32>, %[[Y:.+]]: tensor<32xi32>) -> tensor<f32>
zc.forward @loss(%x: tensor<32x784xf32>, %y: tensor<32xi32>) -> tensor<f32> {
  // CHECK: %[[W:.+]] = zc.param_ref @w : tensor<784x10xf32>
  %w = zc.param_ref @w : tensor<784x10xf32>
  // CHECK: %[[H:.+]] = zc.matmul %[[X]], %[[W]]
  %h = zc.matmul %x, %w : tensor<32x784xf32>, tensor<784x10xf32> -> tensor<32x10xf32>
  // CHECK: %[[L:.+]] = zc.cross_entropy %[[H]], %[[Y]]
  %l = zc.cross_entropy %h, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  // CHECK: zc.return %[[L]] : tensor<f32>
  zc.return %l : tensor<f32>
}

// -----

// Tests that the elementwise and shape ops round-trip.

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %h: tensor<4x8xbf16>) {
  // CHECK: zc.add %{{.+}}, %{{.+}} : tensor<4x8xf32>
  %0 = zc.add %a, %b : tensor<4x8xf32>
  // CHECK: zc.sub %{{.+}}, %{{.+}} : tensor<4x8xf32>
  %1 = zc.sub %a, %b : tensor<4x8xf32>
  // CHECK: zc.mul %{{.+}}, %{{.+}} : tensor<4x8xf32>
  %2 = zc.mul %a, %b : tensor<4x8xf32>
  // CHECK: zc.scale %{{.+}} by 1.250000e-01 : tensor<4x8xf32>
  %3 = zc.scale %a by 0.125 : tensor<4x8xf32>
  // CHECK: zc.relu %{{.+}} : tensor<4x8xf32>
  %4 = zc.relu %a : tensor<4x8xf32>
  // CHECK: zc.gelu %{{.+}} : tensor<4x8xbf16>
  %5 = zc.gelu %h : tensor<4x8xbf16>
  // CHECK: zc.softmax %{{.+}} : tensor<4x8xf32>
  %6 = zc.softmax %a : tensor<4x8xf32>
  // CHECK: zc.cast %{{.+}} : tensor<4x8xf32> -> tensor<4x8xbf16>
  %7 = zc.cast %a : tensor<4x8xf32> -> tensor<4x8xbf16>
  // CHECK: zc.cast %{{.+}} : tensor<4x8xbf16> -> tensor<4x8xf32>
  %8 = zc.cast %h : tensor<4x8xbf16> -> tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x6x8xf32>, %y: tensor<2x6x4xf32>) {
  // CHECK: zc.reshape %{{.+}} : tensor<2x6x8xf32> -> tensor<12x8xf32>
  %0 = zc.reshape %x : tensor<2x6x8xf32> -> tensor<12x8xf32>
  // CHECK: zc.transpose %{{.+}} [0, 2, 1] : tensor<2x6x8xf32> -> tensor<2x8x6xf32>
  %1 = zc.transpose %x [0, 2, 1] : tensor<2x6x8xf32> -> tensor<2x8x6xf32>
  // CHECK: zc.slice %{{.+}} [0, 1, 4] : tensor<2x6x8xf32> -> tensor<2x5x4xf32>
  %2 = zc.slice %x [0, 1, 4] : tensor<2x6x8xf32> -> tensor<2x5x4xf32>
  // CHECK: zc.concat %{{.+}}, %{{.+}} axis 2 : tensor<2x6x8xf32>, tensor<2x6x4xf32> -> tensor<2x6x12xf32>
  %3 = zc.concat %x, %y axis 2 : tensor<2x6x8xf32>, tensor<2x6x4xf32> -> tensor<2x6x12xf32>
  return
}

// i32 ids join too (MoE layers' choices pooled for one load-balancing loss).
// CHECK-LABEL: func.func @join_ids
func.func @join_ids(%a: tensor<2x16x2xi32>, %b: tensor<2x16x2xi32>) {
  // CHECK: zc.concat %{{.+}}, %{{.+}} axis 1 : tensor<2x16x2xi32>, tensor<2x16x2xi32> -> tensor<2x32x2xi32>
  %0 = zc.concat %a, %b axis 1 : tensor<2x16x2xi32>, tensor<2x16x2xi32> -> tensor<2x32x2xi32>
  return
}

// -----

// Tests that matmul round-trips with transposes, batching and a shared 2-D rhs.

// CHECK-LABEL: func.func @matmul
func.func @matmul(%x: tensor<2x6x8xf32>, %w: tensor<8x16xf32>, %wt: tensor<16x8xf32>,
                  %q: tensor<2x4x6x8xbf16>, %k: tensor<2x4x6x8xbf16>, %m: tensor<8x8xf32>) {
  // CHECK: zc.matmul %{{.+}}, %{{.+}} : tensor<2x6x8xf32>, tensor<8x16xf32> -> tensor<2x6x16xf32>
  %0 = zc.matmul %x, %w : tensor<2x6x8xf32>, tensor<8x16xf32> -> tensor<2x6x16xf32>
  // CHECK: zc.matmul %{{.+}}, %{{.+}} transpose_rhs : tensor<2x6x8xf32>, tensor<16x8xf32> -> tensor<2x6x16xf32>
  %1 = zc.matmul %x, %wt transpose_rhs : tensor<2x6x8xf32>, tensor<16x8xf32> -> tensor<2x6x16xf32>
  // CHECK: zc.matmul %{{.+}}, %{{.+}} transpose_rhs : tensor<2x4x6x8xbf16>, tensor<2x4x6x8xbf16> -> tensor<2x4x6x6xbf16>
  %2 = zc.matmul %q, %k transpose_rhs : tensor<2x4x6x8xbf16>, tensor<2x4x6x8xbf16> -> tensor<2x4x6x6xbf16>
  // CHECK: zc.matmul %{{.+}}, %{{.+}} transpose_lhs transpose_rhs : tensor<8x16xf32>, tensor<8x8xf32> -> tensor<16x8xf32>
  %3 = zc.matmul %w, %m transpose_lhs transpose_rhs : tensor<8x16xf32>, tensor<8x8xf32> -> tensor<16x8xf32>
  return
}

// -----

// Tests that the neural-network ops and losses round-trip.

// CHECK-LABEL: func.func @nn
func.func @nn(%x: tensor<2x6x8xf32>, %b: tensor<8xf32>, %table: tensor<16x8xf32>,
              %ids: tensor<2x6xi32>, %logits: tensor<2x6x16xf32>, %kv: tensor<2x6x4xf32>) {
  // CHECK: zc.bias_add %{{.+}}, %{{.+}} : tensor<2x6x8xf32>, tensor<8xf32>
  %0 = zc.bias_add %x, %b : tensor<2x6x8xf32>, tensor<8xf32>
  // CHECK: zc.layernorm %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x6x8xf32>, tensor<8xf32>
  %1 = zc.layernorm %x, %b, %b : tensor<2x6x8xf32>, tensor<8xf32>
  // CHECK: zc.layernorm %{{.+}}, %{{.+}}, %{{.+}} {epsilon = {{.+}} : f64} : tensor<2x6x8xf32>, tensor<8xf32>
  %2 = zc.layernorm %x, %b, %b {epsilon = 1.0e-6 : f64} : tensor<2x6x8xf32>, tensor<8xf32>
  // CHECK: zc.causal_attention %{{.+}}, %{{.+}}, %{{.+}} heads 2 : tensor<2x6x8xf32>
  %3 = zc.causal_attention %x, %x, %x heads 2 : tensor<2x6x8xf32>
  // CHECK: %{{.+}}, %{{.+}} = zc.add_layernorm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x6x8xf32>, tensor<8xf32>
  %al:2 = zc.add_layernorm %x, %x, %b, %b : tensor<2x6x8xf32>, tensor<8xf32>
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}} = zc.layernorm_grad_add %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {epsilon = {{.+}} : f64} : tensor<2x6x8xf32>, tensor<8xf32>
  %lga:3 = zc.layernorm_grad_add %x, %x, %b, %x {epsilon = 1.0e-6 : f64} : tensor<2x6x8xf32>, tensor<8xf32>
  // CHECK: zc.causal_attention %{{.+}}, %{{.+}}, %{{.+}} heads 4 kv_heads 2 : tensor<2x6x8xf32>, tensor<2x6x4xf32>
  %gq = zc.causal_attention %x, %kv, %kv heads 4 kv_heads 2 : tensor<2x6x8xf32>, tensor<2x6x4xf32>
  // CHECK: zc.causal_attention %{{.+}}, %{{.+}}, %{{.+}} heads 4 kv_heads 2 scale 1.250000e-01 softcap 5.000000e+01 window 4 : tensor<2x6x8xf32>, tensor<2x6x4xf32>
  %va = zc.causal_attention %x, %kv, %kv heads 4 kv_heads 2 scale 0.125 softcap 50.0 window 4 : tensor<2x6x8xf32>, tensor<2x6x4xf32>
  // CHECK: zc.causal_attention %{{.+}}, %{{.+}}, %{{.+}} heads 2 window 3 : tensor<2x6x8xf32>
  %vw = zc.causal_attention %x, %x, %x heads 2 window 3 : tensor<2x6x8xf32>
  // CHECK: zc.rmsnorm %{{.+}}, %{{.+}} {epsilon = {{.+}} : f64, gain_offset = 1.000000e+00 : f64} : tensor<2x6x8xf32>, tensor<8xf32>
  %ro = zc.rmsnorm %x, %b {epsilon = 1.0e-5 : f64, gain_offset = 1.0 : f64} : tensor<2x6x8xf32>, tensor<8xf32>
  // CHECK: zc.rmsnorm %{{.+}}, %{{.+}} : tensor<2x6x8xf32>, tensor<8xf32>
  %r0 = zc.rmsnorm %x, %b : tensor<2x6x8xf32>, tensor<8xf32>
  // CHECK: zc.rmsnorm %{{.+}}, %{{.+}} {epsilon = {{.+}} : f64} : tensor<2x6x8xf32>, tensor<8xf32>
  %r1 = zc.rmsnorm %x, %b {epsilon = 1.0e-5 : f64} : tensor<2x6x8xf32>, tensor<8xf32>
  // CHECK: zc.swiglu %{{.+}}, %{{.+}} : tensor<2x6x8xf32>
  %sw = zc.swiglu %x, %x : tensor<2x6x8xf32>
  // CHECK: %{{.+}}, %{{.+}} = zc.swiglu_grad %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x6x8xf32>
  %swg:2 = zc.swiglu_grad %x, %x, %x : tensor<2x6x8xf32>
  // CHECK: zc.silu %{{.+}} : tensor<2x6x8xf32>
  %r2 = zc.silu %x : tensor<2x6x8xf32>
  // CHECK: zc.rotary %{{.+}} heads 2 theta 1.000000e+04 : tensor<2x6x8xf32>
  %r3 = zc.rotary %x heads 2 theta 10000.0 : tensor<2x6x8xf32>
  // CHECK: zc.rotary %{{.+}} heads 2 theta 5.000000e+05 inverse : tensor<2x6x8xf32>
  %r4 = zc.rotary %x heads 2 theta 500000.0 inverse : tensor<2x6x8xf32>
  // CHECK: zc.rotary %{{.+}} heads 2 theta 1.000000e+04 inverse rotary_dims 2 : tensor<2x6x8xf32>
  %r5 = zc.rotary %x heads 2 theta 10000.0 inverse rotary_dims 2 : tensor<2x6x8xf32>
  // CHECK: zc.gelu %{{.+}} exact : tensor<2x6x8xf32>
  %ge = zc.gelu %x exact : tensor<2x6x8xf32>
  // CHECK: zc.gelu_grad %{{.+}}, %{{.+}} exact : tensor<2x6x8xf32>
  %gg = zc.gelu_grad %x, %x exact : tensor<2x6x8xf32>
  // CHECK: zc.embedding %{{.+}}[%{{.+}}] : tensor<16x8xf32>, tensor<2x6xi32> -> tensor<2x6x8xf32>
  %4 = zc.embedding %table[%ids] : tensor<16x8xf32>, tensor<2x6xi32> -> tensor<2x6x8xf32>
  // CHECK: zc.cross_entropy %{{.+}}, %{{.+}} : tensor<2x6x16xf32>, tensor<2x6xi32> -> tensor<f32>
  %5 = zc.cross_entropy %logits, %ids : tensor<2x6x16xf32>, tensor<2x6xi32> -> tensor<f32>
  // CHECK: zc.cross_entropy %{{.+}}, %{{.+}} softcap 3.000000e+01 : tensor<2x6x16xf32>, tensor<2x6xi32> -> tensor<f32>
  %cap5 = zc.cross_entropy %logits, %ids softcap 30.0 : tensor<2x6x16xf32>, tensor<2x6xi32> -> tensor<f32>
  // CHECK: zc.mse %{{.+}}, %{{.+}} : tensor<2x6x8xf32> -> tensor<f32>
  %6 = zc.mse %x, %0 : tensor<2x6x8xf32> -> tensor<f32>
  return
}

// -----

// Tests that every backward op round-trips.

// CHECK-LABEL: func.func @grads
func.func @grads(%dy: tensor<2x6x8xf32>, %x: tensor<2x6x8xf32>, %g: tensor<8xf32>,
                 %ids: tensor<2x6xi32>, %logits: tensor<2x6x16xf32>, %dl: tensor<f32>, %kv1: tensor<2x6x2xf32>) {
  // CHECK: zc.relu_grad %{{.+}}, %{{.+}} : tensor<2x6x8xf32>
  %0 = zc.relu_grad %dy, %x : tensor<2x6x8xf32>
  // CHECK: zc.gelu_grad %{{.+}}, %{{.+}} : tensor<2x6x8xf32>
  %1 = zc.gelu_grad %dy, %x : tensor<2x6x8xf32>
  // CHECK: zc.softmax_grad %{{.+}}, %{{.+}} : tensor<2x6x8xf32>
  %2 = zc.softmax_grad %dy, %x : tensor<2x6x8xf32>
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}} = zc.layernorm_grad %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x6x8xf32>, tensor<8xf32>
  %3:3 = zc.layernorm_grad %dy, %x, %g : tensor<2x6x8xf32>, tensor<8xf32>
  // CHECK: %{{.+}}, %{{.+}} = zc.rmsnorm_grad %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x6x8xf32>, tensor<8xf32>
  %r0:2 = zc.rmsnorm_grad %dy, %x, %g : tensor<2x6x8xf32>, tensor<8xf32>
  // CHECK: zc.silu_grad %{{.+}}, %{{.+}} : tensor<2x6x8xf32>
  %r1 = zc.silu_grad %dy, %x : tensor<2x6x8xf32>
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}} = zc.causal_attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} heads 4 : tensor<2x6x8xf32>
  %4:3 = zc.causal_attention_grad %dy, %x, %x, %x heads 4 : tensor<2x6x8xf32>
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}} = zc.causal_attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} heads 4 kv_heads 1 : tensor<2x6x8xf32>, tensor<2x6x2xf32>
  %gq:3 = zc.causal_attention_grad %dy, %x, %kv1, %kv1 heads 4 kv_heads 1 : tensor<2x6x8xf32>, tensor<2x6x2xf32>
  // CHECK: zc.causal_attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} heads 4 kv_heads 1 softcap 3.000000e+01 window 2 : tensor<2x6x8xf32>, tensor<2x6x2xf32>
  %gv:3 = zc.causal_attention_grad %dy, %x, %kv1, %kv1 heads 4 kv_heads 1 softcap 30.0 window 2 : tensor<2x6x8xf32>, tensor<2x6x2xf32>
  // CHECK: zc.embedding_grad %{{.+}}[%{{.+}}] : tensor<2x6x8xf32>, tensor<2x6xi32> -> tensor<16x8xf32>
  %5 = zc.embedding_grad %dy[%ids] : tensor<2x6x8xf32>, tensor<2x6xi32> -> tensor<16x8xf32>
  // CHECK: zc.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x6x16xf32>, tensor<2x6xi32>
  %6 = zc.cross_entropy_grad %dl, %logits, %ids : tensor<2x6x16xf32>, tensor<2x6xi32>
  // CHECK: zc.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} softcap 3.000000e+01 : tensor<2x6x16xf32>, tensor<2x6xi32>
  %cap6 = zc.cross_entropy_grad %dl, %logits, %ids softcap 30.0 : tensor<2x6x16xf32>, tensor<2x6xi32>
  // CHECK: zc.mse_grad %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x6x8xf32>
  %7 = zc.mse_grad %dl, %x, %dy : tensor<2x6x8xf32>
  // CHECK: zc.reduce_sum %{{.+}} [0, 1] : tensor<2x6x8xf32> -> tensor<8xf32>
  %8 = zc.reduce_sum %dy [0, 1] : tensor<2x6x8xf32> -> tensor<8xf32>
  // CHECK: zc.slice_grad %{{.+}} [0, 0, 8] : tensor<2x6x8xf32> -> tensor<2x6x24xf32>
  %9 = zc.slice_grad %dy [0, 0, 8] : tensor<2x6x8xf32> -> tensor<2x6x24xf32>
  return
}

// -----

// Tests that blocking and async collectives, wait and release round-trip.

// CHECK-LABEL: func.func @collectives
func.func @collectives(%shard: tensor<5xf32>, %grad: tensor<20xf32>, %g2: tensor<3x4xbf16>) {
  // CHECK: %[[FULL:.+]] = zc.all_gather %{{.+}} ranks 4 : tensor<5xf32> -> tensor<20xf32>
  %full = zc.all_gather %shard ranks 4 : tensor<5xf32> -> tensor<20xf32>
  // CHECK: zc.reduce_scatter avg %{{.+}} ranks 4 : tensor<20xf32> -> tensor<5xf32>
  %rs = zc.reduce_scatter avg %grad ranks 4 : tensor<20xf32> -> tensor<5xf32>
  // CHECK: zc.all_reduce sum %{{.+}} ranks 2 : tensor<3x4xbf16>
  %ar = zc.all_reduce sum %g2 ranks 2 : tensor<3x4xbf16>
  // CHECK: zc.release %[[FULL]] : tensor<20xf32>
  zc.release %full : tensor<20xf32>

  // CHECK: %[[H0:.+]] = zc.all_gather_start %{{.+}} ranks 4 : tensor<5xf32> -> !zc.async<tensor<20xf32>>
  %h0 = zc.all_gather_start %shard ranks 4 : tensor<5xf32> -> !zc.async<tensor<20xf32>>
  // CHECK: %[[H1:.+]] = zc.reduce_scatter_start sum %{{.+}} ranks 4 : tensor<20xf32> -> !zc.async<tensor<5xf32>>
  %h1 = zc.reduce_scatter_start sum %grad ranks 4 : tensor<20xf32> -> !zc.async<tensor<5xf32>>
  // CHECK: %[[H2:.+]] = zc.all_reduce_start avg %{{.+}} ranks 2 : tensor<3x4xbf16> -> !zc.async<tensor<3x4xbf16>>
  %h2 = zc.all_reduce_start avg %g2 ranks 2 : tensor<3x4xbf16> -> !zc.async<tensor<3x4xbf16>>
  // CHECK: zc.wait %[[H0]] : !zc.async<tensor<20xf32>>
  %w0 = zc.wait %h0 : !zc.async<tensor<20xf32>>
  // CHECK: zc.wait %[[H1]] : !zc.async<tensor<5xf32>>
  %w1 = zc.wait %h1 : !zc.async<tensor<5xf32>>
  // CHECK: zc.wait %[[H2]] : !zc.async<tensor<3x4xbf16>>
  %w2 = zc.wait %h2 : !zc.async<tensor<3x4xbf16>>
  return
}

// -----

// Tests that tensor parallelism's ops and attributes round-trip: the region markers, the
// all-reduce on the tensor axis, the vocabulary-parallel embedding and loss.

// CHECK-LABEL: func.func @tensor_parallel
func.func @tensor_parallel(%x: tensor<2x6x8xf32>, %table: tensor<8x8xf32>, %ids: tensor<2x6xi32>,
                           %logits: tensor<2x6x8xf32>) {
  // CHECK: zc.tp_copy %{{.+}} ranks 2 : tensor<2x6x8xf32> -> tensor<2x6x8xf32>
  %0 = zc.tp_copy %x ranks 2 : tensor<2x6x8xf32> -> tensor<2x6x8xf32>
  // CHECK: zc.tp_reduce %{{.+}} ranks 2 : tensor<2x6x8xf32> -> tensor<2x6x8xf32>
  %1 = zc.tp_reduce %0 ranks 2 : tensor<2x6x8xf32> -> tensor<2x6x8xf32>
  // CHECK: zc.all_reduce sum %{{.+}} ranks 2 on tensor : tensor<2x6x8xf32>
  %2 = zc.all_reduce sum %1 ranks 2 on tensor : tensor<2x6x8xf32>
  // CHECK: zc.all_reduce sum %{{.+}} ranks 2 : tensor<2x6x8xf32>
  %3 = zc.all_reduce sum %2 ranks 2 on data : tensor<2x6x8xf32>
  // CHECK: zc.all_reduce_start sum %{{.+}} ranks 2 on tensor : tensor<2x6x8xf32> -> !zc.async<tensor<2x6x8xf32>>
  %h = zc.all_reduce_start sum %3 ranks 2 on tensor : tensor<2x6x8xf32> -> !zc.async<tensor<2x6x8xf32>>
  %4 = zc.wait %h : !zc.async<tensor<2x6x8xf32>>
  // CHECK: zc.embedding %{{.+}}[%{{.+}}] {vocab_shards = 2 : i64} : tensor<8x8xf32>, tensor<2x6xi32> -> tensor<2x6x8xf32>
  %5 = zc.embedding %table[%ids] {vocab_shards = 2} : tensor<8x8xf32>, tensor<2x6xi32> -> tensor<2x6x8xf32>
  // CHECK: zc.cross_entropy %{{.+}}, %{{.+}} {vocab_shards = 2 : i64} : tensor<2x6x8xf32>, tensor<2x6xi32> -> tensor<f32>
  %6 = zc.cross_entropy %logits, %ids {vocab_shards = 2} : tensor<2x6x8xf32>, tensor<2x6xi32> -> tensor<f32>
  return
}

// Tests that sequence parallelism's forms round-trip: the markers with `sequence`, the
// shard and gather of a replicated value, and the tensor axis' all-gather and reduce-scatter.
// The part is the first axis longer than 1 divided: the batch, or one sequence's tokens.

// CHECK-LABEL: func.func @sequence_parallel
func.func @sequence_parallel(%x: tensor<2x6x8xf32>, %y: tensor<1x6x8xf32>) {
  // CHECK: zc.tp_copy %{{.+}} ranks 2 sequence : tensor<1x6x8xf32> -> tensor<2x6x8xf32>
  %0 = zc.tp_copy %y ranks 2 sequence : tensor<1x6x8xf32> -> tensor<2x6x8xf32>
  // CHECK: zc.tp_reduce %{{.+}} ranks 2 sequence : tensor<2x6x8xf32> -> tensor<1x6x8xf32>
  %1 = zc.tp_reduce %0 ranks 2 sequence : tensor<2x6x8xf32> -> tensor<1x6x8xf32>
  // CHECK: zc.sp_shard %{{.+}} ranks 3 : tensor<1x6x8xf32> -> tensor<1x2x8xf32>
  %2 = zc.sp_shard %1 ranks 3 : tensor<1x6x8xf32> -> tensor<1x2x8xf32>
  // CHECK: zc.sp_gather %{{.+}} ranks 3 : tensor<1x2x8xf32> -> tensor<1x6x8xf32>
  %3 = zc.sp_gather %2 ranks 3 : tensor<1x2x8xf32> -> tensor<1x6x8xf32>
  // CHECK: zc.all_gather %{{.+}} ranks 2 on tensor : tensor<1x6x8xf32> -> tensor<2x6x8xf32>
  %4 = zc.all_gather %3 ranks 2 on tensor : tensor<1x6x8xf32> -> tensor<2x6x8xf32>
  // CHECK: zc.reduce_scatter sum %{{.+}} ranks 2 on tensor : tensor<2x6x8xf32> -> tensor<1x6x8xf32>
  %5 = zc.reduce_scatter sum %4 ranks 2 on tensor : tensor<2x6x8xf32> -> tensor<1x6x8xf32>
  return
}

// -----

// Tests that context parallelism's ops round-trip: this rank's chunks of token ids and of a
// position table (and the placement back), Ulysses' exchange both ways, the all-gather on the
// context axis.

// CHECK-LABEL: func.func @context_parallel
func.func @context_parallel(%ids: tensor<2x8xi32>, %pos: tensor<8x4xf32>, %x: tensor<2x4x8xf32>) {
  // CHECK: zc.cp_shard %{{.+}} ranks 2 axis 1 : tensor<2x8xi32> -> tensor<2x4xi32>
  %0 = zc.cp_shard %ids ranks 2 axis 1 : tensor<2x8xi32> -> tensor<2x4xi32>
  // CHECK: zc.cp_shard %{{.+}} ranks 2 axis 0 : tensor<8x4xf32> -> tensor<4x4xf32>
  %1 = zc.cp_shard %pos ranks 2 axis 0 : tensor<8x4xf32> -> tensor<4x4xf32>
  // CHECK: zc.cp_unshard %{{.+}} ranks 2 axis 0 : tensor<4x4xf32> -> tensor<8x4xf32>
  %2 = zc.cp_unshard %1 ranks 2 axis 0 : tensor<4x4xf32> -> tensor<8x4xf32>
  // CHECK: zc.cp_to_heads %{{.+}} ranks 2 heads 4 : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %3 = zc.cp_to_heads %x ranks 2 heads 4 : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  // CHECK: zc.cp_to_tokens %{{.+}} ranks 2 heads 4 : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
  %4 = zc.cp_to_tokens %3 ranks 2 heads 4 : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
  // CHECK: zc.all_reduce sum %{{.+}} ranks 2 on context : tensor<2x4x8xf32>
  %5 = zc.all_reduce sum %4 ranks 2 on context : tensor<2x4x8xf32>
  return
}

// -----

// Tests that a pipeline stage's boundary ops round-trip.

// CHECK-LABEL: func.func @pipeline_stage
func.func @pipeline_stage(%x: tensor<2x6x8xf32>, %dx: tensor<2x6x8xf32>) {
  // CHECK: zc.stage_input %{{.+}} from stage 0 : tensor<2x6x8xf32>
  %0 = zc.stage_input %x from stage 0 : tensor<2x6x8xf32>
  // CHECK: zc.stage_output %{{.+}}, %{{.+}} : tensor<2x6x8xf32> -> tensor<f32>
  %1 = zc.stage_output %0, %dx : tensor<2x6x8xf32> -> tensor<f32>
  // CHECK: zc.pipe_send %{{.+}} to stage 2 : tensor<2x6x8xf32>
  zc.pipe_send %0 to stage 2 : tensor<2x6x8xf32>
  return
}

// -----

// Tests that a pipeline stage's kept value round-trips (zcc-pipeline-keep).

// CHECK-LABEL: func.func @stash
func.func @stash(%h: tensor<2x6x8xf32>, %kept: tensor<2x6x8xf32> {zc.input = "stash"}) {
  // CHECK: zc.pipe_stash %{{.+}} into %{{.+}} : tensor<2x6x8xf32>
  zc.pipe_stash %h into %kept : tensor<2x6x8xf32>
  return
}

// -----

// Tests that gradient buffers, optimizer state and updates round-trip.

// CHECK: zc.state @w.exp_avg : tensor<4x3xf32> of @w
// CHECK: zc.state @b.momentum : tensor<3xf32> of @b
zc.param @w : tensor<4x3xf32> = #zc.zeros
zc.param @b : tensor<3xf32> = #zc.zeros
zc.state @w.exp_avg : tensor<4x3xf32> of @w
zc.state @w.exp_avg_sq : tensor<4x3xf32> of @w
zc.state @b.momentum : tensor<3xf32> of @b

// CHECK-LABEL: func.func @train
func.func @train(%dw: tensor<4x3xf32>, %lr: f64, %step: i64) {
  // CHECK: zc.grad_accumulate @w, %{{.+}} : tensor<4x3xf32>
  zc.grad_accumulate @w, %dw : tensor<4x3xf32>
  // CHECK: zc.grad_accumulate @w, %{{.+}} overwrite : tensor<4x3xf32>
  zc.grad_accumulate @w, %dw overwrite : tensor<4x3xf32>
  // CHECK: %[[G:.+]] = zc.grad_ref @w : tensor<4x3xf32>
  %g = zc.grad_ref @w : tensor<4x3xf32>
  // CHECK: zc.adamw @w, %[[G]] state(@w.exp_avg, @w.exp_avg_sq) lr %{{.+}} step %{{.+}} {beta1 = 9.000000e-01 : f64
  zc.adamw @w, %g state(@w.exp_avg, @w.exp_avg_sq) lr %lr step %step {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-8 : f64, weight_decay = 0.1 : f64} : tensor<4x3xf32>
  // CHECK: zc.grad_zero @w
  zc.grad_zero @w
  %gb = zc.grad_ref @b : tensor<3xf32>
  // CHECK: %[[NORM:.+]], %[[COEF:.+]] = zc.grad_norm %[[G]], %{{.+}} {max_norm = 1.000000e+00 : f64, weights = [1.000000e+00, 5.000000e-01]} : tensor<4x3xf32>, tensor<3xf32>
  %norm, %coef = zc.grad_norm %g, %gb {max_norm = 1.0 : f64, weights = [1.0, 0.5]} : tensor<4x3xf32>, tensor<3xf32>
  // CHECK: zc.adamw @w, %[[G]] state(@w.exp_avg, @w.exp_avg_sq) lr %{{.+}} step %{{.+}} scale %[[COEF]] {
  zc.adamw @w, %g state(@w.exp_avg, @w.exp_avg_sq) lr %lr step %step scale %coef {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-8 : f64, weight_decay = 0.1 : f64} : tensor<4x3xf32>
  // CHECK: zc.sgd @b, %{{.+}} state(@b.momentum) lr %{{.+}} scale %[[COEF]] {
  zc.sgd @b, %gb state(@b.momentum) lr %lr scale %coef {momentum = 0.9 : f64, weight_decay = 0.0 : f64} : tensor<3xf32>
  // CHECK: zc.sgd @b, %{{.+}} state(@b.momentum) lr %{{.+}} {momentum = 9.000000e-01 : f64
  zc.sgd @b, %gb state(@b.momentum) lr %lr {momentum = 0.9 : f64, weight_decay = 0.0 : f64} : tensor<3xf32>
  return
}

// -----

// Tests that a bf16 parameter's update names its fp32 master copy.
zc.param @h : tensor<3xbf16> = #zc.zeros
zc.state @h.master : tensor<3xf32> of @h
zc.state @h.exp_avg : tensor<3xf32> of @h
zc.state @h.exp_avg_sq : tensor<3xf32> of @h
zc.state @h.momentum : tensor<3xf32> of @h
// CHECK-LABEL: func.func @mixed
func.func @mixed(%g: tensor<3xbf16>, %lr: f64, %step: i64) {
  // CHECK: zc.adamw @h, %{{.+}} state(@h.exp_avg, @h.exp_avg_sq) master(@h.master) lr %{{.+}} step %{{.+}} {{.+}} : tensor<3xbf16>
  zc.adamw @h, %g state(@h.exp_avg, @h.exp_avg_sq) master(@h.master) lr %lr step %step {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64} : tensor<3xbf16>
  // CHECK: zc.sgd @h, %{{.+}} state(@h.momentum) master(@h.master) lr %{{.+}} {{.+}} : tensor<3xbf16>
  zc.sgd @h, %g state(@h.momentum) master(@h.master) lr %lr {momentum = 0.9 : f64, weight_decay = 0.0 : f64} : tensor<3xbf16>
  return
}

// -----

// Tests that ZeRO's sharded parameters round-trip: 15 elements over 2 ranks are shards
// of 8 (the last padded); gradients and state of a zc.shard_grad parameter are shards.

// CHECK: zc.param @w : tensor<3x5xf32> = #zc.zeros {zc.shard_grad, zc.shard_param, zc.shards = 2 : i64}
// CHECK: zc.state @w.exp_avg : tensor<8xf32> of @w
zc.param @w : tensor<3x5xf32> = #zc.zeros {zc.shard_grad, zc.shard_param, zc.shards = 2 : i64}
zc.state @w.exp_avg : tensor<8xf32> of @w
zc.state @w.exp_avg_sq : tensor<8xf32> of @w
zc.param @v : tensor<4xf32> = #zc.zeros {zc.shards = 2 : i64}
zc.state @v.momentum : tensor<2xf32> of @v

// CHECK-LABEL: func.func @zero
func.func @zero(%dw: tensor<3x5xf32>, %lr: f64, %step: i64) {
  // CHECK: zc.gather_param @w : tensor<3x5xf32>
  %w = zc.gather_param @w : tensor<3x5xf32>
  zc.release %w : tensor<3x5xf32>
  // CHECK: zc.reduce_scatter avg %{{.+}} ranks 2 : tensor<3x5xf32> -> tensor<8xf32>
  %s = zc.reduce_scatter avg %dw ranks 2 : tensor<3x5xf32> -> tensor<8xf32>
  zc.grad_accumulate @w, %s : tensor<8xf32>
  %g = zc.grad_ref @w : tensor<8xf32>
  zc.adamw @w, %g state(@w.exp_avg, @w.exp_avg_sq) lr %lr step %step {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-8 : f64, weight_decay = 0.1 : f64} : tensor<8xf32>
  %gv = zc.grad_ref @v : tensor<4xf32>
  %sv = zc.reduce_scatter avg %gv ranks 2 : tensor<4xf32> -> tensor<2xf32>
  zc.sgd @v, %sv state(@v.momentum) lr %lr {momentum = 0.9 : f64, weight_decay = 0.0 : f64} : tensor<2xf32>
  // CHECK: zc.all_gather_param @v
  zc.all_gather_param @v
  return
}

// -----

// Tests that buckets round-trip: two gradients packed over 2 ranks (shards of 6 and 2),
// a reduce-scatter and the split of this rank's chunk; a parameter group's all-gather.
zc.param @bw : tensor<4x3xf32> = #zc.zeros {zc.shard_grad, zc.shard_param, zc.shards = 2 : i64}
zc.param @bb : tensor<3xf32> = #zc.zeros {zc.shards = 2 : i64}
// CHECK-LABEL: func.func @buckets
func.func @buckets(%dw: tensor<4x3xf32>, %db: tensor<3xf32>) {
  // CHECK: %[[B:.+]] = zc.pack %{{.+}}, %{{.+}} ranks 2 : tensor<4x3xf32>, tensor<3xf32> -> tensor<16xf32>
  %b = zc.pack %dw, %db ranks 2 : tensor<4x3xf32>, tensor<3xf32> -> tensor<16xf32>
  %s = zc.reduce_scatter avg %b ranks 2 : tensor<16xf32> -> tensor<8xf32>
  // CHECK: zc.unpack %{{.+}} ranks 1 : tensor<8xf32> -> tensor<6xf32>, tensor<2xf32>
  %sw, %sb = zc.unpack %s ranks 1 : tensor<8xf32> -> tensor<6xf32>, tensor<2xf32>
  // CHECK: %[[OWN:.+]] = zc.pack_shards [@bw] : tensor<6xf32>
  %own = zc.pack_shards [@bw] : tensor<6xf32>
  %all = zc.all_gather %own ranks 2 : tensor<6xf32> -> tensor<12xf32>
  // CHECK: zc.unpack %{{.+}} ranks 2 : tensor<12xf32> -> tensor<4x3xf32>
  %w = zc.unpack %all ranks 2 : tensor<12xf32> -> tensor<4x3xf32>
  %ownb = zc.pack_shards [@bb] : tensor<2xf32>
  %allb = zc.all_gather %ownb ranks 2 : tensor<2xf32> -> tensor<4xf32>
  // CHECK: zc.unpack_params %{{.+}} ranks 2 into [@bb] : tensor<4xf32>
  zc.unpack_params %allb ranks 2 into [@bb] : tensor<4xf32>
  return
}

// -----

// Tests that zcc-fuse's matmuls round-trip.
// CHECK-LABEL: func.func @fused
func.func @fused(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>, %g: tensor<4x8xf32>, %w2: tensor<16x8xf32>) {
  // CHECK: zc.matmul_bias %{{.+}}, %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %y = zc.matmul_bias %x, %w, %b : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  // CHECK: zc.matmul_bias_gelu %{{.+}}, %{{.+}}, %{{.+}} : {{.+}} -> tensor<4x16xf32>, tensor<4x16xf32>
  %pre, %a = zc.matmul_bias_gelu %x, %w, %b : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xf32>, tensor<4x16xf32>
  // CHECK: zc.matmul_dgelu_bgrad %{{.+}}, %{{.+}}, %{{.+}} transpose_rhs : {{.+}} -> tensor<4x16xf32>, tensor<16xf32>
  %dpre, %db = zc.matmul_dgelu_bgrad %g, %w2, %pre transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32>, tensor<4x16xf32> -> tensor<4x16xf32>, tensor<16xf32>
  return
}

// -----

// Tests that the fused language-model head round-trips: the workspace is the per-row losses
// (8 rows, 64 bytes aligned) and a chunk of 4 x 16 logits; in bf16 over two chunks also the
// weight gradient's f32 sum and one chunk's part.
// CHECK-LABEL: func.func @fused_head
func.func @fused_head(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %wt: tensor<8x16xf32>, %labels: tensor<2x4xi32>,
                      %seed: tensor<f32>, %xb: tensor<2x4x8xbf16>, %wb: tensor<16x8xbf16>) {
  // CHECK: zc.matmul_cross_entropy %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} transpose_weight chunk_rows 4 : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32> -> tensor<320xi8>
  %l, %dx, %dw, %ws = zc.matmul_cross_entropy %x, %w, %labels, %seed transpose_weight chunk_rows 4 : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32> -> tensor<320xi8>
  // CHECK: zc.matmul_cross_entropy %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} chunk_rows 8 : tensor<2x4x8xf32>, tensor<8x16xf32>, tensor<2x4xi32> -> tensor<576xi8>
  %l2, %dx2, %dw2, %ws2 = zc.matmul_cross_entropy %x, %wt, %labels, %seed chunk_rows 8 : tensor<2x4x8xf32>, tensor<8x16xf32>, tensor<2x4xi32> -> tensor<576xi8>
  // CHECK: zc.matmul_cross_entropy {{.+}} chunk_rows 4 : tensor<2x4x8xbf16>, tensor<16x8xbf16>, tensor<2x4xi32> -> tensor<960xi8>
  %l3, %dx3, %dw3, %ws3 = zc.matmul_cross_entropy %xb, %wb, %labels, %seed transpose_weight chunk_rows 4 : tensor<2x4x8xbf16>, tensor<16x8xbf16>, tensor<2x4xi32> -> tensor<960xi8>
  return
}

// The loss alone: the rows' losses and one chunk of logits (no f32 sum in bf16).
// CHECK-LABEL: func.func @fused_head_loss
func.func @fused_head_loss(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %wt: tensor<8x16xf32>, %labels: tensor<2x4xi32>,
                           %xb: tensor<2x4x8xbf16>, %wb: tensor<16x8xbf16>) {
  // CHECK: zc.matmul_cross_entropy_loss %{{.+}}, %{{.+}}, %{{.+}} transpose_weight chunk_rows 4 : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32> -> tensor<320xi8>
  %l, %ws = zc.matmul_cross_entropy_loss %x, %w, %labels transpose_weight chunk_rows 4 : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32> -> tensor<320xi8>
  // CHECK: zc.matmul_cross_entropy_loss %{{.+}}, %{{.+}}, %{{.+}} chunk_rows 8 : tensor<2x4x8xf32>, tensor<8x16xf32>, tensor<2x4xi32> -> tensor<576xi8>
  %l2, %ws2 = zc.matmul_cross_entropy_loss %x, %wt, %labels chunk_rows 8 : tensor<2x4x8xf32>, tensor<8x16xf32>, tensor<2x4xi32> -> tensor<576xi8>
  // CHECK: zc.matmul_cross_entropy_loss {{.+}} chunk_rows 4 : tensor<2x4x8xbf16>, tensor<16x8xbf16>, tensor<2x4xi32> -> tensor<192xi8>
  %l3, %ws3 = zc.matmul_cross_entropy_loss %xb, %wb, %labels transpose_weight chunk_rows 4 : tensor<2x4x8xbf16>, tensor<16x8xbf16>, tensor<2x4xi32> -> tensor<192xi8>
  return
}

// -----

// Tests that the offload ops round-trip: states on the NVMe tier, the swap schedule's
// reads, writes and waits, and an update over a chunk in a swap slot.

// CHECK: module attributes {zc.offload = {slot_bytes = 8192 : i64, slots = 2 : i64, tier = "nvme"}}
module attributes {zc.offload = {tier = "nvme", slots = 2, slot_bytes = 8192}} {
  zc.param @w : tensor<64x32xf32> = #zc.zeros
  // CHECK: zc.state @w.exp_avg : tensor<64x32xf32> of @w {zc.tier = "nvme"}
  zc.state @w.exp_avg : tensor<64x32xf32> of @w {zc.tier = "nvme"}
  zc.state @w.exp_avg_sq : tensor<64x32xf32> of @w {zc.tier = "nvme"}
  // CHECK-LABEL: func.func @update
  func.func @update(%lr: f64, %step: i64) {
    // CHECK: zc.swap_in @w.exp_avg[1024, 1024] slot 1 at 0
    zc.swap_in @w.exp_avg[1024, 1024] slot 1 at 0
    zc.swap_in @w.exp_avg_sq[1024, 1024] slot 1 at 4096
    // CHECK: zc.swap_wait slot 1
    zc.swap_wait slot 1
    %g = zc.grad_ref @w : tensor<64x32xf32>
    // CHECK: zc.adamw @w, %{{.+}} state(@w.exp_avg, @w.exp_avg_sq) lr %{{.+}} step %{{.+}} {beta1 = 9.000000e-01 : f64, beta2 = {{.+}} : f64, chunk = array<i64: 1024, 1024>, eps = 1.000000e-08 : f64, swap_slot = 1 : i64, weight_decay = 0.000000e+00 : f64}
    zc.adamw @w, %g state(@w.exp_avg, @w.exp_avg_sq) lr %lr step %step {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64, chunk = array<i64: 1024, 1024>, swap_slot = 1 : i64} : tensor<64x32xf32>
    // CHECK: zc.swap_out @w.exp_avg_sq[1024, 1024] slot 1 at 4096
    zc.swap_out @w.exp_avg[1024, 1024] slot 1 at 0
    zc.swap_out @w.exp_avg_sq[1024, 1024] slot 1 at 4096
    zc.swap_wait slot 1
    return
  }
}

// -----

// Tests that the activation offload ops round-trip.
// CHECK-LABEL: func.func @activations
func.func @activations(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  // CHECK: zc.offload_activation %{{.+}} to slot 3 : tensor<4x64xf32>
  zc.offload_activation %x to slot 3 : tensor<4x64xf32>
  // CHECK: zc.reload_activation slot 3 : tensor<4x64xf32>
  %0 = zc.reload_activation slot 3 : tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

// Tests that ZeRO++'s ops round-trip: quantized rows, the all-to-all, hpZ's secondary shards.
module {
  // CHECK: zc.state @w.secondary : tensor<12xf32> of @w secondary
  zc.param @w : tensor<4x6xf32> = #zc.zeros {zc.shards = 4 : i64, zc.shard_param}
  zc.state @w.secondary : tensor<12xf32> of @w secondary
  // CHECK-LABEL: func.func @zeropp
  func.func @zeropp(%x: tensor<2x1000xf32>, %all: tensor<24xf32>, %g: tensor<2x2x520xi8>) -> tensor<2x1000xf32> {
    // CHECK: zc.quantize %{{.+}} block 128 bits 8 : tensor<2x1000xf32> -> tensor<2x1032xi8>
    %q = zc.quantize %x block 128 bits 8 : tensor<2x1000xf32> -> tensor<2x1032xi8>
    // CHECK: zc.dequantize %{{.+}} block 128 bits 8 : tensor<2x1032xi8> -> tensor<2x1000xf32>
    %y = zc.dequantize %q block 128 bits 8 : tensor<2x1032xi8> -> tensor<2x1000xf32>
    // CHECK: zc.all_to_all %{{.+}} ranks 2 on node : tensor<2x2x520xi8>
    %a = zc.all_to_all %g ranks 2 on node : tensor<2x2x520xi8>
    // CHECK: zc.all_to_all_start %{{.+}} ranks 2 on cross : tensor<2x2x520xi8> -> !zc.async<tensor<2x2x520xi8>>
    %h = zc.all_to_all_start %a ranks 2 on cross : tensor<2x2x520xi8> -> !zc.async<tensor<2x2x520xi8>>
    %b = zc.wait %h : !zc.async<tensor<2x2x520xi8>>
    // CHECK: zc.keep_secondary %{{.+}} ranks 4 group 2 into [@w.secondary] : tensor<24xf32>
    zc.keep_secondary %all ranks 4 group 2 into [@w.secondary] : tensor<24xf32>
    // CHECK: zc.pack_secondary [@w.secondary] ranks 4 group 2 : tensor<12xf32>
    %own = zc.pack_secondary [@w.secondary] ranks 4 group 2 : tensor<12xf32>
    // CHECK: zc.all_gather %{{.+}} ranks 2 on hpz : tensor<12xf32> -> tensor<24xf32>
    %back = zc.all_gather %own ranks 2 on hpz : tensor<12xf32> -> tensor<24xf32>
    return %y : tensor<2x1000xf32>
  }
}

// -----

// Tests that compression training's fake quantization round-trips.
// CHECK-LABEL: func.func @fake_quantize
func.func @fake_quantize(%w: tensor<64x32xf32>, %gate: tensor<f32>) -> tensor<64x32xf32> {
  // CHECK: zc.fake_quantize %{{.+}}, %{{.+}} bits 8 groups 4 : tensor<64x32xf32>
  %q = zc.fake_quantize %w, %gate bits 8 groups 4 : tensor<64x32xf32>
  // CHECK: zc.fake_quantize %{{.+}}, %{{.+}} bits 4 groups 1 asymmetric : tensor<64x32xf32>
  %a = zc.fake_quantize %q, %gate bits 4 groups 1 asymmetric : tensor<64x32xf32>
  // CHECK: zc.fake_quantize %{{.+}}, %{{.+}} bits 8 per_row asymmetric : tensor<64x32xf32>
  %r = zc.fake_quantize %a, %gate bits 8 per_row asymmetric : tensor<64x32xf32>
  // CHECK: zc.fake_quantize %{{.+}}, %{{.+}} bits 8 groups 4 columns : tensor<64x32xf32>
  %c = zc.fake_quantize %r, %gate bits 8 groups 4 columns : tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}

// -----

// Tests that compression training's schedule gate, sparse-pruning mask and masking round-trip.
module {
  zc.param @w : tensor<64x32xf32> = #zc.normal<std = 0.02>
  // CHECK: zc.state @w.sparse_mask : tensor<64x32xf32> of @w mask keep 5.000000e-01
  zc.state @w.sparse_mask : tensor<64x32xf32> of @w mask keep 0.5
  // CHECK: zc.state @w.row_mask : tensor<64xf32> of @w mask keep 2.500000e-01 rows 0
  zc.state @w.row_mask : tensor<64xf32> of @w mask keep 0.25 rows 0
  // CHECK-LABEL: func.func @pruning
  func.func @pruning(%w: tensor<64x32xf32>) -> tensor<64x32xf32> {
    // CHECK: %[[ON:.+]] = zc.step_gate from 50 : tensor<f32>
    %on = zc.step_gate from 50 : tensor<f32>
    // CHECK: zc.apply_mask %{{.+}}, %[[ON]] mask @w.sparse_mask : tensor<64x32xf32>
    %m = zc.apply_mask %w, %on mask @w.sparse_mask : tensor<64x32xf32>
    // CHECK: zc.apply_mask %{{.+}}, %[[ON]] mask @w.row_mask axis 0 : tensor<64x32xf32>
    %r = zc.apply_mask %m, %on mask @w.row_mask axis 0 : tensor<64x32xf32>
    return %r : tensor<64x32xf32>
  }
}

// -----

// Tests that the Mixture-of-Experts ops and their gradients round-trip (examples/gen_llama.py --experts).
// CHECK-LABEL: func.func @moe
func.func @moe(%x: tensor<2x4x8xf32>, %router: tensor<8x4xf32>, %w1: tensor<4x8x6xf32>, %bias: tensor<4xf32>,
               %dy: tensor<2x4x8xf32>, %seed: tensor<f32>, %w1t: tensor<4x6x8xf32>,
               %gl: tensor<2x4x1xf32>) -> tensor<f32> {
  %logits = zc.matmul %x, %router : tensor<2x4x8xf32>, tensor<8x4xf32> -> tensor<2x4x4xf32>
  // CHECK: zc.moe_route %{{.+}} top_k 2 normalize : tensor<2x4x4xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<5xi32>
  %w, %e, %r, %o = zc.moe_route %logits top_k 2 normalize
      : tensor<2x4x4xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<5xi32>
  // CHECK: zc.moe_route %{{.+}} top_k 1 sigmoid normalize groups 2 topk_groups 1 : tensor<2x4x4xf32>
  %wg, %eg, %rg, %og = zc.moe_route %logits top_k 1 sigmoid normalize groups 2 topk_groups 1
      : tensor<2x4x4xf32> -> tensor<2x4x1xf32>, tensor<2x4x1xi32>, tensor<2x4x1xi32>, tensor<5xi32>
  // CHECK: zc.moe_route %{{.+}} bias %{{.+}} : tensor<4xf32> top_k 3 sigmoid scale 2.500000e+00 : tensor<2x4x4xf32>
  %w3, %e3, %r3, %o3 = zc.moe_route %logits bias %bias : tensor<4xf32> top_k 3 sigmoid scale 2.5
      : tensor<2x4x4xf32> -> tensor<2x4x3xf32>, tensor<2x4x3xi32>, tensor<2x4x3xi32>, tensor<5xi32>
  // CHECK: zc.moe_dispatch %{{.+}}, %{{.+}} : tensor<2x4x8xf32>, tensor<2x4x2xi32> -> tensor<16x8xf32>
  %xs = zc.moe_dispatch %x, %r : tensor<2x4x8xf32>, tensor<2x4x2xi32> -> tensor<16x8xf32>
  // CHECK: zc.grouped_matmul %{{.+}}, %{{.+}}, %{{.+}} : tensor<16x8xf32>, tensor<4x8x6xf32>, tensor<5xi32> -> tensor<16x6xf32>
  %g = zc.grouped_matmul %xs, %w1, %o : tensor<16x8xf32>, tensor<4x8x6xf32>, tensor<5xi32> -> tensor<16x6xf32>
  // CHECK: zc.grouped_matmul_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<16x6xf32>, tensor<16x8xf32>, tensor<4x8x6xf32>, tensor<5xi32>
  %dxs, %dw1 = zc.grouped_matmul_grad %g, %xs, %w1, %o : tensor<16x6xf32>, tensor<16x8xf32>, tensor<4x8x6xf32>, tensor<5xi32>
  // Expert parallelism over 2 ranks: 2 of the 4 experts each, the received rows at most 32.
  // CHECK: zc.ep_counts %{{.+}} ranks 2 rows 32 dispatched 16 max_rows 10 : tensor<5xi32> -> tensor<2x5xi32>, tensor<3xi32>
  %all, %local = zc.ep_counts %o ranks 2 rows 32 dispatched 16 max_rows 10 : tensor<5xi32> -> tensor<2x5xi32>, tensor<3xi32>
  // CHECK: zc.ep_dispatch %{{.+}}, %{{.+}} ranks 2 : tensor<16x8xf32>, tensor<2x5xi32> -> tensor<32x8xf32>
  %xr = zc.ep_dispatch %xs, %all ranks 2 : tensor<16x8xf32>, tensor<2x5xi32> -> tensor<32x8xf32>
  // CHECK: zc.ep_combine %{{.+}}, %{{.+}} ranks 2 : tensor<32x8xf32>, tensor<2x5xi32> -> tensor<16x8xf32>
  %xb = zc.ep_combine %xr, %all ranks 2 : tensor<32x8xf32>, tensor<2x5xi32> -> tensor<16x8xf32>
  // Started on the communication stream (zcc-schedule), each awaited by zc.wait.
  // CHECK: zc.ep_dispatch_start %{{.+}}, %{{.+}} ranks 2 : tensor<16x8xf32>, tensor<2x5xi32> -> !zc.async<tensor<32x8xf32>>
  %hd = zc.ep_dispatch_start %xs, %all ranks 2 : tensor<16x8xf32>, tensor<2x5xi32> -> !zc.async<tensor<32x8xf32>>
  %xr2 = zc.wait %hd : !zc.async<tensor<32x8xf32>>
  // CHECK: zc.ep_combine_start %{{.+}}, %{{.+}} ranks 2 : tensor<32x8xf32>, tensor<2x5xi32> -> !zc.async<tensor<16x8xf32>>
  %hc = zc.ep_combine_start %xr2, %all ranks 2 : tensor<32x8xf32>, tensor<2x5xi32> -> !zc.async<tensor<16x8xf32>>
  %xb2 = zc.wait %hc : !zc.async<tensor<16x8xf32>>
  // CHECK: zc.moe_shared_gate %{{.+}}, %{{.+}} : tensor<2x4x8xf32>, tensor<2x4x1xf32>
  %sg = zc.moe_shared_gate %x, %gl : tensor<2x4x8xf32>, tensor<2x4x1xf32>
  // CHECK: zc.moe_shared_gate_grad %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x4x8xf32>, tensor<2x4x1xf32>
  %dsx, %dgl = zc.moe_shared_gate_grad %dy, %x, %gl : tensor<2x4x8xf32>, tensor<2x4x1xf32>
  // Each expert's weight a linear layer's [out, in] (Hugging Face's experts).
  // CHECK: zc.grouped_matmul %{{.+}}, %{{.+}}, %{{.+}} transpose_rhs : tensor<16x8xf32>, tensor<4x6x8xf32>, tensor<5xi32> -> tensor<16x6xf32>
  %gt = zc.grouped_matmul %xs, %w1t, %o transpose_rhs : tensor<16x8xf32>, tensor<4x6x8xf32>, tensor<5xi32> -> tensor<16x6xf32>
  // CHECK: zc.grouped_matmul_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} transpose_rhs : tensor<16x6xf32>, tensor<16x8xf32>, tensor<4x6x8xf32>, tensor<5xi32>
  %dxst, %dw1t = zc.grouped_matmul_grad %gt, %xs, %w1t, %o transpose_rhs : tensor<16x6xf32>, tensor<16x8xf32>, tensor<4x6x8xf32>, tensor<5xi32>
  // CHECK: zc.moe_combine %{{.+}}, %{{.+}}, %{{.+}} : tensor<16x8xf32>, tensor<2x4x2xf32>, tensor<2x4x2xi32> -> tensor<2x4x8xf32>
  %y = zc.moe_combine %dxs, %w, %r : tensor<16x8xf32>, tensor<2x4x2xf32>, tensor<2x4x2xi32> -> tensor<2x4x8xf32>
  // CHECK: zc.moe_combine_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4x2xf32>, tensor<2x4x2xi32>
  %dys, %dw = zc.moe_combine_grad %dy, %dxs, %w, %r : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4x2xf32>, tensor<2x4x2xi32>
  // CHECK: zc.moe_dispatch_grad %{{.+}}, %{{.+}} : tensor<16x8xf32>, tensor<2x4x2xi32> -> tensor<2x4x8xf32>
  %dx = zc.moe_dispatch_grad %dys, %r : tensor<16x8xf32>, tensor<2x4x2xi32> -> tensor<2x4x8xf32>
  // CHECK: zc.moe_route_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} top_k 2 normalize : tensor<2x4x2xf32>, tensor<2x4x4xf32>, tensor<2x4x2xi32>
  %dl = zc.moe_route_grad %dw, %logits, %e, %r top_k 2 normalize : tensor<2x4x2xf32>, tensor<2x4x4xf32>, tensor<2x4x2xi32>
  // CHECK: zc.moe_aux_loss %{{.+}}, %{{.+}} coef 2.000000e-02 : tensor<2x4x4xf32>, tensor<2x4x2xi32> -> tensor<f32>
  %aux = zc.moe_aux_loss %logits, %e coef 0.02 : tensor<2x4x4xf32>, tensor<2x4x2xi32> -> tensor<f32>
  // CHECK: zc.moe_aux_loss_grad %{{.+}}, %{{.+}}, %{{.+}} coef 1.000000e-03 sigmoid : tensor<2x4x4xf32>, tensor<2x4x3xi32>
  %dla = zc.moe_aux_loss_grad %seed, %logits, %e3 coef 0.001 sigmoid : tensor<2x4x4xf32>, tensor<2x4x3xi32>
  // A capacity of ceil(1.0 x 8 x 2 / 4) = 4 rows an expert: 16 dispatched rows; 0.5: 2 each, 8 rows.
  // CHECK: zc.moe_route %{{.+}} top_k 2 normalize capacity_factor 5.000000e-01 : tensor<2x4x4xf32>
  %wc, %ec, %rc, %oc = zc.moe_route %logits top_k 2 normalize capacity_factor 0.5
      : tensor<2x4x4xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<5xi32>
  // CHECK: zc.moe_dispatch %{{.+}}, %{{.+}} : tensor<2x4x8xf32>, tensor<2x4x2xi32> -> tensor<8x8xf32>
  %xc = zc.moe_dispatch %x, %rc : tensor<2x4x8xf32>, tensor<2x4x2xi32> -> tensor<8x8xf32>
  // CHECK: zc.moe_z_loss %{{.+}} coef 1.000000e-03 : tensor<2x4x4xf32> -> tensor<f32>
  %z = zc.moe_z_loss %logits coef 0.001 : tensor<2x4x4xf32> -> tensor<f32>
  // CHECK: zc.moe_z_loss_grad %{{.+}}, %{{.+}} coef 1.000000e-03 : tensor<2x4x4xf32>
  %dlz = zc.moe_z_loss_grad %seed, %logits coef 0.001 : tensor<2x4x4xf32>
  %total = zc.add %aux, %z : tensor<f32>
  return %total : tensor<f32>
}
