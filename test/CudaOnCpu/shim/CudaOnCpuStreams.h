// CUDA's streams and events on the CPU, with CUDA's ordering rules (test/CudaOnCpu/README.md).
//
// A created stream is a FIFO run by a thread of its own, so work on two streams runs at the same
// time, as on a GPU, and a missing event between them is a race here too. An event records the
// point its stream had reached when cudaEventRecord was called; cudaStreamWaitEvent waits for that
// record (not a later one), and an event never recorded is complete. The null stream runs its
// work in the calling thread once the blocking streams' queued work has run (the legacy default
// stream's rule; the runtime's own streams are non-blocking, and do not wait). HIP-CPU's streams are not used for this: their wait reads the event's
// latest record when the wait runs, and a stream's queued wait can block the round of the one
// processor thread that would run the record it waits for.
#ifndef ZRT_CUDA_ON_CPU_STREAMS_H
#define ZRT_CUDA_ON_CPU_STREAMS_H

#include <hip/hip_runtime.h>

#include <functional>

struct CUstream_st;
struct CUevent_st;
using cudaStream_t = CUstream_st *;
using cudaEvent_t = CUevent_st *;

namespace zrt::cudaoncpu {

/// Queues `work` on `stream` (runs it now, in this thread, on the null stream).
void enqueue(cudaStream_t stream, std::function<void()> work);
/// Called by a copy's queued work before it copies: on a created stream, sleeps for
/// ZRT_CUDA_ON_CPU_COPY_LATENCY_US microseconds (default 0; the null stream's copies are synchronous
/// anyway). On a GPU a copy over PCIe or a network lands long after the kernels queued beside it
/// have started; here a memcpy is over before the next kernel's fiber runs, so a missing wait for
/// a copy goes unseen unless copies are made slow (the planted defects' tests do).
void modelCopyLatency(cudaStream_t stream);
/// The HIP-CPU stream of this thread, for a kernel's grid (created on first use).
hipStream_t hipStreamOfThisThread();

/// `blocking`: cudaStreamDefault (ordered with the null stream), else cudaStreamNonBlocking.
cudaStream_t createStream(bool blocking);
void destroyStream(cudaStream_t stream);
/// Returns once everything queued on `stream` so far has run (every stream's for the null stream).
void synchronizeStream(cudaStream_t stream);
void synchronizeAll();

cudaEvent_t createEvent();
void destroyEvent(cudaEvent_t event);
void recordEvent(cudaEvent_t event, cudaStream_t stream);
void streamWaits(cudaStream_t stream, cudaEvent_t event);
/// Whether the event's last record has run (true when never recorded).
bool eventDone(cudaEvent_t event);
void synchronizeEvent(cudaEvent_t event);
/// Milliseconds between two completed records; false when either has not completed.
bool elapsedMs(cudaEvent_t start, cudaEvent_t end, float *ms);

} // namespace zrt::cudaoncpu

#endif // ZRT_CUDA_ON_CPU_STREAMS_H
