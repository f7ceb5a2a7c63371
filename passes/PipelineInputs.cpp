//===- PipelineInputs.cpp - how long a pipeline stage holds each input ---===//
//
// A pipeline stage keeps each micro-batch's inputs (the activation and gradient it receives, its
// data, the stashes its forward and B keep) in buffers of their own outside the arena: how long
// each input is held decides how many (zcc::pipeline::heldSlots). The memory plan, the report,
// the model description train.bin allocates by and the simulator all read them here.
//
//===----------------------------------------------------------------------===//

#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

using namespace mlir;
using namespace mlir::zc;

zcc::pipeline::Hold mlir::zc::pipelineInputHold(ModuleOp module, unsigned i) {
  using zcc::pipeline::Hold;
  func::FuncOp forward = functionWithRole(module, "forward"), step = functionWithRole(module, "step"),
               weight = functionWithRole(module, "weight");
  auto role = step ? step.getArgAttrOfType<StringAttr>(i, "zc.input") : StringAttr();
  auto reads = [&](func::FuncOp fn) { return fn && !fn.getArgument(i).use_empty(); };
  // Written at B: the output's gradient (received for B), and a stash the forward never touches
  // (zcc-pipeline-split-backward's, written by B for W; on the last stage, whose forward is its
  // step's, every stash). Everything else arrives or is written at F (the data, the activation
  // received, what the forward stashes).
  const bool fromBackward =
      role && (role.getValue() == "activation_grad" || (role.getValue() == "stash" && !reads(forward)));
  if (reads(weight))
    return fromBackward ? Hold::BackwardToWeight : Hold::ForwardToWeight;
  if (fromBackward)
    return Hold::Backward;
  // The last stage's F only receives and fills its inputs: its step reads them.
  return forward && !reads(step) ? Hold::Forward : Hold::ForwardToBackward;
}

int64_t mlir::zc::pipelineInputSlots(ModuleOp module, unsigned i) {
  auto stage = module->getAttrOfType<DictionaryAttr>("zc.pipeline");
  if (!stage)
    return 1;
  auto held = stage.getAs<DenseI64ArrayAttr>("held_slots");
  const size_t hold = static_cast<size_t>(pipelineInputHold(module, i));
  if (!held || hold >= held.size()) // a module planned before held_slots: every input in each slot
    return stage.getAs<IntegerAttr>("slots").getInt();
  return held[hold];
}

int64_t mlir::zc::pipelineSlotBytes(ModuleOp module, StringRef role) {
  auto stage = module->getAttrOfType<DictionaryAttr>("zc.pipeline");
  func::FuncOp step = functionWithRole(module, "step");
  if (!stage || !step)
    return 0;
  int64_t bytes = 0;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto given = step.getArgAttrOfType<StringAttr>(i, "zc.input");
    if (role.empty() || (given && given.getValue() == role))
      bytes += pipelineInputSlots(module, i) * tensorBytes(cast<RankedTensorType>(step.getArgumentTypes()[i]));
  }
  return bytes;
}

llvm::json::Object mlir::zc::pipelineHeldSlotsJson(ModuleOp module) {
  llvm::json::Object held;
  auto stage = module->getAttrOfType<DictionaryAttr>("zc.pipeline");
  if (auto slots = stage ? stage.getAs<DenseI64ArrayAttr>("held_slots") : DenseI64ArrayAttr())
    for (auto [i, n] : llvm::enumerate(slots.asArrayRef()))
      held[zcc::pipeline::holdName(static_cast<zcc::pipeline::Hold>(i))] = n;
  return held;
}

llvm::json::Array mlir::zc::pipelineInputsJson(ModuleOp module) {
  llvm::json::Array inputs;
  func::FuncOp step = functionWithRole(module, "step");
  for (unsigned i = 0; step && i < step.getNumArguments(); ++i) {
    auto role = step.getArgAttrOfType<StringAttr>(i, "zc.input");
    inputs.push_back(llvm::json::Object{
        {"role", role ? role.getValue() : "data"},
        {"hold", zcc::pipeline::holdName(pipelineInputHold(module, i))},
        {"slots", pipelineInputSlots(module, i)},
        {"bytes", tensorBytes(cast<RankedTensorType>(step.getArgumentTypes()[i]))}});
  }
  return inputs;
}

std::string mlir::zc::pipelineBuffersText(ModuleOp module) {
  auto stage = module->getAttrOfType<DictionaryAttr>("zc.pipeline");
  auto slots = stage ? stage.getAs<DenseI64ArrayAttr>("held_slots") : DenseI64ArrayAttr();
  func::FuncOp step = functionWithRole(module, "step");
  if (!slots || !step)
    return "";
  const char *spans[] = {"from F to B", "from F to W", "from B to W", "during F", "during B"};
  const size_t kinds = std::min<size_t>(std::size(spans), slots.size());
  std::vector<bool> used(std::size(spans), false);
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    used[static_cast<size_t>(pipelineInputHold(module, i))] = true;
  std::string text;
  for (size_t h = 0; h < kinds; ++h)
    if (used[h])
      text += (text.empty() ? " (buffers: " : ", ") + std::to_string(slots[h]) + " " + spans[h];
  return text.empty() ? text : text + ")";
}
