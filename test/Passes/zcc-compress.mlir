// RUN: zcc-opt %s -zcc-compress="config=%S/Inputs/compress.json" | FileCheck %s
// RUN: zcc-opt %s -zcc-compress="config=%S/Inputs/compress.json" -zcc-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: zcc-opt %s -zcc-compress="config=%S/Inputs/compress.json" -zcc-autodiff -zcc-optimizer -zcc-zero="stage=3 ranks=2 persistence-threshold=0" | FileCheck %s --check-prefix=ZERO3
// RUN: zcc-opt %s -zcc-compress="config=%S/Inputs/compress.json" -zcc-mixed-precision -zcc-autodiff | FileCheck %s --check-prefix=BF16
// RUN: zcc %s --compression %S/Inputs/compress.json -o %t.json --report=json && FileCheck %s --check-prefix=REPORT < %t.json.report.json
//
// Errors name the JSON key, and the driver refuses what it cannot honour:
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-json.json" 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-technique.json" 2>&1 | FileCheck %s --check-prefix=TECHNIQUE
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-topk.json" 2>&1 | FileCheck %s --check-prefix=TOPK
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-moq.json" 2>&1 | FileCheck %s --check-prefix=MOQ
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-bits.json" 2>&1 | FileCheck %s --check-prefix=BITS
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-twice.json" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-embedding.json" 2>&1 | FileCheck %s --check-prefix=EMBEDDING
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-row.json" 2>&1 | FileCheck %s --check-prefix=ROW
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-regex.json" 2>&1 | FileCheck %s --check-prefix=REGEX
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-ratio.json" 2>&1 | FileCheck %s --check-prefix=RATIO
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-groups.json" 2>&1 | FileCheck %s --check-prefix=GROUPS
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-tied.json" 2>&1 | FileCheck %s --check-prefix=TIED
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-static.json" 2>&1 | FileCheck %s --check-prefix=STATIC
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-related.json" 2>&1 | FileCheck %s --check-prefix=RELATED
// RUN: not zcc-opt %s -zcc-compress="config=%S/Inputs/bad-nosection.json" 2>&1 | FileCheck %s --check-prefix=NOSECTION
// Activation quantization per token survives the batch split (ShardBatch):
// RUN: zcc-opt %s -zcc-compress="config=%S/Inputs/compress.json" -zcc-shard-batch="ranks=2" | FileCheck %s --check-prefix=SHARD
// RUN: not zcc %s --compression %S/Inputs/compress.json --world-size 2 --tp 2 -o %t.bin 2>&1 | FileCheck %s --check-prefix=TP

// An embedding, a linear weight as nn.Linear keeps it ([out, in], transpose_rhs), a matrix kept
// [in, out] (its 4 groups of output rows, as DeepSpeed groups them, are blocks of columns), and a
// tied head (left alone).
zc.param @"emb.weight" : tensor<16x8xf32> = #zc.normal<std = 0.02>
zc.param @"fc.weight" : tensor<16x8xf32> = #zc.normal<std = 0.02>
zc.param @"fc.bias" : tensor<16xf32> = #zc.zeros
zc.param @proj : tensor<16x8xf32> = #zc.normal<std = 0.02>
zc.param @"tok.weight" : tensor<16x8xf32> = #zc.normal<std = 0.02> {zc.tied = ["head.weight"]}
zc.forward @net(%ids: tensor<2x3xi32>, %y: tensor<2x3xi32>) -> tensor<f32> {
  %e = zc.param_ref @"emb.weight" : tensor<16x8xf32>
  %x = zc.embedding %e[%ids] : tensor<16x8xf32>, tensor<2x3xi32> -> tensor<2x3x8xf32>
  %w = zc.param_ref @"fc.weight" : tensor<16x8xf32>
  %h = zc.matmul %x, %w transpose_rhs : tensor<2x3x8xf32>, tensor<16x8xf32> -> tensor<2x3x16xf32>
  %b = zc.param_ref @"fc.bias" : tensor<16xf32>
  %hb = zc.bias_add %h, %b : tensor<2x3x16xf32>, tensor<16xf32>
  %p = zc.param_ref @proj : tensor<16x8xf32>
  %o = zc.matmul %hb, %p : tensor<2x3x16xf32>, tensor<16x8xf32> -> tensor<2x3x8xf32>
  %t = zc.param_ref @"tok.weight" : tensor<16x8xf32>
  %logits = zc.matmul %o, %t transpose_rhs : tensor<2x3x8xf32>, tensor<16x8xf32> -> tensor<2x3x16xf32>
  %l = zc.cross_entropy %logits, %y : tensor<2x3x16xf32>, tensor<2x3xi32> -> tensor<f32>
  zc.return %l : tensor<f32>
}

// What --export-weights applies, per parameter.
// CHECK: module attributes {zc.compression = [{bits = 8 : i32, groups = 16 : i64, param = "emb.weight"}, {param = "fc.bias", row_axis = 0 : i64, row_mask = "fc.weight.row_mask"}, {bits = 8 : i32, groups = 4 : i64, mask = "fc.weight.sparse_mask", param = "fc.weight", row_axis = 0 : i64, row_mask = "fc.weight.row_mask"}, {bits = 4 : i32, columns, groups = 4 : i64, param = "proj", row_axis = 1 : i64, row_mask = "proj.row_mask"}]}
// CHECK: zc.param @fc.weight
// Row pruning's mask: one value per output feature (axis 0 of [out, in], axis 1 of [in, out]).
// CHECK-NEXT: zc.state @fc.weight.row_mask : tensor<16xf32> of @fc.weight mask keep 5.000000e-01 rows 0
// CHECK-NEXT: zc.state @fc.weight.sparse_mask : tensor<16x8xf32> of @fc.weight mask keep 2.500000e-01
// CHECK: zc.state @proj.row_mask : tensor<8xf32> of @proj mask keep 5.000000e-01 rows 1
// CHECK-LABEL: zc.forward @net
// One gate per schedule_offset.
// CHECK-DAG: %[[PRUNE:.+]] = zc.step_gate from 50 : tensor<f32>
// CHECK-DAG: %[[ACT:.+]] = zc.step_gate from 10 : tensor<f32>
// CHECK-DAG: %[[ROWS:.+]] = zc.step_gate from 20 : tensor<f32>
// CHECK-DAG: %[[QUANT:.+]] = zc.step_gate from 0 : tensor<f32>
// The embedding token by token (DeepSpeed's Embedding_Compress ignores quantize_groups).
// CHECK: %[[E:.+]] = zc.param_ref @emb.weight
// CHECK-NEXT: %[[EQ:.+]] = zc.fake_quantize %[[E]], %[[QUANT]] bits 8 groups 16 : tensor<16x8xf32>
// CHECK-NEXT: zc.embedding %[[EQ]][
// Quantized, then masked (DeepSpeed's forward: weight_quantizer, then the sparse mask).
// CHECK: %[[W:.+]] = zc.param_ref @fc.weight
// CHECK-NEXT: %[[WQ:.+]] = zc.fake_quantize %[[W]], %[[QUANT]] bits 8 groups 4 : tensor<16x8xf32>
// CHECK-NEXT: %[[WS:.+]] = zc.apply_mask %[[WQ]], %[[PRUNE]] mask @fc.weight.sparse_mask : tensor<16x8xf32>
// CHECK-NEXT: %[[WM:.+]] = zc.apply_mask %[[WS]], %[[ROWS]] mask @fc.weight.row_mask axis 0 : tensor<16x8xf32>
// The layer's input, token by token (activation_quantization, dynamic range).
// CHECK-NEXT: %[[XQ:.+]] = zc.fake_quantize %{{.+}}, %[[ACT]] bits 8 per_row asymmetric : tensor<2x3x8xf32>
// CHECK-NEXT: zc.matmul %[[XQ]], %[[WM]] transpose_rhs
// The module's bias loses the pruned rows too.
// CHECK: %[[B:.+]] = zc.param_ref @fc.bias
// CHECK-NEXT: %[[BM:.+]] = zc.apply_mask %[[B]], %[[ROWS]] mask @fc.weight.row_mask axis 0 : tensor<16xf32>
// CHECK-NEXT: zc.bias_add %{{.+}}, %[[BM]]
// CHECK: %[[P:.+]] = zc.param_ref @proj
// CHECK-NEXT: %[[PQ:.+]] = zc.fake_quantize %[[P]], %[[QUANT]] bits 4 groups 4 columns : tensor<16x8xf32>
// CHECK-NEXT: %[[PR:.+]] = zc.apply_mask %[[PQ]], %[[ROWS]] mask @proj.row_mask axis 1 : tensor<16x8xf32>
// CHECK-NEXT: zc.matmul %{{.+}}, %[[PR]] :
// CHECK: %[[T:.+]] = zc.param_ref @tok.weight
// CHECK-NEXT: zc.matmul %{{.+}}, %[[T]] transpose_rhs

// The gradient goes straight through the quantizer and through the mask again.
// GRAD-LABEL: func.func @net_step
// GRAD: zc.apply_mask
// GRAD: %[[MASKED:.+]] = zc.apply_mask %{{.+}}, %{{.+}} mask @fc.weight.sparse_mask : tensor<16x8xf32>
// GRAD: zc.grad_accumulate @fc.weight, %[[MASKED]]

// ZeRO-3: the weight is gathered, then compressed (the gathered copy freed at once); the mask
// stays whole on every rank.
// ZERO3: zc.state @fc.weight.exp_avg : tensor<64xf32>
// ZERO3: zc.state @fc.weight.sparse_mask : tensor<16x8xf32> of @fc.weight mask keep
// ZERO3: %[[G:.+]] = zc.gather_param @fc.weight
// ZERO3-NEXT: %[[GQ:.+]] = zc.fake_quantize %[[G]]
// ZERO3-NEXT: zc.release %[[G]]
// ZERO3-NEXT: zc.apply_mask %[[GQ]]

// bf16 compute: the weight goes low, its gates stay f32.
// BF16: %[[BQ:.+]] = zc.step_gate from 0 : tensor<f32>
// BF16: zc.fake_quantize %{{.+}}, %[[BQ]] bits 8 groups 4 : tensor<16x8xbf16>

// REPORT: "pruning_mask_bytes": 608

// MISSING: cannot read --compression {{.*}}missing.json
// JSON: bad-json.json: not JSON
// TECHNIQUE: bad-technique.json:0:0: error: compression_training.weight_pruning: unknown technique
// TOPK: compression_training.sparse_pruning.shared_parameters.method: 'topk': only l1 is supported
// MOQ: compression_training.weight_quantization.shared_parameters.quantize_weight_in_forward: must be true
// BITS: compression_training.weight_quantization.different_groups.g.params.target_bits: 2: 3 to 8 bits
// TWICE: compression_training.sparse_pruning.different_groups.b.modules: 'fc' is in groups 'a' and 'b' of sparse_pruning
// EMBEDDING: compression_training.sparse_pruning.different_groups.a.modules: matches embedding 'emb'
// ROW: compression_training.head_pruning.shared_parameters.enabled: head_pruning is not supported yet
// RELATED: compression_training.row_pruning.different_groups.r.related_modules: shrinking the related layers
// NOSECTION: bad-nosection.json:0:0: error: (top level): a DeepSpeed config without a compression_training section
// REGEX: compression_training.sparse_pruning.different_groups.a.modules: 'fc(' is not a regular expression
// RATIO: bad-ratio.json:0:0: error: compression_training.sparse_pruning.different_groups.a.params.dense_ratio: the fraction kept must be in (0, 1]
// GROUPS: compression_training.weight_quantization.shared_parameters.quantize_groups: 7 groups do not divide fc's 128 weights
// TIED: compression_training.weight_quantization.different_groups.g.modules: matches 'head', whose weight is tied
// TP: --compression with --tp or --pp is not supported
// STATIC: compression_training.activation_quantization.shared_parameters.range_calibration: 'static': only dynamic ranges are supported
// SHARD: zc.fake_quantize %{{.+}}, %{{.+}} bits 8 per_row asymmetric : tensor<1x3x8xf32>
