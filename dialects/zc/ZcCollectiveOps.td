//===- ZcCollectiveOps.td - collectives across data-parallel ranks, release ===//
//
// Collectives carry no memory-effect interface on purpose: every rank must
// issue the same collectives in the same order, so none may be CSE'd, hoisted
// or erased by generic passes even when its result is unused.
//
// `ranks` is the number of ranks in the group: the data-parallel group unless
// `on <axis>` names another axis of the device mesh (zc.all_reduce on tensor:
// Megatron's tensor-parallel reductions). Shards are the
// leading axis split evenly; the ZeRO passes pad a parameter (flattened) to a
// multiple of `ranks` before sharding, so any size works with any world size.
//
//===----------------------------------------------------------------------===//

#ifndef ZC_COLLECTIVE_OPS_TD
#define ZC_COLLECTIVE_OPS_TD

class ZC_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : ZC_Op<mnemonic, traits> {
  let hasVerifier = 1;
}

def ZC_AllGatherOp : ZC_CollectiveOp<"all_gather"> {
  let summary = "Concatenates every rank's shard along axis 0 (blocking)";
  let description = [{
    Rank `r` contributes `input` (`[S, ...]`); every rank receives
    `[ranks * S, ...]` with rank `r`'s shard at rows `[r*S, (r+1)*S)`. Each
    rank sends `(ranks - 1) * bytes(input)` in a ring implementation.

    Example (ZeRO-3 gathers a parameter before its first use):

    ```mlir
    %full = zc.all_gather %shard ranks 4 : tensor<16384xf32> -> tensor<65536xf32>
    ```

    `on tensor` gathers over the tensor-parallel group instead (sequence
    parallelism: each rank's tokens into the whole sequence before a
    tensor-parallel region):

    ```mlir
    %x = zc.all_gather %x_local ranks 2 on tensor : tensor<4x64x128xf32> -> tensor<8x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_CommTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       DefaultValuedAttr<ZC_MeshAxisAttr, "::mlir::zc::MeshAxis::data">:$axis);
  let results = (outs ZC_CommTensor:$result);
  let assemblyFormat = "$input `ranks` $ranks (`on` $axis^)? attr-dict `:` type($input) `->` type($result)";
}

def ZC_ReduceScatterOp : ZC_CollectiveOp<"reduce_scatter"> {
  let summary = "Reduces across ranks, each rank keeping one slice of axis 0 (blocking)";
  let description = [{
    `input` is `[ranks * S, ...]` on every rank; rank `r` receives rows
    `[r*S, (r+1)*S)` of the elementwise `sum` (or `avg`: the sum divided by
    `ranks`) over all ranks. Each rank sends
    `(ranks - 1) / ranks * bytes(input)` in a ring implementation.

    Padded form (ZeRO's shards): a 1-D result of `ceil(numel(input) / ranks)`
    elements takes the input flattened and zero-padded to `ranks` shards; rank
    `r` keeps shard `r`.

    Example (ZeRO-2 shards a final gradient, averaging across ranks):

    ```mlir
    %g = zc.reduce_scatter avg %dw ranks 4 : tensor<65536xf32> -> tensor<16384xf32>
    ```

    `on tensor` reduces over the tensor-parallel group instead (sequence
    parallelism: a row-parallel matmul's partial sums, each rank keeping its
    tokens of the sum; the leading-axis form only):

    ```mlir
    %y = zc.reduce_scatter sum %partial ranks 2 on tensor : tensor<8x64x128xf32> -> tensor<4x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_ReduceKindAttr:$kind, ZC_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       DefaultValuedAttr<ZC_MeshAxisAttr, "::mlir::zc::MeshAxis::data">:$axis);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$kind $input `ranks` $ranks (`on` $axis^)? attr-dict `:` type($input) `->` type($result)";
}

def ZC_AllReduceOp : ZC_CollectiveOp<"all_reduce", [AllTypesMatch<["input", "result"]>]> {
  let summary = "Reduces across ranks, every rank receiving the whole result (blocking)";
  let description = [{
    Every rank receives the elementwise `sum` (or `avg`) of `input` over all
    ranks. Each rank sends `2 (ranks - 1) / ranks * bytes(input)` in a ring
    implementation.

    Example (ZeRO-0, plain data parallelism):

    ```mlir
    %g = zc.all_reduce avg %dw ranks 4 : tensor<784x128xf32>
    ```

    `on tensor` reduces over the tensor-parallel group instead (the partial
    sums of a row-parallel matmul):

    ```mlir
    %y = zc.all_reduce sum %partial ranks 2 on tensor : tensor<8x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_ReduceKindAttr:$kind, ZC_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       DefaultValuedAttr<ZC_MeshAxisAttr, "::mlir::zc::MeshAxis::data">:$axis);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$kind $input `ranks` $ranks (`on` $axis^)? attr-dict `:` type($result)";
  let hasVerifier = 0;
}

//===----------------------------------------------------------------------===//
// Asynchronous forms: issue now, `zc.wait` later. The scheduling pass splits
// each blocking collective into a start/wait pair and moves them apart so the
// transfer overlaps compute.
//===----------------------------------------------------------------------===//

def ZC_AllGatherStartOp : ZC_CollectiveOp<"all_gather_start"> {
  let summary = "Starts an all_gather on the communication stream";
  let description = [{
    Same semantics as `zc.all_gather`; the gathered tensor is available from
    the matching `zc.wait`. `input` must not be modified until then.

    Example:

    ```mlir
    %h = zc.all_gather_start %shard ranks 4 : tensor<16384xf32> -> !zc.async<tensor<65536xf32>>
    ```
  }];
  let arguments = (ins ZC_CommTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       DefaultValuedAttr<ZC_MeshAxisAttr, "::mlir::zc::MeshAxis::data">:$axis);
  let results = (outs ZC_AsyncType:$handle);
  let assemblyFormat = "$input `ranks` $ranks (`on` $axis^)? attr-dict `:` type($input) `->` qualified(type($handle))";
}

def ZC_ReduceScatterStartOp : ZC_CollectiveOp<"reduce_scatter_start"> {
  let summary = "Starts a reduce_scatter on the communication stream";
  let description = [{
    Same semantics as `zc.reduce_scatter`; the shard is available from the
    matching `zc.wait`.

    Example:

    ```mlir
    %h = zc.reduce_scatter_start avg %dw ranks 4 : tensor<65536xf32> -> !zc.async<tensor<16384xf32>>
    ```
  }];
  let arguments = (ins ZC_ReduceKindAttr:$kind, ZC_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs ZC_AsyncType:$handle);
  let assemblyFormat = "$kind $input `ranks` $ranks attr-dict `:` type($input) `->` qualified(type($handle))";
}

def ZC_AllReduceStartOp : ZC_CollectiveOp<"all_reduce_start"> {
  let summary = "Starts an all_reduce on the communication stream";
  let description = [{
    Same semantics as `zc.all_reduce`; the result is available from the
    matching `zc.wait`.

    Example:

    ```mlir
    %h = zc.all_reduce_start sum %dw ranks 2 : tensor<784x128xf32> -> !zc.async<tensor<784x128xf32>>
    ```
  }];
  let arguments = (ins ZC_ReduceKindAttr:$kind, ZC_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       DefaultValuedAttr<ZC_MeshAxisAttr, "::mlir::zc::MeshAxis::data">:$axis);
  let results = (outs ZC_AsyncType:$handle);
  let assemblyFormat = "$kind $input `ranks` $ranks (`on` $axis^)? attr-dict `:` type($input) `->` qualified(type($handle))";
}

def ZC_WaitOp : ZC_Op<"wait", [
    TypesMatchWith<"result is the tensor the handle will produce", "handle", "result",
                   "::llvm::cast<::mlir::zc::AsyncType>($_self).getValueType()">]> {
  let summary = "Waits for an async collective and yields its result";
  let description = [{
    Blocks the compute stream until the collective behind `handle` has
    completed (on the CUDA backend: the compute stream waits on the
    collective's event; no device-wide synchronization). Each handle must be
    waited on exactly once, in the same block as its start.

    Example:

    ```mlir
    %full = zc.wait %h : !zc.async<tensor<65536xf32>>
    ```
  }];
  let arguments = (ins ZC_AsyncType:$handle);
  let results = (outs ZC_CommTensor:$result);
  let assemblyFormat = "$handle attr-dict `:` qualified(type($handle))";
  let hasVerifier = 1;
}

def ZC_ReleaseOp : ZC_Op<"release"> {
  let summary = "Frees a gathered buffer after its last use";
  let description = [{
    Marks the end of `input`'s lifetime: its memory (typically a parameter
    gathered by `zc.all_gather`) goes back to the arena. The release must be
    the last use of `input`: any use after it in the same block, including a
    second release, is an error.

    Example (ZeRO-3 frees a gathered parameter after its last forward use):

    ```mlir
    %full = zc.all_gather %shard ranks 4 : tensor<16384xf32> -> tensor<65536xf32>
    %w = zc.reshape %full : tensor<65536xf32> -> tensor<128x512xf32>
    %y = zc.matmul %x, %w : tensor<64x128xf32>, tensor<128x512xf32> -> tensor<64x512xf32>
    zc.release %full : tensor<65536xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Buckets: zcc-bucket packs several tensors into one buffer so that one
// collective moves them all (fewer calls, each one long enough that latency
// does not dominate), and unpacks the result.
//===----------------------------------------------------------------------===//

def ZC_PackOp : ZC_Op<"pack", [Pure]> {
  let summary = "Packs tensors into one 1-D bucket, interleaved by rank";
  let description = [{
    Each input is flattened and zero-padded to `ranks` shards of
    `s_i = ceil(numel_i / ranks)` elements; the result is `ranks` chunks of
    `S = sum(s_i)` elements, chunk `r` holding shard `r` of every input in
    order. A `zc.reduce_scatter` of the result leaves rank `r` exactly its
    shard of every input, as separate reduce-scatters would. With
    `ranks = 1` this is the inputs' concatenation (an all-reduce bucket).

    Example:

    ```mlir
    %b = zc.pack %dw, %db ranks 2 : tensor<4x3xf32>, tensor<3xf32> -> tensor<16xf32>
    ```
  }];
  let arguments = (ins Variadic<ZC_FloatTensor>:$inputs, ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$inputs `ranks` $ranks attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_UnpackOp : ZC_Op<"unpack", [Pure]> {
  let summary = "Unpacks a bucket laid out as zc.pack lays it out";
  let description = [{
    The inverse of `zc.pack` with the same `ranks`: result `i` (any shape) is
    read from shard `r` of chunk `r`, for every `r`, dropping the padding.
    After an all-gather of `ranks = N` packed shards it yields whole tensors;
    with `ranks = 1` it splits a reduce-scattered bucket into each input's
    shard.

    Example:

    ```mlir
    %w, %b = zc.unpack %all ranks 2 : tensor<16xf32> -> tensor<4x3xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs Variadic<ZC_FloatTensor>:$results);
  let assemblyFormat = "$input `ranks` $ranks attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor parallelism's region markers (Megatron's f and g), written by
// zcc-tensor-parallel into the forward; autodiff differentiates them and then
// replaces them by what they run: tp_copy by its input, tp_reduce by a
// zc.all_reduce on tensor.
//===----------------------------------------------------------------------===//

def ZC_TpCopyOp : ZC_Op<"tp_copy"> {
  let summary = "Enters a tensor-parallel region: identity (or all-gather) forward, all-reduce (or reduce-scatter) of the gradient";
  let description = [{
    `input` is replicated on the `ranks` ranks of the tensor-parallel group;
    each consumes it with its own columns of the next weights. The forward
    is the identity; the gradient is the sum of the ranks' partial
    gradients (`zc.all_reduce sum ... on tensor`).

    With `sequence` (sequence parallelism, Korthikanti et al. 2022), `input`
    is this rank's tokens (the leading axis split `ranks` ways, rank `r`
    holding the `r`-th part): the forward all-gathers them into the whole
    tensor and the gradient is reduce-scattered back to this rank's tokens.
    The same bytes as the all-reduce, and the tensor outside the region
    stays split.

    Example:

    ```mlir
    %x_tp = zc.tp_copy %x ranks 2 : tensor<8x64x128xf32> -> tensor<8x64x128xf32>
    %y_tp = zc.tp_copy %y ranks 2 sequence : tensor<4x64x128xf32> -> tensor<8x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       UnitAttr:$sequence);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `ranks` $ranks (`sequence` $sequence^)? attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_TpReduceOp : ZC_Op<"tp_reduce"> {
  let summary = "Leaves a tensor-parallel region: all-reduce (or reduce-scatter) forward, identity (or all-gather) gradient";
  let description = [{
    `input` is each rank's partial sum (a row-parallel matmul's product);
    the result is their sum, replicated on the `ranks` ranks of the
    tensor-parallel group. The gradient is passed through unchanged: every
    rank holds the same one.

    With `sequence`, each rank keeps only its tokens of the sum (a
    reduce-scatter along the leading axis) and the gradient, split the same
    way, is all-gathered.

    Example:

    ```mlir
    %y = zc.tp_reduce %partial ranks 2 : tensor<8x64x128xf32> -> tensor<8x64x128xf32>
    %y_local = zc.tp_reduce %partial ranks 2 sequence : tensor<8x64x128xf32> -> tensor<4x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       UnitAttr:$sequence);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `ranks` $ranks (`sequence` $sequence^)? attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_SpShardOp : ZC_Op<"sp_shard", [Pure]> {
  let summary = "Keeps this tensor-parallel rank's tokens of a replicated tensor";
  let description = [{
    Sequence parallelism's entry for a tensor every rank of the
    tensor-parallel group holds whole (a replicated activation meeting the
    split residual stream): rank `r` keeps the `r`-th of `ranks` equal
    parts of the leading axis, with no communication. The gradient, split
    the same way, is all-gathered (each rank computed its tokens' part).
    Megatron-LM's `scatter_to_sequence_parallel_region`.

    Example:

    ```mlir
    %x_local = zc.sp_shard %x ranks 2 : tensor<8x64x128xf32> -> tensor<4x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `ranks` $ranks attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_SpGatherOp : ZC_Op<"sp_gather"> {
  let summary = "Gathers a sequence-split tensor for an op every rank runs whole";
  let description = [{
    The exit from sequence parallelism to an op that is neither token-wise
    nor tensor-parallel (an unsplit loss head, a pipeline stage's output):
    the forward all-gathers the ranks' tokens; every rank then runs the
    consumer on the whole tensor, so the gradient is the same on each and
    each keeps its tokens' part (no communication). Megatron-LM's
    `gather_from_sequence_parallel_region(tensor_parallel_output_grad=False)`.

    Example:

    ```mlir
    %x = zc.sp_gather %x_local ranks 2 : tensor<4x64x128xf32> -> tensor<8x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `ranks` $ranks attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Context parallelism (zcc-context-parallel): each rank of the context group
// holds part of every sequence's tokens, two of 2 x ranks chunks (chunk r and
// 2 ranks - 1 - r: Megatron-LM's layout, so causal attention's work is even),
// and attention exchanges tokens for heads (DeepSpeed-Ulysses).
//===----------------------------------------------------------------------===//

def ZC_CpShardOp : ZC_Op<"cp_shard", [Pure]> {
  let summary = "Keeps this context rank's chunks of a sequence axis";
  let description = [{
    `input` is whole on every rank of the context group; the result keeps
    chunks `r` and `2 ranks - 1 - r` of the `2 ranks` equal chunks of axis
    `axis`, in that order. No communication. Token ids (any element type),
    and a position table's rows.

    Example:

    ```mlir
    %ids_local = zc.cp_shard %ids ranks 2 axis 1 : tensor<8x64xi32> -> tensor<8x32xi32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `ranks` $ranks `axis` $axis attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_CpUnshardOp : ZC_Op<"cp_unshard", [Pure]> {
  let summary = "Places this context rank's chunks in a whole axis of zeros (cp_shard's gradient)";
  let description = [{
    The inverse placement of `zc.cp_shard`: the result is zero except this
    rank's two chunks of axis `axis`, which are `input`. The gradient of a
    whole tensor every context rank read its part of; the data-parallel
    reduction (over data x context ranks) sums the parts.

    Example:

    ```mlir
    %dpos = zc.cp_unshard %dpos_local ranks 2 axis 0 : tensor<32x128xf32> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `ranks` $ranks `axis` $axis attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_CpToHeadsOp : ZC_Op<"cp_to_heads"> {
  let summary = "Ulysses: this rank's tokens of every head to every token of this rank's heads";
  let description = [{
    `input` is `[B, L, H x D]`: this context rank's `L` tokens (its two
    chunks) of all `heads` heads. The result is `[B, ranks x L, H / ranks x
    D]`: the whole sequence, in order, of this rank's group of heads (group
    `r` of `ranks` equal groups). One all-to-all over the context group;
    its gradient is `zc.cp_to_tokens`.

    Example:

    ```mlir
    %q = zc.cp_to_heads %q_local ranks 2 heads 4 : tensor<8x32x128xf32> -> tensor<8x64x64xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `ranks` $ranks `heads` $heads attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_CpToTokensOp : ZC_Op<"cp_to_tokens"> {
  let summary = "Ulysses: every token of this rank's heads back to this rank's tokens of every head";
  let description = [{
    The inverse of `zc.cp_to_heads`: `input` is `[B, ranks x L, H / ranks x
    D]`, the result `[B, L, H x D]`. One all-to-all over the context group.

    Example:

    ```mlir
    %y_local = zc.cp_to_tokens %y ranks 2 heads 4 : tensor<8x64x64xf32> -> tensor<8x32x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `ranks` $ranks `heads` $heads attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pipeline parallelism's stage boundary, written by zcc-pipeline into each
// stage's forward. A stage's backward recomputes its forward from its input
// (activation checkpointing at stage boundaries), so the stage's step reads
// its input and its output's gradient as arguments (`zc.input =
// "activation"` and `"activation_grad"`), and sends its input's gradient.
//===----------------------------------------------------------------------===//

def ZC_PipeSendOp : ZC_Op<"pipe_send"> {
  let summary = "Sends a tensor to another stage of the pipeline";
  let description = [{
    Sends `input` to stage `stage` of this rank's pipeline (the mesh's
    pipeline axis). The send does not wait for the receiver; the receiving
    stage's executable receives it into its `activation` or
    `activation_grad` input before the call that reads it.

    Example (stage 0's forward hands its output to stage 1):

    ```mlir
    zc.pipe_send %x to stage 1 : tensor<8x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntNonNegative]>:$stage);
  let assemblyFormat = "$input `to` `stage` $stage attr-dict `:` type($input)";
}

def ZC_PipeStashOp : ZC_Op<"pipe_stash", [AllTypesMatch<["value", "stash"]>]> {
  let summary = "Keeps a forward value of a pipeline stage for its backward";
  let description = [{
    A stage before the last runs its forward ("F" of the 1F1B schedule) and its
    backward ("B") as two calls, several micro-batches apart. Each value the
    backward reads from the forward is copied, in the forward-only function,
    into `stash`: an argument with `zc.input = "stash"`, which the step function
    has at the same position and reads in place. train.bin gives every
    micro-batch in flight its own buffers for the arguments (its slot), so the
    stage keeps those values for each micro-batch in flight instead of computing
    its forward a second time (zcc-pipeline-keep).

    A Mixture-of-Experts stage also keeps its routing (zc.moe_route's i32 choices, rows and
    offsets), which its backward reads.

    Example: `zc.pipe_stash %h into %arg3 : tensor<8x64x256xf32>`
  }];
  let arguments = (ins ZC_StashTensor:$value, ZC_StashTensor:$stash);
  let assemblyFormat = "$value `into` $stash attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def ZC_StageInputOp : ZC_Op<"stage_input", [AllTypesMatch<["input", "result"]>]> {
  let summary = "A pipeline stage's input activation: identity forward, gradient sent back";
  let description = [{
    Marks the activation a stage receives from stage `from`. The forward is
    the identity; autodiff sends the activation's gradient back to stage
    `from` (`zc.pipe_send`), where it is that stage's `activation_grad`.

    Example:

    ```mlir
    %x = zc.stage_input %arg from stage 0 : tensor<8x64x128xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntNonNegative]>:$from);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `from` `stage` $from attr-dict `:` type($result)";
}

def ZC_StageOutputOp : ZC_Op<"stage_output", [AllTypesMatch<["output", "grad"]>]> {
  let summary = "A non-last pipeline stage's objective: its output against the output's gradient";
  let description = [{
    The scalar a stage that is not the last one differentiates: `sum(output
    * grad)`, where `grad` is the gradient of the model's loss with respect to
    `output`, received from the next stage. Its gradient with respect to
    `output` is `grad`, so autodiff of a stage's forward yields the model's
    gradients of that stage's parameters and input. Its value is never read:
    the runtime writes 0.

    Example:

    ```mlir
    %objective = zc.stage_output %x, %dx : tensor<8x64x128xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$output, ZC_FloatTensor:$grad);
  let results = (outs ZC_LossTensor:$result);
  let assemblyFormat = "$output `,` $grad attr-dict `:` type($output) `->` type($result)";
}

#endif // ZC_COLLECTIVE_OPS_TD
