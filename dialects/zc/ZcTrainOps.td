//===- ZcTrainOps.td - the training step's state: gradients, optimizer ----===//
//
// What autodiff and the optimizer pass produce: per-parameter gradient buffers
// that persist across the micro-batches of one step, optimizer state tensors, and
// in-place update ops. These are the only zc ops with memory effects besides the
// collectives; the lowering gives every symbol below one persistent arena buffer.

#ifndef ZC_TRAIN_OPS_TD
#define ZC_TRAIN_OPS_TD

def ZC_StateOp : ZC_Op<"state", [Symbol, HasParent<"::mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Optimizer state of one parameter: a module-level fp32 tensor";
  let description = [{
    A persistent tensor the optimizer keeps for parameter `@param` (AdamW's
    `exp_avg` and `exp_avg_sq`, SGD's `momentum`) and, for a parameter stored in
    bf16, its fp32 master copy. Moments start at zero; a master copy (named by
    the update op's `master`) starts at the parameter's initial values. Created
    by the optimizer pass; the ZeRO passes shard it like its parameter.

    `secondary` (zcc-zero-pp, ZeRO++'s hpZ): not optimizer state but the part
    of a ZeRO-3 parameter this rank keeps for its group's backward gathers,
    in the parameter's type, a whole number of its shards. Every forward pass
    rewrites it: never saved, never initialized.

    `mask keep R` (zcc-compress, DeepSpeed's l1 `sparse_pruning`): not
    optimizer state but the pruning mask of the whole parameter, 1 where the
    weight is kept and 0 where it is pruned: the `ceil(R n)` largest
    magnitudes of the parameter's initial values (DeepSpeed computes it once,
    in `init_compression`). train.bin computes it before the first step and
    checkpoints it; every rank holds all of it (DeepSpeed's buffers are not
    partitioned either), since the forward pass reads it with the whole
    weight (`zc.apply_mask`).

    `mask keep R rows A` (l1 `row_pruning`): one value per index of the
    parameter's axis `A` (a linear layer's output features): the `ceil(R d)`
    indices whose slices have the largest L1 norms are kept, the others
    pruned whole (with the layer's bias).

    Example:

    ```mlir
    zc.state @w.exp_avg : tensor<784x10xf32> of @w
    zc.state @w.secondary : tensor<3920xf32> of @w secondary
    zc.state @w.sparse_mask : tensor<784x10xf32> of @w mask keep 5.0e-01
    zc.state @w.row_mask : tensor<10xf32> of @w mask keep 5.0e-01 rows 1
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<ZC_FloatTensor>:$type,
                       FlatSymbolRefAttr:$param, UnitAttr:$secondary, OptionalAttr<F64Attr>:$mask_keep,
                       OptionalAttr<I64Attr>:$mask_rows);
  let assemblyFormat = [{
    $sym_name `:` $type `of` $param (`secondary` $secondary^)? (`mask` `keep` $mask_keep^)? (`rows` $mask_rows^)?
    attr-dict
  }];
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def ZC_GradAccumulateOp : ZC_Op<"grad_accumulate", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Adds a gradient into the parameter's gradient buffer";
  let description = [{
    The end of a parameter's backward: `grad` is added to the gradient buffer
    of `@param`, which holds the sum over the micro-batches of the current step
    until the update reads it (`zc.grad_ref`) and clears it (`zc.grad_zero`).
    Written by autodiff once per parameter, after all contributions are summed.

    With `overwrite` (one micro-batch a step: zcc-optimizer sets it and writes no
    `zc.grad_zero`) the buffer holds exactly `grad`: nothing is added or cleared,
    and the memory plan lets the op producing `grad` write into the buffer itself.

    Example: `zc.grad_accumulate @w, %dw : tensor<784x10xf32>`,
    `zc.grad_accumulate @w, %dw overwrite : tensor<784x10xf32>`
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, Arg<ZC_FloatTensor, "", []>:$grad, UnitAttr:$overwrite);
  let assemblyFormat = "$param `,` $grad (`overwrite` $overwrite^)? attr-dict `:` type($grad)";
}

def ZC_GradRefOp : ZC_Op<"grad_ref", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Reads the accumulated gradient of a parameter";
  let description = [{
    The sum of the `zc.grad_accumulate` contributions since the last
    `zc.grad_zero`; its type is the parameter's.

    Example: `%g = zc.grad_ref @w : tensor<784x10xf32>`
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$param attr-dict `:` type($result)";
}

def ZC_GradZeroOp : ZC_Op<"grad_zero", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Clears a parameter's gradient buffer for the next step";
  let description = [{
    Example: `zc.grad_zero @w`
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let assemblyFormat = "$param attr-dict";
}

def ZC_GatherParamOp : ZC_Op<"gather_param", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "All-gathers a sharded parameter into a whole temporary tensor (ZeRO-3)";
  let description = [{
    Every rank contributes its shard of `@param` (stored as a shard:
    `zc.shard_param`); the result is the whole parameter, live until a
    `zc.release` or its last use. Each rank sends `(ranks - 1)` shards.

    Example: `%w = zc.gather_param @w : tensor<784x256xf32>`
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$param attr-dict `:` type($result)";
}

def ZC_AllGatherParamOp : ZC_Op<"all_gather_param", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Refreshes a whole parameter from the shards every rank updated (ZeRO-1/2)";
  let description = [{
    After a shard-wise optimizer step each rank holds the new values of its own
    shard of `@param` only; this all-gathers the shards in place, so every rank
    again holds the whole updated parameter.

    Example: `zc.all_gather_param @w`
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let assemblyFormat = "$param attr-dict";
}

def ZC_AdamWOp : ZC_Op<"adamw", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "AdamW update of a parameter in place (PyTorch's formula)";
  let description = [{
    `p -= lr * (m_hat / (sqrt(v_hat) + eps) + weight_decay * p)` with bias-corrected
    moments kept in the two `zc.state` tensors; decoupled weight decay as in
    `torch.optim.AdamW`. `lr` and `step` (counting from 1) are run-time values.
    When the parameter is partitioned (`zc.shards`), `grad` and the states are
    this rank's 1-D shard and only that shard of the parameter is updated.
    A bf16 parameter is updated through its fp32 `master` state (mixed
    precision: the update runs on the master, then rounds it into the
    parameter); an fp32 parameter is its own master.

    Offload (zcc-offload): `chunk = [first, count]` updates only those elements
    (of the parameter or shard, its gradient and states); `swap_slot` reads and
    writes the states in that swap slot instead of their tier, where the chunk's
    states lie in the op's order (exp_avg, exp_avg_sq, master), each
    `align(count x 4, 4096)` bytes after the one before. A state on the NVMe
    tier is only ever updated through a slot.

    Gradient clipping (zcc-grad-clip): `scale %c` multiplies each gradient
    element by the f32 scalar `%c` (the clip coefficient `zc.grad_norm`
    computed) as it is read, as `torch.nn.utils.clip_grad_norm_` scales the
    gradients before `optimizer.step()`.

    Example:

    ```mlir
    zc.adamw @w, %g state(@w.exp_avg, @w.exp_avg_sq) lr %lr step %step
        {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.1} : tensor<784x10xf32>
    zc.adamw @v, %gv state(@v.exp_avg, @v.exp_avg_sq) master(@v.master) lr %lr step %step
        {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.1} : tensor<10xbf16>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, ZC_FloatTensor:$grad,
                       FlatSymbolRefAttr:$exp_avg, FlatSymbolRefAttr:$exp_avg_sq,
                       OptionalAttr<FlatSymbolRefAttr>:$master,
                       F64:$lr, I64:$step, Optional<ZC_LossTensor>:$grad_scale,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$eps,
                       F64Attr:$weight_decay, OptionalAttr<DenseI64ArrayAttr>:$chunk,
                       OptionalAttr<I64Attr>:$swap_slot);
  let assemblyFormat = [{
    $param `,` $grad `state` `(` $exp_avg `,` $exp_avg_sq `)` (`master` `(` $master^ `)`)?
    `lr` $lr `step` $step (`scale` $grad_scale^)? attr-dict `:` type($grad)
  }];
}

def ZC_SgdOp : ZC_Op<"sgd", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "SGD with momentum, in place (PyTorch's formula)";
  let description = [{
    `g += weight_decay * p; buf = momentum * buf + g` (
    buf starts at zero); `p -= lr * buf`, as `torch.optim.SGD` without dampening or Nesterov.
    A bf16 parameter is updated through its fp32 `master` state, as in `zc.adamw`;
    `chunk`, `swap_slot` and `scale` as there (the slot holds momentum, then master).

    Example:

    ```mlir
    zc.sgd @w, %g state(@w.momentum) lr %lr {momentum = 0.9, weight_decay = 0.0} : tensor<10xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, ZC_FloatTensor:$grad,
                       FlatSymbolRefAttr:$momentum_buffer, OptionalAttr<FlatSymbolRefAttr>:$master,
                       F64:$lr, Optional<ZC_LossTensor>:$grad_scale, F64Attr:$momentum,
                       F64Attr:$weight_decay,
                       OptionalAttr<DenseI64ArrayAttr>:$chunk, OptionalAttr<I64Attr>:$swap_slot);
  let assemblyFormat = [{
    $param `,` $grad `state` `(` $momentum_buffer `)` (`master` `(` $master^ `)`)? `lr` $lr
    (`scale` $grad_scale^)? attr-dict `:` type($grad)
  }];
}

def ZC_GradNormOp : ZC_Op<"grad_norm", [MemoryEffects<[MemWrite]>]> {
  let summary = "The global L2 norm of the gradients and the clip coefficient";
  let description = [{
    `norm = sqrt(allreduce_world(sum_i weight_i * sum(grads_i^2)))` over every
    rank of the mesh, and `coef = min(1, max_norm / (norm + 1e-6))`
    (`torch.nn.utils.clip_grad_norm_`'s formula; `max_norm = 0`: no clipping,
    coef = 1). Each rank passes the gradient pieces its optimizer updates; a
    piece held identically by `r` ranks (a replicated gradient, a parameter
    every tensor-parallel rank keeps whole, a tied one on two pipeline stages)
    has weight `1 / r`, so each value of the model's gradient counts once.
    Squares accumulate in f64. The runtime keeps the norm for train.bin's log.

    Example:

    ```mlir
    %norm, %coef = zc.grad_norm %g0, %g1 {weights = [1.0, 0.5], max_norm = 1.0}
        : tensor<4096xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Variadic<ZC_FloatTensor>:$grads, F64ArrayAttr:$weights, F64Attr:$max_norm);
  let results = (outs ZC_LossTensor:$norm, ZC_LossTensor:$coef);
  let assemblyFormat = "$grads attr-dict `:` type($grads)";
  let hasVerifier = 1;
}

def ZC_PackShardsOp : ZC_Op<"pack_shards", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Copies this rank's shard of each parameter into one bucket";
  let description = [{
    The send side of a grouped parameter all-gather (zcc-bucket): the
    concatenation of this rank's `s_i = ceil(numel_i / ranks)` elements of
    each parameter, in order: the stored shard of a `zc.shard_param`
    parameter, or this rank's slice of a whole one updated shard-wise. A
    `zc.all_gather` of it followed by `zc.unpack ranks N` gives the whole
    parameters.

    Example: `%own = zc.pack_shards [@w, @b] : tensor<8xf32>`
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$params attr-dict `:` type($result)";
}

def ZC_UnpackParamsOp : ZC_Op<"unpack_params", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Writes an all-gathered bucket back into whole parameters (ZeRO-1/2)";
  let description = [{
    The grouped form of `zc.all_gather_param`: `input` is the all-gather of
    a `zc.pack_shards` of the same parameters; each whole parameter's storage
    is overwritten with its gathered values.

    Example: `zc.unpack_params %all ranks 2 into [@w, @b] : tensor<16xf32>`
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       FlatSymbolRefArrayAttr:$params);
  let assemblyFormat = "$input `ranks` $ranks `into` $params attr-dict `:` type($input)";
}

#endif // ZC_TRAIN_OPS_TD
