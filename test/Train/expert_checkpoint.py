#!/usr/bin/env python3
"""Checkpoints of expert-parallel meshes (zcc --ep) resharded between ep degrees: a run on 4 ranks
at ep 2 and ZeRO-3 saves at step 4; zcc-ckpt reshards it for 4 ranks without expert parallelism
(ZeRO-1), for ep 4 (ZeRO-2, each expert on one rank) and for 2 ranks at ep 2 (ZeRO-3), and a
checkpoint of 2 ranks without it (ZeRO-3) for 4 ranks at ep 2; each resumes to step 8 and every
loss matches one rank's run of 8 steps within 1e-5 (a model without the routers' losses: every
mesh trains the same). The ep mesh resumes its own checkpoint, and consolidate writes every expert
weight whole.

usage: expert_checkpoint.py ZCC ZCC-CKPT MODEL.mlir DATA-FLAGS...
"""
import json, os, struct, subprocess, sys, tempfile


def main():
    zcc, ckpt_tool, model, data = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        def build(name, np_, *flags):
            exe = os.path.join(work, name)
            subprocess.run([zcc, model, "-o", exe, "--world-size", str(np_), "--param-persistence-threshold", "0"]
                           + list(flags), check=True)
            return exe, np_

        def train(target, steps, *flags):
            exe, np_ = target
            log = os.path.join(work, f"log-{os.path.basename(exe)}-{len(os.listdir(work))}.jsonl")
            cmd = [exe, "--steps", str(steps), "--log-every", "1", "--log-json", log] + data + list(flags)
            if np_ > 1:
                cmd = ["mpirun", "-np", str(np_)] + cmd
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env, timeout=600)
            return {r["step"]: r["loss"] for r in map(json.loads, open(log)) if "loss" in r}

        def check(what, losses):
            for step, loss in losses.items():
                rel = abs(loss - reference[step]) / abs(reference[step])
                if rel > 1e-5:
                    failures.append(f"{what}: step {step} loss {loss} vs {reference[step]} ({rel:.2e})")
            print(f"{what}: steps {min(losses)}-{max(losses)} within 1e-5 of one rank's")

        def reshard(source, target, name):
            out = os.path.join(work, name)
            subprocess.run([ckpt_tool, "reshard", source, "--target", target[0], "-o", out], check=True,
                           stdout=subprocess.DEVNULL)
            return out

        one = build("one.bin", 1)
        ep2 = build("ep2-z3.bin", 4, "--ep", "2", "--zero-stage", "3")
        reference = train(one, 8)

        saved = os.path.join(work, "ep2-ckpt")
        check("np 4 ep 2 ZeRO-3, saving at 4", train(ep2, 4, "--ckpt-dir", saved, "--ckpt-every", "4"))
        check("np 4 ep 2 ZeRO-3 resumed", train(ep2, 8, "--ckpt-dir", saved, "--resume"))
        for name, target in (("np 4 ZeRO-1", build("z1.bin", 4, "--zero-stage", "1")),
                             ("np 4 ep 4 ZeRO-2", build("ep4-z2.bin", 4, "--ep", "4", "--zero-stage", "2")),
                             ("np 2 ep 2 ZeRO-3", build("np2-ep2-z3.bin", 2, "--ep", "2", "--zero-stage", "3"))):
            out = reshard(saved, target, name.replace(" ", "-"))
            check(f"ep 2 resharded to {name}", train(target, 8, "--ckpt-dir", out, "--resume"))

        dense = build("np2-z3.bin", 2, "--zero-stage", "3")
        plain = os.path.join(work, "np2-ckpt")
        train(dense, 4, "--ckpt-dir", plain, "--ckpt-every", "4")
        check("np 2 ZeRO-3 resharded to np 4 ep 2 ZeRO-3", train(ep2, 8, "--ckpt-dir", reshard(plain, ep2, "to-ep2"),
                                                                 "--resume"))

        # Consolidated: every expert weight whole, each expert rank's experts in their place.
        described = json.loads(subprocess.run([one[0], "--describe"], check=True, capture_output=True,
                                              text=True).stdout)
        whole = os.path.join(work, "whole.safetensors")
        subprocess.run([ckpt_tool, "consolidate", saved, "-o", whole], check=True, stdout=subprocess.DEVNULL)
        with open(whole, "rb") as f:
            header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
        for p in described["params"]:
            if header.get(p["name"], {}).get("shape") != p["shape"]:
                failures.append(f"consolidated {p['name']}: {header.get(p['name'])}, expected shape {p['shape']}")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
