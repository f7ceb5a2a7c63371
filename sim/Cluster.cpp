//===- Cluster.cpp - cluster descriptions: JSON, and the shipped ones ------===//

#include "sim/Cluster.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace zcc::sim;

namespace {
struct Shipped {
  const char *name, *text;
};
// sim/clusters/*.json, compiled in (sim/CMakeLists.txt) so that `--cluster dgx-h100` works from
// any directory the binary is run in.
#include "sim/ShippedClusters.inc"
} // namespace

double Curve::at(double x) const {
  if (points.empty())
    return 1;
  if (x <= points.front().first)
    return points.front().second;
  if (x >= points.back().first)
    return points.back().second;
  for (size_t i = 1; i < points.size(); ++i)
    if (x <= points[i].first) {
      double x0 = std::log10(points[i - 1].first), x1 = std::log10(points[i].first);
      double f = (std::log10(x) - x0) / (x1 - x0);
      return points[i - 1].second + f * (points[i].second - points[i - 1].second);
    }
  return points.back().second;
}

double Curve::best(double fallback) const {
  if (points.empty())
    return fallback;
  double y = 0;
  for (auto &[x, value] : points)
    y = std::max(y, value);
  return y;
}

std::vector<std::string> zcc::sim::shippedClusterNames() {
  std::vector<std::string> names;
  for (const Shipped &s : kShippedClusters)
    names.push_back(s.name);
  return names;
}

llvm::Expected<Cluster> zcc::sim::parseCluster(llvm::StringRef text, llvm::StringRef origin) {
  auto fail = [&](const llvm::Twine &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cluster '" + origin + "': " + what);
  };
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return fail("not JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return fail("expected a JSON object");
  Cluster c;
  if (auto name = root->getString("name"))
    c.name = name->str();
  else
    return fail("\"name\" (a string) is missing");
  if (auto d = root->getString("description"))
    c.description = d->str();
  std::string problem;
  // A positive number at `section.key` (nested objects by dots), into `into`.
  auto number = [&](llvm::StringRef path, double &into) {
    if (!problem.empty())
      return;
    llvm::SmallVector<llvm::StringRef> parts;
    path.split(parts, '.');
    const llvm::json::Object *at = root;
    for (size_t i = 0; i + 1 < parts.size() && at; ++i)
      at = at->getObject(parts[i]);
    std::optional<double> v = at ? at->getNumber(parts.back()) : std::nullopt;
    if (!v || !std::isfinite(*v) || *v < 0 ||
        (*v == 0 && !path.ends_with("latency_s") && !path.ends_with("overhead_s")))
      problem = "\"" + path.str() + "\" must be a positive number";
    else
      into = *v;
  };
  auto curve = [&](llvm::StringRef key, Curve &into, bool optional = false) {
    if (!problem.empty())
      return;
    // "device.key", or "device.object.key"
    const llvm::json::Object *device = root->getObject("device");
    llvm::StringRef object = key.contains('.') ? key.split('.').first : "";
    llvm::StringRef leaf = key.contains('.') ? key.split('.').second : key;
    if (device && !object.empty())
      device = device->getObject(object);
    const llvm::json::Array *points = device ? device->getArray(leaf) : nullptr;
    if (optional && !(device && device->get(leaf)))
      return;
    if (!points || points->empty()) {
      problem = "\"device." + key.str() + "\" must be a list of [size, efficiency] pairs";
      return;
    }
    for (const llvm::json::Value &p : *points) {
      const llvm::json::Array *pair = p.getAsArray();
      std::optional<double> x = pair && pair->size() == 2 ? (*pair)[0].getAsNumber() : std::nullopt;
      std::optional<double> y = pair && pair->size() == 2 ? (*pair)[1].getAsNumber() : std::nullopt;
      if (!x || !y || !(*x > 0) || !(*y > 0) || *y > 1 ||
          (!into.points.empty() && !(*x > into.points.back().first))) {
        problem = "\"device." + key.str() + "\": each point is [size > 0, 0 < efficiency <= 1], sizes increasing";
        return;
      }
      into.points.push_back({*x, *y});
    }
  };
  double devices = 0;
  number("node.devices", devices);
  number("node.host_memory_bytes", c.hostMemoryBytes);
  number("node.host_link_bytes_per_s", c.hostLinkBytesPerSecond);
  number("node.nvme_read_bytes_per_s", c.nvmeReadBytesPerSecond);
  number("node.nvme_write_bytes_per_s", c.nvmeWriteBytesPerSecond);
  number("device.memory_bytes", c.memoryBytes);
  number("device.memory_bytes_per_s", c.memoryBytesPerSecond);
  number("device.peak_flops.f32", c.peakFlopsF32);
  number("device.peak_flops.bf16", c.peakFlopsBf16);
  curve("matmul_efficiency", c.matmulEfficiency);
  curve("matmul_efficiency_bf16", c.matmulEfficiencyBf16, /*optional=*/true);
  curve("attention_efficiency.forward_curve", c.attentionForwardCurve, /*optional=*/true);
  curve("attention_efficiency.backward_curve", c.attentionBackwardCurve, /*optional=*/true);
  curve("memory_efficiency", c.memoryEfficiency);
  number("device.attention_efficiency.forward", c.attentionForwardEfficiency);
  number("device.attention_efficiency.backward", c.attentionBackwardEfficiency);
  number("device.kernel_overhead_s", c.kernelOverheadSeconds);
  number("links.intra_node.bytes_per_s", c.intraNode.bytesPerSecond);
  number("links.intra_node.latency_s", c.intraNode.latencySeconds);
  number("links.inter_node.bytes_per_s", c.interNode.bytesPerSecond);
  number("links.inter_node.latency_s", c.interNode.latencySeconds);
  // Measured collectives inside a node (zcc-calibrate), optional: all three or none.
  if (const llvm::json::Object *links = root->getObject("links"))
    if (const llvm::json::Object *intra = links->getObject("intra_node"))
      if (const llvm::json::Object *measured = intra->getObject("collectives"))
        for (auto [key, into] : {std::pair<const char *, MeasuredCollective *>{"all_gather", &c.intraAllGather},
                                 {"reduce_scatter", &c.intraReduceScatter},
                                 {"all_reduce", &c.intraAllReduce}}) {
          const llvm::json::Object *kind = measured->getObject(key);
          std::optional<double> alpha = kind ? kind->getNumber("alpha_s") : std::nullopt;
          std::optional<double> bw = kind ? kind->getNumber("bytes_per_s") : std::nullopt;
          if (problem.empty() && (!alpha || !bw || *alpha < 0 || !(*bw > 0)))
            problem = std::string("\"links.intra_node.collectives.") + key +
                      "\" needs {\"alpha_s\": >= 0, \"bytes_per_s\": > 0}";
          else if (problem.empty())
            *into = {*alpha, *bw};
        }
  if (problem.empty() && (devices < 1 || devices != std::floor(devices)))
    problem = "\"node.devices\" must be a whole number >= 1";
  if (problem.empty() && (c.attentionForwardEfficiency > 1 || c.attentionBackwardEfficiency > 1))
    problem = "\"device.attention_efficiency\" values are fractions of the peak, at most 1";
  if (!problem.empty())
    return fail(problem);
  c.devicesPerNode = static_cast<int64_t>(devices);
  if (const llvm::json::Object *node = root->getObject("node"))
    if (std::optional<int64_t> cores = node->getInteger("cores")) {
      if (*cores < 1)
        return fail("\"node.cores\" must be a whole number >= 1");
      c.sharedCores = *cores;
    }
  if (const llvm::json::Object *sources = root->getObject("sources"))
    for (const auto &[key, value] : *sources)
      if (auto s = value.getAsString())
        c.sources[key.str()] = s->str();
  c.path = origin.str();
  return c;
}

llvm::Expected<Cluster> zcc::sim::loadCluster(llvm::StringRef nameOrPath) {
  for (const Shipped &s : kShippedClusters)
    if (nameOrPath == s.name)
      return parseCluster(s.text, s.name);
  auto buffer = llvm::MemoryBuffer::getFile(nameOrPath);
  if (!buffer) {
    std::string names;
    for (const Shipped &s : kShippedClusters)
      names += (names.empty() ? "" : ", ") + std::string(s.name);
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cluster '" + nameOrPath + "' is neither a shipped cluster (" + names +
                                       ") nor a readable file: " + buffer.getError().message());
  }
  return parseCluster((*buffer)->getBuffer(), nameOrPath);
}
