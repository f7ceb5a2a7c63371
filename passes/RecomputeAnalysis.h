//===- RecomputeAnalysis.h - what zcc-recompute may recompute, and cloning --===//
//
// The step function's split into forward and backward pass, the forward values the
// backward pass reads (the candidates), the checkpoints full recomputation keeps (the
// residual stream), and the rewrite that clones a chosen set into the backward pass.
// zcc-recompute's policies and its auto search (Recompute.cpp) choose the sets.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_PASSES_RECOMPUTEANALYSIS_H
#define ZCC_PASSES_RECOMPUTEANALYSIS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>
#include <optional>
#include <vector>

namespace mlir::zc {

/// A forward value the backward pass reads.
struct Candidate {
  int64_t opIndex, resultIndex; // position in the step body (stable across clones of the module)
  int64_t bytes;
  double flops; // of the op computing it
  bool operator==(const Candidate &o) const { return opIndex == o.opIndex && resultIndex == o.resultIndex; }
};

/// The step function's forward/backward split and its candidates.
class StepAnalysis {
public:
  /// `layers`: the checkpoints are the transformer layers' inputs only (Megatron-LM's
  /// --recompute-granularity full, torchtitan's activation checkpointing of each
  /// TransformerBlock: the residual after a layer's attention is recomputed, not kept).
  /// `rerunReductions`: a tensor-parallel reduction of the forward pass may run again in
  /// backward (the row-parallel products re-run with their all-reduce, as Megatron's
  /// recomputed forward does; torchtitan's op-level policy saves the collectives' outputs).
  StepAnalysis(func::FuncOp step, bool layers = false, bool rerunReductions = false);

  bool valid() const { return seed != nullptr; }
  bool isBackward(Operation *op) const { return !op->isBeforeInBlock(seed); }
  /// Read by a backward op (returning the loss reads nothing that must be kept).
  bool hasBackwardUse(Value v) const;

  /// Whether `op` may run again in backward: pure compute of the forward pass. Under
  /// ZeRO-3 (zcc-zero runs after zcc-recompute) a sharded parameter a clone reads is
  /// gathered for the backward pass like the backward ops' own: one gather per parameter
  /// spans all its backward readers, so a clone next to its layer's backward shares that
  /// gather, and a parameter only the clone reads (a bias, a norm's shift) gets a gather of
  /// its own, bucketed and prefetched with the layer's by zcc-bucket and zcc-schedule.
  bool recomputable(Operation *op) const;

  /// Whether recomputing `v` (through cheap ops, at most `flopsPerByte`, and the ops in
  /// `alsoRecomputed` whatever their cost) reads only values that stay alive anyway: inputs,
  /// parameters, constants, values the backward pass reads.
  bool recomputesFromKept(Value v, double flopsPerByte, const DenseSet<Operation *> *alsoRecomputed = nullptr) const;

  std::vector<Candidate> candidates() const;
  Value valueOf(const Candidate &c) const { return ops[c.opIndex]->getResult(c.resultIndex); }

  /// Forward values kept by "full": the residual stream between blocks, found as
  /// values alone in flight where they are defined (nothing older but parameters
  /// and inputs is still needed by the forward pass) that several forward ops read
  /// (a block's norm and its residual add). A plain chain has none: all of it is
  /// recomputed from the step's inputs.
  const DenseSet<Value> &checkpoints() const { return found().values; }
  /// Indices of the ops defining a checkpoint, in order.
  ArrayRef<int64_t> checkpointOps() const { return found().ops; }

  /// The spans between checkpoints (a transformer's blocks, with the embedding before the
  /// first and the head after the last): how many, and which one op `index` is in.
  int64_t blocks() const { return static_cast<int64_t>(checkpointOps().size()) + 1; }
  int64_t blockOf(int64_t index) const;

  func::FuncOp step;
  bool layers = false, rerunReductions = false;
  Operation *seed = nullptr; // the backward pass's first op
  std::vector<Operation *> ops;

private:
  struct Checkpoints {
    DenseSet<Value> values;
    std::vector<int64_t> ops;
  };
  /// Found on first use (quadratic in the step's length; the rewrite does not need it).
  const Checkpoints &found() const;
  /// `layers`: drops the checkpoints inside a layer (the residual after its attention).
  void keepLayerInputsOnly(int64_t seedIndex) const;
  mutable std::optional<Checkpoints> checkpointCache;
};

/// How a chosen set is extended: a cloned op also needs its operands. An operand
/// the backward pass did not read would now be kept alive for the clone, so it is
/// recomputed too when it is recomputable, not a checkpoint, and costs at most
/// `flopsPerByte` (selective: only cheap ops; full and auto: any) or lies in `fullOps`.
struct Closure {
  double flopsPerByte = std::numeric_limits<double>::infinity();
  DenseSet<int64_t> checkpointOps; // indices of ops whose results are kept
  DenseSet<int64_t> fullOps;       // recomputed whatever their cost (a mix's fully recomputed blocks)
  bool rerunReductions = false;    // StepAnalysis's: tensor-parallel reductions recomputable
};

/// Recomputes the values `chosen` (and what `closure` adds; views follow) in `step`'s
/// backward pass: each op is cloned (`zc.recomputed`) right before its first backward
/// use and the backward uses read the clone. Returns the FLOPs of the clones; `cloned`,
/// if given, gets the indices of the ops cloned.
double applyRecompute(func::FuncOp step, ArrayRef<Candidate> chosen, const Closure &closure,
                      DenseSet<int64_t> *cloned = nullptr);

} // namespace mlir::zc

#endif // ZCC_PASSES_RECOMPUTEANALYSIS_H
