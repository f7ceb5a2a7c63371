// --recompute auto on a step with more candidates than the measured search takes (the imported
// Llama: 40 values): the plan that fits with the fewest recompute FLOPs among keeping everything,
// the static order's shortest fitting prefix, the selective and the full policy's closures,
// in a few dozen evaluations (an 8B model compiles in seconds, not hours).
// Arenas at 2 ranks, ZeRO-3: none 17145856, selective 15318528, full 13841408 bytes.
// RUN: zcc %zcc_src_root/examples/llama.mlir --world-size 2 --zero-stage 3 --recompute auto --memory-budget 17M --report -o %t.bin | FileCheck %s --check-prefix=NONE
// RUN: zcc %zcc_src_root/examples/llama.mlir --world-size 2 --zero-stage 3 --recompute auto --memory-budget 16M --report -o %t.bin | FileCheck %s --check-prefix=SELECTIVE
// RUN: zcc %zcc_src_root/examples/llama.mlir --world-size 2 --zero-stage 3 --recompute auto --memory-budget 14M --report -o %t.bin | FileCheck %s --check-prefix=FULL
// RUN: not zcc %zcc_src_root/examples/llama.mlir --world-size 2 --zero-stage 3 --recompute auto --memory-budget 8M -o %t.bin 2>&1 | FileCheck %s --check-prefix=OVER
// NONE: arena_bytes 17145856
// NONE: recompute auto: 0 values, 0 FLOPs per step
// SELECTIVE: arena_bytes 15318528
// SELECTIVE: recompute auto: 17 values
// FULL: arena_bytes 13841408
// FULL: recompute auto: 42 values
// OVER: warning: zcc-recompute: even full recompute leaves 13841408 bytes per rank, over the budget of 8388608
// OVER: error: the memory plan needs 13841408 bytes per rank
