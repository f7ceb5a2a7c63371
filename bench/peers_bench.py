#!/usr/bin/env python3
"""zcc against DeepSpeed ZeRO, PyTorch FSDP2 and DDP on this machine, side by side.

One command: sets up the peers (bench/setup_peers.sh: PyTorch 2.x and DeepSpeed from PyPI
into a virtual environment outside the repository), then for each row trains the same model
from the same weights on the same batches with the same AdamW in zcc (CPU backend) and in
each peer, and prints a table (and writes JSON): median step time after warm-up and the
zcc/peer ratio, peak RSS of rank 0 and the ratio, launch-to-first-step time, final losses.
Every process runs with OMP_NUM_THREADS=1 and one BLAS thread (torch.set_num_threads(1)).
A peer that fails is reported with its error, not left out silently.

usage: bench/peers_bench.py [--model gpt|mlp] [--steps 30] [--warmup 5] [--rows ROW,...]
                            [--json out.json] [--zcc build/bin/zcc]
ROW: np=N,stage=S[,precision=bf16][,recompute=selective] (default: the issue's rows, fp32)
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "Train"))

DEFAULT_ROWS = ["np=1,stage=0", "np=2,stage=0", "np=2,stage=1", "np=2,stage=2", "np=2,stage=3", "np=4,stage=1",
                "np=4,stage=2", "np=4,stage=3", "np=2,stage=3,recompute=selective", "np=2,stage=0,precision=bf16",
                "np=2,stage=3,precision=bf16"]


def env():
    e = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
             OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
             MKL_NUM_THREADS="1", DS_ACCELERATOR="cpu")
    return e


def summarize(log, warmup, launched):
    rows = [json.loads(l) for l in open(log)] if os.path.exists(log) else []
    if not rows:
        return None
    steady = [r["step_ms"] for r in rows[warmup:]] or [r["step_ms"] for r in rows]
    return {"step_ms": statistics.median(steady), "peak_rss_mb": max(r["peak_rss_bytes"] for r in rows) / 2 ** 20,
            "first_step_s": rows[0]["unix_time"] - launched, "final_loss": rows[-1]["loss"], "steps": len(rows)}


def run_zcc(a, row, weights, work):
    n, stage = int(row["np"]), int(row["stage"])
    exe = os.path.join(work, "zcc.bin")
    flags = ["--world-size", str(n), "--zero-stage", str(stage), "--precision", row.get("precision", "fp32"),
             "--recompute", row.get("recompute", "none")]
    subprocess.run([a.zcc, a.model_file, "-o", exe] + flags, check=True)
    log = os.path.join(work, "zcc.jsonl")
    data = ["--data", a.data] if a.model == "gpt" else ["--synthetic"]
    cmd = ([] if n == 1 else ["mpirun", "-np", str(n)]) + [exe, "--steps", str(a.steps), "--log-every", "1",
                                                            "--log-json", log, "--init-weights", weights] + data
    launched = time.time()
    r = subprocess.run(cmd, env=env(), capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout).strip().splitlines()[-1:]}
    return summarize(log, a.warmup, launched)


def run_peer(a, system, row, weights, work, python):
    n, stage = int(row["np"]), int(row["stage"])
    log = os.path.join(work, f"{system}.jsonl")
    if os.path.exists(log):
        os.remove(log)
    cmd = ["mpirun", "-np", str(n), python, os.path.join(ROOT, "bench", "peer_worker.py"), "--system", system,
           "--stage", str(stage), "--model", a.model_file, "--kind", a.model, "--weights", weights,
           "--steps", str(a.steps), "--lr", "1e-3", "--log", log]
    if a.model == "gpt":
        cmd += ["--data", a.data]
    if row.get("recompute", "none") != "none":
        cmd.append("--checkpointing")
    if row.get("precision") == "bf16":
        cmd.append("--bf16")
    launched = time.time()
    try:
        r = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return {"error": ["timed out"]}
    if r.returncode != 0:
        lines = [l for l in (r.stderr + r.stdout).splitlines() if "Error" in l or "error" in l]
        return {"error": (lines or (r.stderr + r.stdout).splitlines())[-1:]}
    return summarize(log, a.warmup, launched)


def peers_for(row):
    stage = int(row["stage"])
    if int(row["np"]) == 1 or stage == 0:
        return ["ddp"]
    return ["deepspeed", "fsdp2"] if stage in (2, 3) else ["deepspeed"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt", choices=["gpt", "mlp"])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rows", default=",".join(DEFAULT_ROWS).replace(",np=", ";np="))
    ap.add_argument("--json", default=os.path.join(ROOT, "build", "peers_bench.json"))
    ap.add_argument("--zcc", default=os.path.join(ROOT, "build", "bin", "zcc"))
    ap.add_argument("--data", default=os.path.join(ROOT, "docs", "dialect.md"))
    a = ap.parse_args()
    a.model_file = os.path.join(ROOT, "examples", f"{a.model}.mlir")
    rows = [dict(kv.split("=") for kv in r.split(",")) for r in a.rows.split(";")]

    setup = subprocess.run([os.path.join(ROOT, "bench", "setup_peers.sh")], capture_output=True, text=True)
    python = setup.stdout.strip().splitlines()[-1] + "/bin/python" if setup.returncode == 0 else None
    if python is None:
        print(f"peers could not be installed ({setup.stderr.strip().splitlines()[-1:]}): falling back to "
              f"Debian's torch 1.13 DDP")
        python = "/usr/bin/python3"
    # The bench itself needs torch and numpy (the initial weights): run it with the peers' Python.
    venv = os.path.dirname(os.path.dirname(python))
    if os.path.realpath(sys.prefix) != os.path.realpath(venv) and python != "/usr/bin/python3" and \
            not os.environ.get("ZCC_BENCH_REEXEC"):
        os.environ["ZCC_BENCH_REEXEC"] = "1"
        os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])
    versions = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                              text=True).stdout.strip()

    import numpy as np
    import torch
    from torch_reference import initial_weights, read_model
    params, _, _ = read_model(a.model_file)
    results = []
    with tempfile.TemporaryDirectory() as work:
        weights = os.path.join(work, "weights.f32")
        w = initial_weights(params, 1234)
        np.concatenate([w[name].numpy().ravel() for name, _ in params]).astype(np.float32).tofile(weights)
        for row in rows:
            entry = {"row": row, "zcc": run_zcc(a, row, weights, work), "peers": {}}
            for system in peers_for(row):
                entry["peers"][system] = run_peer(a, system, row, weights, work, python)
            results.append(entry)
            print_row(entry)
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    json.dump({"model": a.model, "steps": a.steps, "warmup": a.warmup, "peer_torch": versions,
               "threads_per_rank": 1, "results": results}, open(a.json, "w"), indent=1)
    print(f"wrote {a.json} (peers: torch {versions})")


def print_row(entry):
    row, z = entry["row"], entry["zcc"]
    name = ",".join(f"{k}={v}" for k, v in row.items())
    if not z or "error" in z:
        print(f"{name:40s} zcc FAILED: {z and z.get('error')}")
        return
    print(f"{name:40s} zcc {z['step_ms']:7.2f} ms  {z['peak_rss_mb']:7.1f} MB  first step {z['first_step_s']:5.2f} s"
          f"  loss {z['final_loss']:.4f}")
    for system, p in entry["peers"].items():
        if not p or "error" in p:
            print(f"{'':40s} {system:9s} did not run: {p and p.get('error')}")
            continue
        print(f"{'':40s} {system:9s} {p['step_ms']:7.2f} ms  {p['peak_rss_mb']:7.1f} MB  first step "
              f"{p['first_step_s']:5.2f} s  loss {p['final_loss']:.4f}   zcc/{system}: time "
              f"{z['step_ms'] / p['step_ms']:.2f}x, memory {z['peak_rss_mb'] / p['peak_rss_mb']:.2f}x, first step "
              f"{z['first_step_s'] / p['first_step_s']:.2f}x")


if __name__ == "__main__":
    main()
