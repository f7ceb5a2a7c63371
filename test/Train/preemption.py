#!/usr/bin/env python3
"""Preemption (GPT example, 4 ranks, ZeRO-3), as Slurm preempts a job:

  1. SIGTERM to every rank in the middle of a run: each finishes its step, a checkpoint is written
     to --ckpt-dir, the run exits non-zero saying where; --resume then gives bitwise the losses of
     an uninterrupted run for every later step.
  2. SIGUSR1 (`sbatch --signal=USR1@90`) to one rank only: every rank stops at the same step.
  3. A second signal stops the run at once.

usage: preemption.py ZCC MODEL.mlir DATA
"""
import glob, json, os, signal, subprocess, sys, tempfile, time

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
# Long enough that a signal sent once the step-5 checkpoint is seen lands mid-run (a step takes 0.1-0.3 s
# here; the run is checked not to have finished first), short enough that the four runs to the end
# (uninterrupted, two resumes, one stopped twice) take 50 s under ASan here (at 120 steps: 122 s).
STEPS = 40


def rank_pids(exe):
    out = subprocess.run(["pgrep", "-f", "^" + exe], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out]


def start(exe, data, ckpt, log, *flags):
    cmd = ["mpirun", "-np", "4", exe, "--data", data, "--steps", str(STEPS), "--ckpt-dir", ckpt, "--ckpt-every",
           "5", "--ckpt-keep", "100", "--log-every", "1", "--log-json", log] + list(flags)
    return subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_checkpoint(proc, ckpt, step=5, timeout=120):
    deadline = time.time() + timeout
    while not os.path.exists(os.path.join(ckpt, f"step-{step:08d}", "manifest.json")):
        if proc.poll() is not None or time.time() > deadline:
            out, err = proc.communicate()
            sys.exit(f"FAIL: no checkpoint of step {step}: exit {proc.returncode}\n{out[-1500:]}\n{err[-1500:]}")
        time.sleep(0.05)


def losses(log):
    return {r["step"]: r["loss"] for r in map(json.loads, open(log))}


def main():
    zcc, model, data = sys.argv[1:4]
    failures = []
    with tempfile.TemporaryDirectory() as w:
        j = lambda *p: os.path.join(w, *p)
        exe = j("z3.bin")
        subprocess.run([zcc, model, "-o", exe, "--world-size", "4", "--zero-stage", "3"], check=True)
        full = subprocess.run(["mpirun", "-np", "4", exe, "--data", data, "--steps", str(STEPS), "--log-every", "1",
                               "--log-json", j("full.jsonl")], env=ENV, capture_output=True, text=True)
        if full.returncode:
            sys.exit(f"FAIL: the uninterrupted run exited {full.returncode}: {full.stderr[-1500:]}")
        reference = losses(j("full.jsonl"))

        for case, sig, which in [("SIGTERM to every rank", signal.SIGTERM, "all"),
                                 ("SIGUSR1 to one rank", signal.SIGUSR1, "one")]:
            ckpt, log = j(f"ck-{sig}"), j(f"log-{sig}.jsonl")
            proc = start(exe, data, ckpt, log)
            wait_for_checkpoint(proc, ckpt)
            pids = rank_pids(exe)
            if len(pids) != 4:
                failures.append(f"{case}: found {len(pids)} ranks")
            for pid in (pids if which == "all" else pids[-1:]):
                os.kill(pid, sig)
            out, err = proc.communicate(timeout=300)
            stopped = sorted(int(os.path.basename(p)[5:]) for p in glob.glob(os.path.join(ckpt, "step-*"))
                             if os.path.exists(os.path.join(p, "manifest.json")))
            last = stopped[-1] if stopped else 0
            if proc.returncode == 0 or f"stopped by a signal after step {last}" not in out:
                failures.append(f"{case}: exit {proc.returncode}, last checkpoint {last}; stdout "
                                f"{out.strip()[-300:]!r} stderr {err.strip()[-3000:]!r}")
                continue
            if last >= STEPS:
                failures.append(f"{case}: the run finished before the signal took effect")
                continue
            resumed = subprocess.run(["mpirun", "-np", "4", exe, "--data", data, "--steps", str(STEPS),
                                      "--ckpt-dir", ckpt, "--resume", "--log-every", "1", "--log-json",
                                      j(f"resumed-{sig}.jsonl")], env=ENV, capture_output=True, text=True)
            if resumed.returncode:
                failures.append(f"{case}: --resume exited {resumed.returncode}: {resumed.stderr[-800:]}")
                continue
            got = losses(j(f"resumed-{sig}.jsonl"))
            expected = {s: l for s, l in reference.items() if s > last}
            if got != expected:
                bad = [s for s in expected if got.get(s) != expected[s]][:3]
                failures.append(f"{case}: resumed from step {last}, steps {bad} differ from the uninterrupted run")
            print(f"{case}: stopped after step {last}, resumed bitwise through step {STEPS}")

        # A second signal: no checkpoint, now.
        ckpt = j("ck-twice")
        proc = start(exe, data, ckpt, j("twice.jsonl"))
        wait_for_checkpoint(proc, ckpt)
        pids = rank_pids(exe)
        for pid in pids:
            os.kill(pid, signal.SIGTERM)
            os.kill(pid, signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=120)
            if proc.returncode == 0:
                failures.append("two signals: the run exited 0")
        except subprocess.TimeoutExpired:
            proc.kill()
            failures.append("two signals: the run did not stop")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("PASS: preempted runs checkpoint, stop together and resume bitwise")


if __name__ == "__main__":
    main()
