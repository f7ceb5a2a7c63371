# lit configuration of the zcc suite: FileCheck tests over zcc-opt and zcc.
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ZCC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
# corpus: the fuzzer's inputs (test/Fuzz), which zcc-fuzz-smoke runs; not lit tests.
config.excludes = ["Inputs", "Runtime", "corpus", "CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.zcc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%zcc_src_root", config.zcc_src_root))
# Captured variables are scoped to their CHECK-LABEL block.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope --dump-input=fail"

# The CPU-path switches pass through, so the whole suite can run as on another CPU
# (ONEDNN_MAX_CPU_ISA=AVX2 ZRT_ISA=avx2: as on one without AVX-512).
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP", "ZRT_ISA", "ZRT_BF16_MATMUL",
                                     "ZRT_F32_MATMUL", "ZRT_MATMUL_TUNE", "ZRT_MATMUL_CACHE", "XDG_CACHE_HOME",
                                     "ONEDNN_MAX_CPU_ISA"])
llvm_config.use_default_substitutions()

if config.zcc_have_cuda:
    config.available_features.add("cuda")
# A GPU this process can use (the CUDA backend's no-GPU behaviour is tested without one).
import shutil, subprocess
if shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0:
    config.available_features.add("gpu")
if config.zcc_enable_mpi:
    config.available_features.add("mpi")

tool_dirs = [config.zcc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["zcc", "zcc-opt", "zcc-calibrate"], tool_dirs)
# `not`, `count` and FileCheck by name, also where a substitution does not apply.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.zcc_tools_dir, append_path=True)
