//===- NestingLimit.h - refuse inputs nested beyond the parser's stack ----===//
//
// MLIR's parser descends recursively into every bracket: `[[[[...` nested some
// thousands deep overflows the stack (a crash the fuzzer finds, not a diagnostic).
// zcc and zcc-fuzz scan the text first and refuse it with a located error instead.
//
//===----------------------------------------------------------------------===//

#ifndef ZCC_NESTINGLIMIT_H
#define ZCC_NESTINGLIMIT_H

#include "llvm/ADT/StringRef.h"

namespace zcc {

/// Far above any real model (types and attributes nest a handful deep), far below
/// what overflows an 8 MiB stack even under AddressSanitizer.
constexpr unsigned kMaxNesting = 256;

/// The first bracket of `text` ((, [, { or <, outside strings and // comments)
/// that opens level `limit` + 1, or nullptr when the text nests no deeper.
const char *findExcessiveNesting(llvm::StringRef text, unsigned limit = kMaxNesting);

} // namespace zcc

#endif // ZCC_NESTINGLIMIT_H
