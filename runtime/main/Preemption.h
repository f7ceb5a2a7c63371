// Preemption (Slurm's SIGTERM, or SIGUSR1 by --signal=USR1@90): the signal asks every rank to stop
// after its step with a checkpoint; a second one stops the rank at once.
#ifndef ZRT_MAIN_PREEMPTION_H
#define ZRT_MAIN_PREEMPTION_H

namespace zrt {

/// Blocks SIGTERM and SIGUSR1 in the calling thread, and so in every thread it starts later (MPI's,
/// the runtime's, OpenMP's), and takes them in one thread of its own. Call it first, before the
/// runtime starts: a signal then never lands in another thread, where it would interrupt a system
/// call (a checkpoint's write, MPI's progress) with EINTR.
void watchPreemptionSignals();

/// The first preemption signal received, or 0.
int preemptionSignal();

} // namespace zrt

#endif // ZRT_MAIN_PREEMPTION_H
