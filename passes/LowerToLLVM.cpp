//===- LowerToLLVM.cpp - zc -> runtime calls in the LLVM dialect ----------===//
//
// After the memory plan every tensor is an arena offset, so each zc op becomes a
// call into the runtime's C ABI on pointers `arena + offset`. The ABI is read from
// runtime/include/zrt/zrt_abi.def, the same list the runtime compiles against, so a
// call whose arity or argument types drift from the runtime fails here.
//
// Emitted entry points (what the executable's main calls):
//   float zcc_step(void *arena, void *const *inputs)   forward + backward of one micro-batch
//   void  zcc_update(void *arena, double lr, int64_t step)   communication + optimizer
//   const char zcc_model_json[]                        the model's description
//
//===----------------------------------------------------------------------===//

#include "passes/MemoryPlan.h"
#include "passes/ModelDescription.h"
#include "passes/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/JSON.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCLOWERTOLLVM
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

//===----------------------------------------------------------------------===//
// The runtime ABI, from the X-macro list.
//===----------------------------------------------------------------------===//

enum class Abi : char { Void, I32, I64, F64, Ptr };
struct AbiFunction {
  const char *name;
  Abi result;
  std::vector<Abi> params;
};

const std::vector<AbiFunction> &runtimeAbi() {
  static const std::vector<AbiFunction> table = {
#define ZRT_VOID Abi::Void
#define ZRT_RI32 Abi::I32
#define ZRT_RI64 Abi::I64
#define ZRT_RF64 Abi::F64
#define ZRT_RPTR Abi::Ptr
#define ZRT_I32(name) Abi::I32
#define ZRT_I64(name) Abi::I64
#define ZRT_F64(name) Abi::F64
#define ZRT_PTR(name) Abi::Ptr
#define ZRT_CPTR(name) Abi::Ptr
#define ZRT_UNPACK(...) __VA_ARGS__
#define ZRT_FN(ret, name, params) {#name, ret, {ZRT_UNPACK params}},
#include "zrt/zrt_abi.def"
  };
  return table;
}

int32_t dtypeCode(Type element) { return element.isBF16() ? 1 : 0; }
int64_t numel(Value v) { return tensorOf(v).getNumElements(); }

/// Product of all but the last axis, and the last axis: the rows x cols view
/// the row-wise kernels (softmax, layernorm, bias_add, cross-entropy) take.
std::pair<int64_t, int64_t> rowsCols(Value v) {
  RankedTensorType t = tensorOf(v);
  int64_t cols = t.getRank() ? t.getShape().back() : 1;
  return {t.getNumElements() / cols, cols};
}

class Lowering {
public:
  Lowering(ModuleOp module, const MemoryPlan &plan)
      : module(module), plan(plan), ctx(module.getContext()), ptrType(LLVM::LLVMPointerType::get(ctx)),
        i8(IntegerType::get(ctx, 8)), i32(IntegerType::get(ctx, 32)),
        i64(IntegerType::get(ctx, 64)), f32(Float32Type::get(ctx)), f64(Float64Type::get(ctx)) {}

  LogicalResult lowerFunction(func::FuncOp fn, bool isStep);
  void emitModelJson(StringRef model, const llvm::json::Value &json);

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

  /// This rank's shard of a buffer of whole shards: base + rank * shardBytes.
  Value rankShard(ImplicitLocOpBuilder &b, Value base, int64_t shardBytes) {
    Value rank = LLVM::SExtOp::create(b, i64, call(b, "zrt_rank", {}));
    Value offset = LLVM::MulOp::create(b, rank, constI64(b, shardBytes));
    return LLVM::GEPOp::create(b, ptrType, i8, base, ValueRange{offset});
  }

  /// Where an optimizer updates `param`: the whole parameter, its stored shard
  /// (stage 3), or this rank's shard of the whole stored parameter (stages 1, 2).
  Value updatedParam(ImplicitLocOpBuilder &b, FlatSymbolRefAttr name, Operation *user) {
    Value base = arenaAt(b, plan.paramOffset.lookup(name.getAttr()));
    auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(user, name);
    ParamSharding sharding = ParamSharding::of(param);
    if (!sharding.partitioned() || sharding.param)
      return base;
    return rankShard(b, base, sharding.shardElements() * (param.getTensorType().getElementTypeBitWidth() / 8));
  }

  /// What an optimizer op writes: the fp32 values it updates (the parameter, or
  /// its master state) and the bf16 copy it rounds them into (or null).
  std::pair<Value, Value> updateTargets(ImplicitLocOpBuilder &b, FlatSymbolRefAttr param,
                                        FlatSymbolRefAttr master, Operation *user) {
    Value stored = updatedParam(b, param, user);
    if (!master)
      return {stored, LLVM::ZeroOp::create(b, ptrType)};
    return {arenaAt(b, plan.stateOffset.lookup(master.getAttr())), stored};
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
      return constantGlobal(b, data);
    }
    auto it = plan.valueOffset.find(v);
    if (it == plan.valueOffset.end())
      return emitError(v.getLoc(), "value has no place in the memory plan");
    return arenaAt(b, it->second);
  }

  Value inputsScalar(Value v) { return scalars.lookup(v); }
  LogicalResult lowerOp(Operation *op, ImplicitLocOpBuilder &b);
  LogicalResult lowerMatmul(Operation *op, ImplicitLocOpBuilder &b, ArrayRef<Value> p);

  ModuleOp module;
  const MemoryPlan &plan;
  MLIRContext *ctx;
  Type ptrType, i8, i32, i64, f32, f64;
  Value arena;
  DenseMap<BlockArgument, Value> inputs;
  DenseMap<Value, Value> scalars; // the update's lr and step
  DenseMap<Value, Value> handles; // an async collective's zc handle -> the runtime's
  llvm::MapVector<Attribute, std::string> constantGlobals;
};

/// The GEMM a zc matmul (or fused matmul) runs: `batch` products of [m, k] x [k, n],
/// `shared` when one rhs serves every batch element.
struct GemmShape {
  int64_t batch, m, n, k;
  bool tA, tB, shared;
};
GemmShape gemmShape(Value lhsValue, Value rhsValue, bool tA, bool tB) {
  RankedTensorType lhs = tensorOf(lhsValue), rhs = tensorOf(rhsValue);
  int64_t r = lhs.getRank(), rr = rhs.getRank();
  int64_t m = tA ? lhs.getDimSize(r - 1) : lhs.getDimSize(r - 2);
  int64_t k = tA ? lhs.getDimSize(r - 2) : lhs.getDimSize(r - 1);
  int64_t n = tB ? rhs.getDimSize(rr - 2) : rhs.getDimSize(rr - 1);
  int64_t batch = lhs.getNumElements() / (m * k);
  bool shared = rr == 2 && r > 2;
  if (shared && !tA) { // one GEMM over all rows instead of `batch` small ones
    m *= batch;
    batch = 1;
    shared = false;
  }
  return {batch, m, n, k, tA, tB, shared};
}

LogicalResult Lowering::lowerMatmul(Operation *op, ImplicitLocOpBuilder &b, ArrayRef<Value> p) {
  Value lhs, rhs;
  bool tA = false, tB = false;
  auto read = [&](auto o) {
    lhs = o.getLhs();
    rhs = o.getRhs();
    tA = o.getTransposeLhs();
    tB = o.getTransposeRhs();
  };
  if (auto o = dyn_cast<MatmulOp>(op)) read(o);
  else if (auto o = dyn_cast<MatmulBiasOp>(op)) read(o);
  else if (auto o = dyn_cast<MatmulBiasGeluOp>(op)) read(o);
  else read(cast<MatmulDgeluBgradOp>(op));
  GemmShape g = gemmShape(lhs, rhs, tA, tB);
  // Operands then results: p[0] lhs, p[1] rhs, then the op's own.
  StringRef fn = isa<MatmulOp>(op) ? "zrt_matmul"
                 : isa<MatmulBiasOp>(op) ? "zrt_matmul_bias"
                 : isa<MatmulBiasGeluOp>(op) ? "zrt_matmul_bias_gelu"
                                              : "zrt_matmul_dgelu_bgrad";
  SmallVector<Value> args{dtype(b, lhs)};
  args.append(p.begin(), p.end());
  for (int64_t v : {g.batch, g.m, g.n, g.k})
    args.push_back(constI64(b, v));
  for (bool v : {g.tA, g.tB, g.shared})
    args.push_back(constI32(b, v));
  call(b, fn, args);
  return success();
}

LogicalResult Lowering::lowerOp(Operation *op, ImplicitLocOpBuilder &b) {
  // No code: views and references of planned bytes, constants (globals), ends of lifetimes.
  if (isa<ParamRefOp, GradRefOp, ReshapeOp, arith::ConstantOp, ReleaseOp>(op))
    return success();
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    if (ret.getNumOperands() == 0) {
      LLVM::ReturnOp::create(b, ValueRange{});
      return success();
    }
    FailureOr<Value> loss = pointer(b, ret.getOperand(0));
    if (failed(loss))
      return failure();
    // Through the runtime: the CUDA backend's loss is in device memory.
    Value value = LLVM::FPTruncOp::create(b, f32, call(b, "zrt_read_loss", {*loss}));
    LLVM::ReturnOp::create(b, ValueRange{value});
    return success();
  }

  // Operands, then results, as pointers.
  SmallVector<Value> p;
  for (Value v : op->getOperands()) {
    if (!isa<RankedTensorType>(v.getType()))
      continue;
    FailureOr<Value> ptr = pointer(b, v);
    if (failed(ptr))
      return failure();
    p.push_back(*ptr);
  }
  for (Value v : op->getResults()) {
    // An async collective writes the tensor its zc.wait yields.
    if (isa<AsyncType>(v.getType()))
      v = cast<WaitOp>(*v.getUsers().begin()).getResult();
    if (!isa<RankedTensorType>(v.getType()))
      return op->emitOpError("has a result that is not a tensor");
    FailureOr<Value> ptr = pointer(b, v);
    if (failed(ptr))
      return failure();
    p.push_back(*ptr);
  }
  auto I64 = [&](int64_t v) { return constI64(b, v); };
  auto I32 = [&](int64_t v) { return constI32(b, v); };
  auto persistent = [&](const llvm::MapVector<StringAttr, int64_t> &table, FlatSymbolRefAttr name) {
    return arenaAt(b, table.lookup(name.getAttr()));
  };
  Value dt = op->getNumOperands() && isa<RankedTensorType>(op->getOperand(0).getType())
                 ? dtype(b, op->getOperand(0))
                 : Value();

  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case<AddOp, SubOp, MulOp>([&](Operation *o) {
        StringRef fn = isa<AddOp>(o) ? "zrt_add" : isa<SubOp>(o) ? "zrt_sub" : "zrt_mul";
        call(b, fn, {dt, p[0], p[1], p[2], I64(numel(o->getResult(0)))});
        return success();
      })
      .Case([&](ScaleOp o) {
        call(b, "zrt_scale", {dt, p[0], p[1], I64(numel(o)), constF64(b, o.getFactor().convertToDouble())});
        return success();
      })
      .Case([&](CastOp o) {
        call(b, "zrt_cast", {dt, p[0], dtype(b, o.getResult()), p[1], I64(numel(o))});
        return success();
      })
      .Case<ReluOp, GeluOp, SiluOp>([&](Operation *o) {
        StringRef fn = isa<ReluOp>(o) ? "zrt_relu" : isa<GeluOp>(o) ? "zrt_gelu" : "zrt_silu";
        call(b, fn, {dt, p[0], p[1], I64(numel(o->getResult(0)))});
        return success();
      })
      .Case<ReluGradOp, GeluGradOp, SiluGradOp>([&](Operation *o) {
        StringRef fn = isa<ReluGradOp>(o) ? "zrt_relu_grad" : isa<GeluGradOp>(o) ? "zrt_gelu_grad" : "zrt_silu_grad";
        call(b, fn, {dt, p[0], p[1], p[2], I64(numel(o->getResult(0)))});
        return success();
      })
      .Case([&](SwigluOp o) {
        call(b, "zrt_swiglu", {dt, p[0], p[1], p[2], I64(numel(o.getResult()))});
        return success();
      })
      .Case([&](SwigluGradOp o) {
        call(b, "zrt_swiglu_grad", {dt, p[0], p[1], p[2], p[3], p[4], I64(numel(o.getGrad()))});
        return success();
      })
      .Case([&](BiasAddOp o) {
        auto [rows, cols] = rowsCols(o.getInput());
        call(b, "zrt_bias_add", {dt, p[0], p[1], p[2], I64(rows), I64(cols)});
        return success();
      })
      .Case([&](SoftmaxOp o) {
        auto [rows, cols] = rowsCols(o.getInput());
        call(b, "zrt_softmax", {dt, p[0], p[1], I64(rows), I64(cols)});
        return success();
      })
      .Case([&](SoftmaxGradOp o) {
        auto [rows, cols] = rowsCols(o.getGrad());
        call(b, "zrt_softmax_grad", {dt, p[0], p[1], p[2], I64(rows), I64(cols)});
        return success();
      })
      .Case([&](LayerNormOp o) {
        auto [rows, cols] = rowsCols(o.getInput());
        call(b, "zrt_layernorm", {dt, p[0], p[1], p[2], p[3], I64(rows), I64(cols),
                                  constF64(b, o.getEpsilon().convertToDouble())});
        return success();
      })
      .Case([&](LayerNormGradOp o) {
        auto [rows, cols] = rowsCols(o.getInput());
        call(b, "zrt_layernorm_grad", {dt, p[0], p[1], p[2], p[3], p[4], p[5], I64(rows), I64(cols),
                                       constF64(b, o.getEpsilon().convertToDouble())});
        return success();
      })
      .Case([&](AddLayerNormOp o) {
        auto [rows, cols] = rowsCols(o.getLhs());
        call(b, "zrt_add_layernorm", {dt, p[0], p[1], p[2], p[3], p[4], p[5], I64(rows), I64(cols),
                                      constF64(b, o.getEpsilon().convertToDouble())});
        return success();
      })
      .Case([&](LayerNormGradAddOp o) {
        auto [rows, cols] = rowsCols(o.getInput());
        call(b, "zrt_layernorm_grad_add", {dt, p[0], p[1], p[2], p[3], p[4], p[5], p[6], I64(rows), I64(cols),
                                           constF64(b, o.getEpsilon().convertToDouble())});
        return success();
      })
      .Case([&](RmsNormOp o) {
        auto [rows, cols] = rowsCols(o.getInput());
        call(b, "zrt_rmsnorm", {dt, p[0], p[1], p[2], I64(rows), I64(cols), constF64(b, o.getEpsilon().convertToDouble())});
        return success();
      })
      .Case([&](RmsNormGradOp o) {
        auto [rows, cols] = rowsCols(o.getInput());
        call(b, "zrt_rmsnorm_grad", {dt, p[0], p[1], p[2], p[3], p[4], I64(rows), I64(cols),
                                     constF64(b, o.getEpsilon().convertToDouble())});
        return success();
      })
      .Case([&](RotaryOp o) {
        ArrayRef<int64_t> s = tensorOf(o.getInput()).getShape();
        call(b, "zrt_rotary", {dt, p[0], p[1], I64(s[0]), I64(s[1]), I64(s[2]), I64(o.getNumHeads()),
                               constF64(b, o.getTheta().convertToDouble()), I32(o.getInverse() ? 1 : 0)});
        return success();
      })
      .Case([&](CausalAttentionOp o) {
        ArrayRef<int64_t> s = tensorOf(o.getQuery()).getShape();
        call(b, "zrt_causal_attention", {dt, p[0], p[1], p[2], p[3], I64(s[0]), I64(s[1]),
                                         I64(s[2]), I64(o.getNumHeads()), I64(o.getKvHeads())});
        return success();
      })
      .Case([&](CausalAttentionGradOp o) {
        ArrayRef<int64_t> s = tensorOf(o.getQuery()).getShape();
        call(b, "zrt_causal_attention_grad", {dt, p[0], p[1], p[2], p[3], p[4], p[5], p[6], I64(s[0]), I64(s[1]),
                                              I64(s[2]), I64(o.getNumHeads()), I64(o.getKvHeads())});
        return success();
      })
      .Case<MatmulOp, MatmulBiasOp, MatmulBiasGeluOp, MatmulDgeluBgradOp>(
          [&](Operation *o) { return lowerMatmul(o, b, p); })
      .Case([&](EmbeddingOp o) {
        RankedTensorType table = tensorOf(o.getTable());
        call(b, "zrt_embedding", {dt, p[0], p[1], p[2], I64(numel(o.getIds())),
                                  I64(table.getDimSize(0)), I64(table.getDimSize(1))});
        return success();
      })
      .Case([&](EmbeddingGradOp o) {
        RankedTensorType table = tensorOf(o.getResult());
        call(b, "zrt_embedding_grad", {dt, p[0], p[1], p[2], I64(numel(o.getIds())),
                                       I64(table.getDimSize(0)), I64(table.getDimSize(1))});
        return success();
      })
      .Case([&](CrossEntropyOp o) {
        auto [rows, classes] = rowsCols(o.getLogits());
        call(b, "zrt_cross_entropy", {dt, p[0], p[1], p[2], I64(rows), I64(classes)});
        return success();
      })
      .Case([&](CrossEntropyGradOp o) {
        auto [rows, classes] = rowsCols(o.getLogits());
        call(b, "zrt_cross_entropy_grad",
             {dtype(b, o.getLogits()), p[0], p[1], p[2], p[3], I64(rows), I64(classes)});
        return success();
      })
      .Case([&](MatmulCrossEntropyOp o) {
        RankedTensorType x = tensorOf(o.getInput()), w = tensorOf(o.getWeight());
        int64_t channels = x.getShape().back();
        call(b, "zrt_matmul_cross_entropy",
             {dt, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], I64(x.getNumElements() / channels),
              I64(w.getNumElements() / channels), I64(channels), I32(o.getTransposeWeight()),
              I64(o.getChunkRows())});
        return success();
      })
      .Case([&](MseOp o) {
        call(b, "zrt_mse", {dt, p[0], p[1], p[2], I64(numel(o.getPrediction()))});
        return success();
      })
      .Case([&](MseGradOp o) {
        call(b, "zrt_mse_grad", {dtype(b, o.getPrediction()), p[0], p[1], p[2], p[3],
                                 I64(numel(o.getPrediction()))});
        return success();
      })
      .Case([&](ReduceSumOp o) {
        int32_t mask = 0;
        for (int64_t axis : o.getAxes())
          mask |= 1 << axis;
        call(b, "zrt_reduce_sum", {dt, p[0], p[1], shapeOf(b, o.getInput()),
                                   I32(tensorOf(o.getInput()).getRank()), I32(mask)});
        return success();
      })
      .Case([&](TransposeOp o) {
        call(b, "zrt_transpose", {dt, p[0], p[1], shapeOf(b, o.getInput()),
                                  I32(tensorOf(o.getInput()).getRank()), i64Array(b, o.getPermutation())});
        return success();
      })
      .Case([&](SliceOp o) {
        call(b, "zrt_slice", {dt, p[0], shapeOf(b, o.getInput()), p[1], shapeOf(b, o.getResult()),
                              I32(tensorOf(o.getInput()).getRank()), i64Array(b, o.getOffsets())});
        return success();
      })
      .Case([&](SliceGradOp o) {
        call(b, "zrt_fill_zero", {dt, p[1], I64(numel(o.getResult()))});
        call(b, "zrt_insert", {dt, p[0], shapeOf(b, o.getGrad()), p[1], shapeOf(b, o.getResult()),
                               I32(tensorOf(o.getGrad()).getRank()), i64Array(b, o.getOffsets())});
        return success();
      })
      .Case([&](ConcatOp o) {
        int64_t rank = tensorOf(o.getResult()).getRank(), offset = 0;
        Value out = p.back();
        for (auto [i, input] : llvm::enumerate(o.getInputs())) {
          SmallVector<int64_t> offsets(rank, 0);
          offsets[o.getAxis()] = offset;
          call(b, "zrt_insert", {dt, p[i], shapeOf(b, input), out, shapeOf(b, o.getResult()),
                                 I32(rank), i64Array(b, offsets)});
          offset += tensorOf(input).getDimSize(o.getAxis());
        }
        return success();
      })
      .Case([&](AllReduceOp o) {
        call(b, "zrt_all_reduce", {dt, p[0], p[1], I64(numel(o.getInput())),
                                   I32(o.getKind() == ReduceKind::avg)});
        return success();
      })
      .Case([&](AllGatherOp o) {
        call(b, "zrt_all_gather", {dt, p[0], p[1], I64(numel(o.getInput()))});
        return success();
      })
      .Case([&](ReduceScatterOp o) {
        int64_t shard = numel(o.getResult()), total = numel(o.getInput());
        int64_t ranks = static_cast<int64_t>(o.getRanks());
        if (total == shard * ranks)
          call(b, "zrt_reduce_scatter", {dt, p[0], p[1], I64(shard), I32(o.getKind() == ReduceKind::avg)});
        else // ZeRO's padded shards
          call(b, "zrt_reduce_scatter_padded", {dt, p[0], p[1], I64(shard), I64(total),
                                                I32(o.getKind() == ReduceKind::avg)});
        return success();
      })
      .Case([&](AllGatherStartOp o) {
        handles[o.getHandle()] = call(b, "zrt_all_gather_start", {dt, p[0], p[1], I64(numel(o.getInput()))});
        return success();
      })
      .Case([&](ReduceScatterStartOp o) {
        int64_t total = numel(o.getInput());
        int64_t shard = cast<AsyncType>(o.getHandle().getType()).getValueType().getNumElements();
        int32_t average = o.getKind() == ReduceKind::avg;
        handles[o.getHandle()] =
            total == shard * static_cast<int64_t>(o.getRanks())
                ? call(b, "zrt_reduce_scatter_start", {dt, p[0], p[1], I64(shard), I32(average)})
                : call(b, "zrt_reduce_scatter_padded_start", {dt, p[0], p[1], I64(shard), I64(total), I32(average)});
        return success();
      })
      .Case([&](AllReduceStartOp o) {
        handles[o.getHandle()] = call(b, "zrt_all_reduce_start", {dt, p[0], p[1], I64(numel(o.getInput())),
                                                                  I32(o.getKind() == ReduceKind::avg)});
        return success();
      })
      .Case([&](WaitOp o) {
        call(b, "zrt_wait", {handles.lookup(o.getHandle())});
        return success();
      })
      .Case([&](GatherParamOp o) {
        auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(o, o.getParamAttr());
        call(b, "zrt_all_gather", {dtype(b, o.getResult()), persistent(plan.paramOffset, o.getParamAttr()), p[0],
                                   I64(ParamSharding::of(param).shardElements())});
        return success();
      })
      .Case([&](AllGatherParamOp o) {
        auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(o, o.getParamAttr());
        RankedTensorType type = param.getTensorType();
        int64_t shard = ParamSharding::of(param).shardElements();
        Value whole = persistent(plan.paramOffset, o.getParamAttr());
        call(b, "zrt_all_gather", {constI32(b, dtypeCode(type.getElementType())),
                                   rankShard(b, whole, shard * (type.getElementTypeBitWidth() / 8)),
                                   whole, I64(shard)});
        return success();
      })
      .Case([&](PackOp o) {
        SmallVector<int64_t> numels;
        for (Value in : o.getInputs())
          numels.push_back(numel(in));
        int64_t k = numels.size();
        call(b, "zrt_pack", {dt, I64(k), pointerArray(b, ArrayRef(p).take_front(k)), i64Array(b, numels),
                             I64(o.getRanks()), p[k]});
        return success();
      })
      .Case([&](UnpackOp o) {
        SmallVector<int64_t> numels;
        for (Value out : o.getResults())
          numels.push_back(numel(out));
        call(b, "zrt_unpack", {dt, I64(numels.size()), p[0], i64Array(b, numels), I64(o.getRanks()),
                               pointerArray(b, ArrayRef(p).drop_front(1))});
        return success();
      })
      .Case([&](PackShardsOp o) {
        // This rank's shard of each parameter, concatenated (a bucket over one rank).
        SmallVector<Value> shards;
        SmallVector<int64_t> numels;
        for (ParamOp param : bucketParams(o, o.getParams())) {
          auto name = FlatSymbolRefAttr::get(param.getSymNameAttr());
          shards.push_back(updatedParam(b, name, o));
          numels.push_back(ParamSharding::of(param).shardElements());
        }
        call(b, "zrt_pack", {dtype(b, o.getResult()), I64(shards.size()), pointerArray(b, shards),
                             i64Array(b, numels), I64(1), p[0]});
        return success();
      })
      .Case([&](UnpackParamsOp o) {
        SmallVector<Value> wholes;
        SmallVector<int64_t> numels;
        for (ParamOp param : bucketParams(o, o.getParams())) {
          wholes.push_back(arenaAt(b, plan.paramOffset.lookup(param.getSymNameAttr())));
          numels.push_back(param.getTensorType().getNumElements());
        }
        call(b, "zrt_unpack", {dt, I64(wholes.size()), p[0], i64Array(b, numels), I64(o.getRanks()),
                               pointerArray(b, wholes)});
        return success();
      })
      .Case([&](GradAccumulateOp o) {
        Value grad = persistent(plan.gradOffset, o.getParamAttr());
        if (!o.getOverwrite()) {
          call(b, "zrt_add", {dt, grad, p[0], grad, I64(numel(o.getGrad()))});
          return success();
        }
        // Overwrite: nothing to do where the plan had the producer write into the buffer.
        auto at = plan.valueOffset.find(o.getGrad());
        if (at == plan.valueOffset.end() || at->second != plan.gradOffset.lookup(o.getParamAttr().getAttr()))
          call(b, "zrt_copy", {dt, p[0], grad, I64(numel(o.getGrad()))});
        return success();
      })
      .Case([&](GradZeroOp o) {
        auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(o, o.getParamAttr());
        call(b, "zrt_fill_zero", {constI32(b, dtypeCode(param.getTensorType().getElementType())),
                                  persistent(plan.gradOffset, o.getParamAttr()),
                                  I64(ParamSharding::of(param).gradStorage())});
        return success();
      })
      .Case([&](AdamWOp o) {
        auto [master, lowCopy] = updateTargets(b, o.getParamAttr(), o.getMasterAttr(), o);
        call(b, "zrt_adamw",
             {master, dt, p[0], persistent(plan.stateOffset, o.getExpAvgAttr()),
              persistent(plan.stateOffset, o.getExpAvgSqAttr()), lowCopy, I64(numel(o.getGrad())),
              inputsScalar(o.getLr()), constF64(b, o.getBeta1().convertToDouble()),
              constF64(b, o.getBeta2().convertToDouble()), constF64(b, o.getEps().convertToDouble()),
              constF64(b, o.getWeightDecay().convertToDouble()), inputsScalar(o.getStep())});
        return success();
      })
      .Case([&](SgdOp o) {
        auto [master, lowCopy] = updateTargets(b, o.getParamAttr(), o.getMasterAttr(), o);
        call(b, "zrt_sgd_momentum",
             {master, dt, p[0], persistent(plan.stateOffset, o.getMomentumBufferAttr()), lowCopy,
              I64(numel(o.getGrad())), inputsScalar(o.getLr()),
              constF64(b, o.getMomentum().convertToDouble()),
              constF64(b, o.getWeightDecay().convertToDouble())});
        return success();
      })
      .Default([](Operation *o) {
        return o->emitOpError("has no lowering to the runtime");
      });
}

LogicalResult Lowering::lowerFunction(func::FuncOp fn, bool isStep) {
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  auto type = isStep ? LLVM::LLVMFunctionType::get(f32, {ptrType, ptrType})
                     : LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptrType, f64, i64});
  auto llvmFn = LLVM::LLVMFuncOp::create(mb, fn.getLoc(), isStep ? "zcc_step" : "zcc_update", type);
  Block *entry = llvmFn.addEntryBlock(mb);
  ImplicitLocOpBuilder b(fn.getLoc(), entry, entry->end());
  arena = entry->getArgument(0);
  inputs.clear();
  scalars.clear();
  Block &body = fn.getBody().front();
  if (isStep) {
    for (BlockArgument arg : body.getArguments()) {
      Value slot = LLVM::GEPOp::create(b, ptrType, ptrType, entry->getArgument(1),
                                       ArrayRef<LLVM::GEPArg>{(int64_t)arg.getArgNumber()});
      inputs[arg] = LLVM::LoadOp::create(b, ptrType, slot);
    }
  } else {
    scalars[body.getArgument(0)] = entry->getArgument(1);
    scalars[body.getArgument(1)] = entry->getArgument(2);
  }
  for (Operation &op : body) {
    b.setLoc(op.getLoc());
    if (failed(lowerOp(&op, b)))
      return failure();
  }
  return success();
}

void Lowering::emitModelJson(StringRef model, const llvm::json::Value &json) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json;
  text.push_back('\0');
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  auto type = LLVM::LLVMArrayType::get(i8, text.size());
  LLVM::GlobalOp::create(mb, module.getLoc(), type, /*isConstant=*/true, LLVM::Linkage::External,
                         "zcc_model_json", StringAttr::get(ctx, text));
}

struct ZccLowerToLLVMPass : zc::impl::ZccLowerToLLVMBase<ZccLowerToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step = functionWithRole(module, "step"), update = functionWithRole(module, "update");
    if (!step || !update) {
      module.emitError("nothing to lower: run zcc-autodiff and zcc-optimizer first");
      return signalPassFailure();
    }
    FailureOr<MemoryPlan> plan = planMemory(module, {step, update});
    if (failed(plan))
      return signalPassFailure();

    // The description main() reads, before the zc symbols go away.
    FailureOr<llvm::json::Object> model = describeModel(module, step, update, *plan, ranks, microBatches);
    if (failed(model))
      return signalPassFailure();

    Lowering lowering(module, *plan);
    if (failed(lowering.lowerFunction(step, /*isStep=*/true)) ||
        failed(lowering.lowerFunction(update, /*isStep=*/false)))
      return signalPassFailure();
    lowering.emitModelJson((*model)["model"].getAsString().value_or(""), llvm::json::Value(std::move(*model)));

    // Everything is now LLVM: drop the zc symbols and the lowered functions.
    SmallVector<Operation *> erase;
    for (Operation &op : module.getBody()->getOperations())
      if (isa<func::FuncOp, ParamOp, StateOp>(op))
        erase.push_back(&op);
    for (Operation *op : erase)
      op->erase();
    module->removeAttr("zc.optimizer");
    module->removeAttr("zc.recompute");
  }
};

} // namespace
