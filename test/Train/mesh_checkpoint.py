#!/usr/bin/env python3
"""Checkpoints across meshes: a run on tp 2 x pp 2 saves at step 4, zcc-ckpt reshards it for
4 data-parallel ranks at ZeRO-3, which resume it to step 8, and back to tp 2 x pp 2, which resume
that to step 8 too; every resumed loss matches one rank's run of 8 steps within 1e-5. The same
mesh resumes its own checkpoint, and consolidate writes every parameter whole. The same round trip
from an interleaved pipeline (tp 2 x pp 2 x 2 chunks per rank: each rank's file holds its chunks in
turn).

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
        reference = train(one, 1, 8)

        def check(what, losses):
            for step, loss in losses.items():
                rel = abs(loss - reference[step]) / abs(reference[step])
                if rel > 1e-5:
                    failures.append(f"{what}: step {step} loss {loss} vs {reference[step]} ({rel:.2e})")
            print(f"{what}: steps {sorted(losses)}")

        saved = os.path.join(work, "mesh-ckpt")
        check("tp2 x pp2, saving at 4", train(mesh, 4, 4, "--ckpt-dir", saved, "--ckpt-every", "4"))
        check("tp2 x pp2 resumed", train(mesh, 4, 8, "--ckpt-dir", saved, "--resume"))
        to_zero3 = os.path.join(work, "zero3-ckpt")
        subprocess.run([ckpt_tool, "reshard", saved, "--target", zero3, "-o", to_zero3], check=True)
        check("resharded to dp4 ZeRO-3", train(zero3, 4, 8, "--ckpt-dir", to_zero3, "--resume"))
        back = os.path.join(work, "back-ckpt")
        subprocess.run([ckpt_tool, "reshard", to_zero3, "--target", mesh, "-o", back], check=True)
        check("resharded back to tp2 x pp2", train(mesh, 4, 8, "--ckpt-dir", back, "--resume"))
        chunked = os.path.join(work, "interleaved-ckpt")
        check("tp2 x pp2 x 2 chunks, saving at 4",
              train(interleaved, 4, 4, "--ckpt-dir", chunked, "--ckpt-every", "4"))
        check("tp2 x pp2 x 2 chunks resumed", train(interleaved, 4, 8, "--ckpt-dir", chunked, "--resume"))
        chunked_zero3 = os.path.join(work, "chunked-zero3-ckpt")
        subprocess.run([ckpt_tool, "reshard", chunked, "--target", zero3, "-o", chunked_zero3], check=True)
        check("2 chunks resharded to dp4 ZeRO-3", train(zero3, 4, 8, "--ckpt-dir", chunked_zero3, "--resume"))
        to_chunks = os.path.join(work, "to-chunks-ckpt")
        subprocess.run([ckpt_tool, "reshard", to_zero3, "--target", interleaved, "-o", to_chunks], check=True)
        check("resharded to tp2 x pp2 x 2 chunks", train(interleaved, 4, 8, "--ckpt-dir", to_chunks, "--resume"))
        described = json.loads(subprocess.run([one, "--describe"], check=True, capture_output=True,
                                              text=True).stdout)
        for name, source in (("mesh", saved), ("interleaved", chunked)):
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
