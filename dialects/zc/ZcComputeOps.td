//===- ZcComputeOps.td - forward compute ops ---------------------------------===//
//
// Elementwise ops require identical operand types (no implicit broadcasting);
// broadcasting is explicit (`zc.bias_add`), so every op's gradient is local.
//
//===----------------------------------------------------------------------===//

#ifndef ZC_COMPUTE_OPS_TD
#define ZC_COMPUTE_OPS_TD

class ZC_ComputeOp<string mnemonic, list<Trait> traits = []>
    : ZC_Op<mnemonic, !listconcat([Pure], traits)>;

def ZC_AddOp : ZC_ComputeOp<"add", [SameOperandsAndResultType]> {
  let summary = "Elementwise addition";
  let description = [{
    `result[i] = lhs[i] + rhs[i]` for operands of identical type.

    Example:

    ```mlir
    %c = zc.add %a, %b : tensor<8x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$lhs, ZC_FloatTensor:$rhs);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def ZC_SubOp : ZC_ComputeOp<"sub", [SameOperandsAndResultType]> {
  let summary = "Elementwise subtraction";
  let description = [{
    `result[i] = lhs[i] - rhs[i]` for operands of identical type.

    Example:

    ```mlir
    %c = zc.sub %a, %b : tensor<8x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$lhs, ZC_FloatTensor:$rhs);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def ZC_MulOp : ZC_ComputeOp<"mul", [SameOperandsAndResultType]> {
  let summary = "Elementwise multiplication";
  let description = [{
    `result[i] = lhs[i] * rhs[i]` for operands of identical type.

    Example:

    ```mlir
    %c = zc.mul %a, %b : tensor<8x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$lhs, ZC_FloatTensor:$rhs);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def ZC_ReluOp : ZC_ComputeOp<"relu", [SameOperandsAndResultType]> {
  let summary = "Rectified linear unit";
  let description = [{
    `result[i] = max(input[i], 0)`.

    Example:

    ```mlir
    %y = zc.relu %x : tensor<8x64x512xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def ZC_GeluOp : ZC_ComputeOp<"gelu", [SameOperandsAndResultType]> {
  let summary = "GELU, tanh approximation or (exact) the erf form";
  let description = [{
    `result = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, the form GPT-2 uses.
    With `exact`: `0.5 x (1 + erf(x / sqrt(2)))`, PyTorch's default GELU (GPT-NeoX /
    Pythia's `hidden_act: gelu`). zcc-fuse folds only the tanh form into a
    matmul's epilogue (cuBLASLt's and the CPU's are the tanh form).

    Example:

    ```mlir
    %y = zc.gelu %x : tensor<8x64x512xf32>
    %e = zc.gelu %x exact : tensor<8x64x512xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, UnitAttr:$exact);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input (`exact` $exact^)? attr-dict `:` type($result)";
}

def ZC_SiluOp : ZC_ComputeOp<"silu", [SameOperandsAndResultType]> {
  let summary = "SiLU (swish): x times its logistic sigmoid";
  let description = [{
    `result = x / (1 + exp(-x))`, the activation of Llama's SwiGLU MLP
    (`silu(x w_gate) * (x w_up)`), computed in f32.

    Example:

    ```mlir
    %y = zc.silu %x : tensor<8x64x688xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def ZC_SoftmaxOp : ZC_ComputeOp<"softmax", [SameOperandsAndResultType]> {
  let summary = "Softmax over the last axis";
  let description = [{
    Numerically stable: `exp(x - max) / sum(exp(x - max))` along the last axis,
    accumulated in f32.

    Example:

    ```mlir
    %y = zc.softmax %x : tensor<8x4x64x64xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def ZC_ScaleOp : ZC_ComputeOp<"scale", [SameOperandsAndResultType]> {
  let summary = "Multiplies every element by a compile-time constant";
  let description = [{
    `result[i] = factor * input[i]`.

    Example:

    ```mlir
    %y = zc.scale %x by 0.125 : tensor<8x64x64xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, F64Attr:$factor);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `by` $factor attr-dict `:` type($result)";
}

def ZC_CastOp : ZC_ComputeOp<"cast", [SameOperandsAndResultShape]> {
  let summary = "Converts between f32 and bf16";
  let description = [{
    Elementwise conversion; f32 -> bf16 rounds to nearest even. The shapes
    must match and the element types must differ.

    Example:

    ```mlir
    %h = zc.cast %x : tensor<128x512xf32> -> tensor<128x512xbf16>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_MatmulOp : ZC_ComputeOp<"matmul"> {
  let summary = "Matrix product, optionally transposed and batched";
  let description = [{
    `lhs` is `[batch..., M, K]` (or `[batch..., K, M]` with `transpose_lhs`),
    `rhs` is `[batch..., K, N]` (or `[batch..., N, K]` with `transpose_rhs`);
    the result is `[batch..., M, N]`. `rhs` may instead be a plain 2-D matrix
    shared by every batch element (the usual `x @ W` of a linear layer).
    Element types of both operands and the result are equal; bf16 products
    accumulate in f32.

    Example:

    ```mlir
    %h = zc.matmul %x, %w : tensor<8x64x128xf32>, tensor<128x512xf32> -> tensor<8x64x512xf32>
    %s = zc.matmul %q, %k transpose_rhs : tensor<8x4x64x32xf32>, tensor<8x4x64x32xf32> -> tensor<8x4x64x64xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$lhs, ZC_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)?
    attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def ZC_BiasAddOp : ZC_ComputeOp<"bias_add", [AllTypesMatch<["input", "result"]>]> {
  let summary = "Adds a bias vector along the last axis";
  let description = [{
    `result[..., j] = input[..., j] + bias[j]`: `bias` is 1-D with the size of
    the last axis of `input`.

    Example:

    ```mlir
    %y = zc.bias_add %x, %b : tensor<8x64x512xf32>, tensor<512xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_FloatTensor:$bias);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `,` $bias attr-dict `:` type($input) `,` type($bias)";
  let hasVerifier = 1;
}

def ZC_LayerNormOp : ZC_ComputeOp<"layernorm", [AllTypesMatch<["input", "result"]>,
                                             AllTypesMatch<["gamma", "beta"]>]> {
  let summary = "Layer normalization over the last axis, with affine scale and shift";
  let description = [{
    `result = (x - mean) / sqrt(var + epsilon) * gamma + beta`, mean and
    (biased) variance over the last axis, computed in f32. `gamma` and `beta`
    are 1-D of the last axis' size. `epsilon` defaults to 1e-5.

    Example:

    ```mlir
    %y = zc.layernorm %x, %g, %b : tensor<8x64x128xf32>, tensor<128xf32>
    %z = zc.layernorm %x, %g, %b {epsilon = 1.0e-06 : f64} : tensor<8x64x128xf32>, tensor<128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_FloatTensor:$gamma, ZC_FloatTensor:$beta,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `,` $gamma `,` $beta attr-dict `:` type($input) `,` type($gamma)";
  let hasVerifier = 1;
}

def ZC_RmsNormOp : ZC_ComputeOp<"rmsnorm", [AllTypesMatch<["input", "result"]>]> {
  let summary = "Root-mean-square normalization over the last axis, with a gain";
  let description = [{
    `result = x / sqrt(mean(x^2) + epsilon) * gamma`, the mean over the last
    axis, computed in f32 (Llama's `LlamaRMSNorm`: no mean subtraction, no
    shift). `gamma` is 1-D of the last axis' size. `epsilon` defaults to 1e-6.
    With `gain_offset o` the gain is `o + gamma`, added in f32 (Gemma's
    `x * (1 + weight)`, whose weights start at zero).

    Example:

    ```mlir
    %y = zc.rmsnorm %x, %g : tensor<8x64x256xf32>, tensor<256xf32>
    %z = zc.rmsnorm %x, %g {epsilon = 1.0e-05 : f64} : tensor<8x64x256xf32>, tensor<256xf32>
    %w = zc.rmsnorm %x, %g {epsilon = 1.0e-06 : f64, gain_offset = 1.0 : f64} : tensor<8x64x256xf32>, tensor<256xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_FloatTensor:$gamma,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon, OptionalAttr<F64Attr>:$gain_offset);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `,` $gamma attr-dict `:` type($input) `,` type($gamma)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// What the gain adds to gamma: 0 unless gain_offset is given.
    double getGainOffsetOrZero() { return getGainOffset() ? getGainOffset()->convertToDouble() : 0.0; }
  }];
}

def ZC_RotaryOp : ZC_ComputeOp<"rotary", [SameOperandsAndResultType]> {
  let summary = "Rotary position embedding, half-split layout (Hugging Face Llama)";
  let description = [{
    `input` is `[B, T, C]` with `C = num_heads x D`, `D` even: each head's `D`
    channels are two halves `(x1, x2)` of `D/2`. Position `t` (the index on
    axis 1) and frequency `i < D/2` give the angle `t * theta^(-2i/D)`, and

        result1 = x1 cos - x2 sin,   result2 = x2 cos + x1 sin

    (`x * cos + rotate_half(x) * sin`), the angles computed in f32 as
    Hugging Face computes them. With `inverse` the rotation is by minus the
    angle: the gradient of the rotation (its transpose).

    With `rotary_dims R` (GPT-NeoX's and Phi's `rotary_pct`, `partial_rotary_factor`)
    only the first `R` channels of each head rotate, as a head of `R` channels
    would (halves of `R/2`, angles `t * theta^(-2i/R)`); the other `D - R`
    pass through unchanged. `R` is even and at most `D`.

    Example:

    ```mlir
    %qr = zc.rotary %q heads 8 theta 10000.0 : tensor<8x64x256xf32>
    %dq = zc.rotary %dqr heads 8 theta 10000.0 inverse : tensor<8x64x256xf32>
    %qp = zc.rotary %q heads 8 theta 10000.0 rotary_dims 8 : tensor<8x64x256xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                       F64Attr:$theta, UnitAttr:$inverse,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$rotary_dims);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $input `heads` $num_heads `theta` $theta (`inverse` $inverse^)? (`rotary_dims` $rotary_dims^)? attr-dict
    `:` type($result)
  }];
  let hasVerifier = 1;
}

def ZC_CausalAttentionOp : ZC_ComputeOp<"causal_attention",
    [AllTypesMatch<["query", "result"]>, AllTypesMatch<["key", "value"]>]> {
  let summary = "Causal multi-head scaled dot-product attention, grouped-query when kv_heads < heads";
  let description = [{
    `query` is `[B, T, C]` with `C` divisible by `num_heads`: `H` heads of
    size `D = C / H`. `key` and `value` are `[B, T, KV x D]` with `KV =
    num_kv_heads` (default `H`; `H` must be a multiple of it): query head `h`
    reads key/value head `h / (H / KV)`, as Hugging Face's `repeat_kv` lays
    the groups out (grouped-query attention; `KV = H` is multi-head). Head `h`
    computes `softmax(q k^T / sqrt(D) + mask) v`, where the mask hides future
    positions (`s > t`), and the heads are concatenated back to `[B, T, C]`.
    The softmax is computed in f32.

    Three optional attributes give the variants of the families that train:
    - `scale S`: the scores are `S q k^T` instead of `q k^T / sqrt(D)` (Gemma 2's
      `query_pre_attn_scalar ** -0.5`).
    - `softcap C`: the scores are soft-capped, `C tanh(scores / C)`, before the
      mask and the softmax (Gemma 2's `attn_logit_softcapping`).
    - `window W`: sliding-window attention, position `t` sees the `W` positions
      `t - W < s <= t` (Mistral's and Gemma 2's `sliding_window`); the kernels
      skip the key blocks the window excludes, so the work grows as `T x W`.

    Example:

    ```mlir
    %y = zc.causal_attention %q, %k, %v heads 4 : tensor<8x64x128xf32>
    %z = zc.causal_attention %q, %k2, %v2 heads 8 kv_heads 2 : tensor<8x64x256xf32>, tensor<8x64x64xf32>
    %w = zc.causal_attention %q, %k2, %v2 heads 8 kv_heads 2 scale 0.125 softcap 50.0 window 4096 : tensor<8x64x256xf32>, tensor<8x64x64xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$query, ZC_FloatTensor:$key, ZC_FloatTensor:$value,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$num_kv_heads,
                       OptionalAttr<F64Attr>:$scale, OptionalAttr<F64Attr>:$softcap,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$window);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value `heads` $num_heads (`kv_heads` $num_kv_heads^)? (`scale` $scale^)?
    (`softcap` $softcap^)? (`window` $window^)? attr-dict `:`
    custom<AttentionTypes>(type($query), type($key), type($value), type($result))
  }];
  let extraClassDeclaration = [{
    /// Key/value heads: num_kv_heads where given, else num_heads (multi-head attention).
    int64_t getKvHeads() { return getNumKvHeads() ? *getNumKvHeads() : getNumHeads(); }
    /// The variant the kernels compute (scale, soft-cap, window; the defaults where absent).
    ::mlir::zc::AttentionVariant getVariant() {
      return ::mlir::zc::AttentionVariant::of(getOperation());
    }
  }];
  let hasVerifier = 1;
}

def ZC_EmbeddingOp : ZC_ComputeOp<"embedding"> {
  let summary = "Looks up rows of a table by integer id";
  let description = [{
    `table` is `[V, C]`, `ids` any shape `[S...]` of i32 in `[0, V)`; the
    result is `[S..., C]` with `result[s..., :] = table[ids[s...], :]`.
    Out-of-range ids are a run-time error.

    With `vocab_shards = T` (tensor parallelism) the table holds rows
    `[r V, (r+1) V)` of a `T V`-row vocabulary on tensor-parallel rank `r`;
    an id outside them gives a zero row, so the sum over the group
    (`zc.tp_reduce`) is the lookup in the whole table.

    Example:

    ```mlir
    %x = zc.embedding %wte[%tokens] : tensor<256x128xf32>, tensor<8x64xi32> -> tensor<8x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$table, ZC_IndexTensor:$ids,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$vocab_shards);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$table `[` $ids `]` attr-dict `:` type($table) `,` type($ids) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_ReshapeOp : ZC_ComputeOp<"reshape"> {
  let summary = "Reinterprets a tensor with another shape of the same size";
  let description = [{
    Row-major order is kept; element count and element type are unchanged.

    Example:

    ```mlir
    %y = zc.reshape %x : tensor<8x64x128xf32> -> tensor<512x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_TransposeOp : ZC_ComputeOp<"transpose"> {
  let summary = "Permutes the axes of a tensor";
  let description = [{
    `result` axis `i` is `input` axis `permutation[i]`.

    Example:

    ```mlir
    %y = zc.transpose %x [0, 2, 1, 3] : tensor<8x64x4x32xf32> -> tensor<8x4x64x32xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input $permutation attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_SliceOp : ZC_ComputeOp<"slice"> {
  let summary = "Extracts a contiguous box of a tensor";
  let description = [{
    The box starts at `offsets` (one per axis) and has the result's shape;
    strides are 1. It must lie inside the input.

    Example (the query third of a fused qkv projection):

    ```mlir
    %q = zc.slice %qkv [0, 0, 0] : tensor<8x64x384xf32> -> tensor<8x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, DenseI64ArrayAttr:$offsets);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input $offsets attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_ConcatOp : ZC_ComputeOp<"concat"> {
  let summary = "Joins tensors along one axis";
  let description = [{
    All inputs have the result's rank and element type and agree on every
    axis but `axis`, whose sizes add up to the result's. Values (f32, bf16) or i32 ids
    (MoE layers' choices, pooled over the layers for one load-balancing loss); ids get no gradient.

    Example:

    ```mlir
    %qkv = zc.concat %q, %k, %v axis 2 : tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32> -> tensor<8x64x384xf32>
    ```
  }];
  let arguments = (ins Variadic<ZC_JoinTensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs ZC_JoinTensor:$result);
  let assemblyFormat = "$inputs `axis` $axis attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_CrossEntropyOp : ZC_ComputeOp<"cross_entropy"> {
  let summary = "Mean softmax cross-entropy over all positions";
  let description = [{
    `logits` is `[S..., V]`, `labels` is `[S...]` of i32 class ids in
    `[0, V)`. The result is the mean over all positions of
    `logsumexp(logits[s, :]) - logits[s, labels[s]]`, in f32.

    Example:

    ```mlir
    %loss = zc.cross_entropy %logits, %targets : tensor<8x64x256xf32>, tensor<8x64xi32> -> tensor<f32>
    ```

    With `vocab_shards = T` (Megatron's vocabulary-parallel cross-entropy)
    `logits` holds classes `[r V, (r+1) V)` of `T V` on tensor-parallel rank
    `r`: the row maxima, the sums of exponentials and the labels' logits are
    combined over the tensor-parallel group, so no rank holds whole rows and
    every rank gets the same loss.

    With `softcap C` (Gemma 2's `final_logit_softcapping`) the loss reads
    `C tanh(logits / C)` in place of every logit, computed as the rows are
    read: no capped copy of the logits exists.
  }];
  let arguments = (ins ZC_FloatTensor:$logits, ZC_IndexTensor:$labels,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$vocab_shards,
                       OptionalAttr<F64Attr>:$softcap);
  let results = (outs ZC_LossTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels (`softcap` $softcap^)? attr-dict `:` type($logits) `,` type($labels) `->` type($result)
  }];
  let hasVerifier = 1;
}

def ZC_MseOp : ZC_ComputeOp<"mse", [AllTypesMatch<["prediction", "target"]>]> {
  let summary = "Mean squared error";
  let description = [{
    `mean((prediction - target)^2)` over every element, in f32.

    Example:

    ```mlir
    %loss = zc.mse %pred, %y : tensor<32x1xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$prediction, ZC_FloatTensor:$target);
  let results = (outs ZC_LossTensor:$result);
  let assemblyFormat = "$prediction `,` $target attr-dict `:` type($prediction) `->` type($result)";
}


//===----------------------------------------------------------------------===//
// Fused matmuls (zcc-fuse): a matmul and the elementwise work around it as one
// op, so the CUDA backend runs it as one cuBLASLt call with an epilogue. Each is
// defined as the unfused ops it replaces; the CPU backend runs exactly those.
//===----------------------------------------------------------------------===//

def ZC_MatmulBiasOp : ZC_ComputeOp<"matmul_bias"> {
  let summary = "bias_add(matmul(lhs, rhs), bias)";
  let description = [{
    Example: `%y = zc.matmul_bias %x, %w, %b : tensor<8x64x128xf32>, tensor<128x512xf32>, tensor<512xf32> -> tensor<8x64x512xf32>`
  }];
  let arguments = (ins ZC_FloatTensor:$lhs, ZC_FloatTensor:$rhs, ZC_FloatTensor:$bias,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $bias (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)?
    attr-dict `:` type($lhs) `,` type($rhs) `,` type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

def ZC_AddLayerNormOp : ZC_ComputeOp<"add_layernorm", [
    AllTypesMatch<["lhs", "rhs", "sum", "result"]>, AllTypesMatch<["gamma", "beta"]>]> {
  let summary = "sum = add(lhs, rhs); result = layernorm(sum, gamma, beta)";
  let description = [{
    A residual add and the layernorm that reads it (zcc-fuse): each row is
    normalized while its sum is still in cache. Both are results: the residual
    stream goes on, and the backward pass reads the layernorm's input.

    Example:
    ```mlir
    %sum, %y = zc.add_layernorm %x, %attn, %g, %b : tensor<8x64x128xf32>, tensor<128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$lhs, ZC_FloatTensor:$rhs, ZC_FloatTensor:$gamma, ZC_FloatTensor:$beta,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs ZC_FloatTensor:$sum, ZC_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs `,` $gamma `,` $beta attr-dict `:` type($lhs) `,` type($gamma)";
  let hasVerifier = 1;
}

def ZC_LayerNormGradAddOp : ZC_ComputeOp<"layernorm_grad_add", [
    AllTypesMatch<["grad", "input", "residual", "input_grad"]>,
    AllTypesMatch<["gamma", "gamma_grad", "beta_grad"]>]> {
  let summary = "layernorm_grad, its input gradient added to another gradient of the same value";
  let description = [{
    `input_grad = residual + layernorm_grad(grad, input, gamma).input_grad`,
    with the gain and shift gradients as `layernorm_grad` returns them: the
    backward of a residual stream read by a layernorm and by the next add
    (zcc-fuse), one pass over the rows instead of two.

    Example:
    ```mlir
    %dx, %dg, %db = zc.layernorm_grad_add %dy, %x, %g, %dres : tensor<8x64x128xf32>, tensor<128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$input, ZC_FloatTensor:$gamma,
                       ZC_FloatTensor:$residual, DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs ZC_FloatTensor:$input_grad, ZC_FloatTensor:$gamma_grad, ZC_FloatTensor:$beta_grad);
  let assemblyFormat = "$grad `,` $input `,` $gamma `,` $residual attr-dict `:` type($input) `,` type($gamma)";
  let hasVerifier = 1;
}

def ZC_SwigluOp : ZC_ComputeOp<"swiglu", [SameOperandsAndResultType]> {
  let summary = "result = mul(silu(gate), up): the SwiGLU product, one pass";
  let description = [{
    Llama's MLP activation (zcc-fuse, from `silu` and `mul`): silu(gate)
    rounded to the element type, then times `up`, as the two ops compute it.

    Example:
    ```mlir
    %h = zc.swiglu %gate, %up : tensor<8x64x688xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$gate, ZC_FloatTensor:$up);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def ZC_SwigluGradOp : ZC_ComputeOp<"swiglu_grad", [AllTypesMatch<["grad", "gate", "up", "gate_grad", "up_grad"]>]> {
  let summary = "Gradient of swiglu: (silu_grad(grad * up, gate), grad * silu(gate)) in one pass";
  let description = [{
    The three ops autodiff writes for `mul(silu(gate), up)` (zcc-fuse), with
    their roundings: `gate_grad = silu_grad(mul(grad, up), gate)`,
    `up_grad = mul(grad, silu(gate))`; silu(gate) is recomputed, not read.

    Example:
    ```mlir
    %dgate, %dup = zc.swiglu_grad %dh, %gate, %up : tensor<8x64x688xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$gate, ZC_FloatTensor:$up);
  let results = (outs ZC_FloatTensor:$gate_grad, ZC_FloatTensor:$up_grad);
  let assemblyFormat = "$grad `,` $gate `,` $up attr-dict `:` type($grad)";
}

def ZC_MatmulBiasGeluOp : ZC_ComputeOp<"matmul_bias_gelu"> {
  let summary = "pre = bias_add(matmul(lhs, rhs), bias); result = gelu(pre)";
  let description = [{
    Both are results: the backward pass reads `pre` (GELU's gradient needs it),
    cuBLASLt writes it as the epilogue's auxiliary output.

    Example:
    ```mlir
    %pre, %y = zc.matmul_bias_gelu %x, %w, %b : tensor<8x64x128xf32>, tensor<128x512xf32>, tensor<512xf32> -> tensor<8x64x512xf32>, tensor<8x64x512xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$lhs, ZC_FloatTensor:$rhs, ZC_FloatTensor:$bias,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs ZC_FloatTensor:$pre, ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $bias (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)?
    attr-dict `:` type($lhs) `,` type($rhs) `,` type($bias) `->` type($pre) `,` type($result)
  }];
  let hasVerifier = 1;
}

def ZC_MatmulDgeluBgradOp : ZC_ComputeOp<"matmul_dgelu_bgrad"> {
  let summary = "dpre = gelu_grad(matmul(lhs, rhs), pre); dbias = reduce_sum(dpre) over all but the last axis";
  let description = [{
    The backward of `zc.matmul_bias_gelu`'s GELU and bias, fused into the matmul
    that produces GELU's incoming gradient.

    Example:
    ```mlir
    %dpre, %db = zc.matmul_dgelu_bgrad %g, %w2, %pre transpose_rhs : tensor<8x64x128xf32>, tensor<512x128xf32>, tensor<8x64x512xf32> -> tensor<8x64x512xf32>, tensor<512xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$lhs, ZC_FloatTensor:$rhs, ZC_FloatTensor:$pre,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs ZC_FloatTensor:$dpre, ZC_FloatTensor:$dbias);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $pre (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)?
    attr-dict `:` type($lhs) `,` type($rhs) `,` type($pre) `->` type($dpre) `,` type($dbias)
  }];
  let hasVerifier = 1;
}

def ZC_MatmulCrossEntropyOp : ZC_ComputeOp<"matmul_cross_entropy",
    [AllTypesMatch<["input", "input_grad"]>, AllTypesMatch<["weight", "weight_grad"]>]> {
  let summary = "A language-model head and its mean cross-entropy, forward and backward, a chunk of rows at a time";
  let description = [{
    Replaces, for `rows` = the positions of `input` (`[S..., channels]`) and
    `classes` = the vocabulary of `weight` (`[classes, channels]` with
    `transpose_weight`, else `[channels, classes]`):

    ```
    logits      = matmul(input, weight)            // [S..., classes]
    loss        = cross_entropy(logits, labels)
    dlogits     = cross_entropy_grad(grad, logits, labels)
    input_grad  = matmul(dlogits, weight^T)
    weight_grad = matmul(dlogits^T, input)         // input^T dlogits untransposed
    ```

    without the `[S..., classes]` logits and their gradient: `chunk_rows` rows
    at a time, the chunk's logits are computed, turned into their gradient in
    place, and multiplied out into `input_grad`'s rows and a contribution to
    `weight_grad`. At a 50K vocabulary the logits of a GPT-2 step are
    gigabytes; the chunk is what the fusion pass budgets.

    `workspace` is that chunk and the per-row losses (and, for bf16 over
    several chunks, `weight_grad`'s f32 running sum): an i8 buffer no other op
    reads, a result so that the memory plan places it. Its size is
    `zrt::MatmulCrossEntropyLayout` of the shapes. `grad` is d loss, the
    backward seed: the op runs where the backward pass starts.

    With one chunk the results are bitwise those of the ops it replaces;
    over several, `weight_grad` sums the chunks' products in chunk order (in
    f32 for bf16, rounded once). `softcap` as `zc.cross_entropy`'s.

    Example:
    ```mlir
    %loss, %dx, %dw, %ws = zc.matmul_cross_entropy %x, %wte, %labels, %seed transpose_weight chunk_rows 512 : tensor<4x1024x768xf32>, tensor<50304x768xf32>, tensor<4x1024xi32> -> tensor<103048192xi8>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_FloatTensor:$weight, ZC_IndexTensor:$labels,
                       ZC_LossTensor:$grad, UnitAttr:$transpose_weight, I64Attr:$chunk_rows,
                       OptionalAttr<F64Attr>:$softcap);
  let results = (outs ZC_LossTensor:$loss, ZC_FloatTensor:$input_grad, ZC_FloatTensor:$weight_grad,
                      StaticShapeTensorOf<[I8]>:$workspace);
  let assemblyFormat = [{
    $input `,` $weight `,` $labels `,` $grad (`transpose_weight` $transpose_weight^)? `chunk_rows` $chunk_rows
    (`softcap` $softcap^)? attr-dict `:` type($input) `,` type($weight) `,` type($labels) `->` type($workspace)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight, "::mlir::Value":$labels,
                   "::mlir::Value":$grad, "bool":$transposeWeight, "int64_t":$chunkRows,
                   CArg<"double", "0.0">:$softcap)>
  ];
  let extraClassDeclaration = [{
    /// The workspace's type for these operands and chunk (zrt::MatmulCrossEntropyLayout).
    static ::mlir::RankedTensorType workspaceType(::mlir::RankedTensorType input, ::mlir::RankedTensorType weight,
                                                  int64_t chunkRows);
  }];
  let hasVerifier = 1;
}

def ZC_MatmulCrossEntropyLossOp : ZC_ComputeOp<"matmul_cross_entropy_loss"> {
  let summary = "A language-model head's mean cross-entropy alone, a chunk of rows at a time";
  let description = [{
    The loss of `zc.matmul_cross_entropy` without its backward, for a function
    that only evaluates the loss (the eval function train.bin runs on held-out
    batches): replaces

    ```
    logits = matmul(input, weight)            // [S..., classes]
    loss   = cross_entropy(logits, labels)
    ```

    without the `[S..., classes]` logits: `chunk_rows` rows at a time, the
    chunk's logits are computed in `workspace` and each row's loss taken from
    them; the mean runs over rows in order, as `cross_entropy`'s. With one
    chunk the result is bitwise that of the ops it replaces; `softcap` as
    `zc.cross_entropy`'s. `workspace` (i8,
    a result so that the memory plan places it) holds the per-row losses and
    one chunk: `zrt::MatmulCrossEntropyLayout::forLoss` of the shapes.

    Example:
    ```mlir
    %loss, %ws = zc.matmul_cross_entropy_loss %x, %wte, %labels transpose_weight chunk_rows 640 : tensor<4x1024x768xf32>, tensor<50304x768xf32>, tensor<4x1024xi32> -> tensor<128778496xi8>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_FloatTensor:$weight, ZC_IndexTensor:$labels,
                       UnitAttr:$transpose_weight, I64Attr:$chunk_rows, OptionalAttr<F64Attr>:$softcap);
  let results = (outs ZC_LossTensor:$loss, StaticShapeTensorOf<[I8]>:$workspace);
  let assemblyFormat = [{
    $input `,` $weight `,` $labels (`transpose_weight` $transpose_weight^)? `chunk_rows` $chunk_rows
    (`softcap` $softcap^)? attr-dict `:` type($input) `,` type($weight) `,` type($labels) `->` type($workspace)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight, "::mlir::Value":$labels,
                   "bool":$transposeWeight, "int64_t":$chunkRows, CArg<"double", "0.0">:$softcap)>
  ];
  let extraClassDeclaration = [{
    /// The workspace's type for these operands and chunk (zrt::MatmulCrossEntropyLayout::forLoss).
    static ::mlir::RankedTensorType workspaceType(::mlir::RankedTensorType input, ::mlir::RankedTensorType weight,
                                                  int64_t chunkRows);
  }];
  let hasVerifier = 1;
}

#endif // ZC_COMPUTE_OPS_TD
