//===- ZcMoeOps.td - Mixture-of-Experts routing and expert products ---------===//
//
// A MoE feed-forward layer (Mixtral, Qwen2/3-MoE, OLMoE, DeepSeek-V3's routed experts) is
// composed of these and the ordinary ops:
//
//   %logits = zc.matmul %x, %router                       [B, T, E]
//   %w, %experts, %rows, %offsets = zc.moe_route %logits top_k 2 normalize
//   %xs = zc.moe_dispatch %x, %rows                        [B T k, C]
//   %g = zc.grouped_matmul %xs, %w_gate, %offsets          [B T k, F]  (and %u, the up product)
//   %h = zc.mul (zc.silu %g), %u
//   %ys = zc.grouped_matmul %h, %w_down, %offsets          [B T k, C]
//   %y = zc.moe_combine %ys, %w, %rows                     [B, T, C]
//
// Dropless: every (token, choice) gets a row, so the dispatched tensors are [tokens x k, ...]
// whatever the routing and the memory plan is exact; only how those rows divide among the
// experts (`offsets`) is known at run time. With a capacity factor each expert keeps at most its
// capacity and the dispatched tensors have min(tokens x k, experts x capacity) rows
// (runtime/include/zrt/MoeLayout.h). The routing's integer results carry no gradient.
//
//===----------------------------------------------------------------------===//

#ifndef ZC_MOE_OPS_TD
#define ZC_MOE_OPS_TD

// The attributes every routing op repeats (the forward's, so a backward recomputes the same scores).
class ZC_MoeOp<string mnemonic, list<Trait> traits = []> : ZC_ComputeOp<mnemonic, traits>;

def ZC_MoeRouteOp : ZC_MoeOp<"moe_route"> {
  let summary = "Choose each token's top-k experts and lay out the dispatched rows";
  let description = [{
    `logits` is `[S..., E]`: each token's router logits. Its scores are the softmax over the
    experts (Mixtral, Qwen, OLMoE) or, with `sigmoid`, each expert's sigmoid (DeepSeek-V3).
    Each token chooses the `top_k` highest scores (plus `bias` `[E]` where given:
    DeepSeek-V3's aux-loss-free balancing bias, which only chooses; ties go to the lower
    expert), in descending order. A `bias` that is a parameter gets no gradient: after each
    step train.bin adds `rate x sign(mean load - load)` to it, each expert's load being the
    choices it got over the step's micro-batches on every rank (DeepSeek-V3, section 2.1.2;
    Megatron-Core's `--moe-router-enable-expert-bias`):

    - `weights` `[S..., k]`: the chosen scores, divided by their sum with `normalize`
      (Mixtral; Qwen's `norm_topk_prob`), times `scale` (DeepSeek-V3's routed scaling factor);
    - `experts` `[S..., k]` (i32): the chosen experts;
    - `rows` `[S..., k]` (i32): each choice's row in the dispatched order, where the
      `S x k` rows are grouped by expert, in expert order, tokens in order within one;
    - `offsets` `[E + 1]` (i32): where each expert's rows start (`offsets[E]`: the rows kept,
      `S x k` dropless).

    Rows go to an expert in priority order: every token's first choice in token order, then
    every second choice, ... With `capacity_factor f` (GShard, DeepSpeed's gating) expert `e`
    keeps at most `C = ceil(f S k / E)` rows and a choice past it is dropped: its row is -1, its
    weight 0 (the token's other choices renormalized with `normalize`), and a token whose
    choices all drop passes through the layer's residual alone. The dispatched tensors then have
    `min(S k, E C)` rows.

    Example:

    ```mlir
    %w, %e, %r, %o = zc.moe_route %logits top_k 2 normalize
        : tensor<8x64x8xf32> -> tensor<8x64x2xf32>, tensor<8x64x2xi32>, tensor<8x64x2xi32>, tensor<9xi32>
    %w, %e, %r, %o = zc.moe_route %logits top_k 2 normalize capacity_factor 1.25
        : tensor<8x64x8xf32> -> tensor<8x64x2xf32>, tensor<8x64x2xi32>, tensor<8x64x2xi32>, tensor<9xi32>
    %w, %e, %r, %o = zc.moe_route %logits bias %b : tensor<8xf32> top_k 2 sigmoid normalize scale 2.5
        groups 4 topk_groups 2
        : tensor<8x64x8xf32> -> tensor<8x64x2xf32>, tensor<8x64x2xi32>, tensor<8x64x2xi32>, tensor<9xi32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$logits, Optional<ZC_FloatTensor>:$bias,
                       ConfinedAttr<I64Attr, [IntPositive]>:$top_k, UnitAttr:$sigmoid, UnitAttr:$normalize,
                       DefaultValuedAttr<F64Attr, "1.0">:$scale, OptionalAttr<F64Attr>:$capacity_factor,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$groups,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$topk_groups);
  let results = (outs ZC_FloatTensor:$weights, ZC_IndexTensor:$experts, ZC_IndexTensor:$rows,
                      ZC_IndexTensor:$offsets);
  let assemblyFormat = [{
    $logits (`bias` $bias^ `:` type($bias))? `top_k` $top_k (`sigmoid` $sigmoid^)? (`normalize` $normalize^)?
    (`scale` $scale^)? (`capacity_factor` $capacity_factor^)? (`groups` $groups^)? (`topk_groups` $topk_groups^)?
    attr-dict `:` type($logits) `->` type($weights) `,` type($experts) `,` type($rows) `,` type($offsets)
  }];
  let extraClassDeclaration = [{
    /// 0 (dropless) or the factor.
    double getCapacityFactorOrZero() { return getCapacityFactor() ? getCapacityFactor()->convertToDouble() : 0.0; }
    /// The dispatched tensors' rows (zrt::moeDispatchedRows).
    int64_t getDispatchedRows();
    /// The parameter `bias` reads (through zc.param_ref, ZeRO-3's zc.gather_param, casts and
    /// views), or null: the bias train.bin moves after each step by the routings' loads.
    ::mlir::StringAttr getBiasParam();
  }];
  let hasVerifier = 1;
}

def ZC_MoeRouteGradOp : ZC_MoeOp<"moe_route_grad", [AllTypesMatch<["logits", "result"]>,
                                                       AllTypesMatch<["experts", "rows"]>]> {
  let summary = "Gradient of moe_route's weights with respect to the router logits";
  let description = [{
    `grad` is d loss / d `weights`; the scores are recomputed from `logits` and the choice
    (`experts`, and which were kept: `rows`) is the forward's: it is piecewise constant in the
    logits, so no gradient flows through it. The attributes must equal the forward's.

    ```mlir
    %dl = zc.moe_route_grad %dw, %logits, %e, %r top_k 2 normalize
        : tensor<8x64x2xf32>, tensor<8x64x8xf32>, tensor<8x64x2xi32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$logits, ZC_IndexTensor:$experts,
                       ZC_IndexTensor:$rows, ConfinedAttr<I64Attr, [IntPositive]>:$top_k, UnitAttr:$sigmoid,
                       UnitAttr:$normalize, DefaultValuedAttr<F64Attr, "1.0">:$scale);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $logits `,` $experts `,` $rows `top_k` $top_k (`sigmoid` $sigmoid^)? (`normalize` $normalize^)?
    (`scale` $scale^)? attr-dict `:` type($grad) `,` type($logits) `,` type($experts)
  }];
  let hasVerifier = 1;
}

def ZC_MoeDispatchOp : ZC_MoeOp<"moe_dispatch"> {
  let summary = "Copy each token to the rows of its chosen experts";
  let description = [{
    `input` `[S..., C]`, `rows` `[S..., k]` (moe_route's): `result[rows[s, j]] = input[s]` for
    each kept choice, a `[R, C]` tensor grouped by expert (`R = S x k` dropless, at most that
    with a capacity: moe_route's dispatched rows; the rows past the kept ones are zero).

    ```mlir
    %xs = zc.moe_dispatch %x, %r : tensor<8x64x32xf32>, tensor<8x64x2xi32> -> tensor<1024x32xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_IndexTensor:$rows);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `,` $rows attr-dict `:` type($input) `,` type($rows) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_MoeDispatchGradOp : ZC_MoeOp<"moe_dispatch_grad"> {
  let summary = "Gradient of moe_dispatch: each token's rows summed";
  let description = [{
    `result[s] = sum_j grad[rows[s, j]]` over the kept choices (in choice order).

    ```mlir
    %dx = zc.moe_dispatch_grad %dxs, %r : tensor<1024x32xf32>, tensor<8x64x2xi32> -> tensor<8x64x32xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_IndexTensor:$rows);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $rows attr-dict `:` type($grad) `,` type($rows) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_GroupedMatmulOp : ZC_MoeOp<"grouped_matmul"> {
  let summary = "Each expert's rows times that expert's weight";
  let description = [{
    `input` `[M, K]` holds the rows of each expert `e` at `[offsets[e], offsets[e + 1])`;
    `weight` is `[E, K, N]`, or with `transpose_rhs` `[E, N, K]` (each expert a linear layer's
    `[out, in]`, Hugging Face's layout); `result[i] = input[i] x weight[e]` (`x weight[e]^T`) for
    the expert `e` whose rows hold `i`: one product per expert at its real row count (the
    runtime's matmul paths), not one per token. `offsets` is moe_route's `[E + 1]`.

    ```mlir
    %g = zc.grouped_matmul %xs, %w1, %o : tensor<1024x32xf32>, tensor<8x32x64xf32>, tensor<9xi32> -> tensor<1024x64xf32>
    %u = zc.grouped_matmul %xs, %w3, %o transpose_rhs : tensor<1024x32xf32>, tensor<8x64x32xf32>, tensor<9xi32> -> tensor<1024x64xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_FloatTensor:$weight, ZC_IndexTensor:$offsets,
                       UnitAttr:$transpose_rhs);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $offsets (`transpose_rhs` $transpose_rhs^)? attr-dict `:` type($input) `,` type($weight) `,`
    type($offsets) `->` type($result)
  }];
  let hasVerifier = 1;
}

def ZC_GroupedMatmulGradOp : ZC_MoeOp<"grouped_matmul_grad", [AllTypesMatch<["input", "input_grad"]>,
                                                             AllTypesMatch<["weight", "weight_grad"]>]> {
  let summary = "Gradient of grouped_matmul with respect to its rows and its weights";
  let description = [{
    Per expert: `d input = grad x weight[e]^T` on its rows, `d weight[e] = input^T x grad` over
    them (zero for an expert no row reached); with `transpose_rhs` (weights `[E, N, K]`)
    `d input = grad x weight[e]` and `d weight[e] = grad^T x input`.

    ```mlir
    %dxs, %dw = zc.grouped_matmul_grad %dg, %xs, %w1, %o
        : tensor<1024x64xf32>, tensor<1024x32xf32>, tensor<8x32x64xf32>, tensor<9xi32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$input, ZC_FloatTensor:$weight,
                       ZC_IndexTensor:$offsets, UnitAttr:$transpose_rhs);
  let results = (outs ZC_FloatTensor:$input_grad, ZC_FloatTensor:$weight_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $weight `,` $offsets (`transpose_rhs` $transpose_rhs^)? attr-dict `:` type($grad) `,`
    type($input) `,` type($weight) `,` type($offsets)
  }];
  let hasVerifier = 1;
}

def ZC_MoeCombineOp : ZC_MoeOp<"moe_combine"> {
  let summary = "Each token's expert outputs, weighted and summed";
  let description = [{
    `input` `[R, C]` (the experts' rows), `weights` and `rows` `[S..., k]` (moe_route's):
    `result[s] = sum_j weights[s, j] input[rows[s, j]]` over the kept choices, `[S..., C]`.

    ```mlir
    %y = zc.moe_combine %ys, %w, %r : tensor<1024x32xf32>, tensor<8x64x2xf32>, tensor<8x64x2xi32> -> tensor<8x64x32xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_FloatTensor:$weights, ZC_IndexTensor:$rows);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weights `,` $rows attr-dict `:` type($input) `,` type($weights) `,` type($rows) `->` type($result)
  }];
  let hasVerifier = 1;
}

def ZC_MoeCombineGradOp : ZC_MoeOp<"moe_combine_grad", [AllTypesMatch<["input", "input_grad"]>,
                                                       AllTypesMatch<["weights", "weights_grad"]>]> {
  let summary = "Gradient of moe_combine with respect to the expert rows and the weights";
  let description = [{
    `d input[rows[s, j]] = weights[s, j] grad[s]`, `d weights[s, j] = <grad[s], input[rows[s, j]]>`
    for the kept choices; a dropped choice's weight gets 0, the rows past the kept ones 0.

    ```mlir
    %dys, %dw = zc.moe_combine_grad %dy, %ys, %w, %r
        : tensor<8x64x32xf32>, tensor<1024x32xf32>, tensor<8x64x2xf32>, tensor<8x64x2xi32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$input, ZC_FloatTensor:$weights,
                       ZC_IndexTensor:$rows);
  let results = (outs ZC_FloatTensor:$input_grad, ZC_FloatTensor:$weights_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $weights `,` $rows attr-dict `:` type($grad) `,` type($input) `,` type($weights) `,`
    type($rows)
  }];
  let hasVerifier = 1;
}

def ZC_MoeSharedGateOp : ZC_MoeOp<"moe_shared_gate", [AllTypesMatch<["shared", "result"]>]> {
  let summary = "A shared expert's output scaled by its token's sigmoid gate (Qwen2-MoE)";
  let description = [{
    `result[s] = shared[s] * sigmoid(gate[s])`: `shared` `[S..., C]` (the shared expert's
    output), `gate` `[S..., 1]` (its gate's logit, one per token; Qwen2-MoE's
    `shared_expert_gate`), computed in f32.

    ```mlir
    %y = zc.moe_shared_gate %shared, %g : tensor<8x64x32xf32>, tensor<8x64x1xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$shared, ZC_FloatTensor:$gate);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$shared `,` $gate attr-dict `:` type($shared) `,` type($gate)";
  let hasVerifier = 1;
}

def ZC_MoeSharedGateGradOp : ZC_MoeOp<"moe_shared_gate_grad", [AllTypesMatch<["grad", "shared", "shared_grad"]>,
                                                               AllTypesMatch<["gate", "gate_grad"]>]> {
  let summary = "Gradient of moe_shared_gate with respect to the shared output and the gate";
  let description = [{
    `d shared[s] = grad[s] sigmoid(gate[s])`, `d gate[s] = <grad[s], shared[s]> sigmoid'(gate[s])`.

    ```mlir
    %ds, %dg = zc.moe_shared_gate_grad %dy, %shared, %g : tensor<8x64x32xf32>, tensor<8x64x1xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$grad, ZC_FloatTensor:$shared, ZC_FloatTensor:$gate);
  let results = (outs ZC_FloatTensor:$shared_grad, ZC_FloatTensor:$gate_grad);
  let assemblyFormat = "$grad `,` $shared `,` $gate attr-dict `:` type($shared) `,` type($gate)";
  let hasVerifier = 1;
}

def ZC_MoeAuxLossOp : ZC_MoeOp<"moe_aux_loss"> {
  let summary = "The load-balancing auxiliary loss (Switch Transformer, Mixtral)";
  let description = [{
    `coef E sum_e f_e P_e` over the tokens of `logits` `[S..., E]`: `f_e` the fraction of the
    `S x k` choices (moe_route's `experts` `[S..., k]`) that chose expert `e`, before any
    capacity drops them (DeepSpeed's gating counts them so), `P_e` the mean score of expert `e`
    (softmax, or with `sigmoid` each sigmoid, as the router's). `f` is counted, not
    differentiated (Mixtral's `load_balancing_loss_func`, `router_aux_loss_coef`). A scalar f32
    loss to add to the model's.

    ```mlir
    %aux = zc.moe_aux_loss %logits, %e coef 0.02 : tensor<8x64x8xf32>, tensor<8x64x2xi32> -> tensor<f32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$logits, ZC_IndexTensor:$experts, F64Attr:$coef, UnitAttr:$sigmoid);
  let results = (outs ZC_LossTensor:$result);
  let assemblyFormat = [{
    $logits `,` $experts `coef` $coef (`sigmoid` $sigmoid^)? attr-dict `:` type($logits) `,` type($experts) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def ZC_MoeAuxLossGradOp : ZC_MoeOp<"moe_aux_loss_grad", [AllTypesMatch<["logits", "result"]>]> {
  let summary = "Gradient of moe_aux_loss with respect to the router logits";
  let description = [{
    `grad` (a 0-d f32) times d aux / d logits through the scores, the counts fixed.

    ```mlir
    %dl = zc.moe_aux_loss_grad %d, %logits, %e coef 0.02 : tensor<8x64x8xf32>, tensor<8x64x2xi32>
    ```
  }];
  let arguments = (ins ZC_LossTensor:$grad, ZC_FloatTensor:$logits, ZC_IndexTensor:$experts, F64Attr:$coef,
                       UnitAttr:$sigmoid);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $logits `,` $experts `coef` $coef (`sigmoid` $sigmoid^)? attr-dict `:` type($logits) `,`
    type($experts)
  }];
  let hasVerifier = 1;
}

def ZC_MoeZLossOp : ZC_MoeOp<"moe_z_loss"> {
  let summary = "The router z-loss (ST-MoE)";
  let description = [{
    `coef` times the mean over the tokens of `logits` `[S..., E]` of `logsumexp(logits[s])^2`
    (Zoph et al. 2022; OLMoE's `router_z_loss_coef`). A scalar f32 loss to add to the model's.

    ```mlir
    %z = zc.moe_z_loss %logits coef 0.001 : tensor<8x64x8xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$logits, F64Attr:$coef);
  let results = (outs ZC_LossTensor:$result);
  let assemblyFormat = "$logits `coef` $coef attr-dict `:` type($logits) `->` type($result)";
}

def ZC_MoeZLossGradOp : ZC_MoeOp<"moe_z_loss_grad", [AllTypesMatch<["logits", "result"]>]> {
  let summary = "Gradient of moe_z_loss";
  let description = [{
    `grad` (a 0-d f32) times `2 coef lse(logits[s]) softmax(logits[s]) / S`.

    ```mlir
    %dl = zc.moe_z_loss_grad %d, %logits coef 0.001 : tensor<8x64x8xf32>
    ```
  }];
  let arguments = (ins ZC_LossTensor:$grad, ZC_FloatTensor:$logits, F64Attr:$coef);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $logits `coef` $coef attr-dict `:` type($logits)";
}

//===----------------------------------------------------------------------===//
// Expert parallelism (zcc-expert-parallel, --ep): each of the ep ranks of an expert group holds
// E / ep of the experts and the tokens go to them and back by all-to-alls of variable counts.
// Collectives: not Pure (never recomputed, never merged away on one rank only).
//===----------------------------------------------------------------------===//

def ZC_EpCountsOp : ZC_Op<"ep_counts"> {
  let summary = "Every expert-group rank's routing offsets, and this rank's experts' received rows";
  let description = [{
    An all-gather over the expert group of each rank's moe_route `offsets` `[E + 1]`: `all`
    `[ranks, E + 1]`, from which every rank knows what each rank sends to each (rank `s` sends
    rank `r` its rows of experts `[r E / ranks, (r + 1) E / ranks)`, one contiguous block), and
    `local_offsets` `[E / ranks + 1]`: the rows this rank's experts receive, grouped by local
    expert, each expert's rows in source-rank order (what ep_dispatch lays out). The received
    rows must fit the dispatched tensor ep_dispatch writes (`rows`, its bound); with
    `max_rows` an expert receiving more than that many stops the run naming
    `--moe-max-tokens-per-expert`, before anything is written. `dispatched` is the rows each
    rank dispatches: what one receives when the routing is balanced (the cost model's and the
    report's expectation; the plan holds `rows`).

    ```mlir
    %all, %local = zc.ep_counts %offs ranks 2 rows 1024 dispatched 512
        : tensor<9xi32> -> tensor<2x9xi32>, tensor<5xi32>
    ```
  }];
  let arguments = (ins ZC_IndexTensor:$offsets, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       ConfinedAttr<I64Attr, [IntPositive]>:$rows, ConfinedAttr<I64Attr, [IntPositive]>:$dispatched,
                       DefaultValuedAttr<I64Attr, "0">:$max_rows);
  let results = (outs ZC_IndexTensor:$all, ZC_IndexTensor:$local_offsets);
  let assemblyFormat = [{
    $offsets `ranks` $ranks `rows` $rows `dispatched` $dispatched (`max_rows` $max_rows^)? attr-dict `:`
    type($offsets) `->` type($all) `,`
    type($local_offsets)
  }];
  let hasVerifier = 1;
}

def ZC_EpDispatchOp : ZC_Op<"ep_dispatch"> {
  let summary = "The dispatched rows to the ranks that hold their experts (all-to-all)";
  let description = [{
    `input` `[R, C]`, moe_dispatch's rows grouped by (global) expert; `counts` ep_counts'
    `all`. Rank `s`'s rows of rank `r`'s experts go to rank `r`, which lays them out by local
    expert, each expert's rows in source-rank order: `result` `[M, C]` grouped as ep_counts'
    `local_offsets`, the rows past them zero. `M` is the plan's bound on the rows received.
    Linear: its gradient is ep_combine of the gradient.

    ```mlir
    %xr = zc.ep_dispatch %xs, %all ranks 2 : tensor<512x64xf32>, tensor<2x9xi32> -> tensor<1024x64xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_IndexTensor:$counts, ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $counts `ranks` $ranks attr-dict `:` type($input) `,` type($counts) `->` type($result)
  }];
  let hasVerifier = 1;
}

def ZC_EpCombineOp : ZC_Op<"ep_combine"> {
  let summary = "The experts' output rows back to the ranks their tokens came from (all-to-all)";
  let description = [{
    The inverse of ep_dispatch: `input` `[M, C]` laid out as ep_dispatch's result, `result`
    `[R, C]` in moe_dispatch's order on the rank that dispatched the rows (the rows past
    `offsets[E]` zero). Its gradient is ep_dispatch of the gradient.

    ```mlir
    %ys = zc.ep_combine %yr, %all ranks 2 : tensor<1024x64xf32>, tensor<2x9xi32> -> tensor<512x64xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_IndexTensor:$counts, ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $counts `ranks` $ranks attr-dict `:` type($input) `,` type($counts) `->` type($result)
  }];
  let hasVerifier = 1;
}

// The asynchronous forms (zcc-schedule): issued on the communication stream, the rows
// available from the matching zc.wait, so the compute that does not read them (a shared
// expert, Megatron-Core's --moe-shared-expert-overlap) runs meanwhile. The counts are read when
// the exchange starts; `input` must not change until the wait.

def ZC_EpDispatchStartOp : ZC_Op<"ep_dispatch_start"> {
  let summary = "Starts an ep_dispatch on the communication stream";
  let description = [{
    Same semantics as `zc.ep_dispatch`; the received rows are available from the matching
    `zc.wait`.

    ```mlir
    %h = zc.ep_dispatch_start %xs, %all ranks 2
        : tensor<512x64xf32>, tensor<2x9xi32> -> !zc.async<tensor<1024x64xf32>>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_IndexTensor:$counts, ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs ZC_AsyncType:$handle);
  let assemblyFormat = [{
    $input `,` $counts `ranks` $ranks attr-dict `:` type($input) `,` type($counts) `->` qualified(type($handle))
  }];
  let hasVerifier = 1;
}

def ZC_EpCombineStartOp : ZC_Op<"ep_combine_start"> {
  let summary = "Starts an ep_combine on the communication stream";
  let description = [{
    Same semantics as `zc.ep_combine`; the rows back home are available from the matching
    `zc.wait`.

    ```mlir
    %h = zc.ep_combine_start %yr, %all ranks 2
        : tensor<1024x64xf32>, tensor<2x9xi32> -> !zc.async<tensor<512x64xf32>>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_IndexTensor:$counts, ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs ZC_AsyncType:$handle);
  let assemblyFormat = [{
    $input `,` $counts `ranks` $ranks attr-dict `:` type($input) `,` type($counts) `->` qualified(type($handle))
  }];
  let hasVerifier = 1;
}

#endif // ZC_MOE_OPS_TD
