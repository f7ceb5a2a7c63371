"""forward + loss -> an ATen graph (torch.export), with every batch-independent value folded.

The export runs on meta tensors (parameters, buffers and the token batch): shapes only. The values a
forward computes without looking at the batch or the parameters (the rotary cos/sin tables from the
inverse frequencies, the causal mask from aranges) are then evaluated for real on the CPU, from the
real buffers kept aside: the lowering matches them against zc's built-in rotary and causal attention.
"""
import os
import re

import torch

from . import moe
from .source import CausalLMLoss, ImportError_, located

# Ops that read only the shape/dtype of their tensor input: their result folds even when the
# input is the batch.
SHAPE_ONLY = {
    torch.ops.aten.new_ones.default, torch.ops.aten.new_zeros.default, torch.ops.aten.new_empty.default,
    torch.ops.aten.new_full.default, torch.ops.aten.ones_like.default, torch.ops.aten.zeros_like.default,
    torch.ops.aten.empty_like.default, torch.ops.aten.full_like.default, torch.ops.aten.sym_size.int,
}


class Captured:
    """The exported graph and what the lowering needs to read it.

    params:    placeholder node -> canonical parameter name (the model's state_dict name)
    inputs:    placeholder node -> "tokens" | "targets"
    constants: node -> real CPU value (folded)
    """

    def __init__(self, graph, params, inputs, constants, param_shapes):
        self.graph, self.params, self.inputs, self.constants = graph, params, inputs, constants
        self.param_shapes = param_shapes


# Batch-independent values are folded on an export at this batch: the ones at the real batch can be
# large (Hugging Face builds the causal mask through index ops on [B, 1, T, T] int64 tensors: 34 GB at
# batch 64 x 8192), and what the lowering reads from them (rotary tables, the mask's pattern) is the
# same for every sequence. 2, not 1: export specializes dimensions of size 1.
FOLD_BATCH = 2


def refuse_latent_attention(model, label):
    """DeepSeek-V2/V3's multi-head latent attention (MLA) has no zc form yet: its value heads are
    narrower than its query/key heads, its rotary key is one head broadcast over all and joined to
    each head's own part, its rotary interleaved. Refused by name before the export, rather than at
    the first of its ops the lowering cannot map."""
    for name, module in model.named_modules():
        if hasattr(module, "kv_lora_rank") and hasattr(module, "kv_a_proj_with_mqa"):
            raise ImportError_(f"{label}: {name} ({type(module).__name__}) is multi-head latent attention (MLA: "
                               f"kv_lora_rank {module.kv_lora_rank}, qk_rope_head_dim "
                               f"{getattr(module, 'qk_rope_head_dim', '?')}, v_head_dim "
                               f"{getattr(module, 'v_head_dim', '?')}), which zc has no form for yet; its MoE block "
                               f"imports beside an attention zc has (--module: docs/import.md)")


def export(source, model, batch, context):
    wrapper = CausalLMLoss(source, model).train()
    tokens = torch.zeros(batch, context, dtype=torch.long, device="meta")
    targets = torch.zeros(batch, context, dtype=torch.long, device="meta")
    with located("torch.export could not capture the model's forward"):
        return torch.export.export(wrapper, (tokens, targets), strict=False)


def input_values(exported, real_buffers):
    """placeholder node -> real value, for the export's buffers and lifted constants."""
    placeholders = {n.name: n for n in exported.graph.nodes if n.op == "placeholder"}
    values = {}
    for spec in exported.graph_signature.input_specs:
        node = placeholders[spec.arg.name]
        if spec.kind.name == "BUFFER":
            values[node] = real_buffers[strip_prefix(spec.target)]
        elif spec.kind.name == "CONSTANT_TENSOR":
            value = exported.constants[spec.target]
            if value.device.type != "meta":
                values[node] = value
    return values


def capture(source, model, batch, context):
    refuse_latent_attention(model, source.label)
    # DeepSeek-V3's routers as leaf ops, their balancing biases parameters (moe.py), while the
    # buffers are still real.
    moe.leaf_routers(model, source.label)
    # The real buffers, by fully qualified name; the export sees them on meta like the rest.
    real_buffers = {name: b.detach().clone() for name, b in model.named_buffers(remove_duplicate=False)}
    model.to("meta")
    # MoE experts and the load-balancing loss as leaf ops (moe.py); the model is the skeleton's.
    moe.leaf_experts(model, source.label)
    restore = moe.leaf_balancing_loss(model)
    try:
        exported = export(source, model, batch, context)
        constants = folded_at_small_batch(source, model, exported, batch, context, real_buffers)
    finally:
        if restore:
            restore()

    canonical = {}
    first = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        canonical[name] = first.setdefault(id(p), name)
    graph = exported.graph_module.graph
    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    params, inputs, shapes = {}, {}, {}
    for spec in exported.graph_signature.input_specs:
        node = placeholders[spec.arg.name]
        if spec.kind.name == "PARAMETER":
            name = canonical[strip_prefix(spec.target)]
            params[node] = name
            shapes[name] = tuple(node.meta["val"].shape)
        elif spec.kind.name == "USER_INPUT":
            inputs[node] = "tokens" if not inputs else "targets"
    if constants is None:
        constants = input_values(exported, real_buffers)
        fold(exported.graph_module, graph, constants)
    return Captured(graph, params, inputs, constants, shapes)


def folded_at_small_batch(source, model, exported, batch, context, real_buffers):
    """The folded values of a FOLD_BATCH export, by node of `exported`; None when the batch is
    small already or the two graphs differ in more than shapes (then fold the real one)."""
    if batch <= FOLD_BATCH:
        return None
    small = export(source, model, FOLD_BATCH, context)
    big_nodes, small_nodes = list(exported.graph.nodes), list(small.graph.nodes)
    if len(big_nodes) != len(small_nodes) or any(a.name != b.name or a.op != b.op or a.target != b.target
                                                 for a, b in zip(big_nodes, small_nodes)):
        return None
    values = input_values(small, real_buffers)
    fold(small.graph_module, small.graph, values)
    by_name = {n.name: v for n, v in values.items()}
    return {n: by_name[n.name] for n in big_nodes if n.name in by_name}


def strip_prefix(target):
    return target[len("model."):] if target.startswith("model.") else target


def fold(graph_module, graph, constants):
    """Evaluates, in graph order, every node whose tensor inputs are all folded already."""
    for node in graph.nodes:
        if node.op == "get_attr":
            constants[node] = on_cpu(getattr(graph_module, node.target))
            continue
        if node.op != "call_function" or node in constants:
            continue
        args, kwargs = node.args, node.kwargs
        if node.target in SHAPE_ONLY and isinstance(args[0], torch.fx.Node) and args[0] not in constants:
            val = args[0].meta["val"]
            args = (torch.zeros(val.shape, dtype=val.dtype),) + tuple(args[1:])
        ok = True

        def real(a):
            nonlocal ok
            if isinstance(a, torch.fx.Node):
                if a not in constants:
                    ok = False
                    return None
                return constants[a]
            if isinstance(a, torch.device) and a.type == "meta":
                return torch.device("cpu")
            if isinstance(a, (list, tuple)):
                return type(a)(real(x) for x in a)
            return a

        args = tuple(real(a) for a in args)
        kwargs = {k: real(v) for k, v in kwargs.items()}
        if not ok or node.target is torch.ops.aten._assert_tensor_metadata.default:
            continue
        try:
            with torch.no_grad():
                constants[node] = node.target(*args, **kwargs)
        except Exception as e:
            if os.environ.get("ZCC_IMPORT_DEBUG"):
                print(f"fold {node.name}: {type(e).__name__}: {e}")
            continue  # not foldable (e.g. an op with side effects): the lowering decides


def on_cpu(sub):
    """A sub-graph (a higher-order op's body) traced on meta, rewritten to run on the CPU."""
    if isinstance(sub, torch.fx.GraphModule):
        def cpu(a):
            return torch.device("cpu") if isinstance(a, torch.device) and a.type == "meta" else a
        for n in sub.graph.nodes:
            n.args = tuple(cpu(a) for a in n.args)
            n.kwargs = {k: cpu(v) for k, v in n.kwargs.items()}
        sub.recompile()
    return sub


FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)')
TORCH_DIR = os.path.dirname(torch.__file__)
# The importer's own frames (the wrapper's loss, moe.py's leaf experts) say nothing about the model.
IMPORTER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def source_line(node):
    """(file, line, code) of the innermost frame outside PyTorch that produced the node, or None."""
    trace = node.meta.get("stack_trace") or ""
    frames = FRAME.findall(trace)
    for path, line, _, code in reversed(frames):
        if not path.startswith((TORCH_DIR, IMPORTER_DIR)):
            return short_path(path), int(line), code.strip()
    return None


def short_path(path):
    """A library file by its path inside site-packages (transformers/models/...), a user's relative
    to the working directory when under it."""
    marker = os.sep + "site-packages" + os.sep
    if marker in path:
        return path.split(marker, 1)[1]
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path
