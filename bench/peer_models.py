"""The benchmark peers' models, written the way PyTorch users write them.

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


def build(kind, params, heads):
    """The module tree for one of zcc's example architectures, shaped from its parameter list."""
    shapes = dict(params)
    if kind == "gpt":
        vocab, dim = shapes["wte"]
        layers = sum(1 for name in shapes if name.endswith("_qkv_w"))
        return GPT(vocab, shapes["wpe"][0], dim, heads, layers)
    widths = [shapes["fc1_w"][0]] + [shapes[f"fc{l}_w"][1] for l in range(1, len(shapes) // 2 + 1)]
    return SequentialMLP(widths)


def zcc_names(kind, model):
    """zcc parameter name -> (module parameter, whether zcc stores it transposed)."""
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
    for zname, (param, transposed) in names.items():
        w = weights[zname].t() if transposed else weights[zname]
        if tuple(w.shape) != tuple(param.shape):
            raise SystemExit(f"{zname}: zcc shape {tuple(w.shape)} against the peer's {tuple(param.shape)}")
        param.copy_(w)
        covered.add(id(param))
    missing = [n for n, p in model.named_parameters() if id(p) not in covered]
    if missing:
        raise SystemExit(f"peer parameters zcc does not have: {missing}")
