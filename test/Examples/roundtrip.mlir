// Tests that both examples verify as models and round-trip through zcc-opt
// (printed form and generic form), and that gpt.mlir is what gen_gpt.py writes.
// RUN: zcc %zcc_src_root/examples/mlp.mlir --verify-only
// RUN: zcc %zcc_src_root/examples/gpt.mlir --verify-only
// RUN: zcc-opt %zcc_src_root/examples/gpt.mlir | zcc-opt | FileCheck %s --check-prefix=GPT
// RUN: zcc-opt %zcc_src_root/examples/gpt.mlir -mlir-print-op-generic | zcc-opt | FileCheck %s --check-prefix=GPT
// RUN: zcc-opt %zcc_src_root/examples/mlp.mlir | zcc-opt | FileCheck %s --check-prefix=MLP
// RUN: %python %zcc_src_root/examples/gen_gpt.py | diff - %zcc_src_root/examples/gpt.mlir

// GPT: zc.param @wte : tensor<256x128xf32>
// GPT: zc.param @h3_fc_proj_b : tensor<128xf32>
// GPT-LABEL: zc.forward @gpt
// GPT-COUNT-4: zc.causal_attention
// GPT: zc.matmul %{{.+}}, %{{.+}} transpose_rhs : tensor<8x64x128xf32>, tensor<256x128xf32> -> tensor<8x64x256xf32>
// GPT: zc.cross_entropy

// MLP-LABEL: zc.forward @mlp
// MLP-COUNT-3: zc.matmul
// MLP: zc.cross_entropy
