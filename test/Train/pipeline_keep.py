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
  - --recompute full keeps less (the block inputs) than none, at every stage before the last;
  - under --pp-schedule zb-h1 every stage keeps min(K, P) micro-batches (1F1B's peak), the step
    still costs 3 forwards per micro-batch (its W counted, nothing computed twice), every stage
    keeps at least what 1F1B does per micro-batch (W reads the products' output gradients too),
    and the predicted bubble is below 1F1B's.

usage: pipeline_keep.py ZCC STAGES MICRO-BATCHES MODEL.mlir...
"""
import json, os, subprocess, sys, tempfile


def plans(zcc, model, stages, k, recompute, work, schedule="1f1b"):
    out = os.path.join(work, "plan.mlir")
    subprocess.run([zcc, model, "-o", out, "--emit=mlir", "--report=json", "--world-size", str(stages),
                    "--pp", str(stages), "--grad-accum", str(k), "--recompute", recompute,
                    "--pp-schedule", schedule],
                   check=True, stdout=subprocess.DEVNULL)
    return [json.load(open(f"{out}.stage{s}.report.json")) for s in range(stages)]


def main():
    zcc, stages, k, models = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    failures = []
    with tempfile.TemporaryDirectory() as work:
        for model in models:
            name = os.path.basename(model)
            none, full = (plans(zcc, model, stages, k, r, work) for r in ("none", "full"))
            zb = plans(zcc, model, stages, k, "none", work, "zb-h1")
            for s, (r, z) in enumerate(zip(none, zb)):
                p, q = r["pipeline"], z["pipeline"]
                forwards = z["recompute"]["step_flops"] / (k * q["stage_forward_flops"][s])
                per_mb = (q["kept_activation_bytes"] / q["slots"], p["kept_activation_bytes"] / p["slots"])
                print(f"{name} stage {s} zb-h1: {q['slots']} slots, kept {q['kept_activation_bytes']} B "
                      f"({per_mb[0]:.0f} B per micro-batch, 1F1B {per_mb[1]:.0f}), step {forwards:.3f} forwards per "
                      f"micro-batch, predicted bubble {q['predicted_bubble']:.4f} (1F1B {p['predicted_bubble']:.4f})")
                if q["schedule"] != "zb-h1" or q["slots"] != min(k, stages):
                    failures.append(f"{name} stage {s} zb-h1: schedule {q['schedule']}, {q['slots']} slots")
                if not 2.5 < forwards < 3.5:
                    failures.append(f"{name} stage {s} zb-h1: the step costs {forwards:.2f} forwards per micro-batch")
                if per_mb[0] < per_mb[1]:
                    failures.append(f"{name} stage {s} zb-h1: keeps {per_mb[0]:.0f} B per micro-batch, less than "
                                    f"1F1B's {per_mb[1]:.0f} B")
                if not q["predicted_bubble"] < p["predicted_bubble"]:
                    failures.append(f"{name} stage {s} zb-h1: predicted bubble {q['predicted_bubble']:.4f}, 1F1B's "
                                    f"{p['predicted_bubble']:.4f}")
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
