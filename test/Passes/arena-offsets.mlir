// Arena offsets of 256 MiB and more: a GEP's constant indices (LLVM::GEPArg) keep only 29 signed
// bits, so the lowering passes every offset as an i64 operand. Here the 4 GiB parameter's
// gradient sits at 2^32 and its AdamW moments past 8 GiB; none may wrap negative.
// RUN: zcc-opt %s -zcc-pipeline="world-size=1" | FileCheck %s
// RUN: zcc-opt %s -zcc-pipeline="world-size=1" | not grep -E "llvm.mlir.constant\(-[0-9]+ : i64\)"

zc.param @w : tensor<32768x32768xf32> = #zc.zeros
zc.forward @f(%x: tensor<4x32768xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<32768x32768xf32>
  %h = zc.matmul %x, %w : tensor<4x32768xf32>, tensor<32768x32768xf32> -> tensor<4x32768xf32>
  %l = zc.cross_entropy %h, %y : tensor<4x32768xf32>, tensor<4xi32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
// CHECK-LABEL: llvm.func @zcc_step
// CHECK-DAG: %[[GRAD_AT:.+]] = llvm.mlir.constant(4294967296 : i64) : i64
// CHECK-DAG: %[[GRAD:.+]] = llvm.getelementptr %{{.+}}[%[[GRAD_AT]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-LABEL: llvm.func @zcc_update
// CHECK: llvm.call @zrt_adamw
// CHECK: @zcc_model_json({{.*}}\22offset\22:8589934592
