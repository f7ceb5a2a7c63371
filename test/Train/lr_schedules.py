#!/usr/bin/env python3
"""Learning-rate schedules (MLP example): the lr train.bin logs each step equals the formula of
nanoGPT's get_lr (cosine from the peak to min_lr over lr_decay_iters, min_lr after) and of
Megatron-LM's linear and WSD (warmup-stable-decay) styles, after a linear warmup; constant stays.

usage: lr_schedules.py ZCC MODEL.mlir
"""
import json, math, os, subprocess, sys, tempfile

PEAK, MIN, WARMUP, DECAY, WSD, STEPS = 1e-2, 1e-3, 3, 12, 4, 16


def expected(schedule, step):  # step from 0, as train.bin's learningRate
    if step < WARMUP:
        return PEAK * (step + 1) / WARMUP
    if schedule == "constant":
        return PEAK
    if step >= DECAY:
        return MIN
    if schedule == "wsd":
        start = DECAY - WSD
        return PEAK if step < start else MIN + (PEAK - MIN) * (DECAY - step) / (DECAY - start)
    progress = (step - WARMUP) / (DECAY - WARMUP)
    if schedule == "linear":
        return MIN + (1 - progress) * (PEAK - MIN)
    return MIN + 0.5 * (1 + math.cos(math.pi * progress)) * (PEAK - MIN)


def main():
    zcc, model = sys.argv[1:3]
    failures = []
    with tempfile.TemporaryDirectory() as w:
        exe = os.path.join(w, "train.bin")
        subprocess.run([zcc, model, "-o", exe], check=True)
        for schedule in ["constant", "cosine", "linear", "wsd"]:
            log = os.path.join(w, schedule + ".jsonl")
            subprocess.run([exe, "--synthetic", "--steps", str(STEPS), "--log-every", "1", "--log-json", log,
                            "--lr", str(PEAK), "--min-lr", str(MIN), "--warmup", str(WARMUP), "--lr-decay-steps",
                            str(DECAY), "--wsd-decay-steps", str(WSD), "--lr-schedule", schedule],
                           check=True, stdout=subprocess.DEVNULL)
            for r in map(json.loads, open(log)):
                want = expected(schedule, r["step"] - 1)
                if abs(r["lr"] - want) > 1e-9 * PEAK:
                    failures.append(f"{schedule} step {r['step']}: lr {r['lr']} vs {want}")
        bad = subprocess.run([exe, "--synthetic", "--lr-schedule", "exponential"], capture_output=True, text=True)
        if bad.returncode != 2 or "constant, cosine, linear or wsd" not in bad.stderr:
            failures.append(f"an unknown schedule: exit {bad.returncode}, {bad.stderr.strip()}")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures[:10]))
    print("PASS: constant, cosine, linear and WSD schedules follow their formulas")


if __name__ == "__main__":
    main()
