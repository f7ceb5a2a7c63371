# One precompiled header of MLIR's and LLVM's headers for each compiler library.
#
# Parsing those headers is most of a compiler source file's build: passes/Bucket.cpp spends 18 of its
# 26 s under ASan in them (clang -ftime-trace), and every one of the ~45 files of the passes, the
# dialect, the simulator and the driver parses them again, in both of the test command's builds.
# Precompiled once per target, a pass builds in a third of the time (Bucket 26 -> 7.6 s, Fuse
# 22.6 -> 11.6 s, Autodiff 23.3 -> 10.7 s; the header itself 15 s).
#
# Only external headers: ours change with every edit and would rebuild each target's header, theirs
# change with the LLVM package. -DZCC_PRECOMPILED_HEADERS=OFF builds without (each file then checks
# that it includes what it uses).
option(ZCC_PRECOMPILED_HEADERS "Precompile MLIR's and LLVM's headers for the compiler's libraries" ON)

set(ZCC_PRECOMPILED_MLIR_HEADERS
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/LLVMIR/LLVMDialect.h>
  <mlir/IR/Builders.h>
  <mlir/IR/BuiltinOps.h>
  <mlir/IR/BuiltinTypes.h>
  <mlir/IR/Diagnostics.h>
  <mlir/IR/IRMapping.h>
  <mlir/IR/ImplicitLocOpBuilder.h>
  <mlir/IR/OpDefinition.h>
  <mlir/IR/PatternMatch.h>
  <mlir/IR/SymbolTable.h>
  <mlir/Interfaces/InferTypeOpInterface.h>
  <mlir/Interfaces/SideEffectInterfaces.h>
  <mlir/Pass/Pass.h>
  <mlir/Pass/PassManager.h>
  <llvm/ADT/MapVector.h>
  <llvm/ADT/SetVector.h>
  <llvm/ADT/TypeSwitch.h>
  <llvm/Support/FormatVariadic.h>
  <llvm/Support/JSON.h>
  <llvm/Support/raw_ostream.h>
  <algorithm>
  <map>
  <optional>
  <string>
  <vector>
)

# Precompiles the list above for `target`, or with REUSE_FROM <owner> uses the owner's precompiled
# header (same compile flags and definitions: clang refuses a mismatch), which saves building it again
# (15-30 s a target).
function(zcc_precompile_mlir_headers target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "REUSE_FROM" "")
  if(NOT ZCC_PRECOMPILED_HEADERS)
    return()
  endif()
  if(arg_REUSE_FROM)
    target_precompile_headers(${target} REUSE_FROM ${arg_REUSE_FROM})
  else()
    target_precompile_headers(${target} PRIVATE ${ZCC_PRECOMPILED_MLIR_HEADERS})
  endif()
endfunction()
