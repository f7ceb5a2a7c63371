//===- ZcQuantizeOps.td - quantization: ZeRO++ and compression training ----===//
//
// Block-wise quantization (the byte layout and rounding are the runtime's,
// runtime/include/zrt/Quantize.h), the all-to-all that ZeRO++'s quantized
// gradient reduction runs in two hops, and hpZ's secondary parameter shards.
//
//===----------------------------------------------------------------------===//

#ifndef ZC_QUANTIZE_OPS_TD
#define ZC_QUANTIZE_OPS_TD

def ZC_QuantizeOp : ZC_Op<"quantize", [Pure]> {
  let summary = "Block-wise symmetric quantization of the last axis to int8 or int4";
  let description = [{
    Each row of the last axis (`C` values) is cut into blocks of `block`
    values (the last may be shorter); a block's scale is its largest magnitude
    over 127 (8 bits) or 7 (4 bits), and each value becomes the nearest level
    (ties to even) of that scale. The result holds each row as
    `4 ceil(C / block)` bytes of f32 scales followed by the levels (one byte
    each, or two per byte for 4 bits), padded to a multiple of 4 bytes: one
    buffer, so one collective moves scales and levels together.

    Example (a ZeRO-3 shard of 1000 values, in blocks of 128):

    ```mlir
    %q = zc.quantize %shard block 128 bits 8 : tensor<1000xf32> -> tensor<1032xi8>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$block,
                       ConfinedAttr<I32Attr, [IntPositive]>:$bits);
  let results = (outs StaticShapeTensorOf<[I8]>:$result);
  let assemblyFormat = "$input `block` $block `bits` $bits attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_DequantizeOp : ZC_Op<"dequantize", [Pure]> {
  let summary = "The values of zc.quantize's rows: level x block scale";
  let description = [{
    The inverse of `zc.quantize` with the same `block` and `bits`: the
    result's last axis has the row's values, each its level times its
    block's scale (in f32, then rounded to the result's type).

    Example (4 ranks' quantized shards, gathered):

    ```mlir
    %x = zc.dequantize %all block 128 bits 8 : tensor<4x1032xi8> -> tensor<4x1000xf32>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[I8]>:$input, ConfinedAttr<I64Attr, [IntPositive]>:$block,
                       ConfinedAttr<I32Attr, [IntPositive]>:$bits);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `block` $block `bits` $bits attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def ZC_FakeQuantizeOp : ZC_Op<"fake_quantize", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Compression training's weight quantization: values snapped to a grid, gradient straight through";
  let description = [{
    DeepSpeed's `SymQuantizer` / `AsymQuantizer` (`compression_training`'s
    weight quantization with `quantize_weight_in_forward`): the flattened
    input is `groups` contiguous groups, each snapped to its own `bits`-bit
    grid (symmetric: `scale = 2 max|x| / 2^bits`, levels
    `[-2^(bits-1), 2^(bits-1) - 1]`; `asymmetric`: `scale = (max - min) /
    2^bits` and a zero point, levels `[0, 2^bits - 1]`), each operation
    rounded in f32 as PyTorch does (runtime/include/zrt/FakeQuantize.h).
    While the 0-d `gate` is 0 (before the schedule's offset) the result is
    the input. The gradient passes through unchanged (straight-through
    estimator).

    `per_row` instead of `groups` (activation quantization, DeepSpeed's
    dynamic range: `num_groups = numel / size(-1)`): each row of the last
    axis is a group, so the op means the same on any slice of the batch.
    `groups G columns`: the groups are G blocks of the last axis, each
    across every row (DeepSpeed's groups of output rows, of a weight zcc
    keeps [in, out]).

    Example:

    ```mlir
    %wq = zc.fake_quantize %w, %gate bits 8 groups 1 : tensor<128x512xf32>
    %xq = zc.fake_quantize %x, %gate bits 8 per_row : tensor<8x64x128xf32>
    %vq = zc.fake_quantize %v, %gate bits 8 groups 4 columns : tensor<128x512xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_LossTensor:$gate, ConfinedAttr<I32Attr, [IntPositive]>:$bits,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$groups, UnitAttr:$columns,
                       UnitAttr:$per_row, UnitAttr:$asymmetric);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gate `bits` $bits (`groups` $groups^)? (`columns` $columns^)? (`per_row` $per_row^)?
    (`asymmetric` $asymmetric^)? attr-dict
    `:` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of groups: `groups`, or the rows of the last axis with `per_row`.
    int64_t groupCount() {
      auto type = ::llvm::cast<::mlir::RankedTensorType>(getInput().getType());
      if (getPerRow())
        return type.getShape().empty() ? 1 : type.getNumElements() / std::max<int64_t>(1, type.getShape().back());
      return static_cast<int64_t>(getGroups().value_or(1));
    }
    /// The length of a group's contiguous runs (zrt/FakeQuantize.h's groupIndex).
    int64_t runWidth() {
      auto type = ::llvm::cast<::mlir::RankedTensorType>(getInput().getType());
      const int64_t last = type.getShape().empty() ? 1 : type.getShape().back();
      if (getPerRow())
        return last;
      if (getColumns())
        return last / groupCount();
      return type.getNumElements() / groupCount();
    }
  }];
}

def ZC_StepGateOp : ZC_Op<"step_gate", [Pure]> {
  let summary = "1 from a training step on, 0 before: a compression technique's schedule";
  let description = [{
    The 0-d gate of `compression_training`'s `schedule_offset`: 1.0 while the
    run has completed at least `from` training steps, else 0.0 (DeepSpeed's
    compression scheduler counts the same steps, and once on a technique
    stays on). train.bin writes every gate's value before each step
    (`zrt_set_step_gates`); the gates of a module are numbered by their
    distinct `from` values in increasing order.

    Example:

    ```mlir
    %on = zc.step_gate from 50 : tensor<f32>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$from);
  let results = (outs ZC_LossTensor:$result);
  let assemblyFormat = "`from` $from attr-dict `:` type($result)";
}

def ZC_ApplyMaskOp : ZC_Op<"apply_mask", [AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Sparse pruning: the weight times its mask once the gate is on";
  let description = [{
    DeepSpeed's `LinearLayer_Compress` with `sparse_pruning` enabled: while
    the 0-d `gate` is nonzero the result is `input * mask` (the `zc.state ...
    mask` named, in the input's shape), else the input itself. Its gradient
    is the same op on the incoming gradient: pruned weights get none.

    A row mask (`zc.state ... rows A`) has one value per index of the
    input's `axis`, and multiplies every slice along it (row pruning: the
    weight's output rows, and the bias).

    Example:

    ```mlir
    %wm = zc.apply_mask %wq, %on mask @w.sparse_mask : tensor<128x512xf32>
    %wr = zc.apply_mask %wm, %on mask @w.row_mask axis 1 : tensor<128x512xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ZC_LossTensor:$gate, FlatSymbolRefAttr:$mask,
                       OptionalAttr<I64Attr>:$axis);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$input `,` $gate `mask` $mask (`axis` $axis^)? attr-dict `:` type($result)";
}

def ZC_AllToAllOp : ZC_Op<"all_to_all", [AllTypesMatch<["input", "result"]>]> {
  let summary = "Exchanges equal blocks of the leading axis among the ranks of one group (blocking)";
  let description = [{
    The leading axis is `ranks` blocks: rank `r` sends its block `p` to rank
    `p`, where it becomes block `r` of the result. Each rank sends
    `(ranks - 1) / ranks` of the buffer. `on` names the group: `node` (the
    data-parallel ranks on this rank's node) and `cross` (the data-parallel
    ranks with this rank's place on every node) are ZeRO++'s two hops.

    Example:

    ```mlir
    %y = zc.all_to_all %x ranks 2 on node : tensor<2x2x520xi8>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32, BF16, I8]>:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       ZC_MeshAxisAttr:$axis);
  let results = (outs StaticShapeTensorOf<[F32, BF16, I8]>:$result);
  let assemblyFormat = "$input `ranks` $ranks `on` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def ZC_AllToAllStartOp : ZC_Op<"all_to_all_start"> {
  let summary = "Starts an all_to_all on the communication stream";
  let description = [{
    Same semantics as `zc.all_to_all`; the exchanged tensor is available from
    the matching `zc.wait`. `input` must not be modified until then.

    Example:

    ```mlir
    %h = zc.all_to_all_start %x ranks 2 on node : tensor<2x2x520xi8> -> !zc.async<tensor<2x2x520xi8>>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32, BF16, I8]>:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       ZC_MeshAxisAttr:$axis);
  let results = (outs ZC_AsyncType:$handle);
  let assemblyFormat = "$input `ranks` $ranks `on` $axis attr-dict `:` type($input) `->` qualified(type($handle))";
  let hasVerifier = 1;
}

def ZC_KeepSecondaryOp : ZC_Op<"keep_secondary", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Copies this rank's hpZ part of gathered parameters into their secondary shards";
  let description = [{
    ZeRO++'s hierarchical partitioning (hpZ): `input` is a gathered bucket
    of `ranks` chunks (`zc.pack_shards`' layout, as the forward pass's
    all-gather returns it). The data-parallel ranks form groups of `group`
    consecutive ranks; rank `j` of its group keeps chunks
    `[j R, (j + 1) R)` (`R = ranks / group`) in the `zc.state` tensors
    named, one per parameter, laid out as `zc.unpack ranks R` lays out a
    tensor of `R` chunks. Each group then holds the whole parameters, and
    the backward pass gathers them inside the group (`zc.pack_secondary`).

    Example (4 ranks in groups of 2):

    ```mlir
    zc.keep_secondary %all ranks 4 group 2 into [@w.secondary, @b.secondary] : tensor<16xf32>
    ```
  }];
  let arguments = (ins ZC_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       ConfinedAttr<I64Attr, [IntPositive]>:$group, FlatSymbolRefArrayAttr:$states);
  let assemblyFormat = "$input `ranks` $ranks `group` $group `into` $states attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def ZC_PackSecondaryOp : ZC_Op<"pack_secondary", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "This rank's secondary shards of parameters as one bucket, for a gather inside its hpZ group";
  let description = [{
    The send side of the backward pass's gather under hpZ: the `R = ranks /
    group` chunks this rank keeps of each named secondary shard, interleaved
    as `zc.pack ranks R` interleaves them. A `zc.all_gather ... on hpz` of
    it over the `group` ranks gives the bucket of `ranks` chunks a gather
    over all ranks would have given.

    Example:

    ```mlir
    %own = zc.pack_secondary [@w.secondary, @b.secondary] ranks 4 group 2 : tensor<8xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$states, ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
                       ConfinedAttr<I64Attr, [IntPositive]>:$group);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$states `ranks` $ranks `group` $group attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // ZC_QUANTIZE_OPS_TD
