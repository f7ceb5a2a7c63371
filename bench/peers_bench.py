#!/usr/bin/env python3
"""zcc against DDP, PyTorch FSDP2 and DeepSpeed ZeRO on this machine, side by side.

One command: sets up the peers (bench/setup_peers.sh: current PyTorch and DeepSpeed from PyPI
into a virtual environment outside the repository), then for each row trains the same model
from the same weights on the same batches with the same AdamW in zcc (CPU backend) and in each
peer, written as its users write it (bench/peer_models.py: nanoGPT's module tree with SDPA;
bench/peer_worker.py: fully_shard per block, DeepSpeed's documented ZeRO settings), eager and
under torch.compile. zcc and the peers run interleaved --repeats times; every figure is the
median over runs of each run's median step after --warmup, with the runs' min-max beside it.
The peer's figure is the faster of eager and compiled, and the table says which.

Prints a table and writes JSON and Markdown (the README's performance table): step time,
tokens/s, achieved GF/s (model FLOPs: 6 x parameters + 12 x layers x dim x context per
token, nanoGPT's and PaLM's count), peak RSS of rank 0, final loss and the largest relative
difference of a peer's per-step losses from zcc's (they train the same steps: it must stay
below 1e-4 in fp32), with the CPU, its ISA flags, the threads per rank and the peers' versions.
A peer that fails is reported with its error, not left out silently.

usage: bench/peers_bench.py [--size NAME] [--rows ROW;...] [--steps N] [--warmup N]
                            [--repeats 3] [--compile both|eager|compiled] [--threads 1]
                            [--json F] [--markdown F] [--zcc build/bin/zcc]
       bench/peers_bench.py --render F.json   (the Markdown table of an earlier run)
NAME: one of PRESETS below (--model gpt|mlp is --size example|mlp)
ROW: np=N,stage=S[,precision=bf16][,recompute=selective]
"""
import argparse, json, math, os, platform, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "Train"))

# The rows the real-sizes issue asks for: one rank, then two ranks at every ZeRO stage.
REAL_ROWS = ["np=1,stage=0", "np=2,stage=0", "np=2,stage=1", "np=2,stage=2", "np=2,stage=3"]
EXAMPLE_ROWS = REAL_ROWS + ["np=4,stage=1", "np=4,stage=2", "np=4,stage=3", "np=2,stage=3,recompute=selective",
                            "np=2,stage=0,precision=bf16", "np=2,stage=3,precision=bf16"]

# gen: the flags of examples/gen_gpt.py (kind gpt) or gen_llama.py (kind llama). Steps and warm-up per preset keep a full table within
# reach of a 2-core machine; --steps/--warmup override them.
PRESETS = {
    "example": dict(file="examples/gpt.mlir", kind="gpt", rows=EXAMPLE_ROWS, steps=30, warmup=5),
    "mlp": dict(file="examples/mlp.mlir", kind="mlp", rows=EXAMPLE_ROWS[:8], steps=30, warmup=5),
    # nanoGPT's shakespeare-char model (10.7M parameters; bytes as tokens).
    "shakespeare-char": dict(gen=dict(layers=6, dim=384, heads=6, context=256, batch=8), kind="gpt",
                             rows=REAL_ROWS, steps=12, warmup=3),
    # Contexts where attention dominates: PyTorch's fused SDPA against zcc's attention.
    "t1024": dict(gen=dict(layers=2, dim=256, heads=4, context=1024, batch=4), kind="gpt", rows=REAL_ROWS,
                  steps=12, warmup=3),
    "t2048": dict(gen=dict(layers=2, dim=256, heads=4, context=2048, batch=2), kind="gpt", rows=REAL_ROWS,
                  steps=10, warmup=3),
    # nanoGPT's shakespeare-char shape as a Llama (RMSNorm, RoPE, 6 heads over 2 key/value heads,
    # SwiGLU 1024, untied head; examples/gen_llama.py).
    "llama-char": dict(gen=dict(layers=6, dim=384, heads=6, kv_heads=2, ffn=1024, context=256, batch=8), kind="llama",
                       rows=REAL_ROWS, steps=12, warmup=3),
    # GPT-2 small: 124M parameters, vocabulary 50304, context 1024.
    "gpt2-124m": dict(gen=dict(layers=12, dim=768, heads=12, context=1024, batch=4, vocab=50304), kind="gpt",
                      rows=REAL_ROWS, steps=5, warmup=2),
}


# Models trained on text (bytes as tokens, --data); the MLP trains on --synthetic data.
TEXT_KINDS = ("gpt", "llama")


def env(threads):
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS=str(threads),
                OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), DS_ACCELERATOR="cpu")


def machine(threads, versions):
    flags, model = set(), platform.processor()
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
        elif line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
    isa = [f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16") if f in flags]
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    return {"cpu": model, "isa": isa, "cores": os.cpu_count(), "threads_per_rank": threads, "peers": versions,
            "zcc_commit": commit}


def roofline(a):
    """The machine's FMA peak per core and memory bandwidth (bench/runtime/Roofline.cpp), measured
    now, before the runs, so every GF/s figure has its ceiling from the same machine."""
    exe = os.path.join(os.path.dirname(os.path.dirname(a.zcc)), "bench", "zrt-roofline")
    if not os.path.exists(exe):
        print(f"no {exe} (scripts/build.sh builds it): the table has no % of FMA peak")
        return None
    return json.loads(subprocess.run([exe, "--json"], capture_output=True, text=True, check=True).stdout)


def read_log(log):
    return [json.loads(l) for l in open(log)] if os.path.exists(log) else []


def summarize_run(records, warmup, launched):
    steady = [r["step_ms"] for r in records[warmup:]] or [r["step_ms"] for r in records]
    return {"step_ms": statistics.median(steady), "peak_rss_mb": max(r["peak_rss_bytes"] for r in records) / 2 ** 20,
            "first_step_s": records[0]["unix_time"] - launched, "losses": [r["loss"] for r in records]}


def last_error(text):
    """The line that names the failure: a Python exception's last line, else any error line,
    else the last line that is not one of mpirun's banner rules."""
    lines = [l.strip() for l in text.splitlines() if l.strip() and not set(l.strip()) <= set("-=*")]
    named = [l for l in lines if l.split(":")[0].endswith(("Error", "Exception"))] or \
        [l for l in lines if "rror" in l]
    return (named or lines or ["no output"])[-1][-300:]


def free_port():
    """A port nobody listens on now: each peer run gets its own rendezvous port, so one run's
    socket in TIME_WAIT cannot fail the next run's bind."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def run_zcc(a, row, exe, work):
    n = int(row["np"])
    log = os.path.join(work, "zcc.jsonl")
    if os.path.exists(log):
        os.remove(log)
    data = ["--data", a.data] if a.kind in TEXT_KINDS else ["--synthetic"]
    cmd = ([] if n == 1 else ["mpirun", "-np", str(n)]) + [exe, "--steps", str(a.steps), "--lr", "1e-3", "--log-every", "1",
                                                            "--log-json", log, "--init-weights", a.weights] + data
    launched = time.time()
    r = subprocess.run(cmd, env=env(a.threads), capture_output=True, text=True)
    records = read_log(log)
    if r.returncode != 0 or not records:
        return {"error": last_error(r.stderr + r.stdout)}
    return summarize_run(records, a.warmup, launched)


def run_peer(a, system, row, compiled, work):
    n, stage = int(row["np"]), int(row["stage"])
    log = os.path.join(work, f"{system}.jsonl")
    if os.path.exists(log):
        os.remove(log)
    cmd = ["mpirun", "-np", str(n), a.python, os.path.join(ROOT, "bench", "peer_worker.py"), "--system", system,
           "--stage", str(stage), "--model", a.model_file, "--kind", a.kind, "--weights", a.weights,
           "--steps", str(a.steps), "--lr", "1e-3", "--log", log]
    if a.kind in TEXT_KINDS:
        cmd += ["--data", a.data]
    if row.get("recompute", "none") != "none":
        cmd.append("--checkpointing")
    if row.get("precision") == "bf16":
        cmd.append("--bf16")
    if compiled:
        cmd.append("--compile")
    launched = time.time()
    try:
        r = subprocess.run(cmd, env=dict(env(a.threads), MASTER_PORT=free_port()), capture_output=True, text=True,
                           timeout=a.peer_timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {a.peer_timeout} s"}
    records = read_log(log)
    if r.returncode != 0 or len(records) < a.steps:
        return {"error": last_error(r.stderr + r.stdout)}
    return summarize_run(records, a.warmup, launched)


def peers_for(row):
    stage = int(row["stage"])
    if int(row["np"]) == 1 or stage == 0:
        return ["ddp"]
    return ["deepspeed", "fsdp2"] if stage in (2, 3) else ["deepspeed"]


def combine(runs):
    """Runs of one system on one row -> the figure: medians over runs, min-max beside them."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return {"error": runs[-1]["error"]}
    times = [r["step_ms"] for r in ok]
    return {"step_ms": statistics.median(times), "step_ms_min": min(times), "step_ms_max": max(times),
            "runs": len(ok), "failed_runs": len(runs) - len(ok), "errors": [r["error"] for r in runs if "error" in r],
            "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in ok),
            "first_step_s": statistics.median(r["first_step_s"] for r in ok), "losses": ok[0]["losses"],
            "final_loss": ok[0]["losses"][-1]}


def loss_rel_diff(zcc, peer):
    pairs = list(zip(zcc["losses"], peer["losses"]))
    return max(abs(p - z) / max(abs(z), 1e-12) for z, p in pairs) if pairs else None


def model_file(size, work):
    """The preset's model: its file, or examples/gen_*.py's output written into `work`."""
    preset = PRESETS[size]
    if "gen" not in preset:
        return os.path.join(ROOT, preset["file"])
    path = os.path.join(work, f"{size}.mlir")
    generator = "gen_llama.py" if preset["kind"] == "llama" else "gen_gpt.py"
    with open(path, "w") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "examples", generator)]
                       + [f"--{k.replace('_', '-')}={v}" for k, v in preset["gen"].items()], stdout=f, check=True)
    return path


def model_flops_per_step(params, batch, context):
    """Training FLOPs per step as nanoGPT's estimate_mfu, PaLM and torchtitan count them (forward +
    backward = 3 x forward; attention's score and value products at full T x T; the embedding
    lookups, position or token (the Llama's, whose head is untied), do no multiply-adds)."""
    shapes = dict(params)
    n = sum(math.prod(s) for _, s in params)
    if not context:  # the MLP: 6 x parameters per row
        return 6 * n * batch
    embedding = math.prod(shapes["wpe"]) if "wpe" in shapes else math.prod(shapes["embed"])
    C = shapes["wpe"][1] if "wpe" in shapes else shapes["embed"][1]
    L = sum(1 for name in shapes if name.endswith("_qkv_w"))
    return (6 * (n - embedding) + 12 * L * C * context) * batch * context


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="example", choices=sorted(PRESETS))
    ap.add_argument("--model", choices=["gpt", "mlp"], help="same as --size example|mlp")
    ap.add_argument("--rows", help="';'-separated rows (default: the preset's)")
    ap.add_argument("--steps", type=int)
    ap.add_argument("--warmup", type=int)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--compile", default="both", choices=["both", "eager", "compiled"],
                    help="peer variants to run; with both, a peer's figure is the faster")
    ap.add_argument("--threads", type=int, default=1, help="compute threads per rank, zcc and peers alike")
    ap.add_argument("--json", default=os.path.join(ROOT, "build", "peers_bench.json"))
    ap.add_argument("--markdown", default=os.path.join(ROOT, "build", "peers_bench.md"))
    ap.add_argument("--zcc", default=os.path.join(ROOT, "build", "bin", "zcc"))
    ap.add_argument("--data", default=os.path.join(ROOT, "test", "Inputs", "corpus.txt"))
    ap.add_argument("--peer-timeout", type=int, default=3600)
    ap.add_argument("--render", metavar="JSON", help="print the Markdown table of an earlier run's JSON, run nothing")
    a = ap.parse_args()
    if a.render:
        print(markdown(json.load(open(a.render))), end="")
        return
    if a.model:
        a.size = "example" if a.model == "gpt" else "mlp"
    preset = PRESETS[a.size]
    a.kind = preset["kind"]
    a.steps = a.steps or preset["steps"]
    a.warmup = preset["warmup"] if a.warmup is None else a.warmup
    if a.warmup >= a.steps:
        sys.exit(f"--warmup {a.warmup} leaves no measured step of --steps {a.steps}")
    rows = [dict(kv.split("=") for kv in r.split(",")) for r in (a.rows.split(";") if a.rows else preset["rows"])]

    setup = subprocess.run([os.path.join(ROOT, "bench", "setup_peers.sh")], capture_output=True, text=True)
    if setup.returncode != 0:
        sys.exit(f"peers could not be installed: {setup.stderr.strip()[-500:]}")
    a.python = setup.stdout.strip().splitlines()[-1] + "/bin/python"
    # The bench itself needs torch and numpy (the initial weights): run it with the peers' Python.
    venv = os.path.dirname(os.path.dirname(a.python))
    if os.path.realpath(sys.prefix) != os.path.realpath(venv) and not os.environ.get("ZCC_BENCH_REEXEC"):
        os.environ["ZCC_BENCH_REEXEC"] = "1"
        os.execv(a.python, [a.python, os.path.abspath(__file__)] + sys.argv[1:])
    versions = subprocess.run([a.python, "-c", "import torch, deepspeed; print(torch.__version__, "
                               "deepspeed.__version__)"], capture_output=True, text=True,
                              env=env(1)).stdout.split()
    versions = {"torch": versions[0], "deepspeed": versions[1]} if len(versions) == 2 else {}
    info = machine(a.threads, versions)
    info["roofline"] = roofline(a)

    import numpy as np
    from torch_reference import initial_weights, read_context, read_model
    variants = {"both": [False, True], "eager": [False], "compiled": [True]}[a.compile]
    with tempfile.TemporaryDirectory() as work:
        a.model_file = model_file(a.size, work)
        params, batch, _ = read_model(a.model_file)
        context = read_context(a.model_file) if a.kind in TEXT_KINDS else 0
        flops = model_flops_per_step(params, batch, context)
        tokens = batch * (context or 1)
        a.weights = os.path.join(work, "weights.f32")
        w = initial_weights(params, 1234)
        np.concatenate([w[name].numpy().ravel() for name, _ in params]).astype(np.float32).tofile(a.weights)
        n_params = sum(int(np.prod(s)) for _, s in params)
        print(f"{a.size}: {n_params / 1e6:.1f}M parameters, batch {batch}, {flops / 1e9:.1f} GFLOP a step; "
              f"{info['cpu']} ({' '.join(info['isa'])}), {info['cores']} cores, {a.threads} thread(s) a rank; "
              f"peers {versions}", flush=True)

        runs = {}  # (row index, system) -> list of run summaries
        exes = {}
        for i, row in enumerate(rows):
            exes[i] = os.path.join(work, f"zcc{i}.bin")
            flags = ["--world-size", row["np"], "--zero-stage", row["stage"], "--precision",
                     row.get("precision", "fp32"), "--recompute", row.get("recompute", "none")]
            subprocess.run([a.zcc, a.model_file, "-o", exes[i]] + flags, check=True)
        # Interleaved: every repeat runs every row's zcc and peers once, so slow drifts of the
        # machine (thermal, neighbours) land on all of them alike.
        for rep in range(a.repeats):
            for i, row in enumerate(rows):
                runs.setdefault((i, "zcc"), []).append(run_zcc(a, row, exes[i], work))
                for system in peers_for(row):
                    for compiled in variants:
                        key = (i, system + ("+compile" if compiled else ""))
                        runs.setdefault(key, []).append(run_peer(a, system, row, compiled, work))
                print(f"repeat {rep + 1}/{a.repeats}: {name_of(row)} done", flush=True)

    results = []
    for i, row in enumerate(rows):
        z = combine(runs[(i, "zcc")])
        entry = {"row": row, "zcc": z, "peers": {}}
        for system in peers_for(row):
            tried = {v: combine(runs[(i, v)]) for v in (system, system + "+compile") if (i, v) in runs}
            good = {v: r for v, r in tried.items() if "error" not in r}
            best = min(good, key=lambda v: good[v]["step_ms"]) if good else None
            peer = dict(good[best], variant="compiled" if best.endswith("+compile") else "eager") if best else \
                {"error": "; ".join(f"{v}: {r['error']}" for v, r in tried.items())}
            peer["variants"] = {v: (r.get("step_ms") if "error" not in r else r["error"]) for v, r in tried.items()}
            if "error" not in peer and "error" not in z:
                peer["loss_rel_diff"] = loss_rel_diff(z, peer)
            entry["peers"][system] = peer
        cores_used = int(row["np"]) * a.threads
        for fig in [z] + list(entry["peers"].values()):
            if "error" not in fig:
                fig["tokens_per_s"] = tokens / (fig["step_ms"] / 1e3)
                fig["gflops"] = flops / (fig["step_ms"] / 1e3) / 1e9
                if info["roofline"]:
                    # bf16 rows against the bf16 peak (AMX tiles where the CPU has them, else its
                    # AVX512-BF16 dot product) where that is above the f32 FMA peak.
                    r = info["roofline"]
                    per_core = r["fma_gflops_per_core"]
                    if row.get("precision") == "bf16":
                        per_core = max(per_core, r.get("amx_bf16_gflops_per_core", 0), r.get("bf16_dot_gflops_per_core", 0))
                    fig["fma_peak_fraction"] = fig["gflops"] / (per_core * cores_used)
        results.append(entry)
    report = {"size": a.size, "model_file": os.path.relpath(a.model_file, ROOT) if "file" in preset else preset["gen"],
              "parameters": n_params, "batch": batch, "flops_per_step": flops, "steps": a.steps,
              "warmup": a.warmup, "repeats": a.repeats, "machine": info, "results": results}
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    json.dump(report, open(a.json, "w"), indent=1)
    table = markdown(report)
    open(a.markdown, "w").write(table)
    print(table)
    print(f"wrote {a.json} and {a.markdown}")


def name_of(row):
    return ",".join(f"{k}={v}" for k, v in row.items())


def fmt_time(f):
    digits = 0 if f["step_ms"] >= 100 else 1 if f["step_ms"] >= 10 else 2
    failed = f", {f['failed_runs']} run(s) failed: {f['errors'][-1]}" if f.get("failed_runs") else ""
    return f"{f['step_ms']:.{digits}f} ({f['step_ms_min']:.{digits}f}-{f['step_ms_max']:.{digits}f}{failed})"


def fmt_rate(f):
    share = f" ({100 * f['fma_peak_fraction']:.0f}%)" if "fma_peak_fraction" in f else ""
    return f"{f['gflops']:.1f}{share}"


def markdown(report):
    m = report["machine"]
    gen = report["model_file"]
    shape = gen if isinstance(gen, str) else (f"{gen['layers']}L d{gen['dim']} H{gen['heads']}"
                                              + (f" KV{gen['kv_heads']} FFN{gen['ffn']}" if "kv_heads" in gen else "")
                                              + f" T{gen['context']} B{gen['batch']}"
                                              + (f" V{gen['vocab']}" if "vocab" in gen else ""))
    r = m.get("roofline")
    bf16_peak = max(r.get("amx_bf16_gflops_per_core", 0), r.get("bf16_dot_gflops_per_core", 0)) if r else 0
    peak = (f", measured f32 FMA peak {r['fma_gflops_per_core']:.0f} GF/s a core"
            + (f" (bf16 rows: against the bf16 peak, {bf16_peak:.0f} GF/s a core, where it is higher)"
               if bf16_peak > r["fma_gflops_per_core"] else "")
            + f" and triad {r['triad_gbs_all_cores']:.1f} GB/s" if r else "")
    out = [f"**{report['size']}** ({shape}, {report['parameters'] / 1e6:.1f}M parameters, "
           f"{report['flops_per_step'] / 1e9:.1f} GFLOP a step). {m['cpu']} ({', '.join(m['isa'])}), "
           f"{m['cores']} cores, {m['threads_per_rank']} thread a rank{peak}; torch {m['peers'].get('torch')}, "
           f"DeepSpeed {m['peers'].get('deepspeed')}; zcc {m['zcc_commit']}. Median of {report['repeats']} "
           f"interleaved runs of {report['steps']} steps ({report['warmup']} warm-up), min-max in brackets.", "",
           "| row | system | step ms | tokens/s | GF/s (% peak) | peak RSS MB | final loss | loss vs zcc | "
           "zcc / peer |", "|---|---|---|---|---|---|---|---|---|"]
    for e in report["results"]:
        z, name = e["zcc"], name_of(e["row"])
        if "error" in z:
            out.append(f"| {name} | zcc | failed: {z['error']} | | | | | | |")
            continue
        out.append(f"| {name} | zcc | {fmt_time(z)} | {z['tokens_per_s']:.0f} | {fmt_rate(z)} | "
                   f"{z['peak_rss_mb']:.0f} | {z['final_loss']:.4f} | | |")
        for system, p in e["peers"].items():
            if "error" in p:
                out.append(f"| | {system} | did not run: {p['error']} | | | | | | |")
                continue
            diff = p["loss_rel_diff"]
            # fp32 rows train the same steps (1e-4 relative); bf16 rows round differently in
            # each system, so their difference is shown, not judged.
            differs = diff > 1e-4 and e["row"].get("precision", "fp32") == "fp32"
            ratio = z["step_ms"] / p["step_ms"]
            verdict = f"**{ratio:.2f}x (slower)**" if ratio > 1 else f"{ratio:.2f}x"
            out.append(f"| | {system} ({p['variant']}) | {fmt_time(p)} | {p['tokens_per_s']:.0f} | "
                       f"{fmt_rate(p)} | {p['peak_rss_mb']:.0f} | {p['final_loss']:.4f} | "
                       f"{diff:.1e}{' **differs**' if differs else ''} | {verdict} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
