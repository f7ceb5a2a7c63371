//===- EagerKernels.cpp - the row ops as PyTorch eager runs them -----------===//
//
// The decompositions are torchtitan's Llama (torchtitan/models/llama/model.py, 2024, the runs
// docs/performance.md reports on A100s), each line one kernel launched by eager PyTorch, its
// bytes per element of the op's tensor (e: the activations' element bytes, 2 in bf16; f32
// intermediates 4):
//
//   RMSNorm: self._norm(x.float()).type_as(x) * self.weight, _norm(x) = x * torch.rsqrt(
//     x.pow(2).mean(-1, keepdim=True) + eps): float (e + 4), pow (8), mean (4), add and rsqrt (a
//     row each), mul (8), type_as (4 + e), weight mul (2e): 9x the 2e fused.
//   its autograd: weight mul's (2e for the input's gradient; 3e and e for the weight's: a mul and
//     a sum over rows), type_as' (e + 4), mul's (8 to the input; 12 and 4 to the rsqrt: a mul and
//     a row sum), rsqrt's and add's (a row each), mean's (4: the expand), pow's (12), the two
//     gradients of x summed (12), float's (4 + e).
//   apply_rotary_emb on q and on k: view_as_complex(x.float().reshape(..., -1, 2)) * freqs_cis,
//     view_as_real, type_as: float (e + 4), the complex mul (8), type_as (4 + e); its gradient the
//     same three (the conjugate product between the casts).
//   FeedForward: w2(F.silu(w1(x)) * w3(x)): silu (2e) and mul (3e) against swiglu's fused 3e;
//     its gradient: mul's two products (3e each) and silu's (3e) against the fused 5e.
//   Attention: repeat_kv copies the keys and the values out to every query head (e per kv
//     element read, e per repeated one written; their gradients summed back the other way), and
//     the output's transpose(1, 2).contiguous() is a copy (2e; again for its gradient).
//
//===----------------------------------------------------------------------===//

#include "sim/EagerKernels.h"

#include "dialects/zc/ZcDialect.h"
#include "passes/Passes.h"

using namespace mlir;
using namespace mlir::zc;

namespace {

double elementsOf(Value v) { return double(cast<RankedTensorType>(v.getType()).getNumElements()); }
double elementBytes(Value v) { return double(cast<RankedTensorType>(v.getType()).getElementTypeBitWidth()) / 8; }

/// Per-element kernel bytes scaled to `n` elements.
std::vector<double> scaled(std::initializer_list<double> perElement, double n) {
  std::vector<double> bytes;
  for (double b : perElement)
    bytes.push_back(b * n);
  return bytes;
}

/// The copies around a fused attention kernel: repeat_kv's for keys and values (forward: read the
/// kv heads, write every query head's; gradient: the reverse sum) and the output's contiguous.
std::vector<double> attentionCopies(Value query, Value key) {
  const double e = elementBytes(query), q = elementsOf(query), kv = elementsOf(key);
  std::vector<double> bytes;
  if (kv < q)
    bytes.insert(bytes.end(), 2, e * (kv + q)); // keys and values
  bytes.push_back(2 * e * q);
  return bytes;
}

} // namespace

std::vector<double> zcc::sim::eagerKernelBytes(Operation *op) {
  if (auto norm = dyn_cast<RmsNormOp>(op)) {
    const double e = elementBytes(norm.getInput());
    return scaled({e + 4, 8, 4, 0, 0, 8, 4 + e, 2 * e}, elementsOf(norm.getInput()));
  }
  if (isa<RmsNormGradOp>(op)) {
    const double e = elementBytes(op->getOperand(0));
    return scaled({2 * e, 3 * e, e, e + 4, 8, 12, 4, 0, 0, 4, 12, 12, 4 + e}, elementsOf(op->getOperand(0)));
  }
  if (isa<RotaryOp>(op)) {
    const double e = elementBytes(op->getOperand(0));
    return scaled({e + 4, 8, 4 + e}, elementsOf(op->getOperand(0)));
  }
  if (isa<SwigluOp>(op)) {
    const double e = elementBytes(op->getOperand(0));
    return scaled({2 * e, 3 * e}, elementsOf(op->getOperand(0)));
  }
  if (isa<SwigluGradOp>(op)) {
    const double e = elementBytes(op->getOperand(0));
    return scaled({3 * e, 3 * e, 3 * e}, elementsOf(op->getOperand(0)));
  }
  if (auto attention = dyn_cast<CausalAttentionOp>(op))
    return attentionCopies(attention.getQuery(), attention.getKey());
  if (auto grad = dyn_cast<CausalAttentionGradOp>(op))
    return attentionCopies(grad.getQuery(), grad.getKey());
  return {};
}
