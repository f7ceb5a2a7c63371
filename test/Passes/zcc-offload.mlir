// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-optimizer -zcc-offload="optimizer=nvme slots=2 slot-bytes=8192 nvme-path=/scratch" -verify-diagnostics | FileCheck %s
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-optimizer -zcc-offload="optimizer=host" | FileCheck %s --check-prefix=HOST
// RUN: zcc-opt %s -split-input-file -zcc-autodiff -zcc-optimizer="kind=sgd" -zcc-offload="optimizer=nvme slots=3 slot-bytes=4096" | FileCheck %s --check-prefix=SGD
// RUN: not zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-offload="optimizer=nvme slot-bytes=4096" 2>&1 | FileCheck %s --check-prefix=SMALL

// Tests the swap schedule: @w's 3072 AdamW elements in chunks of 1024 (two states of 4 KiB fill an
// 8 KiB slot), @b's 48 in one; two slots, so each chunk's states are read one chunk ahead, waited
// for right before its update, written back right after; a slot is refilled after its write had
// one update to finish; every slot is waited for before the update returns.

module {
  zc.param @w : tensor<64x48xf32> = #zc.normal<std = 0.1>
  zc.param @b : tensor<48xf32> = #zc.zeros
  zc.forward @f(%x: tensor<2x64xf32>, %y: tensor<2xi32>) -> tensor<f32> {
    %w = zc.param_ref @w : tensor<64x48xf32>
    %b = zc.param_ref @b : tensor<48xf32>
    %h = zc.matmul %x, %w : tensor<2x64xf32>, tensor<64x48xf32> -> tensor<2x48xf32>
    %hb = zc.bias_add %h, %b : tensor<2x48xf32>, tensor<48xf32>
    %l = zc.cross_entropy %hb, %y : tensor<2x48xf32>, tensor<2xi32> -> tensor<f32>
    zc.return %l : tensor<f32>
  }
}
// CHECK: module attributes {zc.offload = {nvme_path = "/scratch", slot_bytes = 8192 : i64, slots = 2 : i64, tier = "nvme"}
// CHECK: zc.state @w.exp_avg : tensor<64x48xf32> of @w {zc.tier = "nvme"}
// CHECK: zc.state @b.exp_avg_sq : tensor<48xf32> of @b {zc.tier = "nvme"}
// CHECK: func.func @f_update
// CHECK-NEXT: %[[GW:.+]] = zc.grad_ref @w
// CHECK-NEXT: zc.swap_in @w.exp_avg[0, 1024] slot 0 at 0
// CHECK-NEXT: zc.swap_in @w.exp_avg_sq[0, 1024] slot 0 at 4096
// CHECK-NEXT: zc.swap_wait slot 0
// CHECK-NEXT: zc.adamw @w, %[[GW]] state(@w.exp_avg, @w.exp_avg_sq) {{.*}}chunk = array<i64: 0, 1024>{{.*}}swap_slot = 0
// CHECK-NEXT: zc.swap_out @w.exp_avg[0, 1024] slot 0 at 0
// CHECK-NEXT: zc.swap_out @w.exp_avg_sq[0, 1024] slot 0 at 4096
// CHECK-NEXT: zc.swap_in @w.exp_avg[1024, 1024] slot 1 at 0
// CHECK-NEXT: zc.swap_in @w.exp_avg_sq[1024, 1024] slot 1 at 4096
// CHECK-NEXT: zc.swap_wait slot 1
// CHECK-NEXT: zc.adamw @w, %[[GW]] {{.*}}chunk = array<i64: 1024, 1024>{{.*}}swap_slot = 1
// CHECK-NEXT: zc.swap_out @w.exp_avg[1024, 1024] slot 1 at 0
// CHECK-NEXT: zc.swap_out @w.exp_avg_sq[1024, 1024] slot 1 at 4096
// CHECK-NEXT: zc.swap_wait slot 0
// CHECK-NEXT: zc.swap_in @w.exp_avg[2048, 1024] slot 0 at 0
// CHECK-NEXT: zc.swap_in @w.exp_avg_sq[2048, 1024] slot 0 at 4096
// CHECK-NEXT: zc.swap_wait slot 0
// CHECK-NEXT: zc.adamw @w, %[[GW]] {{.*}}chunk = array<i64: 2048, 1024>{{.*}}swap_slot = 0
// CHECK-NEXT: zc.swap_out @w.exp_avg[2048, 1024] slot 0 at 0
// CHECK-NEXT: zc.swap_out @w.exp_avg_sq[2048, 1024] slot 0 at 4096
// The read-ahead names the next parameter's states before that parameter's gradient is read.
// CHECK-NEXT: zc.swap_wait slot 1
// CHECK-NEXT: zc.swap_in @b.exp_avg[0, 48] slot 1 at 0
// CHECK-NEXT: zc.swap_in @b.exp_avg_sq[0, 48] slot 1 at 4096
// CHECK-NEXT: %[[GB:.+]] = zc.grad_ref @b
// CHECK-NEXT: zc.swap_wait slot 1
// CHECK-NEXT: zc.adamw @b, %[[GB]] {{.*}}chunk = array<i64: 0, 48>{{.*}}swap_slot = 1
// CHECK-NEXT: zc.swap_out @b.exp_avg[0, 48] slot 1 at 0
// CHECK-NEXT: zc.swap_out @b.exp_avg_sq[0, 48] slot 1 at 4096
// CHECK-NEXT: zc.swap_wait slot 0
// CHECK-NEXT: zc.swap_wait slot 1
// CHECK-NEXT: return

// In host memory: the states move, the update stays whole and in place.
// HOST: module attributes {zc.offload = {tier = "host"}}
// HOST: zc.state @w.exp_avg : tensor<64x48xf32> of @w {zc.tier = "host"}
// HOST-NOT: zc.swap
// HOST: zc.adamw @w, %{{.+}} state(@w.exp_avg, @w.exp_avg_sq) lr %{{.+}} step %{{.+}} {beta1
// HOST-NOT: chunk

// The sgd run has one state a chunk, 1024 values in a 4 KiB slot; three slots read two chunks ahead.
// SGD: zc.offload = {nvme_path = "", slot_bytes = 4096 : i64, slots = 3 : i64, tier = "nvme"}
// SGD: func.func @f_update
// SGD-NEXT: zc.grad_ref @w
// SGD-NEXT: zc.swap_in @w.momentum[0, 1024] slot 0 at 0
// SGD-NEXT: zc.swap_in @w.momentum[1024, 1024] slot 1 at 0
// SGD-NEXT: zc.swap_wait slot 0
// SGD-NEXT: zc.sgd @w, %{{.+}} state(@w.momentum) {{.*}}chunk = array<i64: 0, 1024>{{.*}}swap_slot = 0
// SGD-NEXT: zc.swap_out @w.momentum[0, 1024] slot 0 at 0
// SGD-NEXT: zc.swap_in @w.momentum[2048, 1024] slot 2 at 0
// SGD-NEXT: zc.swap_wait slot 1
// SGD: zc.swap_out @w.momentum[1024, 1024] slot 1 at 0
// SGD-NEXT: zc.swap_wait slot 0
// SGD-NEXT: zc.swap_in @b.momentum[0, 48] slot 0 at 0

// A slot smaller than one block of each state is refused.
// SMALL: error: 'zc.adamw' op zcc-offload: a swap slot of 4096 bytes cannot hold 1024 elements of its 2 swapped tensors

