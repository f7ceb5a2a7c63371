#!/usr/bin/env python3
"""Checks --plan auto's memory bound against what it simulated (ZCC_PLAN_VERBOSE's lines on stdin):
the bound never exceeds a plan's simulated memory (a larger one would rule out plans that fit),
a pipelined 1F1B plan reports what its stages keep per block, and every interleaved or ZB-V plan
simulated whose 1F1B twin (same mesh, micro-batch and recomputation) was compiled comes after it
(its bound counted the twin's kept activations), and counts the bounds that a twin at another ZeRO stage
or offload raised (its activations measured). Prints the counts; exits non-zero on a failure."""
import re, sys

kept, over, pipelined, after_twin, lines, from_twins = set(), [], 0, 0, 0, 0
twin_of = lambda m: (m["tp"], m["cp"], m["pp"], m["b"], m["recompute"])
plan = re.compile(r"tp (?P<tp>\d+) cp (?P<cp>\d+) pp (?P<pp>\d+)(?:x(?P<v>\d+))? dp \d+, ZeRO-\d, micro-batch "
                  r"(?P<b>\d+) x \d+, recompute (?P<recompute>\w+)(?:, (?P<schedule>[\w-]+))?")
simulated = []
for line in sys.stdin:
    p = plan.search(line)
    if not p:
        continue
    if "per block per micro-batch" in line:
        kept.add(twin_of(p))
        continue
    m = re.search(r"simulated [0-9.]+ s, ([0-9.]+) GiB \(bound ([0-9.]+) GiB", line)
    if not m:
        continue
    lines += 1
    if float(m[2]) > float(m[1]):
        over.append(line.strip())
    # The activations of a twin compiled before (same mesh, micro-batch, schedule, recomputation;
    # a ZeRO stage at or above), where they bound more than the model's own count.
    t = re.search(r"activations ([0-9.]+), twins' ([0-9.]+);", line)
    from_twins += bool(t) and float(t[2]) > float(t[1])
    if p["v"] or p["schedule"] == "zb-h1":
        pipelined += 1
        after_twin += twin_of(p) in kept
    simulated.append((twin_of(p), p["schedule"], len(kept)))
if over:
    sys.exit("FAIL: the memory bound exceeds the simulated memory:\n  " + "\n  ".join(over))
print(f"{lines} plans simulated, bound within the simulated memory; {len(kept)} 1F1B twins kept per block; "
      f"{after_twin} of {pipelined} zero-bubble or interleaved plans after their twin; {from_twins} bounds from "
      f"twins at other ZeRO stages or offload")
if not kept or not after_twin:
    sys.exit("FAIL: no 1F1B plan reported what a block keeps, or no plan's bound used it")
