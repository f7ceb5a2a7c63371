//===- Compression.cpp - DeepSpeed's compression training in the graph -----===//
//
// DeepSpeed's `init_compression` swaps a model's nn.Linear / nn.Embedding modules for
// compression-aware ones whose forward quantizes the weight (straight-through gradient) and
// multiplies it by a pruning mask, each technique switched on by its `schedule_offset`. This
// pass does the same to a zc graph from the same `compression_training` JSON: every forward
// read of a matched weight becomes
//
//   %w  = zc.param_ref @P
//   %on = zc.step_gate from OFFSET            (one per distinct offset)
//   %wq = zc.fake_quantize %w, %on bits B groups G [asymmetric]
//   %wm = zc.apply_mask %wq, %on2 mask @P.sparse_mask
//
// so autodiff derives DeepSpeed's gradients (straight through the quantizer, masked), and the
// ZeRO passes gather @P as before. Module names are DeepSpeed's: a parameter `X.weight` is
// module `X` (zcc-import keeps PyTorch's names), any other parameter its own name; like
// DeepSpeed, a group's `modules` are regular expressions searched in those names (POSIX
// extended here, Python's re there: the same for names, dots, alternation, anchors), and only
// linear weights (a matmul's right operand) and embedding tables are compressible.
//
// Supported: weight_quantization with quantize_weight_in_forward (symmetric or asymmetric,
// 3 to 8 bits, quantize_groups; embeddings token-wise as DeepSpeed), activation_quantization
// with dynamic ranges (each layer input's rows, 4 or 8 bits), sparse_pruning and row_pruning by
// l1 (their masks computed by train.bin from the initial weights, as init_compression does; a
// row mask also zeroes the layer's bias). The other techniques (topk's learned scores, head and
// channel pruning, static activation ranges, layer reduction) are refused with the JSON path
// that enables them.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCCOMPRESS
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

/// What happens to one parameter's weight in the forward pass.
struct Compression {
  // Weight quantization (bits 0: none).
  int32_t bits = 0;
  int64_t groups = 1, quantizeFrom = 0;
  bool asymmetric = false;
  // Sparse pruning (keep 0: none).
  double keep = 0;
  int64_t pruneFrom = 0;
  // Row pruning (keep 0: none): the output features with the smallest L1 norms, bias included.
  double rowKeep = 0;
  int64_t rowFrom = 0;
  // Activation quantization of the layer's input, token by token (bits 0: none).
  int32_t activationBits = 0;
  bool activationAsymmetric = false;
  int64_t activationFrom = 0;
};

/// A compressible weight: its DeepSpeed module name and how the forward pass reads it.
struct Weight {
  ParamOp param;
  std::string module;
  SmallVector<std::string> tiedModules; // the modules sharing it (zc.tied: a tied LM head)
  bool embedding = false;   // an nn.Embedding's table (quantized token-wise)
  bool outputsFirst = true; // a linear weight laid out [out, in] (transpose_rhs), as nn.Linear's

  /// DeepSpeed's quantization groups are contiguous in nn.Linear's [out, in] layout: for a
  /// weight kept [in, out] they are blocks of columns, when there is more than one.
  bool groupsAreColumns(int64_t groups) const { return !embedding && !outputsFirst && groups > 1; }
};

/// The forward pass's reads of `param`.
SmallVector<ParamRefOp> readsOf(ForwardOp forward, ParamOp param) {
  SmallVector<ParamRefOp> refs;
  forward.walk([&](ParamRefOp ref) {
    if (ref.getNameAttr().getAttr() == param.getSymNameAttr())
      refs.push_back(ref);
  });
  return refs;
}

/// A pruning mask of `param` (zc.state ... mask keep R [rows A]), declared after it.
FlatSymbolRefAttr declareMask(ParamOp param, StringRef suffix, ArrayRef<int64_t> shape, double keep,
                              std::optional<int64_t> rowsAxis) {
  OpBuilder after(param->getBlock(), std::next(param->getIterator()));
  auto state = StateOp::create(after, param.getLoc(), after.getStringAttr(param.getSymName() + suffix),
                               TypeAttr::get(RankedTensorType::get(shape, after.getF32Type())),
                               FlatSymbolRefAttr::get(param.getSymNameAttr()), UnitAttr(), after.getF64FloatAttr(keep),
                               rowsAxis ? after.getI64IntegerAttr(*rowsAxis) : IntegerAttr());
  return FlatSymbolRefAttr::get(state.getSymNameAttr());
}

/// Reads the JSON and reports errors as `FILE: path.to.key: message`.
class ConfigReader {
public:
  ConfigReader(StringRef file, ModuleOp module) : file(file), module(module) {}

  bool failed() const { return error; }

  /// An error located at the file (its JSON path in the message: llvm::json keeps no lines).
  InFlightDiagnostic fail(const Twine &path) {
    error = true;
    return mlir::emitError(FileLineColLoc::get(module.getContext(), file, 0, 0)) << path.str() << ": ";
  }

  const llvm::json::Object *object(const llvm::json::Object &parent, StringRef key, const Twine &path) {
    const llvm::json::Value *v = parent.get(key);
    if (!v)
      return nullptr;
    if (const llvm::json::Object *o = v->getAsObject())
      return o;
    fail(path) << "must be an object";
    return nullptr;
  }
  bool boolean(const llvm::json::Object &o, StringRef key, bool fallback, const Twine &path) {
    const llvm::json::Value *v = o.get(key);
    if (!v)
      return fallback;
    if (std::optional<bool> b = v->getAsBoolean())
      return *b;
    fail(path) << "must be true or false";
    return fallback;
  }
  int64_t integer(const llvm::json::Object &o, StringRef key, int64_t fallback, const Twine &path) {
    const llvm::json::Value *v = o.get(key);
    if (!v)
      return fallback;
    if (std::optional<int64_t> i = v->getAsInteger())
      return *i;
    fail(path) << "must be an integer";
    return fallback;
  }
  double number(const llvm::json::Object &o, StringRef key, const Twine &path) {
    const llvm::json::Value *v = o.get(key);
    if (!v) {
      fail(path) << "is required";
      return 0;
    }
    if (std::optional<double> d = v->getAsNumber())
      return *d;
    fail(path) << "must be a number";
    return 0;
  }
  std::string string(const llvm::json::Object &o, StringRef key, StringRef fallback, const Twine &path) {
    const llvm::json::Value *v = o.get(key);
    if (!v)
      return fallback.str();
    if (std::optional<StringRef> s = v->getAsString())
      return s->str();
    fail(path) << "must be a string";
    return fallback.str();
  }

private:
  StringRef file;
  ModuleOp module;
  bool error = false;
};

struct ZccCompressPass : zc::impl::ZccCompressBase<ZccCompressPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (config.empty())
      return;
    auto buffer = llvm::MemoryBuffer::getFile(config);
    if (!buffer) {
      module.emitError() << "cannot read --compression " << config << ": " << buffer.getError().message();
      return signalPassFailure();
    }
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse((*buffer)->getBuffer());
    if (!parsed) {
      module.emitError() << config << ": not JSON: " << llvm::toString(parsed.takeError());
      return signalPassFailure();
    }
    const llvm::json::Object *top = parsed->getAsObject();
    ConfigReader read(config, module);
    if (!top) {
      read.fail("(top level)") << "must be an object (a DeepSpeed config or its compression_training section)";
      return signalPassFailure();
    }
    // A whole DeepSpeed config, or the section alone.
    const llvm::json::Object *section = top;
    std::string root = "compression_training";
    if (const llvm::json::Value *s = top->get("compression_training")) {
      section = s->getAsObject();
      if (!section) {
        read.fail(root) << "must be an object";
        return signalPassFailure();
      }
    } else if (top->get("train_batch_size") || top->get("train_micro_batch_size_per_gpu") ||
               top->get("zero_optimization") || top->get("optimizer")) {
      read.fail("(top level)") << "a DeepSpeed config without a compression_training section";
      return signalPassFailure();
    }

    ForwardOp userForward;
    for (ForwardOp fn : module.getOps<ForwardOp>())
      userForward = fn;
    if (!userForward) {
      module.emitError("--compression: the module has no zc.forward");
      return signalPassFailure();
    }
    SmallVector<Weight> weights = compressibleWeightsOf(userForward);

    llvm::StringMap<Compression> plan;
    for (const auto &[key, value] : *section) {
      const std::string technique = key.str(); // a lambda may not capture a structured binding
      std::string path = root + "." + technique;
      const llvm::json::Object *method = value.getAsObject();
      if (!method) {
        read.fail(path) << "must be an object";
        continue;
      }
      if (!llvm::is_contained({"weight_quantization", "activation_quantization", "sparse_pruning", "row_pruning",
                               "head_pruning", "channel_pruning", "layer_reduction"},
                              key.str())) {
        read.fail(path) << "unknown technique (DeepSpeed's: weight_quantization, activation_quantization, "
                           "sparse_pruning, row_pruning, head_pruning, channel_pruning, layer_reduction)";
        continue;
      }
      const llvm::json::Object *shared = read.object(*method, "shared_parameters", path + ".shared_parameters");
      bool enabled = shared && read.boolean(*shared, "enabled", false, path + ".shared_parameters.enabled");
      if (key == "layer_reduction") {
        if (read.boolean(*method, "enabled", false, path + ".enabled"))
          read.fail(path + ".enabled") << "layer reduction (a student initialized from a teacher's layers) is not "
                                          "supported: initialize the smaller model's weights with --init instead";
        continue;
      }
      if (!enabled)
        continue;
      std::string sharedPath = path + ".shared_parameters";
      if (key == "weight_quantization") {
        if (!read.boolean(*shared, "quantize_weight_in_forward", false, sharedPath + ".quantize_weight_in_forward"))
          read.fail(sharedPath + ".quantize_weight_in_forward")
              << "must be true: zcc quantizes in the forward pass (DeepSpeed's other mode, MoQ, quantizes in "
                 "the fp16 optimizer step)";
        std::string rounding = read.string(*shared, "rounding", "nearest", sharedPath + ".rounding");
        if (rounding != "nearest")
          read.fail(sharedPath + ".rounding") << "'" << rounding << "': only nearest rounding is supported";
        if (const llvm::json::Object *mixed = read.object(*shared, "fp16_mixed_quantize", sharedPath + ".fp16_mixed_quantize"))
          if (read.boolean(*mixed, "enabled", false, sharedPath + ".fp16_mixed_quantize.enabled"))
            read.fail(sharedPath + ".fp16_mixed_quantize.enabled") << "fp16 mixed quantization (MoQ) is not supported";
        std::string type = read.string(*shared, "quantization_type", "symmetric", sharedPath + ".quantization_type");
        if (type != "symmetric" && type != "asymmetric")
          read.fail(sharedPath + ".quantization_type") << "'" << type << "': symmetric or asymmetric";
        const int64_t groups = read.integer(*shared, "quantize_groups", 1, sharedPath + ".quantize_groups");
        const int64_t from = scheduleOffset(read, *shared, sharedPath, /*fallback=*/0);
        if (groups < 1)
          read.fail(sharedPath + ".quantize_groups") << "must be at least 1";
        forEachGroup(read, *method, path, key, weights, [&](Weight w, const llvm::json::Object &params,
                                                          StringRef groupPath) {
          const int64_t bits = read.integer(params, "target_bits", 0, groupPath + ".params.target_bits");
          if (!params.get("target_bits") || !params.get("start_bits"))
            read.fail(groupPath + ".params") << "start_bits and target_bits are required (as DeepSpeed requires)";
          else if (bits < 3 || bits > 8)
            read.fail(groupPath + ".params.target_bits")
                << bits << ": 3 to 8 bits (DeepSpeed's ternary and binary quantizers are not supported)";
          Compression &c = plan[w.param.getSymName()];
          c.bits = static_cast<int32_t>(bits);
          // DeepSpeed quantizes an embedding token by token, whatever quantize_groups says.
          c.groups = w.embedding ? w.param.getTensorType().getDimSize(0) : groups;
          c.asymmetric = type == "asymmetric";
          c.quantizeFrom = from;
          if (c.groups > 0 && w.param.getTensorType().getNumElements() % c.groups)
            read.fail(sharedPath + ".quantize_groups")
                << groups << " groups do not divide " << w.module << "'s " << w.param.getTensorType().getNumElements()
                << " weights";
        });
      } else if (key == "sparse_pruning" || key == "row_pruning") {
        const int64_t from = l1Schedule(read, *shared, sharedPath);
        forEachGroup(read, *method, path, key, weights, [&](Weight w, const llvm::json::Object &params,
                                                          StringRef groupPath) {
          if (!linearOnly(read, w, groupPath, technique))
            return;
          const double keep = read.number(params, "dense_ratio", groupPath + ".params.dense_ratio");
          if (!(keep > 0 && keep <= 1))
            read.fail(groupPath + ".params.dense_ratio") << "the fraction kept must be in (0, 1]";
          Compression &c = plan[w.param.getSymName()];
          (technique == "sparse_pruning" ? c.keep : c.rowKeep) = keep;
          (technique == "sparse_pruning" ? c.pruneFrom : c.rowFrom) = from;
        });
      } else if (key == "activation_quantization") {
        std::string type = read.string(*shared, "quantization_type", "symmetric", sharedPath + ".quantization_type");
        if (type != "symmetric" && type != "asymmetric")
          read.fail(sharedPath + ".quantization_type") << "'" << type << "': symmetric or asymmetric";
        std::string range = read.string(*shared, "range_calibration", "dynamic", sharedPath + ".range_calibration");
        if (range != "dynamic")
          read.fail(sharedPath + ".range_calibration")
              << "'" << range << "': only dynamic ranges are supported (static keeps a running range per layer)";
        const int64_t from = scheduleOffset(read, *shared, sharedPath);
        forEachGroup(read, *method, path, key, weights, [&](Weight w, const llvm::json::Object &params,
                                                          StringRef groupPath) {
          if (!linearOnly(read, w, groupPath, technique))
            return;
          const int64_t bits = read.integer(params, "bits", 0, groupPath + ".params.bits");
          if (bits != 4 && bits != 8)
            read.fail(groupPath + ".params.bits") << "activations are quantized to 4 or 8 bits (as DeepSpeed's)";
          Compression &c = plan[w.param.getSymName()];
          c.activationBits = static_cast<int32_t>(bits);
          c.activationAsymmetric = type == "asymmetric";
          c.activationFrom = from;
        });
      } else if (key == "head_pruning" || key == "channel_pruning") {
        read.fail(sharedPath + ".enabled") << key.str() << " is not supported yet (weight_quantization, dynamic "
                                                     "activation_quantization, l1 sparse_pruning and row_pruning are)";
      }
    }
    if (read.failed())
      return signalPassFailure();
    rewrite(module, userForward, weights, plan);
  }

  /// A technique's `schedule_offset` (DeepSpeed's default: 1000, weight quantization's 0).
  static int64_t scheduleOffset(ConfigReader &read, const llvm::json::Object &shared, const std::string &sharedPath,
                                int64_t fallback = 1000) {
    const int64_t from = read.integer(shared, "schedule_offset", fallback, sharedPath + ".schedule_offset");
    if (from < 0)
      read.fail(sharedPath + ".schedule_offset") << "must be a step, 0 or more";
    return from;
  }

  /// A pruning technique's method (l1, the one whose mask is fixed at the start) and offset.
  static int64_t l1Schedule(ConfigReader &read, const llvm::json::Object &shared, const std::string &sharedPath) {
    std::string method = read.string(shared, "method", "l1", sharedPath + ".method");
    if (method != "l1")
      read.fail(sharedPath + ".method") << "'" << method << "': only l1 is supported (topk learns mask scores, "
                                        << "snip_momentum needs Intel Neural Compressor)";
    return scheduleOffset(read, shared, sharedPath);
  }

  /// Pruning and activation quantization apply to linear layers only (DeepSpeed's
  /// Embedding_Compress has weight quantization alone).
  static bool linearOnly(ConfigReader &read, const Weight &w, StringRef groupPath, StringRef technique) {
    if (!w.embedding)
      return true;
    read.fail(groupPath + ".modules") << "matches embedding '" << w.module << "': " << technique
                                      << " applies to linear layers (as DeepSpeed's)";
    return false;
  }

  /// The compressible weights the forward pass reads, in the order it first reads them.
  SmallVector<Weight> compressibleWeightsOf(ForwardOp forward) {
    DenseMap<StringAttr, Weight> found;
    SmallVector<StringAttr> order;
    forward.walk([&](ParamRefOp ref) {
      auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(ref, ref.getNameAttr());
      if (!param || param.getTensorType().getRank() != 2)
        return;
      for (OpOperand &use : ref->getUses()) {
        Weight w{param, "", {}, false, true};
        if (auto mm = dyn_cast<MatmulOp>(use.getOwner()); mm && use.getOperandNumber() == 1)
          w.outputsFirst = mm.getTransposeRhs();
        else if (auto emb = dyn_cast<EmbeddingOp>(use.getOwner()); emb && use.get() == emb.getTable())
          w.embedding = true;
        else
          continue;
        auto moduleOf = [](StringRef name) {
          return name.ends_with(".weight") ? name.drop_back(strlen(".weight")).str() : name.str();
        };
        w.module = moduleOf(param.getSymName());
        if (auto tied = param->getAttrOfType<ArrayAttr>("zc.tied"))
          for (auto name : tied.getAsRange<StringAttr>())
            w.tiedModules.push_back(moduleOf(name.getValue()));
        if (found.try_emplace(param.getSymNameAttr(), w).second)
          order.push_back(param.getSymNameAttr());
      }
    });
    SmallVector<Weight> weights;
    for (StringAttr name : order)
      weights.push_back(found.lookup(name));
    return weights;
  }

  /// Calls `apply` for every compressible weight each group of `method` matches; a weight
  /// matched by two groups of one technique is an error, as in DeepSpeed.
  void forEachGroup(ConfigReader &read, const llvm::json::Object &method, StringRef path, StringRef technique,
                    ArrayRef<Weight> weights,
                    function_ref<void(Weight, const llvm::json::Object &, StringRef)> apply) {
    std::string groupsPath = (path + ".different_groups").str();
    const llvm::json::Object *groups = read.object(method, "different_groups", groupsPath);
    if (!groups) {
      if (!read.failed())
        read.fail(groupsPath) << "is required when " << technique << " is enabled";
      return;
    }
    // llvm::json keeps no key order: the groups in name order, so messages are stable.
    SmallVector<std::string> names;
    for (const auto &entry : *groups)
      names.push_back(entry.first.str());
    llvm::sort(names);
    llvm::StringMap<std::string> taken; // module -> the group that has it
    for (const std::string &name : names) {
      const llvm::json::Value &value = *groups->get(name);
      std::string groupPath = groupsPath + "." + name;
      const llvm::json::Object *group = value.getAsObject();
      const llvm::json::Object *params = group ? read.object(*group, "params", groupPath + ".params") : nullptr;
      if (!group || !params) {
        read.fail(groupPath) << "must be an object with params and modules";
        continue;
      }
      if (group->get("related_modules") && !group->get("related_modules")->getAsNull()) {
        if (technique == "row_pruning")
          read.fail(groupPath + ".related_modules")
              << "shrinking the related layers (redundancy_clean's dimension reduction) is not supported: "
                 "pruned rows stay, as zeros";
        else
          read.fail(groupPath + ".related_modules") << "is for row and head pruning, not " << technique;
      }
      SmallVector<std::string> patterns;
      if (const llvm::json::Value *modules = group->get("modules")) {
        const llvm::json::Array *list = modules->getAsArray();
        if (!list) {
          read.fail(groupPath + ".modules") << "must be a list of regular expressions";
          continue;
        }
        for (const llvm::json::Value &m : *list) {
          if (std::optional<StringRef> s = m.getAsString())
            patterns.push_back(s->str());
          else
            read.fail(groupPath + ".modules") << "must be a list of strings";
        }
      } else {
        patterns.push_back("*"); // DeepSpeed's default scope: every module
      }
      for (const std::string &pattern : patterns) {
        // Python's re.search in DeepSpeed; POSIX extended expressions here (names, `.`, `|`,
        // anchors, classes: what compression configs use).
        llvm::Regex re(pattern == "*" ? "" : pattern);
        std::string invalid;
        if (!re.isValid(invalid)) {
          read.fail(groupPath + ".modules") << "'" << pattern << "' is not a regular expression: " << invalid;
          continue;
        }
        for (const Weight &w : weights) {
          const std::string *tiedMatch = nullptr;
          for (const std::string &tied : w.tiedModules)
            if (re.match(tied))
              tiedMatch = &tied;
          if (!re.match(w.module) && !tiedMatch)
            continue;
          if (!w.tiedModules.empty()) {
            read.fail(groupPath + ".modules")
                << "matches '" << (tiedMatch ? *tiedMatch : w.module) << "', whose weight is tied to another "
                << "module: compressing a tied weight is not supported (DeepSpeed's module swap unties it)";
            continue;
          }
          auto [it, fresh] = taken.try_emplace(w.module, name);
          if (!fresh) {
            if (it->second != name) // DeepSpeed: "is already added to compression"
              read.fail(groupPath + ".modules")
                  << "'" << w.module << "' is in groups '" << it->second << "' and '" << name << "' of " << technique;
            continue;
          }
          apply(w, *params, groupPath);
        }
      }
    }
  }

  void rewrite(ModuleOp module, ForwardOp forward, MutableArrayRef<Weight> weights,
               const llvm::StringMap<Compression> &plan) {
    Block &entry = forward.getBody().front();
    OpBuilder b(module.getContext());
    DenseMap<int64_t, Value> gates;
    auto gate = [&](int64_t from, Location loc) {
      Value &g = gates[from];
      if (!g) {
        OpBuilder at = OpBuilder::atBlockBegin(&entry);
        g = StepGateOp::create(at, loc, RankedTensorType::get({}, at.getF32Type()), at.getI64IntegerAttr(from));
      }
      return g;
    };
    SmallVector<Attribute> record;
    for (Weight &w : weights) {
      auto it = plan.find(w.param.getSymName());
      if (it == plan.end())
        continue;
      const Compression &c = it->second;
      quantizeInputs(forward, w, c, gate);
      if (!c.bits && c.keep == 0 && c.rowKeep == 0)
        continue; // only its input is quantized: the weight is what it was
      Builder attrs(module.getContext());
      SmallVector<NamedAttribute> entryAttrs{attrs.getNamedAttr("param", w.param.getSymNameAttr())};
      RankedTensorType type = w.param.getTensorType();
      FlatSymbolRefAttr mask;
      if (c.keep > 0) {
        mask = declareMask(w.param, ".sparse_mask", type.getShape(), c.keep, std::nullopt);
        entryAttrs.push_back(attrs.getNamedAttr("mask", mask.getAttr()));
      }
      // Row pruning: one mask value per output feature (axis 0 of nn.Linear's [out, in]), applied
      // to the weight's rows and to the module's bias.
      FlatSymbolRefAttr rowMask;
      const int64_t rowAxis = w.outputsFirst ? 0 : 1;
      ParamOp bias;
      if (c.rowKeep > 0) {
        rowMask = declareMask(w.param, ".row_mask", {type.getDimSize(rowAxis)}, c.rowKeep, rowAxis);
        entryAttrs.push_back(attrs.getNamedAttr("row_mask", rowMask.getAttr()));
        entryAttrs.push_back(attrs.getNamedAttr("row_axis", attrs.getI64IntegerAttr(rowAxis)));
        // DeepSpeed masks the module's bias too: the parameter the layer's output gets added
        // (zc.bias_add of the matmul), else `X.bias` beside `X.weight`.
        bias = biasOf(forward, w.param);
        if (!bias)
          bias = SymbolTable::lookupNearestSymbolFrom<ParamOp>(module, attrs.getStringAttr(w.module + ".bias"));
        if (bias && bias.getTensorType().getShape() != ArrayRef<int64_t>{type.getDimSize(rowAxis)})
          bias = {};
        if (bias) {
          record.push_back(attrs.getDictionaryAttr(
              {attrs.getNamedAttr("param", bias.getSymNameAttr()),
               attrs.getNamedAttr("row_mask", rowMask.getAttr()),
               attrs.getNamedAttr("row_axis", attrs.getI64IntegerAttr(0))}));
          for (ParamRefOp ref : readsOf(forward, bias)) {
            b.setInsertionPointAfter(ref);
            auto m = ApplyMaskOp::create(b, ref.getLoc(), ref.getType(), ref.getResult(), gate(c.rowFrom, ref.getLoc()),
                                         rowMask, b.getI64IntegerAttr(0));
            ref.getResult().replaceAllUsesExcept(m.getResult(), m);
          }
        }
      }
      if (c.bits) {
        entryAttrs.push_back(attrs.getNamedAttr("bits", attrs.getI32IntegerAttr(c.bits)));
        entryAttrs.push_back(attrs.getNamedAttr("groups", attrs.getI64IntegerAttr(c.groups)));
        if (c.asymmetric)
          entryAttrs.push_back(attrs.getNamedAttr("asymmetric", attrs.getUnitAttr()));
        if (w.groupsAreColumns(c.groups))
          entryAttrs.push_back(attrs.getNamedAttr("columns", attrs.getUnitAttr()));
      }
      record.push_back(attrs.getDictionaryAttr(entryAttrs));

      for (ParamRefOp ref : readsOf(forward, w.param)) {
        b.setInsertionPointAfter(ref);
        Location loc = ref.getLoc();
        Value v = ref.getResult();
        Operation *first = nullptr;
        if (c.bits) {
          Operation *q = FakeQuantizeOp::create(b, loc, type, v, gate(c.quantizeFrom, loc),
                                                b.getI32IntegerAttr(c.bits), b.getI64IntegerAttr(c.groups),
                                                w.groupsAreColumns(c.groups) ? b.getUnitAttr() : UnitAttr(),
                                                /*per_row=*/UnitAttr(),
                                                c.asymmetric ? b.getUnitAttr() : UnitAttr());
          first = q;
          v = q->getResult(0);
        }
        if (mask) {
          Operation *m = ApplyMaskOp::create(b, loc, type, v, gate(c.pruneFrom, loc), mask, IntegerAttr());
          first = first ? first : m;
          v = m->getResult(0);
        }
        if (rowMask) {
          Operation *m = ApplyMaskOp::create(b, loc, type, v, gate(c.rowFrom, loc), rowMask,
                                             b.getI64IntegerAttr(rowAxis));
          first = first ? first : m;
          v = m->getResult(0);
        }
        ref.getResult().replaceAllUsesExcept(v, first);
      }
    }
    if (!record.empty())
      module->setAttr("zc.compression", b.getArrayAttr(record));
  }

  /// The bias of the linear layer whose weight is `weight`: the parameter every matmul by it
  /// has added to its result (zc.bias_add), when there is one and only one.
  static ParamOp biasOf(ForwardOp forward, ParamOp weight) {
    ParamOp found;
    bool unique = true;
    for (ParamRefOp ref : readsOf(forward, weight))
      for (OpOperand &use : ref->getUses()) {
        auto mm = dyn_cast<MatmulOp>(use.getOwner());
        if (!mm || use.getOperandNumber() != 1)
          continue;
        for (Operation *user : mm->getUsers()) {
          auto add = dyn_cast<BiasAddOp>(user);
          auto biasRef = add ? add.getBias().getDefiningOp<ParamRefOp>() : ParamRefOp();
          if (!biasRef || add.getInput() != mm.getResult())
            continue;
          auto p = SymbolTable::lookupNearestSymbolFrom<ParamOp>(biasRef, biasRef.getNameAttr());
          unique = unique && (!found || found == p);
          found = p;
        }
      }
    return unique ? found : ParamOp();
  }

  /// DeepSpeed's activation quantization: the input of every matmul the weight `w` is the
  /// right operand of, fake-quantized row by row (a token's features are a group).
  void quantizeInputs(ForwardOp forward, Weight &w, const Compression &c,
                      function_ref<Value(int64_t, Location)> gate) {
    if (!c.activationBits)
      return;
    SmallVector<MatmulOp> matmuls;
    for (ParamRefOp ref : readsOf(forward, w.param))
      for (OpOperand &use : ref->getUses())
        if (auto mm = dyn_cast<MatmulOp>(use.getOwner()); mm && use.getOperandNumber() == 1)
          matmuls.push_back(mm);
    for (MatmulOp mm : matmuls) {
      OpBuilder b(mm);
      Value x = mm.getLhs();
      auto q = FakeQuantizeOp::create(b, mm.getLoc(), x.getType(), x, gate(c.activationFrom, mm.getLoc()),
                                      b.getI32IntegerAttr(c.activationBits), IntegerAttr(), /*columns=*/UnitAttr(),
                                      b.getUnitAttr(), c.activationAsymmetric ? b.getUnitAttr() : UnitAttr());
      mm.getLhsMutable().assign(q.getResult());
    }
  }
};

} // namespace
