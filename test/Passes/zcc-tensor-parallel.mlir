// RUN: zcc-opt %s -split-input-file -zcc-tensor-parallel="ranks=2" -verify-diagnostics | FileCheck %s

// Tests a GPT-2 block and its tied head: the fused QKV projection is column-split as three
// segments (every rank keeps its heads of q, k and v), its bias with it; the slices move to the
// local offsets; attention keeps half the heads; the output projections are row-split and
// their products summed by zc.tp_reduce before the replicated bias; one zc.tp_copy per region
// input. The tied table is split over the vocabulary: the lookup, then a sum over the ranks;
// the head's logits keep this rank's classes for the vocabulary-parallel loss.

// CHECK: zc.param @wte : tensor<8x16xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 0 : i64, ranks = 2 : i64, segments = array<i64: 16>}}
// CHECK: zc.param @ln_g : tensor<16xf32> = #zc.ones{{$}}
// CHECK: zc.param @qkv_w : tensor<16x24xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 1 : i64, ranks = 2 : i64, segments = array<i64: 16, 16, 16>}}
// CHECK: zc.param @qkv_b : tensor<24xf32> = #zc.zeros {zc.tp_split = {axis = 0 : i64, ranks = 2 : i64, segments = array<i64: 16, 16, 16>}}
// CHECK: zc.param @proj_w : tensor<8x16xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 0 : i64, ranks = 2 : i64, segments = array<i64: 16>}}
// CHECK: zc.param @proj_b : tensor<16xf32> = #zc.zeros{{$}}
// CHECK: zc.param @fc_w : tensor<16x32xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 1 : i64, ranks = 2 : i64, segments = array<i64: 64>}}
// CHECK: zc.param @fc_b : tensor<32xf32> = #zc.zeros {zc.tp_split = {axis = 0 : i64, ranks = 2 : i64, segments = array<i64: 64>}}
// CHECK: zc.param @out_w : tensor<32x16xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 0 : i64, ranks = 2 : i64, segments = array<i64: 64>}}
zc.param @wte : tensor<16x16xf32> = #zc.normal<std = 0.02>
zc.param @ln_g : tensor<16xf32> = #zc.ones
zc.param @ln_b : tensor<16xf32> = #zc.zeros
zc.param @qkv_w : tensor<16x48xf32> = #zc.normal<std = 0.02>
zc.param @qkv_b : tensor<48xf32> = #zc.zeros
zc.param @proj_w : tensor<16x16xf32> = #zc.normal<std = 0.02>
zc.param @proj_b : tensor<16xf32> = #zc.zeros
zc.param @fc_w : tensor<16x64xf32> = #zc.normal<std = 0.02>
zc.param @fc_b : tensor<64xf32> = #zc.zeros
zc.param @out_w : tensor<64x16xf32> = #zc.normal<std = 0.02>
// CHECK-LABEL: zc.forward @gpt
zc.forward @gpt(%ids: tensor<2x4xi32>, %tgt: tensor<2x4xi32>) -> tensor<f32> {
  %wte = zc.param_ref @wte : tensor<16x16xf32>
  // CHECK: %[[LOOKUP:.+]] = zc.embedding %{{.+}}[%{{.+}}] {vocab_shards = 2 : i64} : tensor<8x16xf32>, tensor<2x4xi32> -> tensor<2x4x16xf32>
  // CHECK-NEXT: %[[X:.+]] = zc.tp_reduce %[[LOOKUP]] ranks 2 : tensor<2x4x16xf32> -> tensor<2x4x16xf32>
  %x = zc.embedding %wte[%ids] : tensor<16x16xf32>, tensor<2x4xi32> -> tensor<2x4x16xf32>
  %g = zc.param_ref @ln_g : tensor<16xf32>
  %b = zc.param_ref @ln_b : tensor<16xf32>
  // CHECK: %[[LN:.+]] = zc.layernorm %[[X]]
  // CHECK-NEXT: %[[IN:.+]] = zc.tp_copy %[[LN]] ranks 2 : tensor<2x4x16xf32> -> tensor<2x4x16xf32>
  %ln = zc.layernorm %x, %g, %b : tensor<2x4x16xf32>, tensor<16xf32>
  %wqkv = zc.param_ref @qkv_w : tensor<16x48xf32>
  %bqkv = zc.param_ref @qkv_b : tensor<48xf32>
  // CHECK: zc.matmul %[[IN]], %{{.+}} {zc.tp = "column"} : tensor<2x4x16xf32>, tensor<16x24xf32> -> tensor<2x4x24xf32>
  %qkv_mm = zc.matmul %ln, %wqkv : tensor<2x4x16xf32>, tensor<16x48xf32> -> tensor<2x4x48xf32>
  // CHECK: zc.bias_add {{.+}} : tensor<2x4x24xf32>, tensor<24xf32>
  %qkv = zc.bias_add %qkv_mm, %bqkv : tensor<2x4x48xf32>, tensor<48xf32>
  // CHECK: zc.slice %{{.+}} [0, 0, 0] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
  // CHECK: zc.slice %{{.+}} [0, 0, 8] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
  // CHECK: zc.slice %{{.+}} [0, 0, 16] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
  %q = zc.slice %qkv [0, 0, 0] : tensor<2x4x48xf32> -> tensor<2x4x16xf32>
  %k = zc.slice %qkv [0, 0, 16] : tensor<2x4x48xf32> -> tensor<2x4x16xf32>
  %v = zc.slice %qkv [0, 0, 32] : tensor<2x4x48xf32> -> tensor<2x4x16xf32>
  // CHECK: zc.causal_attention %{{.+}}, %{{.+}}, %{{.+}} heads 2 : tensor<2x4x8xf32>
  %att = zc.causal_attention %q, %k, %v heads 4 : tensor<2x4x16xf32>
  %wp = zc.param_ref @proj_w : tensor<16x16xf32>
  %bp = zc.param_ref @proj_b : tensor<16xf32>
  // CHECK: %[[PARTIAL:.+]] = zc.matmul %{{.+}}, %{{.+}} {zc.tp = "row"} : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  // CHECK-NEXT: %[[SUM:.+]] = zc.tp_reduce %[[PARTIAL]] ranks 2 : tensor<2x4x16xf32> -> tensor<2x4x16xf32>
  // CHECK: zc.bias_add %[[SUM]], %{{.+}} : tensor<2x4x16xf32>, tensor<16xf32>
  %pm = zc.matmul %att, %wp : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
  %po = zc.bias_add %pm, %bp : tensor<2x4x16xf32>, tensor<16xf32>
  %r1 = zc.add %x, %po : tensor<2x4x16xf32>
  %wfc = zc.param_ref @fc_w : tensor<16x64xf32>
  %bfc = zc.param_ref @fc_b : tensor<64xf32>
  %wout = zc.param_ref @out_w : tensor<64x16xf32>
  // CHECK: %[[IN2:.+]] = zc.tp_copy %{{.+}} ranks 2
  // CHECK: zc.matmul %[[IN2]], %{{.+}} {zc.tp = "column"} : tensor<2x4x16xf32>, tensor<16x32xf32> -> tensor<2x4x32xf32>
  // CHECK: zc.gelu %{{.+}} : tensor<2x4x32xf32>
  // CHECK: zc.matmul %{{.+}}, %{{.+}} {zc.tp = "row"} : tensor<2x4x32xf32>, tensor<32x16xf32> -> tensor<2x4x16xf32>
  // CHECK-NEXT: zc.tp_reduce
  %fm = zc.matmul %r1, %wfc : tensor<2x4x16xf32>, tensor<16x64xf32> -> tensor<2x4x64xf32>
  %fb = zc.bias_add %fm, %bfc : tensor<2x4x64xf32>, tensor<64xf32>
  %ge = zc.gelu %fb : tensor<2x4x64xf32>
  %om = zc.matmul %ge, %wout : tensor<2x4x64xf32>, tensor<64x16xf32> -> tensor<2x4x16xf32>
  %r2 = zc.add %r1, %om : tensor<2x4x16xf32>
  // CHECK: %[[HEAD_IN:.+]] = zc.tp_copy %{{.+}} ranks 2
  // CHECK: zc.matmul %[[HEAD_IN]], %{{.+}} transpose_rhs {zc.tp = "vocab"} : tensor<2x4x16xf32>, tensor<8x16xf32> -> tensor<2x4x8xf32>
  // CHECK: zc.cross_entropy %{{.+}}, %{{.+}} {vocab_shards = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4xi32> -> tensor<f32>
  %logits = zc.matmul %r2, %wte transpose_rhs : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
  %l = zc.cross_entropy %logits, %tgt : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
  zc.return %l : tensor<f32>
}

// -----

// Tests a Llama block as zcc-import writes it: separate q, k, v projections stored [out, in]
// (transpose_rhs: split on axis 0), rotary and grouped-query attention with whole query and
// key/value heads per rank, SwiGLU written as silu(gate) * up (both column-split: the product
// joins them into one region); an untied head through a reshape.

// CHECK: zc.param @q : tensor<8x16xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 0 : i64, ranks = 2 : i64, segments = array<i64: 16>}}
// CHECK: zc.param @k : tensor<4x16xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 0 : i64, ranks = 2 : i64, segments = array<i64: 8>}}
// CHECK: zc.param @v : tensor<4x16xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 0 : i64, ranks = 2 : i64, segments = array<i64: 8>}}
// CHECK: zc.param @o : tensor<16x8xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 1 : i64, ranks = 2 : i64, segments = array<i64: 16>}}
// CHECK: zc.param @gate : tensor<20x16xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 0 : i64, ranks = 2 : i64, segments = array<i64: 40>}}
// CHECK: zc.param @up : tensor<20x16xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 0 : i64, ranks = 2 : i64, segments = array<i64: 40>}}
// CHECK: zc.param @down : tensor<16x20xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 1 : i64, ranks = 2 : i64, segments = array<i64: 40>}}
// CHECK: zc.param @head : tensor<16x16xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 0 : i64, ranks = 2 : i64, segments = array<i64: 32>}}
zc.param @q : tensor<16x16xf32> = #zc.normal<std = 0.02>
zc.param @k : tensor<8x16xf32> = #zc.normal<std = 0.02>
zc.param @v : tensor<8x16xf32> = #zc.normal<std = 0.02>
zc.param @o : tensor<16x16xf32> = #zc.normal<std = 0.02>
zc.param @gate : tensor<40x16xf32> = #zc.normal<std = 0.02>
zc.param @up : tensor<40x16xf32> = #zc.normal<std = 0.02>
zc.param @down : tensor<16x40xf32> = #zc.normal<std = 0.02>
zc.param @head : tensor<32x16xf32> = #zc.normal<std = 0.02>
// CHECK-LABEL: zc.forward @llama
zc.forward @llama(%x: tensor<2x4x16xf32>, %tgt: tensor<2x4xi32>) -> tensor<f32> {
  %wq = zc.param_ref @q : tensor<16x16xf32>
  %wk = zc.param_ref @k : tensor<8x16xf32>
  %wv = zc.param_ref @v : tensor<8x16xf32>
  %wo = zc.param_ref @o : tensor<16x16xf32>
  // CHECK: %[[IN:.+]] = zc.tp_copy %{{.+}} ranks 2
  // CHECK-NOT: zc.tp_copy
  // CHECK: zc.matmul %[[IN]], {{.+}} -> tensor<2x4x8xf32>
  // CHECK: zc.rotary %{{.+}} heads 2 theta
  // CHECK: zc.matmul %[[IN]], {{.+}} -> tensor<2x4x4xf32>
  // CHECK: zc.rotary %{{.+}} heads 1 theta
  // CHECK: zc.matmul %[[IN]], {{.+}} -> tensor<2x4x4xf32>
  // CHECK: zc.causal_attention %{{.+}}, %{{.+}}, %{{.+}} heads 2 kv_heads 1 : tensor<2x4x8xf32>, tensor<2x4x4xf32>
  %qm = zc.matmul %x, %wq transpose_rhs : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
  %qr = zc.rotary %qm heads 4 theta 10000.0 : tensor<2x4x16xf32>
  %km = zc.matmul %x, %wk transpose_rhs : tensor<2x4x16xf32>, tensor<8x16xf32> -> tensor<2x4x8xf32>
  %kr = zc.rotary %km heads 2 theta 10000.0 : tensor<2x4x8xf32>
  %vm = zc.matmul %x, %wv transpose_rhs : tensor<2x4x16xf32>, tensor<8x16xf32> -> tensor<2x4x8xf32>
  %att = zc.causal_attention %qr, %kr, %vm heads 4 kv_heads 2 : tensor<2x4x16xf32>, tensor<2x4x8xf32>
  // CHECK: zc.matmul %{{.+}}, %{{.+}} transpose_rhs {zc.tp = "row"} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  %om = zc.matmul %att, %wo transpose_rhs : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
  %h = zc.add %x, %om : tensor<2x4x16xf32>
  %wg = zc.param_ref @gate : tensor<40x16xf32>
  %wu = zc.param_ref @up : tensor<40x16xf32>
  %wd = zc.param_ref @down : tensor<16x40xf32>
  // CHECK: zc.silu %{{.+}} : tensor<2x4x20xf32>
  // CHECK: zc.mul %{{.+}}, %{{.+}} : tensor<2x4x20xf32>
  %gm = zc.matmul %h, %wg transpose_rhs : tensor<2x4x16xf32>, tensor<40x16xf32> -> tensor<2x4x40xf32>
  %gs = zc.silu %gm : tensor<2x4x40xf32>
  %um = zc.matmul %h, %wu transpose_rhs : tensor<2x4x16xf32>, tensor<40x16xf32> -> tensor<2x4x40xf32>
  %sw = zc.mul %gs, %um : tensor<2x4x40xf32>
  %dm = zc.matmul %sw, %wd transpose_rhs : tensor<2x4x40xf32>, tensor<16x40xf32> -> tensor<2x4x16xf32>
  %h2 = zc.add %h, %dm : tensor<2x4x16xf32>
  %wh = zc.param_ref @head : tensor<32x16xf32>
  // CHECK: zc.matmul %{{.+}}, %{{.+}} transpose_rhs {zc.tp = "vocab"} : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  // CHECK: zc.reshape %{{.+}} : tensor<8x16xf32> -> tensor<2x4x16xf32>
  // The final-logit soft-cap (Gemma 2's) stays on the vocabulary-parallel loss.
  // CHECK: zc.cross_entropy %{{.+}}, %{{.+}} softcap 3.000000e+01 {vocab_shards = 2 : i64} : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
  %rows = zc.reshape %h2 : tensor<2x4x16xf32> -> tensor<8x16xf32>
  %lm = zc.matmul %rows, %wh transpose_rhs : tensor<8x16xf32>, tensor<32x16xf32> -> tensor<8x32xf32>
  %lg = zc.reshape %lm : tensor<8x32xf32> -> tensor<2x4x32xf32>
  %l = zc.cross_entropy %lg, %tgt softcap 30.0 : tensor<2x4x32xf32>, tensor<2x4xi32> -> tensor<f32>
  zc.return %l : tensor<f32>
}

// -----

// Tests that a region stays replicated when it cannot be split evenly (3 heads over 2 ranks)
// or when split features would reach an op that needs them whole (the residual add): only the
// MLP whose features do reach a row matmul is split.

// CHECK: zc.param @qkv : tensor<12x36xf32> = #zc.normal<std = 0.02>{{$}}
// CHECK: zc.param @proj : tensor<12x12xf32> = #zc.normal<std = 0.02>{{$}}
// CHECK: zc.param @leak : tensor<12x12xf32> = #zc.normal<std = 0.02>{{$}}
// CHECK: zc.param @up : tensor<12x24xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 1 : i64, ranks = 2 : i64, segments = array<i64: 48>}}
// CHECK: zc.param @down : tensor<24x12xf32> = #zc.normal<std = 0.02> {zc.tp_split = {axis = 0 : i64, ranks = 2 : i64, segments = array<i64: 48>}}
zc.param @qkv : tensor<12x36xf32> = #zc.normal<std = 0.02>
zc.param @proj : tensor<12x12xf32> = #zc.normal<std = 0.02>
zc.param @leak : tensor<12x12xf32> = #zc.normal<std = 0.02>
zc.param @up : tensor<12x48xf32> = #zc.normal<std = 0.02>
zc.param @down : tensor<48x12xf32> = #zc.normal<std = 0.02>
zc.forward @f(%x: tensor<2x4x12xf32>, %y: tensor<2x4x12xf32>) -> tensor<f32> {
  %w = zc.param_ref @qkv : tensor<12x36xf32>
  %p = zc.param_ref @proj : tensor<12x12xf32>
  %qkv = zc.matmul %x, %w : tensor<2x4x12xf32>, tensor<12x36xf32> -> tensor<2x4x36xf32>
  %q = zc.slice %qkv [0, 0, 0] : tensor<2x4x36xf32> -> tensor<2x4x12xf32>
  %k = zc.slice %qkv [0, 0, 12] : tensor<2x4x36xf32> -> tensor<2x4x12xf32>
  %v = zc.slice %qkv [0, 0, 24] : tensor<2x4x36xf32> -> tensor<2x4x12xf32>
  %a = zc.causal_attention %q, %k, %v heads 3 : tensor<2x4x12xf32>
  %o = zc.matmul %a, %p : tensor<2x4x12xf32>, tensor<12x12xf32> -> tensor<2x4x12xf32>
  %lw = zc.param_ref @leak : tensor<12x12xf32>
  %lm = zc.matmul %o, %lw : tensor<2x4x12xf32>, tensor<12x12xf32> -> tensor<2x4x12xf32>
  %r = zc.add %o, %lm : tensor<2x4x12xf32>
  %u = zc.param_ref @up : tensor<12x48xf32>
  %d = zc.param_ref @down : tensor<48x12xf32>
  %um = zc.matmul %r, %u : tensor<2x4x12xf32>, tensor<12x48xf32> -> tensor<2x4x48xf32>
  %ur = zc.relu %um : tensor<2x4x48xf32>
  %dm = zc.matmul %ur, %d : tensor<2x4x48xf32>, tensor<48x12xf32> -> tensor<2x4x12xf32>
  %l = zc.mse %dm, %y : tensor<2x4x12xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}

// -----

zc.param @w : tensor<6x3xf32> = #zc.normal<std = 0.02>
// expected-error @+1 {{'zc.forward' op --tp 2: no matmul region or vocabulary of this model splits into that many equal parts}}
zc.forward @f(%x: tensor<4x6xf32>, %y: tensor<4x3xf32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<6x3xf32>
  %h = zc.matmul %x, %w : tensor<4x6xf32>, tensor<6x3xf32> -> tensor<4x3xf32>
  %l = zc.mse %h, %y : tensor<4x3xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
