"""The ATen graph -> zc ops.

Demand-driven: lowering starts at the loss and asks for each node's value as an operand needs it, so
nodes nobody reads (the export's metadata asserts, a KV cache) produce nothing, and composite
patterns (RMSNorm, the rotary embedding, repeat_kv, GPT-2's tanh GELU) are matched at their last node
and lowered to one zc op without their intermediate nodes ever existing. An op with no mapping, or a
pattern-only op met outside its pattern, is an error naming the op and the user's line.

Values are `View`s: a zc tensor read through an ATen shape. Views make reshapes free (a reshape only
renames the shape) and let attention's [B, H, T, D] head layout stay the [B, T, H x D] tensor zc's
rotary and causal_attention ops read, with no transposes emitted.
"""
import math
import operator

import torch

from . import lower_moe, patterns
from .capture import source_line
from .mlir import Emitter, Tensor, number, symbol
from .source import ImportError_
from .values import Constant, View

aten = torch.ops.aten

# Ops that pass their input through unchanged (f32 in, f32 out).
IDENTITY = {
    aten.alias.default, aten.contiguous.default, aten.clone.default, aten.detach.default,
    aten.detach_.default, aten.lift_fresh_copy.default, aten.to.dtype, aten.to.dtype_layout,
    aten._to_copy.default, aten.dropout.default, aten.type_as.default,
}
# Reshapes: the element order is unchanged, only the shape.
RESHAPES = {
    aten.view.default, aten.reshape.default, aten._unsafe_view.default, aten.unsqueeze.default,
    aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default, aten.flatten.using_ints,
    aten.expand.default,
}
# Ops only met inside a pattern (patterns.py): alone they have no zc op.
PATTERN_ONLY = {
    aten.pow.Tensor_Scalar: "RMSNorm's x.pow(2) or the tanh GELU's x^3",
    aten.mean.dim: "RMSNorm's mean over the last axis",
    aten.rsqrt.default: "RMSNorm's rsqrt",
    aten.tanh.default: "the tanh form of GELU or attention's logit soft-capping",
    aten.neg.default: "the rotary embedding's rotate_half",
    aten.masked_fill.Scalar: "written-out causal attention's mask",
    aten.sigmoid.default: "a MoE shared expert's gate, sigmoid(gate) * shared (Qwen2-MoE)",
}


def op_name(target):
    """aten.conv2d.default for an OpOverload; the Python name for anything else."""
    if hasattr(target, "_schema"):
        return f"aten.{target._schema.name.split('::')[-1]}.{target._overloadname or 'default'}"
    return getattr(target, "__name__", str(target))


class Lowering:
    def __init__(self, captured):
        self.cap = captured
        self.emit = Emitter()
        self.values = {}       # node -> View | python value
        self.param_refs = {}   # name -> Tensor
        self.param_roles = {}  # name -> "gain" | "bias" | "weight" (for meta initializers)
        self.inputs = {}       # "tokens"/"targets" -> Tensor
        self.reshapes = {}     # (tensor name, shape) -> Tensor
        self.causal_masks = {}  # mask node -> its window (patterns.mask_window), None if not causal
        self.routes = {}       # router logits' tensor name -> (top_k, its choices): lower_moe.py
        for node, role in captured.inputs.items():
            shape = tuple(node.meta["val"].shape)
            self.inputs[role] = Tensor("%" + role, shape, "i32")

    # -------------------------------------------------------------------------------------------
    # Errors

    def fail(self, node, message):
        where = source_line(node)
        count = sum(1 for n in self.cap.graph.nodes if n.op == "call_function" and n.target == node.target)
        text = message
        if node.op == "call_function":
            text = f"{op_name(node.target)} ({count} use{'s' if count != 1 else ''} in the graph): {message}"
        if where:
            text += f"\n  first at {where[0]}:{where[1]}: {where[2]}"
        raise ImportError_(text)

    def check_supported(self, loss_node):
        """Before lowering: every op the loss depends on (not folded) has a mapping; otherwise one
        error listing each unmapped op, its number of uses and the first line that produced it."""
        needed, stack = set(), [loss_node]
        while stack:
            n = stack.pop()
            if n in needed or n in self.cap.constants:
                continue
            needed.add(n)
            stack.extend(n.all_input_nodes)
        unmapped = {}
        for n in self.cap.graph.nodes:
            if n in needed and n.op == "call_function" and n.target not in KNOWN:
                unmapped.setdefault(n.target, []).append(n)
        if not unmapped:
            return
        lines = []
        for target, nodes in unmapped.items():
            where = next((w for w in map(source_line, nodes) if w), None)
            lines.append(f"{op_name(target)}: {len(nodes)} use{'s' if len(nodes) != 1 else ''}, no zc mapping"
                         + (f"\n  first at {where[0]}:{where[1]}: {where[2]}" if where else ""))
        raise ImportError_(f"{len(unmapped)} ATen op{'s' if len(unmapped) != 1 else ''} the importer cannot map "
                           f"(zcc-import --list-ops lists what it maps):\n" + "\n".join(lines))

    # -------------------------------------------------------------------------------------------
    # Values

    def value(self, node):
        if not isinstance(node, torch.fx.Node):
            return node
        if node in self.values:
            return self.values[node]
        if node in self.cap.constants:
            result = Constant(self.cap.constants[node])
        elif node in self.cap.params:
            result = self.param(node)
        elif node in self.cap.inputs:
            t = self.inputs[self.cap.inputs[node]]
            result = View(t, t.shape)
        elif node.op == "call_function":
            where = source_line(node)
            saved = self.emit.loc
            self.emit.loc = (where[0], where[1]) if where else None
            result = self.call(node)
            self.emit.loc = saved
        else:
            self.fail(node, f"unexpected graph node {node.op} {node.target}")
        self.values[node] = result
        return result

    def tensor(self, node):
        """The node's value, which must be a non-constant tensor."""
        v = self.value(node)
        if isinstance(v, Constant):
            self.fail(node, "a constant tensor where zc needs a computed one: zc has no constant tensors")
        if not isinstance(v, View):
            self.fail(node, f"expected a tensor, got {type(v).__name__}")
        return v

    def param(self, node):
        name = self.cap.params[node]
        if name not in self.param_refs:
            shape = self.cap.param_shapes[name]
            hint = "p_" + name.replace(".", "_")
            self.param_refs[name] = self.emit.op(hint, shape, f'zc.param_ref {symbol(name)} : {Tensor("", shape).type}')
        t = self.param_refs[name]
        return View(t, t.shape)

    def param_name(self, node):
        """The parameter a node reads, through identity ops, or None."""
        node = patterns.strip(node)
        return self.cap.params.get(node) if isinstance(node, torch.fx.Node) else None

    # -------------------------------------------------------------------------------------------
    # Layout helpers: zc tensors of the shape an op needs

    def plain(self, v, shape=None, hint="r"):
        """A zc tensor holding v's elements row-major as `shape` (default v.shape)."""
        shape = tuple(shape or v.shape)
        base = v.base
        if v.heads:
            B, H, T, D = v.shape
            base = self.reshape(base, (B, T, H, D), hint)
            base = self.emit.op(hint + "_t", (B, H, T, D), f"zc.transpose {base.name} [0, 2, 1, 3] : {base.type} -> "
                                f"{Tensor('', (B, H, T, D)).type}")
        return self.reshape(base, shape, hint)

    def reshape(self, t, shape, hint="r"):
        shape = tuple(shape)
        if t.shape == shape:
            return t
        key = (t.name, shape)
        if key not in self.reshapes:  # one zc.reshape per tensor and shape
            self.reshapes[key] = self.emit.op(hint + "_r", shape,
                                              f"zc.reshape {t.name} : {t.type} -> {Tensor('', shape, t.dtype).type}")
        return self.reshapes[key]

    def rows(self, v, hint="r"):
        """A zc tensor with v's last axis last (any leading shape): what row ops and matmuls read."""
        if not v.heads and v.base.shape and v.base.shape[-1] == v.shape[-1]:
            return v.base
        return self.plain(v, hint=hint)

    def heads_base(self, v, hint):
        """For a [B, H, T, D] value, the [B, T, H*D] tensor zc's attention ops read."""
        B, H, T, D = v.shape
        if v.heads:
            return self.reshape(v.base, (B, T, H * D), hint)
        t = self.plain(v, hint=hint)
        t = self.emit.op(hint + "_t", (B, T, H, D), f"zc.transpose {t.name} [0, 2, 1, 3] : {t.type} -> "
                         f"{Tensor('', (B, T, H, D)).type}")
        return self.reshape(t, (B, T, H * D), hint)

    # -------------------------------------------------------------------------------------------

    def call(self, node):
        t = node.target
        hint = node.name
        if t in IDENTITY:
            return self.identity(node)
        if t in RESHAPES:
            return self.reshape_node(node)
        handler = HANDLERS.get(t)
        if handler is None:
            if t in PATTERN_ONLY:
                self.fail(node, f"only mapped as part of {PATTERN_ONLY[t]}; this use matches no pattern")
            self.fail(node, "zc has no mapping for this op")
        return handler(self, node)

    def identity(self, node):
        t = node.target
        src = node.args[0]
        if t is aten.dropout.default:
            p, train = node.args[1], node.args[2] if len(node.args) > 2 else True
            if p != 0 and train:
                self.fail(node, f"dropout with p={p} while training: zc has no dropout; set the model's "
                                f"dropout probabilities to 0")
        dtype = node.kwargs.get("dtype", node.args[1] if t is aten.to.dtype and len(node.args) > 1 else None)
        if dtype is not None and dtype != torch.float32:
            self.fail(node, f"a cast to {dtype}: the importer takes the f32 model (zcc --precision bf16 "
                            f"gives mixed precision)")
        return self.value(src)

    def reshape_node(self, node):
        v = self.tensor(node.args[0])
        shape = tuple(node.meta["val"].shape)
        if node.target is aten.expand.default and shape != v.shape:
            self.fail(node, "a broadcasting expand outside repeat_kv: zc broadcasts only in bias_add")
        if shape == v.shape:
            return v
        if v.heads:
            return View(self.plain(v, hint=node.name), shape)
        return View(v.base, shape)


# -----------------------------------------------------------------------------------------------
# Handlers: one per mapped ATen op.

def lower_linear(self, node):
    """linear(x, w[out, in], b): zc.matmul x, w transpose_rhs (+ bias_add)."""
    x = self.tensor(node.args[0])
    w = self.tensor(node.args[1])
    bias = node.args[2] if len(node.args) > 2 else node.kwargs.get("bias")
    a = self.rows(x, node.name)
    out = w.shape[0]
    shape = a.shape[:-1] + (out,)
    y = self.emit.op(node.name, shape, f"zc.matmul {a.name}, {w.base.name} transpose_rhs : {a.type}, {w.base.type} "
                     f"-> {Tensor('', shape).type}")
    y = add_bias(self, node, y, bias)
    self.note_role(node.args[1], "weight")
    return View(y, x.shape[:-1] + (out,))


def add_bias(self, node, y, bias):
    if bias is None:
        return y
    b = self.tensor(bias)
    self.note_role(bias, "bias")
    return self.emit.op(node.name + "_b", y.shape, f"zc.bias_add {y.name}, {b.base.name} : {y.type}, {b.base.type}")


def lower_addmm(self, node):
    """addmm(b, x[N, in], w[in, out]) (GPT-2's Conv1D): zc.matmul x, w + bias_add."""
    bias, x, w = node.args[0], self.tensor(node.args[1]), node.args[2]
    if node.kwargs.get("beta", 1) != 1 or node.kwargs.get("alpha", 1) != 1:
        self.fail(node, "addmm with beta or alpha other than 1")
    return matmul_param(self, node, x, w, bias)


def lower_mm(self, node):
    return matmul_param(self, node, self.tensor(node.args[0]), node.args[1], None)


def matmul_param(self, node, x, w_node, bias):
    """x @ w for a parameter w ([in, out], or its transpose through t/transpose/permute)."""
    transposed = False
    inner = patterns.strip(w_node)
    if patterns.is_op(inner, aten.t.default) or (patterns.is_op(inner, aten.transpose.int)
                                                  and sorted(d % 2 for d in inner.args[1:3]) == [0, 1]) \
            or (patterns.is_op(inner, aten.permute.default) and list(inner.args[1]) == [1, 0]):
        transposed, inner = True, patterns.strip(inner.args[0])
    if inner not in self.cap.params:
        self.fail(node, "a matmul whose right operand is not a parameter: zc maps linear layers "
                        "(activation x activation products are attention's)")
    w = self.tensor(inner)
    a = self.rows(x, node.name)
    out = w.shape[0] if transposed else w.shape[1]
    shape = a.shape[:-1] + (out,)
    flag = " transpose_rhs" if transposed else ""
    y = self.emit.op(node.name, shape, f"zc.matmul {a.name}, {w.base.name}{flag} : {a.type}, {w.base.type} -> "
                     f"{Tensor('', shape).type}")
    y = add_bias(self, node, y, bias)
    self.note_role(inner, "weight")
    return View(y, x.shape[:-1] + (out,))


def lower_matmul(self, node):
    attention = patterns.match_manual_attention(self, node)
    if attention is not None:
        return attention
    if len(node.args[1].meta["val"].shape) != 2:
        self.fail(node, "a batched matmul of two activations outside attention: zc maps linear layers")
    return matmul_param(self, node, self.tensor(node.args[0]), node.args[1], None)


def lower_embedding(self, node):
    weight, ids = node.args[0], node.args[1]
    padding = node.args[2] if len(node.args) > 2 else -1
    if padding is not None and padding >= 0:
        self.fail(node, f"an embedding with padding_idx={padding}: zc.embedding has no padding row (its "
                        f"gradient would differ); set the config's pad_token_id to null")
    w = self.tensor(weight)
    self.note_role(weight, "weight")
    idv = self.value(ids)
    if isinstance(idv, Constant):
        # Positions: table[arange(s, s + T)] is a slice of the table.
        positions = idv.value.reshape(-1)
        start = int(positions[0])
        if not torch.equal(positions, torch.arange(start, start + positions.numel(), dtype=positions.dtype)):
            self.fail(node, "an embedding of constant ids other than consecutive positions")
        rows, C = positions.numel(), w.shape[1]
        t = self.emit.op(node.name, (rows, C), f"zc.slice {w.base.name} [{start}, 0] : {w.base.type} -> "
                         f"{Tensor('', (rows, C)).type}")
        return View(t, tuple(idv.value.shape) + (C,))
    if idv.base.dtype != "i32":
        self.fail(node, "an embedding indexed by a computed tensor: zc looks up the token ids")
    C = w.shape[1]
    shape = idv.base.shape + (C,)
    t = self.emit.op(node.name, shape, f"zc.embedding {w.base.name}[{idv.base.name}] : {w.base.type}, "
                     f"{idv.base.type} -> {Tensor('', shape).type}")
    return View(t, idv.shape + (C,))


def lower_layer_norm(self, node):
    x, normalized, g, b = node.args[0], node.args[1], node.args[2], node.args[3]
    eps = node.args[4] if len(node.args) > 4 else 1e-5
    if len(normalized) != 1 or g is None or b is None:
        self.fail(node, "zc.layernorm normalizes the last axis with a gain and a bias")
    xv = self.tensor(x)
    a = self.rows(xv, node.name)
    gv, bv = self.tensor(g), self.tensor(b)
    self.note_role(g, "gain")
    self.note_role(b, "bias")
    y = self.emit.op(node.name, a.shape, f"zc.layernorm {a.name}, {gv.base.name}, {bv.base.name} {{epsilon = "
                     f"{number(eps)} : f64}} : {a.type}, {gv.base.type}")
    return View(y, xv.shape)


def emit_rmsnorm(self, node, x_node, g_node, eps, gain_offset=0.0):
    xv = self.tensor(x_node)
    a = self.rows(xv, node.name)
    gv = self.tensor(g_node)
    if gv.shape != (a.shape[-1],):
        self.fail(node, "an RMSNorm gain that is not a vector over the last axis")
    # An offset gain starts at zero (Gemma's 1 + weight), as a bias does.
    self.note_role(g_node, "gain" if gain_offset == 0 else "bias")
    offset = f", gain_offset = {number(gain_offset)} : f64" if gain_offset else ""
    y = self.emit.op(node.name, a.shape, f"zc.rmsnorm {a.name}, {gv.base.name} {{epsilon = {number(eps)} : f64{offset}}}"
                     f" : {a.type}, {gv.base.type}")
    return View(y, xv.shape)


def lower_rms_norm(self, node):
    x, normalized, g = node.args[0], node.args[1], node.args[2] if len(node.args) > 2 else None
    eps = node.args[3] if len(node.args) > 3 else node.kwargs.get("eps")
    if eps is None:
        eps = torch.finfo(torch.float32).eps
    if len(normalized) != 1 or g is None:
        self.fail(node, "zc.rmsnorm normalizes the last axis with a gain")
    return emit_rmsnorm(self, node, x, g, eps)


def unary(zc_op):
    def lower(self, node):
        v = self.tensor(node.args[0])
        form = ""
        if zc_op == "gelu":  # PyTorch's default is the exact (erf) form: Pythia's `gelu`
            approximate = node.kwargs.get("approximate", node.args[1] if len(node.args) > 1 else "none")
            if approximate not in ("none", "tanh"):
                self.fail(node, f"GELU with approximate={approximate!r}")
            form = " exact" if approximate == "none" else ""
        y = self.emit.op(node.name, v.base.shape, f"zc.{zc_op} {v.base.name}{form} : {v.base.type}")
        return View(y, v.shape, v.heads)
    return lower


def lower_softmax(self, node):
    v = self.tensor(node.args[0])
    dim = node.args[1] % len(v.shape)
    if dim != len(v.shape) - 1:
        self.fail(node, "softmax over an axis other than the last")
    a = self.rows(v, node.name)
    y = self.emit.op(node.name, a.shape, f"zc.softmax {a.name} : {a.type}")
    return View(y, v.shape)


def binary(zc_op):
    def lower(self, node):
        if zc_op == "add":
            for match in (patterns.match_rotary, lower_moe.match_loss_sum):
                result = match(self, node)
                if result is not None:
                    return result
        if zc_op == "mul":
            for match in (patterns.match_rmsnorm, patterns.match_gelu_tanh, lower_moe.match_scaled_balancing_loss,
                          lower_moe.match_shared_gate):
                result = match(self, node)
                if result is not None:
                    return result
        a, b = node.args[0], node.args[1]
        alpha = node.kwargs.get("alpha", 1)
        if alpha != 1:
            self.fail(node, f"{zc_op} with alpha={alpha}")
        if not isinstance(a, torch.fx.Node) or not isinstance(b, torch.fx.Node):
            scalar, tensor = (a, b) if not isinstance(a, torch.fx.Node) else (b, a)
            if zc_op == "mul":
                return scale(self, node, self.tensor(tensor), scalar)
            if zc_op == "div" and isinstance(a, torch.fx.Node):
                return scale(self, node, self.tensor(a), 1.0 / b)
            self.fail(node, f"{zc_op} of a tensor and the scalar {scalar}: zc has no such op")
        # A folded one-element tensor is a scalar too (Gemma's embedding scale sqrt(d)).
        for c, x in {"mul": [(a, b), (b, a)], "div": [(b, a)]}.get(zc_op, []):
            value = one_value(self.value(c))
            if value is not None:
                return scale(self, node, self.tensor(x), value if zc_op == "mul" else 1.0 / value)
        if zc_op == "div":
            self.fail(node, "division of two tensors: zc has no such op")
        av, bv = self.tensor(a), self.tensor(b)
        if av.shape == bv.shape:
            if av.same_layout(bv):
                y = self.emit.op(node.name, av.base.shape, f"zc.{zc_op} {av.base.name}, {bv.base.name} : {av.base.type}")
                return View(y, av.shape, av.heads)
            x = self.plain(av, hint=node.name)
            z = self.plain(bv, hint=node.name)
            y = self.emit.op(node.name, x.shape, f"zc.{zc_op} {x.name}, {z.name} : {x.type}")
            return View(y, av.shape)
        if zc_op == "add":
            return broadcast_add(self, node, av, bv)
        self.fail(node, f"a broadcasting {zc_op}: zc broadcasts only in bias_add")
    return lower


def one_value(v):
    """The number a folded tensor of one element holds, else None."""
    if isinstance(v, Constant) and isinstance(v.value, torch.Tensor) and v.value.numel() == 1:
        return float(v.value.reshape(()))
    return None


def scale(self, node, v, s):
    y = self.emit.op(node.name, v.base.shape, f"zc.scale {v.base.name} by {number(s)} : {v.base.type}")
    return View(y, v.shape, v.heads)


def broadcast_add(self, node, av, bv):
    """a + b where b broadcasts over a's leading axes: zc's bias_add on [lead, rest] views."""
    if math.prod(av.shape) < math.prod(bv.shape):
        av, bv = bv, av
    trailing = list(bv.shape)
    while trailing and trailing[0] == 1:
        trailing.pop(0)
    if tuple(av.shape[len(av.shape) - len(trailing):]) != tuple(trailing):
        self.fail(node, f"a broadcast of {list(bv.shape)} to {list(av.shape)} that is not over leading axes")
    inner = math.prod(trailing)
    outer = math.prod(av.shape) // inner
    x = self.plain(av, (outer, inner), node.name)
    b = self.plain(bv, (inner,), node.name)
    y = self.emit.op(node.name, x.shape, f"zc.bias_add {x.name}, {b.name} : {x.type}, {b.type}")
    return View(self.reshape(y, av.shape, node.name), av.shape)


def lower_transpose(self, node):
    v = self.tensor(node.args[0])
    dims = sorted(d % len(v.shape) for d in node.args[1:3])
    if len(v.shape) == 4 and dims == [1, 2]:
        B, X, Y, D = v.shape
        if v.heads:  # [B, H, T, D] -> [B, T, H, D]: the base's own order
            return View(v.base, (B, Y, X, D))
        return View(self.reshape(v.base, (B, X, Y * D), node.name), (B, Y, X, D), heads=True)
    perm = list(range(len(v.shape)))
    perm[dims[0]], perm[dims[1]] = perm[dims[1]], perm[dims[0]]
    return permute(self, node, v, perm)


def lower_permute(self, node):
    v = self.tensor(node.args[0])
    perm = [d % len(v.shape) for d in node.args[1]]
    if len(v.shape) == 4 and perm == [0, 2, 1, 3]:
        return lower_transpose_dims(self, node, v)
    return permute(self, node, v, perm)


def lower_transpose_dims(self, node, v):
    B, X, Y, D = v.shape
    if v.heads:
        return View(v.base, (B, Y, X, D))
    return View(self.reshape(v.base, (B, X, Y * D), node.name), (B, Y, X, D), heads=True)


def permute(self, node, v, perm):
    t = self.plain(v, hint=node.name)
    shape = tuple(t.shape[p] for p in perm)
    y = self.emit.op(node.name, shape, f"zc.transpose {t.name} [{', '.join(map(str, perm))}] : {t.type} -> "
                     f"{Tensor('', shape).type}")
    return View(y, shape)


def lower_slice(self, node):
    v = self.tensor(node.args[0])
    dim = node.args[1] % len(v.shape) if len(node.args) > 1 else 0
    start = node.args[2] if len(node.args) > 2 and node.args[2] is not None else 0
    end = node.args[3] if len(node.args) > 3 and node.args[3] is not None else v.shape[dim]
    step = node.args[4] if len(node.args) > 4 else 1
    start, end = slice(start, end).indices(v.shape[dim])[:2]
    if step != 1:
        self.fail(node, "a strided slice")
    if start == 0 and end == v.shape[dim]:
        return v
    return slice_box(self, node, v, dim, start, end - start)


def slice_box(self, node, v, dim, start, size):
    if v.heads and dim == 3:
        return slice_head_channels(self, node, v, start, size)
    t = self.plain(v, hint=node.name)
    offsets = [0] * len(t.shape)
    offsets[dim] = start
    shape = list(t.shape)
    shape[dim] = size
    y = self.emit.op(node.name, shape, f"zc.slice {t.name} [{', '.join(map(str, offsets))}] : {t.type} -> "
                     f"{Tensor('', shape).type}")
    return View(y, shape)


def slice_head_channels(self, node, v, start, size):
    """Channels [start, start + size) of every head of a [B, H, T, D] value (a fused QKV's q, the
    rotary part of a head), kept in the head layout: a slice of the [B, T, H, D] base, no transposes."""
    B, H, T, D = v.shape
    t = self.reshape(v.base, (B, T, H, D), node.name)
    y = self.emit.op(node.name, (B, T, H, size), f"zc.slice {t.name} [0, 0, 0, {start}] : {t.type} -> "
                     f"{Tensor('', (B, T, H, size)).type}")
    return View(self.reshape(y, (B, T, H * size), node.name), (B, H, T, size), heads=True)


def lower_split(self, node):
    """split(x, size | sizes, dim): a list of slices, read by getitem."""
    v = self.tensor(node.args[0])
    sizes = node.args[1]
    dim = (node.args[2] if len(node.args) > 2 else 0) % len(v.shape)
    if isinstance(sizes, int):
        sizes = [min(sizes, v.shape[dim] - s) for s in range(0, v.shape[dim], sizes)]
    return Split(self, node, v, dim, list(sizes))


def lower_chunk(self, node):
    """chunk(x, n, dim): split into pieces of ceil(size / n), as PyTorch does (GPT-NeoX's q/k/v,
    Phi-3's gate/up)."""
    v = self.tensor(node.args[0])
    chunks = node.args[1]
    dim = (node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)) % len(v.shape)
    step = -(-v.shape[dim] // chunks)
    sizes = [min(step, v.shape[dim] - s) for s in range(0, v.shape[dim], step)]
    return Split(self, node, v, dim, sizes)


def lower_unbind(self, node):
    """unbind(x, dim): every index along dim, the axis dropped (a slice of size 1, then a view)."""
    v = self.tensor(node.args[0])
    dim = (node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)) % len(v.shape)
    return Split(self, node, v, dim, [1] * v.shape[dim], drop_axis=True)


class Split:
    """The pieces of a split, chunk or unbind along `dim`, each sliced when an item is read."""

    def __init__(self, lowering, node, v, dim, sizes, drop_axis=False):
        self.lowering, self.node, self.v, self.dim, self.sizes = lowering, node, v, dim, sizes
        self.drop_axis = drop_axis

    def part(self, i, getitem):
        start = sum(self.sizes[:i])
        if self.drop_axis and self.v.heads:  # a head or a position of the head layout: plain first
            self.v = View(self.lowering.plain(self.v, hint=self.node.name), self.v.shape)
        piece = slice_box(self.lowering, getitem, self.v, self.dim, start, self.sizes[i])
        if self.drop_axis:
            shape = piece.shape[:self.dim] + piece.shape[self.dim + 1:]
            return View(piece.base, shape)
        return piece


def lower_getitem(self, node):
    if patterns.is_op(node.args[0], lower_moe.ROUTE_OP):
        return lower_moe.lower_route_item(self, node)
    container = self.value(node.args[0])
    if isinstance(container, Split):
        return container.part(node.args[1], node)
    if isinstance(container, Constant):
        return Constant(container.value[node.args[1]])
    self.fail(node, "an item of a value that is not a split")


def lower_cat(self, node):
    partial = patterns.match_partial_rotary(self, node)
    if partial is not None:
        return partial
    tensors, dim = node.args[0], node.args[1] if len(node.args) > 1 else 0
    dim %= len(tensors[0].meta["val"].shape)
    # Empty pieces (the pass-through part of a rotary over the whole head, Phi-3's) add nothing.
    tensors = [t for t in tensors if t.meta["val"].shape[dim] != 0]
    views = [self.tensor(t) for t in tensors]
    if len(views) == 1:
        return views[0]
    if dim == 3 and all(v.heads for v in views):
        return concat_head_channels(self, node, views)
    parts = [self.plain(v, hint=node.name) for v in views]
    shape = list(parts[0].shape)
    shape[dim] = sum(p.shape[dim] for p in parts)
    types = ", ".join(p.type for p in parts)
    y = self.emit.op(node.name, shape, f"zc.concat {', '.join(p.name for p in parts)} axis {dim} : {types} -> "
                     f"{Tensor('', shape).type}")
    return View(y, shape)


def concat_head_channels(self, node, views):
    """cat([B, H, T, Di]..., -1) of head-layout values (a rotated part and the rest of each head),
    kept in the head layout: a concat of the [B, T, H, Di] bases."""
    B, H, T = views[0].shape[:3]
    parts = [self.reshape(v.base, (B, T, H, v.shape[3]), node.name) for v in views]
    D = sum(p.shape[3] for p in parts)
    types = ", ".join(p.type for p in parts)
    y = self.emit.op(node.name, (B, T, H, D), f"zc.concat {', '.join(p.name for p in parts)} axis 3 : {types} -> "
                     f"{Tensor('', (B, T, H, D)).type}")
    return View(self.reshape(y, (B, T, H * D), node.name), (B, H, T, D), heads=True)


def lower_sdpa(self, node):
    return patterns.attention(self, node)


def lower_cross_entropy(self, node):
    logits, target = node.args[0], node.args[1]
    weight = node.args[2] if len(node.args) > 2 else node.kwargs.get("weight")
    reduction = node.args[3] if len(node.args) > 3 else node.kwargs.get("reduction", 1)
    smoothing = node.args[5] if len(node.args) > 5 else node.kwargs.get("label_smoothing", 0.0)
    if weight is not None or reduction != 1 or smoothing != 0.0:
        self.fail(node, "zc.cross_entropy is the unweighted mean without label smoothing")
    under = patterns.strip(logits)
    while patterns.is_op(under, aten.view.default) or patterns.is_op(under, aten.reshape.default) \
            or patterns.is_op(under, aten._unsafe_view.default):
        under = patterns.strip(under.args[0])
    # Gemma 2's final_logit_softcapping, C tanh(logits / C): the loss caps the logits as it reads
    # them (zc.cross_entropy softcap C), so the fused LM head still never holds them whole.
    capped = patterns.soft_capped(under)
    attrs = ""
    if capped is not None:
        logits, cap = capped
        attrs = f" softcap {patterns.number(cap)}"
    lv, tv = self.tensor(logits), self.tensor(target)
    if tv.base.dtype != "i32":
        self.fail(node, "cross-entropy targets that are not the batch's targets")
    V = lv.shape[-1]
    labels = tv.base
    shape = labels.shape + (V,)
    lg = self.reshape(self.rows(lv, node.name), shape, node.name) if not lv.heads else self.plain(lv, shape, node.name)
    return self.emit.op("loss", (), f"zc.cross_entropy {lg.name}, {labels.name}{attrs} : {lg.type}, {labels.type} "
                                    "-> tensor<f32>")


def note_role(self, node, role):
    name = self.param_name(node)
    if name is not None:
        self.param_roles.setdefault(name, role)


Lowering.note_role = note_role
Lowering.emit_rmsnorm = emit_rmsnorm

HANDLERS = {
    aten.linear.default: lower_linear,
    aten.addmm.default: lower_addmm,
    aten.mm.default: lower_mm,
    aten.matmul.default: lower_matmul,
    aten.embedding.default: lower_embedding,
    aten.layer_norm.default: lower_layer_norm,
    aten.rms_norm.default: lower_rms_norm,
    aten.silu.default: unary("silu"),
    aten.relu.default: unary("relu"),
    aten.gelu.default: unary("gelu"),
    aten.softmax.int: lower_softmax,
    aten._softmax.default: lower_softmax,
    aten.add.Tensor: binary("add"),
    aten.sub.Tensor: binary("sub"),
    aten.mul.Tensor: binary("mul"),
    aten.div.Tensor: binary("div"),
    aten.transpose.int: lower_transpose,
    aten.permute.default: lower_permute,
    aten.slice.Tensor: lower_slice,
    aten.split.Tensor: lower_split,
    aten.split_with_sizes.default: lower_split,
    aten.chunk.default: lower_chunk,
    aten.unbind.int: lower_unbind,
    operator.getitem: lower_getitem,
    aten.cat.default: lower_cat,
    aten.scaled_dot_product_attention.default: lower_sdpa,
    aten.cross_entropy_loss.default: lower_cross_entropy,
    torch.ops.zcc.moe_experts.default: lower_moe.lower_moe_experts,
    torch.ops.zcc.load_balancing_loss.default: lower_moe.lower_balancing_loss,
    torch.ops.zcc.moe_route.default: lower_moe.lower_route,
}

# The router's ops are read by lower_moe.router from the experts they feed.
ROUTER_ONLY = {aten.topk.default, aten.sum.dim_IntList, aten.div_.Tensor}
KNOWN = set(HANDLERS) | IDENTITY | RESHAPES | set(PATTERN_ONLY) | ROUTER_ONLY | {aten.t.default}

# What the importer maps (zcc-import --list-ops prints it; the README lists it).
MAPPED = {
    "aten.linear": "zc.matmul ... transpose_rhs (+ zc.bias_add)",
    "aten.addmm / aten.mm / aten.matmul (by a parameter)": "zc.matmul (+ zc.bias_add)",
    "aten.embedding": "zc.embedding (token ids) or zc.slice (constant positions)",
    "aten.layer_norm": "zc.layernorm",
    "aten.rms_norm, and x * rsqrt(mean(x^2) + eps) * g": "zc.rmsnorm",
    "x * cos + rotate_half(x) * sin (folded tables)": "zc.rotary",
    "aten.scaled_dot_product_attention (causal mask, repeat_kv / enable_gqa)": "zc.causal_attention",
    "softmax(masked_fill(q @ k^T / sqrt(D), ~causal, -inf)) @ v": "zc.causal_attention",
    "aten.silu / aten.relu / aten.gelu(tanh), GPT-2's gelu_new": "zc.silu / zc.relu / zc.gelu",
    "aten.gelu (exact, PyTorch's default: Pythia's gelu)": "zc.gelu ... exact",
    "aten.softmax (last axis)": "zc.softmax",
    "aten.add / sub / mul (same shape)": "zc.add / zc.sub / zc.mul",
    "aten.add broadcast over leading axes": "zc.bias_add",
    "aten.mul / div by a scalar": "zc.scale",
    "aten.view / reshape / unsqueeze / squeeze / flatten": "nothing (a view), or zc.reshape",
    "aten.transpose / permute": "nothing (attention's head layout), or zc.transpose",
    "aten.slice / split / chunk / unbind / cat": "zc.slice / zc.concat",
    "aten.cross_entropy_loss (mean)": "zc.cross_entropy",
    "a MoE block: softmax top-k router (renormalized or not) + SwiGLU experts [E, 2F, C], [E, C, F]":
        "zc.moe_route, moe_dispatch, grouped_matmul, moe_combine",
    "DeepSeek-V3's router (sigmoid, group-limited top-k, e_score_correction_bias, routed scale), checked on "
    "probe weights": "zc.matmul + zc.moe_route ... bias %b sigmoid scale S groups G topk_groups M",
    "Hugging Face's load_balancing_loss_func (output_router_logits)": "zc.moe_aux_loss over every layer's tokens",
    "sigmoid(x @ w[1, C]) * shared (Qwen2-MoE's shared expert gate)": "zc.moe_shared_gate",
    "aten.dropout (p = 0), to(float32), contiguous, clone, alias, detach": "nothing",
    "ops on constants only (arange, masks, rotary tables)": "folded at import",
}
