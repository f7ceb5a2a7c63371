//===- ModelDescription.cpp - the zcc_model_json description ------------===//

#include "passes/ModelDescription.h"

#include "passes/Passes.h"

using namespace mlir;
using namespace mlir::zc;

namespace {

llvm::json::Array shapeJson(RankedTensorType t) {
  llvm::json::Array shape;
  for (int64_t d : t.getShape())
    shape.push_back(d);
  return shape;
}
std::string dtypeName(Type t) { return t.isBF16() ? "bf16" : t.isF32() ? "f32" : t.isInteger(32) ? "i32" : "?"; }

llvm::json::Object initJson(Attribute init) {
  if (isa<ZerosInitAttr>(init))
    return llvm::json::Object{{"kind", "zeros"}};
  if (isa<OnesInitAttr>(init))
    return llvm::json::Object{{"kind", "ones"}};
  if (auto n = dyn_cast<NormalInitAttr>(init))
    return llvm::json::Object{{"kind", "normal"}, {"std", n.getStd().convertToDouble()},
            {"mean", n.getMean().convertToDouble()}};
  auto u = cast<UniformInitAttr>(init);
  return llvm::json::Object{{"kind", "uniform"}, {"low", u.getLow().convertToDouble()},
          {"high", u.getHigh().convertToDouble()}};
}

/// What the executable's data loader feeds each argument: the `zc.input`
/// argument attribute when given, else the common signatures (tokens and
/// next-token targets; features and class labels; features and regression targets).
FailureOr<SmallVector<std::string>> inputRoles(func::FuncOp step) {
  SmallVector<StringAttr> given;
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    given.push_back(step.getArgAttrOfType<StringAttr>(i, "zc.input"));
  return inferInputRoles(step, step.getArgumentTypes(), given);
}

} // namespace

FailureOr<SmallVector<std::string>> mlir::zc::inferInputRoles(Operation *fn, ArrayRef<Type> types,
                                                              ArrayRef<StringAttr> given) {
  SmallVector<std::string> roles;
  for (StringAttr role : given)
    if (role)
      roles.push_back(role.str());
  if (roles.size() == types.size())
    return roles;
  roles.clear();
  if (types.size() == 2) {
    auto a = cast<RankedTensorType>(types[0]), b = cast<RankedTensorType>(types[1]);
    bool aInt = a.getElementType().isInteger(32), bInt = b.getElementType().isInteger(32);
    if (aInt && bInt && a.getShape() == b.getShape())
      return SmallVector<std::string>{"tokens", "targets"};
    if (!aInt && bInt && b.getRank() == 1)
      return SmallVector<std::string>{"features", "labels"};
    if (!aInt && !bInt)
      return SmallVector<std::string>{"features", "values"};
  }
  return fn->emitOpError("cannot tell what data feeds the arguments: mark each with "
                         "{zc.input = \"tokens\" | \"targets\" | \"features\" | \"labels\" | \"values\"}");
}

namespace {

/// How many distinct values an integer input takes: the rows of the embedding it
/// indexes, or the classes of the cross-entropy it labels (through reshapes).
int64_t idRange(Value v) {
  // A pipeline stage's argument keeps the range the whole model's use gave it (zcc-pipeline).
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      if (auto classes = fn.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), "zc.classes"))
        return classes.getInt();
  for (Operation *user : v.getUsers()) {
    // A vocabulary split over the tensor-parallel ranks holds 1/vocab_shards of the ids.
    if (auto e = dyn_cast<EmbeddingOp>(user); e && e.getIds() == v)
      return tensorOf(e.getTable()).getDimSize(0) * static_cast<int64_t>(e.getVocabShards().value_or(1));
    if (auto ce = dyn_cast<CrossEntropyOp>(user); ce && ce.getLabels() == v)
      return tensorOf(ce.getLogits()).getShape().back() * static_cast<int64_t>(ce.getVocabShards().value_or(1));
    if (auto head = dyn_cast<MatmulCrossEntropyOp>(user); head && head.getLabels() == v)
      return tensorOf(head.getWeight()).getNumElements() / tensorOf(head.getInput()).getShape().back();
    if (auto head = dyn_cast<MatmulCrossEntropyLossOp>(user); head && head.getLabels() == v)
      return tensorOf(head.getWeight()).getNumElements() / tensorOf(head.getInput()).getShape().back();
    if (auto view = dyn_cast<ReshapeOp>(user))
      if (int64_t range = idRange(view.getResult()))
        return range;
    if (auto part = dyn_cast<CpShardOp>(user)) // a context rank's tokens of the ids
      if (int64_t range = idRange(part.getResult()))
        return range;
  }
  return 0;
}

} // namespace

FailureOr<llvm::json::Object> mlir::zc::describeModel(ModuleOp module, func::FuncOp step, func::FuncOp update,
                                                      const MemoryPlan &plan, int64_t ranks,
                                                      int64_t microBatches, int64_t tensorParallel,
                                                      int64_t pipelineParallel) {
  FailureOr<SmallVector<std::string>> roles = inputRoles(step);
  if (failed(roles))
    return failure();
  llvm::json::Array params, states, inputs;
  DenseMap<StringAttr, StringAttr> masterOf; // parameter -> its fp32 master state
  update.walk([&](Operation *op) {
    if (auto o = dyn_cast<AdamWOp>(op); o && o.getMasterAttr())
      masterOf[o.getParamAttr().getAttr()] = o.getMasterAttr().getAttr();
    else if (auto o = dyn_cast<SgdOp>(op); o && o.getMasterAttr())
      masterOf[o.getParamAttr().getAttr()] = o.getMasterAttr().getAttr();
  });
  DenseSet<StringAttr> masters;
  for (auto &entry : masterOf)
    masters.insert(entry.second);
  // Aux-loss-free balancing: the parameters routings choose by, which train.bin moves by the loads.
  const DenseSet<StringAttr> expertBiases = expertBiasParams(module);
  for (ParamOp param : module.getOps<ParamOp>()) {
    RankedTensorType t = param.getTensorType();
    ParamSharding sharding = ParamSharding::of(param);
    int64_t elementBytes = t.getElementTypeBitWidth() / 8;
    params.push_back(llvm::json::Object{
        {"name", param.getSymName()}, {"shape", shapeJson(t)},
        {"dtype", dtypeName(t.getElementType())}, {"init", initJson(param.getInit())},
        {"offset", plan.paramOffset.lookup(param.getSymNameAttr())},
        // zrt_tier of the stored parameter (zcc-offload moves ZeRO-3 shards; offset: in it).
        {"tier", plan.tierOf(param.getSymNameAttr())},
        {"grad_offset", plan.gradOffset.lookup(param.getSymNameAttr())},
        {"bytes", tensorBytes(t)},
        // ZeRO layout (ParamSharding): how the stored buffers relate to the tensor.
        {"shards", sharding.ranks},
        {"shard_elements", sharding.shardElements()},
        {"sharded_param", sharding.param},
        {"param_storage_bytes", sharding.paramStorage() * elementBytes},
        {"grad_storage_bytes", sharding.gradStorage() * elementBytes}});
    // Mixed precision: the fp32 values live in the master state (whole, or this
    // rank's shard when partitioned); the parameter holds their bf16 rounding.
    if (StringAttr master = masterOf.lookup(param.getSymNameAttr())) {
      (*params.back().getAsObject())["master_offset"] = plan.stateOffset.lookup(master);
      (*params.back().getAsObject())["master_tier"] = plan.tierOf(master);
    }
    if (expertBiases.contains(param.getSymNameAttr()))
      (*params.back().getAsObject())["expert_bias"] = true;
    // Pipeline parallelism: the first and last stage both hold it; train.bin sums its gradient.
    if (param->hasAttr("zc.pipeline_tied"))
      (*params.back().getAsObject())["pipeline_tied"] = true;
    // Expert parallelism: "shape" is this expert rank's experts (zcc-expert-parallel).
    if (int64_t ep = expertRanksOf(param); ep > 1)
      (*params.back().getAsObject())["ep_split"] = llvm::json::Object{{"ranks", ep}};
    // Tensor parallelism: "shape" is this rank's part; the split says which (zcc-tensor-parallel).
    if (auto split = param->getAttrOfType<DictionaryAttr>("zc.tp_split")) {
      auto segments = split.getAs<DenseI64ArrayAttr>("segments");
      (*params.back().getAsObject())["tp_split"] = llvm::json::Object{
          {"axis", split.getAs<IntegerAttr>("axis").getInt()},
          {"ranks", split.getAs<IntegerAttr>("ranks").getInt()},
          {"segments", llvm::json::Array(segments.asArrayRef())}};
    }
  }
  for (StateOp state : module.getOps<StateOp>()) {
    llvm::json::Object described{
        {"name", state.getSymName()}, {"param", state.getParam()},
        {"offset", plan.stateOffset.lookup(state.getSymNameAttr())},
        // zrt_tier: 0 the arena, 1 host memory, 2 the NVMe store (offset: in that tier).
        {"tier", plan.tierOf(state.getSymNameAttr())},
        // A secondary shard (ZeRO++'s hpZ) is rebuilt by every forward pass: never saved or initialized.
        {"role", masters.contains(state.getSymNameAttr()) ? "master"
                 : state.getSecondary()                  ? "secondary"
                 : state.getMaskKeepAttr()               ? "mask"
                                                          : "moment"},
        {"bytes", tensorBytes(state.getTensorType())}};
    // A pruning mask: the fraction of the parameter's initial values it keeps, and for a row
    // mask the parameter's axis it has a value per index of.
    if (FloatAttr keep = state.getMaskKeepAttr())
      described["keep"] = keep.getValueAsDouble();
    if (std::optional<uint64_t> rows = state.getMaskRows())
      described["rows"] = static_cast<int64_t>(*rows);
    states.push_back(std::move(described));
  }
  for (auto [i, type] : llvm::enumerate(step.getArgumentTypes())) {
    auto t = cast<RankedTensorType>(type);
    llvm::json::Object input{{"role", (*roles)[i]},
                             {"shape", shapeJson(t)},
                             {"dtype", dtypeName(t.getElementType())},
                             {"bytes", tensorBytes(t)},
                             {"classes", idRange(step.getArgument(i))}};
    // A pipeline stage's input: how long it is held per micro-batch and its buffers (the plan's).
    if (module->getAttr("zc.pipeline")) {
      input["hold"] = zcc::pipeline::holdName(pipelineInputHold(module, static_cast<unsigned>(i)));
      input["slots"] = pipelineInputSlots(module, static_cast<unsigned>(i));
    }
    inputs.push_back(std::move(input));
  }
  llvm::json::Object optimizer;
  if (auto dict = module->getAttrOfType<DictionaryAttr>("zc.optimizer"))
    for (NamedAttribute entry : dict)
      if (auto number = dyn_cast<FloatAttr>(entry.getValue()))
        optimizer[entry.getName().getValue()] = number.getValueAsDouble();
  module.walk([&](Operation *op) {
    if (isa<AdamWOp>(op))
      optimizer["kind"] = "adamw";
    else if (isa<SgdOp>(op))
      optimizer["kind"] = "sgd";
    else if (auto norm = dyn_cast<GradNormOp>(op)) // zcc --grad-clip (0: the norm only)
      optimizer["grad_clip"] = norm.getMaxNorm().convertToDouble();
  });
  auto contextRanks = [](ModuleOp m) -> int64_t {
    if (auto cp = m->getAttrOfType<DictionaryAttr>("zc.context_parallel"))
      return cp.getAs<IntegerAttr>("ranks").getInt();
    return 1;
  };
  auto expertRanks = [](ModuleOp m) -> int64_t {
    if (auto ep = m->getAttrOfType<DictionaryAttr>("zc.expert_parallel"))
      return ep.getAs<IntegerAttr>("ranks").getInt();
    return 1;
  };
  llvm::json::Object model{
      {"format", 1},
      {"model", step.getSymName().drop_back(strlen("_step")).str()},
      {"world_size", static_cast<int64_t>(ranks)},
      {"micro_batches", static_cast<int64_t>(microBatches)},
      // Rank order: tensor fastest, then context, then data, then pipeline (Megatron's).
      {"mesh", llvm::json::Object{{"tp", tensorParallel}, {"pp", pipelineParallel}, {"cp", contextRanks(module)}}},
      {"arena_bytes", plan.totalBytes()},
      {"persistent_bytes", plan.persistentBytes},
      {"scratch_bytes", plan.scratchBytes},
      {"params", std::move(params)},
      {"states", std::move(states)},
      {"inputs", std::move(inputs)},
      {"optimizer", std::move(optimizer)}};
  // Expert parallelism (zcc-expert-parallel): recorded only then, so other meshes read as before.
  if (int64_t ep = expertRanks(module); ep > 1)
    (*model.getObject("mesh"))["ep"] = ep;
  // Offload (zcc-offload): each tier's bytes, and where the NVMe store goes by default.
  if (plan.hostTierBytes || plan.nvmeTierBytes) {
    llvm::json::Object tiers{{"host_bytes", plan.hostTierBytes}, {"nvme_bytes", plan.nvmeTierBytes}};
    if (auto offload = module->getAttrOfType<DictionaryAttr>(Offload::kModule))
      if (auto path = offload.getAs<StringAttr>("nvme_path"))
        tiers["nvme_path"] = path.getValue();
    model["tiers"] = std::move(tiers);
  }
  // A pipeline stage: which, its schedule (train.bin builds the same table) and what the
  // schedule is predicted to leave idle.
  if (auto stage = module->getAttrOfType<DictionaryAttr>("zc.pipeline"))
    model["pipeline"] = llvm::json::Object{
        {"stage", stage.getAs<IntegerAttr>("stage").getInt()},
        {"stages", stage.getAs<IntegerAttr>("stages").getInt()},
        {"schedule", stage.getAs<StringAttr>("schedule").getValue()},
        {"slots", stage.getAs<IntegerAttr>("slots").getInt()},
        {"chunks", pipelineChunks(module)},
        {"predicted_bubble", stage.getAs<FloatAttr>("predicted_bubble").getValueAsDouble()},
        {"forward", static_cast<bool>(functionWithRole(module, "forward"))},
        {"weight", static_cast<bool>(functionWithRole(module, "weight"))}};
  model["eval"] = static_cast<bool>(functionWithRole(module, "eval"));
  // A Mixture-of-Experts program: its routings per micro-batch (train.bin logs how they divided
  // the tokens). The most any one function runs: a stage's F and B are two functions.
  int64_t routings = 0;
  module.walk([&](func::FuncOp fn) {
    int64_t n = 0;
    fn.walk([&](MoeRouteOp) { ++n; });
    routings = std::max(routings, n);
  });
  if (routings)
    model["moe"] = llvm::json::Object{{"layers", routings}};
  // ZeRO++'s hierarchy (zcc-zero-pp): the node size the hops' shapes assume, hpZ's group.
  if (auto h = module->getAttrOfType<DictionaryAttr>("zc.hierarchy"))
    model["hierarchy"] = llvm::json::Object{{"ranks_per_node", h.getAs<IntegerAttr>("ranks_per_node").getInt()},
                                            {"hpz", h.getAs<IntegerAttr>("hpz").getInt()}};
  // Compression training (zcc-compress): the schedule's gates train.bin sets before each step
  // (zc.step_gate's numbering), and per compressed parameter what --export-weights applies
  // (DeepSpeed's redundancy_clean: the weight quantized, then masked).
  if (auto compressed = module->getAttrOfType<ArrayAttr>("zc.compression")) {
    llvm::json::Array gates, params;
    for (int64_t from : stepGateOffsets(module))
      gates.push_back(from);
    for (auto entry : compressed.getAsRange<DictionaryAttr>()) {
      llvm::json::Object p{{"param", entry.getAs<StringAttr>("param").getValue()}};
      if (auto bits = entry.getAs<IntegerAttr>("bits"))
        p["quantize"] = llvm::json::Object{{"bits", bits.getInt()},
                                           {"groups", entry.getAs<IntegerAttr>("groups").getInt()},
                                           {"asymmetric", static_cast<bool>(entry.get("asymmetric"))},
                                           {"columns", static_cast<bool>(entry.get("columns"))}};
      if (auto mask = entry.getAs<StringAttr>("mask"))
        p["mask"] = mask.getValue();
      if (auto rows = entry.getAs<StringAttr>("row_mask")) {
        p["row_mask"] = rows.getValue();
        p["row_axis"] = entry.getAs<IntegerAttr>("row_axis").getInt();
      }
      params.push_back(std::move(p));
    }
    model["compression"] = llvm::json::Object{{"step_gates", std::move(gates)}, {"params", std::move(params)}};
  }
  return model;
}
