//===- ZcGradOps.td - backward ops that autodiff emits ---------------------===//
//
// Only ops whose gradient is not already a short composition of forward ops get
// a backward op here (the matmul gradient is two matmuls, the add gradient is
// the incoming gradient itself). docs/dialect.md lists every op's rule.
// Convention: the incoming gradient (`grad`, d loss / d result) comes first,
// then the forward values the rule needs.
//
//===----------------------------------------------------------------------===//

#ifndef ZC_GRAD_OPS_TD
#define ZC_GRAD_OPS_TD

def ZC_ReluGradOp : ZC_ComputeOp<"relu_grad", [SameOperandsAndResultType]> {
  let summary = "Gradient of relu";
  let description = [{
    `result[i] = input[i] > 0 ? grad[i] : 0`, where `input` is relu's input.

    Example:

    ```mlir
    %dx = zc.relu_grad %dy, %x : tensor<32x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$input);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($result)";
}

def ZC_GeluGradOp : ZC_ComputeOp<"gelu_grad", [SameOperandsAndResultType]> {
  let summary = "Gradient of gelu";
  let description = [{
    `result[i] = grad[i] * gelu'(input[i])` with the derivative of the tanh
    approximation (with `exact`, of the erf form), where `input` is gelu's input.

    Example:

    ```mlir
    %dx = zc.gelu_grad %dy, %x : tensor<8x64x512xf32>
    %de = zc.gelu_grad %dy, %x exact : tensor<8x64x512xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$input, UnitAttr:$exact);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input (`exact` $exact^)? attr-dict `:` type($result)";
}

def ZC_SiluGradOp : ZC_ComputeOp<"silu_grad", [SameOperandsAndResultType]> {
  let summary = "Gradient of silu";
  let description = [{
    `result[i] = grad[i] * s (1 + x (1 - s))` with `s = sigmoid(x)`, where
    `x = input[i]` is silu's input.

    Example:

    ```mlir
    %dx = zc.silu_grad %dy, %x : tensor<8x64x688xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$input);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($result)";
}

def ZC_SoftmaxGradOp : ZC_ComputeOp<"softmax_grad", [SameOperandsAndResultType]> {
  let summary = "Gradient of softmax over the last axis";
  let description = [{
    `result = output * (grad - sum(grad * output, last axis))`, where `output`
    is softmax's result.

    Example:

    ```mlir
    %dx = zc.softmax_grad %dy, %p : tensor<8x4x64x64xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$output);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($result)";
}

def ZC_LayerNormGradOp : ZC_ComputeOp<"layernorm_grad", [
    AllTypesMatch<["grad", "input", "input_grad"]>,
    AllTypesMatch<["gamma", "gamma_grad", "beta_grad"]>]> {
  let summary = "Gradient of layernorm with respect to input, gamma and beta";
  let description = [{
    Recomputes the mean and reciprocal standard deviation of `input` over the
    last axis (cheaper than storing them for the sizes zcc targets) and
    returns `(d input, d gamma, d beta)`. `epsilon` must equal the forward
    op's.

    Example:

    ```mlir
    %dx, %dg, %db = zc.layernorm_grad %dy, %x, %g : tensor<8x64x128xf32>, tensor<128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$input, ZC_FloatTensor:$gamma,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs ZC_FloatTensor:$input_grad, ZC_FloatTensor:$gamma_grad,
                      ZC_FloatTensor:$beta_grad);
  let assemblyFormat = "$grad `,` $input `,` $gamma attr-dict `:` type($input) `,` type($gamma)";
  let hasVerifier = 1;
}

def ZC_RmsNormGradOp : ZC_ComputeOp<"rmsnorm_grad", [
    AllTypesMatch<["grad", "input", "input_grad"]>, AllTypesMatch<["gamma", "gamma_grad"]>]> {
  let summary = "Gradient of rmsnorm with respect to input and gamma";
  let description = [{
    Recomputes each row's reciprocal root mean square `r` of `input` and returns
    `(d input, d gamma)`: with `n = x r` and `g = grad * gamma`,
    `d input = r (g - n mean(g n))` and `d gamma` the sum over rows of
    `grad * n`. `epsilon` and `gain_offset` must equal the forward op's (the
    offset adds to gamma where `d input` reads it).

    Example:

    ```mlir
    %dx, %dg = zc.rmsnorm_grad %dy, %x, %g : tensor<8x64x256xf32>, tensor<256xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$input, ZC_FloatTensor:$gamma,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon, OptionalAttr<F64Attr>:$gain_offset);
  let results = (outs ZC_FloatTensor:$input_grad, ZC_FloatTensor:$gamma_grad);
  let assemblyFormat = "$grad `,` $input `,` $gamma attr-dict `:` type($input) `,` type($gamma)";
  let extraClassDeclaration = [{
    double getGainOffsetOrZero() { return getGainOffset() ? getGainOffset()->convertToDouble() : 0.0; }
  }];
  let hasVerifier = 1;
}

def ZC_CausalAttentionGradOp : ZC_ComputeOp<"causal_attention_grad", [
    AllTypesMatch<["grad", "query", "query_grad"]>, AllTypesMatch<["key", "value", "key_grad", "value_grad"]>]> {
  let summary = "Gradient of causal_attention with respect to q, k and v";
  let description = [{
    Recomputes the attention probabilities from `query` and `key` (as flash
    attention's backward does, so the `[B, H, T, T]` matrix is never stored
    between forward and backward) and returns `(d query, d key, d value)`.
    With `kv_heads`, the gradient of a key/value head sums over the query
    heads of its group. `scale`, `softcap` and `window` as the forward's.

    Example:

    ```mlir
    %dq, %dk, %dv = zc.causal_attention_grad %dy, %q, %k, %v heads 4 : tensor<8x64x128xf32>
    %dq2, %dk2, %dv2 = zc.causal_attention_grad %dy, %q, %k2, %v2 heads 8 kv_heads 2 : tensor<8x64x256xf32>, tensor<8x64x64xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$query, ZC_FloatTensor:$key,
                       ZC_FloatTensor:$value, ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$num_kv_heads,
                       OptionalAttr<F64Attr>:$scale, OptionalAttr<F64Attr>:$softcap,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$window);
  let results = (outs ZC_FloatTensor:$query_grad, ZC_FloatTensor:$key_grad,
                      ZC_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $grad `,` $query `,` $key `,` $value `heads` $num_heads (`kv_heads` $num_kv_heads^)? (`scale` $scale^)?
    (`softcap` $softcap^)? (`window` $window^)? attr-dict `:`
    custom<AttentionTypes>(type($query), type($key), type($value), type($grad))
  }];
  let extraClassDeclaration = [{
    int64_t getKvHeads() { return getNumKvHeads() ? *getNumKvHeads() : getNumHeads(); }
    ::mlir::zc::AttentionVariant getVariant() {
      return ::mlir::zc::AttentionVariant::of(getOperation());
    }
  }];
  let hasVerifier = 1;
}

def ZC_EmbeddingGradOp : ZC_ComputeOp<"embedding_grad"> {
  let summary = "Gradient of embedding: a scatter-add into the table's shape";
  let description = [{
    `result` has the table's shape `[V, C]`, starts at zero, and gets
    `grad[s..., :]` added to row `ids[s...]` for every position; repeated ids
    accumulate.

    Example:

    ```mlir
    %dwte = zc.embedding_grad %dx[%tokens] : tensor<8x64x128xf32>, tensor<8x64xi32> -> tensor<256x128xf32>
    ```

    `vocab_shards` as in `zc.embedding`: only ids in this rank's rows add.
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_IndexTensor:$ids,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$vocab_shards);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$grad `[` $ids `]` attr-dict `:` type($grad) `,` type($ids) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_CrossEntropyGradOp : ZC_ComputeOp<"cross_entropy_grad",
    [AllTypesMatch<["logits", "result"]>]> {
  let summary = "Gradient of the mean cross-entropy with respect to the logits";
  let description = [{
    `result[s, :] = grad * (softmax(logits[s, :]) - onehot(labels[s])) / P`,
    where `P` is the number of positions and `grad` the scalar d loss.

    Example:

    ```mlir
    %dlogits = zc.cross_entropy_grad %dl, %logits, %targets : tensor<8x64x256xf32>, tensor<8x64xi32>
    ```

    `vocab_shards` as in `zc.cross_entropy`: this rank's classes of the
    softmax over the whole vocabulary. With `softcap C` the softmax is of
    `C tanh(logits / C)` and each class' gradient is multiplied by the cap's
    slope `1 - tanh^2(logits / C)`.
  }];
  let arguments = (ins ZC_LossTensor:$grad, ZC_FloatTensor:$logits, ZC_IndexTensor:$labels,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$vocab_shards,
                       OptionalAttr<F64Attr>:$softcap);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $logits `,` $labels (`softcap` $softcap^)? attr-dict `:` type($logits) `,` type($labels)
  }];
  let hasVerifier = 1;
}

def ZC_MseGradOp : ZC_ComputeOp<"mse_grad",
    [AllTypesMatch<["prediction", "target", "result"]>]> {
  let summary = "Gradient of the mean squared error with respect to the prediction";
  let description = [{
    `result[i] = grad * 2 (prediction[i] - target[i]) / numel`.

    Example:

    ```mlir
    %dp = zc.mse_grad %dl, %pred, %y : tensor<32x1xf32>
    ```
  }];
  let arguments = (ins ZC_LossTensor:$grad, ZC_FloatTensor:$prediction, ZC_FloatTensor:$target);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $prediction `,` $target attr-dict `:` type($result)";
}

def ZC_ReduceSumOp : ZC_ComputeOp<"reduce_sum"> {
  let summary = "Sums over a set of axes, dropping them";
  let description = [{
    The gradient of every broadcast: `bias_add`'s bias gradient sums over all
    leading axes, a matmul with a shared 2-D `rhs` sums over the batch.
    `axes` are distinct, sorted and in range; the result's shape is the
    input's without them. Accumulates in f32.

    Example:

    ```mlir
    %db = zc.reduce_sum %dy [0, 1] : tensor<8x64x512xf32> -> tensor<512xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input $axes attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_SliceGradOp : ZC_ComputeOp<"slice_grad"> {
  let summary = "Gradient of slice: places a box into a zero tensor";
  let description = [{
    The result has the sliced input's shape, is zero everywhere but the box
    at `offsets` with the shape of `grad`, which holds `grad`.

    Example:

    ```mlir
    %dqkv = zc.slice_grad %dq [0, 0, 0] : tensor<8x64x128xf32> -> tensor<8x64x384xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, DenseI64ArrayAttr:$offsets);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$grad $offsets attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

#endif // ZC_GRAD_OPS_TD
