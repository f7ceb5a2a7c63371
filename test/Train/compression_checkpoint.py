#!/usr/bin/env python3
"""Compression training's pruning masks across checkpoints.

DeepSpeed computes an l1 mask once, from the weights training starts from; a resumed run must
keep it, not recompute it from whatever weights it starts up with. An uninterrupted run from
weights A (pruning on from step 2) is the reference; a run from A checkpointed at step 4 then
resumes (a) started from other weights B (so only the checkpoint's masks give A's), and (b)
resharded by zcc-ckpt for 2 ranks at ZeRO-3 (masks are whole on every rank, the moments
sharded). Both continue the reference's losses.

And --export-weights writes the weights the compressed forward pass computes with (quantized in
its groups, including a [in, out] weight's blocks of columns, then masked): the model compiled
without --compression, from the exported file, gives the compressed run's last validation loss.

usage: compression_checkpoint.py ZCC ZCC-CKPT MODEL.mlir CONFIG.json DATA HELD-OUT
"""
import array, json, math, os, random, re, subprocess, sys, tempfile

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")


def losses(log):
    return {r["step"]: r["loss"] for r in map(json.loads, open(log))}


def main():
    zcc, zcc_ckpt, model, config, data, heldout = sys.argv[1:7]
    with tempfile.TemporaryDirectory() as work:
        w = lambda name: os.path.join(work, name)  # noqa: E731
        one, two = w("one.bin"), w("two.bin")
        subprocess.run([zcc, model, "-o", one, "--compression", config], check=True)
        subprocess.run([zcc, model, "-o", two, "--compression", config, "--world-size", "2", "--zero-stage", "3",
                        "--param-persistence-threshold", "0"], check=True)
        count = sum(math.prod(int(d) for d in dims.split("x"))
                    for dims in re.findall(r"^zc\.param @\w+ : tensor<([0-9x]+)xf32>", open(model).read(), re.M))
        rng = random.Random(5)
        for name in ("A.f32", "B.f32"):
            with open(w(name), "wb") as f:
                f.write(array.array("f", (rng.gauss(0.0, 0.02) for _ in range(count))).tobytes())

        def train(exe, ranks, log, *flags):
            cmd = [exe, "--steps", "8", "--log-every", "1", "--log-json", log, "--data", data] + list(flags)
            if ranks > 1:
                cmd = ["mpirun", "-np", str(ranks)] + cmd
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=ENV, timeout=300)

        train(one, 1, w("ref.jsonl"), "--init-weights", w("A.f32"))
        ref = losses(w("ref.jsonl"))
        subprocess.run([one, "--steps", "4", "--data", data, "--init-weights", w("A.f32"), "--ckpt-dir", w("ck"),
                        "--ckpt-every", "4"], check=True, stdout=subprocess.DEVNULL, env=ENV)
        def check(what, log, tolerance):
            got = losses(w(log))
            worst = max(abs(got[s] - ref[s]) for s in range(5, 9))
            print(f"{what}: steps 5-8 within {worst:.1e} of the uninterrupted run")
            if sorted(got) != [5, 6, 7, 8] or worst > tolerance:
                sys.exit(f"FAIL: {what}: {got} against {ref}")

        train(one, 1, w("resumed.jsonl"), "--init-weights", w("B.f32"), "--ckpt-dir", w("ck"), "--resume")
        check("resumed from other weights", "resumed.jsonl", 0.0)
        subprocess.run([zcc_ckpt, "reshard", "--target", two, "-o", w("ck2"), os.path.join(w("ck"), "step-00000004")],
                       check=True, stdout=subprocess.DEVNULL)
        train(two, 2, w("resharded.jsonl"), "--ckpt-dir", w("ck2"), "--resume")
        check("resharded to 2 ranks at ZeRO-3", "resharded.jsonl", 1e-5)

        # The export: the plain model from it (lr 1e-30: its update moves nothing by an ulp)
        # evaluates as the compressed one did after its last step.
        plain = w("plain.bin")
        subprocess.run([zcc, model, "-o", plain], check=True)
        evaluation = ["--eval-data", heldout, "--eval-iters", "1"]
        train(one, 1, w("export.jsonl"), "--init-weights", w("A.f32"), "--export-weights", w("out.f32"),
              "--eval-every", "8", *evaluation)
        subprocess.run([plain, "--steps", "1", "--lr", "1e-30", "--log-every", "1", "--log-json", w("plain.jsonl"),
                        "--data", data, "--init-weights", w("out.f32"), "--eval-every", "1", *evaluation],
                       check=True, stdout=subprocess.DEVNULL, env=ENV, timeout=300)
        compressed = [r["val_loss"] for r in map(json.loads, open(w("export.jsonl"))) if "val_loss" in r][-1]
        exported = [r["val_loss"] for r in map(json.loads, open(w("plain.jsonl"))) if "val_loss" in r][-1]
        print(f"export: the plain model from it {exported:.6f}, the compressed run {compressed:.6f}")
        if abs(exported - compressed) > 1e-6:
            sys.exit("FAIL: --export-weights is not what the compressed forward pass computes with")
    print("PASS")


if __name__ == "__main__":
    main()
