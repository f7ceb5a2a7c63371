//===- LowerOps.cpp - each zc op as its runtime call ------------------------===//
//
// One case per op: its operands' and results' arena pointers (the memory plan's offsets),
// shapes and attributes as the runtime function of the same name in zrt_abi.def takes them.
//
//===----------------------------------------------------------------------===//

#include "passes/Lowering.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::zc;
using namespace mlir::zc::lowering;

namespace {
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

} // namespace

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
  const int64_t code = dtypeCode(tensorOf(lhs).getElementType());
  matmuls.insert({"matmul", {code, g.batch, g.m, g.n, g.k, g.tA, g.tB, g.shared}});
  return success();
}

llvm::json::Array Lowering::matmulsJson() const {
  llvm::json::Array rows;
  for (const auto &[op, args] : matmuls) {
    llvm::json::Array row{op, args[0] == 1 ? "bf16" : "f32"};
    for (int64_t v : llvm::ArrayRef<int64_t>(args).drop_front())
      row.push_back(v);
    rows.push_back(std::move(row));
  }
  return rows;
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
    // A grouped product's gradient nobody reads is not computed: a null buffer (groupedGradProducts).
    if (isa<GroupedMatmulGradOp>(op) && v.use_empty()) {
      p.push_back(LLVM::ZeroOp::create(b, ptrType));
      continue;
    }
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

  if (isMoeOp(op))
    return lowerMoe(op, b, p);
  if (isUpdateOp(op))
    return lowerUpdate(op, b, p, dt);
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
        StringRef fn = isa<ReluOp>(o)   ? "zrt_relu"
                       : isa<GeluOp>(o) ? (cast<GeluOp>(o).getExact() ? "zrt_gelu_erf" : "zrt_gelu")
                                        : "zrt_silu";
        call(b, fn, {dt, p[0], p[1], I64(numel(o->getResult(0)))});
        return success();
      })
      .Case<ReluGradOp, GeluGradOp, SiluGradOp>([&](Operation *o) {
        StringRef fn = isa<ReluGradOp>(o)   ? "zrt_relu_grad"
                       : isa<GeluGradOp>(o) ? (cast<GeluGradOp>(o).getExact() ? "zrt_gelu_erf_grad" : "zrt_gelu_grad")
                                            : "zrt_silu_grad";
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
        call(b, "zrt_rmsnorm", {dt, p[0], p[1], p[2], I64(rows), I64(cols), constF64(b, o.getEpsilon().convertToDouble()),
                                constF64(b, o.getGainOffsetOrZero())});
        return success();
      })
      .Case([&](RmsNormGradOp o) {
        auto [rows, cols] = rowsCols(o.getInput());
        call(b, "zrt_rmsnorm_grad", {dt, p[0], p[1], p[2], p[3], p[4], I64(rows), I64(cols),
                                     constF64(b, o.getEpsilon().convertToDouble()), constF64(b, o.getGainOffsetOrZero())});
        return success();
      })
      .Case([&](RotaryOp o) {
        ArrayRef<int64_t> s = tensorOf(o.getInput()).getShape();
        if (o->hasAttr(kContextRingAttr)) {
          call(b, "zrt_rotary_context", {I32(static_cast<int32_t>(MeshAxis::context)), dt, p[0], p[1], I64(s[0]),
                                         I64(s[1]), I64(s[2]), I64(o.getNumHeads()),
                                         constF64(b, o.getTheta().convertToDouble()), I32(o.getInverse() ? 1 : 0),
                                         I64(static_cast<int64_t>(o.getRotaryDims().value_or(0)))});
          return success();
        }
        call(b, "zrt_rotary", {dt, p[0], p[1], I64(s[0]), I64(s[1]), I64(s[2]), I64(o.getNumHeads()),
                               constF64(b, o.getTheta().convertToDouble()), I32(o.getInverse() ? 1 : 0),
                               I64(static_cast<int64_t>(o.getRotaryDims().value_or(0)))});
        return success();
      })
      .Case([&](CausalAttentionOp o) {
        ArrayRef<int64_t> s = tensorOf(o.getQuery()).getShape();
        if (o->hasAttr(kContextRingAttr)) {
          call(b, "zrt_ring_attention", {dt, p[0], p[1], p[2], p[3], I64(s[0]), I64(s[1]), I64(s[2]),
                                         I64(o.getNumHeads()), I64(o.getKvHeads()),
                                         I32(static_cast<int32_t>(MeshAxis::context))});
          return success();
        }
        AttentionVariant variant = o.getVariant();
        call(b, "zrt_causal_attention", {dt, p[0], p[1], p[2], p[3], I64(s[0]), I64(s[1]), I64(s[2]),
                                         I64(o.getNumHeads()), I64(o.getKvHeads()), constF64(b, variant.scale),
                                         constF64(b, variant.softcap), I64(variant.window)});
        return success();
      })
      .Case([&](CausalAttentionGradOp o) {
        ArrayRef<int64_t> s = tensorOf(o.getQuery()).getShape();
        if (o->hasAttr(kContextRingAttr)) {
          call(b, "zrt_ring_attention_grad", {dt, p[0], p[1], p[2], p[3], p[4], p[5], p[6], I64(s[0]), I64(s[1]),
                                              I64(s[2]), I64(o.getNumHeads()), I64(o.getKvHeads()),
                                              I32(static_cast<int32_t>(MeshAxis::context))});
          return success();
        }
        AttentionVariant variant = o.getVariant();
        call(b, "zrt_causal_attention_grad", {dt, p[0], p[1], p[2], p[3], p[4], p[5], p[6], I64(s[0]), I64(s[1]),
                                              I64(s[2]), I64(o.getNumHeads()), I64(o.getKvHeads()),
                                              constF64(b, variant.scale), constF64(b, variant.softcap),
                                              I64(variant.window)});
        return success();
      })
      .Case<MatmulOp, MatmulBiasOp, MatmulBiasGeluOp, MatmulDgeluBgradOp>(
          [&](Operation *o) { return lowerMatmul(o, b, p); })
      // vocab_shards: the runtime's *_vocab_shard calls find this rank's slice from its
      // tensor-axis coordinate.
      .Case([&](EmbeddingOp o) {
        RankedTensorType table = tensorOf(o.getTable());
        call(b, o.getVocabShards() ? "zrt_embedding_vocab_shard" : "zrt_embedding",
             {dt, p[0], p[1], p[2], I64(numel(o.getIds())), I64(table.getDimSize(0)), I64(table.getDimSize(1))});
        return success();
      })
      .Case([&](EmbeddingGradOp o) {
        RankedTensorType table = tensorOf(o.getResult());
        call(b, o.getVocabShards() ? "zrt_embedding_grad_vocab_shard" : "zrt_embedding_grad",
             {dt, p[0], p[1], p[2], I64(numel(o.getIds())), I64(table.getDimSize(0)), I64(table.getDimSize(1))});
        return success();
      })
      .Case([&](CrossEntropyOp o) {
        auto [rows, classes] = rowsCols(o.getLogits());
        call(b, o.getVocabShards() ? "zrt_cross_entropy_vocab_shard" : "zrt_cross_entropy",
             {dt, p[0], p[1], p[2], I64(rows), I64(classes), constF64(b, logitSoftcap(o))});
        return success();
      })
      .Case([&](CrossEntropyGradOp o) {
        auto [rows, classes] = rowsCols(o.getLogits());
        call(b, o.getVocabShards() ? "zrt_cross_entropy_grad_vocab_shard" : "zrt_cross_entropy_grad",
             {dtype(b, o.getLogits()), p[0], p[1], p[2], p[3], I64(rows), I64(classes), constF64(b, logitSoftcap(o))});
        return success();
      })
      .Case([&](MatmulCrossEntropyOp o) {
        RankedTensorType x = tensorOf(o.getInput()), w = tensorOf(o.getWeight());
        int64_t channels = x.getShape().back();
        call(b, "zrt_matmul_cross_entropy",
             {dt, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], I64(x.getNumElements() / channels),
              I64(w.getNumElements() / channels), I64(channels), I32(o.getTransposeWeight()),
              I64(o.getChunkRows()), constF64(b, logitSoftcap(o))});
        matmuls.insert({"matmul_cross_entropy",
                        {dtypeCode(x.getElementType()), x.getNumElements() / channels,
                         w.getNumElements() / channels, channels, o.getTransposeWeight(), static_cast<int64_t>(o.getChunkRows())}});
        return success();
      })
      .Case([&](MatmulCrossEntropyLossOp o) {
        RankedTensorType x = tensorOf(o.getInput()), w = tensorOf(o.getWeight());
        const int64_t channels = x.getShape().back(), rows = x.getNumElements() / channels,
                      classes = w.getNumElements() / channels, chunkRows = o.getChunkRows();
        call(b, "zrt_matmul_cross_entropy_loss",
             {dt, p[0], p[1], p[2], p[3], p[4], I64(rows), I64(classes), I64(channels),
              I32(o.getTransposeWeight()), I64(chunkRows), constF64(b, logitSoftcap(o))});
        // Its products are zrt_matmul's of a chunk's rows (and of the last, shorter chunk).
        for (int64_t n : {chunkRows, rows % chunkRows})
          if (n > 0)
            matmuls.insert({"matmul", {dtypeCode(x.getElementType()), 1, n, classes, channels, 0,
                                       o.getTransposeWeight(), 0}});
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
        // i32 ids (MoE choices) are copied as two bf16 halves each: the copy kernels' element
        // types are f32 and bf16, and a bf16 copy moves its 16 bits as they are, where an f32
        // copy of an id's bits would only happen to.
        int64_t halves = tensorOf(o.getResult()).getElementType().isInteger(32) ? 2 : 1;
        Value type = halves == 1 ? dt : I32(1 /* bf16 */);
        auto shapeInHalves = [&](Value v) {
          SmallVector<int64_t> shape(tensorOf(v).getShape());
          shape.back() *= halves;
          return i64Array(b, shape);
        };
        Value out = p.back();
        for (auto [i, input] : llvm::enumerate(o.getInputs())) {
          SmallVector<int64_t> offsets(rank, 0);
          offsets[o.getAxis()] = offset * (o.getAxis() == rank - 1 ? halves : 1);
          call(b, "zrt_insert", {type, p[i], shapeInHalves(input), out, shapeInHalves(o.getResult()),
                                 I32(rank), i64Array(b, offsets)});
          offset += tensorOf(input).getDimSize(o.getAxis());
        }
        return success();
      })
      .Case([&](AllReduceOp o) {
        int32_t average = o.getKind() == ReduceKind::avg;
        if (o.getAxis() == MeshAxis::data)
          call(b, "zrt_all_reduce", {dt, p[0], p[1], I64(numel(o.getInput())), I32(average)});
        else
          call(b, "zrt_all_reduce_on", {I32(static_cast<int32_t>(o.getAxis())), dt, p[0], p[1],
                                        I64(numel(o.getInput())), I32(average)});
        return success();
      })
      .Case([&](PipeSendOp o) {
        // To a later stage, this stage's output; to an earlier one, its input's gradient. The
        // peer is a pipeline rank: interleaved, the rank virtual stage j runs on (placementOf).
        // ZB-V's stage P - 1 sends to its own rank (train.bin's next chunk).
        int64_t self = 0;
        if (auto stage = module->getAttrOfType<DictionaryAttr>("zc.pipeline"))
          self = cast<IntegerAttr>(stage.get("stage")).getInt();
        const int64_t to = static_cast<int64_t>(o.getStage());
        const int32_t kind = to > self ? 0 /*ZRT_PIPE_ACTIVATION*/ : 1 /*ZRT_PIPE_GRADIENT*/;
        call(b, "zrt_pipe_send", {p[0], I64(tensorBytes(tensorOf(o.getInput()))),
                                  I32(static_cast<int32_t>(stagePlace(module, to).rank)), I32(kind)});
        return success();
      })
      .Case([&](PipeStashOp o) { // into this micro-batch's slot of the stash argument
        // Computed there already (MemoryPlan.cpp, valuesComputedInStash): nothing to copy.
        if (plan.argumentOf.lookup(o.getValue()) == o.getStash())
          return success();
        // An i32 routing copies as f32 (the same bytes; zrt_copy only moves them).
        call(b, "zrt_copy", {dt, p[0], p[1], I64(numel(o.getValue()))});
        return success();
      })
      .Case([&](StageOutputOp o) { // never read: a non-last stage's step returns 0
        call(b, "zrt_fill_zero", {I32(0), p.back(), I64(1)});
        return success();
      })
      .Case([&](ApplyMaskOp o) {
        ArrayRef<int64_t> shape = tensorOf(o.getInput()).getShape();
        int64_t dim = numel(o.getInput()), inner = 1;
        if (std::optional<uint64_t> axis = o.getAxis()) { // a row mask: one value per index of `axis`
          dim = shape[*axis];
          inner = 1;
          for (size_t d = *axis + 1; d < shape.size(); ++d)
            inner *= shape[d];
        }
        call(b, "zrt_apply_mask", {dt, p[0], p[1], arenaAt(b, plan.stateOffset.lookup(o.getMaskAttr().getAttr())),
                                   p[2], I64(numel(o.getInput())), I64(dim), I64(inner)});
        return success();
      })
      .Case([&](StepGateOp o) {
        ModuleOp module = o->getParentOfType<ModuleOp>();
        call(b, "zrt_step_gate", {I64(stepGateIndex(module, o.getFrom())), p[0]});
        return success();
      })
      .Case([&](FakeQuantizeOp o) {
        call(b, "zrt_fake_quantize", {dt, p[0], p[1], p[2], I64(numel(o.getInput())),
                                      I64(o.groupCount()), I64(o.runWidth()), I32(o.getBits()),
                                      I32(o.getAsymmetric() ? 1 : 0)});
        return success();
      })
      .Case([&](QuantizeOp o) {
        const int64_t cols = tensorOf(o.getInput()).getShape().back();
        call(b, "zrt_quantize", {dt, p[0], p[1], I64(numel(o.getInput()) / cols), I64(cols),
                                 I64(o.getBlock()), I32(o.getBits())});
        return success();
      })
      .Case([&](DequantizeOp o) {
        const int64_t cols = tensorOf(o.getResult()).getShape().back();
        call(b, "zrt_dequantize", {dtype(b, o.getResult()), p[0], p[1], I64(numel(o.getResult()) / cols), I64(cols),
                                   I64(o.getBlock()), I32(o.getBits())});
        return success();
      })
      .Case([&](AllToAllStartOp o) {
        handles[o.getHandle()] =
            call(b, "zrt_all_to_all_on_start", {I32(static_cast<int32_t>(o.getAxis())), dt, p[0], p[1],
                                                I64(numel(o.getInput()) / static_cast<int64_t>(o.getRanks()))});
        return success();
      })
      .Case([&](AllToAllOp o) {
        call(b, "zrt_all_to_all_on", {I32(static_cast<int32_t>(o.getAxis())), dt, p[0], p[1],
                                      I64(numel(o.getInput()) / static_cast<int64_t>(o.getRanks()))});
        return success();
      })
      // hpZ's secondary shards: this rank's R = ranks / group chunks of a gathered bucket, at its
      // place in its hpZ group, unpacked into (or packed from) one state per parameter.
      .Case<KeepSecondaryOp, PackSecondaryOp>([&](Operation *o) {
        auto states = o->getAttrOfType<ArrayAttr>("states");
        const int64_t ranks = o->getAttrOfType<IntegerAttr>("ranks").getInt();
        const int64_t group = o->getAttrOfType<IntegerAttr>("group").getInt(), chunks = ranks / group;
        SmallVector<Value> shards;
        SmallVector<int64_t> numels;
        int64_t kept = 0;
        for (Attribute a : states) {
          auto name = cast<FlatSymbolRefAttr>(a);
          auto state = SymbolTable::lookupNearestSymbolFrom<StateOp>(o, name);
          shards.push_back(arenaAt(b, plan.stateOffset.lookup(name.getAttr())));
          numels.push_back(state.getTensorType().getNumElements());
          kept += numels.back();
        }
        if (auto keep = dyn_cast<KeepSecondaryOp>(o)) {
          Value mine = LLVM::SExtOp::create(b, i64, call(b, "zrt_mesh_rank", {I32(static_cast<int32_t>(MeshAxis::hpz))}));
          Value offset = LLVM::MulOp::create(b, mine, I64(kept * elementBytes(keep.getInput())));
          Value src = LLVM::GEPOp::create(b, ptrType, i8, p[0], ValueRange{offset});
          call(b, "zrt_unpack", {dt, I64(shards.size()), src, i64Array(b, numels), I64(chunks), pointerArray(b, shards)});
        } else {
          call(b, "zrt_pack", {dtype(b, o->getResult(0)), I64(shards.size()), pointerArray(b, shards),
                               i64Array(b, numels), I64(chunks), p[0]});
        }
        return success();
      })
      .Case([&](AllGatherOp o) {
        if (o.getAxis() == MeshAxis::data)
          call(b, "zrt_all_gather", {dt, p[0], p[1], I64(numel(o.getInput()))});
        else
          call(b, "zrt_all_gather_on", {I32(static_cast<int32_t>(o.getAxis())), dt, p[0], p[1],
                                        I64(numel(o.getInput()))});
        return success();
      })
      .Case<CpShardOp, CpUnshardOp>([&](Operation *o) { // any element type: moved as bytes
        bool inverse = isa<CpUnshardOp>(o);
        RankedTensorType whole = tensorOf(inverse ? o->getResult(0) : o->getOperand(0));
        int64_t axis = o->getAttrOfType<IntegerAttr>("axis").getInt();
        auto [outer, inner] = aroundAxis(whole, axis);
        Value wholeBuffer = inverse ? p[1] : p[0], part = inverse ? p[0] : p[1];
        call(b, "zrt_context_chunks", {I32(static_cast<int32_t>(MeshAxis::context)),
                                       I64(whole.getElementTypeBitWidth() / 8), wholeBuffer, part, I64(outer),
                                       I64(whole.getDimSize(axis)), I64(inner), I32(inverse)});
        return success();
      })
      .Case<CpToHeadsOp, CpToTokensOp>([&](Operation *op) {
        bool toHeads = isa<CpToHeadsOp>(op);
        RankedTensorType tokens = tensorOf(toHeads ? op->getOperand(0) : op->getResult(0));
        int64_t heads = op->getAttrOfType<IntegerAttr>("heads").getInt();
        call(b, "zrt_context_exchange", {I32(static_cast<int32_t>(MeshAxis::context)), dt, p[0], p[1],
                                         I64(tokens.getDimSize(0)), I64(tokens.getDimSize(1)), I64(heads),
                                         I64(tokens.getDimSize(2) / heads), I32(toHeads)});
        return success();
      })
      .Case([&](SpShardOp o) {
        call(b, "zrt_take_shard", {I32(static_cast<int32_t>(MeshAxis::tensor)), dt, p[0], p[1],
                                   I64(numel(o.getResult()))});
        return success();
      })
      .Case([&](ReduceScatterOp o) {
        int64_t shard = numel(o.getResult()), total = numel(o.getInput());
        int64_t ranks = static_cast<int64_t>(o.getRanks());
        if (o.getAxis() != MeshAxis::data && total != shard * ranks) // an expert weight's padded shards
          call(b, "zrt_reduce_scatter_padded_on", {I32(static_cast<int32_t>(o.getAxis())), dt, p[0], p[1], I64(shard),
                                                   I64(total), I32(o.getKind() == ReduceKind::avg)});
        else if (o.getAxis() != MeshAxis::data)
          call(b, "zrt_reduce_scatter_on", {I32(static_cast<int32_t>(o.getAxis())), dt, p[0], p[1], I64(shard),
                                            I32(o.getKind() == ReduceKind::avg)});
        else if (total == shard * ranks)
          call(b, "zrt_reduce_scatter", {dt, p[0], p[1], I64(shard), I32(o.getKind() == ReduceKind::avg)});
        else // ZeRO's padded shards
          call(b, "zrt_reduce_scatter_padded", {dt, p[0], p[1], I64(shard), I64(total),
                                                I32(o.getKind() == ReduceKind::avg)});
        return success();
      })
      .Case([&](AllGatherStartOp o) {
        handles[o.getHandle()] =
            o.getAxis() == MeshAxis::data
                ? call(b, "zrt_all_gather_start", {dt, p[0], p[1], I64(numel(o.getInput()))})
                : call(b, "zrt_all_gather_on_start", {I32(static_cast<int32_t>(o.getAxis())), dt, p[0], p[1],
                                                      I64(numel(o.getInput()))});
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
        int32_t average = o.getKind() == ReduceKind::avg;
        handles[o.getHandle()] =
            o.getAxis() == MeshAxis::data
                ? call(b, "zrt_all_reduce_start", {dt, p[0], p[1], I64(numel(o.getInput())), I32(average)})
                : call(b, "zrt_all_reduce_on_start", {I32(static_cast<int32_t>(o.getAxis())), dt, p[0], p[1],
                                                      I64(numel(o.getInput())), I32(average)});
        return success();
      })
      .Case([&](WaitOp o) -> LogicalResult {
        Value handle = handles.lookup(o.getHandle());
        if (!handle) // started in the other half of a split update
          return o.emitOpError("waits for a collective started across the update's gradient norm");
        call(b, "zrt_wait", {handle});
        return success();
      })
      .Case([&](GatherParamOp o) {
        auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(o, o.getParamAttr());
        ParamSharding s = ParamSharding::of(param);
        Value shard = persistent(plan.paramOffset, o.getParamAttr());
        if (s.axis == MeshAxis::data)
          call(b, "zrt_all_gather", {dtype(b, o.getResult()), shard, p[0], I64(s.shardElements())});
        else // an expert weight: over the ranks holding its experts
          call(b, "zrt_all_gather_on", {I32(static_cast<int32_t>(s.axis)), dtype(b, o.getResult()), shard, p[0],
                                        I64(s.shardElements())});
        return success();
      })
      .Case([&](AllGatherParamOp o) {
        auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(o, o.getParamAttr());
        RankedTensorType type = param.getTensorType();
        ParamSharding s = ParamSharding::of(param);
        int64_t shard = s.shardElements();
        Value whole = persistent(plan.paramOffset, o.getParamAttr());
        Value own = rankShard(b, whole, shard * (type.getElementTypeBitWidth() / 8), s.axis);
        if (s.axis == MeshAxis::data)
          call(b, "zrt_all_gather", {constI32(b, dtypeCode(type.getElementType())), own, whole, I64(shard)});
        else
          call(b, "zrt_all_gather_on", {I32(static_cast<int32_t>(s.axis)), constI32(b, dtypeCode(type.getElementType())),
                                        own, whole, I64(shard)});
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
      .Default([](Operation *o) {
        return o->emitOpError("has no lowering to the runtime");
      });
}
