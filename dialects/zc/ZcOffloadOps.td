//===- ZcOffloadOps.td - optimizer state swapped to and from NVMe ---------===//
//
// ZeRO-Infinity's swapping, planned: zcc-offload puts optimizer states on a tier
// (`zc.tier = "host" | "nvme"` on their zc.state) and, for NVMe, rewrites the
// update into chunks that each run on a swap slot (a buffer of the arena): the
// chunk's states are read into the slot ahead of it, updated there, written back
// behind it. The ops below are that schedule; the module's `zc.offload`
// dictionary gives the slots' count and size.

#ifndef ZC_OFFLOAD_OPS_TD
#define ZC_OFFLOAD_OPS_TD

class ZC_SwapOp<string mnemonic> : ZC_Op<mnemonic, [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let arguments = (ins FlatSymbolRefAttr:$state, I64Attr:$first, I64Attr:$count, I64Attr:$slot,
                       I64Attr:$at);
  let assemblyFormat = "$state `[` $first `,` $count `]` `slot` $slot `at` $at attr-dict";
}

def ZC_SwapInOp : ZC_SwapOp<"swap_in"> {
  let summary = "Starts reading a chunk of an NVMe-resident state into a swap slot";
  let description = [{
    Elements `[first, first + count)` of the fp32 state `@state` (which lives on
    the NVMe tier) are read into swap slot `slot`, `at` bytes into it. The read
    runs in the background: a `zc.swap_wait` of the slot completes it. `first` is
    a multiple of 1024 and `at` of 4096 (O_DIRECT's alignment); the transfer is
    the chunk rounded up to 4096 bytes (the store pads every tensor).

    Example: `zc.swap_in @w.exp_avg[0, 65536] slot 1 at 262144`
  }];
}

def ZC_SwapOutOp : ZC_SwapOp<"swap_out"> {
  let summary = "Starts writing a chunk of a swap slot back to its NVMe-resident state";
  let description = [{
    The inverse of `zc.swap_in`: the slot's bytes at `at` go back to elements
    `[first, first + count)` of `@state`. A `zc.swap_wait` of the slot is needed
    before the slot is filled again.

    Example: `zc.swap_out @w.exp_avg[0, 65536] slot 1 at 262144`
  }];
}

def ZC_SwapWaitOp : ZC_Op<"swap_wait"> {
  let summary = "Waits for every swap transfer of a slot";
  let description = [{
    Returns once the reads and writes started on swap slot `slot` are done:
    before an update reads the slot, and before a slot is refilled.

    Example: `zc.swap_wait slot 1`
  }];
  let arguments = (ins I64Attr:$slot);
  let assemblyFormat = "`slot` $slot attr-dict";
  let hasVerifier = 1;
}

// ZeRO-R's CPU checkpointing, planned: zcc-offload-activations moves an activation the
// backward pass reads out of the arena after its last forward use and back right
// before its first backward use; the memory plan gives each slot its place in the
// host tier.

def ZC_OffloadActivationOp : ZC_Op<"offload_activation"> {
  let summary = "Copies an activation to its host-memory slot";
  let description = [{
    The forward pass is done with `%value` (its backward uses read the
    `zc.reload_activation` of the same slot instead), so its arena bytes are free
    once this copy is done. `slot` numbers the step's offloaded activations; the
    memory plan lays them out in the host tier.

    Example: `zc.offload_activation %h to slot 3 : tensor<8x64x256xf32>`
  }];
  let arguments = (ins AnyRankedTensor:$value, I64Attr:$slot);
  let assemblyFormat = "$value `to` `slot` $slot attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def ZC_ReloadActivationOp : ZC_Op<"reload_activation"> {
  let summary = "Copies an offloaded activation back into the arena";
  let description = [{
    The value a `zc.offload_activation` of the same slot, earlier in the same
    block and of the same type, copied out.

    Example: `%h2 = zc.reload_activation slot 3 : tensor<8x64x256xf32>`
  }];
  let arguments = (ins I64Attr:$slot);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "`slot` $slot attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // ZC_OFFLOAD_OPS_TD
