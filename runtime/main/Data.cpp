#include "main/Data.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

/// Tokens by index: a memory-mapped token file (never read whole: the kernel pages in the windows
/// the rows touch, as nanoGPT's np.memmap and Megatron-LM's indexed datasets do), or tokens held
/// in memory (the synthetic text).
class Tokens {
public:
  virtual ~Tokens() = default;
  virtual int64_t size() const = 0;
  /// Tokens [first, first + n) widened to int32.
  virtual void read(int64_t first, int64_t n, int32_t *out) const = 0;
};

class TokensInMemory final : public Tokens {
public:
  explicit TokensInMemory(std::vector<int32_t> tokens) : tokens_(std::move(tokens)) {}
  int64_t size() const override { return static_cast<int64_t>(tokens_.size()); }
  void read(int64_t first, int64_t n, int32_t *out) const override {
    std::memcpy(out, tokens_.data() + first, n * sizeof(int32_t));
  }

private:
  std::vector<int32_t> tokens_;
};

/// A little-endian token file mapped read-only: `width` bytes a token (1: a text file's bytes,
/// 2: nanoGPT's uint16 .bin, 4: uint32).
class MappedTokens final : public Tokens {
public:
  MappedTokens(const std::string &path, int width) : width_(width) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      fatal("train", "cannot open --data %s: %s", path.c_str(), std::strerror(errno));
    struct stat st{};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      fatal("train", "cannot stat --data %s: %s", path.c_str(), std::strerror(errno));
    }
    bytes_ = st.st_size;
    if (bytes_ > 0) {
      void *map = ::mmap(nullptr, bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (map == MAP_FAILED) {
        ::close(fd);
        fatal("train", "cannot map --data %s: %s", path.c_str(), std::strerror(errno));
      }
      base_ = static_cast<const unsigned char *>(map);
      ::madvise(map, bytes_, MADV_RANDOM); // windows here and there, not a scan
    }
    ::close(fd);
    if (bytes_ % width)
      fatal("train", "%s: %lld bytes are not a whole number of %d-byte tokens (a truncated file, or another "
                     "token width: --data-dtype)",
            path.c_str(), static_cast<long long>(bytes_), width);
    count_ = bytes_ / width;
  }
  ~MappedTokens() override {
    if (base_)
      ::munmap(const_cast<unsigned char *>(base_), bytes_);
  }
  int64_t size() const override { return count_; }
  void read(int64_t first, int64_t n, int32_t *out) const override {
    const unsigned char *at = base_ + first * width_;
    for (int64_t i = 0; i < n; ++i, at += width_) {
      uint32_t v = at[0];
      if (width_ >= 2)
        v |= uint32_t(at[1]) << 8;
      if (width_ == 4)
        v |= uint32_t(at[2]) << 16 | uint32_t(at[3]) << 24;
      out[i] = static_cast<int32_t>(v);
    }
  }

private:
  int width_;
  int64_t bytes_ = 0, count_ = 0;
  const unsigned char *base_ = nullptr;
};

/// Language-model rows from a token stream: row q is a window of T + 1 tokens (inputs, and the
/// targets shifted by one). In order: window q starts at (q * T) mod (length - T - 1); random:
/// at a seeded hash of (seed, q) (nanoGPT's random offsets), so a resumed run reads the rows it
/// would have read, whatever the world size.
class TokenStream final : public DataSource {
public:
  TokenStream(std::unique_ptr<Tokens> tokens, const ModelInfo &model, std::string what, bool random, uint64_t seed)
      : tokens_(std::move(tokens)), what_(std::move(what)), random_(random), key_(streamKey("data-order", seed)) {
    const InputInfo *in = findRole(model, "tokens", &tokensIndex_);
    if (!in || !findRole(model, "targets", &targetsIndex_))
      fatal("train", "--data needs a model whose inputs are tokens and targets");
    time_ = in->shape.size() == 2 ? in->shape[1] : 1;
    classes_ = in->classes;
    if (tokens_->size() < time_ + 2)
      fatal("train", "%s has %lld tokens; a row needs %lld", what_.c_str(), static_cast<long long>(tokens_->size()),
            static_cast<long long>(time_ + 2));
    // The first rows' tokens, checked now (every row is checked again as it is read): a file of
    // another vocabulary stops before the first step, without a scan of the whole file.
    std::vector<int32_t> window(time_ + 1);
    for (int64_t q = 0; q < 64; ++q)
      readWindow(q, window.data());
  }
  void fillRow(int64_t row, int64_t slot, const std::vector<void *> &buffers) override {
    scratch_.resize(time_ + 1);
    readWindow(row, scratch_.data());
    auto *tok = static_cast<int32_t *>(buffers[tokensIndex_]) + slot * time_;
    auto *tgt = static_cast<int32_t *>(buffers[targetsIndex_]) + slot * time_;
    std::memcpy(tok, scratch_.data(), time_ * sizeof(int32_t));
    std::memcpy(tgt, scratch_.data() + 1, time_ * sizeof(int32_t));
  }
  std::string describe() const override { return what_ + (random_ ? " (random windows)" : ""); }

private:
  int64_t windowStart(int64_t row) const {
    const int64_t windows = tokens_->size() - time_ - 1;
    if (!random_)
      return (row * time_) % windows;
    return static_cast<int64_t>(splitmix64(key_ + splitmix64(static_cast<uint64_t>(row))) %
                                static_cast<uint64_t>(windows));
  }
  void readWindow(int64_t row, int32_t *out) const {
    const int64_t start = windowStart(row);
    tokens_->read(start, time_ + 1, out);
    if (classes_)
      for (int64_t i = 0; i <= time_; ++i)
        if (out[i] < 0 || out[i] >= classes_)
          fatal("train", "%s: token %lld is %d, outside the model's vocabulary of %lld", what_.c_str(),
                static_cast<long long>(start + i), out[i], static_cast<long long>(classes_));
  }

  std::unique_ptr<Tokens> tokens_;
  std::string what_;
  bool random_;
  uint64_t key_;
  int tokensIndex_ = 0, targetsIndex_ = 1;
  int64_t time_ = 1, classes_ = 0;
  std::vector<int32_t> scratch_;
};

bool endsWith(const std::string &s, const char *suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

bool exists(const std::string &path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

/// Megatron-LM's indexed dataset (megatron/core/datasets/indexed_dataset.py, "MMIDIDX"):
/// PREFIX.idx holds the magic, version 1, the token dtype, the sequence and document counts, then
/// each sequence's length (int32) and byte offset (int64) and the document boundaries; PREFIX.bin
/// the tokens of every sequence, in order. The rows run over the concatenated sequences (as
/// Megatron's GPT dataset concatenates documents, their end-of-document tokens included).
std::unique_ptr<Tokens> openIndexed(const std::string &prefix, std::string &what) {
  const std::string idx = prefix + ".idx", bin = prefix + ".bin";
  std::ifstream file(idx, std::ios::binary);
  if (!file)
    fatal("train", "cannot open %s", idx.c_str());
  char magic[9] = {};
  uint64_t version = 0, sequences = 0, documents = 0;
  uint8_t code = 0;
  file.read(magic, 9);
  file.read(reinterpret_cast<char *>(&version), 8);
  file.read(reinterpret_cast<char *>(&code), 1);
  file.read(reinterpret_cast<char *>(&sequences), 8);
  file.read(reinterpret_cast<char *>(&documents), 8);
  if (!file || std::memcmp(magic, "MMIDIDX\0\0", 9) != 0)
    fatal("train", "%s is not a Megatron-LM index (no MMIDIDX header)", idx.c_str());
  if (version != 1)
    fatal("train", "%s: index version %llu (only 1 is known)", idx.c_str(), static_cast<unsigned long long>(version));
  // Megatron's DType codes: 1 uint8, 2 int8, 3 int16, 4 int32, 5 int64, 6 float64, 7 float32, 8 uint16.
  const int width = code == 1 ? 1 : code == 8 ? 2 : code == 4 ? 4 : 0;
  if (!width)
    fatal("train", "%s: token dtype code %d (uint8, uint16 or int32 tokens are read)", idx.c_str(), code);
  if (sequences > (uint64_t(1) << 40))
    fatal("train", "%s: %llu sequences is not a count (a corrupt header)", idx.c_str(),
          static_cast<unsigned long long>(sequences));
  // The last sequence's end is where the tokens end: the .bin must hold exactly that many.
  std::vector<int32_t> lengths(sequences);
  std::vector<int64_t> pointers(sequences);
  file.read(reinterpret_cast<char *>(lengths.data()), sequences * 4);
  file.read(reinterpret_cast<char *>(pointers.data()), sequences * 8);
  if (!file)
    fatal("train", "%s ends inside its %llu sequences' lengths and offsets", idx.c_str(),
          static_cast<unsigned long long>(sequences));
  auto tokens = std::make_unique<MappedTokens>(bin, width);
  const int64_t end = sequences ? pointers.back() / width + lengths.back() : 0;
  if (end != tokens->size())
    fatal("train", "%s holds %lld tokens but %s indexes %lld", bin.c_str(), static_cast<long long>(tokens->size()),
          idx.c_str(), static_cast<long long>(end));
  what = prefix + " (Megatron indexed dataset, " + std::to_string(sequences) + " sequences)";
  return tokens;
}

/// --data FILE: a text file (bytes are tokens), nanoGPT's .bin (uint16, or --data-dtype uint32),
/// or Megatron's PREFIX (PREFIX.idx and PREFIX.bin; either file names it too).
std::unique_ptr<Tokens> openTokens(const std::string &path, const std::string &dtype, std::string &what) {
  what = path;
  const std::string prefix =
      endsWith(path, ".bin") || endsWith(path, ".idx") ? path.substr(0, path.size() - 4) : path;
  if ((dtype.empty() || dtype == "megatron") && exists(prefix + ".idx") && exists(prefix + ".bin"))
    return openIndexed(prefix, what);
  if (dtype == "megatron")
    fatal("train", "--data-dtype megatron: no %s.idx and %s.bin", prefix.c_str(), prefix.c_str());
  if (!exists(path))
    fatal("train", "cannot open --data %s", path.c_str());
  const std::string kind = !dtype.empty() ? dtype : endsWith(path, ".bin") ? "uint16" : "text";
  if (kind != "text" && kind != "uint8" && kind != "uint16" && kind != "uint32")
    fatal("train", "--data-dtype is text, uint8, uint16, uint32 or megatron, got '%s'", kind.c_str());
  const int width = kind == "uint16" ? 2 : kind == "uint32" ? 4 : 1;
  auto tokens = std::make_unique<MappedTokens>(path, width);
  if (width == 2) {
    // 32-bit tokens read as 16-bit ones: every other value is a zero high half (the first 64K).
    const int64_t n = std::min<int64_t>(tokens->size(), 1 << 16) & ~int64_t(1);
    std::vector<int32_t> head(n);
    tokens->read(0, n, head.data());
    bool oddAllZero = n >= 64, evenAllZero = true;
    for (int64_t i = 0; i + 1 < n && oddAllZero; i += 2) {
      oddAllZero = head[i + 1] == 0;
      evenAllZero = evenAllZero && head[i] == 0;
    }
    if (oddAllZero && !evenAllZero)
      fatal("train", "%s: every second uint16 token is 0; this looks like a file of 32-bit tokens (--data-dtype "
                     "uint32)", path.c_str());
  }
  if (width > 1)
    what = path + " (" + kind + ")";
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

std::unique_ptr<DataSource> openData(const ModelInfo &model, const DataOptions &options) {
  const bool random = options.order == "random";
  const uint64_t seed = options.seed;
  int index = 0;
  const InputInfo *tokens = findRole(model, "tokens", &index);
  if (!options.path.empty()) {
    std::string what;
    std::unique_ptr<Tokens> stream = openTokens(options.path, options.dtype, what);
    return std::make_unique<TokenStream>(std::move(stream), model, what, random, seed);
  }
  if (!options.synthetic)
    fatal("train", "no data: pass --data FILE or --synthetic");
  if (tokens) {
    if (tokens->classes < 2)
      fatal("train", "cannot tell the vocabulary size of the tokens");
    return std::make_unique<TokenStream>(std::make_unique<TokensInMemory>(markovText(tokens->classes, seed, 1 << 20)),
                                         model, "synthetic Markov text", random, seed);
  }
  return std::make_unique<Teacher>(model, seed);
}

} // namespace zrt::train
