//===- LowerMoe.cpp - the Mixture-of-Experts ops as their runtime calls ----===//
//
// zc.moe_route and its gradient, dispatch, combine, the grouped product and the auxiliary
// losses, each as the zrt_moe_* / zrt_grouped_matmul call of zrt_abi.def: `p` holds the op's
// tensor operands then its results as arena pointers (Lowering::lowerOp). The token count is
// the router logits' (or the routing's) leading elements.
//
//===----------------------------------------------------------------------===//

#include "passes/Lowering.h"

#include "zrt/MoeLayout.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::zc;
using namespace mlir::zc::lowering;

namespace {
/// A grouped product's experts E, inner size K and output size N: the rows are [R, K], the
/// weights [E, K, N] or, transposed, [E, N, K].
std::tuple<int64_t, int64_t, int64_t> groupedDims(Value input, Value weight, bool transposed) {
  ArrayRef<int64_t> w = tensorOf(weight).getShape();
  return {w[0], tensorOf(input).getDimSize(1), transposed ? w[1] : w[2]};
}

/// The context ranks a load-balancing loss pools its statistics over (kContextPooledAttr), 1 if none.
int64_t contextPooled(Operation *op) {
  auto pooled = op->getAttrOfType<IntegerAttr>(kContextPooledAttr);
  return pooled ? pooled.getInt() : 1;
}
} // namespace

bool mlir::zc::lowering::isMoeOp(Operation *op) {
  return isa<MoeRouteOp, MoeRouteGradOp, MoeDispatchOp, MoeDispatchGradOp, GroupedMatmulOp, GroupedMatmulGradOp,
             MoeCombineOp, MoeCombineGradOp, MoeSharedGateOp, MoeSharedGateGradOp, MoeAuxLossOp, MoeAuxLossGradOp,
             MoeZLossOp, MoeZLossGradOp, EpCountsOp>(op) ||
         isExpertExchange(op);
}

LogicalResult Lowering::lowerMoe(Operation *op, ImplicitLocOpBuilder &b, ArrayRef<Value> p) {
  auto I64 = [&](int64_t v) { return constI64(b, v); };
  auto I32 = [&](int64_t v) { return constI32(b, v); };
  auto F64 = [&](APFloat v) { return constF64(b, v.convertToDouble()); };
  // The dispatched tensor's rows (tokens x top_k, or fewer with a capacity: zrt/MoeLayout.h).
  auto dispatched = [](Value v) { return tensorOf(v).getDimSize(0); };
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](MoeRouteOp o) {
        auto [tokens, experts] = rowsCols(o.getLogits());
        // p: logits, [bias], weights, experts, rows, offsets.
        Value bias = o.getBias() ? p[1] : Value(LLVM::ZeroOp::create(b, ptrType));
        ArrayRef<Value> results = p.take_back(4);
        // A recomputed copy routes the same tokens again: counted once, in the log and in the
        // balancing bias's loads. The loads are kept by the bias parameter's name, which every
        // stage program and rank spells the same (train.bin sums them over the mesh).
        const bool counted = !o->hasAttr(kRecomputedAttr);
        Value biasName = Value(LLVM::ZeroOp::create(b, ptrType));
        if (StringAttr param = o.getBiasParam(); param && counted) {
          SmallVector<int8_t> bytes(param.getValue().begin(), param.getValue().end());
          bytes.push_back(0);
          biasName = constantGlobal(
              b, DenseElementsAttr::get(RankedTensorType::get({(int64_t)bytes.size()}, b.getI8Type()),
                                        ArrayRef<int8_t>(bytes)));
        }
        call(b, "zrt_moe_route",
             {dtype(b, o.getLogits()), p[0], bias, results[0], results[1], results[2], results[3], I64(tokens),
              I64(experts), I64(static_cast<int64_t>(o.getTopK())), I32(o.getSigmoid()), I32(o.getNormalize()),
              F64(o.getScale()), constF64(b, o.getCapacityFactorOrZero()),
              I64(static_cast<int64_t>(o.getGroups().value_or(1))),
              I64(static_cast<int64_t>(o.getTopkGroups().value_or(1))), I32(counted), biasName});
        return success();
      })
      .Case([&](MoeRouteGradOp o) {
        auto [tokens, experts] = rowsCols(o.getLogits());
        call(b, "zrt_moe_route_grad",
             {dtype(b, o.getLogits()), p[0], p[1], p[2], p[3], p[4], I64(tokens), I64(experts),
              I64(static_cast<int64_t>(o.getTopK())), I32(o.getSigmoid()), I32(o.getNormalize()), F64(o.getScale())});
        return success();
      })
      .Case([&](MoeDispatchOp o) {
        auto [tokens, topK] = rowsCols(o.getRows());
        call(b, "zrt_moe_dispatch", {dtype(b, o.getInput()), p[0], p[1], p[2], I64(tokens), I64(topK),
                                     I64(rowsCols(o.getInput()).second), I64(dispatched(o.getResult()))});
        return success();
      })
      .Case([&](MoeDispatchGradOp o) {
        auto [tokens, topK] = rowsCols(o.getRows());
        call(b, "zrt_moe_dispatch_grad", {dtype(b, o.getGrad()), p[0], p[1], p[2], I64(tokens), I64(topK),
                                          I64(rowsCols(o.getGrad()).second), I64(dispatched(o.getGrad()))});
        return success();
      })
      .Case([&](MoeCombineOp o) {
        auto [tokens, topK] = rowsCols(o.getRows());
        call(b, "zrt_moe_combine", {dtype(b, o.getInput()), p[0], p[1], p[2], p[3], I64(tokens), I64(topK),
                                    I64(rowsCols(o.getInput()).second), I64(dispatched(o.getInput()))});
        return success();
      })
      .Case([&](MoeCombineGradOp o) {
        auto [tokens, topK] = rowsCols(o.getRows());
        call(b, "zrt_moe_combine_grad", {dtype(b, o.getInput()), p[0], p[1], p[2], p[3], p[4], p[5], I64(tokens),
                                         I64(topK), I64(rowsCols(o.getInput()).second),
                                         I64(dispatched(o.getInput()))});
        return success();
      })
      .Case([&](GroupedMatmulOp o) {
        const int64_t rows = tensorOf(o.getInput()).getDimSize(0), t = o.getTransposeRhs();
        auto [E, K, N] = groupedDims(o.getInput(), o.getWeight(), t);
        call(b, "zrt_grouped_matmul", {dtype(b, o.getInput()), p[0], p[1], p[2], p[3], I64(rows), I64(E), I64(K),
                                       I64(N), I32(t)});
        // Each expert's product in the plan at the balanced row count (zrt/MoeLayout.h), as one
        // whose m varies (the runtime's oneDNN primitive for any m).
        const int64_t code = dtypeCode(tensorOf(o.getInput()).getElementType()), even = zrt::plannedExpertRows(rows, E);
        matmuls.insert({"grouped_matmul_m", {code, 1, even, N, K, 0, t, 0}});
        return success();
      })
      .Case([&](GroupedMatmulGradOp o) {
        const int64_t rows = tensorOf(o.getInput()).getDimSize(0), t = o.getTransposeRhs();
        auto [E, K, N] = groupedDims(o.getInput(), o.getWeight(), t);
        call(b, "zrt_grouped_matmul_grad", {dtype(b, o.getInput()), p[0], p[1], p[2], p[3], p[4], p[5], I64(rows),
                                            I64(E), I64(K), I64(N), I32(t)});
        const int64_t code = dtypeCode(tensorOf(o.getInput()).getElementType()), even = zrt::plannedExpertRows(rows, E);
        // d rows = d out x W[e]^T (or x W[e]); d W[e] = d out^T x rows (or rows^T x d out), its k the rows.
        matmuls.insert({"grouped_matmul_m", {code, 1, even, K, N, 0, 1 - t, 0}});
        if (t)
          matmuls.insert({"grouped_matmul_k", {code, 1, N, K, even, 1, 0, 0}});
        else
          matmuls.insert({"grouped_matmul_k", {code, 1, K, N, even, 1, 0, 0}});
        return success();
      })
      .Case([&](EpCountsOp o) {
        const int64_t experts = tensorOf(o.getOffsets()).getDimSize(0) - 1;
        call(b, "zrt_ep_counts", {p[0], p[1], p[2], I64(experts), I64(static_cast<int64_t>(o.getRanks())),
                                  I64(static_cast<int64_t>(o.getRows())), I64(static_cast<int64_t>(o.getMaxRows()))});
        return success();
      })
      .Case<EpDispatchOp, EpCombineOp, EpDispatchStartOp, EpCombineStartOp>([&](Operation *op) {
        // p: the rows, the counts, the result (a start's: what its wait yields); the local rows
        // are the dispatching side's.
        const bool dispatch = isa<EpDispatchOp, EpDispatchStartOp>(op);
        const bool start = isa<EpDispatchStartOp, EpCombineStartOp>(op);
        Value result = start ? Value(cast<WaitOp>(*op->getResult(0).getUsers().begin()).getResult()) : op->getResult(0);
        Value local = dispatch ? op->getOperand(0) : result;
        Value received = dispatch ? result : op->getOperand(0);
        const int64_t experts = tensorOf(op->getOperand(1)).getDimSize(1) - 1;
        const int64_t ranks = tensorOf(op->getOperand(1)).getDimSize(0);
        std::string name = dispatch ? "zrt_ep_dispatch" : "zrt_ep_combine";
        Value handle = call(b, start ? name + "_start" : name,
                            {dtype(b, local), p[0], p[1], p[2], I64(dispatched(local)), I64(rowsCols(local).second),
                             I64(experts), I64(ranks), I64(dispatched(received))});
        if (start)
          handles[op->getResult(0)] = handle;
        return success();
      })
      .Case([&](MoeSharedGateOp o) {
        auto [tokens, cols] = rowsCols(o.getShared());
        call(b, "zrt_moe_shared_gate", {dtype(b, o.getShared()), p[0], p[1], p[2], I64(tokens), I64(cols)});
        return success();
      })
      .Case([&](MoeSharedGateGradOp o) {
        auto [tokens, cols] = rowsCols(o.getShared());
        call(b, "zrt_moe_shared_gate_grad",
             {dtype(b, o.getShared()), p[0], p[1], p[2], p[3], p[4], I64(tokens), I64(cols)});
        return success();
      })
      .Case([&](MoeAuxLossOp o) {
        auto [tokens, experts] = rowsCols(o.getLogits());
        call(b, "zrt_moe_aux_loss", {dtype(b, o.getLogits()), p[0], p[1], p[2], I64(tokens), I64(experts),
                                     I64(rowsCols(o.getExperts()).second), I32(o.getSigmoid()), F64(o.getCoef()),
                                     I64(contextPooled(o))});
        return success();
      })
      .Case([&](MoeAuxLossGradOp o) {
        auto [tokens, experts] = rowsCols(o.getLogits());
        call(b, "zrt_moe_aux_loss_grad",
             {dtype(b, o.getLogits()), p[0], p[1], p[2], p[3], I64(tokens), I64(experts),
              I64(rowsCols(o.getExperts()).second), I32(o.getSigmoid()), F64(o.getCoef()), I64(contextPooled(o))});
        return success();
      })
      .Case([&](MoeZLossOp o) {
        auto [tokens, experts] = rowsCols(o.getLogits());
        call(b, "zrt_moe_z_loss", {dtype(b, o.getLogits()), p[0], p[1], I64(tokens), I64(experts), F64(o.getCoef())});
        return success();
      })
      .Case([&](MoeZLossGradOp o) {
        auto [tokens, experts] = rowsCols(o.getLogits());
        call(b, "zrt_moe_z_loss_grad",
             {dtype(b, o.getLogits()), p[0], p[1], p[2], I64(tokens), I64(experts), F64(o.getCoef())});
        return success();
      })
      .Default([](Operation *other) { return other->emitOpError("is not a Mixture-of-Experts op"); });
}
