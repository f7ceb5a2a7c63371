#!/usr/bin/env python3
"""A pipeline stage computes its forward once and keeps the activations of its micro-batches in
flight, no more (zcc-pipeline-keep): a check that fails when it stops saving.

Compile-only, each stage's plan (--report=json) on P stages over K micro-batches, for each
model given:
  - stage s keeps the inputs of min(K, P - s) micro-batches (1F1B's slots);
  - with --recompute none, a stage's step (its forward-only function and its step together)
    costs about 3 forwards per micro-batch (forward, and the backward's two products), not 4 as
    when the step computed its forward again; the stages before the last keep activations for
    their backward, the last keeps none (its step runs its forward once);
  - --recompute full keeps less (the block inputs) than none, at every stage before the last.

usage: pipeline_keep.py ZCC STAGES MICRO-BATCHES MODEL.mlir...
"""
import json, os, subprocess, sys, tempfile


def plans(zcc, model, stages, k, recompute, work):
    out = os.path.join(work, "plan.mlir")
    subprocess.run([zcc, model, "-o", out, "--emit=mlir", "--report=json", "--world-size", str(stages),
                    "--pp", str(stages), "--grad-accum", str(k), "--recompute", recompute],
                   check=True, stdout=subprocess.DEVNULL)
    return [json.load(open(f"{out}.stage{s}.report.json")) for s in range(stages)]


def main():
    zcc, stages, k, models = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    failures = []
    with tempfile.TemporaryDirectory() as work:
        for model in models:
            name = os.path.basename(model)
            none, full = (plans(zcc, model, stages, k, r, work) for r in ("none", "full"))
            for s, (r, f) in enumerate(zip(none, full)):
                p = r["pipeline"]
                slots, kept, last = p["slots"], p["kept_activation_bytes"], s == stages - 1
                forwards = r["recompute"]["step_flops"] / (k * p["stage_forward_flops"][s])
                print(f"{name} stage {s}: {slots} slots, kept activations {kept} B (full recomputation "
                      f"{f['pipeline']['kept_activation_bytes']} B), step {forwards:.3f} forwards per micro-batch")
                if slots != min(k, stages - s):
                    failures.append(f"{name} stage {s}: {slots} slots, 1F1B keeps {min(k, stages - s)}")
                if not 2.5 < forwards < 3.5:
                    failures.append(f"{name} stage {s}: the step costs {forwards:.2f} forwards per micro-batch "
                                    "(3: forward once, backward twice; 4: the forward computed again)")
                if last and kept:
                    failures.append(f"{name} stage {s}: the last stage keeps {kept} B (its step runs its forward)")
                if not last and not kept:
                    failures.append(f"{name} stage {s}: keeps no activations for its backward")
                if not last and not f["pipeline"]["kept_activation_bytes"] < kept:
                    failures.append(f"{name} stage {s}: --recompute full keeps "
                                    f"{f['pipeline']['kept_activation_bytes']} B, none {kept} B")
                if not r["activation_peak_bytes"] >= kept:
                    failures.append(f"{name} stage {s}: activation peak {r['activation_peak_bytes']} B leaves out "
                                    f"the {kept} B kept")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
