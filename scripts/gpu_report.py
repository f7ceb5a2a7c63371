#!/usr/bin/env python3
"""The table scripts/gpu-check.sh prints: one row per GPU run.

  gpu_report.py RUNS.json

RUNS.json: a list of runs, each {"name", "model" (the .mlir), "gpus", "zero", "precision", "gpu_log" (train.bin
--log-json of the GPU run), "cpu_log" (the CPU backend's, same model, same first steps), "device" (nvidia-smi's
name), "device_mib" (the largest memory nvidia-smi saw the run's processes use, per GPU), "warmup"}.

Columns: tokens/s (all GPUs), MFU (model FLOPs including attention, PaLM's count: 6 N + 12 L T C per token, over
the devices' dense bf16 peak looked up from their name), the median step time after the warm-up, the arena the
compiler planned against the memory each GPU held, and the worst relative loss difference to the CPU backend over
the steps both ran. Exit 1 when a run's losses leave the tolerance (1e-3 fp32, 2e-2 bf16).
"""
import json
import re
import sys

# Dense bf16 tensor-core peak (TFLOP/s, no sparsity) by device name, from the vendors' data sheets.
PEAKS = [
    (r"H200", 989.4),
    (r"H100.*(SXM|HBM3)", 989.4),
    (r"H100.*NVL", 835.0),
    (r"H100", 756.0),          # PCIe
    (r"GH200", 989.4),
    (r"B200", 2250.0),
    (r"A100", 312.0),
    (r"A800", 312.0),
    (r"L40S", 362.1),
    (r"L40", 181.0),
    (r"L4\b", 121.0),
    (r"A10G", 70.0),
    (r"A10\b", 125.0),
    (r"RTX 4090", 165.2),
    (r"RTX 6000 Ada", 364.2),
    (r"V100", 125.0),          # fp16: no bf16 tensor cores
]


def peak_tflops(device):
    for pattern, tflops in PEAKS:
        if re.search(pattern, device):
            return tflops
    return None


def model_shape(path):
    """(parameters, layers, context, width) from a zc module: parameter shapes, attention ops, the batch."""
    text = open(path).read()
    params = 0
    for dims in re.findall(r"^zc\.param @\S+ : tensor<([0-9x]+)x(?:f32|bf16)>", text, re.M):
        n = 1
        for d in dims.split("x"):
            n *= int(d)
        params += n
    layers = len(re.findall(r"= zc\.causal_attention ", text))
    forward = re.search(r"^zc\.forward @\S+\(%\w+: tensor<(\d+)x(\d+)xi32>", text, re.M)
    attention = re.search(r"zc\.causal_attention .* : tensor<\d+x\d+x(\d+)x", text)
    width = int(attention.group(1)) if attention else 0
    return params, layers, int(forward.group(2)), width


def print_table(header, rows):
    """A Markdown table, columns padded to their widest cell (bench/gpu_bench.py prints its own with it)."""
    widths = [max(len(r[i]) for r in list(rows) + [header]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else float("nan")


def main():
    runs = json.load(open(sys.argv[1]))
    header = ("run", "GPUs", "ZeRO", "prec", "tokens/s", "MFU", "step ms", "planned MiB", "device MiB", "vs CPU")
    rows, failed = [], []
    for run in runs:
        gpu = [json.loads(line) for line in open(run["gpu_log"])]
        cpu = [json.loads(line) for line in open(run["cpu_log"])] if run.get("cpu_log") else []
        timed = gpu[run.get("warmup", 2):] or gpu
        step_s = median([r["step_ms"] for r in timed]) / 1e3
        tokens = median([r["tokens_per_s"] for r in timed])  # the global batch's tokens
        params, layers, context, width = model_shape(run["model"])
        flops_per_token = 6 * params + 12 * layers * context * width
        peak = peak_tflops(run["device"])
        mfu = f"{flops_per_token * tokens / (peak * 1e12 * run['gpus']):.1%}" if peak else "n/a"
        planned = gpu[-1].get("planned_arena_bytes", 0) / 2**20
        worst = max((abs(a["loss"] - b["loss"]) / abs(a["loss"]) for a, b in zip(cpu, gpu)), default=float("nan"))
        tolerance = 2e-2 if run["precision"] == "bf16" else 1e-3
        if cpu and not worst <= tolerance:
            failed.append(run["name"])
        rows.append((run["name"], str(run["gpus"]), str(run["zero"]), run["precision"], f"{tokens:,.0f}", mfu,
                     f"{step_s * 1e3:.1f}", f"{planned:,.0f}", f"{run.get('device_mib', 0):,.0f}",
                     f"{worst:.1e}" if cpu else "n/a"))
    print_table(header, rows)
    devices = sorted({run["device"] for run in runs})
    print(f"device: {', '.join(devices)}; dense bf16 peak "
          f"{', '.join(str(peak_tflops(d)) for d in devices)} TFLOP/s (table in scripts/gpu_report.py)")
    if failed:
        print(f"FAIL: losses off the CPU backend's: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
