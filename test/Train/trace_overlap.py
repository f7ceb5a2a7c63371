#!/usr/bin/env python3
"""Reads a train.bin --trace file and reports how much of the parameter all-gathers'
transfer time ran while the compute thread was inside a kernel (not waiting).

usage: trace_overlap.py TRACE.json [--require-overlap]
With --require-overlap, exits 1 unless some all-gather overlaps a compute kernel (the next
group's gather in flight while the current layer computes).
"""
import json, sys

def main():
    path = sys.argv[1]
    events = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]
    compute = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events
                     if e["tid"] == 0 and e["name"] not in ("zrt_wait", "blocking collective"))
    gathers = [(e["ts"], e["ts"] + e["dur"]) for e in events if e["tid"] == 1 and e["name"] == "zrt_all_gather"]
    if not gathers:
        sys.exit(f"FAIL: {path} has no all_gather on the communication track")
    total = overlapped = 0.0
    with_matmul = 0
    for begin, end in gathers:
        total += end - begin
        hit_matmul = False
        for cb, ce, name in compute:
            if ce <= begin or cb >= end:
                continue
            overlapped += min(ce, end) - max(cb, begin)
            hit_matmul |= name == "zrt_matmul"
        with_matmul += hit_matmul
    print(f"{len(gathers)} all-gathers, {total / 1e3:.2f} ms in flight, {overlapped / 1e3:.2f} ms "
          f"({100 * overlapped / total:.0f}%) under compute kernels; {with_matmul} overlap a matmul")
    if "--require-overlap" in sys.argv and overlapped == 0:
        sys.exit("FAIL: no all-gather overlapped a compute kernel")

if __name__ == "__main__":
    main()
