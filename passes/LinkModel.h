//===- LinkModel.h - which link a data-parallel collective's bytes cross ---===//
//
// The runtime's link counters (zrt_counters.bytes_in_node / bytes_cross_node) as a formula
// for zcc --report: a ring sends all of a rank's bytes to the next rank of its group, an
// all-to-all sends each peer its block; node = rank / ranks per node. Modelled on meshes of
// data-parallel ranks only (rank = data coordinate), with ZeRO++'s groups: `node` (ranks per
// node consecutive), `cross` (the same place on each node), `hpz` (hpZ's consecutive groups).
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_PASSES_LINKMODEL_H
#define ZCC_PASSES_LINKMODEL_H

#include "dialects/zc/ZcDialect.h"

#include <algorithm>
#include <map>

namespace mlir::zc {

class LinkModel {
public:
  /// Bytes summed over all ranks, by link.
  struct Bytes {
    int64_t inNode = 0, crossNode = 0;
  };

  LinkModel(int64_t ranks, int64_t perNode, int64_t hpz)
      : ranks(ranks), perNode(std::max<int64_t>(1, std::min(perNode, ranks))), hpz(std::max<int64_t>(1, hpz)) {
    // Counted once per group kind: a report walks thousands of collectives, each ring or
    // exchange of N ranks would otherwise cost N x group size.
    for (MeshAxis axis : {MeshAxis::data, MeshAxis::node, MeshAxis::cross, MeshAxis::hpz})
      counts[axis] = countCrossings(axis);
  }

  /// A ring collective every rank runs, `perRank` bytes each.
  Bytes ring(MeshAxis axis, int64_t perRank) const {
    const int64_t cross = countsOf(axis).ringRanks * perRank;
    return {ranks * perRank - cross, cross};
  }
  /// An all-to-all over groups of `groupRanks` ranks, blocks of `block` bytes.
  Bytes allToAll(MeshAxis axis, int64_t groupRanks, int64_t block) const {
    const int64_t cross = countsOf(axis).peers * block;
    return {ranks * (groupRanks - 1) * block - cross, cross};
  }

private:
  /// Of every rank's group on one axis: the ranks whose ring successor is on another node,
  /// and the peers on other nodes summed over the ranks.
  struct Crossings {
    int64_t ringRanks = 0, peers = 0;
  };

  /// The world ranks of `rank`'s group on `axis`, in group order.
  SmallVector<int64_t> group(MeshAxis axis, int64_t rank) const {
    SmallVector<int64_t> members;
    auto run = [&](int64_t first, int64_t count, int64_t stride) {
      for (int64_t i = 0; i < count; ++i)
        members.push_back(first + i * stride);
    };
    switch (axis) {
    case MeshAxis::node: run(rank / perNode * perNode, perNode, 1); break;
    case MeshAxis::cross: run(rank % perNode, ranks / perNode, perNode); break;
    case MeshAxis::hpz: run(rank / hpz * hpz, hpz, 1); break;
    default: run(0, ranks, 1); break; // the data axis
    }
    return members;
  }

  Crossings countCrossings(MeshAxis axis) const {
    Crossings c;
    for (int64_t r = 0; r < ranks; ++r) {
      SmallVector<int64_t> g = group(axis, r);
      auto at = llvm::find(g, r) - g.begin();
      c.ringRanks += g.size() > 1 && g[(at + 1) % g.size()] / perNode != r / perNode;
      for (int64_t p : g)
        c.peers += p / perNode != r / perNode;
    }
    return c;
  }

  const Crossings &countsOf(MeshAxis axis) const {
    auto it = counts.find(axis);
    return it != counts.end() ? it->second : counts.at(MeshAxis::data);
  }

  int64_t ranks, perNode, hpz;
  std::map<MeshAxis, Crossings> counts;
};

} // namespace mlir::zc

#endif // ZCC_PASSES_LINKMODEL_H
