"""The benchmark peers' models, written the way PyTorch users write them.

The Llama is torchtitan's module tree (tok_embeddings, layers of attention_norm, attention.wq/wk/wv/wo,
ffn_norm, feed_forward.w1/w2/w3, then norm and an untied output) with `nn.RMSNorm`, Hugging Face's
half-split rotary embedding and `F.scaled_dot_product_attention(..., is_causal=True, enable_gqa=True)`;
zcc's one q/k/v matrix is split into wq, wk and wv when the weights are loaded.

The GPT is nanoGPT's module tree (GPT-2's names: transformer.wte/wpe/h/ln_f, a tied lm_head,
Blocks of ln_1, attn.c_attn/c_proj, ln_2, mlp.c_fc/c_proj) with `nn.Linear`, `nn.LayerNorm`
and `F.scaled_dot_product_attention(..., is_causal=True)`, so the peers get PyTorch's fused CPU
attention and FSDP2/DeepSpeed see one unit per block. The MLP is an `nn.Sequential` of
`nn.Linear` and `nn.ReLU`. `load_zcc_weights` fills either from zcc's raw initial weights
(the model's parameter order, matrices [in, out] as zc.matmul takes them), so the peers start
from the same point as train.bin and their losses are comparable step by step.

test/Train/torch_reference.py stays the functional reference the correctness tests use; this
file is only what the peers train.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.heads = heads

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class MLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.c_proj = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = MLP(dim)
        # Activation checkpointing per block, as torchtitan's "full" mode and DeepSpeed's
        # checkpointing users apply it: the block's activations are recomputed in backward.
        self.checkpointing = False

    def _forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))

    def forward(self, x):
        if self.checkpointing and torch.is_grad_enabled():
            return torch.utils.checkpoint.checkpoint(self._forward, x, use_reentrant=False)
        return self._forward(x)


class GPT(nn.Module):
    def __init__(self, vocab, context, dim, heads, layers):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, dim), wpe=nn.Embedding(context, dim),
            h=nn.ModuleList(Block(dim, heads) for _ in range(layers)), ln_f=nn.LayerNorm(dim)))
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied, as GPT-2 and zcc's example

    def blocks(self):
        return list(self.transformer.h)

    def forward(self, idx, targets):
        T = idx.size(1)
        pos = torch.arange(T, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def rotary_tables(context, head_dim, theta):
    """Hugging Face's LlamaRotaryEmbedding: cos and sin of t * theta^(-2i/D), halves repeated."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    freqs = torch.arange(context).float()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def apply_rotary(x, cos, sin):
    """x: [B, heads, T, D]; x cos + rotate_half(x) sin."""
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


class LlamaAttention(nn.Module):
    def __init__(self, dim, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, cos, sin):
        B, T, C = x.size()
        q = self.wq(x).view(B, T, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(B, T, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(B, T, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kv_heads != self.heads)
        return self.wo(y.transpose(1, 2).contiguous().view(B, T, C))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)  # gate
        self.w2 = nn.Linear(hidden, dim, bias=False)  # down
        self.w3 = nn.Linear(dim, hidden, bias=False)  # up

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class LlamaBlock(nn.Module):
    def __init__(self, dim, heads, kv_heads, hidden, eps):
        super().__init__()
        self.attention_norm = nn.RMSNorm(dim, eps=eps)
        self.attention = LlamaAttention(dim, heads, kv_heads)
        self.ffn_norm = nn.RMSNorm(dim, eps=eps)
        self.feed_forward = FeedForward(dim, hidden)
        self.checkpointing = False

    def _forward(self, x, cos, sin):
        x = x + self.attention(self.attention_norm(x), cos, sin)
        return x + self.feed_forward(self.ffn_norm(x))

    def forward(self, x, cos, sin):
        if self.checkpointing and torch.is_grad_enabled():
            return torch.utils.checkpoint.checkpoint(self._forward, x, cos, sin, use_reentrant=False)
        return self._forward(x, cos, sin)


class Llama(nn.Module):
    def __init__(self, vocab, context, dim, heads, kv_heads, hidden, layers, theta, eps):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(LlamaBlock(dim, heads, kv_heads, hidden, eps) for _ in range(layers))
        self.norm = nn.RMSNorm(dim, eps=eps)
        self.output = nn.Linear(dim, vocab, bias=False)
        cos, sin = rotary_tables(context, dim // heads, theta)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def blocks(self):
        return list(self.layers)

    def forward(self, idx, targets):
        T = idx.size(1)
        x = self.tok_embeddings(idx)
        for layer in self.layers:
            x = layer(x, self.cos[:T], self.sin[:T])
        logits = self.output(self.norm(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class SequentialMLP(nn.Module):
    def __init__(self, widths):
        super().__init__()
        layers = []
        for i in range(len(widths) - 1):
            layers.append(nn.Linear(widths[i], widths[i + 1]))
            if i < len(widths) - 2:
                layers.append(nn.ReLU())
        self.net = nn.Sequential(*layers)

    def blocks(self):
        return [m for m in self.net if isinstance(m, nn.Linear)]

    def forward(self, x, labels):
        return F.cross_entropy(self.net(x), labels)


def build(kind, params, heads, llama=None):
    """The module tree for one of zcc's example architectures, shaped from its parameter list
    (a Llama's also from `llama`: context, theta and eps, which its parameters do not show)."""
    shapes = dict(params)
    if kind == "llama":
        vocab, dim = shapes["embed"]
        layers = sum(1 for name in shapes if name.endswith("_qkv_w"))
        kv_heads = (shapes["h0_qkv_w"][1] - dim) // 2 // (dim // heads)
        return Llama(vocab, llama["context"], dim, heads, kv_heads, shapes["h0_gate_w"][1], layers, llama["theta"],
                     llama["eps"])
    if kind == "gpt":
        vocab, dim = shapes["wte"]
        layers = sum(1 for name in shapes if name.endswith("_qkv_w"))
        return GPT(vocab, shapes["wpe"][0], dim, heads, layers)
    widths = [shapes["fc1_w"][0]] + [shapes[f"fc{l}_w"][1] for l in range(1, len(shapes) // 2 + 1)]
    return SequentialMLP(widths)


def zcc_names(kind, model):
    """zcc parameter name -> (module parameter, whether zcc stores it transposed), or for a zcc
    matrix that holds several module weights side by side, a list of them in column order."""
    if kind == "llama":
        out = {"embed": (model.tok_embeddings.weight, False), "norm_g": (model.norm.weight, False),
               "head_w": (model.output.weight, True)}
        for l, b in enumerate(model.layers):
            a, ff = b.attention, b.feed_forward
            out[f"h{l}_attn_norm_g"], out[f"h{l}_mlp_norm_g"] = (b.attention_norm.weight, False), (b.ffn_norm.weight,
                                                                                                 False)
            out[f"h{l}_qkv_w"] = [(a.wq.weight, True), (a.wk.weight, True), (a.wv.weight, True)]
            out[f"h{l}_o_w"] = (a.wo.weight, True)
            out[f"h{l}_gate_w"], out[f"h{l}_up_w"], out[f"h{l}_down_w"] = (ff.w1.weight, True), (ff.w3.weight, True), \
                (ff.w2.weight, True)
        return out
    if kind == "mlp":
        linears = model.blocks()
        out = {}
        for l, lin in enumerate(linears, 1):
            out[f"fc{l}_w"], out[f"fc{l}_b"] = (lin.weight, True), (lin.bias, False)
        return out
    t = model.transformer
    out = {"wte": (t.wte.weight, False), "wpe": (t.wpe.weight, False),
           "ln_f_g": (t.ln_f.weight, False), "ln_f_b": (t.ln_f.bias, False)}
    for l, b in enumerate(t.h):
        for zname, module in (("ln1", b.ln_1), ("ln2", b.ln_2)):
            out[f"h{l}_{zname}_g"], out[f"h{l}_{zname}_b"] = (module.weight, False), (module.bias, False)
        for zname, lin in (("qkv", b.attn.c_attn), ("attn_proj", b.attn.c_proj), ("fc", b.mlp.c_fc),
                           ("fc_proj", b.mlp.c_proj)):
            out[f"h{l}_{zname}_w"], out[f"h{l}_{zname}_b"] = (lin.weight, True), (lin.bias, False)
    return out


@torch.no_grad()
def load_zcc_weights(kind, model, weights):
    """Copies zcc's weights (name -> tensor in zcc's layout) into the module tree; every
    parameter of the tree must be covered, so a renamed module cannot silently keep its init."""
    names = zcc_names(kind, model)
    if set(names) != set(weights):
        raise SystemExit(f"peer model and zcc model differ: {sorted(set(names) ^ set(weights))}")
    covered = set()
    for zname, targets in names.items():
        column = 0
        for param, transposed in targets if isinstance(targets, list) else [targets]:
            w = weights[zname]
            if isinstance(targets, list):  # this module's columns of zcc's [in, out] matrix
                width = param.shape[0]
                w, column = w[:, column:column + width], column + width
            w = w.t() if transposed else w
            if tuple(w.shape) != tuple(param.shape):
                raise SystemExit(f"{zname}: zcc shape {tuple(w.shape)} against the peer's {tuple(param.shape)}")
            param.copy_(w)
            covered.add(id(param))
    missing = [n for n, p in model.named_parameters() if id(p) not in covered]
    if missing:
        raise SystemExit(f"peer parameters zcc does not have: {missing}")
