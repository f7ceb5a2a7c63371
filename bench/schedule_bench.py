#!/usr/bin/env python3
"""Bucketing and overlap scheduling, measured: one model at one ZeRO stage and world size,
compiled three ways, then run interleaved several times.

  unbucketed  --bucket-mb 0 --gather-bucket-mb 0 --no-overlap   (one blocking call per tensor)
  bucketed    --no-overlap                                       (zcc-bucket only)
  scheduled   (default: zcc-bucket + zcc-schedule)

Prints collective calls and bytes per step (zcc --report=json), the median step time of each
and the ratios, and checks the three loss curves agree (bucketing and scheduling must not change
the numbers beyond reduction order).

usage: bench/schedule_bench.py [--zcc build/bin/zcc] [--model examples/gpt.mlir] [--np 4]
                               [--stage 3] [--steps 30] [--repeats 5] [--threads 1]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANTS = {
    "unbucketed": ["--bucket-mb", "0", "--gather-bucket-mb", "0", "--no-overlap"],
    "bucketed": ["--no-overlap"],
    "scheduled": [],
}

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zcc", default=os.path.join(ROOT, "build/bin/zcc"))
    ap.add_argument("--model", default=os.path.join(ROOT, "examples/gpt.mlir"))
    ap.add_argument("--data", default=os.path.join(ROOT, "test/Inputs/corpus.txt"))
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--stage", type=int, default=3)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS=str(a.threads))
    data = ["--synthetic"] if a.model.endswith("mlp.mlir") else ["--data", a.data]
    with tempfile.TemporaryDirectory() as work:
        reports, times, losses = {}, {v: [] for v in VARIANTS}, {}
        for name, flags in VARIANTS.items():
            exe = os.path.join(work, name + ".bin")
            subprocess.run([a.zcc, a.model, "-o", exe, "--world-size", str(a.np), "--zero-stage", str(a.stage),
                            "--report=json"] + flags, check=True)
            reports[name] = json.load(open(exe + ".report.json"))
        for _ in range(a.repeats):
            for name in VARIANTS:
                log = os.path.join(work, name + ".jsonl")
                subprocess.run(["mpirun", "-np", str(a.np), os.path.join(work, name + ".bin"), "--steps",
                                str(a.steps), "--log-every", "1", "--log-json", log] + data,
                               check=True, stdout=subprocess.DEVNULL)
                rows = [json.loads(l) for l in open(log)]
                # Skip the first two steps (warm-up).
                times[name].append(statistics.median(r["step_ms"] for r in rows[2:]))
                losses[name] = [r["loss"] for r in rows]
    print(f"{os.path.basename(a.model)}, ZeRO-{a.stage}, {a.np} ranks, {a.threads} thread(s) per rank, "
          f"{a.steps} steps x {a.repeats} runs (median step time of each run, then median of runs)")
    median = {}
    for name in VARIANTS:
        r = reports[name]
        c = r["collectives"]
        calls = c["all_gather"] + c["reduce_scatter"] + c["all_reduce"]
        median[name] = statistics.median(times[name])
        print(f"  {name:11s} {calls:4d} collectives/step ({c['all_gather']} all-gather, {c['reduce_scatter']} "
              f"reduce-scatter, {c['all_reduce']} all-reduce), {r['comm_bytes']} B sent, arena "
              f"{r['arena_bytes']} B, predicted exposed comm {r['predicted']['exposed_comm_s'] * 1e3:.2f} ms, "
              f"step {median[name]:.2f} ms")
    base = reports["unbucketed"]["collectives"]
    calls = lambda n: sum(reports[n]["collectives"][k] for k in ("all_gather", "reduce_scatter", "all_reduce"))
    print(f"  collectives: {calls('unbucketed')} -> {calls('bucketed')} ({calls('unbucketed') / calls('bucketed'):.1f}x fewer)")
    print(f"  step time: bucketed / unbucketed = {median['bucketed'] / median['unbucketed']:.3f}, "
          f"scheduled / bucketed = {median['scheduled'] / median['bucketed']:.3f}")
    worst = max(abs(x - y) / abs(x) for n in VARIANTS for x, y in zip(losses["unbucketed"], losses[n]))
    print(f"  losses: worst relative difference to unbucketed {worst:.2e}")
    if worst > 1e-4:
        sys.exit("FAIL: bucketing or scheduling changed the losses")

if __name__ == "__main__":
    main()
