#!/usr/bin/env python3
"""Checkpoints across meshes: a run on tp 2 x pp 2 saves at step 4, zcc-ckpt reshards it for
4 data-parallel ranks at ZeRO-3, which resume it to step 8, and back to tp 2 x pp 2, which resume
that to step 8 too; every resumed loss matches one rank's run of 8 steps within 1e-5. The same
mesh resumes its own checkpoint, and consolidate writes every parameter whole. The same round trip
from an interleaved pipeline (tp 2 x pp 2 x 2 chunks per rank: each rank's file holds its chunks in
turn) and from ZB-V (tp 2 x pp 2, rank r holding stages r and 3 - r: rank 0's file the first stage's
and the last's).

usage: mesh_checkpoint.py ZCC ZCC-CKPT MODEL.mlir DATA-FLAGS...
"""
import json, os, struct, subprocess, sys, tempfile

def main():
    zcc, ckpt_tool, model, data = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        def build(name, *flags):
            exe = os.path.join(work, name)
            subprocess.run([zcc, model, "-o", exe] + list(flags), check=True)
            return exe

        def train(exe, np_, steps, *flags):
            log = os.path.join(work, f"log-{os.path.basename(exe)}-{len(os.listdir(work))}.jsonl")
            cmd = [exe, "--steps", str(steps), "--log-every", "1", "--log-json", log] + data + list(flags)
            if np_ > 1:
                cmd = ["mpirun", "-np", str(np_)] + cmd
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env, timeout=600)
            return {r["step"]: r["loss"] for r in map(json.loads, open(log))}

        one = build("one.bin")
        mesh = build("mesh.bin", "--world-size", "4", "--tp", "2", "--pp", "2", "--grad-accum", "2")
        zero3 = build("zero3.bin", "--world-size", "4", "--zero-stage", "3")
        interleaved = build("interleaved.bin", "--world-size", "4", "--tp", "2", "--pp", "2", "--pp-interleave", "2",
                            "--grad-accum", "2")
        vee = build("zbv.bin", "--world-size", "4", "--tp", "2", "--pp", "2", "--pp-schedule", "zbv",
                    "--grad-accum", "2")
        reference = train(one, 1, 8)

        def check(what, losses):
            for step, loss in losses.items():
                rel = abs(loss - reference[step]) / abs(reference[step])
                if rel > 1e-5:
                    failures.append(f"{what}: step {step} loss {loss} vs {reference[step]} ({rel:.2e})")
            print(f"{what}: steps {sorted(losses)}")

        def round_trip(what, exe):
            """`exe` saves at 4 and resumes to 8; its checkpoint resharded to dp 4 at ZeRO-3 resumes to 8;
            the returned checkpoint directory is `exe`'s."""
            saved = os.path.join(work, f"{what}-ckpt")
            check(f"{what}, saving at 4", train(exe, 4, 4, "--ckpt-dir", saved, "--ckpt-every", "4"))
            check(f"{what} resumed", train(exe, 4, 8, "--ckpt-dir", saved, "--resume"))
            to_zero3 = os.path.join(work, f"{what}-to-zero3-ckpt")
            subprocess.run([ckpt_tool, "reshard", saved, "--target", zero3, "-o", to_zero3], check=True)
            check(f"{what} resharded to dp4 ZeRO-3", train(zero3, 4, 8, "--ckpt-dir", to_zero3, "--resume"))
            back = os.path.join(work, f"{what}-back-ckpt")
            subprocess.run([ckpt_tool, "reshard", to_zero3, "--target", exe, "-o", back], check=True)
            check(f"resharded back to {what}", train(exe, 4, 8, "--ckpt-dir", back, "--resume"))
            return saved

        saved = round_trip("tp2 x pp2", mesh)
        chunked = round_trip("tp2 x pp2 x 2 chunks", interleaved)
        v_shaped = round_trip("tp2 x pp2 zbv", vee)
        described = json.loads(subprocess.run([one, "--describe"], check=True, capture_output=True,
                                              text=True).stdout)
        for name, source in (("mesh", saved), ("interleaved", chunked), ("zbv", v_shaped)):
            whole = os.path.join(work, f"whole-{name}.safetensors")
            subprocess.run([ckpt_tool, "consolidate", source, "-o", whole], check=True, stdout=subprocess.DEVNULL)
            with open(whole, "rb") as f:
                header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
            for p in described["params"]:
                if header.get(p["name"], {}).get("shape") != p["shape"]:
                    failures.append(f"consolidated {name} {p['name']}: {header.get(p['name'])}, expected shape "
                                    f"{p['shape']}")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("PASS")

if __name__ == "__main__":
    main()
