#!/usr/bin/env python3
"""A Mixture-of-Experts training step on this CPU, zcc against PyTorch, side by side (issue 58).

The model: a Mixtral-shaped decoder of 4 layers, d 512, 8 heads (2 key/value heads), 8 SwiGLU
experts of 1792, top 2 renormalized, the load-balancing loss at 0.001 (Mixtral's
router_aux_loss_coef), context 256, vocabulary 256, batch 4; fp32, AdamW, one process with every
core (train.bin's OpenMP threads; torch.set_num_threads).

  zcc:      examples/gen_llama.py --experts 8 ..., compiled by zcc, train.bin's median step_ms; and
            the same config.json through zcc-import (Hugging Face's layout: the experts' [E, out, in]
            weights read transposed, the load-balancing loss pooled over the layers as
            load_balancing_loss_func), so both of zcc's paths are timed;
  PyTorch:  Hugging Face's MixtralForCausalLM from the same config (its own MoE block, SDPA
            attention, output_router_logits for the same loss), torch.optim.AdamW (foreach),
            eager and under torch.compile; the faster is the peer (median step after warm-up).

Also zrt's grouped product against one dense product of the same FLOPs (zrt-kernel-bench's
BM_moe_expert_products: the model's expert products, even and skewed routing, forward and
backward, each against the dense product of its direction).

Prints the CPU, the versions, each side's median step (ms and tokens/s) and zcc / PyTorch.

usage: bench/moe_bench.py [--build build] [--python ~/.cache/zcc-venv/bin/python] [--steps 12]
       (scripts/setup-python.sh makes the environment)
"""
import argparse, json, os, platform, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPE = dict(layers=4, dim=512, heads=8, kv_heads=2, experts=8, top_k=2, ffn=1792, context=256, vocab=256, batch=4,
             aux=0.001)

# The PyTorch side, run by the environment's interpreter (torch 2.x, transformers).
PEER = r'''
import json, statistics, sys, time, torch
from transformers import MixtralConfig, MixtralForCausalLM
s, steps, compiled, threads = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4])
torch.set_num_threads(threads)
torch.manual_seed(0)
config = MixtralConfig(vocab_size=s["vocab"], hidden_size=s["dim"], intermediate_size=s["ffn"],
                       num_hidden_layers=s["layers"], num_attention_heads=s["heads"],
                       num_key_value_heads=s["kv_heads"], num_local_experts=s["experts"],
                       num_experts_per_tok=s["top_k"], max_position_embeddings=s["context"],
                       router_aux_loss_coef=s["aux"], output_router_logits=True, tie_word_embeddings=False,
                       attn_implementation="sdpa")
model = MixtralForCausalLM(config)
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, foreach=True)
step_fn = model
if compiled:
    step_fn = torch.compile(model)
tokens = torch.randint(0, s["vocab"], (s["batch"], s["context"] + 1))
times = []
for i in range(steps):
    start = time.perf_counter()
    out = step_fn(input_ids=tokens[:, :-1], labels=tokens[:, 1:].contiguous())
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    times.append(time.perf_counter() - start)
impl = getattr(config, "experts_implementation", None) or getattr(config, "_experts_implementation", None)
print(json.dumps({"median_ms": statistics.median(times[3:]) * 1e3, "torch": torch.__version__,
                  "transformers": __import__("transformers").__version__, "experts": str(impl),
                  "loss": out.loss.item()}))
'''


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def generated_model(work):
    model = os.path.join(work, "moe.mlir")
    s = SHAPE
    with open(model, "w") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "examples/gen_llama.py"), "--layers", str(s["layers"]),
                        "--dim", str(s["dim"]), "--heads", str(s["heads"]), "--kv-heads", str(s["kv_heads"]),
                        "--experts", str(s["experts"]), "--top-k", str(s["top_k"]), "--ffn", str(s["ffn"]),
                        "--context", str(s["context"]), "--vocab", str(s["vocab"]), "--batch", str(s["batch"]),
                        "--aux-coef", str(s["aux"])], stdout=f, check=True)
    return model


def imported_model(build, work):
    """The peer's MixtralConfig as a config.json, through zcc-import."""
    s = SHAPE
    config, model = os.path.join(work, "config.json"), os.path.join(work, "imported.mlir")
    with open(config, "w") as f:
        json.dump(dict(model_type="mixtral", vocab_size=s["vocab"], hidden_size=s["dim"], intermediate_size=s["ffn"],
                       num_hidden_layers=s["layers"], num_attention_heads=s["heads"],
                       num_key_value_heads=s["kv_heads"], num_local_experts=s["experts"],
                       num_experts_per_tok=s["top_k"], max_position_embeddings=s["context"],
                       router_aux_loss_coef=s["aux"], output_router_logits=True, tie_word_embeddings=False,
                       router_jitter_noise=0.0, sliding_window=None), f)
    subprocess.run([os.path.join(build, "bin/zcc-import"), "--hf-config", config, "--batch", str(s["batch"]),
                    "--context", str(s["context"]), "-o", model], check=True, stdout=subprocess.DEVNULL)
    return model


def zcc_step(build, model, steps, threads, work):
    exe, log = os.path.join(work, "train.bin"), os.path.join(work, "log.jsonl")
    subprocess.run([os.path.join(build, "bin/zcc"), model, "-o", exe], check=True)
    data = os.path.join(work, "text.txt")
    with open(data, "wb") as f:
        f.write(os.urandom(1 << 20))
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    subprocess.run([exe, "--data", data, "--steps", str(steps), "--log-every", "1", "--log-json", log], check=True,
                   env=env, stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in open(log)]
    return statistics.median(r["step_ms"] for r in records[3:]), records[-1]


def grouped_vs_dense(build):
    out = subprocess.run([os.path.join(build, "bench/zrt-kernel-bench"), "--benchmark_filter=BM_moe_expert_products",
                          "--benchmark_format=json", "--benchmark_min_time=1"], check=True, capture_output=True,
                         text=True).stdout
    rates = {b["label"]: b["flops"] for b in json.loads(out)["benchmarks"]}
    # Each against the dense product of its own direction (the backward: both gradients).
    dense = {k.endswith("backward"): v for k, v in rates.items() if k.startswith("dense")}
    return {k: v / dense[k.endswith("backward")] for k, v in rates.items() if not k.startswith("dense")}, dense[False]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--python", default=os.path.expanduser("~/.cache/zcc-venv/bin/python"))
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    tokens = SHAPE["batch"] * SHAPE["context"]
    print(f"CPU: {cpu_name()}, {args.threads} threads; model: {json.dumps(SHAPE)}")
    ratios, dense = grouped_vs_dense(args.build)
    for label, ratio in ratios.items():
        print(f"grouped product ({label}): {ratio:.2f} of a dense product of the same FLOPs "
              f"({dense / 1e9:.1f} GFLOP/s)")
    with tempfile.TemporaryDirectory() as work:
        zcc_ms, last = zcc_step(args.build, generated_model(work), args.steps, args.threads, work)
        imported_ms, imported_last = zcc_step(args.build, imported_model(args.build, work), args.steps, args.threads,
                                              work)
    print(f"zcc:     {zcc_ms:8.1f} ms/step  {tokens / zcc_ms * 1e3:8.0f} tokens/s  (loss {last['loss']:.3f})")
    print(f"zcc, imported by zcc-import: {imported_ms:8.1f} ms/step  {tokens / imported_ms * 1e3:8.0f} tokens/s  "
          f"(loss {imported_last['loss']:.3f})")
    peers = {}
    for name, compiled in (("eager", "0"), ("torch.compile", "1")):
        run = subprocess.run([args.python, "-c", PEER, json.dumps(SHAPE), str(args.steps), compiled,
                              str(args.threads)], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"PyTorch {name}: failed: {run.stderr.strip().splitlines()[-1] if run.stderr else run.returncode}")
            continue
        peers[name] = json.loads(run.stdout.strip().splitlines()[-1])
        p = peers[name]
        print(f"PyTorch {name}: {p['median_ms']:8.1f} ms/step  {tokens / p['median_ms'] * 1e3:8.0f} tokens/s  "
              f"(torch {p['torch']}, transformers {p['transformers']}, experts {p['experts']}, loss {p['loss']:.3f})")
    if peers:
        best = min(peers, key=lambda n: peers[n]["median_ms"])
        print(f"zcc / PyTorch ({best}, the faster): {zcc_ms / peers[best]['median_ms']:.2f}x the step time; "
              f"imported {imported_ms / peers[best]['median_ms']:.2f}x")


if __name__ == "__main__":
    main()
