#!/usr/bin/env python3
"""Trains an example model with zcc and with PyTorch from the same weights on the same batches.

The PyTorch side is an independent implementation of the example's architecture (torch ops,
torch autograd, torch.optim.AdamW); the two must give the same per-step losses. Initial weights
come from PyTorch's own generator and reach train.bin through --init-weights (raw f32 in the
model's parameter order); train.bin's --export-weights is compared with PyTorch's final weights.

usage: torch_reference.py ZCC MODEL.mlir mlp|gpt|llama STEPS TOLERANCE [--np N] [--zero-stage S] [--lr LR]
                          [--tp T] [--pp P] [--grad-clip MAX_NORM] [--min-clipped K]
                          [--precision fp32|bf16 [--weight-tolerance X]] [--reference-cache DIR]
                          [--planted-defect dropped-term|adam-epsilon|frozen-bias] DATA-FLAGS...
Every comparison is with PyTorch's float64 run, within the bounds of reference_spread.py: at each step
TOLERANCE (relative) or 10x the widest distance PyTorch's own fp32 runs (from weights one ulp apart)
have reached by then, whichever is larger. So a BLAS or oneDNN kernel that sums in another order, on
either side, cannot fail it (OPENBLAS_CORETYPE, forced ISA paths), and a defect still does:
--planted-defect D runs no train.bin and passes only if a PyTorch fp32 run with defect D breaks them.
--grad-clip is zcc's (default 1.0, as its compiler's): PyTorch runs clip_grad_norm_ with it before
each step, and train.bin's logged grad_norm must equal clip_grad_norm_'s total norm within the
same kind of bound (--norm-tolerance, default TOLERANCE); --min-clipped K fails unless clipping was
active on at least K steps.
--eval-data FILE [--eval-every N] [--eval-iters K]: train.bin's val_loss at those steps must equal
PyTorch's mean loss (no grad) over the same K held-out batches within the same kind of bound.
DATA-FLAGS are train.bin's: --synthetic (MLP teacher data) or --data FILE (GPT text).
--precision bf16 compiles zcc's bf16 compute (fp32 master weights) and still compares with
PyTorch's float64 run: TOLERANCE then bounds how far bf16 rounding may move the curve.
--reference-cache DIR keeps the PyTorch runs (they depend on neither np, ZeRO stage nor precision).
Prints both step times; --time-threads N times PyTorch with N threads (default 1, as train.bin's ranks).
"""
import argparse, json, math, os, re, subprocess, sys, tempfile, time

import numpy as np
import torch
import torch.nn.functional as F

from reference_spread import DEFECTS, FACTOR, Envelope, cached, check_planted, file_digest, samples_of

# ---------------------------------------------------------------------------------------------
# The model file: parameters in declaration order (train.bin's raw weight order) and the batch.

def read_model(path):
    text = open(path).read()
    params = []
    for name, dims in re.findall(r"^zc\.param @(\w+) : tensor<([0-9x]+)xf32>", text, re.M):
        params.append((name, [int(d) for d in dims.split("x")]))
    forward = re.search(r"^zc\.forward @\w+\(%\w+: tensor<(\d+)x", text, re.M)
    heads = re.search(r"causal_attention .* heads (\d+)", text)
    return params, int(forward.group(1)), int(heads.group(1)) if heads else 0

def read_context(path):
    """The token windows' length: the forward's first input is [batch, context] token ids."""
    forward = re.search(r"^zc\.forward @\w+\(%\w+: tensor<\d+x(\d+)xi32>", open(path).read(), re.M)
    return int(forward.group(1))

# ---------------------------------------------------------------------------------------------
# train.bin's data (runtime/main/Data.cpp, Random.h), rebuilt here bit for bit.

M64 = (1 << 64) - 1

def splitmix64(x):
    x = (x + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(M64)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))

def stream_key(name, seed):
    h = 1469598103934665603
    for c in name.encode():
        h = ((h ^ c) * 1099511628211) & M64
    with np.errstate(over="ignore"):
        return int(splitmix64(np.uint64(h) ^ splitmix64(np.uint64(seed))))

def uniform01(key, i):
    with np.errstate(over="ignore"):
        r = splitmix64(np.uint64(key) + splitmix64(i.astype(np.uint64)))
    return ((r >> np.uint64(11)).astype(np.float64) + 0.5) * (1.0 / 9007199254740992.0)

def normal(key, i):
    u1, u2 = uniform01(key, 2 * i), uniform01(key, 2 * i + 1)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(6.283185307179586 * u2)

class TeacherData:
    """--synthetic for (features, labels): Gaussian rows labelled by a fixed random linear teacher."""
    def __init__(self, features, classes, seed):
        self.features, self.key = features, stream_key("features", seed)
        teacher = normal(stream_key("teacher", seed), np.arange(features * classes, dtype=np.uint64))
        self.teacher = (teacher / math.sqrt(features)).reshape(features, classes)

    def batch(self, first_row, rows):
        index = np.arange(first_row * self.features, (first_row + rows) * self.features, dtype=np.uint64)
        x = normal(self.key, index).astype(np.float32).reshape(rows, self.features)
        labels = (x.astype(np.float64) @ self.teacher).argmax(axis=1)
        return torch.from_numpy(x), torch.from_numpy(labels)

class TextData:
    """--data FILE (bytes as tokens): row q is the window at (q * T) mod (length - T - 1)."""
    def __init__(self, path, context):
        self.tokens, self.context = np.frombuffer(open(path, "rb").read(), dtype=np.uint8), context

    def batch(self, first_row, rows):
        windows = len(self.tokens) - self.context - 1
        starts = [(q * self.context) % windows for q in range(first_row, first_row + rows)]
        x = np.stack([self.tokens[s:s + self.context] for s in starts]).astype(np.int64)
        y = np.stack([self.tokens[s + 1:s + 1 + self.context] for s in starts]).astype(np.int64)
        return torch.from_numpy(x), torch.from_numpy(y)

# ---------------------------------------------------------------------------------------------
# The architectures (examples/mlp.mlir, examples/gen_gpt.py). Weights are [in, out] as in zc.matmul.

def mlp_loss(w, x, labels):
    h = x
    layers = sum(1 for name in w if name.endswith("_w"))
    for l in range(1, layers + 1):
        h = h @ w[f"fc{l}_w"] + w[f"fc{l}_b"]
        if l < layers:
            h = F.relu(h)
    return F.cross_entropy(h, labels, reduction="none")

def gpt_loss(w, tokens, targets, heads):
    B, T = tokens.shape
    C = w["wte"].shape[1]
    D = C // heads
    mask = torch.ones(T, T, dtype=torch.bool).triu(1)
    x = w["wte"][tokens] + w["wpe"][:T]
    layer = 0
    while f"h{layer}_qkv_w" in w:
        p = lambda n: w[f"h{layer}_{n}"]
        h = F.layer_norm(x, (C,), p("ln1_g"), p("ln1_b"), eps=1e-5)
        q, k, v = (h @ p("qkv_w") + p("qkv_b")).split(C, dim=-1)
        q, k, v = (t.view(B, T, heads, D).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(D)
        attn = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v
        attn = attn.transpose(1, 2).reshape(B, T, C)
        x = x + attn @ p("attn_proj_w") + p("attn_proj_b")
        h = F.layer_norm(x, (C,), p("ln2_g"), p("ln2_b"), eps=1e-5)
        h = F.gelu(h @ p("fc_w") + p("fc_b"), approximate="tanh")
        x = x + h @ p("fc_proj_w") + p("fc_proj_b")
        layer += 1
    x = F.layer_norm(x, (C,), w["ln_f_g"], w["ln_f_b"], eps=1e-5)
    logits = x @ w["wte"].t()
    return F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T), reduction="none")

def rms_norm(x, g, eps=1e-6):
    """Hugging Face's LlamaRMSNorm in f32."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * g

def rotary(x, heads, theta=10000.0):
    """Hugging Face Llama's rotary embedding (LlamaRotaryEmbedding, apply_rotary_pos_emb) on [B, T, C]."""
    B, T, C = x.shape
    D = C // heads
    inv_freq = 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
    freqs = torch.arange(T).float()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None, :, None, :], emb.sin()[None, :, None, :]
    x = x.view(B, T, heads, D)
    rotated = torch.cat((-x[..., D // 2:], x[..., :D // 2]), dim=-1)
    return (x * cos + rotated * sin).reshape(B, T, C)

# The Llama's rope theta and RMSNorm epsilon, as the model file gives them (read_llama_settings).
LLAMA = {"theta": 10000.0, "eps": 1e-6}

def read_llama_settings(path):
    text = open(path).read()
    theta = re.search(r"zc\.rotary .* theta ([0-9.e+-]+)", text)
    eps = re.search(r"zc\.rmsnorm .*epsilon = ([0-9.e+-]+)", text)
    if theta:
        LLAMA["theta"] = float(theta.group(1))
    if eps:
        LLAMA["eps"] = float(eps.group(1))

def llama_loss(w, tokens, targets, heads):
    """test/Train/Inputs/llama.mlir (examples/gen_llama.py): RMSNorm, rotary q/k, grouped-query causal
    attention (the key/value heads repeated as Hugging Face's repeat_kv repeats them), SwiGLU, untied head."""
    theta, eps = LLAMA["theta"], LLAMA["eps"]
    B, T = tokens.shape
    C = w["embed"].shape[1]
    D = C // heads
    mask = torch.ones(T, T, dtype=torch.bool).triu(1)
    x = w["embed"][tokens]
    aux = 0.0
    layer = 0
    while f"h{layer}_qkv_w" in w:
        p = lambda n: w[f"h{layer}_{n}"]
        kv_heads = (p("qkv_w").shape[1] - C) // 2 // D
        h = rms_norm(x, p("attn_norm_g"), eps)
        q, k, v = (h @ p("qkv_w")).split([C, kv_heads * D, kv_heads * D], dim=-1)
        q, k = rotary(q, heads, theta), rotary(k, kv_heads, theta)
        q = q.view(B, T, heads, D).transpose(1, 2)
        k, v = (t.view(B, T, kv_heads, D).transpose(1, 2).repeat_interleave(heads // kv_heads, dim=1)
                for t in (k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(D)
        attn = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v
        x = x + attn.transpose(1, 2).reshape(B, T, C) @ p("o_w")
        h = rms_norm(x, p("mlp_norm_g"), eps)
        if f"h{layer}_router_w" in w:
            bias = f"h{layer}_router_bias" if f"h{layer}_router_bias" in w else None
            y, extra = sparse_moe(h, p("router_w"), p("experts_gate_w"), p("experts_up_w"), p("experts_down_w"),
                                  w[bias] if bias else None, bias)
            x, aux = x + y, aux + extra
        else:
            x = x + (F.silu(h @ p("gate_w")) * (h @ p("up_w"))) @ p("down_w")
        layer += 1
    logits = rms_norm(x, w["norm_g"], eps) @ w["head_w"]
    # The routers' losses are each data-parallel rank's, averaged (as train.bin's ranks average
    # their objectives); spread over the tokens so the mean of what this returns is the loss.
    return F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T), reduction="none") + aux

# zcc's optimizer (--optimizer): AdamW, or SGD with momentum, whose steps do not turn a rounding
# difference in a near-zero gradient into a step of lr as Adam's first steps do (a MoE model's
# routing then flips in one run and not in another, and the curves part).
OPTIMIZER = {"kind": "adamw"}

# The sparse MoE MLP of the model file (examples/gen_llama.py --experts): read_moe_settings.
MOE = {"top_k": 2, "normalize": True, "aux": 0.0, "z": 0.0, "shards": 1, "capacity_factor": 0.0, "dropped": 0,
       "groups": 1, "topk_groups": 1, "sigmoid": False, "scale": 1.0, "bias_rate": 0.0, "loads": {}}

def read_moe_settings(path):
    text = open(path).read()
    route = re.search(r"zc\.moe_route \S+ top_k (\d+)( normalize)?( capacity_factor ([0-9.e+-]+))?", text)
    if route:
        MOE["top_k"], MOE["normalize"] = int(route.group(1)), bool(route.group(2))
        MOE["capacity_factor"] = float(route.group(4)) if route.group(4) else 0.0
    route = re.search(r"zc\.moe_route [^\n]* top_k \d+([^:]*):", text)
    MOE["sigmoid"] = bool(route) and " sigmoid" in route.group(1)
    scale = route and re.search(r" scale ([0-9.e+-]+)", route.group(1))
    MOE["scale"] = float(scale.group(1)) if scale else 1.0
    groups = re.search(r"zc\.moe_route .* groups (\d+) topk_groups (\d+)", text)
    MOE["groups"], MOE["topk_groups"] = (int(groups.group(1)), int(groups.group(2))) if groups else (1, 1)
    aux = re.search(r"zc\.moe_aux_loss .* coef ([0-9.e+-]+)", text)
    z = re.search(r"zc\.moe_z_loss .* coef ([0-9.e+-]+)", text)
    MOE["aux"] = float(aux.group(1)) if aux else 0.0
    MOE["z"] = float(z.group(1)) if z else 0.0

def kept_by_capacity(chosen, experts, capacity):
    """DeepSpeed's top-k gating with a capacity (GShard's order): each expert keeps its first
    `capacity` choices taking every token's first choice in token order, then the second ones, ...
    chosen: [N, K] expert ids of one routing. Returns [N, K] bools."""
    counts = torch.zeros(experts, dtype=torch.int64)
    kept = torch.zeros(chosen.shape, dtype=torch.bool)
    for j in range(chosen.shape[1]):
        onehot = F.one_hot(chosen[:, j], experts)
        place = ((onehot.cumsum(0) - 1 + counts) * onehot).sum(1)
        kept[:, j] = place < capacity
        counts += onehot.sum(0)
    return kept

def update_expert_biases(w):
    """DeepSeek-V3's aux-loss-free balancing after a step: each layer's bias moves by the rate
    towards the mean load, the loads being the step's choices over the whole batch (every rank's)."""
    with torch.no_grad():
        for name, load in MOE["loads"].items():
            w[name] += MOE["bias_rate"] * torch.sign(load.mean() - load).to(w[name].dtype)
    MOE["loads"] = {}

def sparse_moe(h, router, gate, up, down, bias=None, bias_name=None):
    """Hugging Face's MixtralSparseMoeBlock on [B, T, C] (softmax router, top-k, renormalized unless
    the model says otherwise, SwiGLU experts; every expert computed densely and the chosen ones
    gathered: the same values as the sparse loop), group-limited as DeepSeek-V3's router where the
    model says so, scored by each expert's sigmoid and chosen by score + bias where it says so
    (DeepSeek-V3's router: the training forward's loads, which move the bias, go to MOE["loads"]),
    with a capacity DeepSpeed's gating (each
    data-parallel rank's routing keeps its experts' first choices: kept_by_capacity; the kept
    weights renormalized), and this layer's Switch load-balancing loss (from the choices before
    any drop, as DeepSpeed counts them) and router z-loss, each over one data-parallel rank's rows
    and averaged over the ranks. The dropped choices add to MOE["dropped"]."""
    B, T, C = h.shape
    E, K = router.shape[1], MOE["top_k"]
    logits = h @ router
    probs = torch.sigmoid(logits) if MOE["sigmoid"] else torch.softmax(logits, dim=-1)
    choice = probs if bias is None else probs + bias.detach()
    if MOE["groups"] > 1:  # DeepSeek-V3's group-limited routing (its get_topk_indices): the best groups' experts
        G = MOE["groups"]
        group_scores = choice.view(B, T, G, E // G).topk(2, dim=-1).values.sum(-1)
        best = torch.topk(group_scores, MOE["topk_groups"], dim=-1).indices
        keep = torch.zeros(B, T, G, dtype=torch.bool).scatter_(-1, best, True)
        keep = keep[..., None].expand(B, T, G, E // G).reshape(B, T, E)
        choice = choice.masked_fill(~keep, float("-inf"))
    chosen = torch.topk(choice, K, dim=-1).indices
    if bias_name and torch.is_grad_enabled():
        load = torch.bincount(chosen.reshape(-1), minlength=E).double()
        MOE["loads"][bias_name] = MOE["loads"].get(bias_name, 0) + load
    top = torch.gather(probs, -1, chosen)
    rows = B // MOE["shards"]
    kept = torch.ones(chosen.shape, dtype=torch.bool)
    if MOE["capacity_factor"]:
        tokens = rows * T
        capacity = max(1, math.ceil(MOE["capacity_factor"] * tokens * K / E - 1e-9))
        for r in range(MOE["shards"]):
            part = kept_by_capacity(chosen[r * rows:(r + 1) * rows].reshape(tokens, K), E, capacity)
            kept[r * rows:(r + 1) * rows] = part.reshape(rows, T, K)
        MOE["dropped"] += int((~kept).sum())
    top = top * kept
    if MOE["normalize"]:
        # A token whose choices all dropped keeps weights of 0 (0 / tiny, not 0 / 0).
        top = top / top.sum(-1, keepdim=True).clamp_min(torch.finfo(top.dtype).tiny)
    top = top * MOE["scale"]
    every = torch.einsum("btc,ecf->ebtf", h, gate)
    every = F.silu(every) * torch.einsum("btc,ecf->ebtf", h, up)
    every = torch.einsum("ebtf,efc->btec", every, down)  # [B, T, E, C]
    picked = torch.gather(every, 2, chosen[..., None].expand(B, T, K, C))
    y = (picked * top[..., None]).sum(2)
    extra = torch.zeros((), dtype=h.dtype)
    for r in range(MOE["shards"]):
        p, c = probs[r * rows:(r + 1) * rows], chosen[r * rows:(r + 1) * rows]
        if MOE["aux"]:
            f = torch.bincount(c.reshape(-1), minlength=E).to(h.dtype) / c.numel()
            extra = extra + MOE["aux"] * E * (f * p.reshape(-1, E).mean(0)).sum() / MOE["shards"]
        if MOE["z"]:
            lse = torch.logsumexp(logits[r * rows:(r + 1) * rows], dim=-1)
            extra = extra + MOE["z"] * (lse ** 2).mean() / MOE["shards"]
    return y, extra

# Each returns the per-token (per-sample) losses: the training loss is their mean.
LOSSES = {"mlp": lambda w, x, y, heads: mlp_loss(w, x, y), "gpt": gpt_loss, "llama": llama_loss}

def initial_weights(params, seed):
    """PyTorch's own initialization, deliberately not zcc's: train.bin must take these weights."""
    gen = torch.Generator().manual_seed(seed)
    weights = {}
    for name, shape in params:
        if name.endswith(("_g",)):
            t = 1.0 + 0.1 * torch.randn(shape, generator=gen)
        elif len(shape) == 1:
            t = 0.02 * torch.randn(shape, generator=gen)
        else:  # [in, out], or a MoE layer's experts [E, in, out]
            t = torch.randn(shape, generator=gen) / math.sqrt(shape[-2])
        weights[name] = t.float()
    return weights

# ---------------------------------------------------------------------------------------------

class TorchRun:
    """One PyTorch training run's per-step losses and gradient norms, final weights, step times,
    validation losses ({step: mean loss}) and, for a MoE model with a capacity, the choices its
    routings dropped each step."""
    def __init__(self, losses, norms, final, seconds, val_losses, dropped=None):
        self.losses, self.norms, self.final, self.seconds, self.val_losses = losses, norms, final, seconds, val_losses
        self.dropped = dropped or []


def train_torch(kind, params, weights, data, batch, heads, steps, lr, grad_clip, evaluation=None,
                dtype=torch.float32, defect=None):
    """evaluation: (held-out data, every, iters). dtype: the weights' and activations' (float64: the
    reference's centre). defect: one of reference_spread.DEFECTS, planted in this run."""
    w = {name: weights[name].to(dtype).clone().requires_grad_(True) for name, _ in params}
    cast = lambda t: t.to(dtype) if t.is_floating_point() else t
    # zcc's default AdamW: weight decay 0.01 on matrices, none on biases and norm gains.
    decay = [w[n] for n, s in params if len(s) >= 2]
    no_decay = [w[n] for n, s in params if len(s) < 2]
    groups = [{"params": decay, "weight_decay": 0.01}]
    if defect != "frozen-bias":
        groups.append({"params": no_decay, "weight_decay": 0.0})
    if OPTIMIZER["kind"] == "sgd":  # zcc --optimizer sgd: momentum 0.9, coupled weight decay, as torch.optim.SGD
        opt = torch.optim.SGD(groups, lr=lr, momentum=0.9)
    else:
        opt = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999), eps=1e-6 if defect == "adam-epsilon" else 1e-8)
    losses, norms, seconds, val_losses, dropped = [], [], [], {}, []
    for step in range(steps):
        x, y = data.batch(step * batch, batch)
        start = time.perf_counter()
        for t in w.values():
            t.grad = None
        MOE["dropped"] = 0
        per_token = LOSSES[kind](w, cast(x), y, heads)
        dropped.append(MOE["dropped"])
        loss = per_token.mean()
        # dropped-term: the gradient of the mean without its last term (the loss logged is whole).
        objective = per_token[:-1].sum() / per_token.numel() if defect == "dropped-term" else loss
        objective.backward()
        # nanoGPT's and torchtitan's clip_grad_norm_ (max_norm inf: the norm, nothing clipped).
        norm = torch.nn.utils.clip_grad_norm_(list(w.values()), grad_clip if grad_clip > 0 else math.inf)
        opt.step()
        update_expert_biases(w)
        seconds.append(time.perf_counter() - start)
        losses.append(loss.item())
        norms.append(norm.item())
        if evaluation and ((step + 1) % evaluation[1] == 0 or step + 1 == steps):
            held_out, _, iters = evaluation
            with torch.no_grad():
                total = 0.0
                for i in range(iters):
                    hx, hy = held_out.batch(i * batch, batch)
                    total += LOSSES[kind](w, cast(hx), hy, heads).mean().item()
            val_losses[step + 1] = total / iters
    return TorchRun(losses, norms, {n: t.detach().double() for n, t in w.items()}, seconds, val_losses, dropped)

# The last train_zcc run's --log-json records (its MoE routing counts: moe_dropped).
ZCC_LOG = {"records": []}

def train_zcc(zcc, model, params, weights, steps, lr, ranks, zero_stage, precision, data_flags, work,
              compile_flags=(), run_flags=()):
    exe = os.path.join(work, "train.bin")
    subprocess.run([zcc, model, "-o", exe, "--world-size", str(ranks), "--zero-stage", str(zero_stage),
                    "--precision", precision] + list(compile_flags), check=True)
    init, final, log = (os.path.join(work, f) for f in ("init.f32", "final.f32", "log.jsonl"))
    with open(init, "wb") as f:
        for name, _ in params:
            f.write(weights[name].contiguous().numpy().astype("<f4").tobytes())
    cmd = [exe, "--steps", str(steps), "--lr", str(lr), "--log-every", "1", "--log-json", log,
           "--init-weights", init, "--export-weights", final] + data_flags + list(run_flags)
    if ranks > 1:
        cmd = ["mpirun", "-np", str(ranks)] + cmd
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=600)
    records = [json.loads(line) for line in open(log)]
    ZCC_LOG["records"] = records
    raw = np.fromfile(final, dtype="<f4")
    out, offset = {}, 0
    for name, shape in params:
        n = int(np.prod(shape))
        out[name] = torch.from_numpy(raw[offset:offset + n].reshape(shape).copy())
        offset += n
    if offset != raw.size:
        sys.exit(f"FAIL: --export-weights wrote {raw.size} values, the model has {offset}")
    return ([r["loss"] for r in records], [r.get("grad_norm") for r in records], out,
            [r["step_ms"] / 1e3 for r in records], {r["step"]: r["val_loss"] for r in records if "val_loss" in r})

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zcc"); ap.add_argument("model"); ap.add_argument("kind", choices=sorted(LOSSES))
    ap.add_argument("steps", type=int); ap.add_argument("tolerance", type=float)
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--zero-stage", type=int, default=0)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--optimizer", choices=["adamw", "sgd"], default="adamw")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--weight-tolerance", type=float, default=1e-3)
    ap.add_argument("--time-threads", type=int, default=1)
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--pp", type=int, default=1)
    ap.add_argument("--grad-clip", type=float, default=1.0)
    ap.add_argument("--min-clipped", type=int, default=0)
    ap.add_argument("--norm-tolerance", type=float, help="grad_norm's relative tolerance (default: TOLERANCE)")
    ap.add_argument("--eval-data")
    ap.add_argument("--eval-every", type=int, default=5)
    ap.add_argument("--eval-iters", type=int, default=2)
    ap.add_argument("--moe-bias-update-rate", type=float, default=1e-3,
                    help="the balancing biases' step (train.bin's flag), in both runs")
    ap.add_argument("--zcc-bias-update-rate", type=float,
                    help="train.bin's rate only (a planted defect: the bounds must catch a bias moved otherwise)")
    ap.add_argument("--reference-cache", help="a folder where the PyTorch reference runs are kept and reused")
    # no-aux-loss is hf_parity.py's (a Hugging Face MoE model's load-balancing loss left out).
    ap.add_argument("--planted-defect", choices=sorted(set(DEFECTS) - {"no-aux-loss", "frozen-expert-bias"}),
                    help="run no zcc: hold a PyTorch fp32 run with this defect to the bounds; passes if they catch it")
    args, data_flags = ap.parse_known_args()
    torch.set_num_threads(args.time_threads)

    params, batch, heads = read_model(args.model)
    read_llama_settings(args.model)
    read_moe_settings(args.model)
    OPTIMIZER["kind"] = args.optimizer
    MOE["bias_rate"] = args.moe_bias_update_rate
    MOE["shards"] = args.np // (args.tp * args.pp)
    if data_flags[:1] == ["--synthetic"]:
        data = TeacherData(params[0][1][0], params[-1][1][0], 1337)  # train.bin's default --seed
    elif data_flags[:1] == ["--data"] and len(data_flags) == 2:
        data = TextData(data_flags[1], read_context(args.model))
    else:
        sys.exit("data flags: --synthetic | --data FILE")
    weights = initial_weights(params, args.seed)

    evaluation = None
    if args.eval_data:
        evaluation = (TextData(args.eval_data, read_context(args.model)), args.eval_every, args.eval_iters)
        data_flags = data_flags + ["--eval-data", args.eval_data, "--eval-every", str(args.eval_every),
                                   "--eval-iters", str(args.eval_iters)]
    run = lambda w, **kw: train_torch(args.kind, params, w, data, batch, heads, args.steps, args.lr, args.grad_clip,
                                      evaluation, **kw)
    # The float64 centre and the fp32 bundle's width around it (reference_spread.py), shared by the
    # variants of one model (--reference-cache).
    def reference():
        runs = [run(weights, dtype=torch.float64)] + [run(w) for w in samples_of(weights)]
        return [vars(r) for r in runs]
    inputs = dict(model=file_digest(args.model), kind=args.kind, steps=args.steps, lr=args.lr, seed=args.seed,
                  optimizer=args.optimizer,
                  clip=args.grad_clip, bias_rate=args.moe_bias_update_rate, data=[file_digest(f) if os.path.isfile(f) else f for f in data_flags])
    if MOE["aux"] or MOE["z"]:  # the routers' losses are each rank's: the reference depends on the ranks
        inputs["shards"] = MOE["shards"]
    runs = [TorchRun(**r) for r in cached(args.reference_cache, inputs, [__file__], reference)]
    centre, samples = runs[0], runs[1:]
    if centre.losses[-1] >= centre.losses[0]:
        sys.exit(f"FAIL: PyTorch's loss did not go down ({centre.losses[0]} -> {centre.losses[-1]})")
    losses_env = Envelope("loss", centre.losses, [r.losses for r in samples], args.tolerance)
    norms_env = Envelope("grad_norm", centre.norms, [r.norms for r in samples], args.norm_tolerance or args.tolerance)
    val_steps = sorted(centre.val_losses)
    val_env = Envelope("val_loss", [centre.val_losses[k] for k in val_steps],
                       [[r.val_losses[k] for k in val_steps] for r in samples], args.tolerance)
    # Final weights, all tensors together (relative norm of the difference). Rounding differences
    # do not stay small in every weight: Adam divides by sqrt(v), so a gradient that is zero up to
    # rounding (the key bias: softmax ignores a per-query constant) takes steps of +-lr from noise,
    # and a ReLU unit at the edge of its kink can switch for one sample in one run and not the other.
    def weight_distance(final):
        diff = math.sqrt(sum(((final[n].double() - centre.final[n]) ** 2).sum().item() for n, _ in params))
        return diff / math.sqrt(sum((centre.final[n] ** 2).sum().item() for n, _ in params))
    weights_bound = max(args.weight_tolerance, FACTOR * max(weight_distance(r.final) for r in samples))

    def failures_of(losses, norms, final, val, who="zcc"):
        """What fails of a run held to the bounds (zcc's, or a run with a planted defect)."""
        out = []
        if len(losses) != args.steps:
            return [f"FAIL: {len(losses)} steps logged, expected {args.steps}"]
        out.append(losses_env.check(losses, who=who))
        if any(n is None for n in norms):
            out.append((f"FAIL: step {norms.index(None) + 1}: train.bin logged no grad_norm", 0, 0))
        else:
            out.append(norms_env.check(norms, who=who))
        if sorted(val) != val_steps:
            out.append((f"FAIL: val_loss at steps {sorted(val)}, PyTorch evaluated at {val_steps}", 0, 0))
        elif val_steps:
            out.append(val_env.check([val[k] for k in val_steps], val_steps, who=who))
        distance = weight_distance(final)
        out.append((f"FAIL: final weights differ from float64 PyTorch's by {distance:.2e} (relative norm) > "
                    f"{weights_bound:.2e}" if not distance <= weights_bound else None, distance,
                    distance / weights_bound))
        return out

    if args.planted_defect:
        bad = run(weights, defect=args.planted_defect)
        found = failures_of(bad.losses, bad.norms, bad.final, bad.val_losses, who="the defective run's")
        check_planted(args.planted_defect, [f for f, _, _ in found if f])
        return

    # The matmul paths of the rule, not this machine's measured plan: a plan measured on a loaded
    # machine would pick the kernels each run, and this test is not the plan's (train-matmul-plan
    # and Robustness/matmul-plan.test are; ZRT_MATMUL_TUNE=cache checks it against PyTorch here).
    os.environ.setdefault("ZRT_MATMUL_TUNE", "off")
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as work:
        compile_flags = ["--tp", str(args.tp), "--pp", str(args.pp), "--grad-clip", str(args.grad_clip),
                         "--optimizer", args.optimizer]
        losses, norms, final, seconds, val = train_zcc(args.zcc, args.model, params, weights, args.steps, args.lr,
                                                      args.np, args.zero_stage, args.precision, data_flags, work,
                                                      compile_flags, ["--moe-bias-update-rate", str(
                                                          args.moe_bias_update_rate if args.zcc_bias_update_rate
                                                          is None else args.zcc_bias_update_rate)])
    found = failures_of(losses, norms, final, val)
    for failure, _, _ in found:
        if failure:
            sys.exit(failure)
    # With a capacity: the same choices dropped each step as the rule's implementation here
    # (kept_by_capacity), counted (train.bin logs every step: --log-every 1).
    if MOE["capacity_factor"]:
        logged = [r.get("moe_dropped") for r in ZCC_LOG["records"]]
        if logged != centre.dropped:
            sys.exit(f"FAIL: train.bin dropped {logged} choices per step, DeepSpeed's rule in PyTorch {centre.dropped}")
        if not any(centre.dropped):
            sys.exit("FAIL: the capacity dropped no choice: the test does not exercise it")
    (_, worst, loss_ratio), (_, worst_norm, _) = found[0], found[1]
    worst_weights, weights_ratio = found[-1][1], found[-1][2]
    clipped = sum(1 for n in centre.norms if args.grad_clip > 0 and n > args.grad_clip)
    if clipped < args.min_clipped:
        sys.exit(f"FAIL: clipping was active on {clipped} of {args.steps} steps, fewer than {args.min_clipped}")
    median = lambda s: sorted(s)[len(s) // 2] * 1e3
    print(f"PASS: {args.kind} np={args.np} tp={args.tp} pp={args.pp} stage {args.zero_stage} {args.precision}, "
          f"{args.steps} steps, loss {centre.losses[0]:.5f} -> {centre.losses[-1]:.5f}; against float64 PyTorch: "
          f"worst relative loss difference {worst:.2e} ({loss_ratio:.2f} of its bound; {losses_env.summary()}), "
          f"final weights {worst_weights:.2e} ({weights_ratio:.2f} of {weights_bound:.1e}); grad clip "
          f"{args.grad_clip}: active on {clipped} of {args.steps} steps, worst grad_norm difference {worst_norm:.2e}"
          f"{f'; val_loss at {len(val)} steps, worst {found[2][1]:.2e}' if val else ''}"
          f"{f'; the same choices dropped at the capacity, {sum(centre.dropped)} in all' if MOE['capacity_factor'] else ''}"
          f"; median step "
          f"zcc {median(seconds):.2f} ms, PyTorch fp32 ({args.time_threads} thread(s)) {median(samples[0].seconds):.2f} ms")

if __name__ == "__main__":
    main()
