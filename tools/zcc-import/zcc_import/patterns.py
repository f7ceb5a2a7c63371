"""Composite patterns of exported graphs, each lowered to one zc op.

  RMSNorm            g * (x * rsqrt(mean(x^2, -1, keepdim) + eps))         -> zc.rmsnorm
  tanh GELU          0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))         -> zc.gelu (GPT-2's gelu_new)
  rotary embedding   x * cos + cat(-x2, x1) * sin, tables folded              -> zc.rotary (theta read back
                                                                                from the tables, checked)
  attention          sdpa(q, repeat_kv(k), repeat_kv(v), causal mask)         -> zc.causal_attention
  written-out        softmax(masked_fill(q @ k^T * s, ~causal, -inf)) @ v      -> zc.causal_attention
  attention          (nanoGPT without flash attention), or
                     softmax(C tanh(q @ k^T * s / C) + mask) @ v               (transformers' eager path)
                     a scale s other than 1/sqrt(D), the cap C and a sliding window (read from the
                     folded mask) become the op's scale, softcap and window attributes

Operands of add and mul are matched in either order. A match checks everything zc's op assumes (the
tables are HF's default rotary for the recovered theta, the mask is causal, optionally windowed);
what fails a check is lowered op by op, where it meets a clear error.
"""
import math

import torch

from .mlir import number
from .values import View

aten = torch.ops.aten
IDENTITY_NODES = {aten.alias.default, aten.contiguous.default, aten.clone.default, aten.detach.default,
                  aten.to.dtype, aten.to.dtype_layout, aten._to_copy.default, aten.dropout.default}


def strip(node):
    """The node under f32 casts and aliases."""
    while isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in IDENTITY_NODES:
        if node.target is aten.dropout.default and node.args[1] != 0:
            break  # a real dropout: the lowering refuses it
        dtype = node.kwargs.get("dtype", node.args[1] if node.target is aten.to.dtype and len(node.args) > 1 else None)
        if dtype not in (None, torch.float32):
            break
        node = node.args[0]
    return node


def is_op(node, target):
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target == target


def operands(node, target):
    """The two operands of a binary `target` node (stripped), or None."""
    node = strip(node)
    if not is_op(node, target) or node.kwargs.get("alpha", 1) != 1:
        return None
    return strip(node.args[0]), strip(node.args[1]) if isinstance(node.args[1], torch.fx.Node) else node.args[1]


def either(pair):
    return [pair, (pair[1], pair[0])] if pair else []


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def is_scalar(x, value, rel=1e-6):
    return is_number(x) and abs(x - value) <= rel * abs(value)


def last_dim(node, dim):
    return dim % len(node.meta["val"].shape) == len(node.meta["val"].shape) - 1


# ---------------------------------------------------------------------------------------------------

def match_rmsnorm(lowering, node):
    """mul(g, mul(x, rsqrt(add(mean(pow(x, 2), [-1], keepdim), eps)))), any operand order; the gain
    g a parameter, or a parameter plus a scalar (Gemma's 1 + weight: zc.rmsnorm's gain_offset)."""
    for g, normed in either(operands(node, aten.mul.Tensor)):
        offset = 0.0
        for p, c in either(operands(g, aten.add.Tensor)):
            if isinstance(p, torch.fx.Node) and lowering.param_name(p) is not None and is_number(c):
                g, offset = p, float(c)
        if not isinstance(g, torch.fx.Node) or lowering.param_name(g) is None:
            continue
        for x, r in either(operands(normed, aten.mul.Tensor)):
            r = strip(r)
            if not is_op(r, aten.rsqrt.default):
                continue
            for m, eps in either(operands(r.args[0], aten.add.Tensor)):
                m = strip(m)
                if not isinstance(eps, float) or not is_op(m, aten.mean.dim):
                    continue
                dims, keep = m.args[1], (m.args[2] if len(m.args) > 2 else m.kwargs.get("keepdim", False))
                p = strip(m.args[0])
                if len(dims) != 1 or not last_dim(m.args[0], dims[0]) or not keep or not is_op(p, aten.pow.Tensor_Scalar):
                    continue
                if strip(p.args[0]) is x and p.args[1] == 2:
                    return lowering.emit_rmsnorm(node, x, g, eps, offset)
    return None


def match_gelu_tanh(lowering, node):
    """mul(mul(x, 0.5), add(tanh(mul(add(x, mul(pow(x, 3), 0.044715)), sqrt(2/pi))), 1))."""
    for half, one_plus in either(operands(node, aten.mul.Tensor)):
        x = half_of(half)
        if x is None:
            continue
        for th, one in either(operands(one_plus, aten.add.Tensor)):
            th = strip(th)
            if not is_scalar(one, 1.0) or not is_op(th, aten.tanh.default):
                continue
            for inner, c in either(operands(th.args[0], aten.mul.Tensor)):
                if not is_scalar(c, math.sqrt(2.0 / math.pi)):
                    continue
                for x2, cube in either(operands(inner, aten.add.Tensor)):
                    if x2 is not x:
                        continue
                    for p, k in either(operands(cube, aten.mul.Tensor)):
                        p = strip(p)
                        if is_scalar(k, 0.044715) and is_op(p, aten.pow.Tensor_Scalar) and strip(p.args[0]) is x \
                                and p.args[1] == 3:
                            v = lowering.tensor(x)
                            y = lowering.emit.op(node.name, v.base.shape, f"zc.gelu {v.base.name} : {v.base.type}")
                            return View(y, v.shape, v.heads)
    return None


def half_of(node):
    for x, c in either(operands(node, aten.mul.Tensor)):
        if is_scalar(c, 0.5) and isinstance(x, torch.fx.Node):
            return x
    return None


# ---------------------------------------------------------------------------------------------------

def find_rotary(lowering, node):
    """(x, cos, sin) for add(mul(x, cos), mul(cat([-x[..., D/2:], x[..., :D/2]], -1), sin)) with
    folded tables, else None; nothing emitted."""
    for a, b in either(operands(node, aten.add.Tensor)):
        for x, cos in either(operands(a, aten.mul.Tensor)):
            if not isinstance(cos, torch.fx.Node) or cos not in lowering.cap.constants:
                continue
            for rot, sin in either(operands(b, aten.mul.Tensor)):
                if not isinstance(sin, torch.fx.Node) or sin not in lowering.cap.constants:
                    continue
                if rotate_half_of(rot) is x:
                    return x, lowering.cap.constants[cos], lowering.cap.constants[sin]
    return None


def match_rotary(lowering, node):
    """The rotary embedding of a [B, H, T, D] value -> zc.rotary."""
    found = find_rotary(lowering, node)
    return emit_rotary(lowering, node, *found) if found is not None else None


def match_partial_rotary(lowering, node):
    """cat([rotary(x[..., :R]), x[..., R:]], -1) (GPT-NeoX's rotary_pct, Phi's partial_rotary_factor)
    -> one zc.rotary of x with rotary_dims R: no slices, no concat."""
    tensors = [strip(t) for t in node.args[0] if t.meta["val"].shape[-1] != 0]
    dim = node.args[1] if len(node.args) > 1 else 0
    if len(tensors) != 2 or not last_dim(tensors[0], dim):
        return None
    found = find_rotary(lowering, tensors[0])
    if found is None:
        return None
    part, rest = strip(found[0]), tensors[1]
    if not (is_op(part, aten.slice.Tensor) and is_op(rest, aten.slice.Tensor)):
        return None
    x = strip(part.args[0])
    if strip(rest.args[0]) is not x or not (last_dim(x, part.args[1]) and last_dim(x, rest.args[1])):
        return None
    D = x.meta["val"].shape[-1]
    R = part.meta["val"].shape[-1]
    if slice(*part.args[2:4]).indices(D)[:2] != (0, R) or slice(*rest.args[2:4]).indices(D)[:2] != (R, D):
        return None
    return emit_rotary(lowering, node, x, found[1], found[2], rotary_dims=R)


def rotate_half_of(node):
    node = strip(node)
    if not is_op(node, aten.cat.default) or not last_dim(node, node.args[1] if len(node.args) > 1 else 0):
        return None
    parts = node.args[0]
    if len(parts) != 2:
        return None
    neg, first = strip(parts[0]), strip(parts[1])
    if not is_op(neg, aten.neg.default):
        return None
    second = strip(neg.args[0])
    if not (is_op(second, aten.slice.Tensor) and is_op(first, aten.slice.Tensor)):
        return None
    x = strip(second.args[0])
    if strip(first.args[0]) is not x:
        return None
    D = x.meta["val"].shape[-1]
    if not (last_dim(x, second.args[1]) and last_dim(x, first.args[1])):
        return None
    lo = slice(*first.args[2:4]).indices(D)[:2]
    hi = slice(*second.args[2:4]).indices(D)[:2]
    return x if lo == (0, D // 2) and hi == (D // 2, D) else None


def rotary_tables(theta, T, D):
    """Hugging Face's default rotary tables (LlamaRotaryEmbedding) in f32: [T, D] cos and sin."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
    freqs = (inv_freq[:, None].float() @ torch.arange(T).float()[None, :]).t()
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def emit_rotary(lowering, node, x_node, cos, sin, rotary_dims=None):
    """zc.rotary of x (a [B, H, T, D] value), theta read back from the tables; with rotary_dims R the
    tables are those of a head of R channels and the rest of each head passes through."""
    v = lowering.tensor(x_node)
    if len(v.shape) != 4:
        lowering.fail(node, "a rotary embedding of a value that is not [B, H, T, D]")
    B, H, T, D = v.shape
    if rotary_dims is not None:
        D = rotary_dims
    cos = cos.float().reshape(-1, T, D)
    sin = sin.float().reshape(-1, T, D)
    if not (torch.equal(cos, cos[:1].expand_as(cos)) and torch.equal(sin, sin[:1].expand_as(sin))):
        lowering.fail(node, "rotary tables that differ between sequences of the batch")
    cos, sin = cos[0], sin[0]
    theta = recover_theta(cos, sin, T, D)
    if theta is None:
        lowering.fail(node, "rotary tables that are not the default rotary embedding of any base theta "
                            "(rope_scaling / attention scaling is not supported by zc.rotary)")
    base = lowering.heads_base(v, node.name)
    dims = f" rotary_dims {rotary_dims}" if rotary_dims is not None and rotary_dims != v.shape[3] else ""
    y = lowering.emit.op(node.name, base.shape,
                         f"zc.rotary {base.name} heads {H} theta {number(theta)}{dims} : {base.type}")
    return View(y, v.shape, heads=True)


def recover_theta(cos, sin, T, D):
    """The base theta whose default tables these are: read from position 1 (angle = inv_freq),
    rounded to 6 significant digits when that reproduces the tables exactly, else None."""
    if T < 2 or D < 4:
        return None
    angle = math.atan2(float(sin[1, 1]), float(cos[1, 1]))  # inv_freq[1] = theta^(-2/D)
    if angle <= 0:
        return None
    theta = angle ** (-D / 2.0)
    for candidate in (float(f"{theta:.6g}"), float(f"{theta:.4g}"), theta):
        c, s = rotary_tables(candidate, T, D)
        if torch.equal(c, cos) and torch.equal(s, sin):
            return candidate
    c, s = rotary_tables(theta, T, D)
    if (c - cos).abs().max() < 1e-5 and (s - sin).abs().max() < 1e-5:
        return theta
    return None


# ---------------------------------------------------------------------------------------------------

def attention(lowering, node):
    """scaled_dot_product_attention(q, k, v, mask, dropout, is_causal, scale, enable_gqa) on [B, H, T, D]
    values -> zc.causal_attention on their [B, T, H*D] bases (a sliding-window mask -> `window`)."""
    args = list(node.args) + [None] * (7 - len(node.args))
    q, k, v = args[0], args[1], args[2]
    mask = args[3] if args[3] is not None else node.kwargs.get("attn_mask")
    dropout = args[4] if args[4] is not None else node.kwargs.get("dropout_p", 0.0)
    causal = args[5] if args[5] is not None else node.kwargs.get("is_causal", False)
    scale = args[6] if args[6] is not None else node.kwargs.get("scale")
    if dropout:
        lowering.fail(node, f"attention dropout p={dropout}: zc has no dropout; set it to 0")
    T = lowering.tensor(q).shape[2]
    window = 0
    if mask is not None:
        window = mask_window(lowering, node, mask, T)
    elif not causal:
        lowering.fail(node, "attention without a causal mask: zc has causal attention only")
    return emit_attention(lowering, node, q, k, v, scale=scale, window=window)


def emit_attention(lowering, node, q, k, v, scale=None, softcap=None, window=0):
    """zc.causal_attention of [B, H, T, D] q and [B, G, T, D] k, v (through repeat_kv); `scale`
    other than 1/sqrt(D), `softcap` and a `window` shorter than the context become its attributes."""
    qv = lowering.tensor(q)
    B, H, T, D = qv.shape
    k, v = repeated_kv(k), repeated_kv(v)
    kv, vv = lowering.tensor(k), lowering.tensor(v)
    G = kv.shape[1]
    if vv.shape != kv.shape or kv.shape[0] != B or kv.shape[2] != T or kv.shape[3] != D or H % G:
        lowering.fail(node, f"attention shapes q {list(qv.shape)}, k {list(kv.shape)}, v {list(vv.shape)}: "
                            "zc needs the same batch, length and head size, and key/value heads dividing the heads")
    qb = lowering.heads_base(qv, node.name + "_q")
    kb = lowering.heads_base(kv, node.name + "_k")
    vb = lowering.heads_base(vv, node.name + "_v")
    attrs = f" kv_heads {G}" if G != H else ""
    if scale is not None and abs(scale * math.sqrt(D) - 1.0) > 1e-6:
        if not scale > 0:
            lowering.fail(node, f"attention scale {scale}: zc.causal_attention takes a positive scale")
        attrs += f" scale {number(scale)}"
    if softcap is not None:
        attrs += f" softcap {number(softcap)}"
    if window and window < T:
        attrs += f" window {window}"
    types = qb.type + (f", {kb.type}" if G != H else "")
    y = lowering.emit.op(node.name, qb.shape, f"zc.causal_attention {qb.name}, {kb.name}, {vb.name} heads {H}{attrs} : {types}")
    return View(y, (B, H, T, D), heads=True)


def repeated_kv(node):
    """Hugging Face's repeat_kv: reshape(expand(x[:, :, None], [B, G, n, T, D]), [B, G*n, T, D]) -> x."""
    r = strip(node)
    if not (is_op(r, aten.reshape.default) or is_op(r, aten.view.default) or is_op(r, aten._unsafe_view.default)):
        return node
    e = strip(r.args[0])
    if not is_op(e, aten.expand.default):
        return node
    u = strip(e.args[0])
    if not (is_op(u, aten.unsqueeze.default) and u.args[1] % 5 == 2):
        return node
    return u.args[0]


def mask_window(lowering, node, mask_node, T):
    """The window W of a folded causal mask (query t sees keys t - W < s <= t; W = T: the whole
    causal context), bool (True: visible) or additive (0: visible, below -1e30: hidden), the same
    for every sequence; anything else fails."""
    if mask_node not in lowering.cap.constants:
        lowering.fail(node, "an attention mask computed from the batch (padding?): zc has causal attention only")
    if mask_node not in lowering.causal_masks:  # layers share their masks: check each once
        lowering.causal_masks[mask_node] = window_of(lowering.cap.constants[mask_node], T)
    window = lowering.causal_masks[mask_node]
    if window is None:
        lowering.fail(node, "an attention mask that is neither causal nor a causal sliding window (padding? "
                            "bidirectional?): zc has causal attention, optionally windowed, only")
    return window


def window_of(mask, T):
    """W when `mask` ([..., T, T]) is causal with a sliding window of W keys, T when plain causal, else None."""
    m = mask.reshape(-1, T, T)
    if mask.dtype == torch.bool:
        visible = m
    else:
        visible = m == 0
        if not bool(((m == 0) | (m < -1e30)).all()):
            return None
    W = int(visible[0, T - 1].sum())
    if W < 1:
        return None
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    expected = (j <= i) & (i - j < W)
    return W if all(torch.equal(v, expected) for v in visible) else None


def match_manual_attention(lowering, node):
    """attention written out, at its final matmul(probs, v) -> zc.causal_attention:
      softmax(masked_fill(q @ k^T * s, ~causal, -inf)) @ v          nanoGPT without flash attention
      softmax(C tanh(q @ k^T * s / C) + mask) @ v                     transformers' eager attention
                                                                     (Gemma 2: soft-capping, windows)
    The scale s, the cap C (optional) and the mask's window become the op's attributes."""
    probs, v = strip(node.args[0]), node.args[1]
    if not (is_op(probs, aten.softmax.int) or is_op(probs, aten._softmax.default)) or not last_dim(probs, probs.args[1]):
        return None
    masked = strip(probs.args[0])
    if is_op(masked, aten.masked_fill.Scalar) and masked.args[2] == float("-inf"):
        mask, scores, additive = masked.args[1], strip(masked.args[0]), False
    elif is_op(masked, aten.add.Tensor):
        a, b = masked.args[0], masked.args[1]
        constants = lowering.cap.constants
        if isinstance(b, torch.fx.Node) and b in constants and a not in constants:
            mask, scores = b, strip(a)
        elif isinstance(a, torch.fx.Node) and a in constants and b not in constants:
            mask, scores = a, strip(b)
        else:
            return None
        additive = True
    else:
        return None
    softcap = None
    capped = soft_capped(scores)
    if capped is not None:
        scores, softcap = capped
    scores, scale = scaled(scores)
    if not is_op(scores, aten.matmul.default):
        return None
    q, kt = scores.args[0], strip(scores.args[1])
    if not is_op(kt, aten.transpose.int) or sorted(d % 4 for d in kt.args[1:3]) != [2, 3]:
        return None
    if len(q.meta["val"].shape) != 4 or mask not in lowering.cap.constants:
        return None
    T = q.meta["val"].shape[2]
    if additive:
        window = mask_window(lowering, node, mask, T)
    else:  # masked_fill's mask is True where hidden
        window = window_of(~lowering.cap.constants[mask].bool(), T)
        if window is None:
            lowering.fail(node, "written-out attention whose mask is neither causal nor a causal sliding window: "
                                "zc has causal attention, optionally windowed, only")
    return emit_attention(lowering, node, q, kt.args[0], v, scale=scale, softcap=softcap, window=window)


def scaled(node):
    """(x, s) for x * s or x / (1/s) by a Python scalar, else (node, None)."""
    if is_op(node, aten.mul.Tensor) and not isinstance(node.args[1], torch.fx.Node):
        return strip(node.args[0]), float(node.args[1])
    if is_op(node, aten.div.Tensor) and not isinstance(node.args[1], torch.fx.Node):
        return strip(node.args[0]), 1.0 / float(node.args[1])
    return node, None


def soft_capped(node):
    """(x, C) for C * tanh(x / C) (Gemma 2's logit soft-capping), else None."""
    outer, cap = scaled(node)
    if cap is None or not is_op(outer, aten.tanh.default):
        return None
    inner, inverse = scaled(strip(outer.args[0]))
    if inverse is None or abs(inverse * cap - 1.0) > 1e-6:
        return None
    return inner, cap
