"""Properties of zcc --simulate that fail when a part of its pricing stops working:
  - matmuls priced at peak x efficiency (MFU of a matmul-only model on a cluster where nothing else
    costs is the efficiency, up to the input gradient the first layer does not need);
  - compute scales with the device's peak;
  - a data-parallel group across nodes is slower than one inside a node;
  - the 1F1B bubble shrinks with more micro-batches and with virtual stages;
  - materialized attention costs more than flash attention;
  - ZeRO++ (qwZ, hpZ, qgZ) exposes less data-parallel communication than ZeRO-3 across a slow
    network (its hops priced on the node's and the network's links);
  - eager PyTorch's row kernels (--sim-row-kernels eager) move the bytes of torchtitan's code;
  - fp32 gradient reductions (--reduce-precision fp32) move twice the bf16 ones' bytes;
  - a layer recomputed whole (--recompute layer) costs more than full's spans;
  - where CPU ranks fill the node's cores, overlapped collectives delay the compute.
usage: sim_properties.py ZCC SRC_ROOT FLAT_CLUSTER WORKDIR"""
import json
import os
import subprocess
import sys

zcc, root, flat, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)


def cluster(name, **changes):
    c = json.load(open(flat))
    for path, value in changes.items():
        node = c
        keys = path.split("__")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    path = os.path.join(work, name + ".json")
    json.dump(c, open(path, "w"))
    return path


def sim(model, cluster_path, *flags):
    out = subprocess.run([zcc, model, "--simulate", "--cluster", cluster_path, "--report=json"] + list(flags),
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["simulated"]


def check(what, ok, detail):
    print(("ok   " if ok else "FAIL ") + what + ": " + detail)
    if not ok:
        sys.exit(1)


mlp = os.path.join(root, "examples", "mlp.mlir")
s = sim(mlp, flat)
# The MLP's matmuls (64 rows): model FLOPs count three products of each, but the first layer's
# input needs no gradient, so the step runs 3F - F1 of them at half the peak.
f1, f2, f3 = 2 * 64 * 784 * 256, 2 * 64 * 256 * 128, 2 * 64 * 128 * 10
expected = 0.5 * 3 * (f1 + f2 + f3) / (3 * (f1 + f2 + f3) - f1)
check("matmuls at peak x efficiency", abs(s["mfu"] / expected - 1) < 0.02,
      f"MFU {s['mfu']:.4f}, expected {expected:.4f} (efficiency 0.5)")

fast = sim(mlp, cluster("fast", device__peak_flops={"f32": 2e12, "bf16": 4e12}))
ratio = fast["breakdown_s"]["compute"] / s["breakdown_s"]["compute"]
check("compute scales with the peak", abs(ratio - 0.5) < 1e-6, f"compute ratio {ratio:.6f} at twice the peak")

gpt = os.path.join(work, "gpt.mlir")
with open(gpt, "w") as f:
    subprocess.run([sys.executable, os.path.join(root, "examples", "gen_gpt.py"), "--layers", "4", "--dim", "512",
                    "--heads", "8", "--context", "256", "--batch", "16"], check=True, stdout=f)
inside = sim(gpt, flat, "--world-size", "8", "--zero-stage", "3")
across = sim(gpt, cluster("one-per-node", node__devices=1), "--world-size", "8", "--zero-stage", "3")
check("a group across nodes is slower", across["step_s"] > inside["step_s"] and
      across["breakdown_s"]["exposed_comm_data"] > inside["breakdown_s"]["exposed_comm_data"],
      f"step {inside['step_s'] * 1e3:.3f} ms in one node, {across['step_s'] * 1e3:.3f} ms across 8")

bubble = lambda r: r["breakdown_s"]["pipeline_bubble"] / r["step_s"]
few = sim(gpt, flat, "--world-size", "2", "--pp", "2", "--grad-accum", "2")
many = sim(gpt, flat, "--world-size", "2", "--pp", "2", "--grad-accum", "8")
check("the bubble shrinks with micro-batches", 0 < bubble(many) < bubble(few),
      f"{100 * bubble(few):.1f}% at 2 micro-batches, {100 * bubble(many):.1f}% at 8")
plain = sim(gpt, flat, "--world-size", "2", "--pp", "2", "--grad-accum", "4")
virtual = sim(gpt, flat, "--world-size", "2", "--pp", "2", "--grad-accum", "4", "--pp-interleave", "2")
check("virtual stages shrink the bubble", bubble(virtual) < bubble(plain),
      f"{100 * bubble(plain):.1f}% plain, {100 * bubble(virtual):.1f}% with 2 virtual stages")

flash = sim(gpt, flat)
scores = sim(gpt, cluster("slow-memory", device__memory_bytes_per_s=1e11), "--sim-attention", "materialized")
flash_slow = sim(gpt, cluster("slow-memory2", device__memory_bytes_per_s=1e11))
check("materialized attention costs more", scores["step_s"] > flash_slow["step_s"],
      f"{flash_slow['step_s'] * 1e3:.3f} ms flash, {scores['step_s'] * 1e3:.3f} ms materialized")

# Two nodes of 8 behind a network 100x slower than the node's links: ZeRO-3 sends 3M per rank
# across it, ZeRO++ a fraction (int8 forward gathers, backward gathers inside the node, int4
# gradients across once).
slow = cluster("slow-network", links__inter_node__bytes_per_s=1e8)
zero3 = sim(gpt, slow, "--world-size", "16", "--zero-stage", "3", "--ranks-per-node", "8")
zeropp = sim(gpt, slow, "--world-size", "16", "--zero-stage", "3", "--ranks-per-node", "8",
             "--zero-quantized-weights", "--zero-hpz-partition-size", "8", "--zero-quantized-gradients")
exposed = lambda r: r["breakdown_s"]["exposed_comm_data"]
check("ZeRO++ exposes less communication across a slow network", exposed(zeropp) < 0.3 * exposed(zero3),
      f"{exposed(zero3) * 1e3:.1f} ms ZeRO-3, {exposed(zeropp) * 1e3:.1f} ms ZeRO++")

# The peers' ways, priced (bench/published_runs_bench.py compiles runs of torchtitan and Megatron-LM
# with them): eager PyTorch's row kernels (sim/EagerKernels.cpp: torchtitan's RMSNorm is 9x the
# fused kernel's bytes, the SwiGLU's silu and mul 5/3x), gradients reduced in fp32 (twice the
# reduce-scatters' bytes), and a layer recomputed whole (more than full's half-layer spans).
def per_kind(model, cluster_path, *flags):
    trace = os.path.join(work, "kinds.json")
    subprocess.run([zcc, model, "--simulate", "--cluster", cluster_path, "--sim-trace", trace] + list(flags),
                   check=True, capture_output=True)
    kinds = {}
    for e in json.load(open(trace))["traceEvents"]:
        if e.get("ph") == "X" and e.get("pid") == 0:
            name = e["name"].split(" ")[0]
            kinds[name] = kinds.get(name, 0) + e["dur"]
    return kinds


llama = os.path.join(work, "llama.mlir")
with open(llama, "w") as f:
    subprocess.run([sys.executable, os.path.join(root, "examples", "gen_llama.py"), "--layers", "2", "--dim", "256",
                    "--heads", "8", "--kv-heads", "2", "--ffn", "688", "--context", "128", "--vocab", "256",
                    "--batch", "8"], check=True, stdout=f)
rows = cluster("memory-bound", device__memory_bytes_per_s=1e11)
fused = per_kind(llama, rows, "--precision", "bf16")
eager = per_kind(llama, rows, "--precision", "bf16", "--sim-row-kernels", "eager")
norm, swiglu = eager["zc.rmsnorm"] / fused["zc.rmsnorm"], eager["zc.swiglu"] / fused["zc.swiglu"]
check("eager row kernels move what torchtitan's code moves", 8.5 < norm < 9.5 and 1.5 < swiglu < 1.8 and
      eager["zc.matmul"] == fused["zc.matmul"], f"rmsnorm {norm:.2f}x, swiglu {swiglu:.2f}x the fused kernels' time")

bf16_reduce = per_kind(gpt, flat, "--world-size", "8", "--zero-stage", "2", "--precision", "bf16")
fp32_reduce = per_kind(gpt, flat, "--world-size", "8", "--zero-stage", "2", "--precision", "bf16",
                       "--reduce-precision", "fp32")
ratio = fp32_reduce["zc.reduce_scatter_start"] / bf16_reduce["zc.reduce_scatter_start"]
check("fp32 gradient reductions move twice the bytes", 1.8 < ratio < 2.05 and "zc.cast" in fp32_reduce,
      f"reduce-scatters {ratio:.2f}x the bf16 ones' time")

full = sim(gpt, flat, "--world-size", "2", "--tp", "2", "--recompute", "full")
layer = sim(gpt, flat, "--world-size", "2", "--tp", "2", "--recompute", "layer")
check("a layer recomputed whole costs more than full", layer["breakdown_s"]["recompute"] >
      1.2 * full["breakdown_s"]["recompute"], f"recompute {full['breakdown_s']['recompute'] * 1e3:.3f} ms full, "
      f"{layer['breakdown_s']['recompute'] * 1e3:.3f} ms layer")

# Ranks that fill the node's cores: the communication thread has no core of its own, so ZeRO-2's
# reduce-scatters, overlapped with the backward where the node has a spare core, delay the
# compute as long as they run (each rank's compute thread shares its core with them): all of
# their time is exposed, where a spare core hides part of it.
slow_links = dict(links__intra_node__bytes_per_s=1e8)
zero2 = ("--world-size", "2", "--zero-stage", "2")
spare = sim(gpt, cluster("spare-core", node__cores=3, **slow_links), *zero2)
filled = sim(gpt, cluster("filled-cores", node__cores=2, **slow_links), *zero2)
gpu = sim(gpt, cluster("no-shared-cores", **slow_links), *zero2)
collectives = per_kind(gpt, cluster("filled-cores", node__cores=2, **slow_links), *zero2)
reduce_scatter = collectives.get("zc.reduce_scatter_start", 0) * 1e-6
exposed = lambda r: r["breakdown_s"]["exposed_comm_data"]
check("collectives delay the compute where ranks fill the cores", spare["step_s"] == gpu["step_s"] and
      exposed(spare) < 0.9 * reduce_scatter and exposed(filled) >= 0.999 * reduce_scatter and
      filled["step_s"] > spare["step_s"] and
      abs(filled["step_s"] - sum(filled["breakdown_s"].values())) < 1e-3 * filled["step_s"],
      f"exposed data-parallel comm {exposed(spare) * 1e3:.3f} ms with a spare core, {exposed(filled) * 1e3:.3f} ms "
      f"without (reduce-scatters {reduce_scatter * 1e3:.3f} ms)")
