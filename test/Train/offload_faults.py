#!/usr/bin/env python3
"""NVMe offload (--offload-optimizer nvme) when things go wrong (GPT example):

  1. 2 ranks, ZeRO-3, optimizer state and parameter shards on NVMe, checkpoints every 2 steps,
     killed with SIGKILL right after starting a swap
     write in the middle of step 5's update (transfers in flight): --resume continues from the
     step-4 checkpoint and its losses equal an uninterrupted run's, bitwise; the killed run left
     no store file behind (the store is unlinked when it opens).
  2. A checkpoint written by an offloaded run resumes in a run without offload, and the reverse:
     the checkpoint's layout does not depend on the tier.
  3. Refused before training, with the directory and the reason: a --nvme-path that does not
     exist, one that is a file, a file-size limit smaller than the store (ulimit -f), and, where
     this machine lets root mount a tmpfs, a directory on a 1 MiB file system (the disk is full).
  4. On a tmpfs (before Linux 6.6 without O_DIRECT: the store falls back to buffered I/O and
     says so) the losses are those of the run without offload, bitwise.

usage: offload_faults.py ZCC MODEL.mlir DATA
"""
import json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkpoint import losses, train  # the checkpoint test's runs: mpirun, the test hooks, the logs

def compile_(zcc, model, out, ranks, *flags):
    subprocess.run([zcc, model, "-o", out, "--world-size", str(ranks), "--zero-stage", "3" if ranks > 1 else "0", "--param-persistence-threshold", "0",
                    *flags], check=True)

def refused(r, *needles):
    text = r.stdout + r.stderr
    if r.returncode == 0 or not all(n in text for n in needles):
        sys.exit(f"FAIL: expected a refusal naming {needles}, got exit {r.returncode}:\n{text[-2000:]}")
    if "step     1" in text:
        sys.exit(f"FAIL: the refusal came after training started:\n{text[-2000:]}")

def main():
    zcc, model, data = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as work:
        store = os.path.join(work, "nvme")
        os.mkdir(store)
        plain, offloaded = os.path.join(work, "plain.bin"), os.path.join(work, "offload.bin")
        compile_(zcc, model, plain, 2)
        compile_(zcc, model, offloaded, 2, "--offload-optimizer", "nvme", "--offload-param", "nvme",
                 "--nvme-path", store, "--offload-buffer-size", "64K", "--report=json")
        chunks = json.load(open(offloaded + ".report.json"))["nvme_swap"]["chunks"]
        writes_per_step = 3 * chunks  # AdamW in fp32, ZeRO-3: two moments and the shard a chunk

        # 1. Killed in the middle of a swap, resumed from the last checkpoint.
        ref_log = os.path.join(work, "ref.jsonl")
        train(plain, 2, data, "--steps", "8", "--log-json", ref_log)
        ref = losses(ref_log)
        ckpt = os.path.join(work, "ckpt")
        killed = train(offloaded, 2, data, "--steps", "8", "--ckpt-dir", ckpt, "--ckpt-every", "2",
                       fault=f"kill-in-swap:{4 * writes_per_step + chunks}", expect_ok=False)
        if killed.returncode == 0:
            sys.exit("FAIL: the run meant to die in a swap finished")
        left = [f for f in os.listdir(store) if f.startswith("zcc-nvme-store")]
        if left:
            sys.exit(f"FAIL: the killed run left store files behind: {left}")
        resumed_log = os.path.join(work, "resumed.jsonl")
        train(offloaded, 2, data, "--steps", "8", "--ckpt-dir", ckpt, "--ckpt-every", "2", "--resume",
              "--log-json", resumed_log)
        resumed = losses(resumed_log)
        if sorted(resumed) != [5, 6, 7, 8]:
            sys.exit(f"FAIL: the resumed run logged steps {sorted(resumed)}, expected 5-8 (from the step-4 checkpoint)")
        for step, loss in resumed.items():
            if loss != ref[step]:
                sys.exit(f"FAIL: step {step}: resumed loss {loss!r} != uninterrupted {ref[step]!r}")
        print(f"killed in swap write {4 * writes_per_step + chunks} (step 5), resumed steps 5-8 bitwise")

        # 2. Checkpoints cross tiers: offloaded -> plain and plain -> offloaded.
        for source, target, name in ((offloaded, plain, "offload-to-plain"), (plain, offloaded, "plain-to-offload")):
            d = os.path.join(work, name)
            train(source, 2, data, "--steps", "4", "--ckpt-dir", d, "--ckpt-every", "4")
            log = os.path.join(work, name + ".jsonl")
            train(target, 2, data, "--steps", "8", "--ckpt-dir", d, "--resume", "--log-json", log)
            for step, loss in losses(log).items():
                if loss != ref[step]:
                    sys.exit(f"FAIL: {name}: step {step}: {loss!r} != uninterrupted {ref[step]!r}")
        print("checkpoints resume across tiers bitwise")

        # 3. Refusals before training.
        single = os.path.join(work, "single.bin")
        compile_(zcc, model, single, 1, "--offload-optimizer", "nvme", "--nvme-path", store)
        missing = os.path.join(work, "no-such-dir")
        refused(train(single, 1, data, "--steps", "2", "--nvme-path", missing, expect_ok=False),
                f"--nvme-path {missing} is not a directory")
        a_file = os.path.join(work, "a-file")
        open(a_file, "w").close()
        refused(train(single, 1, data, "--steps", "2", "--nvme-path", a_file, expect_ok=False),
                f"--nvme-path {a_file} is not a directory")
        # ulimit -f is in KiB in bash: 1 MiB is less than the example's 6.6 MiB store.
        refused(train(single, 1, data, "--steps", "2", expect_ok=False, prefix=("bash", "-c", 'ulimit -f 1024; exec "$@"', "-")),
                "cannot reserve", f"--nvme-path {store}", "File too large")
        print("missing directory, a file, a file-size limit: refused before training")

        tiny = os.path.join(work, "tiny")
        os.mkdir(tiny)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", tiny], capture_output=True).returncode == 0:
            try:
                refused(train(single, 1, data, "--steps", "2", "--nvme-path", tiny, expect_ok=False),
                        f"--nvme-path {tiny} has", "the disk is full or too small")
            finally:
                subprocess.run(["umount", tiny])
            # 4. tmpfs: no O_DIRECT, buffered, the same losses.
            roomy = os.path.join(work, "roomy")
            os.mkdir(roomy)
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", roomy], check=True)
            try:
                plain1 = os.path.join(work, "plain1.bin")
                compile_(zcc, model, plain1, 1)
                a, b = os.path.join(work, "a.jsonl"), os.path.join(work, "b.jsonl")
                train(plain1, 1, data, "--steps", "6", "--log-json", a)
                r = train(single, 1, data, "--steps", "6", "--log-json", b, "--nvme-path", roomy)
                store_line = [l for l in r.stdout.splitlines() if "nvme store" in l]
                if not store_line:
                    sys.exit(f"FAIL: the start-up line does not describe the store:\n{r.stdout[-1500:]}")
                print("tmpfs:", store_line[0][store_line[0].index("nvme store"):])
                if losses(a) != losses(b):
                    sys.exit(f"FAIL: on tmpfs the losses differ: {losses(a)} vs {losses(b)}")
            finally:
                subprocess.run(["umount", roomy])
            print("a 1 MiB file system refused; on tmpfs bitwise")
        else:
            print("no tmpfs mount here (not root, or no CAP_SYS_ADMIN): the full-disk and tmpfs cases not run")
    print("PASS")

if __name__ == "__main__":
    main()
