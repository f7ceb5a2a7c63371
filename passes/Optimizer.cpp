//===- Optimizer.cpp - AdamW / SGD update function and state --------------===//

#include "passes/Passes.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCOPTIMIZER
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

/// The optimizer's settings: the defaults, then the model's `zc.optimizer`
/// dictionary, then the pass options that were set.
struct Hyperparameters {
  std::string kind = "adamw";
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.01, momentum = 0.9;
};

LogicalResult readModelDefaults(ModuleOp module, Hyperparameters &h) {
  auto dict = module->getAttrOfType<DictionaryAttr>("zc.optimizer");
  if (!dict) {
    if (module->hasAttr("zc.optimizer"))
      return module.emitError("zc.optimizer must be a dictionary, e.g. {kind = \"adamw\", lr = 3.0e-4}");
    return success();
  }
  for (NamedAttribute entry : dict) {
    StringRef key = entry.getName();
    if (key == "kind") {
      auto s = dyn_cast<StringAttr>(entry.getValue());
      if (!s || (s.getValue() != "adamw" && s.getValue() != "sgd"))
        return module.emitError("zc.optimizer kind must be \"adamw\" or \"sgd\"");
      h.kind = s.getValue().str();
      continue;
    }
    auto number = dyn_cast<FloatAttr>(entry.getValue());
    if (!number)
      return module.emitError("zc.optimizer '") << key << "' must be a float, e.g. 0.9";
    double v = number.getValueAsDouble();
    if (key == "beta1") h.beta1 = v;
    else if (key == "beta2") h.beta2 = v;
    else if (key == "eps") h.eps = v;
    else if (key == "weight_decay") h.weightDecay = v;
    else if (key == "momentum") h.momentum = v;
    else if (key != "lr" && key != "warmup") // read by the executable
      return module.emitError("zc.optimizer has unknown key '")
             << key << "' (kind, lr, warmup, beta1, beta2, eps, weight_decay, momentum)";
  }
  return success();
}

struct ZccOptimizerPass : zc::impl::ZccOptimizerBase<ZccOptimizerPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Hyperparameters h;
    if (failed(readModelDefaults(module, h)))
      return signalPassFailure();
    if (!kind.empty()) h.kind = kind;
    if (beta1 >= 0) h.beta1 = beta1;
    if (beta2 >= 0) h.beta2 = beta2;
    if (eps >= 0) h.eps = eps;
    if (weightDecay >= 0) h.weightDecay = weightDecay;
    if (momentum >= 0) h.momentum = momentum;
    if (microBatches < 1) {
      module.emitError("zcc-optimizer: micro-batches must be positive, got ") << microBatches;
      return signalPassFailure();
    }
    if (h.kind != "adamw" && h.kind != "sgd") {
      module.emitError("unknown optimizer '") << h.kind << "' (adamw or sgd)";
      return signalPassFailure();
    }
    if (h.beta1 >= 1 || h.beta2 >= 1 || h.eps <= 0) {
      module.emitError("AdamW needs 0 <= beta < 1 and eps > 0");
      return signalPassFailure();
    }

    func::FuncOp step = functionWithRole(module, "step");
    if (!step) {
      module.emitError("no training step function: run zcc-autodiff first");
      return signalPassFailure();
    }
    StringRef model = step.getSymName().drop_back(strlen("_step"));

    ImplicitLocOpBuilder b(module.getLoc(), module.getBody(), module.getBody()->end());
    Type f64 = b.getF64Type(), i64 = b.getI64Type();
    auto update = func::FuncOp::create(b, (model + "_update").str(),
                                       b.getFunctionType({f64, i64}, {}));
    update->setAttr("zc.role", b.getStringAttr("update"));
    Block *entry = update.addEntryBlock();
    Value lr = entry->getArgument(0), stepIndex = entry->getArgument(1);

    // Parameters the loss does not depend on get no gradient from autodiff; like
    // torch.optim with a None gradient, the optimizer leaves them (and their decay) alone.
    DenseMap<StringAttr, SmallVector<GradAccumulateOp, 1>> accumulates;
    step.walk([&](GradAccumulateOp acc) { accumulates[acc.getParamAttr().getAttr()].push_back(acc); });
    // One micro-batch a step: the gradient buffer holds the step's one gradient, so the
    // accumulate overwrites it (the gradient's producer can write there directly) and
    // there is nothing to clear after the update.
    DenseSet<StringAttr> overwritten;
    if (microBatches == 1)
      for (auto &[name, accs] : accumulates)
        if (accs.size() == 1) {
          accs.front().setOverwrite(true);
          overwritten.insert(name);
        }

    // A routing's balancing bias gets no gradient by design: train.bin moves it (zc.moe_route).
    const DenseSet<StringAttr> expertBiases = expertBiasParams(module);
    SmallVector<ParamOp> params(module.getOps<ParamOp>());
    for (ParamOp param : params) {
      if (!accumulates.contains(param.getSymNameAttr())) {
        if (!expertBiases.contains(param.getSymNameAttr()))
          param.emitWarning("'") << param.getSymName()
                                 << "' does not reach the loss: it gets no gradient and is never updated";
        continue;
      }
      RankedTensorType type = param.getTensorType();
      auto stateType = RankedTensorType::get(type.getShape(), b.getF32Type());
      auto state = [&](StringRef role) {
        OpBuilder after(param->getBlock(), std::next(param->getIterator()));
        auto s = StateOp::create(after, param.getLoc(), after.getStringAttr(param.getSymName() + "." + role),
                                 TypeAttr::get(stateType), FlatSymbolRefAttr::get(param.getSymNameAttr()),
                                 /*secondary=*/UnitAttr(), /*mask_keep=*/FloatAttr(), /*mask_rows=*/IntegerAttr());
        return FlatSymbolRefAttr::get(s.getSymNameAttr());
      };
      bool decay = type.getRank() >= 2 && !param->hasAttr("zc.no_decay");
      double wd = decay ? h.weightDecay : 0.0;
      auto name = FlatSymbolRefAttr::get(param.getSymNameAttr());

      b.setInsertionPointToEnd(entry);
      b.setLoc(param.getLoc());
      Value grad = GradRefOp::create(b, type, name);
      // Mixed precision: a bf16 parameter is the rounded copy of an fp32 master
      // that the update reads and writes (bf16 steps would lose small updates).
      FlatSymbolRefAttr master;
      if (h.kind == "adamw") {
        FlatSymbolRefAttr expAvgSq = state("exp_avg_sq"), expAvg = state("exp_avg");
        if (!type.getElementType().isF32())
          master = state("master");
        AdamWOp::create(b, name, grad, expAvg, expAvgSq, master, lr, stepIndex, /*grad_scale=*/Value(),
                        b.getF64FloatAttr(h.beta1), b.getF64FloatAttr(h.beta2),
                        b.getF64FloatAttr(h.eps), b.getF64FloatAttr(wd), /*chunk=*/nullptr,
                        /*swap_slot=*/nullptr);
      } else {
        FlatSymbolRefAttr momentum = state("momentum");
        if (!type.getElementType().isF32())
          master = state("master");
        SgdOp::create(b, name, grad, momentum, master, lr, /*grad_scale=*/Value(), b.getF64FloatAttr(h.momentum),
                      b.getF64FloatAttr(wd), /*chunk=*/nullptr, /*swap_slot=*/nullptr);
      }
      if (!overwritten.contains(param.getSymNameAttr()))
        GradZeroOp::create(b, name);
    }
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(b);
  }
};

} // namespace
