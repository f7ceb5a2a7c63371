//===- EagerKernels.h - the row ops as PyTorch eager runs them -------------===//
//
// zcc runs a norm, the rotary embedding or the gated MLP's activation as one kernel each. A
// PyTorch model run eagerly (torchtitan's Llama before torch.compile) runs each as the kernels
// of its Python code, every one reading and writing its whole tensor, some in fp32. To compare
// with such runs the simulator can price these ops as those kernels (--sim-row-kernels eager),
// as --sim-attention materialized prices attention as Megatron-LM ran it. Not for zcc's plans.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_SIM_EAGERKERNELS_H
#define ZCC_SIM_EAGERKERNELS_H

#include "mlir/IR/Operation.h"

#include <vector>

namespace zcc::sim {

/// The bytes each kernel of `op`'s eager decomposition reads and writes, in order; empty where
/// eager PyTorch runs it as zcc does (one kernel, the same bytes: a residual add, a matmul).
/// Attention: the copies eager PyTorch adds around its fused kernel (the repeated keys and
/// values of grouped-query attention, the output's transpose made contiguous), not the kernel.
std::vector<double> eagerKernelBytes(mlir::Operation *op);

} // namespace zcc::sim

#endif // ZCC_SIM_EAGERKERNELS_H
