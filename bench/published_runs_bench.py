#!/usr/bin/env python3
"""zcc --simulate against published GPU-cluster runs (issue 40), and the memory plan's activation
bytes against Korthikanti et al. 2022, Figure 7.

    python3 bench/published_runs_bench.py [--zcc build/bin/zcc] [--out DIR]

Each run is compiled as zcc's own graph (examples/gen_gpt.py, examples/gen_llama.py at the
published shapes, no weights) for the published mesh, and simulated on the shipped cluster:

  - torchtitan docs/performance.md, FSDP2 (ZeRO-3) on 64 A100 80GB, bf16, gradients reduce-scattered in
    fp32 (its default mixed_precision_reduce = "float32": zcc --reduce-precision fp32): Llama 3 8B
    (sequence 8192, local batch 1) with op-level selective activation checkpointing 2,973 tokens/s per
    GPU; Llama 3 70B with full checkpointing 331 tokens/s per GPU; Llama 2 13B (sequence 4096, local
    batch 2) without checkpointing 2,162 and with op-level 1,904 tokens/s per GPU; Llama 2 70B with full
    checkpointing (local batch 2) 353 and with op-level (local batch 1) 355 tokens/s per GPU. torchtitan
    checkpoints each TransformerBlock: its full is zcc's --recompute layer, its op-level policy zcc's op.
  - Korthikanti et al. 2022 (arXiv 2205.05198) Table 5, full recomputation, Selene (DGX A100
    80GB), sequence 2048, fp16: 22B tp 8 (1.42 s), 175B tp 8 x pp 8 x 3 virtual stages (18.13 s),
    530B tp 8 x pp 35 x 3 (49.05 s), 1T tp 8 x pp 64 (94.42 s).

  - Megatron-Core's MoE README (megatron/core/transformer/moe/README.md): Mixtral 8x7B bf16 at 468
    TFLOPS per GPU (MCore v0.9) on DGX H100 nodes, its reference mapping for it: 64 GPUs, dropless
    all-to-all, sequence 4096, vocabulary 32K, tp 1 x ep 8 x pp 4 x 8 virtual stages, micro-batch 1,
    global batch 256, the distributed optimizer (ZeRO-1), no recomputation, grouped GEMMs, flash
    attention. The step time is Megatron's FLOPs per step (its num_floating_point_operations,
    megatron_moe_flops below) over 468 TFLOP/s x 64; simulated on dgx-h100. Megatron's dropless
    buffers are sized at run time; zcc plans the received rows at a bound, here 1.25x the balanced
    count (--moe-max-tokens-per-expert 1.25x: its default, every token of the group, plans 4x).

Megatron-LM materialized the attention scores in 2022: its rows are simulated with
--sim-attention materialized (the error that counts) and with zcc's flash attention (the
difference is what materialized attention explains). Megatron's full recomputation keeps each
layer's input and recomputes the layer in the backward: zcc's --recompute layer, which a pipeline
stage applies inside itself as one rank does (zcc-pipeline-keep: a stage's forward runs once).
Megatron's bf16 runs reduce their gradients in fp32 (arguments.py: "bfloat16 requires gradient
accumulation and all-reduce to be done in fp32"): the Mixtral row's --reduce-precision fp32.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

GPT = os.path.join(ROOT, "examples", "gen_gpt.py")
LLAMA = os.path.join(ROOT, "examples", "gen_llama.py")

def megatron_moe_flops(batch, seq, layers, hidden, heads, kv_heads, ffn, topk, vocab):
    """Megatron-LM's num_floating_point_operations (training.py) for a GQA, SwiGLU, MoE decoder: 12 B s L h^2
    (attention (1 + groups/heads + s/h), the routed experts' ffn/h x top-k x 3/2, the logits V/(2 L h))."""
    return 12 * batch * seq * layers * hidden * hidden * (
        (1 + kv_heads / heads + seq / hidden) + ffn / hidden * topk * 1.5 + vocab / (2 * layers * hidden))


def llama(layers, dim, heads, kv_heads, ffn, context, vocab, batch, theta):
    """examples/gen_llama.py's arguments for a dense Llama of these shapes (batch: the global one)."""
    return [LLAMA, "--layers", str(layers), "--dim", str(dim), "--heads", str(heads), "--kv-heads", str(kv_heads),
            "--ffn", str(ffn), "--context", str(context), "--vocab", str(vocab), "--batch", str(batch),
            "--theta", str(theta)]


def torchtitan(recompute):
    """A torchtitan run on 64 A100s as it ran: FSDP2 (ZeRO-3), its checkpointing, fp32 gradient
    reduce-scatters (mixed_precision_reduce), eager PyTorch's row kernels (no torch.compile)."""
    return ["--world-size", "64", "--zero-stage", "3", "--recompute", recompute, "--reduce-precision", "fp32",
            "--sim-row-kernels", "eager"]


# name, generator args, zcc args, published step seconds, source, attention as the peer ran it[, cluster]
RUNS = [
    ("Llama 3 8B, FSDP2 64xA100, SAC op", llama(32, 4096, 32, 8, 14336, 8192, 128256, 64, 500000),
     torchtitan("op"), 8192 / 2973.0, "torchtitan performance.md: 2,973 tokens/s/GPU", "flash"),
    ("Llama 3 70B, FSDP2 64xA100, full AC", llama(80, 8192, 64, 8, 28672, 8192, 128256, 64, 500000),
     torchtitan("layer"), 8192 / 331.0, "torchtitan performance.md: 331 tokens/s/GPU", "flash"),
    ("Llama 2 13B, FSDP2 64xA100, no AC", llama(40, 5120, 40, 40, 13824, 4096, 32000, 128, 10000),
     torchtitan("none"), 2 * 4096 / 2162.0, "torchtitan performance.md (Llama 2): 2,162 tokens/s/GPU", "flash"),
    ("Llama 2 13B, FSDP2 64xA100, SAC op", llama(40, 5120, 40, 40, 13824, 4096, 32000, 128, 10000),
     torchtitan("op"), 2 * 4096 / 1904.0, "torchtitan performance.md (Llama 2): 1,904 tokens/s/GPU", "flash"),
    ("Llama 2 70B, FSDP2 64xA100, full AC", llama(80, 8192, 64, 8, 28672, 4096, 32000, 128, 10000),
     torchtitan("layer"), 2 * 4096 / 353.0, "torchtitan performance.md (Llama 2): 353 tokens/s/GPU", "flash"),
    ("Llama 2 70B, FSDP2 64xA100, SAC op, b1", llama(80, 8192, 64, 8, 28672, 4096, 32000, 64, 10000),
     torchtitan("op"), 4096 / 355.0, "torchtitan performance.md (Llama 2): 355 tokens/s/GPU", "flash"),
    ("GPT 22B, tp 8", [GPT, "--layers", "48", "--dim", "6144", "--heads", "64", "--context", "2048", "--vocab", "51200",
     "--batch", "4"], ["--world-size", "8", "--tp", "8", "--recompute", "layer", "--no-sequence-parallel"], 1.42,
     "Korthikanti et al. Table 5", "materialized"),
    ("GPT 175B, tp 8 x pp 8 x 3", [GPT, "--layers", "96", "--dim", "12288", "--heads", "96", "--context", "2048",
     "--vocab", "51200", "--batch", "64"], ["--world-size", "64", "--tp", "8", "--pp", "8", "--pp-interleave", "3",
     "--grad-accum", "64", "--recompute", "layer", "--no-sequence-parallel"], 18.13, "Korthikanti et al. Table 5",
     "materialized"),
    ("GPT 530B, tp 8 x pp 35 x 3", [GPT, "--layers", "105", "--dim", "20480", "--heads", "128", "--context", "2048",
     "--vocab", "51200", "--batch", "280"], ["--world-size", "280", "--tp", "8", "--pp", "35", "--pp-interleave", "3",
     "--grad-accum", "280", "--recompute", "layer", "--no-sequence-parallel"], 49.05, "Korthikanti et al. Table 5",
     "materialized"),
    ("GPT 1T, tp 8 x pp 64", [GPT, "--layers", "128", "--dim", "25600", "--heads", "160", "--context", "2048",
     "--vocab", "51200", "--batch", "512"], ["--world-size", "512", "--tp", "8", "--pp", "64", "--grad-accum", "512",
     "--recompute", "layer", "--no-sequence-parallel"], 94.42, "Korthikanti et al. Table 5", "materialized"),
    ("Mixtral 8x7B, tp1 ep8 pp4x8, 64xH100", [LLAMA, "--layers", "32", "--dim", "4096", "--heads", "32", "--kv-heads",
     "8", "--ffn", "14336", "--context", "4096", "--vocab", "32000", "--batch", "256", "--theta", "1000000",
     "--experts", "8", "--top-k", "2", "--aux-coef", "0.01"],
     ["--world-size", "64", "--pp", "4", "--pp-interleave", "8", "--ep", "8", "--grad-accum", "16",
      "--zero-stage", "1", "--recompute", "none", "--moe-max-tokens-per-expert", "1.25x", "--reduce-precision", "fp32"],
     megatron_moe_flops(256, 4096, 32, 4096, 32, 8, 14336, 2, 32000) / (468e12 * 64),
     "Megatron-Core MoE README: 468 TFLOPS/GPU", "flash", "dgx-h100"),
]

# Figure 7 of Korthikanti et al.: activation memory of the 22B model relative to tensor parallelism
# alone, per layer, from their formulas sbh(10 + 24/t + 5as/(ht)) and its variants; and the same
# formulas without the attention scores' 5as/(ht) (what flash attention, zcc's, never stores):
# sbh(10 + 24/t) the baseline, 34sbh/t with sequence parallelism, 2sbh (2sbh/t) kept by full.
# Megatron's full recomputation is zcc's --recompute layer; zcc's full keeps two values a layer.
FIGURE7 = [("tensor parallel (baseline)", ["--no-sequence-parallel", "--recompute", "none"], 100.0, 100.0),
           ("+ sequence parallel", ["--recompute", "none"], 66.8, 32.7),
           ("+ selective recompute", ["--no-sequence-parallel", "--recompute", "selective"], 49.4, 100.0),
           ("+ both", ["--recompute", "selective"], 16.2, 32.7),
           ("full recompute (layer)", ["--no-sequence-parallel", "--recompute", "layer"], 7.6, 15.4),
           ("full recompute (layer) + seq. parallel", ["--recompute", "layer"], None, 1.9),
           ("zcc's full (two values a layer)", ["--no-sequence-parallel", "--recompute", "full"], None, None)]


def generate(args, path):
    with open(path, "w") as f:
        subprocess.run([sys.executable] + args, check=True, stdout=f)


def simulate(zcc, model, args, attention, out, cluster="dgx-a100-80g"):
    report = os.path.join(out, "sim")
    subprocess.run([zcc, model, "--cluster", cluster, "--simulate", "--precision", "bf16", "--sim-attention",
                    attention, "--report=json", "-o", report] + args, check=True, stdout=subprocess.DEVNULL)
    with open(report + ".report.json") as f: # stage 0's plan with a pipeline, and the simulation
        return json.load(f)["simulated"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zcc", default=os.path.join(ROOT, "build", "bin", "zcc"))
    ap.add_argument("--out", default=None, help="where the graphs and reports go (default: a temporary directory)")
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="zcc-published-")
    os.makedirs(out, exist_ok=True)
    print("Simulated on dgx-a100-80g (sim/clusters/dgx-a100-80g.json), the H100 rows on dgx-h100; "
          "error = predicted / published - 1")
    print(f"{'run':38} {'published s':>11} {'predicted s':>11} {'error':>7} {'flash s':>9} {'MFU':>6}  peer's attention")
    errors = []
    for name, gen, zargs, published, source, attention, *where in RUNS:
        cluster = where[0] if where else "dgx-a100-80g"
        model = os.path.join(out, name.split(",")[0].replace(" ", "_") + ".mlir")
        generate(gen, model)
        sim = simulate(args.zcc, model, zargs, attention, out, cluster)
        flash = sim if attention == "flash" else simulate(args.zcc, model, zargs, "flash", out, cluster)
        error = sim["step_s"] / published - 1
        errors.append(abs(error))
        print(f"{name:38} {published:11.3f} {sim['step_s']:11.3f} {100 * error:+6.1f}% {flash['step_s']:9.3f} "
              f"{100 * sim['mfu']:5.1f}%  {attention}")
    print(f"mean absolute error {100 * sum(errors) / len(errors):.1f}%, largest {100 * max(errors):.1f}%")

    print("\nKorthikanti et al. Figure 7 (22B, tp 8): activation bytes of zcc's memory plan (micro-batch 8, which")
    print("sequence parallelism splits over 8 ranks) against the paper's per-layer formulas")
    model = os.path.join(out, "gpt22b_b8.mlir")
    generate([GPT, "--layers", "48", "--dim", "6144", "--heads", "64", "--context", "2048", "--vocab", "51200",
              "--batch", "8"], model)
    base = None
    print(f"{'configuration':40} {'zcc bytes':>14} {'zcc %':>7} {'paper %':>8} {'no scores %':>12}")
    for name, flags, paper, flash in FIGURE7:
        report = os.path.join(out, "fig7")
        subprocess.run([args.zcc, model, "--world-size", "8", "--tp", "8", "--precision", "bf16", "--verify-only",
                        "--report=json", "-o", report] + flags, check=True)
        with open(report + ".report.json") as f:
            peak = json.load(f)["activation_peak_bytes"]
        base = base or peak
        print(f"{name:40} {peak:14d} {100 * peak / base:6.1f}% {'' if paper is None else f'{paper:7.1f}%':>8} "
              f"{'' if flash is None else f'{flash:11.1f}%'}")


if __name__ == "__main__":
    main()
