#!/usr/bin/env python3
"""The compile-time memory plan is what the executable uses: for each ZeRO stage, the
arena zcc --report=json announces is the arena train.bin allocates, and the bytes the
steps actually write (train.bin paints the scratch region and finds the highest byte
written) reach it within 1%.

usage: memory_plan.py ZCC MODEL.mlir RANKS DATA-FLAGS... [-- ZCC-FLAGS...]   (a mesh: -- --cp 2 --ep 2)
"""
import json, os, subprocess, sys, tempfile

def main():
    zcc, model, ranks, data = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    mesh = data[data.index("--") + 1:] if "--" in data else []
    data = data[:data.index("--")] if "--" in data else data
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        for stage in range(4):
            exe = os.path.join(work, f"train-z{stage}.bin")
            subprocess.run([zcc, model, "-o", exe, "--world-size", str(ranks), "--zero-stage", str(stage),
                            "--report=json"] + mesh, check=True)
            report = json.load(open(exe + ".report.json"))
            log = os.path.join(work, f"log-z{stage}.jsonl")
            subprocess.run(["mpirun", "-np", str(ranks), exe, "--steps", "2", "--log-every", "1",
                            "--log-json", log] + data, check=True, stdout=subprocess.DEVNULL, timeout=600)
            last = [json.loads(line) for line in open(log)][-1]
            planned, measured = last["planned_arena_bytes"], last["measured_arena_bytes"]
            if planned != report["arena_bytes"]:
                failures.append(f"stage {stage}: train.bin allocates {planned} B, the report says "
                                f"{report['arena_bytes']} B")
            if not (0.99 * planned <= measured <= planned):
                failures.append(f"stage {stage}: wrote up to {measured} B of a {planned} B plan")
            print(f"stage {stage}: arena {planned} B planned, {measured} B written "
                  f"({100.0 * measured / planned:.2f}%), peak at {report['peak_op']}")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("PASS")

if __name__ == "__main__":
    main()
