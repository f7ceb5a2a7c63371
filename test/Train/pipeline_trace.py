#!/usr/bin/env python3
"""The 1F1B schedule in a pipeline's trace (--trace): on P stages over K micro-batches, stage s
runs min(P - s - 1, K) forwards, then alternates one forward ("F m") and one step ("B m": the
backward, reading what the forward kept), then the steps left; the last stage only steps (its
forward is part of its step). Each rank's trace holds its stage's sequence, every step.

usage: pipeline_trace.py ZCC MODEL.mlir STAGES MICRO-BATCHES DATA-FLAGS...
"""
import json, os, subprocess, sys, tempfile

def expected(stage, stages, k):
    slots = min(k, stages - stage)
    order, f = [], 0
    for f in range(slots - 1):
        order.append(f"F{f}")
    f = slots - 1
    for b in range(k):
        if f < k:
            order.append(f"F{f}")
            f += 1
        order.append(f"B{b}")
    last = stage == stages - 1
    return [a for a in order if not (last and a.startswith("F"))]

def main():
    zcc, model, stages, k, data = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        exe, trace = os.path.join(work, "pp.bin"), os.path.join(work, "trace.json")
        subprocess.run([zcc, model, "-o", exe, "--world-size", str(stages), "--pp", str(stages),
                        "--grad-accum", str(k)], check=True)
        steps = 2
        subprocess.run(["mpirun", "-np", str(stages), exe, "--steps", str(steps), "--trace", trace] + data,
                       check=True, stdout=subprocess.DEVNULL, env=env, timeout=600)
        for rank in range(stages):
            path = trace if rank == 0 else f"{trace}.rank{rank}"
            events = sorted((e for e in json.load(open(path))["traceEvents"]
                             if e.get("ph") == "X" and e["name"][:2] in ("F ", "B ")), key=lambda e: e["ts"])
            seen = [e["name"].replace(" ", "") for e in events]
            want = expected(rank, stages, k) * steps
            if seen != want:
                failures.append(f"stage {rank}: {' '.join(seen)}, expected {' '.join(want)}")
            print(f"stage {rank}: {' '.join(seen[:len(seen) // steps])}")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("PASS")

if __name__ == "__main__":
    main()
