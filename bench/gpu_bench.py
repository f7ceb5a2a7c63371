#!/usr/bin/env python3
"""zcc against PyTorch on one GPU, same card, same run: GPT-2 124M and a Llama-3.2-1B-shaped model.

  gpu_bench.py --zcc DIR [--data FILE] [--out DIR] [--steps 30] [--warmup 8] [--cases gpt2-b8,gpt2-b16,llama1b-b4]
  gpu_bench.py --smoke            (here, on the CPU: tiny shapes, eager PyTorch, no zcc: checks the script runs)

DIR holds zcc's side, as scripts/gpu-bundle.sh lays it out: models/<case>.mlir and bin/<case>.bin (train.bin
compiled with --target=cuda --precision bf16 from that model). PyTorch's side is the machine's own torch, set
up as its users set it up for these models: nanoGPT's GPT-2 (pre-LN, tanh GELU, biases, tied head), and a
torchtitan-style Llama (RMSNorm, rotary, grouped-query attention, SwiGLU, untied head); bf16 autocast,
torch.compile, F.scaled_dot_product_attention (cuDNN or flash underneath), AdamW(fused=True). Both get the
same batch, sequence and number of steps, from the same bytes of text.

Printed per case and system: median step ms after the warm-up, tokens/s, MFU and the peak device memory
nvidia-smi saw the process hold (one measure for both), then zcc / PyTorch's step-time ratio. MFU is one formula
for both (scripts/gpu_report.py's): model FLOPs per token = 6 N + 12 L T C (PaLM's count, attention included; N
the parameters of the zc model, L layers, T the context, C the width) x tokens/s / the card's dense bf16 peak.
A JSON copy goes to OUT/gpu_bench.json. One run of the three cases takes about 5 minutes on an H100.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "scripts")]  # gpu_report.py: beside it in the bundle
import gpu_report  # noqa: E402

# The cases: zcc's model file names them; PyTorch builds the same shape.
CASES = {
    "gpt2-b8": dict(kind="gpt", layers=12, dim=768, heads=12, kv_heads=12, ffn=3072, vocab=50304, context=1024,
                    batch=8),
    "gpt2-b16": dict(kind="gpt", layers=12, dim=768, heads=12, kv_heads=12, ffn=3072, vocab=50304, context=1024,
                     batch=16),
    "llama1b-b4": dict(kind="llama", layers=16, dim=2048, heads=32, kv_heads=8, ffn=8192, vocab=128256, context=2048,
                       batch=4, theta=500000.0),
}
SMOKE = dict(layers=2, dim=64, heads=4, kv_heads=2, ffn=128, vocab=256, context=32, batch=2)  # GPT: kv_heads = heads


class PeakMemory:
    """The most device memory nvidia-smi reports for a process while it runs (MiB; 0 without nvidia-smi)."""

    def __init__(self, pid):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self):
        while not self._stop.is_set():
            try:
                out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                                      "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout
            except OSError:
                return
            for line in out.splitlines():
                pid, used = (s.strip() for s in line.split(","))
                if pid == str(self.pid) and used.isdigit():
                    self.peak = max(self.peak, int(used))
            time.sleep(0.2)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def run_zcc(case, zcc_dir, data, steps, warmup, out):
    exe = os.path.join(zcc_dir, "bin", f"{case}.bin")
    log = os.path.join(out, f"zcc-{case}.jsonl")
    proc = subprocess.Popen([exe, "--data", data, "--steps", str(steps), "--log-every", "1", "--log-json", log],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with PeakMemory(proc.pid) as memory:
        output, _ = proc.communicate(timeout=300)
    open(os.path.join(out, f"zcc-{case}.out"), "w").write(output)
    if proc.returncode:
        raise RuntimeError(f"zcc {case}: train.bin exited {proc.returncode}: {output[-1500:]}")
    records = [json.loads(line) for line in open(log)]
    return dict(step_ms=statistics.median(r["step_ms"] for r in records[warmup:]), peak_mib=memory.peak,
                loss=records[-1]["loss"])


def torch_model(shape):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    C, H, G, V, T = shape["dim"], shape["heads"], shape["kv_heads"], shape["vocab"], shape["context"]
    D = C // H

    class Attention(nn.Module):
        def __init__(self, bias, rotary):
            super().__init__()
            self.qkv = nn.Linear(C, (H + 2 * G) * D, bias=bias)
            self.proj = nn.Linear(C, C, bias=bias)
            self.rotary = rotary

        def forward(self, x, cos=None, sin=None):
            B = x.shape[0]
            q, k, v = self.qkv(x).split([H * D, G * D, G * D], dim=-1)
            q, k, v = (t.view(B, T, -1, D).transpose(1, 2) for t in (q, k, v))
            if self.rotary:  # Hugging Face's half-split rotary, as zcc's Llama template
                def rotate(t):
                    a, b = t.chunk(2, dim=-1)
                    return t * cos + torch.cat((-b, a), dim=-1) * sin
                q, k = rotate(q), rotate(k)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=G != H)
            return self.proj(y.transpose(1, 2).reshape(B, T, C))

    class GptBlock(nn.Module):  # nanoGPT's
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
            self.attn = Attention(bias=True, rotary=False)
            self.fc, self.out = nn.Linear(C, shape["ffn"]), nn.Linear(shape["ffn"], C)

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class LlamaBlock(nn.Module):  # torchtitan's
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = nn.RMSNorm(C, eps=1e-5), nn.RMSNorm(C, eps=1e-5)
            self.attn = Attention(bias=False, rotary=True)
            self.gate = nn.Linear(C, shape["ffn"], bias=False)
            self.up = nn.Linear(C, shape["ffn"], bias=False)
            self.down = nn.Linear(shape["ffn"], C, bias=False)

        def forward(self, x, cos, sin):
            x = x + self.attn(self.n1(x), cos, sin)
            h = self.n2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.llama = shape["kind"] == "llama"
            self.embed = nn.Embedding(V, C)
            self.blocks = nn.ModuleList([LlamaBlock() if self.llama else GptBlock() for _ in range(shape["layers"])])
            self.norm = nn.RMSNorm(C, eps=1e-5) if self.llama else nn.LayerNorm(C)
            self.head = nn.Linear(C, V, bias=False)
            if self.llama:
                inv = 1.0 / shape.get("theta", 10000.0) ** (torch.arange(0, D, 2).float() / D)
                angles = torch.outer(torch.arange(T).float(), inv)
                self.register_buffer("cos", torch.cat((angles, angles), -1).cos(), persistent=False)
                self.register_buffer("sin", torch.cat((angles, angles), -1).sin(), persistent=False)
            else:
                self.pos = nn.Embedding(T, C)
                self.head.weight = self.embed.weight  # tied, as GPT-2 and zcc's template

        def forward(self, idx, targets):
            x = self.embed(idx)
            if not self.llama:
                x = x + self.pos(torch.arange(T, device=idx.device))
            for block in self.blocks:
                x = block(x, self.cos, self.sin) if self.llama else block(x)
            logits = self.head(self.norm(x))
            return F.cross_entropy(logits.float().view(-1, V), targets.reshape(-1))

    return Model()


def run_torch(shape, data, steps, warmup, device, compile_model):
    import torch

    torch.manual_seed(0)
    model = torch_model(shape).to(device)
    fused = device == "cuda"
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=fused)
    step_fn = torch.compile(model) if compile_model else model
    text = torch.tensor(list(open(data, "rb").read()), dtype=torch.long)
    B, T = shape["batch"], shape["context"]
    times = []
    with PeakMemory(os.getpid()) as memory:
        for step in range(steps):
            at = (step * B * (T + 1)) % max(1, len(text) - B * (T + 1))
            chunk = text[at:at + B * (T + 1)].view(B, T + 1).to(device)
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            with torch.autocast(device_type=device, dtype=torch.bfloat16):
                loss = step_fn(chunk[:, :-1], chunk[:, 1:])
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if device == "cuda":
                torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
    return dict(step_ms=statistics.median(times[warmup:]), peak_mib=memory.peak, loss=loss.item())


def mfu(flops_per_token, tokens_per_s, device_name):
    peak = gpu_report.peak_tflops(device_name or "")
    return flops_per_token * tokens_per_s / (peak * 1e12) if peak else math.nan


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zcc", help="the bundle's folder (models/, bin/)")
    ap.add_argument("--data", help="a text file (default: the bundle's data.txt)")
    ap.add_argument("--out", default="out")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=8, help="steps left out of the median (compilation, autotuning)")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU, PyTorch eager, no zcc")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = "cpu" if args.smoke else "cuda"
    data = args.data or (os.path.join(args.zcc, "data.txt") if args.zcc else __file__)
    if not args.smoke and not args.zcc:
        ap.error("--zcc DIR is needed (or --smoke)")
    card = driver = ""
    if not args.smoke:
        query = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                               capture_output=True, text=True).stdout.splitlines()
        card, driver = (s.strip() for s in query[0].split(",")) if query else ("", "")
    rows = []
    for case in args.cases.split(","):
        shape = dict(CASES[case], **(SMOKE if args.smoke else {}))
        if shape["kind"] == "gpt":
            shape["kv_heads"] = shape["heads"]
        tokens = shape["batch"] * shape["context"]
        if args.smoke:
            params = sum(p.numel() for p in torch_model(shape).parameters())
            flops_per_token = 6 * params + 12 * shape["layers"] * shape["context"] * shape["dim"]
        else:
            params, layers, context, width = gpu_report.model_shape(os.path.join(args.zcc, "models", f"{case}.mlir"))
            flops_per_token = 6 * params + 12 * layers * context * width
        results = {}
        if not args.smoke:
            results["zcc"] = run_zcc(case, args.zcc, data, args.steps, args.warmup, args.out)
        results["pytorch"] = run_torch(shape, data, args.steps, args.warmup, device, compile_model=not args.smoke)
        for system, r in results.items():
            r.update(case=case, system=system, tokens_per_s=tokens / (r["step_ms"] / 1e3))
            r["mfu"] = mfu(flops_per_token, r["tokens_per_s"], card)
            rows.append(r)
        if "zcc" in results:
            results["zcc"]["vs_pytorch"] = results["zcc"]["step_ms"] / results["pytorch"]["step_ms"]
    header = ("case", "system", "step ms", "tokens/s", "MFU", "peak MiB", "zcc / PyTorch")
    table = [(r["case"], r["system"], f"{r['step_ms']:.1f}", f"{r['tokens_per_s']:,.0f}",
              "n/a" if math.isnan(r["mfu"]) else f"{r['mfu']:.1%}", f"{r['peak_mib']:,}",
              f"{r['vs_pytorch']:.2f}" if "vs_pytorch" in r else "") for r in rows]
    gpu_report.print_table(header, table)
    import torch
    print(f"card: {card or 'none (smoke run on the CPU)'}; driver {driver or 'n/a'}; torch {torch.__version__}; "
          f"MFU = (6 N + 12 L T C) x tokens/s / the card's dense bf16 peak "
          f"({gpu_report.peak_tflops(card) if card else 'n/a'} TFLOP/s); {args.steps} steps, median after "
          f"{args.warmup}")
    json.dump(dict(card=card, driver=driver, torch=torch.__version__, steps=args.steps, warmup=args.warmup,
                   runs=rows), open(os.path.join(args.out, "gpu_bench.json"), "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
