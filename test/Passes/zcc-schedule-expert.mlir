// RUN: zcc-opt %s -zcc-expert-parallel="ranks=2" -zcc-autodiff -zcc-schedule | FileCheck %s
// RUN: zcc-opt %s -zcc-expert-parallel="ranks=2" -zcc-autodiff -zcc-optimizer -zcc-data-parallel="ranks=2" -zcc-schedule -zcc-lower-to-llvm="ranks=2" | FileCheck %s --check-prefix=LLVM

// Expert parallelism's exchanges overlapped with the compute that does not read their rows: a
// Mixtral block over 2 expert-parallel ranks plus a shared SwiGLU expert (DeepSeek's) written after
// the routed experts, as DeepseekV3MoE adds it. zcc-schedule starts each exchange where the blocking
// one was and pulls the shared expert (and, in the backward, its gradient) up between the start and
// the wait: the rows fly while it computes. Megatron-Core asks for this with
// --moe-shared-expert-overlap; here it follows from the graph. The experts' weight gradients run
// during the backward's return exchange.

zc.param @router : tensor<8x4xf32> = #zc.normal<std = 0.02>
zc.param @gate : tensor<4x8x12xf32> = #zc.normal<std = 0.02>
zc.param @up : tensor<4x8x12xf32> = #zc.normal<std = 0.02>
zc.param @down : tensor<4x12x8xf32> = #zc.normal<std = 0.02>
zc.param @shared_up : tensor<8x16xf32> = #zc.normal<std = 0.02>
zc.param @shared_down : tensor<16x8xf32> = #zc.normal<std = 0.02>
zc.forward @moe(%x: tensor<2x16x8xf32>, %t: tensor<2x16x8xf32>) -> tensor<f32> {
  %r = zc.param_ref @router : tensor<8x4xf32>
  %logits = zc.matmul %x, %r : tensor<2x16x8xf32>, tensor<8x4xf32> -> tensor<2x16x4xf32>
  %w, %e, %rows, %offs = zc.moe_route %logits top_k 2 normalize : tensor<2x16x4xf32> -> tensor<2x16x2xf32>, tensor<2x16x2xi32>, tensor<2x16x2xi32>, tensor<5xi32>
  %xs = zc.moe_dispatch %x, %rows : tensor<2x16x8xf32>, tensor<2x16x2xi32> -> tensor<64x8xf32>
  %wg = zc.param_ref @gate : tensor<4x8x12xf32>
  %g = zc.grouped_matmul %xs, %wg, %offs : tensor<64x8xf32>, tensor<4x8x12xf32>, tensor<5xi32> -> tensor<64x12xf32>
  %wu = zc.param_ref @up : tensor<4x8x12xf32>
  %u = zc.grouped_matmul %xs, %wu, %offs : tensor<64x8xf32>, tensor<4x8x12xf32>, tensor<5xi32> -> tensor<64x12xf32>
  %a = zc.silu %g : tensor<64x12xf32>
  %h = zc.mul %a, %u : tensor<64x12xf32>
  %wd = zc.param_ref @down : tensor<4x12x8xf32>
  %ys = zc.grouped_matmul %h, %wd, %offs : tensor<64x12xf32>, tensor<4x12x8xf32>, tensor<5xi32> -> tensor<64x8xf32>
  %routed = zc.moe_combine %ys, %w, %rows : tensor<64x8xf32>, tensor<2x16x2xf32>, tensor<2x16x2xi32> -> tensor<2x16x8xf32>
  %su = zc.param_ref @shared_up : tensor<8x16xf32>
  %sh = zc.matmul %x, %su : tensor<2x16x8xf32>, tensor<8x16xf32> -> tensor<2x16x16xf32>
  %sa = zc.silu %sh : tensor<2x16x16xf32>
  %sd = zc.param_ref @shared_down : tensor<16x8xf32>
  %shared = zc.matmul %sa, %sd : tensor<2x16x16xf32>, tensor<16x8xf32> -> tensor<2x16x8xf32>
  %y = zc.add %routed, %shared : tensor<2x16x8xf32>
  %loss = zc.mse %y, %t : tensor<2x16x8xf32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// The forward: the dispatch starts after moe_dispatch; the shared expert's products and
// activation run before its wait; the experts' first product reads the wait.
// CHECK-LABEL: func.func @moe_step
// CHECK: %[[XS:.+]] = zc.moe_dispatch
// CHECK: %[[H:.+]] = zc.ep_dispatch_start %[[XS]], %{{.+}} ranks 2 : tensor<64x8xf32>, tensor<2x5xi32> -> !zc.async<tensor<128x8xf32>>
// CHECK: zc.matmul %{{.+}}, %{{.+}} : tensor<2x16x8xf32>, tensor<8x16xf32> -> tensor<2x16x16xf32>
// CHECK: zc.silu %{{.+}} : tensor<2x16x16xf32>
// CHECK: zc.matmul %{{.+}}, %{{.+}} : tensor<2x16x16xf32>, tensor<16x8xf32> -> tensor<2x16x8xf32>
// CHECK: %[[XR:.+]] = zc.wait %[[H]] : !zc.async<tensor<128x8xf32>>
// CHECK-NEXT: zc.grouped_matmul %[[XR]]
// CHECK: zc.ep_combine_start
// CHECK: zc.wait
// CHECK-NEXT: zc.moe_combine
// The backward: the shared expert's gradient products run while the output gradient's rows go to
// the experts (the combine's gradient, an ep_dispatch).
// CHECK: zc.moe_combine_grad
// CHECK: %[[DH:.+]] = zc.ep_dispatch_start
// CHECK: zc.matmul {{.+}} -> tensor<2x16x16xf32>
// CHECK: %[[DYR:.+]] = zc.wait %[[DH]] : !zc.async<tensor<128x8xf32>>
// CHECK-NEXT: zc.grouped_matmul_grad %[[DYR]]
// The experts' weight gradients are computed apart from their rows' (each grouped_matmul_grad
// twice, one result read of each) and run while the rows' gradient goes home.
// CHECK: %[[DXR:.+]] = zc.ep_combine_start
// CHECK-NEXT: %{{.+}}, %[[DWD:.+]] = zc.grouped_matmul_grad %[[DYR]]
// CHECK-NEXT: zc.grad_accumulate @down, %[[DWD]]
// CHECK: zc.grad_accumulate @up
// CHECK: zc.grad_accumulate @gate
// CHECK-NEXT: zc.wait %[[DXR]]

// Lowered: the exchanges start on the communication stream and zrt_wait takes their handles.
// LLVM-LABEL: llvm.func @zcc_step
// LLVM: %[[HANDLE:.+]] = llvm.call @zrt_ep_dispatch_start(
// LLVM: llvm.call @zrt_matmul(
// LLVM: llvm.call @zrt_wait(%[[HANDLE]])
// LLVM: llvm.call @zrt_grouped_matmul(
