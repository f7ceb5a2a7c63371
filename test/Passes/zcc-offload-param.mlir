
// ZeRO-3 with the parameter shards on NVMe: each pack of a gather group reads its shards from a
// parameter slot (ids after the update's), filled param-slots - 1 = 1 gathers ahead; the update
// swaps each chunk's shard after its states.
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-bucket="bucket-mb=0 gather-bucket-mb=0" -zcc-schedule -zcc-offload="optimizer=nvme param=nvme slots=2 param-slots=2" | FileCheck %s --check-prefix=PARAM
// RUN: not zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2" -zcc-offload="optimizer=nvme param=nvme" 2>&1 | FileCheck %s --check-prefix=UNPACKED
// RUN: not zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-offload="optimizer=nvme param=nvme" 2>&1 | FileCheck %s --check-prefix=WHOLE

// PARAM: module attributes {zc.offload = {nvme_path = "", param_slot_bytes = 8192 : i64, param_slots = 2 : i64, slot_bytes = 24576 : i64, slots = 2 : i64, tier = "nvme"}}
// PARAM: zc.param @w : tensor<64x48xf32> {{.*}}zc.tier = "nvme"
// PARAM: func.func @f_step
// PARAM-NEXT: zc.swap_in @w[0, 1536] slot 2 at 0
// PARAM-NEXT: zc.swap_wait slot 2
// PARAM-NEXT: zc.pack_shards [@w] {swap_slot = 2 : i64}
// PARAM-NEXT: zc.swap_in @b[0, 24] slot 3 at 0
// PARAM: zc.swap_wait slot 3
// PARAM-NEXT: zc.pack_shards [@b] {swap_slot = 3 : i64}
// PARAM-NEXT: zc.all_gather_start
// PARAM-NOT: zc.swap_in
// PARAM: return
// PARAM: func.func @f_update
// PARAM: zc.swap_in @w.exp_avg[0, 1536] slot 0 at 0
// PARAM-NEXT: zc.swap_in @w.exp_avg_sq[0, 1536] slot 0 at 8192
// PARAM-NEXT: zc.swap_in @w[0, 1536] slot 0 at 16384
// PARAM-NEXT: zc.swap_wait slot 0
// PARAM-NEXT: zc.adamw @w, {{.*}}chunk = array<i64: 0, 1536>{{.*}}swap_slot = 0
// PARAM-NEXT: zc.swap_out @w.exp_avg[0, 1536] slot 0 at 0
// PARAM-NEXT: zc.swap_out @w.exp_avg_sq[0, 1536] slot 0 at 8192
// PARAM-NEXT: zc.swap_out @w[0, 1536] slot 0 at 16384

// A gather not expanded into a pack (no zcc-schedule) would read the shard from the arena: refused.
// UNPACKED: error: 'zc.gather_param' op reads parameter @w whose shard --offload-param moves off the arena
// Without ZeRO-3 no shard exists to move.
// WHOLE: error: zcc-offload: --offload-param moves ZeRO-3's parameter shards, and no parameter is partitioned

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
