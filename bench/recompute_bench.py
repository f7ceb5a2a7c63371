#!/usr/bin/env python3
"""Activation recomputation, measured: one model compiled with --recompute none, selective
and full, then each run interleaved several times. Prints, as ratios to none, the peak
activation bytes of the memory plan (zcc --report=json: activation_peak_bytes), the arena,
the recompute FLOPs and the median step time; and checks the three loss curves are
bitwise equal.

usage: bench/recompute_bench.py [--zcc build/bin/zcc] [--model examples/gpt.mlir] [--np 1]
                                [--stage 0] [--steps 20] [--repeats 3] [--threads 2]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLICIES = ["none", "selective", "full"]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zcc", default=os.path.join(ROOT, "build/bin/zcc"))
    ap.add_argument("--model", default=os.path.join(ROOT, "examples/gpt.mlir"))
    ap.add_argument("--data", default=os.path.join(ROOT, "docs/dialect.md"))
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--stage", type=int, default=0)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS=str(a.threads))
    data = ["--synthetic"] if a.model.endswith("mlp.mlir") else ["--data", a.data]
    with tempfile.TemporaryDirectory() as work:
        reports, times, losses = {}, {p: [] for p in POLICIES}, {}
        for p in POLICIES:
            exe = os.path.join(work, p + ".bin")
            subprocess.run([a.zcc, a.model, "-o", exe, "--world-size", str(a.np), "--zero-stage", str(a.stage),
                            "--recompute", p, "--report=json"], check=True)
            reports[p] = json.load(open(exe + ".report.json"))
        for _ in range(a.repeats):
            for p in POLICIES:
                log = os.path.join(work, p + ".jsonl")
                cmd = [os.path.join(work, p + ".bin"), "--steps", str(a.steps), "--log-every", "1",
                       "--log-json", log] + data
                if a.np > 1:
                    cmd = ["mpirun", "-np", str(a.np)] + cmd
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                rows = [json.loads(l) for l in open(log)]
                times[p].append(statistics.median(r["step_ms"] for r in rows[2:]))
                losses[p] = [r["loss"] for r in rows]
    print(f"{os.path.basename(a.model)}, ZeRO-{a.stage}, {a.np} rank(s), {a.threads} thread(s), "
          f"{a.steps} steps x {a.repeats} runs")
    base = reports["none"]
    base_ms = statistics.median(times["none"])
    for p in POLICIES:
        r, ms = reports[p], statistics.median(times[p])
        print(f"  {p:9s} activation peak {r['activation_peak_bytes']:>10d} B "
              f"({r['activation_peak_bytes'] / base['activation_peak_bytes']:.3f}x), arena {r['arena_bytes']:>10d} B "
              f"({r['arena_bytes'] / base['arena_bytes']:.3f}x), recompute {r['recompute']['flops_per_step']:>11d} "
              f"FLOPs/step, step {ms:.2f} ms ({ms / base_ms:.3f}x)")
    if any(losses[p] != losses["none"] for p in POLICIES):
        sys.exit("FAIL: recomputation changed the losses")
    print("  losses: bitwise equal")

if __name__ == "__main__":
    main()
