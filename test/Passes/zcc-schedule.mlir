// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-bucket="bucket-mb=0 gather-bucket-mb=0" -zcc-schedule | FileCheck %s --check-prefix=Z3
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-bucket="bucket-mb=0 gather-bucket-mb=0" -zcc-schedule="prefetch=0" | FileCheck %s --check-prefix=NOPREFETCH
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-bucket="bucket-mb=0 gather-bucket-mb=0" -zcc-schedule="max-live-mb=0.00001" | FileCheck %s --check-prefix=CAP
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-data-parallel="ranks=2" -zcc-bucket="bucket-mb=0" -zcc-schedule | FileCheck %s --check-prefix=DP
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-schedule -zcc-lower-to-llvm="ranks=2" | FileCheck %s --check-prefix=LLVM

// One collective per tensor (no buckets) on the two-layer model, to see each move.

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

// ZeRO-3, prefetch 1: each gather is issued right after the previous one arrived, so it
// is in flight while the layer before it computes; its wait stays where it is needed.
// Z3-LABEL: func.func @two_step
// Z3-NEXT: %[[O1:.+]] = zc.pack_shards [@w1]
// Z3-NEXT: %[[H1:.+]] = zc.all_gather_start %[[O1]] ranks 2 : tensor<6xf32> -> !zc.async<tensor<12xf32>>
// Z3-NEXT: zc.pack_shards [@b1]
// Z3-NEXT: %[[H2:.+]] = zc.all_gather_start
// Z3-NEXT: %[[G1:.+]] = zc.wait %[[H1]]
// Z3-NEXT: %[[W1:.+]] = zc.unpack %[[G1]] ranks 2 : tensor<12xf32> -> tensor<4x3xf32>
// Z3-NEXT: zc.matmul %{{.+}}, %[[W1]]
// Z3-NEXT: zc.release %[[W1]]
// Z3-NEXT: zc.pack_shards [@w2]
// Z3-NEXT: %[[H3:.+]] = zc.all_gather_start
// Z3-NEXT: zc.wait %[[H2]]
// Z3: zc.bias_add
// Z3: zc.relu
// Z3-NEXT: zc.pack_shards [@big]
// Z3-NEXT: zc.all_gather_start
// Z3-NEXT: zc.wait %[[H3]]
// Gradients: each reduce-scatter starts when its gradient is final; its wait and the
// accumulation move down, keeping at most two in flight, the last ones at the end.
// Z3: %[[DBIG:.+]] = zc.matmul {{.+}} transpose_lhs : tensor<2x5xf32>, tensor<2x64xf32> -> tensor<5x64xf32>
// Z3-NEXT: %[[R1:.+]] = zc.reduce_scatter_start avg %[[DBIG]] ranks 2
// Z3: zc.reduce_scatter_start avg
// Z3: %[[S1:.+]] = zc.wait %[[R1]]
// Z3-NEXT: zc.grad_accumulate @big, %[[S1]]
// Z3-NEXT: zc.reduce_scatter_start
// Z3: zc.grad_accumulate @w1
// Z3-NEXT: return

// NOPREFETCH-LABEL: func.func @two_step
// NOPREFETCH-NEXT: zc.pack_shards [@w1]
// NOPREFETCH-NEXT: %[[H:.+]] = zc.all_gather_start
// NOPREFETCH-NEXT: zc.wait %[[H]]

// A cap below one gather keeps every start where it was written.
// CAP-LABEL: func.func @two_step
// CAP-NEXT: zc.pack_shards [@w1]
// CAP-NEXT: %[[H:.+]] = zc.all_gather_start
// CAP-NEXT: zc.wait %[[H]]

// Stage 0: the update issues every all-reduce first, in order, then waits for each
// right before its optimizer step.
// DP-LABEL: func.func @two_update
// DP-NEXT: zc.grad_ref @w1
// DP-NEXT: %[[A1:.+]] = zc.all_reduce_start
// DP-NEXT: zc.grad_ref @b1
// DP-NEXT: zc.all_reduce_start
// DP-NEXT: zc.grad_ref @w2
// DP-NEXT: zc.all_reduce_start
// DP-NEXT: zc.grad_ref @big
// DP-NEXT: zc.all_reduce_start
// DP-NEXT: %[[G1:.+]] = zc.wait %[[A1]]
// DP-NEXT: zc.adamw @w1, %[[G1]]

// The runtime calls: a start returns a handle that zrt_wait takes.
// LLVM: %[[HANDLE:.+]] = llvm.call @zrt_all_gather_start(
// LLVM: llvm.call @zrt_wait(%[[HANDLE]])
// LLVM: llvm.call @zrt_reduce_scatter_padded_start(
