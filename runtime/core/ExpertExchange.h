// Expert parallelism's exchange plan, the same on every backend (cpu/ExpertParallel.cpp,
// cuda/ExpertParallel.cu): from every rank's routing offsets (zrt_ep_counts' all-gather), which
// rows go where. Rank r of an expert group of R holds experts [r E / R, (r + 1) E / R). A rank's
// dispatched rows are grouped by expert, so its rows for rank p's experts are one block; the
// receiving rank lays out what it receives by local expert, each expert's rows in source-rank
// order, which is what its grouped products read (local offsets).
#ifndef ZRT_CORE_EXPERTEXCHANGE_H
#define ZRT_CORE_EXPERTEXCHANGE_H

#include <cstdint>
#include <vector>

#include "core/Error.h"

namespace zrt {

/// One expert group's routing: `all` [ranks, experts + 1], every rank's offsets (host memory).
struct ExpertExchange {
  const int32_t *all;
  int64_t experts, ranks, me;
  int64_t local() const { return experts / ranks; }
  /// Where rank `s`'s rows of expert `e` start among its dispatched rows.
  int64_t start(int64_t s, int64_t e) const { return all[s * (experts + 1) + e]; }
  /// Rows rank `s` dispatched to expert `e`.
  int64_t rows(int64_t s, int64_t e) const { return start(s, e + 1) - start(s, e); }
  /// Rows expert `e` receives from the whole group.
  int64_t toExpert(int64_t e) const {
    int64_t n = 0;
    for (int64_t s = 0; s < ranks; ++s)
      n += rows(s, e);
    return n;
  }
  /// Rows rank `s` sends rank `p` (its rows of p's experts: one block).
  int64_t block(int64_t s, int64_t p) const { return start(s, (p + 1) * local()) - start(s, p * local()); }
  /// The received layout, in order: for each local expert j, each source rank s's rows of it,
  /// `fn(s, j, n)` with their count n (ep_dispatch writes them so, ep_combine reads them back).
  template <class Fn> void forEachReceivedRun(Fn fn) const {
    for (int64_t j = 0; j < local(); ++j)
      for (int64_t s = 0; s < ranks; ++s)
        fn(s, j, rows(s, me * local() + j));
  }
  /// Where each source rank's block starts among `perSource` rows (the rows by source, in order).
  static std::vector<int64_t> blockStarts(const std::vector<int64_t> &perSource) {
    std::vector<int64_t> at(perSource.size(), 0);
    for (size_t p = 1; p < perSource.size(); ++p)
      at[p] = at[p - 1] + perSource[p - 1];
    return at;
  }
  /// What this rank sends each rank (its rows of their experts), and receives from each (their
  /// rows of its experts): ep_dispatch's counts, and reversed ep_combine's.
  std::vector<int64_t> outgoing() const {
    std::vector<int64_t> n(ranks);
    for (int64_t p = 0; p < ranks; ++p)
      n[p] = block(me, p);
    return n;
  }
  std::vector<int64_t> incoming() const {
    std::vector<int64_t> n(ranks);
    for (int64_t p = 0; p < ranks; ++p)
      n[p] = block(p, me);
    return n;
  }
  /// The rows this rank dispatched (its offsets' last).
  int64_t dispatched() const { return start(me, experts); }
  /// Rows the experts of rank `p` receive in all.
  int64_t received(int64_t p) const {
    int64_t n = 0;
    for (int64_t s = 0; s < ranks; ++s)
      n += block(s, p);
    return n;
  }
};

/// The exchange of `experts` over `ranks` ranks, this one `me` (the group's size and rank as the
/// runtime formed them), checked against what the program was compiled for.
inline ExpertExchange expertExchange(const char *call, const void *all, int64_t experts, int64_t ranks,
                                     int groupSize, int me) {
  if (experts < 1 || ranks < 1 || experts % ranks != 0)
    fatal(call, "%lld experts over %lld expert-parallel ranks: they must divide", static_cast<long long>(experts),
          static_cast<long long>(ranks));
  if (groupSize != ranks)
    fatal(call, "compiled for %lld expert-parallel ranks, the mesh's expert groups have %d",
          static_cast<long long>(ranks), groupSize);
  return ExpertExchange{static_cast<const int32_t *>(all), experts, ranks, me};
}

/// zrt_ep_counts' checks of the gathered offsets, before any row moves. Every rank of the group
/// checks every rank's routing, so all reach the same verdict and stop together.
inline void checkExpertExchange(const char *call, const ExpertExchange &x, int64_t rows, int64_t maxRows) {
  for (int64_t s = 0; s < x.ranks; ++s) {
    const int32_t *o = x.all + s * (x.experts + 1);
    for (int64_t e = 0; e < x.experts; ++e)
      if (o[0] != 0 || o[e + 1] < o[e])
        fatal(call, "expert-parallel rank %lld's offsets do not run from 0 without decreasing (expert %lld: %d to %d)",
              static_cast<long long>(s), static_cast<long long>(e), o[e], o[e + 1]);
  }
  for (int64_t e = 0; e < x.experts && maxRows > 0; ++e) {
    const int64_t got = x.toExpert(e);
    if (got > maxRows)
      fatal(call,
            "expert %lld received %lld rows in one routing, over the %lld the memory plan holds "
            "(zcc --moe-max-tokens-per-expert): compile with a larger bound, or without it (the worst case)",
            static_cast<long long>(e), static_cast<long long>(got), static_cast<long long>(maxRows));
  }
  for (int64_t p = 0; p < x.ranks; ++p)
    if (x.received(p) > rows)
      fatal(call, "expert-parallel rank %lld's experts receive %lld rows, over the plan's %lld (a corrupt routing)",
            static_cast<long long>(p), static_cast<long long>(x.received(p)), static_cast<long long>(rows));
}

/// This rank's local offsets [local + 1]: where each of its experts' received rows start.
inline std::vector<int32_t> localExpertOffsets(const ExpertExchange &x) {
  std::vector<int32_t> local(x.local() + 1, 0);
  for (int64_t j = 0; j < x.local(); ++j)
    local[j + 1] = static_cast<int32_t>(local[j] + x.toExpert(x.me * x.local() + j));
  return local;
}

/// ep_dispatch's and ep_combine's sizes against the tensors': `sent` rows leave a tensor of
/// `sentRows`, `got` arrive in one of `gotRows`.
inline void checkExchangedRows(const char *call, int64_t sent, int64_t got, int64_t sentRows, int64_t gotRows) {
  if (sent > sentRows || got > gotRows)
    fatal(call, "the routing's rows (%lld sent, %lld received) exceed the tensors' %lld and %lld rows",
          static_cast<long long>(sent), static_cast<long long>(got), static_cast<long long>(sentRows),
          static_cast<long long>(gotRows));
}

} // namespace zrt

#endif // ZRT_CORE_EXPERTEXCHANGE_H
