// --recompute auto on a step with more candidates than the measured search takes (the imported
// Llama: 40 values): the fewest recompute FLOPs that fit, among none, selective's cheapest
// prefix (by bisection), selective, and full recomputation in the first k spans between
// checkpoints (Megatron's block method; bisected over k) up to full, in a few dozen evaluations
// (an 8B model compiles in seconds, not hours). Every budget from full's arena up fits.
// Arenas at 2 ranks, ZeRO-3: none 17145856, selective 15363584, full 13510144 bytes.
// RUN: zcc %zcc_src_root/examples/llama.mlir --world-size 2 --zero-stage 3 --param-persistence-threshold 0 --recompute auto --memory-budget 17M --report -o %t.bin | FileCheck %s --check-prefix=NONE
// RUN: zcc %zcc_src_root/examples/llama.mlir --world-size 2 --zero-stage 3 --param-persistence-threshold 0 --recompute auto --memory-budget 15M --report -o %t.bin | FileCheck %s --check-prefix=PREFIX
// RUN: zcc %zcc_src_root/examples/llama.mlir --world-size 2 --zero-stage 3 --param-persistence-threshold 0 --recompute auto --memory-budget 14M --report -o %t.bin | FileCheck %s --check-prefix=MIX
// RUN: zcc %zcc_src_root/examples/llama.mlir --world-size 2 --zero-stage 3 --param-persistence-threshold 0 --recompute auto --memory-budget 13510144 --report -o %t.bin | FileCheck %s --check-prefix=FULL
// RUN: not zcc %zcc_src_root/examples/llama.mlir --world-size 2 --zero-stage 3 --param-persistence-threshold 0 --recompute auto --memory-budget 8M -o %t.bin 2>&1 | FileCheck %s --check-prefix=OVER
// RUN: not zcc %zcc_src_root/examples/llama.mlir --world-size 2 --zero-stage 2 --recompute auto --memory-budget 14M -o %t.bin 2>&1 | FileCheck %s --check-prefix=LEVERS
// NONE: arena_bytes 17145856
// NONE: recompute auto: 0 values, 0 FLOPs per step {{.*}}; plan: none
// PREFIX: arena_bytes 15559168
// PREFIX: recompute auto: 9 values, {{.*}}; plan: 9 of the step's values
// MIX: arena_bytes 14610944
// MIX: recompute auto: 23 values, {{.*}}; plan: full in the first 3 of 9 spans between checkpoints, selective in the rest
// FULL: arena_bytes 13510144
// FULL: recompute auto: 43 values, {{.*}}; plan: full
// OVER: error: zcc-recompute: no recompute plan fits the budget of 8388608 bytes per rank; the smallest arena any plan reaches is 13510144 (full)
// OVER: note: with --offload-activations cpu: {{[0-9]+}} bytes per rank (over)
// OVER: note: with --offload-optimizer cpu: 10343424 bytes per rank (over)
// OVER: note: --tp and --pp split
// OVER-NOT: memory plan needs
// The levers are measured, each with full recomputation: at ZeRO-2 and DeepSpeed's default
// persistence threshold this model has no parameter large enough to shard at stage 3, but
// activation or optimizer offload brings it under.
// LEVERS: error: zcc-recompute: no recompute plan fits the budget of 14680064 bytes per rank; the smallest arena any plan reaches is 15232832 (full)
// LEVERS: note: with --zero-stage 3: 15232832 bytes per rank (over)
// LEVERS: note: with --offload-activations cpu: {{[0-9]+}} bytes per rank (fits)
// LEVERS: note: with --offload-optimizer cpu: {{[0-9]+}} bytes per rank (fits)
