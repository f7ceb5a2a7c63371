// The local rank the launcher gives this process (Open MPI, MPICH/PMI, Slurm, torchrun), 0 when
// none does: which GPU a rank takes (Device.h), and which rank of a node speaks for it.
#ifndef ZRT_CUDA_LOCAL_RANK_H
#define ZRT_CUDA_LOCAL_RANK_H

namespace zrt::cuda {

int localRank();

} // namespace zrt::cuda

#endif // ZRT_CUDA_LOCAL_RANK_H
