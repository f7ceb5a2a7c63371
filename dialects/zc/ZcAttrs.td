//===- ZcAttrs.td - zc attributes: initializers and reduction kinds --------===//

#ifndef ZC_ATTRS_TD
#define ZC_ATTRS_TD

include "dialects/zc/ZcDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

// A double (held as an APFloat, which hashes) printed in its shortest
// round-tripping form (0.02, not 2.000000e-02).
class ZC_F64Param<string default = ""> : AttrOrTypeParameter<"::llvm::APFloat", "a 64-bit float"> {
  let parser = "::mlir::zc::parseF64Param($_parser)";
  let printer = "::mlir::zc::printF64Param($_printer, $_self)";
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let defaultValue = default;
}

class ZC_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Zc_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Parameter initializers. The runtime draws them from the executable's seed,
// identically for every world size (each rank draws the full tensor's stream
// and keeps its shard), so sharding never changes the initial weights.
//===----------------------------------------------------------------------===//

def ZC_ZerosInitAttr : ZC_Attr<"ZerosInit", "zeros"> {
  let summary = "Initialize every element to 0";
  let description = [{
    Example: `zc.param @ln_b : tensor<128xf32> = #zc.zeros`
  }];
}

def ZC_OnesInitAttr : ZC_Attr<"OnesInit", "ones"> {
  let summary = "Initialize every element to 1";
  let description = [{
    Example: `zc.param @ln_g : tensor<128xf32> = #zc.ones`
  }];
}

def ZC_NormalInitAttr : ZC_Attr<"NormalInit", "normal"> {
  let summary = "Initialize from N(mean, std^2)";
  let description = [{
    `mean` defaults to 0. `std` must be positive.

    Example: `zc.param @wte : tensor<256x128xf32> = #zc.normal<std = 0.02>`
  }];
  let parameters = (ins ZC_F64Param<>:$std, ZC_F64Param<"::llvm::APFloat(0.0)">:$mean);
  let assemblyFormat = "`<` `std` `=` $std (`,` `mean` `=` $mean^)? `>`";
  let genVerifyDecl = 1;
}

def ZC_UniformInitAttr : ZC_Attr<"UniformInit", "uniform"> {
  let summary = "Initialize from U[low, high)";
  let description = [{
    `low` must be below `high`.

    Example: `zc.param @w : tensor<64x10xf32> = #zc.uniform<low = -0.125, high = 0.125>`
  }];
  let parameters = (ins ZC_F64Param<>:$low, ZC_F64Param<>:$high);
  let assemblyFormat = "`<` `low` `=` $low `,` `high` `=` $high `>`";
  let genVerifyDecl = 1;
}

def ZC_InitializerAttr : AnyAttrOf<[ZC_ZerosInitAttr, ZC_OnesInitAttr,
                                    ZC_NormalInitAttr, ZC_UniformInitAttr]>;

//===----------------------------------------------------------------------===//
// Reduction kinds of reduce_scatter / all_reduce.
//===----------------------------------------------------------------------===//

def ZC_ReduceSum : I32EnumAttrCase<"sum", 0>;
def ZC_ReduceAvg : I32EnumAttrCase<"avg", 1>;
def ZC_ReduceKindEnum : I32EnumAttr<"ReduceKind",
    "How a collective combines the ranks' contributions",
    [ZC_ReduceSum, ZC_ReduceAvg]> {
  let cppNamespace = "::mlir::zc";
  let genSpecializedAttr = 0;
}
def ZC_ReduceKindAttr : EnumAttr<Zc_Dialect, ZC_ReduceKindEnum, "reduce"> {
  let assemblyFormat = "$value";
}

//===----------------------------------------------------------------------===//
// Axes of the device mesh (--tp x --pp x data parallel). Rank order is Megatron's:
// tensor fastest, then data, then pipeline. A collective runs among the ranks
// that differ only in its axis' coordinate.
//===----------------------------------------------------------------------===//

def ZC_AxisData : I32EnumAttrCase<"data", 0>;
def ZC_AxisTensor : I32EnumAttrCase<"tensor", 1>;
def ZC_AxisPipeline : I32EnumAttrCase<"pipeline", 2>;
// The runtime's zrt_axis numbers (the lowering passes them through).
def ZC_AxisContext : I32EnumAttrCase<"context", 5>;
// ZeRO++'s groups inside the data axis (zrt_set_hierarchy): the ranks on this rank's node, the
// ranks with this rank's place on every node, and hpZ's groups of consecutive ranks.
def ZC_AxisNode : I32EnumAttrCase<"node", 6>;
def ZC_AxisCross : I32EnumAttrCase<"cross", 7>;
def ZC_AxisHpz : I32EnumAttrCase<"hpz", 8>;
// Expert parallelism's groups inside the data axis (zrt_set_experts): the ep consecutive ranks
// that hold different experts and exchange tokens, and the ranks that hold the same experts (their
// gradients' data-parallel group).
def ZC_AxisExpert : I32EnumAttrCase<"expert", 9>;
def ZC_AxisExpertData : I32EnumAttrCase<"expert_data", 10>;
def ZC_MeshAxisEnum : I32EnumAttr<"MeshAxis", "An axis of the device mesh",
    [ZC_AxisData, ZC_AxisTensor, ZC_AxisPipeline, ZC_AxisContext, ZC_AxisNode, ZC_AxisCross, ZC_AxisHpz,
     ZC_AxisExpert, ZC_AxisExpertData]> {
  let cppNamespace = "::mlir::zc";
  let genSpecializedAttr = 0;
}
def ZC_MeshAxisAttr : EnumAttr<Zc_Dialect, ZC_MeshAxisEnum, "axis"> {
  let assemblyFormat = "$value";
}

#endif // ZC_ATTRS_TD
