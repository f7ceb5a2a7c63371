// A Mixture-of-Experts model (test/Train/Inputs/mixtral.mlir): --target cuda compiles it on the
// meshes the CPU backend takes (expert parallelism, the balancing loss pooled over context ranks);
// the meshes no backend takes get a located error and a non-zero exit, no output.
// RUN: rm -f %t.bin
// RUN: zcc %zcc_src_root/test/Train/Inputs/mixtral.mlir --target=cuda --emit=obj -o %t.o
// RUN: zcc %zcc_src_root/test/Train/Inputs/mixtral.mlir --world-size 2 --ep 2 --target=cuda --emit=obj -o %t-ep.o
// RUN: zcc %zcc_src_root/test/Train/Inputs/mixtral.mlir --world-size 2 --cp 2 --target=cuda --emit=obj -o %t-cp.o
// RUN: zcc %zcc_src_root/test/Train/Inputs/mixtral.mlir --world-size 4 --cp 2 --ep 2 --target=cuda --emit=obj -o %t-cp-ep.o
// Expert parallelism: a group must divide the data-parallel ranks, the bound needs it, and a model
// must have experts (a pipeline's too).
// RUN: not zcc %zcc_src_root/test/Train/Inputs/mixtral.mlir --world-size 2 --ep 3 -o %t.bin 2>&1 | FileCheck %s --check-prefix=EP-DIVIDE
// EP-DIVIDE: zcc: error: --ep 3 must divide the 2 data-parallel ranks (--world-size / (--tp x --pp))
// RUN: not zcc %zcc_src_root/test/Train/Inputs/mixtral.mlir --world-size 2 --moe-max-tokens-per-expert 10 -o %t.bin 2>&1 | FileCheck %s --check-prefix=EP-BOUND
// EP-BOUND: zcc: error: --moe-max-tokens-per-expert bounds the rows an expert-parallel rank receives: it needs --ep > 1
// RUN: not zcc %zcc_src_root/examples/gpt.mlir --world-size 2 --ep 2 -o %t.bin 2>&1 | FileCheck %s --check-prefix=EP-DENSE
// RUN: not zcc %zcc_src_root/examples/gpt.mlir --world-size 4 --pp 2 --ep 2 -o %t.bin 2>&1 | FileCheck %s --check-prefix=EP-DENSE
// EP-DENSE: gpt.mlir:{{[0-9]+}}:{{[0-9]+}}: error: --ep 2: the model has no MoE layer (zc.moe_route) whose experts to split
// RUN: test ! -e %t.bin
