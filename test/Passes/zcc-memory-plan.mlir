// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-bucket="bucket-mb=0 gather-bucket-mb=0" -zcc-schedule -zcc-test-print-memory-plan -o /dev/null | FileCheck %s
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-bucket="bucket-mb=0 gather-bucket-mb=0" -zcc-schedule -zcc-memory-plan="budget=8128" -o /dev/null
// RUN: not zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-bucket="bucket-mb=0 gather-bucket-mb=0" -zcc-schedule -zcc-memory-plan="budget=8000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-memory-svg="output=%t.svg" -o /dev/null
// RUN: FileCheck %s --check-prefix=SVG < %t.svg

// The arena of the scheduled ZeRO-3 step: persistent shards first (64-byte aligned), then
// scratch buffers by first fit over their live ranges [first op, last op].

// CHECK: persistent 3328 (params 704, grads 704, optimizer_state 1408)
// CHECK-NEXT: param @w1 at 0
// CHECK: grad @w1 at 832
// CHECK: state @w1.exp_avg at 1664
// CHECK: @two_step: scratch 4800, peak at op 24 (zc.unpack)
// An async all-gather's send buffer lives until its wait (op 4), and the buffer it
// receives into from its start (op 1), not from the wait.
// CHECK-NEXT: [0, 4] zc.pack_shards 24 bytes at 3328 (communication_buffers)
// CHECK-NEXT: [2, 10] zc.pack_shards 8 bytes at 3456 (communication_buffers)
// CHECK-NEXT: [1, 5] zc.all_gather_start 48 bytes at 3392 (gathered_params)
// Disjoint live ranges share bytes: the unpacked @w1 reuses the send buffer's.
// CHECK-NEXT: [5, 7] zc.unpack 48 bytes at 3328 (gathered_params)
// CHECK-NEXT: [6, 12] zc.matmul 24 bytes at 3392 (activations)
// CHECK: [52, 56] zc.reduce_scatter_start 24 bytes at 3392 (communication_buffers)
// CHECK: @two_update: scratch 0
// CHECK: arena 8128

// The budget is checked against exactly that arena; over it, the error is at the peak
// and names the largest buffers live there.
// BUDGET: error: the memory plan needs 8128 bytes per rank (0.01 MiB), over the budget of 8000 bytes (0.01 MiB); it peaks here, in @two_step: persistent 3328 (params 704, grads 704, optimizer state 1408), scratch 4800
// BUDGET: note: live at the peak: 1280 bytes (gathered_params) from 'zc.all_gather_start'
// BUDGET: note: live at the peak: 40 bytes (activations) from 'zc.matmul'
// BUDGET-NEXT: %l1 = zc.matmul

// zcc-memory-svg draws the same plan: the arena in the title, one column per op of
// @two_step then @two_update, stacked by kind.
// SVG: Per-rank memory over one step: arena 0.01 MiB (persistent 0.00 MiB)
// SVG: >@two_step</text>
// SVG: >@two_update</text>
// SVG: >activations</text>

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
