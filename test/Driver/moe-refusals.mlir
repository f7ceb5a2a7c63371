// A Mixture-of-Experts model (test/Train/Inputs/mixtral.mlir) where its parts are not built yet:
// a located error naming the op and a non-zero exit, no output. The CUDA backend has no MoE
// kernels (the check precedes the backend's own); context parallelism has no rule that splits
// the routing along the tokens.
// RUN: rm -f %t.bin
// RUN: not zcc %zcc_src_root/test/Train/Inputs/mixtral.mlir --target=cuda --emit=obj -o %t.bin 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: test ! -e %t.bin
// CUDA: mixtral.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'zc.moe_route' has no CUDA kernel yet: Mixture-of-Experts models train with --target cpu for now
// RUN: not zcc %zcc_src_root/test/Train/Inputs/mixtral.mlir --world-size 2 --cp 2 -o %t.bin 2>&1 | FileCheck %s --check-prefix=CP
// CP: mixtral.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'zc.moe_route' op cannot run on a part of the sequence (--cp 2): no rule splits it along the tokens
