#include "main/Data.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/Error.h"
#include "main/Random.h"

namespace zrt::train {
namespace {

const InputInfo *findRole(const ModelInfo &model, const char *role, int *index) {
  for (size_t i = 0; i < model.inputs.size(); ++i)
    if (model.inputs[i].role == role) {
      *index = static_cast<int>(i);
      return &model.inputs[i];
    }
  return nullptr;
}

/// Language-model rows from a token stream.
class TokenStream final : public DataSource {
public:
  TokenStream(std::vector<int32_t> tokens, const ModelInfo &model, std::string what)
      : tokens_(std::move(tokens)), what_(std::move(what)) {
    const InputInfo *in = findRole(model, "tokens", &tokensIndex_);
    if (!in || !findRole(model, "targets", &targetsIndex_))
      fatal("train", "--data needs a model whose inputs are tokens and targets");
    time_ = in->shape.size() == 2 ? in->shape[1] : 1;
    if (static_cast<int64_t>(tokens_.size()) < time_ + 2)
      fatal("train", "%s has %zu tokens; a row needs %lld", what_.c_str(), tokens_.size(),
            static_cast<long long>(time_ + 2));
    for (int32_t t : tokens_)
      if (in->classes && t >= in->classes)
        fatal("train", "%s has token %d, outside the model's vocabulary of %lld", what_.c_str(), t,
              static_cast<long long>(in->classes));
  }
  void fillRow(int64_t row, int64_t slot, const std::vector<void *> &buffers) override {
    int64_t windows = static_cast<int64_t>(tokens_.size()) - time_ - 1;
    int64_t start = (row * time_) % windows;
    auto *tok = static_cast<int32_t *>(buffers[tokensIndex_]) + slot * time_;
    auto *tgt = static_cast<int32_t *>(buffers[targetsIndex_]) + slot * time_;
    std::memcpy(tok, tokens_.data() + start, time_ * sizeof(int32_t));
    std::memcpy(tgt, tokens_.data() + start + 1, time_ * sizeof(int32_t));
  }
  std::string describe() const override { return what_; }

private:
  std::vector<int32_t> tokens_;
  std::string what_;
  int tokensIndex_ = 0, targetsIndex_ = 1;
  int64_t time_ = 1;
};

std::vector<int32_t> readTokens(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    fatal("train", "cannot open --data %s", path.c_str());
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(file)),
                                   std::istreambuf_iterator<char>());
  std::vector<int32_t> tokens;
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".bin") == 0) {
    if (bytes.size() % 2)
      fatal("train", "%s: a uint16 token file has an odd byte count", path.c_str());
    for (size_t i = 0; i < bytes.size(); i += 2)
      tokens.push_back(bytes[i] | (bytes[i + 1] << 8));
    // 32-bit tokens read as 16-bit ones: every other value is a zero high half.
    bool oddAllZero = tokens.size() >= 64;
    bool evenAllZero = true;
    for (size_t i = 0; i + 1 < tokens.size() && oddAllZero; i += 2) {
      oddAllZero = tokens[i + 1] == 0;
      evenAllZero = evenAllZero && tokens[i] == 0;
    }
    if (oddAllZero && !evenAllZero)
      fatal("train", "%s: every second uint16 token is 0; this looks like a file of 32-bit tokens "
                     "(.bin token files are little-endian uint16)", path.c_str());
  } else {
    tokens.assign(bytes.begin(), bytes.end());
  }
  return tokens;
}

/// A seeded Markov chain: each token has four likely successors, so the text is
/// learnable (its entropy is far below log(vocab)).
std::vector<int32_t> markovText(int64_t vocab, uint64_t seed, int64_t length) {
  uint64_t key = streamKey("markov", seed);
  std::vector<int32_t> text(length);
  int32_t state = 0;
  for (int64_t i = 0; i < length; ++i) {
    uint64_t r = splitmix64(key + splitmix64(static_cast<uint64_t>(i)));
    int64_t choice = (r >> 8) % 4; // one of four successors
    state = static_cast<int32_t>(splitmix64(key ^ (state * 4 + choice)) % vocab);
    text[i] = state;
  }
  return text;
}

/// Gaussian features; labels by a fixed random teacher (argmax of x W), or values x w.
class Teacher final : public DataSource {
public:
  Teacher(const ModelInfo &model, uint64_t seed) : key_(streamKey("features", seed)) {
    const InputInfo *x = findRole(model, "features", &featuresIndex_);
    const InputInfo *y = findRole(model, "labels", &targetIndex_);
    if (!y)
      y = findRole(model, "values", &targetIndex_);
    if (!x || !y)
      fatal("train", "--synthetic needs inputs (tokens, targets), (features, labels) or "
                     "(features, values)");
    features_ = x->bytes / 4 / x->shape[0];
    classes_ = y->role == "labels" ? y->classes : 0;
    outputs_ = classes_ ? classes_ : y->bytes / 4 / y->shape[0];
    if (y->role == "labels" && classes_ < 2)
      fatal("train", "cannot tell the number of classes of the labels");
    uint64_t teacherKey = streamKey("teacher", seed);
    teacher_.resize(features_ * outputs_);
    for (size_t i = 0; i < teacher_.size(); ++i)
      teacher_[i] = normal(teacherKey, i) / std::sqrt(double(features_));
  }
  void fillRow(int64_t row, int64_t slot, const std::vector<void *> &buffers) override {
    float *x = static_cast<float *>(buffers[featuresIndex_]) + slot * features_;
    for (int64_t f = 0; f < features_; ++f)
      x[f] = static_cast<float>(normal(key_, row * features_ + f));
    std::vector<double> out(outputs_, 0.0);
    for (int64_t f = 0; f < features_; ++f)
      for (int64_t o = 0; o < outputs_; ++o)
        out[o] += x[f] * teacher_[f * outputs_ + o];
    if (classes_) {
      int64_t best = 0;
      for (int64_t o = 1; o < outputs_; ++o)
        if (out[o] > out[best])
          best = o;
      static_cast<int32_t *>(buffers[targetIndex_])[slot] = static_cast<int32_t>(best);
    } else {
      float *y = static_cast<float *>(buffers[targetIndex_]) + slot * outputs_;
      for (int64_t o = 0; o < outputs_; ++o)
        y[o] = static_cast<float>(out[o]);
    }
  }
  std::string describe() const override { return "synthetic teacher data"; }

private:
  uint64_t key_;
  int featuresIndex_ = 0, targetIndex_ = 1;
  int64_t features_ = 0, classes_ = 0, outputs_ = 0;
  std::vector<double> teacher_;
};

} // namespace

std::unique_ptr<DataSource> openData(const ModelInfo &model, const std::string &path,
                                     bool synthetic, uint64_t seed) {
  int index = 0;
  const InputInfo *tokens = findRole(model, "tokens", &index);
  if (!path.empty())
    return std::make_unique<TokenStream>(readTokens(path), model, path);
  if (!synthetic)
    fatal("train", "no data: pass --data FILE or --synthetic");
  if (tokens) {
    if (tokens->classes < 2)
      fatal("train", "cannot tell the vocabulary size of the tokens");
    return std::make_unique<TokenStream>(markovText(tokens->classes, seed, 1 << 20), model,
                                         "synthetic Markov text");
  }
  return std::make_unique<Teacher>(model, seed);
}

} // namespace zrt::train
