// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-bucket="bucket-mb=0.0002 gather-bucket-mb=0.0002" | FileCheck %s --check-prefix=Z3
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-optimizer="micro-batches=2" -zcc-zero="stage=1 ranks=2 micro-batches=2" -zcc-bucket="bucket-mb=0.0002 gather-bucket-mb=0.0002" | FileCheck %s --check-prefix=Z1
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-bucket="bucket-mb=0 gather-bucket-mb=0" | FileCheck %s --check-prefix=OFF
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-optimizer -zcc-data-parallel="ranks=2" -zcc-bucket | FileCheck %s --check-prefix=DP
// RUN: not zcc-opt %s -split-input-file -zcc-autodiff -zcc-optimizer -zcc-data-parallel="ranks=2" -zcc-bucket="cost-model=%t.missing" 2>&1 | FileCheck %s --check-prefix=BADFILE

// Buckets of 0.0002 MiB (209 bytes) on a two-layer model with a 1280-byte @big: the three
// tiny parameters share one bucket, @big (larger than a bucket) stays alone.

zc.param @w1 : tensor<4x3xf32> = #zc.normal<std = 0.1>
zc.param @b1 : tensor<3xf32> = #zc.zeros
zc.param @w2 : tensor<3x5xf32> = #zc.normal<std = 0.1>
zc.param @big : tensor<5x64xf32> = #zc.normal<std = 0.1>
zc.forward @two(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %w1 = zc.param_ref @w1 : tensor<4x3xf32>
  %b1 = zc.param_ref @b1 : tensor<3xf32>
  %h = zc.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %hb = zc.bias_add %h, %b1 : tensor<2x3xf32>, tensor<3xf32>
  %a = zc.relu %hb : tensor<2x3xf32>
  %w2 = zc.param_ref @w2 : tensor<3x5xf32>
  %l1 = zc.matmul %a, %w2 : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x5xf32>
  %big = zc.param_ref @big : tensor<5x64xf32>
  %l2 = zc.matmul %l1, %big : tensor<2x5xf32>, tensor<5x64xf32> -> tensor<2x64xf32>
  %loss = zc.cross_entropy %l2, %y : tensor<2x64xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// ZeRO-3: one all-gather for the three small parameters, where the first was gathered;
// every parameter keeps its release right after its last use.
// Z3-LABEL: func.func @two_step
// Z3-NEXT: %[[OWN:.+]] = zc.pack_shards [@w1, @b1, @w2] : tensor<16xf32>
// Z3-NEXT: %[[ALL:.+]] = zc.all_gather %[[OWN]] ranks 2 : tensor<16xf32> -> tensor<32xf32>
// Z3-NEXT: %[[P:.+]]:3 = zc.unpack %[[ALL]] ranks 2 : tensor<32xf32> -> tensor<4x3xf32>, tensor<3xf32>, tensor<3x5xf32>
// Z3-NEXT: zc.matmul %{{.+}}, %[[P]]#0
// Z3-NEXT: zc.release %[[P]]#0
// Z3-NEXT: zc.bias_add %{{.+}}, %[[P]]#1
// Z3-NEXT: zc.release %[[P]]#1
// Z3-NEXT: zc.relu
// Z3-NEXT: zc.matmul %{{.+}}, %[[P]]#2
// Z3-NEXT: zc.release %[[P]]#2
// @big is larger than a bucket: gathered alone, its gradient reduce-scattered alone.
// Z3-NEXT: zc.gather_param @big
// Z3: zc.gather_param @big
// Z3: %[[DBIG:.+]] = zc.reduce_scatter avg %{{.+}} ranks 2 : tensor<5x64xf32> -> tensor<160xf32>
// Z3-NEXT: zc.grad_accumulate @big, %[[DBIG]] overwrite
// The small gradients: one reduce-scatter once the last of them (@w1's) is final, rank r
// receiving its shard of each; the accumulations move after it.
// Z3: %[[DW1:.+]] = zc.matmul %{{.+}} transpose_lhs : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
// Z3-NEXT: %[[B:.+]] = zc.pack %{{.+}}, %{{.+}}, %[[DW1]] ranks 2 : tensor<3x5xf32>, tensor<3xf32>, tensor<4x3xf32> -> tensor<32xf32>
// Z3-NEXT: %[[RS:.+]] = zc.reduce_scatter avg %[[B]] ranks 2 : tensor<32xf32> -> tensor<16xf32>
// Z3-NEXT: %[[S:.+]]:3 = zc.unpack %[[RS]] ranks 1 : tensor<16xf32> -> tensor<8xf32>, tensor<2xf32>, tensor<6xf32>
// Z3-NEXT: zc.grad_accumulate @w2, %[[S]]#0 overwrite : tensor<8xf32>
// Z3-NEXT: zc.grad_accumulate @b1, %[[S]]#1 overwrite : tensor<2xf32>
// Z3-NEXT: zc.grad_accumulate @w1, %[[S]]#2 overwrite : tensor<6xf32>
// Z3-NEXT: return

// ZeRO-1 with two micro-batches: the update reduce-scatters the three small gradients in one call, runs each
// optimizer step, then refreshes the three parameters with one all-gather; the
// gradients are cleared after it (their order with the updates is kept).
// Z1-LABEL: func.func @two_update
// Z1: %[[B:.+]] = zc.pack %{{.+}}, %{{.+}}, %{{.+}} ranks 2 : tensor<4x3xf32>, tensor<3xf32>, tensor<3x5xf32> -> tensor<32xf32>
// Z1-NEXT: %[[RS:.+]] = zc.reduce_scatter avg %[[B]] ranks 2 : tensor<32xf32> -> tensor<16xf32>
// Z1-NEXT: %[[S:.+]]:3 = zc.unpack %[[RS]] ranks 1
// Z1-NEXT: %[[M0:.+]] = zc.scale %[[S]]#0
// Z1-NEXT: zc.adamw @w1, %[[M0]]
// Z1-NEXT: %[[M1:.+]] = zc.scale %[[S]]#1
// Z1-NEXT: zc.adamw @b1, %[[M1]]
// Z1-NEXT: %[[M2:.+]] = zc.scale %[[S]]#2
// Z1-NEXT: zc.adamw @w2, %[[M2]]
// Z1-NEXT: %[[OWN:.+]] = zc.pack_shards [@w1, @b1, @w2] : tensor<16xf32>
// Z1-NEXT: %[[ALL:.+]] = zc.all_gather %[[OWN]] ranks 2 : tensor<16xf32> -> tensor<32xf32>
// Z1-NEXT: zc.unpack_params %[[ALL]] ranks 2 into [@w1, @b1, @w2] : tensor<32xf32>
// Z1-NEXT: zc.grad_zero @w1
// Z1-NEXT: zc.grad_zero @b1
// Z1-NEXT: zc.grad_zero @w2
// Z1: zc.reduce_scatter avg %{{.+}} ranks 2 : tensor<5x64xf32> -> tensor<160xf32>
// Z1: zc.all_gather_param @big

// OFF-NOT: zc.pack
// OFF-NOT: zc.unpack

// Stage 0, default (cost-model) bucket: all four gradients in one all-reduce.
// DP-LABEL: func.func @two_update
// DP: %[[B:.+]] = zc.pack %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} ranks 1 : tensor<4x3xf32>, tensor<3xf32>, tensor<3x5xf32>, tensor<5x64xf32> -> tensor<350xf32>
// DP-NEXT: %[[AR:.+]] = zc.all_reduce avg %[[B]] ranks 2 : tensor<350xf32>
// DP-NEXT: zc.unpack %[[AR]] ranks 1 : tensor<350xf32> -> tensor<4x3xf32>, tensor<3xf32>, tensor<3x5xf32>, tensor<5x64xf32>
// DP-NOT: zc.all_reduce

// BADFILE: error: zcc-bucket: cannot read cost model

// -----

// Mixed element types never share a bucket: the bf16 gradient is reduced on its own.
zc.param @w : tensor<4x3xf32> = #zc.normal<std = 0.1>
zc.param @s : tensor<3xbf16> = #zc.ones
zc.param @b : tensor<3xf32> = #zc.zeros
zc.forward @mixed(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4x3xf32>
  %h = zc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %s = zc.param_ref @s : tensor<3xbf16>
  %sf = zc.cast %s : tensor<3xbf16> -> tensor<3xf32>
  %hs = zc.bias_add %h, %sf : tensor<2x3xf32>, tensor<3xf32>
  %b = zc.param_ref @b : tensor<3xf32>
  %hb = zc.bias_add %hs, %b : tensor<2x3xf32>, tensor<3xf32>
  %loss = zc.cross_entropy %hb, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
// DP-LABEL: func.func @mixed_update
// DP: zc.all_reduce avg %{{.+}} ranks 2 : tensor<3xbf16>
// DP: %[[B:.+]] = zc.pack %{{.+}}, %{{.+}} ranks 1 : tensor<4x3xf32>, tensor<3xf32> -> tensor<15xf32>
// DP-NEXT: zc.all_reduce avg %[[B]] ranks 2 : tensor<15xf32>
// Z3-LABEL: func.func @mixed_step
// Z3: zc.reduce_scatter avg %{{.+}} ranks 2 : tensor<3xbf16> -> tensor<2xbf16>
// Z3: %[[B:.+]] = zc.pack {{.+}} ranks 2 : tensor<3xf32>, tensor<4x3xf32> -> tensor<16xf32>
// Z3-NEXT: zc.reduce_scatter avg %[[B]] ranks 2 : tensor<16xf32> -> tensor<8xf32>
