//===- ZcModelOps.td - parameters, the forward function, return -----------===//

#ifndef ZC_MODEL_OPS_TD
#define ZC_MODEL_OPS_TD

def ZC_ParamOp : ZC_Op<"param", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "A trainable parameter: a module-level symbol";
  let description = [{
    Declares one parameter of the model with its shape, element type (`f32`
    or `bf16`) and initializer. Parameters live at module level so that every
    function of the training step (forward, the derived backward, the
    optimizer) names the same tensor; the ZeRO passes decide where its bytes
    live (whole on every rank, or as a 1/N shard).

    Discardable attributes carry per-parameter hints for later passes (for
    example `{zc.no_decay}`); they are kept as written.

    Example:

    ```mlir
    zc.param @wte : tensor<256x128xf32> = #zc.normal<std = 0.02>
    zc.param @ln_f_b : tensor<128xf32> = #zc.zeros
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<ZC_FloatTensor>:$type,
                       ZC_InitializerAttr:$init);
  let assemblyFormat = "$sym_name `:` $type `=` $init attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def ZC_ParamRefOp : ZC_Op<"param_ref", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Reads a parameter inside a function";
  let description = [{
    Produces the full value of the parameter `@name`. The result type must be
    the parameter's declared type. After the ZeRO-3 pass, a parameter that
    lives sharded is read through an explicit `zc.all_gather` instead.

    Example:

    ```mlir
    %w = zc.param_ref @fc1_w : tensor<784x128xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs ZC_FloatTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def ZC_ForwardOp : ZC_Op<"forward", [
    FunctionOpInterface, IsolatedFromAbove, HasParent<"::mlir::ModuleOp">]> {
  let summary = "The model's forward function: a batch in, a scalar loss out";
  let description = [{
    The user's training graph. Its arguments are one batch (inputs, labels,
    tokens); it returns the loss as a 0-d `f32` tensor through `zc.return`.
    Parameters are read with `zc.param_ref`. Autodiff derives the backward
    pass from this function; the user never writes gradients.

    Argument attributes name what the data loader feeds each argument (for
    example `{zc.input = "tokens"}`); they are kept as written.

    Example:

    ```mlir
    zc.forward @loss(%x: tensor<32x784xf32>, %y: tensor<32xi32>) -> tensor<f32> {
      %w = zc.param_ref @w : tensor<784x10xf32>
      %logits = zc.matmul %x, %w : tensor<32x784xf32>, tensor<784x10xf32> -> tensor<32x10xf32>
      %l = zc.cross_entropy %logits, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
      zc.return %l : tensor<f32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
  }];
}

def ZC_ReturnOp : ZC_Op<"return", [Pure, HasParent<"ForwardOp">, ReturnLike,
                                   Terminator]> {
  let summary = "Returns the loss from `zc.forward`";
  let description = [{
    Terminates the forward function; operand types must match the function's
    result types.

    Example: `zc.return %loss : tensor<f32>`
  }];
  let arguments = (ins Variadic<AnyType>:$operands);
  let assemblyFormat = "$operands attr-dict `:` type($operands)";
  let hasVerifier = 1;
}

#endif // ZC_MODEL_OPS_TD
