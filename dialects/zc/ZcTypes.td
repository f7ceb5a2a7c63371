//===- ZcTypes.td - zc types ------------------------------------------------===//

#ifndef ZC_TYPES_TD
#define ZC_TYPES_TD

include "dialects/zc/ZcDialect.td"
include "mlir/IR/AttrTypeBase.td"

def ZC_AsyncType : TypeDef<Zc_Dialect, "Async"> {
  let mnemonic = "async";
  let summary = "A collective in flight that will produce a tensor";
  let description = [{
    The result of a `zc.*_start` op: the collective has been issued on the
    communication stream and its result buffer is being written. `zc.wait`
    turns it into the tensor. Every async value must be waited on exactly once.

    Example: `!zc.async<tensor<1024xf32>>`
  }];
  let parameters = (ins "::mlir::RankedTensorType":$valueType);
  let assemblyFormat = "`<` $valueType `>`";
}

#endif // ZC_TYPES_TD
