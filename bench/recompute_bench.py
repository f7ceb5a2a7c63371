#!/usr/bin/env python3
"""Activation recomputation, measured: one model compiled with --recompute none, selective
and full at each ZeRO stage asked for, then each run interleaved several times. Prints, per
stage and as ratios to none, the peak activation bytes of the memory plan (zcc --report=json:
activation_peak_bytes), the arena, the recompute FLOPs (and their share of the step's) and the
median step time; and checks each stage's three loss curves are bitwise equal. --markdown
writes the table the README shows.

The peer with per-block activation checkpointing (PyTorch FSDP2 and DeepSpeed at stage 3,
set up as their users set them up) is bench/peers_bench.py's row `recompute=full`:
  bench/peers_bench.py --size shakespeare-char --rows "np=2,stage=3;np=2,stage=3,recompute=full"

usage: bench/recompute_bench.py [--size shakespeare-char | --model FILE.mlir] [--np 2]
                                [--stages 0,1,2,3] [--steps 8] [--repeats 2] [--threads 1]
                                [--markdown F] [--zcc build/bin/zcc]
--size: a preset of bench/peers_bench.py (shakespeare-char, gpt2-124m, ...).
"""
import argparse, json, os, platform, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from peers_bench import PRESETS, model_file

POLICIES = ["none", "selective", "full"]


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zcc", default=os.path.join(ROOT, "build/bin/zcc"))
    ap.add_argument("--size", choices=sorted(PRESETS), help="a peers_bench.py preset")
    ap.add_argument("--model", help="a model file (default: examples/gpt.mlir)")
    ap.add_argument("--data", default=os.path.join(ROOT, "test/Inputs/corpus.txt"))
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--stages", default="0,3", help="comma-separated ZeRO stages")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="compute threads per rank")
    ap.add_argument("--markdown", help="write the table here too")
    a = ap.parse_args()
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS=str(a.threads))
    stages = [int(s) for s in a.stages.split(",")]
    lines = []
    with tempfile.TemporaryDirectory() as work:
        model = model_file(a.size, work) if a.size else (a.model or os.path.join(ROOT, "examples/gpt.mlir"))
        name = a.size or os.path.basename(model)
        data = ["--synthetic"] if model.endswith("mlp.mlir") else ["--data", a.data]
        lines += [f"**{name}**, {a.np} ranks, {a.threads} thread(s) a rank, {cpu_name()}; median step of "
                  f"{a.repeats} interleaved runs of {a.steps} steps (2 warm-up); ratios to none.", "",
                  "| ZeRO | recompute | activation peak MB | arena MB | recompute FLOPs (of the step's) "
                  "| step ms | losses |",
                  "|---|---|---|---|---|---|---|"]
        failed = False
        for stage in stages:
            reports, times, losses = {}, {p: [] for p in POLICIES}, {}
            for p in POLICIES:
                exe = os.path.join(work, f"z{stage}-{p}.bin")
                subprocess.run([a.zcc, model, "-o", exe, "--world-size", str(a.np), "--zero-stage", str(stage),
                                "--recompute", p, "--report=json"], check=True)
                reports[p] = json.load(open(exe + ".report.json"))
            for _ in range(a.repeats):
                for p in POLICIES:
                    log = os.path.join(work, f"z{stage}-{p}.jsonl")
                    cmd = [os.path.join(work, f"z{stage}-{p}.bin"), "--steps", str(a.steps), "--log-every", "1",
                           "--log-json", log] + data
                    if a.np > 1:
                        cmd = ["mpirun", "-np", str(a.np)] + cmd
                    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                    rows = [json.loads(l) for l in open(log)]
                    times[p].append(statistics.median(r["step_ms"] for r in rows[2:]))
                    losses[p] = [r["loss"] for r in rows]
            base, base_ms = reports["none"], statistics.median(times["none"])
            equal = all(losses[p] == losses["none"] for p in POLICIES)
            failed |= not equal
            for p in POLICIES:
                r, ms = reports[p], statistics.median(times[p])
                rc = r["recompute"]
                lines.append(
                    f"| {stage} | {p} | {r['activation_peak_bytes'] / 1e6:.1f} "
                    f"({r['activation_peak_bytes'] / base['activation_peak_bytes']:.3f}x) | "
                    f"{r['arena_bytes'] / 1e6:.1f} ({r['arena_bytes'] / base['arena_bytes']:.3f}x) | "
                    f"{rc['flops_per_step'] / 1e9:.2f} G ({100 * rc['flops_per_step'] / rc['step_flops']:.2f}%) | "
                    f"{ms:.1f} ({ms / base_ms:.3f}x) | {'bitwise equal' if equal else 'DIFFER'} |")
            print(lines[-3], lines[-2], lines[-1], sep="\n", flush=True)
    print("\n".join(lines))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    if failed:
        sys.exit("FAIL: recomputation changed the losses")


if __name__ == "__main__":
    main()
