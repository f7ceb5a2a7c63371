//===- ZcDialect.h - the zc dialect, its attributes, types and ops -------===//
//
// The one header users of the dialect include.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_DIALECTS_ZC_ZCDIALECT_H
#define ZCC_DIALECTS_ZC_ZCDIALECT_H

#include <optional>

#include "llvm/ADT/DenseSet.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::zc {
// Parses and prints the float parameters of initializer attributes in their
// shortest round-tripping form.
FailureOr<llvm::APFloat> parseF64Param(AsmParser &parser);
void printF64Param(AsmPrinter &printer, const llvm::APFloat &value);

/// The `softcap` attribute (C in C tanh(x / C)) of attention's scores or of a cross-entropy's
/// logits (zc.cross_entropy, its gradient, the fused heads), 0 when absent, as the runtime's
/// ABI takes it.
inline double logitSoftcap(Operation *op) {
  auto a = op->getAttrOfType<FloatAttr>("softcap");
  return a ? a.getValueAsDouble() : 0.0;
}

/// What zc.causal_attention and its gradient compute beyond causal softmax(q k^T / sqrt(D)) v:
/// the attributes `scale`, `softcap` and `window`, read by name so every pass and the lowering
/// see one description. 0 stands for an absent one (the default scale 1/sqrt(D), no cap, the
/// whole context), as the runtime's ABI takes them.
struct AttentionVariant {
  double scale = 0.0;
  double softcap = 0.0;
  int64_t window = 0;

  static AttentionVariant of(Operation *op) {
    AttentionVariant v;
    if (auto a = op->getAttrOfType<FloatAttr>("scale"))
      v.scale = a.getValueAsDouble();
    v.softcap = logitSoftcap(op);
    if (auto a = op->getAttrOfType<IntegerAttr>("window"))
      v.window = a.getInt();
    return v;
  }
  bool isPlain() const { return scale == 0.0 && softcap == 0.0 && window == 0; }
  /// The fraction of the causal scores (time (time + 1) / 2) the window keeps over a context of
  /// `time` tokens: what the attention's FLOPs shrink by (the kernels skip the rest).
  double keptFraction(int64_t time) const {
    if (window <= 0 || window >= time)
      return 1.0;
    // The first `window` queries see 1..window keys, the rest `window` each.
    const double w = static_cast<double>(window), t = static_cast<double>(time);
    return (w * (w + 1) / 2 + (t - w) * w) / (t * (t + 1) / 2);
  }
};
} // namespace mlir::zc

#include "dialects/zc/ZcDialect.h.inc"
#include "dialects/zc/ZcEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/zc/ZcAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/zc/ZcTypes.h.inc"

#define GET_OP_CLASSES
#include "dialects/zc/ZcOps.h.inc"

namespace mlir::zc {
/// True for the attributes `zc.param` accepts as an initializer.
bool isInitializerAttr(Attribute attr);

/// The static tensor type of a zc value (every zc tensor operand and result is one).
inline RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// A collective issued on the communication stream, finished by its zc.wait.
inline bool isCollectiveStart(Operation *op) {
  return isa<AllGatherStartOp, ReduceScatterStartOp, AllReduceStartOp, AllToAllStartOp, EpDispatchStartOp,
             EpCombineStartOp>(op);
}

/// The products a zc.grouped_matmul_grad computes: its rows' gradient and its weights', each only
/// where read (zcc-schedule splits them so the weights' runs during an exchange; the runtime is
/// passed no buffer for a result nobody reads, and the memory plan holds none).
inline int64_t groupedGradProducts(Operation *op) {
  return int64_t(!op->getResult(0).use_empty()) + int64_t(!op->getResult(1).use_empty());
}

/// Expert parallelism's row exchanges: zc.ep_dispatch, ep_combine, or their starts.
inline bool isExpertExchange(Operation *op) {
  return isa<EpDispatchOp, EpCombineOp, EpDispatchStartOp, EpCombineStartOp>(op);
}

/// An expert exchange's rows on the dispatching rank, [R, C]: the dispatch's input, the combine's
/// result (a start's: what its wait yields).
inline RankedTensorType expertLocalRows(Operation *op) {
  if (isa<EpDispatchOp, EpDispatchStartOp>(op))
    return tensorOf(op->getOperand(0));
  if (auto start = dyn_cast<EpCombineStartOp>(op))
    return cast<AsyncType>(start.getHandle().getType()).getValueType();
  return tensorOf(op->getResult(0));
}

/// The rows an expert exchange moves at a balanced routing (what the report, the cost model and
/// the simulator price): each rank receives as many as it dispatched (its zc.ep_counts'
/// `dispatched`), or without the counts op the dispatching side's whole tensor.
inline int64_t expertBalancedRows(Operation *op) {
  auto counts = op->getOperand(1).getDefiningOp<EpCountsOp>();
  return counts ? static_cast<int64_t>(counts.getDispatched()) : expertLocalRows(op).getDimSize(0);
}

/// Sequence parallelism's split of a tensor over `ranks` ranks: rank r holds the r-th of
/// `ranks` contiguous parts, so the collectives move plain contiguous buffers. The part is
/// the tensor with its first axis longer than 1 divided (the batch, or with one sequence
/// per micro-batch its tokens); that axis, or -1 when it does not divide.
int64_t sequenceSplitAxis(RankedTensorType whole, int64_t ranks);
/// The type of one rank's part, or null when `whole` does not split.
RankedTensorType sequenceShardType(RankedTensorType whole, int64_t ranks);

/// ZeRO partitioning of one parameter's training state, read from the discardable
/// attributes the zcc-zero pass puts on its zc.param:
///   zc.shards = N    the state is split over N ranks: optimizer state (stage >= 1)
///   zc.shard_grad    the gradient buffer holds only this rank's shard (stage >= 2)
///   zc.shard_param   the parameter itself is stored as a shard (stage 3)
/// A shard is ceil(elements / N) elements of the flattened tensor; rank r owns
/// [r * shard, (r + 1) * shard), zero-padded past the end, so any size works with
/// any rank count. Buffers that keep the whole tensor but are updated shard-wise
/// are padded to N * shard elements.
struct ParamSharding {
  static constexpr llvm::StringLiteral kShards = "zc.shards", kShardGrad = "zc.shard_grad",
                                       kShardParam = "zc.shard_param";
  int64_t elements = 0, ranks = 1;
  bool grad = false, param = false;
  /// The group the shards and the gradient's average span: the data axis, or for an expert
  /// weight split by expert parallelism the ranks holding the same experts.
  MeshAxis axis = MeshAxis::data;

  static ParamSharding of(ParamOp param);
  bool partitioned() const { return ranks > 1; }
  int64_t shardElements() const { return (elements + ranks - 1) / ranks; }
  int64_t paddedElements() const { return shardElements() * ranks; }
  /// Elements of the persistent buffers.
  int64_t paramStorage() const { return param ? shardElements() : paddedElements(); }
  int64_t gradStorage() const { return grad ? shardElements() : paddedElements(); }
  int64_t stateStorage() const { return shardElements(); }
};

/// Expert parallelism (zcc-expert-parallel): an expert weight holds E / ranks of the experts
/// (`zc.ep_split = {ranks}`), expert rank r the r-th consecutive part of axis 0. Its gradient
/// is averaged over the data-parallel ranks holding the same experts (data ranks / ranks of
/// them: MeshAxis::expert_data), ZeRO shards it over those.
inline constexpr llvm::StringLiteral kEpSplitAttr = "zc.ep_split";
/// The expert-parallel ranks `param` is split over (1: not an expert weight, or ep 1).
int64_t expertRanksOf(ParamOp param);

/// Aux-loss-free balancing (zc.moe_route's bias): the parameters routings choose experts by.
/// They get no gradient by design; train.bin moves them by each step's loads.
llvm::DenseSet<StringAttr> expertBiasParams(ModuleOp module);

/// Offload (zcc-offload): a zc.state's or a sharded zc.param's `zc.tier` ("host" or "nvme";
/// absent: the arena), and the module's `zc.offload = {tier, slots, slot_bytes, param_slots,
/// param_slot_bytes}`: the update's swap slots are [0, slots), the parameter gathers' are
/// [slots, slots + param_slots). The NVMe store needs every transfer 4096-aligned (O_DIRECT):
/// a chunk starts where first x element bytes is a multiple of it, and each tensor of a chunk
/// takes swapBytes(count, element bytes) of its slot.
struct Offload {
  static constexpr llvm::StringLiteral kTier = "zc.tier", kModule = "zc.offload";
  static constexpr int64_t kStoreAlignment = 4096, kSwapChunkElements = kStoreAlignment / 4;
  static int64_t swapBytes(int64_t count, int64_t elementBytes) {
    return (count * elementBytes + kStoreAlignment - 1) / kStoreAlignment * kStoreAlignment;
  }
  /// The tier of a state or parameter ("" for the arena).
  static llvm::StringRef tierOf(Operation *symbol) {
    auto tier = symbol->getAttrOfType<StringAttr>(kTier);
    return tier ? tier.getValue() : llvm::StringRef();
  }
  /// A tensor that swaps: a zc.state, or a parameter's stored shard.
  struct Swapped {
    FlatSymbolRefAttr name;
    int64_t elements = 0, elementBytes = 4; // of what the tier stores
  };
  /// The state or parameter `name` names from `user`, or nothing.
  static std::optional<Swapped> lookup(Operation *user, FlatSymbolRefAttr name);
  /// What op `op` (zc.adamw, zc.sgd or zc.pack_shards with a swap_slot) reads from its slot,
  /// in order, with each one's byte offset in the slot for `count` elements each (an update's
  /// chunk) or each one's stored elements (a gather's shards).
  static llvm::SmallVector<std::pair<Swapped, int64_t>> slotLayout(Operation *op);
  /// The same for `count` elements of each tensor (-1: each whole), whatever `op`'s chunk.
  static llvm::SmallVector<std::pair<Swapped, int64_t>> slotLayout(Operation *op, int64_t count);
};

} // namespace mlir::zc

#endif // ZCC_DIALECTS_ZC_ZCDIALECT_H
