#!/usr/bin/env python3
"""Tensor (and pipeline) parallelism's memory and traffic, per rank: the compiler's report, the
runtime's counters and the formulas must agree on each mesh.

With P_split the values of the parameters zcc-tensor-parallel splits (train.bin --describe:
the ones with a tp_split) and P_rep the others, a rank of tensor-parallel degree T keeps
E = P_split / T + P_rep values, and ZeRO over the D data-parallel ranks divides those as the
ZeRO paper says (fp32): stage 0: 16E, 1: 8E + 8E/D, 2: 4E + 12E/D, 3: 16E/D (within padding).
train.bin's logged model-state bytes equal the report's, and so do the bytes each rank sends
per step (tensor-parallel all-reduces, the vocabulary-parallel loss' collectives, ZeRO's).

A pipeline stage keeps only its layers: each stage's report is checked against its own
parameters (train.bin --describe lists each stage's), no parameter but the tied ones is on two
stages, and rank 0's runtime counters against stage 0's report.

usage: mesh_bytes.py ZCC MODEL.mlir DATA-FLAGS... -- MESH...   MESH: np=N,tp=T,pp=P,zero=S,accum=K
"""
import json, os, subprocess, sys, tempfile

from mesh_harness import mesh_arguments, mesh_fields, use_mpi

def main():
    zcc, model, data, meshes = mesh_arguments(sys.argv)
    use_mpi()
    failures = []
    with tempfile.TemporaryDirectory() as work:
        for mesh in meshes:
            f = mesh_fields(mesh)
            n, tp, stage = int(f["np"]), int(f.get("tp", "1")), int(f.get("zero", "0"))
            pp = int(f.get("pp", "1"))
            dp = n // (tp * pp)
            exe = os.path.join(work, f"train-{mesh.replace(',', '-').replace('=', '')}.bin")
            subprocess.run([zcc, model, "-o", exe, "--world-size", str(n), "--tp", str(tp), "--pp", str(pp),
                            "--zero-stage", str(stage), "--param-persistence-threshold", "0", "--grad-accum", f.get("accum", "1"), "--report=json"],
                           check=True)
            described = json.loads(subprocess.run([exe, "--describe"], check=True, capture_output=True,
                                                  text=True).stdout)
            # A pipeline: one report and one description per stage; rank 0 (whose log train.bin
            # writes) runs stage 0.
            stage_models = described.get("stages") or [described]
            reports = [json.load(open(exe + (f".stage{k}" if pp > 1 else "") + ".report.json"))
                       for k in range(pp)]
            seen = set()
            for k, (stage_model, stage_report) in enumerate(zip(stage_models, reports)):
                if stage_report["mesh"] != {"tp": tp, "pp": pp, "dp": dp}:
                    failures.append(f"{mesh}: stage {k}: report mesh {stage_report['mesh']}")
                split_values = rep_values = 0
                for p in stage_model["params"]:
                    local = 1
                    for d in p["shape"]:
                        local *= d
                    if p.get("tp_split"):
                        split_values += local * tp
                    else:
                        rep_values += local
                    if p["name"] in seen and not p.get("pipeline_tied"):
                        failures.append(f"{mesh}: {p['name']} is on two stages but not tied")
                    seen.add(p["name"])
                E = split_values / tp + rep_values
                D = dp
                formula = {0: 16 * E, 1: 8 * E + 8 * E / D, 2: 4 * E + 12 * E / D, 3: 16 * E / D}[stage]
                state = stage_report["param_bytes"] + stage_report["grad_bytes"] + stage_report["optimizer_bytes"]
                padding = 16 * (D - 1) * stage_report["param_tensors"]
                if abs(state - formula) > 0.02 * formula + padding:
                    failures.append(f"{mesh}: stage {k}: model state {state} B, formula {formula:.0f} B")
                if k == 0:
                    report, stage0 = stage_report, (formula, split_values, rep_values)
                print(f"{mesh}: stage {k}: model state {state} B (formula {formula:.0f}), "
                      f"{len(stage_model['params'])} parameter tensors")
            formula, split_values, rep_values = stage0
            if pp > 1 and {p["name"] for p in stage_models[0]["params"]} & {p["name"] for p in stage_models[-1]["params"]} \
                    != {p["name"] for p in stage_models[0]["params"] if p.get("pipeline_tied")}:
                failures.append(f"{mesh}: the first and last stage share parameters not marked tied")
            log = os.path.join(work, "log.jsonl")
            cmd = [exe, "--steps", "3", "--log-every", "1", "--log-json", log] + data
            subprocess.run((["mpirun", "-np", str(n)] if n > 1 else []) + cmd, check=True,
                           stdout=subprocess.DEVNULL, timeout=600)
            last = [json.loads(line) for line in open(log)][-1]
            measured = last["param_bytes"] + last["grad_bytes"] + last["optimizer_bytes"]
            for key in ("param_bytes", "grad_bytes", "optimizer_bytes"):
                if last[key] != report[key]:
                    failures.append(f"{mesh}: runtime {key} {last[key]} != report {report[key]}")
            if measured != report["param_bytes"] + report["grad_bytes"] + report["optimizer_bytes"]:
                failures.append(f"{mesh}: rank 0's model state {measured} B, its stage's report says otherwise")
            if last["comm_bytes"] != report["comm_bytes"]:
                failures.append(f"{mesh}: runtime sent {last['comm_bytes']} B/step, report {report['comm_bytes']}")
            tpb = report["tensor_parallel"]["comm_bytes"]
            if (tp > 1) != (tpb > 0):
                failures.append(f"{mesh}: tensor-parallel traffic {tpb} B/step")
            print(f"{mesh}: model state {measured} B (formula {formula:.0f}: P_split {split_values}, "
                  f"P_rep {rep_values}), sent {last['comm_bytes']} B/step, of which tensor-parallel {tpb}")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print(f"PASS: {len(meshes)} meshes")

if __name__ == "__main__":
    main()
