//===- Passes.td - every zcc pass, one def each ----------------------------===//
//
// Conventions: CLI names start with `zcc-`; each def's description shows a
// small before/after IR example (or the diagnostics, for checks); each pass has
// test/Passes/<cli-name>.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_PASSES_TD
#define ZCC_PASSES_TD

include "mlir/Pass/PassBase.td"

def ZccVerifyModel : Pass<"zcc-verify-model", "mlir::ModuleOp"> {
  let summary = "Checks that a module is a trainable model";
  let description = [{
    Op verifiers check each op alone; a model also needs its pieces to fit
    together. This pass, the first of zcc's pipeline, requires:

    * exactly one `zc.forward` function;
    * at least one `zc.param`;
    * every `zc.param` read by the forward function (an unread parameter gets
      no gradient and would be sharded, stored and updated for nothing: almost
      always a typo).

    It changes nothing; it fails with a located error otherwise:

    ```mlir
    zc.param @w : tensor<4x4xf32> = #zc.zeros
    // error: 'zc.param' op 'w' is never read by the forward function
    zc.param @unused : tensor<4xf32> = #zc.zeros
    zc.forward @f(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> { ... }
    ```
  }];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccTensorParallel : Pass<"zcc-tensor-parallel", "mlir::ModuleOp"> {
  let summary = "Splits the forward's matmul regions, heads and vocabulary over the tensor-parallel ranks";
  let description = [{
    Megatron-LM's tensor parallelism, found rather than matched: column-split
    matmuls of a replicated activation, the feature-sliced ops after them
    (bias, activations, products, slices of a fused QKV, rotary, causal
    attention with whole heads and grouped KV heads per rank) and row-split
    matmuls that end the region with zc.tp_reduce; zc.tp_copy on the
    region's input. Embedding tables and a language-model head feeding the
    loss are split over the vocabulary (vocabulary-parallel cross-entropy).
    Split parameters get their local type and
    `zc.tp_split = array<i64: axis, blocks, ranks>`; matmuls get
    `zc.tp = "column" | "row" | "vocab"`. A region that would hand split
    features to anything else stays replicated; a model with nothing to
    split is an error.

    ```mlir
    // ranks=2: zc.param @fc_w : tensor<128x512xf32>  ->  tensor<128x256xf32> {zc.tp_split = array<i64: 1, 1, 2>}
    ```
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1", "Tensor-parallel ranks">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccContextParallel : Pass<"zcc-context-parallel", "mlir::ModuleOp"> {
  let summary = "Splits every sequence's tokens over the context-parallel ranks (DeepSpeed-Ulysses attention)";
  let description = [{
    Context parallelism, after zcc-shard-batch and the pipeline cut: each of
    the `ranks` ranks of a context group keeps two of the 2 x ranks chunks of
    every sequence (chunk r and 2 ranks - 1 - r, Megatron-LM's causal
    balance). Token inputs are cut by zc.cp_shard, types re-derived along the
    token axis, a position table cut likewise; attention's q, k and v go
    through zc.cp_to_heads (an all-to-all to the whole sequence of 1/ranks of
    the heads, before the rotary embedding so positions stay global) and its
    output through zc.cp_to_tokens. The module gets
    `zc.context_parallel = {ranks, mode}`. An op that would need the whole
    sequence is an error naming it.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1", "Context-parallel ranks">,
    Option<"mode", "mode", "std::string", "\"auto\"", "ulysses or auto (ring is not implemented yet)">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccSequenceParallel : Pass<"zcc-sequence-parallel", "mlir::ModuleOp"> {
  let summary = "Splits the tokens between tensor-parallel regions over the tensor-parallel ranks";
  let description = [{
    Megatron-LM's sequence parallelism (Korthikanti et al. 2022), after
    zcc-tensor-parallel and zcc-shard-batch. The activations a region's
    zc.tp_reduce hands on, and the token-wise ops they flow through (norms,
    residual adds, bias adds, elementwise ops, views that keep the leading
    axis), hold 1/ranks of the tokens: the leading axis split, rank r
    keeping the r-th part. zc.tp_reduce becomes a reduce-scatter and
    zc.tp_copy an all-gather (`sequence`): the same bytes as the all-reduce
    they replace. A replicated activation meeting the split stream keeps
    this rank's part (zc.sp_shard); any other consumer of a split value gets
    the whole one (zc.sp_gather). Parameters read by split ops (norm gains,
    biases, a position table) see 1/ranks of the tokens, so their gradients
    are summed over the group: a zc.tp_copy on the parameter.

    ```mlir
    // ranks=2: %y = zc.tp_reduce %p ranks 2 : tensor<4x64x128xf32>
    //       -> %y = zc.tp_reduce %p ranks 2 sequence : tensor<4x64x128xf32> -> tensor<2x64x128xf32>
    ```
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1", "Tensor-parallel ranks">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccPipelineStage : Pass<"zcc-pipeline-stage", "mlir::ModuleOp"> {
  let summary = "Keeps one pipeline stage of the forward, cut at block boundaries balanced by cost";
  let description = [{
    Pipeline parallelism: the forward is cut where exactly one activation
    crosses (between blocks), at the cuts that minimize the costliest stage
    (FLOPs of forward, recomputation and backward, plus the parameters' update
    and memory: the embedding and the head weigh in). Stage `stage` is kept:
    its input an `activation` argument through zc.stage_input, its objective
    zc.stage_output against an `activation_grad` argument (all but the last
    stage), and a forward-only twin `@<model>_stage_forward` that sends its
    output to the next stage (zc.pipe_send). Parameters read by the first and
    last stage (a tied embedding and head) are marked `zc.pipeline_tied`.
    The module gets `zc.pipeline = {stage, stages, cuts, stage_flops,
    schedule, slots, predicted_bubble}`: the schedule's (`1f1b`, `zb-h1`,
    `interleaved-1f1b` or `zbv`) micro-batches in flight at the stage and its
    predicted idle fraction over `micro-batches`. With `chunks` V > 1
    (interleaved, ZB-V), `stages` counts P x V virtual stages, stage s being
    chunk s / P of pipeline rank s mod P (ZB-V: rank s or 2P - 1 - s, a V),
    and the attribute records `chunks`.

    ```mlir
    // stages=2 stage=1: zc.forward @gpt(%tokens, %targets, %x {zc.input = "activation"})
    ```
  }];
  let options = [
    Option<"stages", "stages", "int64_t", "1", "Pipeline stages">,
    Option<"stage", "stage", "int64_t", "0", "The stage to keep">,
    Option<"microBatches", "micro-batches", "int64_t", "1", "Micro-batches per step (the 1F1B schedule's)">,
    Option<"schedule", "schedule", "std::string", "\"1f1b\"",
           "The pipeline schedule: 1f1b, zb-h1, interleaved-1f1b or zbv">,
    Option<"chunks", "chunks", "int64_t", "1",
           "Chunks of layers per pipeline rank (interleaved-1f1b; zbv: 2): `stages` counts the virtual "
           "stages, stage s being chunk s / (stages / chunks) of a rank (zcc::pipeline::rankOfStage)">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccPipelineKeep : Pass<"zcc-pipeline-keep", "mlir::ModuleOp"> {
  let summary = "A pipeline stage keeps its micro-batches' activations instead of computing its forward twice";
  let description = [{
    In a stage before the last (zcc-pipeline-stage), 1F1B runs the forward of
    a micro-batch ("F", the `zc.role = "forward"` function) and, several
    micro-batches later, its backward ("B", the step). Without this pass the
    step computes the forward again from the stage input. With it, F is the
    step's own forward (the ops before `zc.stage_output`: autodiff's, after
    recomputation chose its checkpoints and fusion merged what it merges) plus
    the send of the output, and each value the backward reads from it is
    copied into an argument with `zc.input = "stash"` (`zc.pipe_stash`); the
    step keeps only the backward and reads those arguments. train.bin gives each
    micro-batch in flight its own argument buffers (P - s at stage s), so a
    stage holds the activations of its micro-batches in flight, as Megatron-LM
    and DeepSpeed's pipeline engine do, and `--recompute` applies inside the
    stage as on one rank: what it recomputes is recomputed in B, what it keeps
    is stashed. Parameter reads, the stage's inputs, their casts and chunks,
    and reshapes (views) are taken again in B rather than kept.

    ```mlir
    // F: ... %h = zc.gelu ... ; zc.pipe_send %out to stage 1 ; zc.pipe_stash %h into %arg3
    // B: func @gpt_step(..., %arg3 {zc.input = "stash"}) { ... zc.gelu_grad %dy, %arg3 ... }
    ```
  }];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccPipelineSplitBackward : Pass<"zcc-pipeline-split-backward", "mlir::ModuleOp"> {
  let summary = "Splits a pipeline stage's backward into the input's gradient (B) and the weights' (W)";
  let description = [{
    For the zero-bubble schedules (`zc.pipeline` `schedule = "zb-h1"` or `"zbv"`): the
    step keeps what the stage's output to the previous stage (the input's
    gradient, `zc.pipe_send`) and its result (the loss) need, and a new
    function with `zc.role = "weight"` gets the rest, in order: the weight
    gradients and their accumulation, nothing another stage waits for, which
    the schedule runs later, in what would be idle time. W takes the same
    arguments as the stage's other functions; each value it reads from B is
    copied into a `zc.input = "stash"` argument (`zc.pipe_stash`, at the end
    of B) that every function of the stage gets, so it lives in the
    micro-batch's input slot until its W. Parameter reads, constants and views
    or casts of the inputs are taken again in W.

    ```mlir
    // B: ... %dx = zc.matmul %dy, %w transpose_rhs ; zc.pipe_send %dx to stage 0 ; zc.pipe_stash %dy into %arg5
    // W: func @gpt_step_weight(..., %arg5 {zc.input = "stash"}) attributes {zc.role = "weight"}
    //      { %dw = zc.matmul %x, %arg5 transpose_lhs ; zc.grad_accumulate @w, %dw }
    ```
  }];
  let dependentDialects = ["::mlir::zc::ZcDialect", "::mlir::arith::ArithDialect"];
}

def ZccExpertParallel : Pass<"zcc-expert-parallel", "mlir::ModuleOp"> {
  let summary = "Shards the experts over the expert-parallel ranks; tokens reach them by all-to-alls";
  let description = [{
    Expert parallelism (GShard, DeepSpeed-MoE, Megatron-Core's --expert-model-parallel-size),
    after zcc-shard-batch: each of the `ranks` consecutive data-parallel ranks of an expert
    group holds E / ranks of every MoE layer's experts. Each layer's routing stays on its rank;
    zc.ep_counts exchanges the routings' offsets, zc.ep_dispatch sends each dispatched row to
    the rank of its expert, the expert products (zc.grouped_matmul and the row-wise ops between
    them) run there on the rows received, laid out by local expert, and zc.ep_combine sends
    their outputs back before zc.moe_combine. The received tensors are planned at a bound
    (zrt::moeReceivedRows: every source's rows, the capacity, or `max-rows-per-expert`). The
    expert weights get their local type `[E / ranks, ...]` and `zc.ep_split = {ranks}`: their
    gradients are reduced over the ranks that hold the same experts (zcc-data-parallel,
    zcc-zero). A model without MoE layers, or one whose experts' rows reach an op with no
    row-wise rule, is an error.

    ```mlir
    // ranks=2: zc.param @w : tensor<8x64x48xf32>  ->  tensor<4x64x48xf32> {zc.ep_split = {ranks = 2}}
    ```
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1", "Expert-parallel ranks">,
    Option<"maxRowsPerExpert", "max-rows-per-expert", "std::string", "\"\"",
           "Most rows one expert receives in one routing: N, or Fx (F times the balanced count); empty: the "
           "worst case">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccShardBatch : Pass<"zcc-shard-batch", "mlir::ModuleOp"> {
  let summary = "Gives each rank and micro-batch its slice of the global batch";
  let description = [{
    The forward function is written for the global batch (axis 0 of every
    argument). With `ranks` N and `micro-batches` K, every rank runs K
    micro-batches of B / (N K) rows per step, so the global batch, and the loss
    curve, do not depend on the world size. The pass divides axis 0 of the
    arguments and re-derives every result type of the forward function from its
    operands. The batch must stay the leading axis: a transpose, slice or
    concat across it, or a reshape that does not keep it leading, is an error, as
    is a batch that N K does not divide.

    ```mlir
    // ranks=2: tensor<64x784xf32> -> tensor<32x784xf32>, and so on downstream
    ```
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1", "Data-parallel ranks">,
    Option<"microBatches", "micro-batches", "int64_t", "1",
           "Micro-batches per step (gradient accumulation)">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccMixedPrecision : Pass<"zcc-mixed-precision", "mlir::ModuleOp"> {
  let summary = "Runs the forward function in bf16 from fp32 master parameters";
  let description = [{
    `--precision bf16`: every compute op of the forward function reads and
    writes bf16 tensors (the runtime's kernels accumulate in f32 inside), so
    activations, and the backward pass that autodiff derives from them, take
    half the memory and bandwidth. Parameters stay fp32: they are the master
    weights the optimizer updates with fp32 moments. Each is cast to bf16 once
    per micro-batch where the forward reads it, and autodiff turns that cast
    into a cast of the bf16 gradient back to fp32, so gradients are
    accumulated, averaged across ranks and applied in fp32.

    Ops that stay fp32: `zc.embedding` gathers rows of the fp32 table (its
    gradient is a scatter-add, which bf16 would round at every repeated id),
    and the losses return their fp32 scalar. Float inputs (features, values)
    are cast on entry; user-written `zc.cast`s are kept as written.

    ```mlir
    %w = zc.param_ref @w : tensor<784x256xf32>
    %h = zc.matmul %x, %w : tensor<64x784xf32>, tensor<784x256xf32> -> tensor<64x256xf32>
    // becomes
    %w = zc.param_ref @w : tensor<784x256xf32>
    %w_bf16 = zc.cast %w : tensor<784x256xf32> -> tensor<784x256xbf16>
    %h = zc.matmul %x_bf16, %w_bf16 : tensor<64x784xbf16>, tensor<784x256xbf16> -> tensor<64x256xbf16>
    ```
  }];
  let options = [
    Option<"computeType", "compute-type", "std::string", "\"bf16\"",
           "Element type of the forward's compute: bf16 (f32 leaves the module alone)">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccAutodiff : Pass<"zcc-autodiff", "mlir::ModuleOp"> {
  let summary = "Derives the backward pass: zc.forward -> func.func @<name>_step";
  let description = [{
    Reverse-mode differentiation of the forward function with one rule per op
    (docs/dialect.md). The result is a function with the forward's arguments
    that returns the loss and ends with one `zc.grad_accumulate` per parameter
    (contributions of a parameter read several times are summed). Ops that do
    not reach the loss, or that no parameter reaches, get no gradient work.

    ```mlir
    zc.forward @f(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
      %w = zc.param_ref @w : tensor<4x3xf32>
      %h = zc.matmul %x, %w : ...
      %l = zc.cross_entropy %h, %y : ...
      zc.return %l : tensor<f32>
    }
    // becomes
    func.func @f_step(%x: ..., %y: ...) -> tensor<f32> attributes {zc.role = "step"} {
      ... forward ...
      %one = arith.constant dense<1.0> : tensor<f32>
      %dh = zc.cross_entropy_grad %one, %h, %y : ...
      %dw = zc.matmul %x, %dh transpose_lhs : ...
      zc.grad_accumulate @w, %dw : tensor<4x3xf32>
      return %l : tensor<f32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::zc::ZcDialect", "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

def ZccOptimizer : Pass<"zcc-optimizer", "mlir::ModuleOp"> {
  let summary = "Adds the optimizer: state tensors and func.func @<name>_update";
  let description = [{
    Creates `func.func @<model>_update(%lr: f64, %step: i64)` with, per
    parameter, a `zc.grad_ref`, the update (`zc.adamw` or `zc.sgd`) and a
    `zc.grad_zero`, plus the `zc.state` tensors the update keeps (fp32, zero at
    start). Hyperparameters come from the module's `zc.optimizer` dictionary
    attribute (keys `kind`, `beta1`, `beta2`, `eps`, `weight_decay`,
    `momentum`, `lr`), then from this pass's options, which win. Parameters of
    rank < 2 (biases, norm gains) and those marked `{zc.no_decay}` get no weight
    decay, as in GPT-2 / nanoGPT training. With one micro-batch a step
    (`micro-batches=1`, the default) each `zc.grad_accumulate` becomes an
    `overwrite` and the update clears nothing: the buffer holds the step's one
    gradient, which its producer can write in place.

    ```mlir
    zc.state @w.exp_avg : tensor<4x3xf32> of @w
    zc.state @w.exp_avg_sq : tensor<4x3xf32> of @w
    func.func @f_update(%lr: f64, %step: i64) attributes {zc.role = "update"} {
      %g = zc.grad_ref @w : tensor<4x3xf32>
      zc.adamw @w, %g state(@w.exp_avg, @w.exp_avg_sq) lr %lr step %step {...} : tensor<4x3xf32>
      zc.grad_zero @w
      return
    }
    ```
  }];
  let options = [
    Option<"kind", "kind", "std::string", "\"\"", "adamw or sgd (default: the model's, else adamw)">,
    Option<"beta1", "beta1", "double", "-1", "AdamW beta1 (default 0.9)">,
    Option<"beta2", "beta2", "double", "-1", "AdamW beta2 (default 0.999)">,
    Option<"eps", "eps", "double", "-1", "AdamW epsilon (default 1e-8)">,
    Option<"weightDecay", "weight-decay", "double", "-1", "Decoupled weight decay (default 0.01)">,
    Option<"momentum", "momentum", "double", "-1", "SGD momentum (default 0.9)">,
    Option<"microBatches", "micro-batches", "int64_t", "1",
           "Step function runs per update (1: gradients overwrite their buffers, none is cleared)">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect", "::mlir::func::FuncDialect"];
}

def ZccDataParallel : Pass<"zcc-data-parallel", "mlir::ModuleOp"> {
  let summary = "ZeRO stage 0: averages every gradient across ranks before the update";
  let description = [{
    Plain data parallelism: in the update function every `zc.grad_ref` is
    followed by `zc.all_reduce avg ... ranks N`, so each rank applies the mean
    gradient of the global batch. With `micro-batches` K > 1 the accumulated sum
    is also scaled by 1/K. Communication happens once per step, whatever K.

    ```mlir
    %g = zc.grad_ref @w : tensor<4x3xf32>
    %g_avg = zc.all_reduce avg %g ranks 2 : tensor<4x3xf32>
    zc.adamw @w, %g_avg ...
    ```
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1", "Data-parallel ranks">,
    Option<"microBatches", "micro-batches", "int64_t", "1", "Micro-batches per step">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccZero : Pass<"zcc-zero", "mlir::ModuleOp"> {
  let summary = "ZeRO stages 1-3: partitions optimizer state, gradients and parameters";
  let description = [{
    Replaces `zcc-data-parallel` for stage >= 1. Every parameter with a
    gradient is split over the `ranks` into shards of `ceil(numel / ranks)`
    elements (flattened, zero-padded; the `zc.shards` attribute on its
    `zc.param`), and its `zc.state`s become 1-D shards.

    * Stage 1: the update reduce-scatters (average) the step's whole gradient,
      runs the optimizer on this rank's shard, and `zc.all_gather_param`
      refreshes the whole parameter from every rank's updated shard.
    * Stage 2: the gradient buffer holds only the shard (`zc.shard_grad`); each
      micro-batch's gradient is reduce-scattered right after its last
      contribution in the backward pass and added into the shard, so the whole
      gradient dies there.
    * Stage 3: the parameter itself is stored as a shard (`zc.shard_param`):
      `zc.gather_param` all-gathers it right before its first use in the
      forward pass and `zc.release` frees it right after its last forward use;
      the same again for its uses in the backward pass. Parameters with at most
      `persistence-threshold` elements stay whole (as DeepSpeed's
      `stage3_param_persistence_threshold`), sharded like stage 2.

    ```mlir
    // stage 3, ranks=2: in the step function
    %w = zc.param_ref @w : tensor<4x3xf32>
    // becomes
    %w = zc.gather_param @w : tensor<4x3xf32>
    %h = zc.matmul %x, %w ...
    zc.release %w : tensor<4x3xf32>
    ...
    %gs = zc.reduce_scatter avg %dw ranks 2 : tensor<4x3xf32> -> tensor<6xf32>
    zc.grad_accumulate @w, %gs : tensor<6xf32>
    ```
  }];
  let options = [
    Option<"stage", "stage", "int64_t", "1", "ZeRO stage: 1, 2 or 3">,
    Option<"ranks", "ranks", "int64_t", "1", "Data-parallel ranks">,
    Option<"microBatches", "micro-batches", "int64_t", "1", "Micro-batches per step">,
    Option<"persistenceThreshold", "persistence-threshold", "int64_t", "0",
           "Stage 3: parameters with at most this many elements stay whole">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccReducePrecision : Pass<"zcc-reduce-precision", "mlir::ModuleOp"> {
  let summary = "Gradient reductions over the data-parallel ranks summed in fp32";
  let description = [{
    With `precision=fp32`, every `zc.all_reduce` and `zc.reduce_scatter` over the
    `data` or `expert_data` axis whose input is bf16 (a gradient under
    `--precision bf16`) reduces that input cast up to fp32, and its result is cast
    back to bf16 where the gradient buffer or the optimizer reads it: FSDP2's
    `reduce_dtype=torch.float32` (torchtitan's default) and Megatron-LM's fp32
    gradient reduction. Twice the bytes on the wire; the sum of N ranks rounded
    once. Tensor parallelism's reductions are left alone. `precision=bf16` (the
    default) changes nothing.

    ```mlir
    %gs = zc.reduce_scatter avg %dw ranks 2 : tensor<4x3xbf16> -> tensor<6xbf16>
    // becomes
    %dw32 = zc.cast %dw : tensor<4x3xbf16> -> tensor<4x3xf32>
    %gs32 = zc.reduce_scatter avg %dw32 ranks 2 : tensor<4x3xf32> -> tensor<6xf32>
    %gs = zc.cast %gs32 : tensor<6xf32> -> tensor<6xbf16>
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"bf16\"",
           "What gradient reductions sum in: bf16 (the gradients' own) or fp32">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccGradClip : Pass<"zcc-grad-clip", "mlir::ModuleOp"> {
  let summary = "Global gradient-norm clipping in the update (clip_grad_norm_)";
  let description = [{
    After the gradients' reductions (zcc-data-parallel or zcc-zero), the update
    computes the global L2 norm of the step's gradient from the pieces each
    rank's optimizer updates (`zc.grad_norm`: a rank's ZeRO shard counts whole,
    a gradient every data-parallel rank holds counts 1 / `data-ranks`, a
    parameter every tensor-parallel rank keeps whole 1 / `tensor-parallel`, a
    parameter tied across the first and last pipeline stage 1/2), reduced over
    every rank of the mesh, and with `max-norm` > 0 scales each optimizer's
    gradient by `min(1, max_norm / (norm + 1e-6))` as it reads it. The
    reductions come first, the norm once they are all done, then the updates
    (each reads the coefficient). With `max-norm` 0 the norm is still computed
    (train.bin logs it) and nothing is scaled.

    ```mlir
    %g = zc.reduce_scatter avg %dw ranks 2 : tensor<4x3xf32> -> tensor<6xf32>
    %norm, %coef = zc.grad_norm %g, ... {max_norm = 1.0, weights = [1.0, ...]} : tensor<6xf32>, ...
    zc.adamw @w, %g state(...) lr %lr step %step scale %coef {...} : tensor<6xf32>
    ```
  }];
  let options = [
    Option<"maxNorm", "max-norm", "double", "1.0", "Clip the global gradient norm to this (0: do not clip)">,
    Option<"dataRanks", "data-ranks", "int64_t", "1", "Data-parallel ranks">,
    Option<"tensorParallel", "tensor-parallel", "int64_t", "1", "Tensor-parallel ranks">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccBucket : Pass<"zcc-bucket", "mlir::ModuleOp"> {
  let summary = "Coalesces gradient reductions and parameter all-gathers into buckets";
  let description = [{
    Runs after zcc-zero or zcc-data-parallel. In program order, consecutive
    collectives of one kind (same reduction, ranks and element type) are
    grouped until the group reaches the bucket size, and each group of two or
    more becomes one collective on a packed buffer (`zc.pack` / `zc.unpack`,
    rank-interleaved so each rank still receives exactly its shards):

    * `zc.reduce_scatter` and `zc.all_reduce` of gradients (`bucket-mb`): the
      bucket is issued where its last member was, when every member's
      gradient is final; the ops that consumed an earlier member move after
      it (only accumulations, scalings, optimizer updates, parameter
      refreshes and pure ops move: anything else closes the bucket).
    * `zc.gather_param` (ZeRO-3, `gather-bucket-mb`): `zc.pack_shards`, one
      `zc.all_gather`, `zc.unpack`, issued where the group's first member
      was; each parameter keeps its own `zc.release`.
    * `zc.all_gather_param` (ZeRO-1/2 refreshes, `gather-bucket-mb`):
      `zc.pack_shards`, one `zc.all_gather`, `zc.unpack_params`, where the
      group's last member was.

    A collective larger than the bucket stays alone. A size below 0 takes the
    cost model's (`cost-model`: a zcc-calibrate file; CostModel.h): the
    smallest bucket whose call spends at most 10% of its time on latency.
    0 turns bucketing off. The pass is deterministic, so every rank's program
    issues the same collectives in the same order.
  }];
  let options = [
    Option<"bucketMb", "bucket-mb", "double", "-1", "Gradient bucket size in MiB (<0: cost model, 0: off)">,
    Option<"gatherBucketMb", "gather-bucket-mb", "double", "-1",
           "Parameter all-gather group size in MiB (<0: cost model, 0: off)">,
    Option<"costModel", "cost-model", "std::string", "\"\"", "zcc-calibrate JSON file (empty: defaults)">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccCompress : Pass<"zcc-compress", "mlir::ModuleOp"> {
  let summary = "DeepSpeed's compression training: fake-quantized, pruned weights on a schedule";
  let description = [{
    Reads DeepSpeed's `compression_training` JSON (a whole DeepSpeed config or
    the section) and does what `init_compression` does to the matched
    nn.Linear / nn.Embedding weights: every forward read of one becomes
    `zc.fake_quantize` (weight_quantization, quantize_weight_in_forward)
    and/or `zc.apply_mask` with a `zc.state ... mask` (l1 sparse_pruning),
    each gated by a `zc.step_gate` at its `schedule_offset`. Module names are
    parameter names without `.weight`; `modules` are regular expressions
    searched in them. Records what --export-weights applies in the module
    attribute `zc.compression`.

    ```mlir
    %w = zc.param_ref @"fc.weight" : tensor<64x32xf32>
    // becomes
    %q = zc.step_gate from 0 : tensor<f32>
    %p = zc.step_gate from 50 : tensor<f32>
    %w = zc.param_ref @"fc.weight" : tensor<64x32xf32>
    %wq = zc.fake_quantize %w, %q bits 8 groups 1 : tensor<64x32xf32>
    %wm = zc.apply_mask %wq, %p mask @"fc.weight.sparse_mask" : tensor<64x32xf32>
    ```
  }];
  let options = [
    Option<"config", "config", "std::string", "\"\"", "The compression_training JSON file">,
  ];
}

def ZccZeroPlusPlus : Pass<"zcc-zero-pp", "mlir::ModuleOp"> {
  let summary = "ZeRO++: quantized weight gathers (qwZ), hierarchical partitions (hpZ), quantized gradients (qgZ)";
  let description = [{
    Runs after `zcc-bucket` on ZeRO-partitioned functions; each part is
    independent (Wang et al. 2023; DeepSpeed's `zero_quantized_weights`,
    `zero_hpz_partition_size`, `zero_quantized_gradients`).

    * qwZ (`quantized-weights`): each ZeRO-3 parameter gather sends its
      shards as int8 blocks (`zc.quantize`, one f32 scale per `weight-block`
      values) and dequantizes the gathered bucket; the stored shards and the
      optimizer stay full precision.
    * hpZ (`hpz` = K > 1): each parameter gets a secondary shard (a
      `zc.state` marked `secondary`, 1/K of it) kept from the forward
      pass's gather (`zc.keep_secondary`); the backward pass's gathers run
      inside groups of K consecutive ranks (`zc.pack_secondary`,
      `zc.all_gather ... on hpz`) at full precision.
    * qgZ (`quantized-gradients`): each data-parallel gradient
      reduce-scatter becomes ZeRO++'s two hops: int4 blocks all-to-all
      inside the node (`ranks-per-node` consecutive ranks), dequantized and
      summed in f32, re-quantized and all-to-all across nodes, dequantized
      and summed again.

    ```mlir
    %own = zc.pack_shards [@w] : tensor<6xf32>
    %all = zc.all_gather %own ranks 2 : tensor<6xf32> -> tensor<12xf32>
    // with quantized-weights, block 2048
    %row = zc.reshape %own : tensor<6xf32> -> tensor<1x6xf32>
    %q = zc.quantize %row block 2048 bits 8 : tensor<1x6xf32> -> tensor<1x12xi8>
    %qall = zc.all_gather %q ranks 2 : tensor<1x12xi8> -> tensor<2x12xi8>
    %rows = zc.dequantize %qall block 2048 bits 8 : tensor<2x12xi8> -> tensor<2x6xf32>
    %all = zc.reshape %rows : tensor<2x6xf32> -> tensor<12xf32>
    ```
  }];
  let options = [
    Option<"quantizedWeights", "quantized-weights", "bool", "false", "qwZ: int8 ZeRO-3 gathers">,
    Option<"hpz", "hpz", "int64_t", "1", "hpZ: secondary shards over groups of this many ranks (1: off)">,
    Option<"quantizedGradients", "quantized-gradients", "bool", "false", "qgZ: int4 two-hop gradient reduction">,
    Option<"ranksPerNode", "ranks-per-node", "int64_t", "0", "Data-parallel ranks per node (0: all on one)">,
    Option<"weightBlock", "weight-block", "int64_t", "2048", "qwZ: values per scale">,
    Option<"gradientBlock", "gradient-block", "int64_t", "512", "qgZ: values per scale (even)">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccSchedule : Pass<"zcc-schedule", "mlir::ModuleOp"> {
  let summary = "Overlaps collectives with compute: async starts early, waits late";
  let description = [{
    Runs after zcc-bucket. Every collective (and every ZeRO parameter gather,
    expanded to `zc.pack_shards` + `zc.all_gather`) becomes a
    `zc.*_start` / `zc.wait` pair on the communication stream. Then:

    * starts move up, with the ops that only prepare their input (a bucket's
      `zc.pack`, the `zc.grad_ref`s it packs), until an op defines their
      input, another start (starts keep their issue order), an op names the
      same parameter or state, or the communication buffers
      alive there would exceed `max-live-mb`. A parameter all-gather moves
      at most `prefetch` gather groups ahead of the one the compute waits
      for (0: gathers are not hoisted);
    * waits move down to right before the first use of their result; in the
      step function a gradient reduction whose consumers only unpack and
      accumulate is waited on, with them, at the end of the backward pass.

    Every rank runs the same compiled program, the pass is deterministic and
    the runtime runs collectives in issue order, so every rank issues the
    same collectives in the same order.
  }];
  let options = [
    Option<"prefetch", "prefetch", "int64_t", "1", "Parameter gather groups in flight ahead of compute">,
    Option<"maxLiveMb", "max-live-mb", "double", "-1",
           "Cap on in-flight and gathered communication buffers, MiB (<0: none)">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccOffloadActivations : Pass<"zcc-offload-activations", "mlir::ModuleOp"> {
  let summary = "Activations the backward pass reads kept in host memory between the passes";
  let description = [{
    ZeRO-R's CPU checkpointing, planned. In every function with
    `zc.role = "step"`, each value the forward pass computes (an op before the
    backward seed) and the backward pass reads, of at least `min-bytes`, is
    copied to a host-memory slot after its last forward use
    (`zc.offload_activation`) and copied back right before its first backward
    use (`zc.reload_activation`), which the backward uses then read. Its arena
    bytes are free in between: the arena holds the activations of the layer
    being computed, not of every layer. With `--recompute`, the values kept are
    the checkpoints, as DeepSpeed's `cpu_checkpointing` moves. Gathered
    parameters are not moved (ZeRO-3 gathers them again). The memory plan lays
    the slots out in the host tier.
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", "65536",
           "Smallest activation moved (smaller ones cost a transfer for little memory)">,
  ];
}

def ZccOffload : Pass<"zcc-offload", "mlir::ModuleOp"> {
  let summary = "Optimizer state to host memory or NVMe, with a planned swap schedule";
  let description = [{
    ZeRO-Offload and ZeRO-Infinity's optimizer offload, planned ahead of time.
    Every `zc.state` (AdamW's moments, SGD's momentum, mixed precision's fp32
    master) gets `zc.tier = "host"` or `"nvme"` and leaves the arena.

    `host`: the update runs on the states where they are (host memory).

    `nvme`: the states live in the rank's NVMe store, and the update function is
    rewritten into chunks of at most `slot-bytes` of states each (every update
    op becomes one `chunk = [first, count]` op per chunk, at its place). The
    chunks run through `slots` swap slots (buffers of the arena) in turn: a
    chunk's states are read (`zc.swap_in`) `slots - 1` chunks ahead of its
    update, waited for (`zc.swap_wait`) right before it, and written back
    (`zc.swap_out`) right after; a slot is refilled once the write of the chunk
    before it has had one chunk's update to finish. So reads run ahead, writes
    behind, and the update only waits where the device is slower than AdamW.
    A slot is as large as the largest chunk needs, at most `slot-bytes`.

    `param`: ZeRO-3's parameter shards join them (on the host tier the update
    and the gathers use them in place). On NVMe a chunk of the update swaps
    the parameter's shard with its states, and every `zc.pack_shards` (the
    shards of a gather group) reads them from a parameter slot, filled
    `param-slots - 1` gathers ahead, instead of the arena.
    The module records `zc.offload = {tier, slots, slot_bytes, nvme_path, param_slots,
    param_slot_bytes}`
    (`{tier}` alone for host).
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", "\"none\"", "none, host or nvme">,
    Option<"param", "param", "std::string", "\"none\"",
           "ZeRO-3's parameter shards: none, host or nvme (needs the optimizer offloaded)">,
    Option<"paramSlots", "param-slots", "int64_t", "3",
           "Parameter swap slots (NVMe): gathers read ahead + 1">,
    Option<"slots", "slots", "int64_t", "4", "Swap slots (NVMe): reads in flight ahead of the update + 1">,
    Option<"slotBytes", "slot-bytes", "int64_t", "8 << 20", "Bytes of one swap slot (NVMe)">,
    Option<"nvmePath", "nvme-path", "std::string", "\"\"",
           "The NVMe store's directory train.bin uses unless given --nvme-path">,
  ];
}

def ZccMemoryPlan : Pass<"zcc-memory-plan", "mlir::ModuleOp"> {
  let summary = "Checks each rank's arena plan against a memory budget";
  let description = [{
    Plans the arena exactly as zcc-lower-to-llvm will (liveness over the
    scheduled step and update functions, first fit at 64-byte alignment;
    MemoryPlan.h): parameters, gradients and optimizer state persist;
    activations, gathered parameters, buckets and collective buffers share
    the scratch region. With `budget` > 0, a plan larger than the budget is an
    error at the op where memory peaks, with the largest buffers live there
    as notes at their definitions. Changes nothing.
  }];
  let options = [
    Option<"budget", "budget", "int64_t", "0", "Bytes per rank (0: no budget)">,
  ];
}

def ZccTestPrintMemoryPlan : Pass<"zcc-test-print-memory-plan", "mlir::ModuleOp"> {
  let summary = "Test only: prints the arena plan (live ranges, offsets, kinds)";
  let description = [{
    Prints, to stdout, the persistent buffers' offsets and, per planned
    function, every scratch buffer as `[first op, last op] definer bytes at
    offset (kind)`, the peak op and the arena size.
  }];
}

def ZccMemorySvg : Pass<"zcc-memory-svg", "mlir::ModuleOp"> {
  let summary = "Draws the arena plan over the step as an SVG";
  let description = [{
    One column per op of the step, then the update function; each column
    stacks the live bytes by kind (parameters, gradients, optimizer state,
    gathered parameters, communication buffers, activations). Changes nothing.
  }];
  let options = [
    Option<"output", "output", "std::string", "\"-\"", "SVG file ('-': stdout)">,
  ];
}

def ZccRecompute : Pass<"zcc-recompute", "mlir::ModuleOp"> {
  let summary = "Recomputes chosen activations in the backward pass instead of keeping them";
  let description = [{
    Runs after zcc-autodiff, before zcc-zero. A candidate is a result of a pure
    forward compute op that the backward pass reads. Under ZeRO-3, zcc-zero
    gathers the sharded parameters a clone reads with the backward pass's own
    (one gather per parameter over its backward readers; a bias that only a
    clone reads gets one there, bucketed with its layer's). A recomputed value's op is cloned
    (`zc.recomputed`) right before its first backward use, recursively through
    other recomputed values; the original dies after its last forward use.
    Clones compute bitwise the same values.

    * `none`;
    * `selective`: values whose op costs at most `flops-per-byte` FLOPs per
      byte it frees (elementwise ops, normalizations, softmax; not matmuls or
      attention, O(K) per byte). A per-op cost, not a list of op names;
    * `op`: torchtitan's op-level selective checkpointing: selective's values
      and every second matmul (in forward order) of each transformer layer
      (`layer`'s checkpoints: torchtitan checkpoints each TransformerBlock, so
      the residual after the attention is recomputed from the output
      projection's output); attention, the other matmuls and the
      tensor-parallel reductions' outputs (torchtitan saves its collectives')
      stay kept;
    * `full`: everything but the checkpoints, the forward values alone in
      flight where they are defined (each block's input, the residual stream:
      a transformer layer's input and the residual after its attention), so a
      span's last product (the attention's output projection, the MLP's down
      projection), whose output the backward pass does not read, is not re-run;
    * `layer`: everything but each transformer layer's input (Megatron-LM's
      `--recompute-granularity full`, torchtitan's full activation
      checkpointing): full's checkpoints less those that end a span with an
      attention and start one without, and a tensor-parallel reduction of the
      forward pass may run again. The whole layer re-runs in the backward pass,
      its output projection and its tensor-parallel all-reduces (or
      reduce-scatters) too: half full's kept bytes per layer for about 10% more
      FLOPs of a transformer's step;
    * `auto`: the fewest recompute FLOPs whose arena fits `budget`, measured
      by running `evaluate-pipeline` (the rest of the pipeline) on a copy and
      planning its memory, among none, selective, full recomputation of the
      first k spans between checkpoints with selective in the rest (k
      bisected) and full; then the individual values: with at most 12
      candidates every subset (`search=exhaustive` forces that,
      `search=greedy` the heuristic: cheapest FLOPs per byte first, then the
      costliest choices the budget does not need dropped), up to 24 the
      greedy search, above that the shortest fitting prefix of selective's
      values. Where no plan fits, an error names the smallest arena and, for
      each `lever-pipelines` entry, the arena that flag reaches.

    The choice is recorded on the module as `zc.recompute` (policy, the plan
    auto chose, FLOPs added per step function run, values recomputed, and per
    op kind the values recomputed and kept and why) for the report.
  }];
  let options = [
    Option<"policy", "policy", "std::string", "\"none\"", "none, selective, op, full, layer or auto">,
    Option<"flopsPerByte", "flops-per-byte", "double", "4.0", "selective: most FLOPs per freed byte">,
    Option<"budget", "budget", "int64_t", "0", "auto: arena bytes per rank to fit">,
    Option<"search", "search", "std::string", "\"auto\"",
           "auto: exhaustive up to 12 candidates, else greedy; or greedy, exhaustive">,
    Option<"evaluatePipeline", "evaluate-pipeline", "std::string", "\"\"",
           "auto: passes run on a copy before planning its memory">,
    Option<"leverPipelines", "lever-pipelines", "std::string", "\"\"",
           "auto: 'flag|pipeline' entries separated by ';': where even full recomputation is over "
           "budget, the error gives the arena each flag's pipeline reaches">,
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccFuse : Pass<"zcc-fuse", "mlir::ModuleOp"> {
  let summary = "Fuses matmuls with their bias, GELU and backward epilogues";
  let description = [{
    Runs after zcc-autodiff (and zcc-recompute). In the step and update
    functions:

    * `matmul` (used only there) -> `bias_add` [-> `gelu`] becomes
      `zc.matmul_bias` or `zc.matmul_bias_gelu` (which also returns the
      pre-activation the backward pass reads);
    * `matmul` (used only there) -> `gelu_grad` -> `reduce_sum` over all but
      the last axis becomes `zc.matmul_dgelu_bgrad`.

    Each fused op is one cuBLASLt call with an epilogue on the CUDA backend;
    the CPU backend runs the ops it replaces, so results do not change.

    * The language-model head: `matmul` (logits) read only by
      `cross_entropy` and `cross_entropy_grad`, whose gradient is read only by
      the two matmuls autodiff wrote for it (the input's and the weight's
      gradient), becomes `zc.matmul_cross_entropy`, which never holds more
      than `head-chunk-bytes` of logits: rows x classes shrinks to a chunk of
      rows (with one chunk, results do not change).
  }];
  let options = [
    Option<"headChunkBytes", "head-chunk-bytes", "int64_t", /*default=*/"128 << 20",
           "Most bytes of logits zc.matmul_cross_entropy holds at once (its chunk of rows)">
  ];
  let dependentDialects = ["::mlir::zc::ZcDialect"];
}

def ZccReport : Pass<"zcc-report", "mlir::ModuleOp"> {
  let summary = "Reports each rank's model-state bytes and per-step communication";
  let description = [{
    Reads the partitioned step and update functions (after zcc-zero or
    zcc-data-parallel) and writes, per rank: `param_bytes`, `grad_bytes`,
    `optimizer_bytes` (the persistent buffers, ZeRO padding included),
    `gathered_param_peak_bytes` (most bytes of gathered ZeRO-3 parameters
    alive at once), and per optimizer step `collectives` (count by kind) and
    `comm_bytes` (bytes this rank sends, ring algorithms: the runtime's
    counters count the same way). Changes nothing.
  }];
  let options = [
    Option<"format", "format", "std::string", "\"text\"", "text or json">,
    Option<"output", "output", "std::string", "\"-\"", "File to write ('-': stdout)">,
    Option<"microBatches", "micro-batches", "int64_t", "1", "Step function runs per optimizer step">,
    Option<"costModel", "cost-model", "std::string", "\"\"", "zcc-calibrate JSON file (empty: defaults)">,
    Option<"worldSize", "world-size", "int64_t", "1", "All ranks of the mesh">,
    Option<"tensorParallel", "tp", "int64_t", "1", "Tensor-parallel ranks">,
    Option<"pipelineParallel", "pp", "int64_t", "1", "Pipeline stages">,
    Option<"ranksPerNode", "ranks-per-node", "int64_t", "0",
           "Ranks per node: bytes by link, summed over ranks (0: not reported)">,
  ];
}

def ZccLowerToLLVM : Pass<"zcc-lower-to-llvm", "mlir::ModuleOp"> {
  let summary = "Plans the arena and lowers zc to runtime calls in the LLVM dialect";
  let description = [{
    Every tensor gets an offset in the rank's arena: parameters, gradients and
    optimizer state in a persistent region, the step's and the update's values
    in a scratch region reused once a value is dead (first fit over the live
    ranges; views such as `zc.reshape` share their input's bytes). Each zc op
    becomes calls to the runtime's C ABI (runtime/include/zrt/zrt_abi.def);
    the step and update functions become `zcc_step(arena, inputs...) -> f32`
    and `zcc_update(arena, lr, step)`. The model's description (parameters and
    their initializers and offsets, inputs, arena size, optimizer defaults,
    world size) is emitted as the JSON string `zcc_model_json`, which the
    executable's main reads.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1", "World size the executable checks at start">,
    Option<"microBatches", "micro-batches", "int64_t", "1", "Micro-batches per step">,
    Option<"tensorParallel", "tp", "int64_t", "1", "Tensor-parallel ranks of the mesh">,
    Option<"pipelineParallel", "pp", "int64_t", "1", "Pipeline stages of the mesh">,
    Option<"symbolSuffix", "symbol-suffix", "std::string", "\"\"",
           "Appended to zcc_step, zcc_update, zcc_forward and zcc_model_json (a pipeline stage's: _sN)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // ZCC_PASSES_TD
