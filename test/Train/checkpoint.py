#!/usr/bin/env python3
"""Sharded checkpoints end to end (GPT example):

  1. 2 ranks, ZeRO-3, killed with SIGKILL in the middle of a step, and again between writing
     the rank files and the manifest of a checkpoint: --resume reaches the same final weights
     as an uninterrupted run, byte for byte.
  2. A checkpoint from 4 ranks at ZeRO-3, resharded by zcc-ckpt for 2 ranks at ZeRO-1, resumes
     there; its losses continue those of the uninterrupted 4-rank run within fp32 tolerance.
  3. Damaged or mismatched checkpoints are refused before training: truncated shard, flipped
     byte, another model, another world size, another learning-rate schedule (unless
     --override-lr-schedule).
  4. zcc-ckpt consolidate writes safetensors that PyTorch loads (JSON header + frombuffer);
     the PyTorch model's loss on a batch equals train.bin's loss from --init on that file.

usage: checkpoint.py ZCC ZCC-CKPT MODEL.mlir DATA
"""
import json, os, struct, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")

def compile_(zcc, model, out, ranks, stage):
    subprocess.run([zcc, model, "-o", out, "--world-size", str(ranks), "--zero-stage", str(stage)], check=True)

def train(exe, ranks, data, *flags, fault=None, expect_ok=True, prefix=()):
    """Runs `exe` (under mpirun above one rank, after `prefix`: e.g. a shell setting a ulimit)."""
    env = dict(ENV)
    if fault:
        env["ZCC_FAULT"] = fault
    cmd = list(prefix) + ([] if ranks == 1 else ["mpirun", "-np", str(ranks)]) + \
        [exe, "--data", data, "--log-every", "1"] + list(flags)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if expect_ok and r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r

def losses(log):
    return {json.loads(l)["step"]: json.loads(l)["loss"] for l in open(log)}

def main():
    zcc, zcc_ckpt, model, data = sys.argv[1:5]
    failures = []
    with tempfile.TemporaryDirectory() as w:
        j = lambda *p: os.path.join(w, *p)
        # 1. Crashes.
        compile_(zcc, model, j("z3.bin"), 2, 3)
        train(j("z3.bin"), 2, data, "--steps", "10", "--export-weights", j("full.f32"))
        for fault in ("kill-in-step:5", "kill-before-manifest:6"):
            ckpt = j("ck-" + fault.split(":")[0])
            r = train(j("z3.bin"), 2, data, "--steps", "10", "--ckpt-dir", ckpt, "--ckpt-every", "3", fault=fault,
                      expect_ok=False)
            if r.returncode == 0:
                failures.append(f"{fault}: the run was not killed")
            if fault.startswith("kill-before-manifest") and os.path.exists(os.path.join(ckpt, "step-00000006",
                                                                                         "manifest.json")):
                failures.append("the checkpoint killed before its manifest has one")
            train(j("z3.bin"), 2, data, "--steps", "10", "--ckpt-dir", ckpt, "--ckpt-every", "3", "--resume",
                  "--export-weights", j("resumed.f32"))
            if open(j("full.f32"), "rb").read() != open(j("resumed.f32"), "rb").read():
                failures.append(f"{fault}: resumed weights differ from the uninterrupted run's")
            else:
                print(f"{fault}: resumed run ends with the uninterrupted run's weights, byte for byte")

        # 2. Reshard 4 ranks ZeRO-3 -> 2 ranks ZeRO-1.
        compile_(zcc, model, j("z3x4.bin"), 4, 3)
        compile_(zcc, model, j("z1x2.bin"), 2, 1)
        train(j("z3x4.bin"), 4, data, "--steps", "10", "--ckpt-dir", j("ck4"), "--ckpt-every", "5",
              "--ckpt-keep", "5", "--log-json", j("four.jsonl"))
        subprocess.run([zcc_ckpt, "reshard", j("ck4", "step-00000005"), "--target", j("z1x2.bin"), "-o", j("ck2")],
                       check=True)
        train(j("z1x2.bin"), 2, data, "--steps", "10", "--ckpt-dir", j("ck2"), "--resume", "--log-json", j("two.jsonl"))
        four, two = losses(j("four.jsonl")), losses(j("two.jsonl"))
        worst = max(abs(four[s] - two[s]) / abs(four[s]) for s in two)
        if sorted(two) != list(range(6, 11)) or worst > 1e-4:
            failures.append(f"resharded run: steps {sorted(two)}, worst relative loss difference {worst:.2e}")
        else:
            print(f"reshard 4 ranks ZeRO-3 -> 2 ranks ZeRO-1: steps 6-10 within {worst:.1e} of the 4-rank run")

        # 3. Refusals.
        import shutil
        bad = j("bad")
        def refused(case, exe, ranks, expect):
            r = train(exe, ranks, data, "--steps", "12", "--ckpt-dir", bad, "--resume", expect_ok=False)
            text = r.stdout + r.stderr
            if r.returncode == 0 or expect not in text or "step     " in text:
                failures.append(f"{case}: not refused with '{expect}' before training (exit {r.returncode})")
            else:
                print(f"{case}: refused ({expect})")
        def fresh():
            shutil.rmtree(bad, ignore_errors=True)
            shutil.copytree(j("ck4", "step-00000010"), os.path.join(bad, "step-00000010"))
            return os.path.join(bad, "step-00000010")
        shard = os.path.join(fresh(), "rank-1.bin")
        with open(shard, "r+b") as f:
            f.truncate(1000)
        refused("truncated shard", j("z3x4.bin"), 4, "truncated")
        shard = os.path.join(fresh(), "rank-2.bin")
        with open(shard, "r+b") as f:
            f.seek(4096)
            b = f.read(1)
            f.seek(4096)
            f.write(bytes([b[0] ^ 0xFF]))
        refused("flipped byte", j("z3x4.bin"), 4, "checksum mismatch")
        fresh()
        refused("another world size", j("z3.bin"), 2, "zcc-ckpt reshard")
        # Another learning-rate schedule than the checkpoint's (cosine over 12 steps, not constant).
        r = train(j("z3x4.bin"), 4, data, "--steps", "12", "--lr-schedule", "cosine", "--ckpt-dir", bad, "--resume",
                  expect_ok=False)
        if r.returncode == 0 or "--override-lr-schedule" not in r.stdout + r.stderr:
            failures.append(f"another lr schedule: not refused (exit {r.returncode})")
        else:
            print("another lr schedule: refused")
        r = train(j("z3x4.bin"), 4, data, "--steps", "12", "--lr-schedule", "cosine", "--ckpt-dir", bad, "--resume",
                  "--override-lr-schedule", expect_ok=False)
        if r.returncode != 0 or "step    12" not in r.stdout:
            failures.append(f"--override-lr-schedule: the run did not go on to step 12 (exit {r.returncode})")
        else:
            print("another lr schedule with --override-lr-schedule: resumed")
        fresh()
        compile_(zcc, os.path.join(os.path.dirname(model), "mlp.mlir"), j("mlp.bin"), 4, 3)
        r = subprocess.run(["mpirun", "-np", "4", j("mlp.bin"), "--synthetic", "--steps", "12", "--ckpt-dir", bad,
                            "--resume"], env=ENV, capture_output=True, text=True)
        if r.returncode == 0 or "of model 'gpt'" not in r.stdout + r.stderr:
            failures.append("another model: not refused")
        else:
            print("another model: refused")

        # 4. Safetensors into PyTorch.
        out = j("gpt.safetensors")
        subprocess.run([zcc_ckpt, "consolidate", j("ck4", "step-00000010"), "-o", out], check=True)
        compile_(zcc, model, j("one.bin"), 1, 0)
        train(j("one.bin"), 1, data, "--steps", "1", "--init", out, "--log-json", j("one.jsonl"))
        zcc_loss = losses(j("one.jsonl"))[1]
        import torch
        from torch_reference import TextData, gpt_loss, read_model
        raw = open(out, "rb").read()
        n = struct.unpack("<Q", raw[:8])[0]
        header = json.loads(raw[8:8 + n])
        weights = {}
        for name, t in header.items():
            if name == "__metadata__":
                continue
            begin, end = t["data_offsets"]
            weights[name] = torch.frombuffer(bytearray(raw[8 + n + begin:8 + n + end]), dtype=torch.float32).reshape(t["shape"])
        params, batch, heads = read_model(model)
        tokens, targets = TextData(data, dict(params)["wpe"][0]).batch(0, batch)
        torch_loss = gpt_loss(weights, tokens, targets, heads).mean().item()
        rel = abs(torch_loss - zcc_loss) / abs(torch_loss)
        if rel > 1e-5:
            failures.append(f"safetensors: PyTorch loss {torch_loss}, train.bin {zcc_loss}")
        else:
            print(f"safetensors: PyTorch loss {torch_loss:.6f}, train.bin --init {zcc_loss:.6f} (relative {rel:.1e})")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("PASS")

if __name__ == "__main__":
    main()
