//===- ZcTrainOps.cpp - symbol checks of gradient and optimizer ops --------===//
//
// Every op here names a parameter (and optimizer ops their state): the symbol must
// exist and the tensors must have the parameter's type, or the lowering would give
// a buffer of the wrong size.

#include "dialects/zc/ZcDialect.h"
#include "dialects/zc/ZcVerifyUtils.h"

using namespace mlir;
using namespace mlir::zc;

ParamSharding ParamSharding::of(ParamOp param) {
  ParamSharding s;
  s.elements = param.getTensorType().getNumElements();
  if (auto ranks = param->getAttrOfType<IntegerAttr>(kShards))
    s.ranks = std::max<int64_t>(1, ranks.getInt());
  s.grad = s.partitioned() && param->hasAttr(kShardGrad);
  s.param = s.partitioned() && param->hasAttr(kShardParam);
  if (expertRanksOf(param) > 1)
    s.axis = MeshAxis::expert_data;
  return s;
}

int64_t mlir::zc::expertRanksOf(ParamOp param) {
  auto split = param->getAttrOfType<DictionaryAttr>(kEpSplitAttr);
  auto ranks = split ? split.getAs<IntegerAttr>("ranks") : IntegerAttr();
  return ranks ? std::max<int64_t>(1, ranks.getInt()) : 1;
}

namespace {
FailureOr<ParamOp> lookupParam(Operation *op, FlatSymbolRefAttr name,
                               SymbolTableCollection &symbolTable) {
  auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(op, name);
  if (!param)
    return op->emitOpError() << "'" << name << "' does not name a zc.param";
  return param;
}

/// `value` must have the type of the parameter `name`.
LogicalResult verifyParamTyped(Operation *op, FlatSymbolRefAttr name, Type type,
                               SymbolTableCollection &symbolTable) {
  FailureOr<ParamOp> param = lookupParam(op, name, symbolTable);
  if (failed(param))
    return failure();
  if (param->getType() != type)
    return op->emitOpError() << "type " << type << " differs from parameter '" << name
                             << "' declared as " << param->getType();
  return success();
}

/// `value` must have the type of the parameter `name`, or when its state is
/// partitioned (`shardWise`), the 1-D type of one shard.
LogicalResult verifyParamOrShardTyped(Operation *op, FlatSymbolRefAttr name, Type type,
                                      bool (*shardWise)(const ParamSharding &),
                                      SymbolTableCollection &symbolTable) {
  FailureOr<ParamOp> param = lookupParam(op, name, symbolTable);
  if (failed(param))
    return failure();
  ParamSharding sharding = ParamSharding::of(*param);
  if (!shardWise(sharding))
    return verifyParamTyped(op, name, type, symbolTable);
  auto shard = RankedTensorType::get({sharding.shardElements()}, param->getTensorType().getElementType());
  if (type != shard)
    return op->emitOpError() << "type " << type << " differs from the shard " << shard
                             << " of parameter '" << name << "' (split over " << sharding.ranks
                             << " ranks)";
  return success();
}
bool gradIsShard(const ParamSharding &s) { return s.grad; }
bool updateIsShardWise(const ParamSharding &s) { return s.partitioned(); }

/// `name` must be a zc.state of `param`.
LogicalResult verifyStateOf(Operation *op, FlatSymbolRefAttr name, FlatSymbolRefAttr param,
                            SymbolTableCollection &symbolTable) {
  auto state = symbolTable.lookupNearestSymbolFrom<StateOp>(op, name);
  if (!state)
    return op->emitOpError() << "'" << name << "' does not name a zc.state";
  if (state.getParamAttr() != param)
    return op->emitOpError() << "state '" << name << "' belongs to " << state.getParamAttr()
                             << ", not " << param;
  return success();
}

/// A bf16 parameter is updated through an fp32 master state of its own; an fp32
/// parameter is its own master and names none.
LogicalResult verifyMaster(Operation *op, FlatSymbolRefAttr param, FlatSymbolRefAttr master,
                           SymbolTableCollection &symbolTable) {
  FailureOr<ParamOp> declared = lookupParam(op, param, symbolTable);
  if (failed(declared))
    return failure();
  bool needsMaster = !declared->getTensorType().getElementType().isF32();
  if (needsMaster && !master)
    return op->emitOpError() << "parameter " << param << " is stored in "
                             << declared->getTensorType().getElementType()
                             << ": its update needs an f32 master state (master(@...))";
  if (!needsMaster && master)
    return op->emitOpError() << "parameter " << param << " is f32: it is its own master, name none";
  return master ? verifyStateOf(op, master, param, symbolTable) : success();
}
} // namespace

LogicalResult StateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<ParamOp> param = lookupParam(*this, getParamAttr(), symbolTable);
  if (failed(param))
    return failure();
  ParamSharding sharding = ParamSharding::of(*param);
  if (getSecondary()) {
    RankedTensorType type = getTensorType();
    if (!sharding.param || type.getRank() != 1 || type.getNumElements() % sharding.shardElements() ||
        type.getElementType() != param->getTensorType().getElementType())
      return emitOpError() << "a secondary shard must be whole shards of a ZeRO-3 parameter's "
                           << sharding.shardElements() << " elements, in its type; got " << getType();
    return success();
  }
  if (FloatAttr keepAttr = getMaskKeepAttr()) {
    const double keep = keepAttr.getValueAsDouble();
    if (getSecondary())
      return emitOpError() << "is a secondary shard or a mask, not both";
    if (!(keep > 0.0 && keep <= 1.0))
      return emitOpError() << "a mask keeps a fraction in (0, 1] of the weights, got " << keep;
    SmallVector<int64_t> shape(param->getTensorType().getShape());
    if (std::optional<uint64_t> rows = getMaskRows()) {
      if (*rows >= shape.size())
        return emitOpError() << "row mask of axis " << *rows << " of " << param->getType();
      shape = {shape[*rows]};
    }
    if (getType() != RankedTensorType::get(shape, Float32Type::get(getContext())))
      return emitOpError() << "a mask is the whole parameter's shape (a row mask: its axis' size) in f32 (every rank "
                              "holds all of it), got "
                           << getType() << " for " << param->getType();
    return success();
  }
  if (getMaskRows())
    return emitOpError() << "`rows` belongs to a mask";
  SmallVector<int64_t> expected(param->getTensorType().getShape());
  if (sharding.partitioned())
    expected = {sharding.shardElements()};
  if (ArrayRef<int64_t>(expected) != getTensorType().getShape())
    return emitOpError() << "shape of " << getType() << " differs from parameter "
                         << getParamAttr() << " declared as " << param->getType()
                         << (sharding.partitioned() ? " (its shard)" : "");
  if (!getTensorType().getElementType().isF32())
    return emitOpError() << "optimizer state is kept in f32, got " << getType();
  return success();
}

LogicalResult GradAccumulateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamOrShardTyped(*this, getParamAttr(), getGrad().getType(), gradIsShard, symbolTable);
}

LogicalResult GradRefOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamOrShardTyped(*this, getParamAttr(), getType(), gradIsShard, symbolTable);
}

LogicalResult GatherParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<ParamOp> param = lookupParam(*this, getParamAttr(), symbolTable);
  if (failed(param))
    return failure();
  if (!ParamSharding::of(*param).param)
    return emitOpError() << "parameter " << getParamAttr()
                         << " is stored whole: read it with zc.param_ref";
  return verifyParamTyped(*this, getParamAttr(), getType(), symbolTable);
}

LogicalResult AllGatherParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<ParamOp> param = lookupParam(*this, getParamAttr(), symbolTable);
  if (failed(param))
    return failure();
  ParamSharding sharding = ParamSharding::of(*param);
  if (!sharding.partitioned() || sharding.param)
    return emitOpError() << "parameter " << getParamAttr()
                         << " must be stored whole and updated shard-wise (zc.shards, no zc.shard_param)";
  return success();
}

LogicalResult GradZeroOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return lookupParam(*this, getParamAttr(), symbolTable);
}

LogicalResult AdamWOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (failed(verifyParamOrShardTyped(*this, getParamAttr(), getGrad().getType(), updateIsShardWise,
                                     symbolTable)) ||
      failed(verifyStateOf(*this, getExpAvgAttr(), getParamAttr(), symbolTable)) ||
      failed(verifyStateOf(*this, getExpAvgSqAttr(), getParamAttr(), symbolTable)) ||
      failed(verifyMaster(*this, getParamAttr(), getMasterAttr(), symbolTable)))
    return failure();
  return detail::verifyUpdateOffload(*this, {getExpAvgAttr(), getExpAvgSqAttr(), getMasterAttr(), getParamAttr()},
                             cast<RankedTensorType>(getGrad().getType()), getChunkAttr(), getSwapSlotAttr(),
                             symbolTable);
}

LogicalResult SgdOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (failed(verifyParamOrShardTyped(*this, getParamAttr(), getGrad().getType(), updateIsShardWise,
                                     symbolTable)) ||
      failed(verifyStateOf(*this, getMomentumBufferAttr(), getParamAttr(), symbolTable)) ||
      failed(verifyMaster(*this, getParamAttr(), getMasterAttr(), symbolTable)))
    return failure();
  return detail::verifyUpdateOffload(*this, {getMomentumBufferAttr(), getMasterAttr(), getParamAttr()},
                             cast<RankedTensorType>(getGrad().getType()), getChunkAttr(), getSwapSlotAttr(),
                             symbolTable);
}

namespace {
/// The parameters of a bucket: partitioned over one number of ranks, of one
/// element type; `whole` asks that they are stored whole (updated shard-wise).
/// Returns the bucket's shard elements per rank.
FailureOr<int64_t> verifyBucketParams(Operation *op, ArrayAttr names, bool whole, Type element,
                                      int64_t ranks, SymbolTableCollection &symbolTable) {
  if (names.empty())
    return op->emitOpError("needs at least one parameter");
  int64_t shard = 0;
  for (Attribute attr : names) {
    auto name = cast<FlatSymbolRefAttr>(attr);
    FailureOr<ParamOp> param = lookupParam(op, name, symbolTable);
    if (failed(param))
      return failure();
    ParamSharding s = ParamSharding::of(*param);
    if (!s.partitioned() || s.ranks != ranks)
      return op->emitOpError() << "parameter " << name << " is not partitioned over " << ranks << " ranks";
    if (whole && s.param)
      return op->emitOpError() << "parameter " << name << " is stored as a shard, not whole";
    if (param->getTensorType().getElementType() != element)
      return op->emitOpError() << "parameter " << name << " is " << param->getTensorType().getElementType()
                               << ", the bucket " << element;
    shard += s.shardElements();
  }
  return shard;
}
} // namespace

LogicalResult PackShardsOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  RankedTensorType type = tensorOf(getResult());
  auto first = symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, cast<FlatSymbolRefAttr>(getParams()[0]));
  int64_t ranks = first ? ParamSharding::of(first).ranks : 1;
  FailureOr<int64_t> shard =
      verifyBucketParams(*this, getParams(), /*whole=*/false, type.getElementType(), ranks, symbolTable);
  if (failed(shard))
    return failure();
  if (type.getRank() != 1 || type.getDimSize(0) != *shard)
    return emitOpError() << "result must be the " << *shard << " elements of this rank's shards, got " << type;
  return detail::verifyPackSlot(*this);
}

LogicalResult UnpackParamsOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  RankedTensorType type = tensorOf(getInput());
  FailureOr<int64_t> shard = verifyBucketParams(*this, getParams(), /*whole=*/true, type.getElementType(),
                                                getRanks(), symbolTable);
  if (failed(shard))
    return failure();
  if (type.getRank() != 1 || type.getDimSize(0) != *shard * static_cast<int64_t>(getRanks()))
    return emitOpError() << "input must be the " << *shard * static_cast<int64_t>(getRanks())
                         << " elements of the gathered shards, got " << type;
  return success();
}

LogicalResult GradNormOp::verify() {
  if (getWeights().size() != getGrads().size())
    return emitOpError() << "has " << getGrads().size() << " gradients but " << getWeights().size() << " weights";
  for (Attribute w : getWeights())
    if (!(cast<FloatAttr>(w).getValueAsDouble() > 0))
      return emitOpError("weights must be positive (1 / the ranks holding the same piece)");
  if (getMaxNorm().convertToDouble() < 0)
    return emitOpError("max_norm must be >= 0 (0: no clipping), got ") << getMaxNorm().convertToDouble();
  return success();
}
