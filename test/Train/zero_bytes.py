#!/usr/bin/env python3
"""ZeRO's memory and traffic, per rank: the compiler's report, the runtime's counters and
the ZeRO paper's formulas must agree.

For stages 0-3: model-state bytes (params + grads + optimizer state) that train.bin logs
equal zcc --report's, and the paper's formulas within 2% plus padding (P = parameter count):
  fp32 (4-byte params and grads, 8 bytes of moments):
    stage 0: 16P, 1: 8P + 8P/N, 2: 4P + 12P/N, 3: 16P/N
  --precision bf16 (2-byte params and grads, 12 bytes of fp32 master and moments):
    stage 0: 16P, 1: 4P + 12P/N, 2: 2P + 14P/N, 3: 16P/N;
bytes each rank sends per step (train.bin's counters: the step's collectives)
equal the report's; stages 1 and 2 send what stage 0 sends, stage 3 1.5x within 2%.

usage: zero_bytes.py ZCC MODEL.mlir RANKS [--precision fp32|bf16] DATA-FLAGS...
"""
import json, os, subprocess, sys, tempfile

def main():
    zcc, model, ranks, data = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    precision = "fp32"
    if data[:1] == ["--precision"]:
        precision, data = data[1], data[2:]
    # Bytes per parameter value: of the parameter (and of its gradient), of optimizer state.
    value_bytes, optimizer = {"fp32": (4, 8), "bf16": (2, 12)}[precision]
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    sent, failures = {}, []
    with tempfile.TemporaryDirectory() as work:
        for stage in range(4):
            exe = os.path.join(work, f"train-z{stage}.bin")
            subprocess.run([zcc, model, "-o", exe, "--world-size", str(ranks), "--zero-stage", str(stage), "--param-persistence-threshold", "0",
                            "--precision", precision, "--report=json"], check=True)
            report = json.load(open(exe + ".report.json"))
            log = os.path.join(work, f"log-z{stage}.jsonl")
            subprocess.run(["mpirun", "-np", str(ranks), exe, "--steps", "3", "--log-every", "1",
                            "--log-json", log] + data, check=True, stdout=subprocess.DEVNULL, timeout=600)
            last = [json.loads(line) for line in open(log)][-1]
            measured = last["param_bytes"] + last["grad_bytes"] + last["optimizer_bytes"]
            for key in ("param_bytes", "grad_bytes", "optimizer_bytes"):
                if last[key] != report[key]:
                    failures.append(f"stage {stage}: runtime {key} {last[key]} != report {report[key]}")
            if stage == 0:
                params = report["param_bytes"] // value_bytes
            N, P, b = ranks, params, value_bytes
            formula = {0: 16 * P,
                       1: 2 * b * P + optimizer * P / N,           # params and grads whole
                       2: b * P + (b + optimizer) * P / N,         # params whole
                       3: 16 * P / N}[stage]
            # Padding: fewer than N elements per parameter tensor in each buffer, 16 bytes
            # per element over all of them.
            padding = 16 * (N - 1) * report["param_tensors"]
            if abs(measured - formula) > 0.02 * formula + padding:
                failures.append(f"stage {stage}: model state {measured} B, ZeRO formula {formula:.0f} B")
            sent[stage] = last["comm_bytes"]  # the step's collectives (the logged loss's average is not counted)
            if sent[stage] != report["comm_bytes"]:
                failures.append(f"stage {stage}: runtime sent {sent[stage]} B/step, report {report['comm_bytes']}")
            print(f"stage {stage}: model state {measured} B (formula {formula:.0f}), sent {sent[stage]} B/step, "
                  f"gathered peak {report['gathered_param_peak_bytes']} B")
    for stage in (1, 2):
        if sent[stage] != sent[0]:
            failures.append(f"stage {stage} sends {sent[stage]} B/step, stage 0 {sent[0]}")
    ratio = sent[3] / sent[0]
    if abs(ratio - 1.5) > 0.02 * 1.5:
        failures.append(f"stage 3 sends {ratio:.4f}x stage 0, expected 1.5x within 2%")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print(f"PASS: {ranks} ranks, {precision}, stage 3 / stage 0 traffic {ratio:.4f}")

if __name__ == "__main__":
    main()
