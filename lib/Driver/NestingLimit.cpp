//===- NestingLimit.cpp - refuse inputs nested beyond the parser's stack --===//

#include "zcc/NestingLimit.h"

namespace zcc {

const char *findExcessiveNesting(llvm::StringRef text, unsigned limit) {
  unsigned depth = 0;
  const char *p = text.begin(), *end = text.end();
  while (p < end) {
    char c = *p;
    if (c == '"') { // a string literal: brackets inside do not nest
      for (++p; p < end && *p != '"'; ++p)
        if (*p == '\\')
          ++p;
      ++p;
      continue;
    }
    if (c == '/' && p + 1 < end && p[1] == '/') { // a comment, to the end of the line
      while (p < end && *p != '\n')
        ++p;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > limit)
        return p;
    } else if ((c == ')' || c == ']' || c == '}' || (c == '>' && !(p > text.begin() && p[-1] == '-'))) &&
               depth > 0) {
      --depth; // `->` closes nothing; unbalanced text is the parser's to diagnose
    }
    ++p;
  }
  return nullptr;
}

} // namespace zcc
