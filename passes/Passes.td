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

#endif // ZCC_PASSES_TD
