#!/usr/bin/env python3
"""Turns runtime/cuda's sources into C++ that HIP-CPU runs (test/CudaOnCpu/README.md).

Only what no header can supply is rewritten; every other CUDA name is the shim's
(test/CudaOnCpu/shim). Two forms:
  kernel<<<grid, block[, shared[, stream]]>>>(args)
      -> ::zrt::cudaoncpu::launch({"kernel", maxThreads, address}, grid, block, shared, stream,
                                   [=](auto &&...a) { (kernel)(a...); }, args)
  extern __shared__ [__align__(N)] T name[];
      -> ZRT_CUDA_ON_CPU_DYNAMIC_SHARED(T, name, N);
Line breaks are kept and each copy starts with a #line of its source, so a compiler's or a
sanitizer's report names the line of the .cu file.

  rewrite_launches.py --out DIR [--mutate NAME ...] SOURCES...
      writes DIR/cuda/<file> for each source (.cu files rewritten, headers and .cpp files copied), and
      DIR/CudaKernelNames.inc: every __global__ kernel of the sources (headers included), one "name", a line.
  --mutate applies one of MUTATIONS (a deliberately broken copy, for the test that the
  conformance suite catches it); a mutation whose text is not found is an error.
"""
import argparse
import os
import re
import sys

# name -> (file, the exact text to break, what it becomes). Each must match exactly once.
MUTATIONS = {
    # blockReduce's second barrier: warp 0's thread reads the other warps' partials before
    # they are written.
    "missing-syncthreads": ("RowReduce.cuh",
                            "    warpResult[threadIdx.x / 32] = v;\n  __syncthreads();\n",
                            "    warpResult[threadIdx.x / 32] = v;\n\n"),  # a blank line: the lines keep their numbers
    # softmax's sum over one column past the row: the next row's first element in the sum, the
    # last row's read past its buffer.
    # the communication stream no longer waits for the compute issued before a collective: a
    # reduce-scatter reads gradients the backward has not written yet (host-side stream ordering,
    # for the whole train.bin's test).
    "comm-skips-compute-wait": ("Device.cu",
                                "  ZRT_CUDA_CHECK(cudaStreamWaitEvent(comm_, computeDone_, 0));\n",
                                "\n"),
    # zrt_wait no longer holds the compute stream until the collective it waits on has landed: a
    # layer reads a ZeRO-3 bucket whose gather is still under way, an update reads a gradient shard
    # whose reduce-scatter is (the buffers a plan frees and reuses early look the same to the step).
    "compute-skips-collective-wait": ("Collectives.cu",
                                      "  computeWaits(it->second);\n  r.inFlight.erase(it);\n",
                                      "  r.pool.push_back(it->second);\n  r.inFlight.erase(it);\n"),
    # the MPI transport's reduce-scatter stages its send rotated by one shard: each rank receives
    # the sum of the next rank's shard (one line: the lines keep their numbers).
    "reduce-scatter-wrong-shard": ("HostStagedCommunicator.cpp",
                                   "      toHost(send, a.send, sent * eb);\n",
                                   "      if (sent > a.count) { toHost(send, static_cast<const char *>(a.send) + a.count * eb, "
                                   "(sent - a.count) * eb); toHost(send + (sent - a.count) * eb, a.send, a.count * eb); } "
                                   "else toHost(send, a.send, sent * eb);\n"),
    # the MPI transport's point-to-point exchange (expert parallelism's token rows) unpacks every
    # message from a peer from the start of that peer's block: a rank's second and later local
    # experts get the first one's rows from that peer (one line: the lines keep their numbers).
    "exchange-misplaces-rows": ("HostStagedCommunicator.cpp",
                                "      toDevice(const_cast<void *>(m.buf), recv + at[m.peer] * unitBytes, "
                                "m.units * unitBytes);\n",
                                "      toDevice(const_cast<void *>(m.buf), recv + recvAt[m.peer] * unitBytes, "
                                "m.units * unitBytes);\n"),
    "row-bound-off-by-one": ("RowKernels.cu",
                             "  ZRT_ROW_COLUMNS(c, cols) sum += math::mexp(float(xr[c]) - m);\n",
                             "  ZRT_ROW_COLUMNS(c, cols + 1) sum += math::mexp(float(xr[c]) - m);\n"),
}

# The host files the whole train.bin's broken builds compile from their own folder
# (test/CudaOnCpu/CMakeLists.txt's ZRT_CUDA_ON_CPU_MUTABLE: keep the two lists equal).
MUTABLE_HOST_FILES = ("Device.cu", "Collectives.cu", "HostStagedCommunicator.cpp")
# The kernel files of the suite's broken copies, compiled from each copy's own sources: those that
# include RowReduce.cuh (the block reductions a kernel mutation may break). CMakeLists.txt's
# ZRT_CUDA_ON_CPU_ROW_SOURCES.
MUTABLE_KERNEL_FILES = ("RowKernels.cu", "Moe.cu")

KERNEL_DECL = re.compile(
    r"(template\s*<[^;{]*?>\s*)?__global__\s+(?:void\s+)?(__launch_bounds__\(([^)]*)\)\s+)?(?:void\s+)?"
    r"(__launch_bounds__\(([^)]*)\)\s+)?(\w+)\s*\(")


def kernels(text):
    """[(name, is_template, launch bound or None)] of the __global__ functions in text."""
    found = []
    for m in KERNEL_DECL.finditer(text):
        bound = m.group(3) or m.group(5)
        found.append((m.group(6), m.group(1) is not None, bound))
    return found


def fail(path, text, pos, why):
    line = text.count("\n", 0, pos) + 1
    sys.exit(f"{path}:{line}: error: {why}")


def split_top_level(text):
    """Splits on the commas outside parentheses, brackets and braces."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def kernel_start(text, end):
    """Where the kernel expression that ends at `end` (just before <<<) begins."""
    i = end
    if text[i - 1] == ">":  # explicit template arguments: match the angle brackets back
        depth = 0
        while True:
            i -= 1
            if text[i] == ">":
                depth += 1
            elif text[i] == "<":
                depth -= 1
                if depth == 0:
                    break
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_:"):
        i -= 1
    return i


def rewrite_launches(path, text, templates, bounds):
    out, pos = [], 0
    while True:
        at = text.find("<<<", pos)
        if at < 0:
            out.append(text[pos:])
            return "".join(out)
        begin = kernel_start(text, at)
        kernel = text[begin:at]
        name = re.match(r"[\w:]+", kernel).group(0).split("::")[-1]
        close = text.find(">>>", at)
        if close < 0:
            fail(path, text, at, "<<< without >>>")
        config = split_top_level(text[at + 3:close])
        if not 2 <= len(config) <= 4:
            fail(path, text, at, f"a launch takes 2 to 4 configuration values, not {len(config)}")
        config += ["0", "nullptr"][len(config) - 2:]
        paren = close + 3
        while text[paren].isspace():
            paren += 1
        if text[paren] != "(":
            fail(path, text, close, "a launch's arguments must follow >>>")
        empty = text[paren + 1:].lstrip().startswith(")")
        address = "nullptr" if name in templates and "<" not in kernel else f"reinterpret_cast<const void *>(&{kernel})"
        bound = bounds.get(name) or "0"
        # The configuration's own line breaks are kept so the lines after it keep their numbers.
        breaks = "\n" * text.count("\n", at, paren)
        out.append(text[pos:begin])
        out.append(f"::zrt::cudaoncpu::launch({{\"{name}\", int({bound}), {address}}}, {config[0]}, {config[1]}, "
                   f"{config[2]}, {config[3]}, [=](auto &&...zrtArgs) {{ ({kernel})(zrtArgs...); }}"
                   f"{'' if empty else ','}{breaks}")
        pos = paren + 1


DYNAMIC_SHARED = re.compile(r"extern\s+__shared__\s+(?:__align__\((\d+)\)\s+)?([\w:][\w\s:*]*?)\s+(\w+)\s*\[\s*\]\s*;")


def rewrite(path, text, templates, bounds):
    text = DYNAMIC_SHARED.sub(
        lambda m: f"ZRT_CUDA_ON_CPU_DYNAMIC_SHARED({m.group(2)}, {m.group(3)}, {m.group(1) or 16});", text)
    return rewrite_launches(path, text, templates, bounds)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--mutate", action="append", default=[], choices=sorted(MUTATIONS))
    parser.add_argument("sources", nargs="+")
    args = parser.parse_args()

    texts = {path: open(path, encoding="utf-8").read() for path in args.sources}
    for mutation in args.mutate:
        file, old, new = MUTATIONS[mutation]
        matches = [p for p in texts if os.path.basename(p) == file]
        if len(matches) != 1 or texts[matches[0]].count(old) != 1:
            sys.exit(f"rewrite_launches.py: error: mutation {mutation}: its text is not in {file} exactly once "
                     "(the source changed: update MUTATIONS)")
        texts[matches[0]] = texts[matches[0]].replace(old, new)
        # The broken copies recompile their own (CMakeLists.txt): MUTABLE_KERNEL_FILES for the
        # suite's, one of MUTABLE_HOST_FILES for the whole train.bin's; a mutation must reach no other
        # source (the others are compiled once, unbroken, and linked into every copy).
        reached = {os.path.basename(p) for p in texts if p.endswith((".cu", ".cpp")) and
                   (os.path.basename(p) == file or f'"cuda/{file}"' in texts[p])}
        if not (reached <= set(MUTABLE_KERNEL_FILES) or reached in [{f} for f in MUTABLE_HOST_FILES]):
            sys.exit(f"rewrite_launches.py: error: mutation {mutation} reaches {sorted(reached)}: the broken "
                     f"builds recompile {MUTABLE_KERNEL_FILES} or one of {MUTABLE_HOST_FILES} alone "
                     "(test/CudaOnCpu/CMakeLists.txt)")

    # Kernels defined in headers (.cuh, .h: ColumnSums.cuh's) count as the .cu files' do: the inventory
    # names every __global__ under runtime/cuda.
    found = [k for path in args.sources if path.endswith((".cu", ".cuh", ".h")) for k in kernels(texts[path])]
    templates = {name for name, is_template, _ in found if is_template}
    bounds = {name: bound for name, _, bound in found if bound}
    os.makedirs(os.path.join(args.out, "cuda"), exist_ok=True)
    for path, text in texts.items():
        if path.endswith(".cu"):
            text = rewrite(path, text, templates, bounds)
        # The copy's lines are the source's: a compiler's or a sanitizer's report names the source.
        text = f'#line 1 "{os.path.abspath(path)}"\n' + text
        name = os.path.basename(path)
        target = os.path.join(args.out, "cuda", name[:-3] + ".cpp" if name.endswith(".cu") else name)
        # Unchanged files keep their time stamp: ninja rebuilds only what a change reaches.
        if os.path.exists(target) and open(target, encoding="utf-8").read() == text:
            continue
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
    names = sorted({name for name, _, _ in found})
    inc = "".join(f'"{name}",\n' for name in names)
    target = os.path.join(args.out, "CudaKernelNames.inc")
    if not (os.path.exists(target) and open(target, encoding="utf-8").read() == inc):
        with open(target, "w", encoding="utf-8") as f:
            f.write(inc)


if __name__ == "__main__":
    main()
