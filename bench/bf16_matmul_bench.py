#!/usr/bin/env python3
"""bf16 training on each bf16 matmul path against fp32, on this machine and as a CPU without
AVX-512 would run it. One model compiled with --precision fp32 and bf16; every run interleaved
with the others, several times; the median over runs of each run's median step time (the runs'
range beside it), as a ratio to fp32 under the same CPU setting (the real-sizes issue's target:
bf16 at most 1.0x fp32 where the CPU has no native bf16, under 1.0x where it has; without AMX the
native bf16 dot product runs at half the f32 FMA's flops, zrt-roofline's bf16 line).

CPU settings:
  this CPU     oneDNN and the runtime pick their own paths; the bf16 rows are the path `auto`
               picks (native where oneDNN has AMX, else widened) and each path forced
               (ZRT_BF16_MATMUL=widen|native; native is left out where oneDNN has none)
  AVX2 CPU     ONEDNN_MAX_CPU_ISA=AVX2 and ZRT_ISA=avx2 (as on an AMD EPYC with AVX2 and FMA
               only): oneDNN has no bf16 matmul there, so bf16 runs widened

usage: bench/bf16_matmul_bench.py [--zcc build/bin/zcc] [--model examples/gpt.mlir] [--np 1]
                                  [--steps 30] [--repeats 3] [--threads 2]
A larger GPT: python3 examples/gen_gpt.py --layers 6 --dim 384 --heads 6 --context 256 > /tmp/g.mlir
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AVX2_CPU = {"ONEDNN_MAX_CPU_ISA": "AVX2", "ZRT_ISA": "avx2"}
# (row name, CPU setting, precision, extra environment)
RUNS = [
    ("fp32", "this CPU", "fp32", {}),
    ("bf16 auto", "this CPU", "bf16", {}),
    ("bf16 widen", "this CPU", "bf16", {"ZRT_BF16_MATMUL": "widen"}),
    ("bf16 native", "this CPU", "bf16", {"ZRT_BF16_MATMUL": "native"}),
    ("fp32", "AVX2 CPU", "fp32", AVX2_CPU),
    ("bf16 auto", "AVX2 CPU", "bf16", AVX2_CPU),
]

# What train.bin says when ZRT_BF16_MATMUL=native cannot run on this CPU.
NO_NATIVE = "ZRT_BF16_MATMUL=native: oneDNN has no bf16 matmul on this CPU"

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zcc", default=os.path.join(ROOT, "build/bin/zcc"))
    ap.add_argument("--model", default=os.path.join(ROOT, "examples/gpt.mlir"))
    ap.add_argument("--data", default=os.path.join(ROOT, "docs/dialect.md"))
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS=str(a.threads))
    data = ["--synthetic"] if a.model.endswith("mlp.mlir") else ["--data", a.data]
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    with tempfile.TemporaryDirectory() as work:
        for precision in ("fp32", "bf16"):
            subprocess.run([a.zcc, a.model, "-o", os.path.join(work, precision + ".bin"), "--world-size",
                            str(a.np), "--precision", precision], check=True)
        times, backends, losses = [[] for _ in RUNS], [""] * len(RUNS), [None] * len(RUNS)
        for _ in range(a.repeats):
            for i, (_, _, precision, env) in enumerate(RUNS):
                log = os.path.join(work, f"run{i}.jsonl")
                cmd = [os.path.join(work, precision + ".bin"), "--steps", str(a.steps), "--log-every", "1",
                       "--log-json", log] + data
                if a.np > 1:
                    cmd = ["mpirun", "-np", str(a.np)] + cmd
                done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **env))
                if done.returncode != 0 and NO_NATIVE in done.stderr:
                    backends[i] = "left out: oneDNN has no bf16 matmul on this CPU"
                    continue
                if done.returncode != 0:
                    sys.exit(f"{RUNS[i][0]} ({RUNS[i][1]}) failed:\n{done.stderr}")
                out = done.stdout
                backends[i] = next(l for l in out.splitlines() if l.startswith("zcc: backend"))[len("zcc: backend "):]
                rows = [json.loads(l) for l in open(log)]
                times[i].append(statistics.median(r["step_ms"] for r in rows[2:]))
                losses[i] = rows[-1]["loss"]
    print(f"{os.path.basename(a.model)}, {a.np} rank(s), {a.threads} thread(s), {a.steps} steps x "
          f"{a.repeats} runs, CPU: {cpu}")
    fp32_ms = {setting: statistics.median(times[i]) for i, (name, setting, _, _) in enumerate(RUNS) if name == "fp32"}
    for i, (name, setting, _, _) in enumerate(RUNS):
        if not times[i]:
            print(f"  {setting:8s}  {name:10s}  {backends[i]}")
            continue
        ms = statistics.median(times[i])
        print(f"  {setting:8s}  {name:10s}  {ms:8.2f} ms/step ({min(times[i]):.2f}-{max(times[i]):.2f})  "
              f"{ms / fp32_ms[setting]:.3f}x fp32  final loss {losses[i]:.6f}  [{backends[i]}]")

if __name__ == "__main__":
    main()
