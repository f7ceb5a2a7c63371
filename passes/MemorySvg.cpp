//===- MemorySvg.cpp - the arena plan over the step, as a picture ----------===//
//
// zcc --memory-svg FILE: one column per op of the step function (then the update
// function), stacked by what the live bytes hold: parameters, gradients,
// optimizer state (persistent), gathered parameters, communication buffers and
// activations (scratch). The top of the tallest column is the arena. Beside the legend,
// every tier to one scale: the arena, and the host memory and NVMe store offload uses.
//
//===----------------------------------------------------------------------===//

#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCMEMORYSVG
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

constexpr BufferKind kKinds[] = {BufferKind::Param,         BufferKind::Grad,
                                 BufferKind::OptimizerState, BufferKind::GatheredParam,
                                 BufferKind::Communication,  BufferKind::Activation};
constexpr const char *kColors[] = {"#4e79a7", "#f28e2b", "#76b7b2", "#e15759", "#edc948", "#59a14f"};

struct ZccMemorySvgPass : zc::impl::ZccMemorySvgBase<ZccMemorySvgPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step = functionWithRole(module, "step"), update = functionWithRole(module, "update");
    if (!step || !update) {
      module.emitError("zcc-memory-svg: run zcc-autodiff and zcc-optimizer first");
      return signalPassFailure();
    }
    FailureOr<MemoryPlan> plan = planMemory(module, plannedFunctions(module));
    if (failed(plan))
      return signalPassFailure();

    // Columns: every op of each planned function, in order.
    std::vector<std::map<BufferKind, int64_t>> columns;
    std::vector<std::pair<size_t, std::string>> boundaries;
    for (const FunctionPlan &fn : plan->functions) {
      boundaries.push_back({columns.size(), ("@" + func::FuncOp(fn.function).getSymName()).str()});
      for (int64_t i = 0; i < static_cast<int64_t>(fn.ops.size()); ++i)
        columns.push_back(plan->liveAt(fn, i));
    }
    const double width = 1000, height = 420, left = 90, top = 50, bottom = 60, right = 200;
    const double plotW = width - left - right, plotH = height - top - bottom;
    const double maxBytes = std::max<double>(plan->totalBytes(), 1);
    const double colW = plotW / std::max<size_t>(columns.size(), 1);

    std::string error;
    auto file = openOutputFile(output, &error);
    if (!file) {
      module.emitError("zcc-memory-svg: ") << error;
      return signalPassFailure();
    }
    llvm::raw_ostream &os = file->os();
    os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                        "font-family=\"sans-serif\" font-size=\"12\">\n",
                        width, height);
    os << llvm::formatv("<text x=\"{0}\" y=\"25\" font-size=\"15\">Per-rank memory over one step: arena "
                        "{1:F2} MiB (persistent {2:F2} MiB)</text>\n",
                        left, plan->totalBytes() / 1048576.0, plan->persistentBytes / 1048576.0);
    for (size_t c = 0; c < columns.size(); ++c) {
      double y = top + plotH;
      for (size_t k = 0; k < std::size(kKinds); ++k) {
        double h = plotH * columns[c].at(kKinds[k]) / maxBytes;
        if (h <= 0)
          continue;
        y -= h;
        os << llvm::formatv("<rect x=\"{0:F2}\" y=\"{1:F2}\" width=\"{2:F2}\" height=\"{3:F2}\" fill=\"{4}\"/>\n",
                            left + c * colW, y, colW + 0.05, h, kColors[k]);
      }
    }
    // Axes, function boundaries, legend.
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n", left, top,
                        top + plotH);
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n", left,
                        top + plotH, left + plotW);
    for (int tick = 0; tick <= 4; ++tick) {
      double bytes = maxBytes * tick / 4, y = top + plotH - plotH * tick / 4;
      os << llvm::formatv("<text x=\"{0}\" y=\"{1:F1}\" text-anchor=\"end\">{2:F2} MiB</text>\n", left - 6, y + 4,
                          bytes / 1048576.0);
    }
    for (auto &[at, name] : boundaries) {
      double x = left + at * colW;
      os << llvm::formatv("<line x1=\"{0:F2}\" y1=\"{1}\" x2=\"{0:F2}\" y2=\"{2}\" stroke=\"#555\" "
                          "stroke-dasharray=\"4 3\"/>\n",
                          x, top, top + plotH + 15);
      os << llvm::formatv("<text x=\"{0:F2}\" y=\"{1}\">{2}</text>\n", x + 3, top + plotH + 28, name);
    }
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">op index (program order)</text>\n", left + plotW / 2 - 60,
                        height - 10);
    for (size_t k = 0; k < std::size(kKinds); ++k) {
      double y = top + 20 * k;
      os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"14\" height=\"14\" fill=\"{2}\"/>\n",
                          left + plotW + 15, y, kColors[k]);
      os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">{2}</text>\n", left + plotW + 35, y + 11,
                          bufferKindName(kKinds[k]));
    }
    // Every tier (zcc-offload): the columns are the device's arena; host memory and the NVMe
    // store hold what was offloaded, drawn to one scale with it.
    const double tierBytes[] = {static_cast<double>(plan->totalBytes()), static_cast<double>(plan->hostTierBytes),
                                static_cast<double>(plan->nvmeTierBytes)};
    const char *tierNames[] = {"device (arena)", "host", "nvme"};
    const double tierMax = std::max({tierBytes[0], tierBytes[1], tierBytes[2], 1.0});
    double y = top + 20 * std::size(kKinds) + 14;
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-weight=\"bold\">tiers</text>\n", left + plotW + 15, y);
    for (size_t t = 0; t < std::size(tierBytes); ++t) {
      y += 30;
      os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">{2}: {3:F2} MiB</text>\n", left + plotW + 15, y - 4,
                          tierNames[t], tierBytes[t] / 1048576.0);
      os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2:F2}\" height=\"8\" fill=\"#888\"/>\n",
                          left + plotW + 15, y, 150 * tierBytes[t] / tierMax);
    }
    os << "</svg>\n";
    file->keep();
  }
};

} // namespace
