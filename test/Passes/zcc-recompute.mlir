// RUN: zcc-opt %s -zcc-autodiff -zcc-recompute="policy=none" | FileCheck %s --check-prefix=NONE
// RUN: zcc-opt %s -zcc-autodiff -zcc-recompute="policy=selective" | FileCheck %s --check-prefix=SEL
// RUN: zcc-opt %s -zcc-autodiff -zcc-recompute="policy=full" | FileCheck %s --check-prefix=FULL
// RUN: zcc-opt %s -zcc-autodiff -zcc-recompute="policy=op" | FileCheck %s --check-prefix=OP
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-recompute="policy=auto budget=108800" -zcc-test-print-memory-plan | FileCheck %s --check-prefix=AUTO
// RUN: not zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-recompute="policy=auto budget=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIGHT
// RUN: zcc-opt %s -zcc-autodiff -zcc-recompute="policy=full" -zcc-optimizer -zcc-zero="stage=3 ranks=2" | FileCheck %s --check-prefix=Z3FULL
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" | FileCheck %s --check-prefix=Z3
// RUN: not zcc-opt %s -zcc-autodiff -zcc-recompute="policy=most" 2>&1 | FileCheck %s --check-prefix=BAD

// Two residual MLP blocks (layernorm, up-projection, gelu, down-projection, residual add),
// 32 rows: what each policy recomputes in the backward pass.

// NONE-NOT: zc.recomputed
// NONE: zc.recompute = {flops = 0 : i64, plan = "none", policy = "none", values = 0 : i64}

// Selective: the cheap ops (layernorm, gelu: about one FLOP per byte) are recomputed
// from values kept anyway, the matmul outputs (32 FLOPs per byte) kept. The residual adds
// are cheap too but read a down-projection that would otherwise die after the forward
// pass: recomputing them would only keep that alive instead.
// The decisions per op kind: the norms and GELUs recomputed, the matmuls kept as costly, one
// residual add kept as a checkpoint (the second block's input), the other because it would keep
// its down-projection alive.
// SEL: zc.recompute = {decisions = {zc.add = {flops_per_byte = {{[^,]+}}, kept = 2 : i64, kept_because = {checkpoint = 1 : i64, input = 1 : i64}
// SEL-SAME: zc.gelu = {flops_per_byte = {{[^,]+}}, kept = 0 : i64, kept_because = {}, kept_bytes = 0 : i64, recomputed = 2 : i64
// SEL-SAME: zc.layernorm = {flops_per_byte = {{[^,]+}}, kept = 0 : i64, kept_because = {}, kept_bytes = 0 : i64, recomputed = 2 : i64
// SEL-SAME: zc.matmul = {flops_per_byte = {{[^,]+}}, kept = 3 : i64, kept_because = {costly = 3 : i64}
// SEL-SAME: flops = {{[0-9]+}} : i64, plan = "selective", policy = "selective", values = 4 : i64}
// SEL-LABEL: func.func @net_step
// SEL: %[[R0:.+]] = zc.add %arg0
// SEL: zc.backward_seed
// SEL: zc.gelu %{{.+}} {zc.recomputed}
// SEL: zc.layernorm %[[R0]], {{.+}} {zc.recomputed}
// SEL: zc.gelu %{{.+}} {zc.recomputed}
// SEL: zc.layernorm %arg0, {{.+}} {zc.recomputed}
// SEL-NOT: zc.recomputed
// SEL: return

// Op (torchtitan's op-level policy): selective's values and every second matmul of each span
// between checkpoints. The second block's down-projection (its span's second product) is
// recomputed, and with it the residual add that the loss's backward reads, which selective
// kept because recomputing it alone would have kept the down-projection alive; the
// up-projections (first products) stay kept.
// OP: plan = "op {{.*}}", policy = "op", values = 5 : i64
// OP-LABEL: func.func @net_step
// OP: zc.backward_seed
// OP: %[[G:.+]] = zc.gelu %{{.+}} {zc.recomputed}
// OP-NEXT: %[[D:.+]] = zc.matmul %[[G]], %{{.+}} {zc.recomputed}
// OP-NEXT: zc.add %{{.+}}, %[[D]] {zc.recomputed}
// OP-NOT: zc.matmul {{.*}}zc.recomputed
// OP: return

// Full: only the residual stream between the blocks (read by the second block's norm and
// its residual add) is kept; each block is recomputed from its input before its backward.
// FULL-LABEL: func.func @net_step
// FULL: %[[R0:.+]] = zc.add %arg0, %{{.+}} : tensor<32x16xf32>
// FULL: zc.backward_seed
// FULL-NEXT: %[[N1:.+]] = zc.layernorm %[[R0]], {{.+}} {zc.recomputed}
// FULL-NEXT: zc.matmul %[[N1]], {{.+}} {zc.recomputed}
// FULL-NEXT: zc.gelu {{.+}} {zc.recomputed}
// FULL-NEXT: zc.matmul {{.+}} {zc.recomputed}
// FULL-NEXT: zc.add %[[R0]], {{.+}} {zc.recomputed}
// FULL: zc.layernorm_grad
// FULL: zc.layernorm %arg0, {{.+}} {zc.recomputed}
// FULL-NEXT: zc.matmul {{.+}} {zc.recomputed}
// FULL-NEXT: zc.gelu {{.+}} {zc.recomputed}

// Auto: the fewest FLOPs whose real arena fits (exact search at this size): three cheap
// values (two norms, one gelu) free the peak; no matmul is recomputed.
// AUTO: arena 108800
// AUTO: zc.recompute = {decisions = {{.*}}, flops = 3136 : i64, plan = {{.*}}, policy = "auto", values = 3 : i64}
// AUTO-NOT: zc.matmul {{.*}}zc.recomputed
// TIGHT: error: zcc-recompute: no recompute plan fits the budget of 1 bytes per rank; the smallest arena any plan reaches is 100608 (full)

// ZeRO-3 without recomputation: 16 all-gathers (9 parameters gathered for forward, 7 again
// for backward: the norms' biases are not read there).
// Z3-LABEL: func.func @net_step
// Z3-COUNT-16: zc.gather_param
// Z3-NOT: zc.gather_param
// Z3: return

// ZeRO-3 with full recomputation: every block is recomputed, norms included, so the norms'
// biases are gathered for backward too (18); each recomputed op reads its layer's backward
// gather (one per parameter over all its backward readers), none is recomputed from a
// forward gather kept alive.
// Z3FULL-LABEL: func.func @net_step
// Z3FULL-COUNT-9: zc.gather_param
// Z3FULL: zc.backward_seed
// Z3FULL-NEXT: %[[G1:.+]] = zc.gather_param @g1
// Z3FULL-NEXT: %[[B1:.+]] = zc.gather_param @b1
// Z3FULL-NEXT: zc.layernorm %{{.+}}, %[[G1]], %[[B1]] {zc.recomputed}
// Z3FULL-NEXT: zc.release %[[B1]]
// Z3FULL-NEXT: %[[UP1:.+]] = zc.gather_param @up1
// Z3FULL-NEXT: zc.matmul %{{.+}}, %[[UP1]] {zc.recomputed}
// Z3FULL-COUNT-6: zc.gather_param
// Z3FULL-NOT: zc.gather_param
// Z3FULL: return

// BAD: policy must be none, selective, op, full, layer or auto, got 'most'

zc.param @g0 : tensor<16xf32> = #zc.ones
zc.param @b0 : tensor<16xf32> = #zc.zeros
zc.param @up0 : tensor<16x64xf32> = #zc.normal<std = 0.1>
zc.param @down0 : tensor<64x16xf32> = #zc.normal<std = 0.1>
zc.param @g1 : tensor<16xf32> = #zc.ones
zc.param @b1 : tensor<16xf32> = #zc.zeros
zc.param @up1 : tensor<16x64xf32> = #zc.normal<std = 0.1>
zc.param @down1 : tensor<64x16xf32> = #zc.normal<std = 0.1>
zc.param @head : tensor<16x5xf32> = #zc.normal<std = 0.1>
zc.forward @net(%x: tensor<32x16xf32>, %y: tensor<32xi32>) -> tensor<f32> {
  %g0 = zc.param_ref @g0 : tensor<16xf32>
  %b0 = zc.param_ref @b0 : tensor<16xf32>
  %n0 = zc.layernorm %x, %g0, %b0 : tensor<32x16xf32>, tensor<16xf32>
  %up0 = zc.param_ref @up0 : tensor<16x64xf32>
  %u0 = zc.matmul %n0, %up0 : tensor<32x16xf32>, tensor<16x64xf32> -> tensor<32x64xf32>
  %a0 = zc.gelu %u0 : tensor<32x64xf32>
  %down0 = zc.param_ref @down0 : tensor<64x16xf32>
  %o0 = zc.matmul %a0, %down0 : tensor<32x64xf32>, tensor<64x16xf32> -> tensor<32x16xf32>
  %r0 = zc.add %x, %o0 : tensor<32x16xf32>
  %g1 = zc.param_ref @g1 : tensor<16xf32>
  %b1 = zc.param_ref @b1 : tensor<16xf32>
  %n1 = zc.layernorm %r0, %g1, %b1 : tensor<32x16xf32>, tensor<16xf32>
  %up1 = zc.param_ref @up1 : tensor<16x64xf32>
  %u1 = zc.matmul %n1, %up1 : tensor<32x16xf32>, tensor<16x64xf32> -> tensor<32x64xf32>
  %a1 = zc.gelu %u1 : tensor<32x64xf32>
  %down1 = zc.param_ref @down1 : tensor<64x16xf32>
  %o1 = zc.matmul %a1, %down1 : tensor<32x64xf32>, tensor<64x16xf32> -> tensor<32x16xf32>
  %r1 = zc.add %r0, %o1 : tensor<32x16xf32>
  %head = zc.param_ref @head : tensor<16x5xf32>
  %l = zc.matmul %r1, %head : tensor<32x16xf32>, tensor<16x5xf32> -> tensor<32x5xf32>
  %loss = zc.cross_entropy %l, %y : tensor<32x5xf32>, tensor<32xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
