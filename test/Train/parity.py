#!/usr/bin/env python3
"""Trains one model at several world sizes and checks the per-step losses agree.

Same model, seed and global batch: the loss curve must not depend on the world size
(the model's batch is the global batch; zcc splits it over ranks x micro-batches).

usage: parity.py ZCC MODEL.mlir STEPS TOLERANCE [--norm-tolerance X] [--cuda-on-cpu-link SCRIPT] [--moe-stats-exact]
                 DATA-FLAGS... -- CONFIG...
--moe-stats-exact: each step's routing statistics (the log's tokens per expert and dropped tokens) equal
the reference's exactly (the configs must share its mesh: the statistics are per routing).
CONFIG: "np=N" plus optional ",tp=T", ",pp=P" (the device mesh: data parallelism is what N leaves),
",sched=1f1b|zb-h1|interleaved-1f1b|zbv" (zcc --pp-schedule), ",interleave=V" (zcc --pp-interleave),
",sp=0" (zcc --no-sequence-parallel), ",ep=E" (zcc --ep: experts over E data-parallel ranks), ",maxtok=N"
(zcc --moe-max-tokens-per-expert), ",cp=C" (zcc --cp: each sequence's tokens over C ranks), ",cpmode=ring|ulysses" (zcc --cp-mode),
",accum=K", ",zero=S", ",precision=bf16", ",persist=T",
",recompute=selective|op|full|layer", ",reduce=fp32" (zcc --reduce-precision), ",headchunk=SIZE" (zcc --head-chunk), ",offload=cpu|nvme" (zcc
--offload-optimizer; nvme: the store in the test's temporary directory), ",param=cpu|nvme" (zcc
--offload-param), ",swapbuf=SIZE" (zcc
--offload-buffer-size), ",act=cpu" (zcc --offload-activations), ",compression=NAME" (zcc --compression
Inputs/NAME.json), ",target=cuda-on-cpu" (the CUDA backend's train.bin built on the CPU: zcc
--target=cuda --emit=obj linked by the script --cuda-on-cpu-link names, run with --cuda-graphs off,
test/CudaOnCpu), ",comm=mpi|nccl|auto" (train.bin --comm), ",zeropp=1" (ZeRO++'s three parts, two
ranks a node: zcc and train.bin --ranks-per-node 2), ",engine=sync" (ZRT_NVME_ENGINE: the store's pread/pwrite fallback instead of
io_uring), and the CPU paths the run takes: ",matmul=native|widen"
(ZRT_BF16_MATMUL), ",cpu=avx2" (as on a CPU without AVX-512: oneDNN capped at AVX2, where it
has no bf16 matmul, and the runtime's avx2 kernels where this CPU runs them);
the first config is the reference. A config forcing matmul=native on a CPU where oneDNN has
no bf16 matmul is reported as skipped (train.bin refuses it before its first step).
"""
import concurrent.futures, json, os, subprocess, sys, tempfile

def cpu_env(fields):
    """The runtime's and oneDNN's switches for the config's CPU paths."""
    env = {}
    if "matmul" in fields:
        env["ZRT_BF16_MATMUL"] = fields["matmul"]
    if "engine" in fields:
        env["ZRT_NVME_ENGINE"] = fields["engine"]
    if fields.get("cpu") == "avx2":
        env["ONEDNN_MAX_CPU_ISA"] = "AVX2"
        flags = open("/proc/cpuinfo").read().split()
        if all(f in flags for f in ("avx2", "fma", "bmi2", "f16c", "movbe", "abm")):
            env["ZRT_ISA"] = "avx2"
    elif "cpu" in fields:
        sys.exit(f"FAIL: unknown cpu={fields['cpu']} (avx2)")
    return env

# ZeRO++ (zeropp=1): quantized weights and gradients, the secondary partition within a node of 2.
ZEROPP_FLAGS = ["--zero-quantized-weights", "--zero-hpz-partition-size", "2", "--zero-quantized-gradients",
                "--ranks-per-node", "2"]

def build(zcc, model, fields, work, cuda_link):
    """Compiles (and for cuda-on-cpu links) the config's train.bin; returns its path."""
    np_ = int(fields["np"])
    exe = os.path.join(work, f"train-{tag_of(fields)}.bin")
    target = fields.get("target", "cpu")
    if target not in ("cpu", "cuda-on-cpu"):
        sys.exit(f"FAIL: unknown target={target} (cpu, cuda-on-cpu)")
    if target == "cuda-on-cpu" and not cuda_link:
        sys.exit("FAIL: target=cuda-on-cpu needs --cuda-on-cpu-link SCRIPT")
    # The CUDA backend's train.bin on the CPU: the object for --target=cuda, linked against
    # runtime/cuda built on HIP-CPU (test/CudaOnCpu/link-train-bin.sh).
    compiled = exe + ".o" if target == "cuda-on-cpu" else exe
    target_flags = ["--target=cuda", "--emit=obj"] if target == "cuda-on-cpu" else []
    subprocess.run([zcc, model, "-o", compiled] + target_flags + ["--world-size", str(np_),
                    "--grad-accum", fields.get("accum", "1"), "--zero-stage", fields.get("zero", "0"),
                    "--precision", fields.get("precision", "fp32"),
                    "--param-persistence-threshold", fields.get("persist", "0"),
                    "--recompute", fields.get("recompute", "none"),
                    "--tp", fields.get("tp", "1"), "--pp", fields.get("pp", "1")]
                   + (["--pp-schedule", fields["sched"]] if "sched" in fields else [])
                   + (["--pp-interleave", fields["interleave"]] if "interleave" in fields else [])
                   + (["--no-sequence-parallel"] if fields.get("sp") == "0" else [])
                   + (["--reduce-precision", fields["reduce"]] if "reduce" in fields else [])
                   + (ZEROPP_FLAGS if "zeropp" in fields else [])
                   + (["--cp", fields["cp"]] if "cp" in fields else [])
                   + (["--ep", fields["ep"]] if "ep" in fields else [])
                   + (["--moe-max-tokens-per-expert", fields["maxtok"]] if "maxtok" in fields else [])
                   + (["--cp-mode", fields["cpmode"]] if "cpmode" in fields else [])
                   + (["--head-chunk", fields["headchunk"]] if "headchunk" in fields else [])
                   + (["--offload-optimizer", fields["offload"], "--nvme-path", work] if "offload" in fields else [])
                   + (["--offload-param", fields["param"]] if "param" in fields else [])
                   + (["--offload-buffer-size", fields["swapbuf"]] if "swapbuf" in fields else [])
                   + (["--offload-activations", fields["act"]] if "act" in fields else [])
                   + (["--compression", os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs",
                                                     fields["compression"] + ".json")]
                      if "compression" in fields else []), check=True)
    if target == "cuda-on-cpu":
        subprocess.run([cuda_link, compiled, exe], check=True)
    return exe

def tag_of(fields):
    return "-".join(f"{k}{v}" for k, v in sorted(fields.items()))

def run(exe, steps, data, fields, work):
    np_ = int(fields["np"])
    target = fields.get("target", "cpu")
    log = os.path.join(work, f"log-{tag_of(fields)}.jsonl")
    cmd = [exe, "--steps", str(steps), "--log-every", "1", "--log-json", log] + data
    if target == "cuda-on-cpu":
        cmd += ["--cuda-graphs", "off"]  # HIP-CPU captures no CUDA graphs
    if "comm" in fields:
        cmd += ["--comm", fields["comm"]]
    if "zeropp" in fields:
        cmd += ["--ranks-per-node", "2"]
    if np_ > 1:
        cmd = ["mpirun", "-np", str(np_)] + cmd
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=600, env=dict(os.environ, **cpu_env(fields)))
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        if fields.get("matmul") == "native" and NO_NATIVE in done.stderr:
            return None
        raise subprocess.CalledProcessError(done.returncode, cmd)
    # Each step's loss and global gradient norm (the clipping every layout must compute alike).
    # With --eval-data among the data flags, the validation loss where it was taken (else None).
    return [(r["loss"], r.get("grad_norm"), r.get("val_loss"), {k: v for k, v in r.items() if k in MOE_STATS})
            for r in map(json.loads, open(log))]

# The log's routing statistics (train.bin --log-json), compared by --moe-stats-exact.
MOE_STATS = ("moe_tokens_min", "moe_tokens_mean", "moe_tokens_max", "moe_routings", "moe_dropped")

# The gradient norm against the loss: a norm sums the squares of every gradient value, whose
# rounding differences between layouts the loss averages away (seen at step 19: 1.8e-4 with
# np=4 and 3.4e-4 with tp=2 where the losses agreed to 1e-4 and 1e-5). The first step's norm, from
# the same weights, is held to the loss's tolerance (or 1e-5): a piece counted twice or not at
# all moves it by far more.
NORM_TOLERANCE = 100

# What train.bin says when ZRT_BF16_MATMUL=native cannot run on this CPU.
NO_NATIVE = "ZRT_BF16_MATMUL=native: oneDNN has no bf16 matmul on this CPU"

def main():
    zcc, model, steps, tol = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    rest = sys.argv[5:]
    # --norm-tolerance X: the later steps' grad_norm held to X instead of NORM_TOLERANCE x the loss's.
    norm_tolerance = NORM_TOLERANCE * tol
    if "--norm-tolerance" in rest:
        at = rest.index("--norm-tolerance")
        norm_tolerance = float(rest[at + 1])
        del rest[at:at + 2]
    # --cuda-on-cpu-link SCRIPT: links the target=cuda-on-cpu configs (test/CudaOnCpu).
    cuda_link = None
    if "--cuda-on-cpu-link" in rest:
        at = rest.index("--cuda-on-cpu-link")
        cuda_link = rest[at + 1]
        del rest[at:at + 2]
    # --moe-stats-exact: the same experts chosen, the same rows kept (routing is integers: no tolerance).
    moe_exact = "--moe-stats-exact" in rest
    if moe_exact:
        rest.remove("--moe-stats-exact")
    split = rest.index("--")
    data, configs = rest[:split], rest[split + 1:]
    env = os.environ
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as work:
        fields_of = {config: dict(kv.split("=") for kv in config.split(",")) for config in configs}
        # Every config's train.bin first, as many compiles at once as there are cores: a compile is
        # one thread, and a test that runs alone (ctest PROCESSORS) would leave the other cores idle
        # through each of them (0.8 s a config in the sanitizer build here). The trainings then run
        # one after another, each with the node to itself.
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            unique = list(fields_of)  # a config named twice is built once
            exes = dict(zip(unique, pool.map(lambda c: build(zcc, model, fields_of[c], work, cuda_link), unique)))
        curves = {}
        for config in configs:
            fields = fields_of[config]
            curve = run(exes[config], steps, data, fields, work)
            if curve is None:
                print(f"skipped: {config} (this CPU has no native bf16 matmul)")
                continue
            curves[config] = curve
        reference = curves.get(configs[0])
        if reference is None:
            sys.exit(f"FAIL: the reference config {configs[0]} did not run")
        assert len(reference) == steps, f"expected {steps} logged steps, got {len(reference)}"
        if reference[-1][0] >= reference[0][0]:
            sys.exit(f"FAIL: the loss did not go down ({reference[0][0]} -> {reference[-1][0]})")
        worst = worst_norm = 0.0
        for config, curve in curves.items():
            for step, ((a, norm_a, val_a, moe_a), (b, norm_b, val_b, moe_b)) in enumerate(zip(reference, curve)):
                if moe_exact and (not moe_a or moe_a != moe_b):
                    sys.exit(f"FAIL: {config} step {step + 1}: routing {moe_b} vs {moe_a} ({configs[0]})")
                if (val_a is None) != (val_b is None) or (val_a is not None and abs(val_a - val_b) / val_a > tol):
                    sys.exit(f"FAIL: {config} step {step + 1}: val_loss {val_b} vs {val_a} ({configs[0]})")
                rel = abs(a - b) / abs(a)
                worst = max(worst, rel)
                if rel > tol:
                    sys.exit(f"FAIL: {config} step {step + 1}: loss {b} vs {a} ({configs[0]}), "
                             f"relative difference {rel:.2e} > {tol}")
                if (norm_a is None) != (norm_b is None):
                    sys.exit(f"FAIL: {config} step {step + 1}: grad_norm {norm_b} vs {norm_a} ({configs[0]})")
                if norm_a is not None:
                    rel = abs(norm_a - norm_b) / abs(norm_a)
                    worst_norm = max(worst_norm, rel)
                    if rel > (max(tol, 1e-5) if step == 0 else norm_tolerance):
                        sys.exit(f"FAIL: {config} step {step + 1}: grad_norm {norm_b} vs {norm_a} ({configs[0]}), "
                                 f"relative difference {rel:.2e}")
        routing = f", routing as the reference's each step ({reference[-1][3]})" if moe_exact else ""
        print(f"PASS: {len(curves)} configurations, {steps} steps, loss {reference[0][0]:.5f} -> "
              f"{reference[-1][0]:.5f}, worst relative difference {worst:.2e} (grad_norm {worst_norm:.2e}){routing}")

if __name__ == "__main__":
    main()
