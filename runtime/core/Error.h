// Fatal runtime errors: one message naming the call and the rank, then every rank stops.
#ifndef ZRT_CORE_ERROR_H
#define ZRT_CORE_ERROR_H

namespace zrt {

/// Prints `zrt: rank R: CALL: MESSAGE` to stderr and aborts the job: through
/// the installed abort hook (MPI_Abort, so no other rank hangs in a collective)
/// or, without one, by exiting the process with status 1.
[[noreturn]] void fatal(const char *call, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/// Called by fatal() after the message; it must not return.
using AbortHook = void (*)(int exitCode);
void setAbortHook(AbortHook hook);

/// The rank fatal() names; set by the communicator.
void setErrorRank(int rank);

} // namespace zrt

#endif // ZRT_CORE_ERROR_H
