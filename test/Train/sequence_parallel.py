#!/usr/bin/env python3
"""Sequence parallelism saves what it should, and moves the bytes it should (the compiler's report).

At the shakespeare-char shape (6 layers, d=384, context 256, batch 8, 2 micro-batches), as a GPT
and as a Llama: with --tp 2 each rank's activation peak must be at most 0.55x of the peak of the
same micro-batch without tensor parallelism (Korthikanti et al.: the norms, the residual stream
and the regions' inputs split too), at zcc's defaults, on a ZeRO-3 mesh (tp 2 x dp 2 against
dp 2) and with selective and full recomputation. Without sequence parallelism tensor
parallelism alone leaves more than 0.6x (the test fails if the feature stops saving).

Traffic: the tensor axis' bytes with sequence parallelism are the bytes of the all-reduces it
replaces (zcc --no-sequence-parallel) plus what the report names, each checked against its
formula: the backward's re-gathers of each region's input (one all-gather of this rank's tokens
per region and micro-batch; with full recomputation more, the recomputed blocks gathering their
inputs again) and the gradient sums of the parameters the split ops read (every
parameter not split by tensor parallelism here: norms, biases after row matmuls, the GPT's
position table). The runtime's counters agree with the report (train-gpt-mesh-bytes).

usage: sequence_parallel.py ZCC GEN_GPT.py GEN_LLAMA.py
"""
import json, os, subprocess, sys, tempfile

SHAPE = dict(layers=6, dim=384, context=256, batch=8)
ACCUM = 2

def report(zcc, model, work, tag, *flags):
    exe = os.path.join(work, f"{tag}.bin")
    subprocess.run([zcc, model, "-o", exe, "--grad-accum", str(ACCUM), "--report=json", *flags], check=True)
    described = json.loads(subprocess.run([exe, "--describe"], check=True, capture_output=True, text=True).stdout)
    return json.load(open(exe + ".report.json")), described

def main():
    zcc, gen_gpt, gen_llama = sys.argv[1:4]
    failures = []
    with tempfile.TemporaryDirectory() as work:
        models = {
            "gpt": [gen_gpt, "--heads", "6"],
            "llama": [gen_llama, "--heads", "6", "--kv-heads", "2", "--ffn", "1024"],
        }
        for name, gen in models.items():
            model = os.path.join(work, f"{name}.mlir")
            with open(model, "w") as out:
                subprocess.run([sys.executable, *gen] + [a for k, v in SHAPE.items() for a in (f"--{k}", str(v))],
                               check=True, stdout=out)
            # (label, reference flags, tensor-parallel flags)
            pairs = [("defaults", [], ["--world-size", "2", "--tp", "2"]),
                     ("zero-3 mesh", ["--world-size", "2", "--zero-stage", "3"],
                      ["--world-size", "4", "--tp", "2", "--zero-stage", "3"]),
                     ("selective recompute", ["--recompute", "selective"],
                      ["--world-size", "2", "--tp", "2", "--recompute", "selective"]),
                     ("full recompute", ["--recompute", "full"],
                      ["--world-size", "2", "--tp", "2", "--recompute", "full"])]
            for label, ref_flags, tp_flags in pairs:
                tag = f"{name}-{label.replace(' ', '-')}"
                ref, _ = report(zcc, model, work, tag + "-ref", *ref_flags)
                sp, described = report(zcc, model, work, tag + "-sp", *tp_flags)
                nosp, _ = report(zcc, model, work, tag + "-nosp", *tp_flags, "--no-sequence-parallel")
                base = ref["activation_peak_bytes"]
                ratio, ratio_tp = sp["activation_peak_bytes"] / base, nosp["activation_peak_bytes"] / base
                print(f"{name}, {label}: activation peak {sp['activation_peak_bytes']} B = {ratio:.3f}x of "
                      f"{base} B without tensor parallelism ({ratio_tp:.3f}x with it but no sequence parallelism)")
                if ratio > 0.55:
                    failures.append(f"{name}, {label}: sequence parallelism leaves {ratio:.3f}x (> 0.55x)")
                if label == "defaults" and ratio_tp <= 0.6:
                    failures.append(f"{name}: tensor parallelism alone already at {ratio_tp:.3f}x: the test "
                                    "no longer shows what sequence parallelism adds")
                # Traffic, against the formulas.
                tp = sp["tensor_parallel"]
                added = tp["sequence_parallel"]
                if tp["comm_bytes"] - added["regather_bytes"] - added["grad_sum_bytes"] != \
                        nosp["tensor_parallel"]["comm_bytes"]:
                    failures.append(f"{name}, {label}: tensor-parallel bytes {tp['comm_bytes']} minus re-gathers "
                                    f"{added['regather_bytes']} and gradient sums {added['grad_sum_bytes']} != "
                                    f"{nosp['tensor_parallel']['comm_bytes']} without sequence parallelism")
                n = 2
                rows = SHAPE["batch"] // ACCUM // (sp["mesh"]["dp"])
                part = rows * SHAPE["context"] * SHAPE["dim"] // n * 4  # one rank's tokens, fp32
                regions = 2 * SHAPE["layers"] + 1  # attention and MLP per layer, and the head
                regather = ACCUM * regions * (n - 1) * part
                replicated = sum(eval("*".join(map(str, p["shape"])) or "1")
                                 for p in described["params"] if not p.get("tp_split"))
                grad_sum = ACCUM * 2 * (n - 1) * replicated * 4 // n
                if label == "full recompute":  # the recomputed forward gathers what its blocks read again
                    if added["regather_bytes"] % part or not regather < added["regather_bytes"] <= 2 * regather:
                        failures.append(f"{name}, {label}: re-gathers {added['regather_bytes']} B, not whole parts "
                                        f"of {part} B in ({regather}, {2 * regather}]")
                elif added["regather_bytes"] != regather:
                    failures.append(f"{name}, {label}: re-gathers {added['regather_bytes']} B, formula {regather}")
                if added["grad_sum_bytes"] != grad_sum:
                    failures.append(f"{name}, {label}: gradient sums {added['grad_sum_bytes']} B, formula {grad_sum}")
                print(f"  tensor-parallel bytes {tp['comm_bytes']} = {nosp['tensor_parallel']['comm_bytes']} "
                      f"(the all-reduces') + re-gathers {added['regather_bytes']} + gradient sums "
                      f"{added['grad_sum_bytes']}")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("PASS")

if __name__ == "__main__":
    main()
