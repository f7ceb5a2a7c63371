//===- ZcDialect.td - The zc dialect: training graphs for zcc --------------===//
//
// zc describes one data-parallel training step: parameters as module-level
// symbols, a forward function from a batch to a scalar loss, the backward ops
// autodiff emits, and the collective/memory ops the ZeRO passes insert.
//
//===----------------------------------------------------------------------===//

#ifndef ZC_DIALECT_TD
#define ZC_DIALECT_TD

include "mlir/IR/OpBase.td"

def Zc_Dialect : Dialect {
  let name = "zc";
  let cppNamespace = "::mlir::zc";
  let summary = "Training graphs for sharded data-parallel training";
  let description = [{
    The `zc` dialect holds a model's training graph at tensor level with value
    semantics and static shapes:

    * `zc.param` declares a parameter (shape, element type, initializer) as a
      module-level symbol; `zc.param_ref` reads it inside a function.
    * `zc.forward` is the user's forward function: a batch in, a scalar `f32`
      loss out.
    * Forward ops (matmul, layernorm, causal attention, ...) and the backward
      ops that autodiff emits for the ops whose gradient is not itself a
      composition of forward ops (`*_grad`).
    * Collectives (`all_gather`, `reduce_scatter`, `all_reduce`, each with an
      async `*_start` + `zc.wait` form) and `zc.release`, inserted by the ZeRO,
      bucketing and scheduling passes.

    Every op verifies shapes and element types; every tensor is statically
    shaped, so the memory planner can place every buffer at compile time.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

class ZC_Op<string mnemonic, list<Trait> traits = []>
    : Op<Zc_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Type constraints shared by the op definitions.
//===----------------------------------------------------------------------===//

// Element types of activations, parameters and gradients.
def ZC_FloatElement : AnyTypeOf<[F32, BF16]>;
def ZC_FloatTensor : StaticShapeTensorOf<[F32, BF16]>;
// What the gathers move: values, or quantized bytes (zc.quantize).
def ZC_CommTensor : StaticShapeTensorOf<[F32, BF16, I8]>;
// What a pipeline stage keeps for its backward: activations, and a MoE layer's routing.
def ZC_StashTensor : StaticShapeTensorOf<[F32, BF16, I32]>;
// What zc.concat joins: values, or i32 ids (the MoE layers' choices, pooled for Hugging Face's
// load-balancing loss over every layer's tokens).
def ZC_JoinTensor : StaticShapeTensorOf<[F32, BF16, I32]>;
// Token ids and class labels.
def ZC_IndexTensor : StaticShapeTensorOf<[I32]>;
// A loss: a 0-d f32 tensor (losses accumulate in f32 whatever the inputs).
def ZC_LossTensor : 0DTensorOf<[F32]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getF32Type())";
}

#endif // ZC_DIALECT_TD
