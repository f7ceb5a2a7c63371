// The pipeline's point-to-point channels on the CUDA backend: which communicator a message
// travels on. NCCL orders a communicator's operations on the stream it is used on, and a send
// larger than NCCL's buffer waits until its peer's receive runs, so a rank keeps its sends and
// its receives on two streams (RuntimeState.h, pipeStreams) and they must not share a
// communicator. A message travels on the communicator of its sender's colour: a rank sends on
// its own colour's and receives on its neighbours', which differ from its own. The colours are
// a proper colouring of the ring of pipeline ranks (each rank's neighbours r - 1 and r + 1 mod P,
// interleaved pipelines sending round the ring): two colours when P is even, three when odd.
#ifndef ZRT_CUDA_PIPECOLORS_H
#define ZRT_CUDA_PIPECOLORS_H

namespace zrt::cuda {

/// The colours pipeline ranks 0 .. pp - 1 take (pp > 1).
inline int pipeColors(int pp) { return pp % 2 == 0 ? 2 : 3; }

/// Pipeline rank `rank`'s colour: alternating, the last rank of an odd ring its own third.
inline int pipeColor(int rank, int pp) { return pp % 2 == 1 && rank == pp - 1 ? 2 : rank % 2; }

} // namespace zrt::cuda

#endif // ZRT_CUDA_PIPECOLORS_H
