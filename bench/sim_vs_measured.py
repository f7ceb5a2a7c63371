#!/usr/bin/env python3
"""zcc --simulate against measurement on this machine (issue 40, "here, against measurement").

    python3 bench/sim_vs_measured.py [--np 2 4] [--models shakespeare-char gpt-small llama-small llama-medium]
                                     [--sample K | --all | --pipelines] [--steps 8] [--repeat 3] [--out DIR]

For each model and rank count: calibrate this machine as a cluster (zcc-calibrate --cluster-out,
with that many ranks running at once, OMP_NUM_THREADS=1), enumerate the legal plans (tensor,
pipeline and data ranks; ZeRO 0-3; gradient accumulation 1/2/4; recompute none/selective/full;
optimizer offload none/cpu), measure each one's median step (train.bin --synthetic, the steps after
the first two) in --repeat separate runs (all plans once before any again), take the median of the
runs as the plan's measured step and their range as its run-to-run spread, predict it (zcc
--simulate --cluster), then report the median and largest absolute error, Kendall's tau between the
predicted and measured orders, and where the plan zcc --plan auto chooses for the same ranks lands
among the measured ones.

Kendall's tau is taken over the pairs of plans whose measured steps differ by more than twice the
larger of their two spreads (issue 59's restated bar): a pair closer than that has no measured
order on this machine (a shared VM moves a run by up to 20%), so no prediction can be right or
wrong about it. The tau over every pair is printed beside it.

--sample K measures K plans per model and rank count (the whole space takes hours on 2 cores),
stratified: each pick is the plan whose values (tp, pp, ZeRO stage, accumulation, recompute,
offload, schedule, and the mesh of tp and pp) have been picked least so far, ties broken by a seeded shuffle, so every value
of every dimension is measured before any is measured twice.
"""
import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
MODELS = {
    # nanoGPT's shakespeare-char (10.7M parameters), as bench/peers_bench.py trains it.
    "shakespeare-char": ["gen_gpt.py", "--layers", "6", "--dim", "384", "--heads", "6", "--context", "256",
                         "--vocab", "65", "--batch", "16"],
    "gpt-small": ["gen_gpt.py", "--layers", "4", "--dim", "256", "--heads", "8", "--context", "128", "--batch", "16"],
    "llama-small": ["gen_llama.py", "--layers", "4", "--dim", "256", "--heads", "8", "--kv-heads", "4", "--ffn", "688",
                    "--context", "128", "--vocab", "256", "--batch", "16"],
    "llama-medium": ["gen_llama.py", "--layers", "6", "--dim", "384", "--heads", "6", "--kv-heads", "2", "--ffn",
                     "1024", "--context", "256", "--vocab", "256", "--batch", "16"],
}
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")


def plans(ranks):
    for tp, pp in itertools.product([d for d in (1, 2, 4) if ranks % d == 0], repeat=2):
        if ranks % (tp * pp):
            continue
        dp = ranks // (tp * pp)
        for zero in (range(4) if dp > 1 else [0]):
            if pp > 1 and zero == 3:
                continue
            for accum, recompute in itertools.product((1, 2, 4), ("none", "selective", "full")):
                for offload in (("none", "cpu") if zero >= 1 else ("none",)):
                    # A pipeline under each schedule train.bin runs (issue 57: the simulator times the
                    # same table; interleaved over 2 chunks per rank where the micro-batches come in
                    # groups of the pipeline ranks; ZB-V's 2 chunks in a V); with one micro-batch there
                    # is nothing to schedule.
                    schedules = ["1f1b"]
                    if pp > 1 and accum > 1:
                        schedules += ["zb-h1"] + (["interleaved-1f1b"] if accum % pp == 0 else []) + ["zbv"]
                    for schedule in schedules:
                        yield dict(tp=tp, pp=pp, dp=dp, zero=zero, accum=accum, recompute=recompute, offload=offload,
                                   schedule=schedule, interleave=2 if schedule in ("interleaved-1f1b", "zbv") else 1)


def flags(p, ranks):
    return ["--world-size", str(ranks), "--tp", str(p["tp"]), "--pp", str(p["pp"]), "--zero-stage", str(p["zero"]),
            "--grad-accum", str(p["accum"]), "--recompute", p["recompute"], "--offload-optimizer", p["offload"],
            "--pp-schedule", p.get("schedule", "1f1b"), "--pp-interleave", str(p.get("interleave", 1))]


def name(p):
    s = f"tp{p['tp']} pp{p['pp']} dp{p['dp']} ZeRO-{p['zero']} accum {p['accum']} {p['recompute']}"
    if p["pp"] > 1:
        s += " " + p.get("schedule", "1f1b") + (f" x{p['interleave']}" if p.get("interleave", 1) > 1 else "")
    return s + (" offload" if p["offload"] != "none" else "")


def measure(model, p, ranks, steps, work, cluster):
    # Compiled for the same cluster as predicted: its bucket sizes come from the cluster's links.
    exe, log = os.path.join(work, "train.bin"), os.path.join(work, "log.jsonl")
    subprocess.run([os.path.join(BIN, "zcc"), model, "-o", exe, "--cluster", cluster] + flags(p, ranks), check=True,
                   env=ENV, capture_output=True)
    if os.path.exists(log):
        os.remove(log)
    subprocess.run(["mpirun", "-np", str(ranks), exe, "--synthetic", "--steps", str(steps), "--log-every", "1",
                    "--log-json", log], check=True, env=ENV, capture_output=True)
    times = [json.loads(line)["step_ms"] for line in open(log)][2:]
    return statistics.median(times) / 1e3


def predict(model, p, ranks, cluster):
    out = subprocess.run([os.path.join(BIN, "zcc"), model, "--simulate", "--cluster", cluster, "--report=json"] +
                         flags(p, ranks), check=True, env=ENV, capture_output=True, text=True).stdout
    return json.loads(out)["simulated"]["step_s"]


DIMENSIONS = ("tp", "pp", "zero", "accum", "recompute", "offload", "schedule")


def strata(p):
    """The values a stratified sample spreads: each dimension's, and the mesh (tp, pp) as one."""
    return [(d, p[d]) for d in DIMENSIONS] + [("mesh", (p["tp"], p["pp"]))]


def stratified(space, k, seed):
    """k plans of `space`: each the one whose dimension values were picked least so far."""
    rest = list(space)
    random.Random(seed).shuffle(rest)
    counts, chosen = {}, []
    while rest and len(chosen) < k:
        best = max(rest, key=lambda p: sum(1.0 / (1 + counts.get(v, 0)) for v in strata(p)))
        rest.remove(best)
        chosen.append(best)
        for v in strata(best):
            counts[v] = counts.get(v, 0) + 1
    return chosen


def kendall(a, b, resolved=lambda i, j: True):
    """Kendall's tau-a of b's order against a's, over the pairs `resolved` keeps."""
    concordant = discordant = 0
    for i, j in itertools.combinations(range(len(a)), 2):
        if not resolved(i, j):
            continue
        s = (a[i] - a[j]) * (b[i] - b[j])
        concordant += s > 0
        discordant += s < 0
    return (concordant - discordant) / max(1, concordant + discordant)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--models", nargs="+", default=list(MODELS))
    ap.add_argument("--sample", type=int, default=12)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--pipelines", action="store_true",
                    help="only the pipelined plans (pp > 1), every one of them under each schedule")
    args = ap.parse_args()
    work = args.out or tempfile.mkdtemp(prefix="zcc-sim-vs-measured-")
    os.makedirs(work, exist_ok=True)
    cpu = subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"], capture_output=True, text=True).stdout
    print(f"machine: {cpu.strip()}, {os.cpu_count()} cores; OMP_NUM_THREADS=1 per rank")
    summary = []
    for ranks in args.np:
        cluster = os.path.join(work, f"cpu-np{ranks}.json")
        subprocess.run(["mpirun", "-np", str(ranks), os.path.join(BIN, "zcc-calibrate"), "--world-size", str(ranks),
                        "-o", os.path.join(work, f"cost-np{ranks}.json"), "--cluster-out", cluster], check=True,
                       env=ENV, capture_output=True)
        for model_name in args.models:
            gen = MODELS[model_name]
            model = os.path.join(work, model_name + ".mlir")
            with open(model, "w") as f:
                subprocess.run([sys.executable, os.path.join(ROOT, "examples", gen[0])] + gen[1:], check=True, stdout=f)
            space = [p for p in plans(ranks) if p["pp"] > 1 or not args.pipelines]
            chosen = space if args.all or args.pipelines else stratified(space, args.sample, f"{model_name}/{ranks}")
            # The planner's choice for one node of this machine, measured too.
            plan_file = os.path.join(work, "plan.json")
            subprocess.run([os.path.join(BIN, "zcc"), model, "--plan", "auto", "--cluster", cluster, "--nodes", "1",
                            "-o", plan_file], check=True, env=ENV, capture_output=True)
            pj = json.load(open(plan_file))
            auto = dict(tp=pj["tp"], pp=pj["pp"], dp=pj["dp"], zero=pj["zero_stage"], accum=pj["grad_accum"],
                        recompute=pj["recompute"], offload=pj["offload_optimizer"], schedule=pj.get("pp_schedule", "1f1b"),
                        interleave=pj.get("pp_interleave", 1))
            if pj["cp"] == 1 and auto not in chosen and (auto["pp"] > 1 or not args.pipelines):
                chosen.append(auto)
            runs = {}
            for _ in range(args.repeat):
                for i, p in enumerate(chosen):
                    try:
                        runs.setdefault(i, []).append(measure(model, p, ranks, args.steps, work, cluster))
                    except subprocess.CalledProcessError as e:
                        print(f"  {name(p)}: failed ({e.cmd[0]})", file=sys.stderr)
            # Each plan: its measured step (the median of its runs), its spread (their range), its prediction.
            rows = [(chosen[i], statistics.median(times), max(times) - min(times),
                     predict(model, chosen[i], ranks, cluster)) for i, times in runs.items() if len(times) == args.repeat]
            print(f"\n{model_name} at np={ranks} ({len(rows)} of {len(space)} plans, {args.repeat} runs each)")
            print(f"  {'plan':52} {'measured ms':>11} {'spread ms':>9} {'predicted ms':>12} {'error':>7}")
            for p, m, spread, s in sorted(rows, key=lambda r: r[1]):
                mark = "  <- --plan auto" if p == auto else ""
                print(f"  {name(p):52} {m * 1e3:11.1f} {spread * 1e3:9.1f} {s * 1e3:12.1f} {100 * (s / m - 1):+6.1f}%{mark}")
            errors = [abs(s / m - 1) for _, m, _, s in rows]
            measured, predicted = [m for _, m, _, _ in rows], [s for *_, s in rows]
            resolved = lambda i, j: abs(measured[i] - measured[j]) > 2 * max(rows[i][2], rows[j][2])
            pairs = sum(resolved(i, j) for i, j in itertools.combinations(range(len(rows)), 2))
            tau = kendall(measured, predicted, resolved)
            tau_all = kendall(measured, predicted)
            fastest = min(measured)
            auto_ms = next((m for p, m, _, _ in rows if p == auto), None)
            line = (f"{model_name} np={ranks}: median error {100 * statistics.median(errors):.1f}%, largest "
                    f"{100 * max(errors):.1f}%, Kendall tau {tau:.2f} over the {pairs} of "
                    f"{len(rows) * (len(rows) - 1) // 2} pairs measured apart ({tau_all:.2f} over all), --plan auto "
                    + (f"{100 * (auto_ms / fastest - 1):+.1f}% from the fastest measured" if auto_ms else "not measured"))
            print("  " + line)
            summary.append(line)
    print("\nsummary")
    for line in summary:
        print("  " + line)


if __name__ == "__main__":
    main()
