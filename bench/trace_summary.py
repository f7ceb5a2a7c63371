#!/usr/bin/env python3
"""Where a train.bin step goes: reads its --trace (Chrome trace JSON) and prints, per kernel
name on the compute track, the time per step, its share of the step and the calls per step;
the communication track's collectives the same way, and how much of the step the compute
thread spent inside kernels. Steps before --skip are warm-up and left out.

usage: bench/trace_summary.py TRACE.json [--skip 2]
"""
import argparse, collections, json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--skip", type=int, default=2, help="warm-up steps left out")
    a = ap.parse_args()
    events = [e for e in json.load(open(a.trace))["traceEvents"] if e.get("ph") == "X"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e["tid"] == 2)[a.skip:]
    if not steps:
        raise SystemExit(f"{a.trace}: no step after the first {a.skip}")
    begin, end = steps[0][0], steps[-1][1]
    per_step = sum(e - b for b, e in steps) / len(steps)
    for track, title in ((0, "compute"), (1, "communication")):
        total, calls = collections.Counter(), collections.Counter()
        for e in events:
            if e["tid"] == track and begin <= e["ts"] < end:
                total[e["name"]] += e["dur"]
                calls[e["name"]] += 1
        if not total:
            continue
        busy = sum(total.values()) / len(steps)
        print(f"{title}: {busy / 1e3:.1f} ms a step in {sum(calls.values()) // len(steps)} calls "
              f"(step {per_step / 1e3:.1f} ms)")
        for name, us in total.most_common():
            print(f"  {name:32s} {us / len(steps) / 1e3:8.2f} ms {100 * us / len(steps) / per_step:5.1f}%  "
                  f"{calls[name] / len(steps):6.1f} calls")


if __name__ == "__main__":
    main()
