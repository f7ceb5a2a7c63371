//===- PlanBounds.h - what a plan needs at least, before it is compiled ---===//
//
// --plan auto's cheap bounds (sim/Planner.cpp orders and rules out plans by them): the facts it
// reads off the model once, a plan's model state and kept activations per device, and its step
// time, each a lower bound of what the compiled plan's memory plan and simulation give.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_SIM_PLANBOUNDS_H
#define ZCC_SIM_PLANBOUNDS_H

#include "sim/Cluster.h"
#include "sim/Planner.h"

#include "mlir/IR/BuiltinOps.h"

namespace zcc::sim {

/// What the planner reads off the model once.
struct ModelFacts {
  int64_t batch = 0, context = 0;
  double paramElements = 0, forwardMatmulFlops = 0, modelFlops = 0, tokens = 0;
  double expertParamElements = 0; // of them, the experts' weights (what --ep splits)
  double attentionFlops = 0; // the forward's causal attention, its causal half (flash)
  double matmulInputElements = 0; // what the weight gradients read: every forward matmul's input (each once)
  double matmulOutputElements = 0; // and the gradients of every forward matmul's output
  // Of them, the grouped products' (a MoE layer's experts): zc.grouped_matmul_grad computes the
  // input's and the weights' gradients in one op, in a zero-bubble stage's B, so nothing of
  // theirs waits from B for W and their inputs wait only until B.
  double groupedInputElements = 0, groupedOutputElements = 0;
  int64_t blocks = 0;              // the attention blocks (layers) a pipeline splits
  int64_t experts = 0;             // a MoE model's experts per layer (the fewest): what --ep divides
};

/// Reads them off the model as written.
ModelFacts factsOf(mlir::ModuleOp model);

/// Bytes per device that the plan's model state needs at least: fp32 parameters, gradients and
/// AdamW's two moments (16 B a parameter; bf16: 2 B parameters and gradients, the fp32 master
/// copy and the moments 12 B, as the compiled plan keeps them), sharded by ZeRO over the data x
/// context ranks and split over tensor x pipeline ranks (at least: norms and biases are
/// replicated).
double modelStateLowerBound(const PlanChoice &c, double params, double expertParams, bool bf16);

/// What a compiled 1F1B pipeline keeps per micro-batch for each block a stage holds (its stash
/// arguments' bytes over its attention blocks): the least over the stages before the last (whose
/// forward runs in its step and keeps nothing), 0 where none holds a block.
double stashPerBlock(llvm::ArrayRef<mlir::ModuleOp> stages);

/// Bytes per device of activations the backward pass reads at least: without recomputation,
/// every matmul's input (its weight gradient needs it) of one micro-batch, split over tensor
/// (sequence parallelism) and context ranks; with any, none of them (selective recomputes the
/// norms that feed the products, op an up projection, full everything). A pipeline's chunk keeps
/// those of its blocks for its micro-batches in flight (heldByChunk), and under zero-bubble each
/// deferred W's inputs besides, from its B: the matmuls' output gradients, and their inputs too
/// where B recomputed them (full). Where the plan's 1F1B twin was compiled,
/// what its stages keep per block (`keptPerBlock`, stashPerBlock; 0: not known) bounds what a
/// chunk keeps from F to B per block from below too, the larger taken. Where the cut puts the
/// blocks is not known here, so the rank that holds the most is bounded two ways, the larger
/// taken: every chunk has at least floor(L / (p v)) of the L blocks; and the ranks' mean, the
/// blocks beyond those on the chunks that hold the fewest micro-batches. Without a pipeline, every
/// block's `keptPerBlock` at once (one micro-batch's).
double activationLowerBound(const PlanChoice &c, const ModelFacts &facts, bool bf16, double keptPerBlock);

/// A lower bound of the step: every device's share of the matmuls at the best matmul rate, one
/// more forward where whole blocks are recomputed (full), and the schedule's bubble at equal
/// stages: 1F1B's (p - 1) / v micro-batches' work, zero-bubble's a third of 1F1B's ((p - 1)(F +
/// B - W) against (p - 1)(F + B + W), Qi et al.), ZB-V's a sixth.
double stepLowerBound(const PlanChoice &c, const ModelFacts &facts, double scale, const Cluster &cluster, bool bf16);

} // namespace zcc::sim

#endif // ZCC_SIM_PLANBOUNDS_H
