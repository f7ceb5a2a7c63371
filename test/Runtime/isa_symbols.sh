#!/usr/bin/env bash
# usage: isa_symbols.sh NM ISA OBJECT
# An ISA-level object (cpu/IsaKernels.cpp built with that level's -march) may define only
# symbols of its own inline namespace. Any other external symbol, a weak inline function or
# template instance from a header (std:: included), is merged by the linker with the generic
# build's copy, and the AVX-512 instance could then be the one that runs on a CPU without
# AVX-512: the ISA dispatch must be the only door to code built for a level.
set -euo pipefail
nm=$1 isa=$2 object=$3
# Mangled names: zrt::cpu::<isa>:: is N3zrt3cpu<length><isa>, local entities (lambdas) _ZZN...
ns="N3zrt3cpu${#isa}${isa}"
# zrt::math's row arithmetic (zrt/KernelMath.h) takes the level's inline namespace there too.
# Also allowed: the guard variables of the namespace's function-local statics (data named after
# their function, never shared with another level's), the compiler's own helpers (no vector
# code) and, under ASan, its per-object
# registration flag and the ODR indicator of the table.
allowed="^_ZZ?${ns}|^_ZZ?N3zrt4math${#isa}${isa}|^_ZGVZ${ns}|^_ZN3zrt3cpu$((12 + ${#isa}))kIsaKernels_${isa}E\$|^__clang_call_terminate\$"
allowed+="|^DW\.ref\.__gxx_personality_v0\$|^___asan_globals_registered\$|^__odr_asan_gen__ZN3zrt3cpu"
symbols=$("$nm" --defined-only --extern-only "$object" | cut -d' ' -f3-)
[ -n "$symbols" ] || { echo "FAIL: no symbols read from $object"; exit 1; }
leaked=$(grep -v -E "$allowed" <<<"$symbols" || true)
if [ -n "$leaked" ]; then
  echo "FAIL: $object ($isa) defines symbols outside zrt::cpu::$isa, which the linker may pick for generic code:"
  if command -v c++filt >/dev/null; then leaked=$(c++filt <<<"$leaked"); fi
  echo "$leaked"
  exit 1
fi
echo "PASS: $(wc -l <<<"$symbols") symbols of $object, all in zrt::cpu::$isa"
