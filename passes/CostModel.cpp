//===- CostModel.cpp - collective costs from zcc-calibrate ----------------===//

#include "passes/CostModel.h"

#include "dialects/zc/ZcDialect.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::zc;

int64_t CostModel::bucketBytesFor(const CollectiveCost &cost, int64_t ranks, bool allReduce) {
  // Bytes sent for `b` bytes of tensors: ring all-reduce 2 (N-1)/N b, the others (N-1)/N b.
  double sentPerByte = double(std::max<int64_t>(ranks, 2) - 1) / double(std::max<int64_t>(ranks, 2));
  if (allReduce)
    sentPerByte *= 2;
  // alpha <= 0.1 (alpha + sent / bw)  <=>  sent >= 9 alpha bw.
  double bytes = 9.0 * cost.alphaSeconds * cost.bytesPerSecond / sentPerByte;
  constexpr double kMiB = 1 << 20;
  // At least 1 MiB (below it, copies into the bucket cost more than they save),
  // at most 1 GiB.
  return static_cast<int64_t>(std::clamp(bytes, kMiB, 1024 * kMiB));
}

FailureOr<CostModel> CostModel::load(llvm::StringRef path, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = "cannot read cost model '" + path.str() + "': " + buffer.getError().message();
    return failure();
  }
  llvm::Expected<llvm::json::Value> json = llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    error = "cost model '" + path.str() + "' is not JSON: " + llvm::toString(json.takeError());
    return failure();
  }
  CostModel model;
  model.source = path.str();
  const llvm::json::Object *root = json->getAsObject();
  if (std::optional<llvm::StringRef> source = root ? root->getString("source") : std::nullopt)
    model.source = source->str(); // what the file was made from (zcc --cluster's)
  auto read = [&](llvm::StringRef kind, CollectiveCost &cost) -> bool {
    const llvm::json::Object *entry = root ? root->getObject(kind) : nullptr;
    std::optional<double> alpha = entry ? entry->getNumber("alpha_s") : std::nullopt;
    std::optional<double> bandwidth = entry ? entry->getNumber("bytes_per_s") : std::nullopt;
    if (!alpha || !bandwidth || *alpha < 0 || !(*bandwidth > 0) || !std::isfinite(*alpha)) {
      error = "cost model '" + path.str() + "': \"" + kind.str() +
              "\" needs {\"alpha_s\": seconds >= 0, \"bytes_per_s\": > 0}";
      return false;
    }
    cost = {*alpha, *bandwidth};
    return true;
  };
  if (!read("all_gather", model.allGather) || !read("reduce_scatter", model.reduceScatter) ||
      !read("all_reduce", model.allReduce))
    return failure();
  // Optional sections of positive rates: {"section": {"key": value, ...}}, all keys or an error.
  auto rates = [&](llvm::StringRef section, std::initializer_list<std::pair<llvm::StringRef, double *>> keys) {
    const llvm::json::Object *entry = root ? root->getObject(section) : nullptr;
    if (!entry)
      return true;
    std::string wanted;
    for (auto &[key, into] : keys)
      wanted += (wanted.empty() ? "\"" : ", \"") + key.str() + "\": > 0";
    for (auto &[key, into] : keys) {
      std::optional<double> value = entry->getNumber(key);
      if (!value || !(*value > 0) || !std::isfinite(*value)) {
        error = "cost model '" + path.str() + "': \"" + section.str() + "\" needs {" + wanted + "}";
        return false;
      }
      *into = *value;
    }
    return true;
  };
  if (!rates("nvme", {{"read_bytes_per_s", &model.nvmeReadBytesPerSecond},
                      {"write_bytes_per_s", &model.nvmeWriteBytesPerSecond}}) ||
      !rates("host", {{"copy_bytes_per_s", &model.hostCopyBytesPerSecond}}) ||
      !rates("compute", {{"flops_per_s", &model.computeFlopsPerSecond}}))
    return failure();
  return model;
}

std::string CostModel::toJson() const {
  auto kind = [](const CollectiveCost &c) {
    return llvm::json::Object{{"alpha_s", c.alphaSeconds}, {"bytes_per_s", c.bytesPerSecond}};
  };
  llvm::json::Object root{
      {"format", 1},
      {"all_gather", kind(allGather)},
      {"reduce_scatter", kind(reduceScatter)},
      {"all_reduce", kind(allReduce)},
      {"compute", llvm::json::Object{{"flops_per_s", computeFlopsPerSecond}}},
      {"nvme", llvm::json::Object{{"read_bytes_per_s", nvmeReadBytesPerSecond},
                                  {"write_bytes_per_s", nvmeWriteBytesPerSecond}}},
      {"host", llvm::json::Object{{"copy_bytes_per_s", hostCopyBytesPerSecond}}},
      {"source", source}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(root));
  return text;
}

double mlir::zc::productFlops(Value lhs, Value out) {
  RankedTensorType t = tensorOf(out);
  double result = t.getNumElements(), n = t.getShape().back();
  double k = double(tensorOf(lhs).getNumElements()) * n / std::max(result, 1.0);
  return 2 * result * k;
}

double mlir::zc::estimatedFlops(Operation *op) {
  // Matmuls, fused or not: 2mnk, plus one per output element for an epilogue.
  auto gemm = [](Value lhs, Value out, double epilogue) {
    return productFlops(lhs, out) + epilogue * tensorOf(out).getNumElements();
  };
  if (auto mm = dyn_cast<MatmulOp>(op))
    return gemm(mm.getLhs(), mm.getResult(), 0);
  if (auto mm = dyn_cast<MatmulBiasOp>(op))
    return gemm(mm.getLhs(), mm.getResult(), 1);
  if (auto mm = dyn_cast<MatmulBiasGeluOp>(op))
    return gemm(mm.getLhs(), mm.getResult(), 2);
  if (auto mm = dyn_cast<MatmulDgeluBgradOp>(op))
    return gemm(mm.getLhs(), mm.getDpre(), 3);
  // A MoE layer's experts: each dispatched row times its expert's weight, 2 rows K N in all
  // whatever the routing; the gradient's two products twice that.
  // Under expert parallelism the rows are the received tensors' bound; a balanced routing brings
  // each rank as many rows as it dispatched (zc.ep_counts' `dispatched`).
  auto received = [](Value offsets, Value rows) {
    auto counts = offsets.getDefiningOp<EpCountsOp>();
    const double bound = tensorOf(rows).getDimSize(0);
    return counts ? double(counts.getDispatched()) / bound : 1.0;
  };
  if (auto mm = dyn_cast<GroupedMatmulOp>(op))
    return received(mm.getOffsets(), mm.getInput()) * gemm(mm.getInput(), mm.getResult(), 0);
  if (auto mm = dyn_cast<GroupedMatmulGradOp>(op)) // the products whose results are read (zcc-schedule splits them)
    return received(mm.getOffsets(), mm.getInput()) * groupedGradProducts(mm) * gemm(mm.getInput(), mm.getGrad(), 0);
  // The head's three products (logits, the input's and the weight's gradients) and its loss.
  if (auto head = dyn_cast<MatmulCrossEntropyOp>(op)) {
    double x = tensorOf(head.getInput()).getNumElements(), w = tensorOf(head.getWeight()).getNumElements();
    double rows = x / tensorOf(head.getInput()).getShape().back(), logits = rows * w / (x / rows);
    return 3 * 2 * rows * w + 4 * logits;
  }
  // The loss alone: the logits' product and the loss's passes over them.
  if (auto head = dyn_cast<MatmulCrossEntropyLossOp>(op)) {
    double x = tensorOf(head.getInput()).getNumElements(), w = tensorOf(head.getWeight()).getNumElements();
    double rows = x / tensorOf(head.getInput()).getShape().back(), logits = rows * w / (x / rows);
    return 2 * rows * w + 2 * logits;
  }
  if (isa<CausalAttentionOp, CausalAttentionGradOp>(op)) {
    RankedTensorType q = tensorOf(op->getOperand(isa<CausalAttentionOp>(op) ? 0 : 1));
    double b = q.getDimSize(0), t = q.getDimSize(1), c = q.getDimSize(2);
    // A sliding window keeps about T x W of the scores.
    double kept = AttentionVariant::of(op).keptFraction(q.getDimSize(1));
    return (isa<CausalAttentionOp>(op) ? 4 : 8) * b * t * t * c * kept;
  }
  // Memory-bound ops: one per element touched, the larger of what they read and
  // write (a loss reads its logits to write a scalar).
  auto elements = [](ValueRange values) {
    double n = 0;
    for (Value v : values)
      if (auto t = dyn_cast<RankedTensorType>(v.getType()))
        n += t.getNumElements();
    return n;
  };
  return std::max(elements(op->getOperands()), elements(op->getResults()));
}
