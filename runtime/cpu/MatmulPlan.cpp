// The installed matmul plan and its text form (cpu/MatmulPlan.h).
#include "cpu/MatmulPlan.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>

#include "core/Error.h"
#include "cpu/MatmulCrossEntropy.h"

namespace zrt::cpu {
namespace {

auto tie(const MatmulKey &k) {
  const MatmulShape &s = k.shape;
  return std::make_tuple(k.dtype, s.batch, s.m, s.n, s.k, s.transA, s.transB, s.bShared, s.varies);
}

std::atomic<int64_t> unplanned{0};

MatmulPlan &plan() {
  static MatmulPlan installed;
  return installed;
}

const char *dtypeName(int32_t dtype) { return dtype == ZRT_DTYPE_BF16 ? "bf16" : "f32"; }

/// A plan line's first field: the dtype, and ":m" or ":k" for a product whose m or k varies.
std::string dtypeField(const MatmulKey &key) {
  const MatmulVarying v = key.shape.varies;
  return std::string(dtypeName(key.dtype)) + (v == MatmulVarying::M ? ":m" : v == MatmulVarying::K ? ":k" : "");
}

} // namespace

bool MatmulKey::operator<(const MatmulKey &o) const { return tie(*this) < tie(o); }

std::string MatmulKey::describe() const {
  char text[160];
  std::snprintf(text, sizeof text, "%s %lldx%lldx%lldx%lld %c%c%s%s", dtypeName(dtype),
                static_cast<long long>(shape.batch), static_cast<long long>(shape.m),
                static_cast<long long>(shape.n), static_cast<long long>(shape.k), shape.transA ? 't' : 'n',
                shape.transB ? 't' : 'n', shape.bShared ? " shared" : "",
                shape.varies == MatmulVarying::M   ? ", m varies"
                : shape.varies == MatmulVarying::K ? ", k varies"
                                                   : "");
  return text;
}

std::vector<MatmulKey> productsOfTable(const int64_t *table, int64_t rows, const char *call) {
  if (rows < 0 || (rows > 0 && !table))
    fatal(call, "a table of %lld rows at %p", static_cast<long long>(rows), static_cast<const void *>(table));
  std::set<MatmulKey> keys;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t *row = table + r * ZRT_MATMUL_ROW;
    const int64_t kind = row[0], dtype = row[1];
    if (kind < ZRT_MATMUL_PLAIN || kind > ZRT_MATMUL_GROUPED_K || (dtype != ZRT_DTYPE_F32 && dtype != ZRT_DTYPE_BF16))
      fatal(call,
            "row %lld: kind %lld, dtype %lld (kinds: 0 matmul, 1 cross-entropy, 2 and 3 a grouped product's, its m "
            "or k varying; dtypes: 0 f32, 1 bf16)",
            static_cast<long long>(r), static_cast<long long>(kind), static_cast<long long>(dtype));
    for (int i = 2; i < ZRT_MATMUL_ROW; ++i)
      if (row[i] < 0)
        fatal(call, "row %lld: negative size %lld", static_cast<long long>(r), static_cast<long long>(row[i]));
    if (kind != ZRT_MATMUL_CROSS_ENTROPY) {
      const MatmulVarying varies = kind == ZRT_MATMUL_GROUPED_M   ? MatmulVarying::M
                                   : kind == ZRT_MATMUL_GROUPED_K ? MatmulVarying::K
                                                                  : MatmulVarying::None;
      keys.insert({static_cast<int32_t>(dtype),
                   MatmulShape{row[2], row[3], row[4], row[5], row[6] != 0, row[7] != 0, row[8] != 0, varies}});
      continue;
    }
    const int64_t ceRows = row[2], classes = row[3], channels = row[4], chunkRows = row[6];
    if (chunkRows < 1 || chunkRows > ceRows)
      fatal(call, "row %lld: %lld rows in chunks of %lld", static_cast<long long>(r), static_cast<long long>(ceRows),
            static_cast<long long>(chunkRows));
    for (const MatmulShape &shape : matmulCrossEntropyProducts(ceRows, classes, channels, row[5] != 0, chunkRows))
      keys.insert({static_cast<int32_t>(dtype), shape});
  }
  return {keys.begin(), keys.end()};
}

void installMatmulPlan(MatmulPlan installed) { plan() = std::move(installed); }
const MatmulPlan &installedMatmulPlan() { return plan(); }

std::optional<MatmulPath> plannedMatmulPath(int32_t dtype, const MatmulShape &shape) {
  const MatmulPlan &p = plan();
  if (p.empty())
    return std::nullopt;
  const MatmulKey key{dtype, shape};
  auto it = p.find(key);
  if (it != p.end())
    return it->second;
  unplanned.fetch_add(1, std::memory_order_relaxed);
  static std::once_flag said;
  std::call_once(said, [&] {
    std::fprintf(stderr,
                 "zrt: zrt_matmul: %s is not in the program's matmul plan: it runs on the rule's path "
                 "(said once)\n",
                 key.describe().c_str());
  });
  return std::nullopt;
}

int64_t unplannedMatmulCalls() { return unplanned.load(); }

std::string matmulPlanText(const MatmulPlan &p) {
  std::string text;
  char line[200];
  for (const auto &[key, path] : p) {
    const MatmulShape &s = key.shape;
    std::snprintf(line, sizeof line, "%s %lld %lld %lld %lld %d %d %d %s\n", dtypeField(key).c_str(),
                  static_cast<long long>(s.batch), static_cast<long long>(s.m), static_cast<long long>(s.n),
                  static_cast<long long>(s.k), s.transA, s.transB, s.bShared, matmulPathName(path));
    text += line;
  }
  return text;
}

MatmulPlan parseMatmulPlan(const std::string &text, const char *call) {
  MatmulPlan parsed;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.empty())
      continue;
    std::istringstream fields(line);
    std::string dtype, pathName, rest;
    MatmulShape s{};
    int ta = 0, tb = 0, shared = 0;
    fields >> dtype >> s.batch >> s.m >> s.n >> s.k >> ta >> tb >> shared >> pathName;
    if (const size_t colon = dtype.find(':'); colon != std::string::npos) {
      const std::string varying = dtype.substr(colon + 1);
      s.varies = varying == "m" ? MatmulVarying::M : varying == "k" ? MatmulVarying::K : MatmulVarying::None;
      dtype = s.varies == MatmulVarying::None ? "" : dtype.substr(0, colon); // an unknown suffix: refused below
    }
    const int32_t code = dtype == "bf16" ? ZRT_DTYPE_BF16 : ZRT_DTYPE_F32;
    std::optional<MatmulPath> path;
    for (MatmulPath p : kMatmulPaths)
      if (pathName == matmulPathName(p) && pathComputes(p, code))
        path = p;
    if (fields.fail() || (fields >> rest) || (dtype != "f32" && dtype != "bf16") || !path || s.batch < 0 ||
        s.m < 0 || s.n < 0 || s.k < 0)
      fatal(call, "matmul plan line %d is not \"<f32|bf16>[:m|:k] batch m n k trans_a trans_b shared <path>\": '%s'",
            number, line.c_str());
    s.transA = ta != 0, s.transB = tb != 0, s.bShared = shared != 0;
    parsed[{code, s}] = *path;
  }
  return parsed;
}

} // namespace zrt::cpu
