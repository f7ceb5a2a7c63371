#!/usr/bin/env python3
"""Each pipeline stage's memory plan is what it uses, under every schedule train.bin runs: the arena
each stage's --report=json announces is the one its rank gives it (an interleaved rank one per chunk,
each at its own base), and the bytes the steps write there (train.bin paints the scratch and finds
the highest byte written, per stage program) reach it within 1%. With --recompute none a stage
keeps its micro-batches' activations only for those in flight: under 1F1B stage s plans min(K, P - s)
input slots and keeps activations in all but the last stage; under zb-h1 min(K, P) (the last stage
too: its W reads them); interleaved,
each chunk what Megatron's order holds of it in flight at once (pipeline_trace.py writes the order
out), no more; zbv, each chunk what PyTorch's ZB-V order holds of it from an F to its W, every stage
keeping activations (its W reads them). A plan that kept every micro-batch
would be seen here as its slots and in the high-water marks the arena's use follows. A pipeline
refuses the flat weight files (--export-weights, --init-weights: the whole model's parameters in its
order, which no stage program holds) by name, and its start-up line counts the whole model's parameters
(every stage's, a tied one once). Each input of a stage gets the buffers the table holds at once over
the span it is held for (zcc::pipeline::Hold: F to B, F to W, B to W, during F, during B), which
train.bin allocates and the plan counts; under zero-bubble a middle stage's in-flight inputs come to
less than a slot per micro-batch for every input.

usage: pipeline_memory.py ZCC MODEL.mlir STAGES MICRO-BATCHES DATA-FLAGS...
"""
import json, math, os, re, subprocess, sys, tempfile

from pipeline_trace import SPANS, megatron_interleaved, parse, pytorch_zbv, rank_of_stage

SCHEDULES = [("1f1b", 1), ("zb-h1", 1), ("interleaved-1f1b", 2), ("zbv", 2)]


def megatron_slots(rank, stages, k, chunks, chunk):
    """The most micro-batches chunk `chunk` of pipeline rank `rank` holds at once in Megatron's order."""
    held = peak = 0
    for kind, _, c in map(parse, megatron_interleaved(rank, stages, k, chunks)):
        if c == chunk:
            held += 1 if kind == "F" else -1
            peak = max(peak, held)
    return peak


def zbv_slots(rank, stages, k, chunk):
    """The most micro-batches chunk `chunk` of `rank` holds at once in ZB-V's order (F to W)."""
    held = peak = 0
    for kind, _, c in map(parse, pytorch_zbv(rank, stages, k)):
        if c == chunk and kind in "FW":
            held += 1 if kind == "F" else -1
            peak = max(peak, held)
    return peak


def held_buffers(order, chunk, hold, slots):
    """The buffers an input of chunk `chunk` held for `hold` needs in a rank's `order`: the most
    micro-batches its span covers at once (W where the order has none: B); held during one piece
    of work, 2 (at most the chunk's slots) so the next may be received while one is read."""
    first, last = SPANS[hold]
    if first == last:
        return min(2, slots)
    if not any(a.startswith("W") for a in order):
        last = "B"
    if first == last:
        return 1
    held = peak = 0
    for kind, _, c in map(parse, order):
        if c == chunk and kind in (first, last):
            held += 1 if kind == first else -1
            peak = max(peak, held)
    return max(peak, 1)


def main():
    zcc, model, stages, k, data = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        # The whole model's parameters, which every pipelined run's start-up line counts over its stages.
        one = os.path.join(work, "one.bin")
        subprocess.run([zcc, model, "-o", one], check=True, stdout=subprocess.DEVNULL)
        described = json.loads(subprocess.run([one, "--describe"], check=True, capture_output=True,
                                              text=True).stdout)
        whole = (len(described["params"]),
                 sum(math.prod(p.get("whole_shape") or p["shape"]) for p in described["params"]))
        for schedule, chunks in SCHEDULES:
            exe = os.path.join(work, f"{schedule}.bin")
            subprocess.run([zcc, model, "-o", exe, "--world-size", str(stages), "--pp", str(stages),
                            "--grad-accum", str(k), "--recompute", "none", "--pp-schedule", schedule,
                            "--report=json"]
                           + (["--pp-interleave", str(chunks)] if chunks > 1 and schedule != "zbv" else []),
                           check=True, stdout=subprocess.DEVNULL)
            run = subprocess.run(["mpirun", "-np", str(stages), exe, "--steps", "2"] + data, check=True,
                                 capture_output=True, text=True, env=env, timeout=600)
            banner = re.search(r"zcc: model \S+, (\d+) parameter tensors \((\d+) values\)", run.stdout)
            if not banner or (int(banner[1]), int(banner[2])) != whole:
                failures.append(f"{schedule}: the start-up line counts {banner and banner.group(0)}, the model has "
                                f"{whole[0]} tensors of {whole[1]} values")
            used = {int(m[1]): (int(m[2]), int(m[3]), int(m[4])) for m in re.finditer(
                r"zcc: rank \d+ pipeline stage (\d+): arena (\d+) B planned, (\d+) B written \(high-water mark\); "
                r"inputs (\d+) B", run.stdout)}
            if sorted(used) != list(range(stages * chunks)):
                failures.append(f"{schedule}: train.bin reported the arenas of stages {sorted(used)}")
                continue
            for s in range(stages * chunks):
                report = json.load(open(f"{exe}.stage{s}.report.json"))
                plan = report["pipeline"]
                planned, written, allocated = used[s]
                rank = rank_of_stage(schedule, s, stages)
                last = s == stages * chunks - 1
                print(f"{schedule} stage {s} (rank {rank}): {plan['slots']} slots, kept "
                      f"{plan['kept_activation_bytes']} B; arena {planned} B planned, {written} B written "
                      f"({100.0 * written / planned:.2f}%)")
                if planned != report["arena_bytes"]:
                    failures.append(f"{schedule} stage {s}: train.bin gives it {planned} B, the report says "
                                    f"{report['arena_bytes']} B")
                if not 0.99 * planned <= written <= planned:
                    failures.append(f"{schedule} stage {s}: wrote up to {written} B of a {planned} B plan")
                slots = {"1f1b": min(k, stages - s), "zb-h1": min(k, stages),
                         "interleaved-1f1b": megatron_slots(rank, stages, k, chunks, s // stages),
                         "zbv": zbv_slots(rank, stages, k, s // stages)}[schedule]
                if plan["slots"] != slots:
                    failures.append(f"{schedule} stage {s}: {plan['slots']} slots, the schedule keeps {slots}")
                if not 1 <= plan["slots"] <= k:
                    failures.append(f"{schedule} stage {s}: {plan['slots']} slots for {k} micro-batches")
                # Each input's buffers: what the table holds at once over its span (counted here from
                # the order --report gives), what train.bin allocates, what the plan counts; under
                # zero-bubble less than a slot for every input (W's inputs from B wait for only a
                # few micro-batches), at least on the middle stages.
                order = plan["table"].split()
                for i in plan["inputs"]:
                    want = held_buffers(order, s // stages, i["hold"], plan["slots"])
                    if i["slots"] != want:
                        failures.append(f"{schedule} stage {s}: its {i['role']} input ({i['hold']}) has "
                                        f"{i['slots']} buffers, the table holds {want} at once")
                counted = sum(i["slots"] * i["bytes"] for i in plan["inputs"])
                if not allocated == counted == plan["in_flight_input_bytes"]:
                    failures.append(f"{schedule} stage {s}: train.bin allocates {allocated} B of inputs, the "
                                    f"buffers hold {counted} B, the plan counts {plan['in_flight_input_bytes']} B")
                whole_slots = plan["slots"] * sum(i["bytes"] for i in plan["inputs"])
                if schedule in ("zb-h1", "zbv") and 0 < rank < stages - 1 and not counted < whole_slots:
                    failures.append(f"{schedule} stage {s}: {counted} B of inputs in flight, as much as a slot for "
                                    f"every input ({whole_slots} B)")
                # The zero-bubble schedules' last stage keeps what its W reads; the others' run the
                # forward in their step.
                if schedule not in ("zb-h1", "zbv") and (plan["kept_activation_bytes"] > 0) == last:
                    failures.append(f"{schedule} stage {s}: keeps {plan['kept_activation_bytes']} B of activations"
                                    + (" (the last stage's step runs its forward)" if last else ""))
        # A pipeline refuses the flat weight files (the whole model's parameters in order), which
        # none of its stage programs holds, by name, before training.
        for flag in ("--export-weights", "--init-weights"):
            run = subprocess.run(["mpirun", "-np", str(stages), exe, "--steps", "1", flag,
                                  os.path.join(work, "w.f32")] + data, capture_output=True, text=True, env=env,
                                 timeout=600)
            if run.returncode == 0 or "zcc-ckpt consolidate" not in run.stderr + run.stdout:
                failures.append(f"{flag} with a pipeline: exit {run.returncode}, no refusal naming zcc-ckpt")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
