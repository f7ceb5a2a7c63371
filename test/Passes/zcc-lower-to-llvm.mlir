// RUN: zcc-opt %s -zcc-pipeline="world-size=2" | FileCheck %s
// RUN: zcc-opt %s -zcc-autodiff -zcc-optimizer -zcc-lower-to-llvm | FileCheck %s --check-prefix=ONE-RANK

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
// The parameter at offset 0, its gradient at 64, scratch after the AdamW state.
// CHECK: %[[W:.+]] = llvm.getelementptr %[[ARENA]][0] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: %[[H:.+]] = llvm.getelementptr %[[ARENA]][256]
// CHECK: llvm.call @zrt_matmul(%{{.+}}, %[[X]], %[[W]], %[[H]], {{.+}}) : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i32, i32, i32) -> ()
// CHECK: llvm.call @zrt_cross_entropy
// CHECK: llvm.call @zrt_cross_entropy_grad
// CHECK: %[[G:.+]] = llvm.getelementptr %[[ARENA]][64]
// CHECK: llvm.call @zrt_add(%{{.+}}, %[[G]], %{{.+}}, %[[G]], %{{.+}})
// CHECK: %[[LOSS:.+]] = llvm.load %{{.+}} : !llvm.ptr -> f32
// CHECK: llvm.return %[[LOSS]] : f32
// CHECK-LABEL: llvm.func @zcc_update(%{{.+}}: !llvm.ptr, %{{.+}}: f64, %{{.+}}: i64)
// CHECK: llvm.call @zrt_all_reduce
// CHECK: llvm.call @zrt_adamw
// CHECK: llvm.call @zrt_fill_zero
// CHECK: llvm.mlir.global external constant @zcc_model_json("{{.*}}\22world_size\22:2
// CHECK-NOT: zc.
// Without zcc-data-parallel there is nothing to communicate.
// ONE-RANK-LABEL: llvm.func @zcc_update
// ONE-RANK-NOT: zrt_all_reduce
// ONE-RANK: llvm.call @zrt_adamw
