// The runtime's C ABI: the one contract between code zcc emits and the runtime (see zrt_abi.def).
#ifndef ZRT_ZRT_H
#define ZRT_ZRT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Element types of tensors passed through the ABI.
/// ZRT_DTYPE_I8: bytes (zrt_quantize's rows), which gathers and all-to-alls move; no reduction
/// takes it.
typedef enum zrt_dtype { ZRT_DTYPE_F32 = 0, ZRT_DTYPE_BF16 = 1, ZRT_DTYPE_I8 = 2 } zrt_dtype;

/// Axes of the device mesh (zrt_set_mesh). Rank order is Megatron's: tensor fastest, then
/// data, then pipeline. The collectives without an axis argument run on the data axis (the
/// whole world when no mesh is set).
typedef enum zrt_axis {
  ZRT_AXIS_DATA = 0,
  ZRT_AXIS_TENSOR = 1,
  ZRT_AXIS_PIPELINE = 2,
  ZRT_AXIS_WORLD = 3,
  /// The first and the last pipeline stage (Megatron's embedding group): a parameter both
  /// hold, the GPT's tied embedding and head, sums its gradient over it. Ranks of the middle
  /// stages are alone in it.
  ZRT_AXIS_PIPELINE_ENDS = 4,
  /// Context parallelism (zrt_set_context): the ranks of one data-parallel group that hold the
  /// same sequences, each its part of their tokens. Megatron-LM's order: tensor fastest, then
  /// context, then data, then pipeline, so the data axis (ZeRO's group) spans data x context.
  ZRT_AXIS_CONTEXT = 5,
  /// ZeRO++'s groups inside the data axis (zrt_set_hierarchy): the data-parallel ranks of this
  /// rank's node (the compiled node size, consecutive data coordinates), the ranks with this
  /// rank's place on every node, and hpZ's groups of consecutive ranks. Each is this rank alone
  /// before zrt_set_hierarchy.
  ZRT_AXIS_NODE = 6,
  ZRT_AXIS_CROSS = 7,
  ZRT_AXIS_HPZ = 8,
  /// Expert parallelism (zrt_set_experts): the ep consecutive ranks of the data axis that hold
  /// different experts and exchange their tokens, and the data-axis ranks with this rank's place
  /// in its expert group (they hold the same experts: their gradients' group). This rank alone,
  /// and the data axis, before zrt_set_experts.
  ZRT_AXIS_EXPERT = 9,
  ZRT_AXIS_EXPERT_DATA = 10
} zrt_axis;

/// What a pipeline message carries (zrt_pipe_send, zrt_pipe_recv): a stage's output activation, on
/// to the next stage, or the gradient of a stage's input, back to the one before.
enum { ZRT_PIPE_ACTIVATION = 0, ZRT_PIPE_GRADIENT = 1 };

/// Where model state lives (zrt_tier_open): the arena on the backend's device, host memory, or
/// the NVMe store (ZeRO-Offload and ZeRO-Infinity's tiers).
typedef enum zrt_tier { ZRT_TIER_DEVICE = 0, ZRT_TIER_HOST = 1, ZRT_TIER_NVME = 2 } zrt_tier;

/// The rows of zrt_plan_matmuls' table: ZRT_MATMUL_ROW int64s each, kind and dtype first.
///   ZRT_MATMUL_PLAIN:         batch, m, n, k, trans_a, trans_b, b_shared (zrt_matmul's arguments)
///   ZRT_MATMUL_CROSS_ENTROPY: rows, classes, channels, trans_w, chunk_rows, 0, 0
///                             (zrt_matmul_cross_entropy's: the runtime knows its products)
///   ZRT_MATMUL_GROUPED_M, _K: as PLAIN, for one expert's product of a grouped matmul, whose m
///                             (the expert's rows) or k (a weight gradient's) is known only when
///                             it runs: the sizes given are the balanced count's
enum {
  ZRT_MATMUL_PLAIN = 0,
  ZRT_MATMUL_CROSS_ENTROPY = 1,
  ZRT_MATMUL_GROUPED_M = 2,
  ZRT_MATMUL_GROUPED_K = 3,
  ZRT_MATMUL_ROW = 9
};

/// Per-rank counters for the executable's logs, indexed by collective kind:
/// 0 all_gather, 1 reduce_scatter, 2 all_reduce, 3 broadcast, 4 pipeline sends. Bytes sent
/// follow the ring algorithms: all_gather and reduce_scatter (N-1) x shard bytes,
/// all_reduce 2 (N-1)/N x buffer bytes, broadcast the buffer from the root; a send its bytes.
/// Counters by kind: 0 all-gather, 1 reduce-scatter, 2 all-reduce, 3 broadcast, 4 all-to-all,
/// 5 pipeline sends (ZRT_COUNTER_PIPE), 6 ring attention's sends (ZRT_COUNTER_RING).
#define ZRT_COUNTER_PIPE 5
#define ZRT_COUNTER_RING 6
typedef struct zrt_counters {
  int64_t calls[7];
  int64_t bytes_sent[7];
  double wait_seconds;       /* compute thread blocked in zrt_wait / blocking collectives */
  int64_t arena_bytes;       /* size of the arena */
  int64_t arena_high_water;  /* largest offset + bytes handed out by zrt_arena_ptr */
  int64_t swap_read_bytes;   /* NVMe store: bytes read and written by the swap schedule */
  int64_t swap_write_bytes;
  double swap_wait_seconds;  /* compute thread blocked in zrt_swap_wait */
  int64_t ring_attention_scores; /* query-key scores ring attention computed (forward and gradient) */
  /* Every counted collective's bytes by the link they cross (ZeRO++'s accounting): to a rank of
     this rank's node or of another. The ring algorithms send all of a rank's bytes to the next
     rank of the group; an all-to-all sends each peer its block. Nodes are world ranks / the
     ranks per node (zrt_set_hierarchy; else the launcher's local rank count; else one node). */
  int64_t bytes_in_node;
  int64_t bytes_cross_node;
} zrt_counters;

#define ZRT_VOID void
#define ZRT_RI32 int32_t
#define ZRT_RI64 int64_t
#define ZRT_RF64 double
#define ZRT_RPTR void *
#define ZRT_I32(name) int32_t name
#define ZRT_I64(name) int64_t name
#define ZRT_F64(name) double name
#define ZRT_PTR(name) void *name
#define ZRT_CPTR(name) const void *name
#define ZRT_FN(ret, name, params) ret name params;
#include "zrt/zrt_abi.def"
#undef ZRT_FN
#undef ZRT_VOID
#undef ZRT_RI32
#undef ZRT_RI64
#undef ZRT_RF64
#undef ZRT_RPTR
#undef ZRT_I32
#undef ZRT_I64
#undef ZRT_F64
#undef ZRT_PTR
#undef ZRT_CPTR

#ifdef __cplusplus
} // extern "C"
#endif

#endif // ZRT_ZRT_H
