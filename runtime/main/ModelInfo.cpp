#include "main/ModelInfo.h"

#include <map>

#include <nlohmann/json.hpp>

#include "core/Error.h"
#include "zrt/zrt.h"

namespace zrt::train {

ModelInfo parseModelInfo(const char *text) {
  ModelInfo info;
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j.at("format").get<int>() != 1)
      fatal("zcc_model_json", "unknown format %d", j.at("format").get<int>());
    info.model = j.at("model").get<std::string>();
    info.worldSize = j.at("world_size").get<int64_t>();
    info.microBatches = j.at("micro_batches").get<int64_t>();
    info.arenaBytes = j.at("arena_bytes").get<int64_t>();
    info.persistentBytes = j.at("persistent_bytes").get<int64_t>();
    if (j.contains("mesh")) {
      info.tp = j.at("mesh").value("tp", int64_t(1));
      info.pp = j.at("mesh").value("pp", int64_t(1));
      info.cp = j.at("mesh").value("cp", int64_t(1));
      info.ep = j.at("mesh").value("ep", int64_t(1));
    if (j.contains("hierarchy")) {
      info.ranksPerNode = j.at("hierarchy").at("ranks_per_node").get<int64_t>();
      info.hpz = j.at("hierarchy").at("hpz").get<int64_t>();
    }
    }
    if (j.contains("pipeline")) {
      info.stage = j.at("pipeline").value("stage", int64_t(0));
      info.predictedBubble = j.at("pipeline").value("predicted_bubble", 0.0);
      info.schedule = j.at("pipeline").value("schedule", std::string("1f1b"));
      info.slots = j.at("pipeline").value("slots", int64_t(1));
      info.chunks = j.at("pipeline").value("chunks", int64_t(1));
    }
    if (j.contains("moe"))
      info.moeLayers = j.at("moe").value("layers", int64_t(0));
    if (j.contains("tiers")) {
      info.hostTierBytes = j.at("tiers").value("host_bytes", int64_t(0));
      info.nvmeTierBytes = j.at("tiers").value("nvme_bytes", int64_t(0));
      info.nvmePath = j.at("tiers").value("nvme_path", std::string());
    }
    if (info.tp < 1 || info.pp < 1 || info.cp < 1 || info.worldSize % (info.tp * info.pp * info.cp) != 0)
      fatal("zcc_model_json", "mesh tp %lld x pp %lld x cp %lld does not divide world size %lld",
            static_cast<long long>(info.tp), static_cast<long long>(info.pp), static_cast<long long>(info.cp),
            static_cast<long long>(info.worldSize));
    const nlohmann::json &opt = j.at("optimizer");
    info.optimizer = opt.value("kind", std::string("adamw"));
    info.defaultLr = opt.value("lr", info.optimizer == "sgd" ? 0.01 : 1e-3);
    info.gradClip = opt.value("grad_clip", -1.0);
    for (const nlohmann::json &p : j.at("params")) {
      ParamInfo param;
      param.name = p.at("name").get<std::string>();
      param.shape = p.at("shape").get<std::vector<int64_t>>();
      param.offset = p.at("offset").get<int64_t>();
      param.tier = p.value("tier", int32_t(0));
      param.gradOffset = p.at("grad_offset").get<int64_t>();
      param.bytes = p.at("bytes").get<int64_t>();
      param.dtype = p.at("dtype").get<std::string>();
      if (param.dtype != "f32" && param.dtype != "bf16")
        fatal("zcc_model_json", "parameter %s: dtype %s (f32 or bf16 expected)", param.name.c_str(),
              param.dtype.c_str());
      param.masterOffset = p.value("master_offset", int64_t(-1));
      param.masterTier = p.value("master_tier", int32_t(0));
      if (param.dtype != "f32" && !param.hasMaster())
        fatal("zcc_model_json", "parameter %s is %s but has no f32 master", param.name.c_str(),
              param.dtype.c_str());
      param.wholeShape = param.shape;
      if (p.contains("tp_split")) {
        const nlohmann::json &split = p.at("tp_split");
        param.tpAxis = split.at("axis").get<int64_t>();
        param.tpRanks = split.at("ranks").get<int64_t>();
        param.tpSegments = split.at("segments").get<std::vector<int64_t>>();
        int64_t whole = 0;
        bool even = param.tpRanks >= 1;
        for (int64_t segment : param.tpSegments) {
          whole += segment;
          even &= segment > 0 && segment % param.tpRanks == 0;
        }
        if (param.tpAxis < 0 || param.tpAxis >= static_cast<int64_t>(param.shape.size()) || !even ||
            whole != param.shape[param.tpAxis] * param.tpRanks)
          fatal("zcc_model_json", "parameter %s: tp_split does not match its shape", param.name.c_str());
        param.wholeShape[param.tpAxis] = whole;
      }
      if (p.contains("ep_split")) {
        param.epRanks = p.at("ep_split").at("ranks").get<int64_t>();
        if (param.epRanks < 1 || param.shape.empty() || param.tensorParallel())
          fatal("zcc_model_json", "parameter %s: ep_split needs an unsplit [experts, ...] tensor", param.name.c_str());
        param.wholeShape[0] *= param.epRanks;
      }
      param.pipelineTied = p.value("pipeline_tied", false);
      param.expertBias = p.value("expert_bias", false);
      param.shards = p.value("shards", int64_t(1));
      param.shardElements = p.value("shard_elements", param.elements());
      param.shardedParam = p.value("sharded_param", false);
      param.paramStorageBytes = p.value("param_storage_bytes", param.bytes);
      param.gradStorageBytes = p.value("grad_storage_bytes", param.bytes);
      info.paramBytes += param.paramStorageBytes;
      info.paramTier = std::max(info.paramTier, param.tier);
      info.gradBytes += param.gradStorageBytes;
      const nlohmann::json &init = p.at("init");
      param.init.kind = init.at("kind").get<std::string>();
      param.init.std = init.value("std", 0.0);
      param.init.mean = init.value("mean", 0.0);
      param.init.low = init.value("low", 0.0);
      param.init.high = init.value("high", 0.0);
      info.params.push_back(param);
    }
    for (const nlohmann::json &state : j.at("states")) {
      StateInfo s;
      s.name = state.at("name").get<std::string>();
      s.param = state.at("param").get<std::string>();
      s.role = state.value("role", std::string("moment"));
      s.offset = state.at("offset").get<int64_t>();
      s.bytes = state.at("bytes").get<int64_t>();
      s.tier = state.value("tier", int32_t(0));
      if (state.contains("keep") && !state.at("keep").is_null())
        s.keep = state.at("keep").get<double>();
      if (state.contains("rows") && !state.at("rows").is_null())
        s.rows = state.at("rows").get<int64_t>();
      if (s.tier < 0 || s.tier > 2)
        fatal("zcc_model_json", "state %s: tier %d (0 arena, 1 host, 2 nvme)", s.name.c_str(), s.tier);
      if (s.role == "mask" && !(s.keep > 0 && s.keep <= 1))
        fatal("zcc_model_json", "mask %s keeps %g of its weights: (0, 1]", s.name.c_str(), s.keep);
      // hpZ's copy of parameters (the report's hpz_secondary_bytes) and pruning masks are not
      // the optimizer's.
      if (s.role != "secondary" && s.role != "mask")
        info.optimizerBytes += s.bytes;
      info.stateTier = std::max(info.stateTier, s.tier);
      info.states.push_back(s);
    }
    for (const nlohmann::json &in : j.at("inputs")) {
      InputInfo input;
      input.role = in.at("role").get<std::string>();
      input.shape = in.at("shape").get<std::vector<int64_t>>();
      input.dtype = in.at("dtype").get<std::string>();
      input.bytes = in.at("bytes").get<int64_t>();
      input.classes = in.value("classes", int64_t(0));
      input.hold = in.value("hold", std::string("forward-weight"));
      input.slots = in.value("slots", int64_t(0));
      info.inputs.push_back(input);
    }
    for (InputInfo &input : info.inputs)
      if (input.slots <= 0)
        input.slots = info.slots;
    // Programs compiled before the table existed have none: their shapes take the rule's path.
    for (const nlohmann::json &row : j.value("matmuls", nlohmann::json::array())) {
      const std::string op = row.at(0).get<std::string>(), dtype = row.at(1).get<std::string>();
      static const std::map<std::string, int64_t> kinds = {{"matmul", ZRT_MATMUL_PLAIN},
                                                           {"matmul_cross_entropy", ZRT_MATMUL_CROSS_ENTROPY},
                                                           {"grouped_matmul_m", ZRT_MATMUL_GROUPED_M},
                                                           {"grouped_matmul_k", ZRT_MATMUL_GROUPED_K}};
      if (!kinds.count(op) || (dtype != "f32" && dtype != "bf16"))
        fatal("zcc_model_json", "matmuls: unknown row [%s, %s]", op.c_str(), dtype.c_str());
      std::vector<int64_t> values(ZRT_MATMUL_ROW, 0);
      values[0] = kinds.at(op);
      values[1] = dtype == "bf16" ? ZRT_DTYPE_BF16 : ZRT_DTYPE_F32;
      for (size_t i = 2; i < row.size() && i < values.size(); ++i)
        values[i] = row.at(i).get<int64_t>();
      info.matmuls.insert(info.matmuls.end(), values.begin(), values.end());
    }
    if (j.contains("compression")) {
      const nlohmann::json &c = j.at("compression");
      info.stepGates = c.at("step_gates").get<std::vector<int64_t>>();
      for (const nlohmann::json &p : c.at("params")) {
        CompressedParam cp;
        cp.param = p.at("param").get<std::string>();
        cp.mask = p.value("mask", std::string());
        cp.rowMask = p.value("row_mask", std::string());
        cp.rowAxis = p.value("row_axis", int64_t(0));
        if (p.contains("quantize")) {
          const nlohmann::json &q = p.at("quantize");
          cp.bits = q.at("bits").get<int32_t>();
          cp.groups = q.at("groups").get<int64_t>();
          cp.asymmetric = q.at("asymmetric").get<bool>();
          cp.columns = q.value("columns", false);
        }
        info.compressed.push_back(cp);
      }
    }
  } catch (const nlohmann::json::exception &e) {
    fatal("zcc_model_json", "malformed model description: %s", e.what());
  }
  return info;
}

void placeInArena(ModelInfo &model, int64_t base) {
  const int64_t by = base - model.arenaBase;
  model.arenaBase = base;
  for (ParamInfo &p : model.params) {
    if (p.tier == 0)
      p.offset += by;
    p.gradOffset += by; // gradients live in the arena
    if (p.hasMaster() && p.masterTier == 0)
      p.masterOffset += by;
  }
  for (StateInfo &state : model.states)
    if (state.tier == 0)
      state.offset += by;
}

zcc::pipeline::Placement ModelInfo::placement() const {
  return zcc::pipeline::placementOf(zcc::pipeline::parseSchedule(schedule).value_or(zcc::pipeline::Schedule::OneFOneB));
}
int64_t ModelInfo::pipelineRankOf(int64_t s) const { return zcc::pipeline::rankOfStage(placement(), s, pp); }
int64_t ModelInfo::chunkOf(int64_t s) const { return zcc::pipeline::chunkOfStage(placement(), s, pp); }
int64_t ModelInfo::stageOf(int64_t r, int64_t c) const { return zcc::pipeline::stageOf(placement(), r, c, pp); }

} // namespace zrt::train
