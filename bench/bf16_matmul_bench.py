#!/usr/bin/env python3
"""bf16 training on the matmul plan zcc chooses by measuring (the default) against each bf16 path
forced for every product, and against fp32, on this CPU and as a CPU without AVX-512 would run
it. The targets (the measured-choice issue): the default within 3% of the faster forced path;
where the CPU's bf16 peak is above its f32 peak, bf16 steps at most 0.75x of fp32's.

Every run is interleaved with the others, several times; each row is the median over runs of each
run's median step time (the runs' range beside it). The plan's cache is one file for the whole
bench (the first run of a setting measures, the rest read it); step times never include it.

CPU settings:
  this CPU     oneDNN and the runtime pick their own paths; bf16 on the plan, then each path
               forced (ZRT_BF16_MATMUL=widen|native; native left out where oneDNN has none)
  AVX2 CPU     ONEDNN_MAX_CPU_ISA=AVX2, ZRT_ISA=avx2, OPENBLAS_CORETYPE=Haswell (as on an AMD EPYC with AVX2 and FMA
               only): oneDNN has no bf16 matmul there, so bf16 runs widened

usage: bench/bf16_matmul_bench.py [--size example|shakespeare-char|gpt2-124m] [--np 1] [--steps N]
                                  [--repeats 3] [--threads 1] [--markdown FILE]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AVX2_CPU = {"ONEDNN_MAX_CPU_ISA": "AVX2", "ZRT_ISA": "avx2", "OPENBLAS_CORETYPE": "Haswell"}
# (row name, CPU setting, precision, extra environment)
RUNS = [
    ("fp32", "this CPU", "fp32", {}),
    ("bf16 plan", "this CPU", "bf16", {}),
    ("bf16 widen", "this CPU", "bf16", {"ZRT_BF16_MATMUL": "widen"}),
    ("bf16 native", "this CPU", "bf16", {"ZRT_BF16_MATMUL": "native"}),
    ("fp32", "AVX2 CPU", "fp32", AVX2_CPU),
    ("bf16 plan", "AVX2 CPU", "bf16", AVX2_CPU),
]
SIZES = {
    "example": dict(model="examples/gpt.mlir", steps=30),
    # nanoGPT's shakespeare-char model (10.7M parameters).
    "shakespeare-char": dict(gen=["--layers", "6", "--dim", "384", "--heads", "6", "--context", "256", "--batch", "8"],
                             steps=10),
    # GPT-2 small (124M), 4 x 1024 tokens a step.
    "gpt2-124m": dict(gen=["--layers", "12", "--dim", "768", "--heads", "12", "--context", "1024", "--batch", "4",
                           "--vocab", "50304"], steps=4),
}
# What train.bin says when ZRT_BF16_MATMUL=native cannot run on this CPU.
NO_NATIVE = "ZRT_BF16_MATMUL=native: oneDNN has no bf16 matmul on this CPU"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zcc", default=os.path.join(ROOT, "build/bin/zcc"))
    ap.add_argument("--size", default="example", choices=sorted(SIZES))
    ap.add_argument("--data", default=os.path.join(ROOT, "test/Inputs/corpus.txt"))
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--steps", type=int)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--markdown", help="also write the table here")
    ap.add_argument("--skip-avx2", action="store_true", help="leave out the AVX2 CPU setting")
    ap.add_argument("--only", help="','-separated run names of this CPU to keep (e.g. 'bf16 plan,bf16 native')")
    a = ap.parse_args()
    size = SIZES[a.size]
    steps = a.steps or size["steps"]
    runs = [r for r in RUNS if not (a.skip_avx2 and r[1] == "AVX2 CPU")]
    if a.only:
        keep = a.only.split(",")
        runs = [r for r in runs if r[1] == "this CPU" and r[0] in keep]
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    flags = next((l.split(":", 1)[1].split() for l in open("/proc/cpuinfo") if l.startswith("flags")), [])
    isa = [f for f in ("avx512f", "avx512_bf16", "amx_bf16") if f in flags]
    with tempfile.TemporaryDirectory() as work:
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                          OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS=str(a.threads),
                          ZRT_MATMUL_CACHE=os.path.join(work, "matmul-paths.txt"))
        model = os.path.join(ROOT, size["model"]) if "model" in size else os.path.join(work, "model.mlir")
        if "gen" in size:
            with open(model, "w") as f:
                subprocess.run([sys.executable, os.path.join(ROOT, "examples/gen_gpt.py")] + size["gen"], stdout=f,
                               check=True)
        for precision in ("fp32", "bf16"):
            subprocess.run([a.zcc, model, "-o", os.path.join(work, precision + ".bin"), "--world-size", str(a.np),
                            "--precision", precision], check=True)
        times, plans, losses = [[] for _ in runs], [""] * len(runs), [None] * len(runs)
        for _ in range(a.repeats):
            for i, (_, _, precision, env) in enumerate(runs):
                if plans[i].startswith("left out"):
                    continue
                log = os.path.join(work, f"run{i}.jsonl")
                cmd = [os.path.join(work, precision + ".bin"), "--steps", str(steps), "--log-every", "1",
                       "--log-json", log, "--data", a.data]
                if a.np > 1:
                    cmd = ["mpirun", "-np", str(a.np)] + cmd
                done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **env))
                if done.returncode != 0 and NO_NATIVE in done.stderr:
                    plans[i] = "left out: oneDNN has no bf16 matmul on this CPU"
                    continue
                if done.returncode != 0:
                    sys.exit(f"{runs[i][0]} ({runs[i][1]}) failed:\n{done.stderr}")
                plans[i] = next(l for l in done.stdout.splitlines()
                                if l.startswith("zcc: matmul paths:"))[len("zcc: matmul paths: "):]
                rows = [json.loads(l) for l in open(log)]
                times[i].append(statistics.median(r["step_ms"] for r in rows[min(2, len(rows) - 1):]))
                losses[i] = rows[-1]["loss"]
    median = {i: statistics.median(t) for i, t in enumerate(times) if t}
    fp32_ms = {runs[i][1]: median[i] for i in median if runs[i][0] == "fp32"}
    fp32_ms.setdefault("this CPU", float("nan"))
    lines = [f"{a.size}, {a.np} rank(s), {a.threads} thread(s) a rank, {steps} steps x {a.repeats} runs; CPU: {cpu} "
             f"({', '.join(isa) or 'no AVX-512'})", "",
             "| setting | run | ms/step (range) | vs fp32 | final loss | paths |", "|---|---|---|---|---|---|"]
    for i, (name, setting, _, _) in enumerate(runs):
        if i not in median:
            lines.append(f"| {setting} | {name} | - | - | - | {plans[i]} |")
            continue
        lines.append(f"| {setting} | {name} | {median[i]:.1f} ({min(times[i]):.1f}-{max(times[i]):.1f}) | "
                     f"{median[i] / fp32_ms.get(setting, float('nan')):.3f}x | {losses[i]:.6f} | {plans[i]} |")
    forced = [median[i] for i, r in enumerate(runs) if r[1] == "this CPU" and r[0] in ("bf16 widen", "bf16 native")
              and i in median]
    plan = next(median[i] for i, r in enumerate(runs) if r[1] == "this CPU" and r[0] == "bf16 plan")
    lines += ["", f"bf16 plan / faster forced path: {plan / min(forced):.3f}x (target at most 1.03); "
                  f"bf16 plan / fp32: {plan / fp32_ms['this CPU']:.3f}x"]
    print("\n".join(lines))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
