#!/usr/bin/env python3
"""A checkpoint directory belongs to one job (runtime/main/CheckpointLease.h), ZeRO-3 on 2 ranks:

  1. mpirun killed with SIGKILL mid-run (its ranks outlive it for a while) and the job started again
     at once into the same --ckpt-dir with --resume, as a requeue does: the second job waits out the
     first or stops naming it, never crashes; every complete checkpoint left verifies (zcc-ckpt
     inspect: sizes and CRC-32 of every rank file against the manifest) and resumes bitwise to the
     losses of an uninterrupted run.
  2. A second job into the directory of a job that is running stops before its first step, naming
     the holder (host, pid, the lease's age); the first goes on, and releases the lease when SIGTERM
     stops it with a checkpoint.
  3. A lease left by a dead process on this host, or by a silent one on another host, is taken over;
     a fresh lease from another host is waited for, then named.
  4. --resume with --steps at or below the checkpoint's step: "nothing left to train", exit 0.
  5. The lease is gone after a run's normal end.

usage: ckpt_lease.py ZCC ZCC_CKPT MODEL.mlir DATA
"""
import glob, json, os, re, signal, socket, subprocess, sys, tempfile, time

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
# The requeue is killed after its third checkpoint: 30 steps leave it 27 to be killed in, and keep the
# test at half its time under ASan (87 s at 60 steps).
STEPS = 30


def losses(log):
    return {r["step"]: r["loss"] for r in map(json.loads, open(log))}


def complete_steps(ckpt):
    return sorted(int(os.path.basename(p)[5:]) for p in glob.glob(os.path.join(ckpt, "step-*"))
                  if os.path.exists(os.path.join(p, "manifest.json")))


def main():
    zcc, zcc_ckpt, model, data = sys.argv[1:5]
    failures = []
    with tempfile.TemporaryDirectory() as w:
        j = lambda *p: os.path.join(w, *p)
        exe = j("z3.bin")
        subprocess.run([zcc, model, "-o", exe, "--world-size", "2", "--zero-stage", "3"], check=True)
        mpirun = lambda *flags: ["mpirun", "-np", "2", exe, "--data", data, "--log-every", "1"] + list(flags)
        full = subprocess.run(mpirun("--steps", str(STEPS), "--log-json", j("full.jsonl")), env=ENV,
                              capture_output=True, text=True)
        if full.returncode:
            sys.exit(f"FAIL: the uninterrupted run exited {full.returncode}: {full.stderr[-1500:]}")
        reference = losses(j("full.jsonl"))

        # 1. mpirun killed, the job requeued at once into the same directory.
        ckpt = j("ck-killed")
        first = subprocess.Popen(mpirun("--steps", str(STEPS), "--ckpt-dir", ckpt, "--ckpt-every", "1",
                                        "--ckpt-keep", "1000", "--log-json", j("first.jsonl")),
                                 env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while len(complete_steps(ckpt)) < 3 and time.time() < deadline and first.poll() is None:
            time.sleep(0.02)
        first.kill()  # SIGKILL to mpirun alone: its ranks go on until they notice
        first.wait()
        second = subprocess.run(mpirun("--steps", str(STEPS), "--ckpt-dir", ckpt, "--ckpt-every", "1",
                                       "--ckpt-keep", "1000", "--resume", "--log-json", j("second.jsonl")),
                                env=ENV, capture_output=True, text=True, timeout=300)
        subprocess.run(["pkill", "-9", "-f", "^" + exe], env=ENV)  # nothing of the first job survives the test
        if second.returncode != 0 and "belongs to another job" not in second.stderr:
            failures.append(f"requeued job: exit {second.returncode} without naming the holder: "
                            f"{second.stderr[-1500:]}")
        elif second.returncode == 0:
            got = losses(j("second.jsonl"))
            wrong = [s for s in got if got[s] != reference[s]]
            if wrong:
                failures.append(f"requeued job: steps {wrong[:3]} differ from the uninterrupted run")
            print(f"requeued job: resumed at step {min(got, default=STEPS)} and trained bitwise to step {STEPS}"
                  + (" (after waiting for the killed job's ranks)" if "waiting up to" in second.stdout else "")
                  + (" (took the lease over)" if "took over" in second.stdout else ""))
        else:
            print("requeued job: stopped naming the killed job's ranks, which still held the directory")
        for step in complete_steps(ckpt):
            at = os.path.join(ckpt, f"step-{step:08d}")
            check = subprocess.run([zcc_ckpt, "inspect", at], capture_output=True, text=True)
            if check.returncode or "checksums verified" not in check.stdout:
                failures.append(f"requeued job: checkpoint {at} does not verify: {check.stderr[-500:]}")
        last = complete_steps(ckpt)[-1]
        if second.returncode == 0 and last < STEPS:
            failures.append(f"requeued job: the newest checkpoint is of step {last}, not {STEPS}")
        if os.path.exists(os.path.join(ckpt, "zcc.lease")):
            failures.append("the lease was not removed at the run's end")

        # 4. Nothing left to train.
        done = subprocess.run(mpirun("--steps", str(STEPS - 20), "--ckpt-dir", ckpt, "--resume"), env=ENV,
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0 or "nothing left to train" not in done.stdout or re.search(r"\s-\d", done.stdout):
            failures.append(f"resume past --steps: exit {done.returncode}, stdout {done.stdout[-600:]!r}")

        # 2. A second job while the first runs (which then stops on SIGTERM, as Slurm preempts).
        ckpt = j("ck-busy")
        running = subprocess.Popen(mpirun("--steps", "100000", "--ckpt-dir", ckpt, "--ckpt-every", "50"),
                                   env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        lease = os.path.join(ckpt, "zcc.lease")
        while not os.path.exists(lease) and running.poll() is None:
            time.sleep(0.02)
        time.sleep(0.2)
        holder = json.load(open(lease)) if os.path.exists(lease) else {}
        intruder = subprocess.run(mpirun("--steps", "400", "--ckpt-dir", ckpt, "--ckpt-every", "50",
                                         "--ckpt-lease-wait", "2"), env=ENV, capture_output=True, text=True,
                                  timeout=120)
        if (intruder.returncode == 0 or "belongs to another job" not in intruder.stderr
                or f"pid {holder.get('pid')}" not in intruder.stderr or "lease refreshed" not in intruder.stderr
                or "step    1 " in intruder.stdout):
            failures.append(f"second job into a busy directory: exit {intruder.returncode}, stderr "
                            f"{intruder.stderr[-800:]!r}")
        else:
            print("second job into a busy directory: " + [l for l in intruder.stderr.splitlines()
                                                          if "belongs to another job" in l][0][:400])
        # SIGTERM to the ranks, as Slurm sends it: a checkpoint, then exit 143.
        for pid in subprocess.run(["pgrep", "-f", "^" + exe], capture_output=True, text=True).stdout.split():
            os.kill(int(pid), signal.SIGTERM)
        _, err = running.communicate(timeout=300)
        if running.returncode == 0 or not complete_steps(ckpt) or os.path.exists(lease):
            failures.append(f"the job holding the directory: exit {running.returncode}, checkpoints "
                            f"{complete_steps(ckpt)[-3:]}, lease left: {os.path.exists(lease)}; {err[-800:]}")

        # 3. Leases left behind.
        dead = subprocess.Popen(["true"])
        dead.wait()
        for case, lease, age, wait, expect in [
                ("a dead process on this host", {"host": socket.gethostname(), "pid": dead.pid}, 0, "30", "took over"),
                ("a silent job on another host", {"host": "node-elsewhere", "pid": 1}, 100, "30", "took over"),
                ("a live job on another host", {"host": "node-elsewhere", "pid": 1}, 0, "1", "belongs to another job")]:
            ckpt = j(f"ck-{len(case)}")
            os.makedirs(ckpt)
            path = os.path.join(ckpt, "zcc.lease")
            json.dump(dict(lease, job=f"{lease['host']}:{lease['pid']}:0", started=time.time() - 1000), open(path, "w"))
            os.utime(path, (time.time() - age, time.time() - age))
            r = subprocess.run(mpirun("--steps", "3", "--ckpt-dir", ckpt, "--ckpt-every", "3",
                                      "--ckpt-lease-wait", wait), env=ENV, capture_output=True, text=True, timeout=120)
            ok = (r.returncode == 0 and expect in r.stdout) if expect == "took over" else \
                 (r.returncode != 0 and expect in r.stderr and lease["host"] in r.stderr)
            if not ok:
                failures.append(f"lease of {case}: exit {r.returncode}, stdout {r.stdout[-400:]!r}, stderr "
                                f"{r.stderr[-600:]!r}")
            else:
                print(f"lease of {case}: {'taken over' if expect == 'took over' else 'waited for, then named'}")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("PASS: one job per checkpoint directory; requeued, intruding and stale-lease cases as expected")


if __name__ == "__main__":
    main()
