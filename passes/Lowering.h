//===- Lowering.h - zc ops to runtime calls: what the lowering shares -----===//
//
// The state and helpers of zcc-lower-to-llvm, shared by LowerToLLVM.cpp (the entry points,
// the model description, the pass) and LowerOps.cpp (each zc op's runtime call).
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_PASSES_LOWERING_H
#define ZCC_PASSES_LOWERING_H

#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/JSON.h"

#include <set>
#include <string>
#include <vector>

namespace mlir::zc::lowering {

/// The runtime ABI, from the X-macro list runtime/include/zrt/zrt_abi.def.
enum class Abi : char { Void, I32, I64, F64, Ptr };
struct AbiFunction {
  const char *name;
  Abi result;
  std::vector<Abi> params;
};
const std::vector<AbiFunction> &runtimeAbi();

/// zrt_dtype: f32 0, bf16 1, bytes (zc.quantize's rows) 2.
inline int32_t dtypeCode(Type element) { return element.isBF16() ? 1 : element.isInteger(8) ? 2 : 0; }
inline int64_t numel(Value v) { return tensorOf(v).getNumElements(); }
inline int64_t elementBytes(Value v) { return tensorOf(v).getElementTypeBitWidth() / 8; }

/// The products of the axes before and after `axis`: the [outer, length, inner] view.
inline std::pair<int64_t, int64_t> aroundAxis(RankedTensorType t, int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < t.getRank(); ++d)
    (d < axis ? outer : inner) *= d == axis ? 1 : t.getDimSize(d);
  return {outer, inner};
}

/// Product of all but the last axis, and the last axis: the rows x cols view
/// the row-wise kernels (softmax, layernorm, bias_add, cross-entropy) take.
inline std::pair<int64_t, int64_t> rowsCols(Value v) {
  RankedTensorType t = tensorOf(v);
  int64_t cols = t.getRank() ? t.getShape().back() : 1;
  return {t.getNumElements() / cols, cols};
}

/// zc.moe_*, zc.grouped_matmul and their gradients: lowered by Lowering::lowerMoe.
bool isMoeOp(Operation *op);
/// Gradient accumulation, the update, the gradient norm and the offload swaps: Lowering::lowerUpdate.
bool isUpdateOp(Operation *op);

class Lowering {
public:
  Lowering(ModuleOp module, const MemoryPlan &plan)
      : module(module), plan(plan), ctx(module.getContext()), ptrType(LLVM::LLVMPointerType::get(ctx)),
        i8(IntegerType::get(ctx, 8)), i32(IntegerType::get(ctx, 32)),
        i64(IntegerType::get(ctx, 64)), f32(Float32Type::get(ctx)), f64(Float64Type::get(ctx)) {}

  /// Which ops of the update a lowered function holds: all of them, or the two halves a pipeline
  /// stage's update splits into at its gradient norm (train.bin sums the norm over its programs
  /// between them): Reduce, the gradients' reductions and the rank's part of the norm
  /// (zrt_grad_norm_add); Apply, the norm from the mesh's sum (zrt_grad_norm_finish) and the rest.
  enum class UpdatePart { Whole, Reduce, Apply };
  LogicalResult lowerFunction(func::FuncOp fn, bool isStep, StringRef name, UpdatePart part = UpdatePart::Whole);
  void emitModelJson(StringRef symbol, const llvm::json::Value &json);
  /// Every product the lowered functions run, for the runtime to choose each one's path before
  /// the first step (zrt_plan_matmuls): rows of ["matmul", dtype, batch, m, n, k, trans_a,
  /// trans_b, b_shared], ["matmul_cross_entropy", dtype, rows, classes, channels, trans_w,
  /// chunk_rows] and, for a grouped product's experts, ["grouped_matmul_m" or "_k", ...] as
  /// "matmul"'s at the balanced row count, m or k being the expert's rows; each once, in a fixed order.
  llvm::json::Array matmulsJson() const;

private:
  Type llvmType(Abi kind) {
    switch (kind) {
    case Abi::Void: return LLVM::LLVMVoidType::get(ctx);
    case Abi::I32: return i32;
    case Abi::I64: return i64;
    case Abi::F64: return f64;
    case Abi::Ptr: return ptrType;
    }
    llvm_unreachable("abi kind");
  }

  LLVM::LLVMFuncOp runtimeFunction(StringRef name) {
    if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
      return fn;
    const AbiFunction *entry = nullptr;
    for (const AbiFunction &f : runtimeAbi())
      if (name == f.name)
        entry = &f;
    assert(entry && "call to a function that zrt_abi.def does not list");
    SmallVector<Type> params;
    for (Abi p : entry->params)
      params.push_back(llvmType(p));
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    return LLVM::LLVMFuncOp::create(b, module.getLoc(), name,
                                    LLVM::LLVMFunctionType::get(llvmType(entry->result), params));
  }

  /// A call into the runtime; the argument list is checked against the ABI.
  Value call(ImplicitLocOpBuilder &b, StringRef name, ArrayRef<Value> args) {
    LLVM::LLVMFuncOp fn = runtimeFunction(name);
    assert(fn.getNumArguments() == args.size() && "runtime call arity differs from the ABI");
    auto op = LLVM::CallOp::create(b, fn, args);
    return op.getNumResults() ? op.getResult() : Value();
  }

  Value constI32(ImplicitLocOpBuilder &b, int64_t v) { return LLVM::ConstantOp::create(b, i32, v); }
  Value constI64(ImplicitLocOpBuilder &b, int64_t v) { return LLVM::ConstantOp::create(b, i64, v); }
  Value constF64(ImplicitLocOpBuilder &b, double v) {
    return LLVM::ConstantOp::create(b, f64, b.getF64FloatAttr(v));
  }
  Value dtype(ImplicitLocOpBuilder &b, Value tensor) {
    return constI32(b, dtypeCode(tensorOf(tensor).getElementType()));
  }

  /// The arena at a planned byte offset, as an i64 operand: a GEP's constant indices
  /// (LLVM::GEPArg) keep only 29 signed bits, so an offset of 256 MiB or more wrapped negative.
  Value arenaAt(ImplicitLocOpBuilder &b, int64_t offset) {
    return LLVM::GEPOp::create(b, ptrType, i8, arena, ValueRange{constI64(b, offset)});
  }

  /// This rank's shard of a buffer of whole shards: base + rank * shardBytes, where rank is
  /// the coordinate on the data-parallel axis (ZeRO shards over it).
  Value rankShard(ImplicitLocOpBuilder &b, Value base, int64_t shardBytes, MeshAxis axis = MeshAxis::data) {
    Value rank = LLVM::SExtOp::create(b, i64, call(b, "zrt_mesh_rank", {constI32(b, static_cast<int32_t>(axis))}));
    Value offset = LLVM::MulOp::create(b, rank, constI64(b, shardBytes));
    return LLVM::GEPOp::create(b, ptrType, i8, base, ValueRange{offset});
  }

  /// Where an optimizer updates `param`: the whole parameter, its stored shard
  /// (stage 3), or this rank's shard of the whole stored parameter (stages 1, 2).
  Value updatedParam(ImplicitLocOpBuilder &b, FlatSymbolRefAttr name, Operation *user) {
    // Offloaded (zcc-offload: only ZeRO-3's stored shards): in the user's swap slot, or in
    // the host tier.
    if (plan.tierOf(name.getAttr()) == MemoryPlan::kTierNvme)
      return inSlot(b, name, user);
    if (plan.tierOf(name.getAttr()) == MemoryPlan::kTierHost) {
      auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(user, name);
      const int64_t bytes =
          ParamSharding::of(param).paramStorage() * (param.getTensorType().getElementTypeBitWidth() / 8);
      return call(b, "zrt_tier_ptr", {constI32(b, MemoryPlan::kTierHost),
                                      constI64(b, plan.paramOffset.lookup(name.getAttr())), constI64(b, bytes)});
    }
    Value base = arenaAt(b, plan.paramOffset.lookup(name.getAttr()));
    auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(user, name);
    ParamSharding sharding = ParamSharding::of(param);
    if (!sharding.partitioned() || sharding.param)
      return base;
    return rankShard(b, base, sharding.shardElements() * (param.getTensorType().getElementTypeBitWidth() / 8),
                     sharding.axis);
  }

  /// `ptr` advanced by `bytes`.
  Value advance(ImplicitLocOpBuilder &b, Value ptr, int64_t bytes) {
    return bytes ? LLVM::GEPOp::create(b, ptrType, i8, ptr, ValueRange{constI64(b, bytes)}) : ptr;
  }

  /// The elements an optimizer op updates: its `chunk` (zcc-offload), or all of them.
  std::pair<int64_t, int64_t> updateRange(Operation *update) {
    if (auto chunk = update->getAttrOfType<DenseI64ArrayAttr>("chunk"))
      return {chunk[0], chunk[1]};
    return {0, tensorOf(update->getOperand(0)).getNumElements()};
  }

  /// Where `user` (an update chunk or a gather's pack, with a swap_slot) finds tensor `name`
  /// in its slot (Offload::slotLayout).
  Value inSlot(ImplicitLocOpBuilder &b, FlatSymbolRefAttr name, Operation *user) {
    const int64_t slot = user->getAttrOfType<IntegerAttr>("swap_slot").getInt();
    for (auto &[tensor, at] : Offload::slotLayout(user))
      if (tensor.name == name)
        return arenaAt(b, plan.slotOffset(slot) + at);
    llvm_unreachable("zcc-offload put every NVMe-resident tensor of its user in the slot");
  }

  /// Where optimizer op `update` finds its state `state` at the first element it updates: in
  /// its NVMe swap slot, in the host tier, or in the arena (zcc-offload decides; MemoryPlan
  /// lays each tier out).
  Value statePointer(ImplicitLocOpBuilder &b, FlatSymbolRefAttr state, Operation *update) {
    auto [first, count] = updateRange(update);
    if (plan.tierOf(state.getAttr()) == MemoryPlan::kTierNvme)
      return inSlot(b, state, update);
    const int64_t offset = plan.stateOffset.lookup(state.getAttr()) + first * 4;
    if (plan.tierOf(state.getAttr()) == MemoryPlan::kTierHost)
      return call(b, "zrt_tier_ptr", {constI32(b, MemoryPlan::kTierHost), constI64(b, offset), constI64(b, count * 4)});
    return arenaAt(b, offset);
  }

  /// What an optimizer op writes: the fp32 values it updates (the parameter, or
  /// its master state) and the bf16 copy it rounds them into (or null), at the first element
  /// it updates.
  std::pair<Value, Value> updateTargets(ImplicitLocOpBuilder &b, FlatSymbolRefAttr param,
                                        FlatSymbolRefAttr master, Operation *user) {
    auto paramOp = SymbolTable::lookupNearestSymbolFrom<ParamOp>(user, param);
    const int64_t first = updateRange(user).first;
    // A slot holds just the chunk; the arena and the host tier hold the whole shard.
    Value stored = plan.tierOf(param.getAttr()) == MemoryPlan::kTierNvme
                       ? updatedParam(b, param, user)
                       : advance(b, updatedParam(b, param, user),
                                 first * (paramOp.getTensorType().getElementTypeBitWidth() / 8));
    if (!master)
      return {stored, LLVM::ZeroOp::create(b, ptrType)};
    return {statePointer(b, master, user), stored};
  }

  /// A read-only global holding `data`; identical contents share one global.
  Value constantGlobal(ImplicitLocOpBuilder &b, DenseElementsAttr data) {
    auto [it, inserted] = constantGlobals.try_emplace(data, "");
    if (inserted) {
      it->second = ("zcc_const_" + Twine(constantGlobals.size() - 1)).str();
      OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
      Type elem = data.getElementType();
      auto arrayType = LLVM::LLVMArrayType::get(elem, data.getNumElements());
      auto flat = DenseElementsAttr::getFromRawBuffer(
          RankedTensorType::get({data.getNumElements()}, elem), data.getRawData());
      if (data.isSplat())
        flat = DenseElementsAttr::get(RankedTensorType::get({data.getNumElements()}, elem),
                                      data.getSplatValue<Attribute>());
      LLVM::GlobalOp::create(mb, module.getLoc(), arrayType, /*isConstant=*/true,
                             LLVM::Linkage::Internal, it->second, flat, /*alignment=*/64);
    }
    return LLVM::AddressOfOp::create(b, ptrType, it->second);
  }
  Value i64Array(ImplicitLocOpBuilder &b, ArrayRef<int64_t> values) {
    return constantGlobal(
        b, DenseElementsAttr::get(RankedTensorType::get({(int64_t)values.size()}, i64), values));
  }
  Value shapeOf(ImplicitLocOpBuilder &b, Value tensor) {
    return i64Array(b, tensorOf(tensor).getShape());
  }
  /// A stack array holding `pointers` (the bucket ops' lists of buffers).
  Value pointerArray(ImplicitLocOpBuilder &b, ArrayRef<Value> pointers) {
    auto arrayType = LLVM::LLVMArrayType::get(ptrType, pointers.size());
    Value slot = LLVM::AllocaOp::create(b, ptrType, arrayType, constI64(b, 1));
    for (auto [i, ptr] : llvm::enumerate(pointers)) {
      Value at = LLVM::GEPOp::create(b, ptrType, ptrType, slot, ArrayRef<LLVM::GEPArg>{(int64_t)i});
      LLVM::StoreOp::create(b, ptr, at);
    }
    return slot;
  }
  /// The parameters a bucket op names, in order.
  SmallVector<ParamOp> bucketParams(Operation *user, ArrayAttr names) {
    SmallVector<ParamOp> params;
    for (Attribute name : names)
      params.push_back(SymbolTable::lookupNearestSymbolFrom<ParamOp>(user, cast<FlatSymbolRefAttr>(name)));
    return params;
  }

  /// Where the bytes of `v` are.
  FailureOr<Value> pointer(ImplicitLocOpBuilder &b, Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return inputs.lookup(arg);
    if (plan.argumentOf.count(v))
      return inputs.lookup(plan.argumentOf.lookup(v));
    if (auto constant = v.getDefiningOp<arith::ConstantOp>()) {
      auto data = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!data)
        return constant.emitOpError("only dense tensor constants are lowered");
      // Through the runtime: the CUDA backend's kernels cannot read the executable's globals.
      return call(b, "zrt_constant", {constantGlobal(b, data), constI64(b, tensorBytes(tensorOf(v)))});
    }
    auto it = plan.valueOffset.find(v);
    if (it == plan.valueOffset.end())
      return emitError(v.getLoc(), "value has no place in the memory plan");
    return arenaAt(b, it->second);
  }

  Value inputsScalar(Value v) { return scalars.lookup(v); }
  LogicalResult lowerOp(Operation *op, ImplicitLocOpBuilder &b);
  LogicalResult lowerMatmul(Operation *op, ImplicitLocOpBuilder &b, ArrayRef<Value> p);
  /// The Mixture-of-Experts ops (LowerMoe.cpp).
  LogicalResult lowerMoe(Operation *op, ImplicitLocOpBuilder &b, ArrayRef<Value> p);
  /// The training state's ops: gradients, the update, the offload swaps (LowerUpdate.cpp); `dt` is
  /// the first operand's dtype code (lowerOp's).
  LogicalResult lowerUpdate(Operation *op, ImplicitLocOpBuilder &b, ArrayRef<Value> p, Value dt);

  ModuleOp module;
  const MemoryPlan &plan;
  MLIRContext *ctx;
  Type ptrType, i8, i32, i64, f32, f64;
  Value arena;
  DenseMap<BlockArgument, Value> inputs;
  DenseMap<Value, Value> scalars; // the update's lr and step
  DenseMap<Value, Value> handles; // an async collective's zc handle -> the runtime's
  UpdatePart updatePart = UpdatePart::Whole; // of the function being lowered
  llvm::MapVector<Attribute, std::string> constantGlobals;
  // matmulsJson's rows: the op's name, its dtype code and its integer arguments.
  std::set<std::pair<std::string, std::vector<int64_t>>> matmuls;
};

} // namespace mlir::zc::lowering

#endif // ZCC_PASSES_LOWERING_H
