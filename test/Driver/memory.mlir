// --memory-budget, --memory-svg and the report's arena: GPT at 4 ranks, ZeRO-3.
// RUN: not zcc %zcc_src_root/examples/gpt.mlir --world-size 4 --zero-stage 3 --param-persistence-threshold 0 --memory-budget 8M -o %t.bin 2>&1 | FileCheck %s --check-prefix=OVER
// RUN: zcc %zcc_src_root/examples/gpt.mlir --world-size 4 --zero-stage 3 --param-persistence-threshold 0 --memory-budget 64M --emit=mlir -o %t.mlir
// RUN: not zcc %zcc_src_root/examples/gpt.mlir --memory-budget lots -o %t.bin 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: zcc %zcc_src_root/examples/gpt.mlir --world-size 4 --zero-stage 3 --param-persistence-threshold 0 --memory-svg %t.svg --emit=mlir -o %t.mlir
// RUN: FileCheck %s --check-prefix=SVG < %t.svg
// RUN: zcc %zcc_src_root/examples/gpt.mlir --world-size 4 --zero-stage 3 --param-persistence-threshold 0 --report=json --emit=mlir -o %t.mlir
// RUN: FileCheck %s --check-prefix=JSON < %t.mlir.report.json

// OVER: error: the memory plan needs {{[0-9]+}} bytes per rank ({{.*}} MiB), over the budget of 8388608 bytes (8.00 MiB); it peaks here, in @gpt_step
// OVER: note: live at the peak:
// BAD: zcc: error: --memory-budget expects a size like 512M or 2G, got 'lots'

// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: Per-rank memory over one step: arena {{[0-9.]+}} MiB
// SVG: >gathered_params</text>
// SVG: </svg>

// JSON: "arena_bytes": {{[0-9]+}}
// JSON: "peak_breakdown": {
// JSON-DAG: "activations": {{[0-9]+}}
// JSON-DAG: "gathered_params": {{[0-9]+}}
// JSON-DAG: "params": 834304
// JSON: "peak_op": "{{.+}} in @gpt_step"
// JSON: "predicted": {
// JSON-DAG: "exposed_comm_s":
// JSON-DAG: "comm_s":
