// RUN: zcc-opt %s -zcc-pipeline="world-size=2" | FileCheck %s
// RUN: zcc-opt %s -zcc-pipeline="world-size=2 grad-accum=2" | FileCheck %s --check-prefix=ACCUM
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-lower-to-llvm | FileCheck %s --check-prefix=ONE-RANK
// RUN: zcc-opt %s -zcc-mixed-precision -zcc-autodiff -zcc-optimizer -zcc-lower-to-llvm | FileCheck %s --check-prefix=BF16
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-grad-clip="max-norm=1.0" -zcc-lower-to-llvm="pp=2 symbol-suffix=_s1" | FileCheck %s --check-prefix=STAGED

// Tests the lowering: the step and update entry points, runtime calls on arena
// offsets (persistent parameters, gradients and state first, then scratch), the
// all-reduce of stage 0, and the model description for main().

zc.param @w : tensor<4x3xf32> = #zc.normal<std = 0.1>
zc.forward @f(%x: tensor<4x4xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<4x3xf32>
  %h = zc.matmul %x, %w : tensor<4x4xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %l = zc.cross_entropy %h, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// CHECK: llvm.func @zcc_step(%[[ARENA:.+]]: !llvm.ptr, %[[INPUTS:.+]]: !llvm.ptr) -> f32
// CHECK: %[[X:.+]] = llvm.load %{{.+}} : !llvm.ptr -> !llvm.ptr
// The parameter at offset 0, its gradient at 64, scratch after the AdamW state. Offsets are
// i64 operands: a GEP's constant indices hold 29 bits (arena-offsets.mlir).
// CHECK: %[[W_AT:.+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: %[[W:.+]] = llvm.getelementptr %[[ARENA]][%[[W_AT]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[H_AT:.+]] = llvm.mlir.constant(256 : i64) : i64
// CHECK: %[[H:.+]] = llvm.getelementptr %[[ARENA]][%[[H_AT]]]
// CHECK: llvm.call @zrt_matmul(%{{.+}}, %[[X]], %[[W]], %[[H]], {{.+}}) : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i32, i32, i32) -> ()
// CHECK: llvm.call @zrt_cross_entropy
// CHECK: llvm.call @zrt_cross_entropy_grad
// One micro-batch a step: the weight-gradient matmul writes the gradient buffer itself (no
// zrt_add into it, nothing cleared after the update).
// CHECK: %[[G_AT:.+]] = llvm.mlir.constant(64 : i64) : i64
// CHECK: %[[G:.+]] = llvm.getelementptr %[[ARENA]][%[[G_AT]]]
// CHECK: llvm.call @zrt_matmul(%{{.+}}, %[[X]], %{{.+}}, %[[G]], {{.+}})
// CHECK-NOT: zrt_add
// CHECK-NOT: zrt_copy
// The loss is read through the runtime (the CUDA backend's is in device memory).
// CHECK: %[[LOSS64:.+]] = llvm.call @zrt_read_loss(%{{.+}}) : (!llvm.ptr) -> f64
// CHECK: %[[LOSS:.+]] = llvm.fptrunc %[[LOSS64]] : f64 to f32
// CHECK: llvm.return %[[LOSS]] : f32
// CHECK-LABEL: llvm.func @zcc_update(%{{.+}}: !llvm.ptr, %{{.+}}: f64, %{{.+}}: i64)
// CHECK: llvm.call @zrt_all_reduce
// CHECK: llvm.call @zrt_adamw
// CHECK-NOT: llvm.call @zrt_fill_zero
// CHECK: llvm.mlir.global external constant @zcc_model_json("{{.*}}\22world_size\22:2
// CHECK-NOT: zc.
// Without zcc-data-parallel there is nothing to communicate.
// A tensor constant (the loss gradient's seed, 1.0) is an executable global the kernels read
// through zrt_constant: a CUDA kernel cannot read host memory (the CUDA backend's device copy).
// ONE-RANK: llvm.mlir.global internal constant @[[$SEED:zcc_const_[0-9]+]](dense<1.000000e+00> : tensor<1xf32>)
// ONE-RANK-LABEL: llvm.func @zcc_step
// ONE-RANK: %[[SEED_HOST:.+]] = llvm.mlir.addressof @[[$SEED]]
// ONE-RANK: %[[SEED_DEV:.+]] = llvm.call @zrt_constant(%[[SEED_HOST]], %{{.+}})
// ONE-RANK: llvm.call @zrt_cross_entropy_grad(%{{.+}}, %[[SEED_DEV]],
// ONE-RANK-NOT: llvm.mlir.addressof @[[$SEED]]
// ONE-RANK-LABEL: llvm.func @zcc_update
// ONE-RANK-NOT: zrt_all_reduce
// ONE-RANK: llvm.call @zrt_adamw

// Mixed precision: the bf16 parameter (24 bytes at 0), its bf16 gradient at 64, then the
// fp32 master, exp_avg and exp_avg_sq. AdamW updates the master (first argument) from the
// bf16 gradient (dtype 1) and rounds it into the parameter (sixth argument); the model
// description tells main() where the master is, to initialize and export it.
// BF16-LABEL: llvm.func @zcc_update
// BF16-DAG: %[[GRAD_AT:.+]] = llvm.mlir.constant(64 : i64) : i64
// BF16-DAG: %[[GRAD:.+]] = llvm.getelementptr %{{.+}}[%[[GRAD_AT]]]
// BF16-DAG: %[[BF16:.+]] = llvm.mlir.constant(1 : i32) : i32
// BF16-DAG: %[[PARAM_AT:.+]] = llvm.mlir.constant(0 : i64) : i64
// BF16-DAG: %[[PARAM:.+]] = llvm.getelementptr %{{.+}}[%[[PARAM_AT]]]
// BF16-DAG: %[[MASTER_AT:.+]] = llvm.mlir.constant(128 : i64) : i64
// BF16-DAG: %[[MASTER:.+]] = llvm.getelementptr %{{.+}}[%[[MASTER_AT]]]
// BF16: llvm.call @zrt_adamw(%[[MASTER]], %[[BF16]], %[[GRAD]], %{{.+}}, %{{.+}}, %[[PARAM]], {{.+}})
// BF16: @zcc_model_json({{.*}}\22dtype\22:\22bf16\22,{{.*}}\22master_offset\22:128,\22master_tier\22:0,\22name\22:\22w\22
// BF16-SAME: {\22bytes\22:48,\22name\22:\22w.master\22,\22offset\22:128,\22param\22:\22w\22,\22role\22:\22master\22,\22tier\22:0}

// Two micro-batches a step: each adds its gradient into the buffer, which the update clears.
// ACCUM-LABEL: llvm.func @zcc_step
// ACCUM: %[[G_AT:.+]] = llvm.mlir.constant(64 : i64) : i64
// ACCUM: %[[G:.+]] = llvm.getelementptr %{{.+}}[%[[G_AT]]]
// ACCUM: llvm.call @zrt_add(%{{.+}}, %[[G]], %{{.+}}, %[[G]], %{{.+}})
// ACCUM-LABEL: llvm.func @zcc_update
// ACCUM: llvm.call @zrt_adamw
// ACCUM: llvm.call @zrt_fill_zero

// A pipeline stage's update in two halves, split at the gradient norm: the rank's part of the
// norm, then (after train.bin's zrt_grad_norm_reduce) the norm and the optimizer; no whole update.
// STAGED-LABEL: llvm.func @zcc_update_reduce_s1(%{{.+}}: !llvm.ptr, %{{.+}}: f64, %{{.+}}: i64)
// STAGED-NOT: zrt_adamw
// STAGED: llvm.call @zrt_grad_norm_add
// STAGED-NOT: zrt_adamw
// STAGED: llvm.return
// STAGED-LABEL: llvm.func @zcc_update_apply_s1(%{{.+}}: !llvm.ptr, %{{.+}}: f64, %{{.+}}: i64)
// STAGED-NOT: zrt_grad_norm_add
// STAGED: llvm.call @zrt_grad_norm_finish
// STAGED: llvm.call @zrt_adamw
// STAGED-NOT: llvm.func @zcc_update_s1
