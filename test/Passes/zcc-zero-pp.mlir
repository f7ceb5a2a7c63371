// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=4" -zcc-bucket="bucket-mb=0 gather-bucket-mb=0" -zcc-zero-pp="quantized-weights=true weight-block=16" | FileCheck %s --check-prefix=QWZ
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=4" -zcc-bucket="bucket-mb=0 gather-bucket-mb=0" -zcc-zero-pp="hpz=2" | FileCheck %s --check-prefix=HPZ
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=4" -zcc-bucket="bucket-mb=0 gather-bucket-mb=0" -zcc-zero-pp="quantized-gradients=true ranks-per-node=2 gradient-block=8" | FileCheck %s --check-prefix=QGZ
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=4" -zcc-zero-pp="quantized-weights=true hpz=2 quantized-gradients=true ranks-per-node=2" -zcc-schedule | FileCheck %s --check-prefix=ALL
// RUN: not zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=2 ranks=4" -zcc-zero-pp="hpz=2" 2>&1 | FileCheck %s --check-prefix=STAGE2
// RUN: not zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=4" -zcc-zero-pp="quantized-gradients=true ranks-per-node=3" 2>&1 | FileCheck %s --check-prefix=NODES

// A two-layer model at ZeRO-3 over 4 ranks (2 ranks per node).

zc.param @w1 : tensor<4x3xf32> = #zc.normal<std = 0.1>
zc.param @big : tensor<3x64xf32> = #zc.normal<std = 0.1>
zc.forward @two(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %w1 = zc.param_ref @w1 : tensor<4x3xf32>
  %h = zc.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %a = zc.relu %h : tensor<2x3xf32>
  %big = zc.param_ref @big : tensor<3x64xf32>
  %l = zc.matmul %a, %big : tensor<2x3xf32>, tensor<3x64xf32> -> tensor<2x64xf32>
  %loss = zc.cross_entropy %l, %y : tensor<2x64xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// qwZ: every gather of @big's 48-element shard (forward and backward) sends one int8 row
// (3 scales of 16 values, then 48 levels), dequantized after the gather.
// QWZ-LABEL: func.func @two_step
// QWZ: %[[OWN:.+]] = zc.pack_shards [@big] : tensor<48xf32>
// QWZ: %[[ROW:.+]] = zc.reshape %[[OWN]] : tensor<48xf32> -> tensor<1x48xf32>
// QWZ: %[[Q:.+]] = zc.quantize %[[ROW]] block 16 bits 8 : tensor<1x48xf32> -> tensor<1x60xi8>
// QWZ: %[[QALL:.+]] = zc.all_gather %[[Q]] ranks 4 : tensor<1x60xi8> -> tensor<4x60xi8>
// QWZ: zc.dequantize %[[QALL]] block 16 bits 8 : tensor<4x60xi8> -> tensor<4x48xf32>
// QWZ-NEXT: zc.reshape %{{.+}} : tensor<4x48xf32> -> tensor<192xf32>
// QWZ: zc.unpack %{{.+}} ranks 4 : tensor<192xf32> -> tensor<3x64xf32>
// QWZ-NOT: zc.all_gather %{{.+}} : tensor<48xf32>

// hpZ: a secondary state of half of @big (2 of its 4 shards); the forward gather keeps it, the
// backward gathers it inside the group of 2.
// HPZ: zc.state @big.secondary : tensor<96xf32> of @big secondary
// HPZ-LABEL: func.func @two_step
// HPZ: %[[FWD:.+]] = zc.all_gather %{{.+}} ranks 4 : tensor<48xf32> -> tensor<192xf32>
// HPZ: zc.keep_secondary %[[FWD]] ranks 4 group 2 into [@big.secondary] : tensor<192xf32>
// HPZ: zc.backward_seed
// HPZ: %[[SEC:.+]] = zc.pack_secondary [@big.secondary] ranks 4 group 2 : tensor<96xf32>
// HPZ: zc.all_gather %[[SEC]] ranks 2 on hpz : tensor<96xf32> -> tensor<192xf32>

// qgZ: @big's gradient reduce-scatter as two int4 hops: chunks to their node place, an
// all-to-all in the node, an f32 sum, an all-to-all across the 2 nodes, an f32 sum, the average.
// QGZ-LABEL: func.func @two_step
// QGZ-NOT: zc.reduce_scatter
// QGZ: %[[X:.+]] = zc.reshape %{{.+}} : tensor<192xf32> -> tensor<2x2x48xf32>
// QGZ: %[[T:.+]] = zc.transpose %[[X]] [1, 0, 2] : tensor<2x2x48xf32> -> tensor<2x2x48xf32>
// QGZ: %[[Q1:.+]] = zc.quantize %[[T]] block 8 bits 4 : tensor<2x2x48xf32> -> tensor<2x2x48xi8>
// QGZ: %[[A1:.+]] = zc.all_to_all %[[Q1]] ranks 2 on node : tensor<2x2x48xi8>
// QGZ: %[[D1:.+]] = zc.dequantize %[[A1]] block 8 bits 4 : tensor<2x2x48xi8> -> tensor<2x2x48xf32>
// QGZ: %[[S1:.+]] = zc.reduce_sum %[[D1]] [0] : tensor<2x2x48xf32> -> tensor<2x48xf32>
// QGZ: %[[Q2:.+]] = zc.quantize %[[S1]] block 8 bits 4 : tensor<2x48xf32> -> tensor<2x48xi8>
// QGZ: %[[A2:.+]] = zc.all_to_all %[[Q2]] ranks 2 on cross : tensor<2x48xi8>
// QGZ: %[[D2:.+]] = zc.dequantize %[[A2]] block 8 bits 4 : tensor<2x48xi8> -> tensor<2x48xf32>
// QGZ: %[[S2:.+]] = zc.reduce_sum %[[D2]] [0] : tensor<2x48xf32> -> tensor<48xf32>
// QGZ: zc.scale %[[S2]] by 2.500000e-01 : tensor<48xf32>
// QGZ-NOT: zc.reduce_scatter

// Together, scheduled: the quantized forward gather is issued ahead as one group (pack, reshape,
// quantize, start), the backward one inside the hpZ group.
// ALL: zc.hierarchy = {hpz = 2 : i64, ranks_per_node = 2 : i64}
// ALL-LABEL: func.func @two_step
// ALL: zc.pack_shards [@big]
// ALL-NEXT: zc.reshape
// ALL-NEXT: zc.quantize
// ALL-NEXT: zc.all_gather_start %{{.+}} ranks 4 : tensor<1x{{[0-9]+}}xi8>
// ALL: zc.keep_secondary
// ALL: zc.pack_secondary [@big.secondary]
// ALL-NEXT: zc.all_gather_start %{{.+}} ranks 2 on hpz
// qgZ's hops on the stream: @big's first hop is issued as soon as its gradient is, and overlaps
// the backward's last product; the work after each hop waits at the end of the backward, every
// second hop issued before the first is waited on.
// ALL: zc.all_to_all_start %{{.+}} ranks 2 on node : tensor<2x2x28xi8>
// ALL: zc.matmul %arg0
// ALL: zc.all_to_all_start %{{.+}} ranks 2 on node : tensor<2x2x8xi8>
// ALL-NEXT: zc.wait
// ALL: zc.all_to_all_start %{{.+}} ranks 2 on cross : tensor<2x28xi8>
// ALL: zc.all_to_all_start %{{.+}} ranks 2 on cross : tensor<2x8xi8>
// ALL: zc.grad_accumulate @big
// ALL: zc.grad_accumulate @w1

// STAGE2: quantized weights and hpZ change ZeRO-3's parameter gathers
// NODES: 4 data-parallel ranks are not whole nodes of 3
