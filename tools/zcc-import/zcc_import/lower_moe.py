"""Mixture-of-experts layers -> zc.moe_route, moe_dispatch, grouped_matmul, moe_combine, moe_aux_loss.

The capture (moe.py) leaves each family's experts as one `zcc::moe_experts` node and its pooled
load-balancing loss as one `zcc::load_balancing_loss` node; the router before them is ATen. The
lowering reads the routing rule back from the router's ops, Hugging Face's top-k router:

    logits = linear(x, gate.weight)                 [N, E]
    probs = softmax(logits, -1)                     (f32 casts pass)
    top_value, top_index = topk(probs, k, -1)
    top_value /= top_value.sum(-1, keepdim=True)    only with norm_topk_prob (Mixtral always)

and writes the layer as zc's:

    %w, %experts, %rows, %offsets = zc.moe_route %logits top_k k [normalize]
    %xs = zc.moe_dispatch %x, %rows
    %gu = zc.grouped_matmul %xs, %gate_up_proj, %offsets transpose_rhs    [R, 2F]: gate, then up
    %ys = zc.grouped_matmul (act(gate) * up), %down_proj, %offsets transpose_rhs
    %y  = zc.moe_combine %ys, %w, %rows

DeepSeek-V3's router arrives as one `zcc::moe_route` node (moe.py, its rule checked there) and is
written as its linear and the routing: `zc.moe_route %logits bias %b : tensor<Exf32> top_k k
sigmoid [normalize] scale S groups G topk_groups M` (the bias a parameter; groups only when more
than one).

Hugging Face keeps each expert's weights as a linear layer's, `[E, out, in]`, which the grouped
product reads as they are (`transpose_rhs`); the parameters keep the model's names and shapes, for
the checkpoint's way back. A router that is not this rule is refused with its line.
"""
import operator
from typing import NamedTuple

import torch

from . import moe, patterns  # moe: registers the zcc:: ops this lowers
from .mlir import Tensor, number
from .values import View

aten = torch.ops.aten
SOFTMAX = (aten.softmax.int, aten._softmax.default)
DIVIDE = (aten.div.Tensor, aten.div_.Tensor)


def is_getitem(node, index):
    return (isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target is operator.getitem
            and node.args[1] == index)


def last_axis(dim, rank):
    return dim % rank == rank - 1


class Rule(NamedTuple):
    """A router's rule, as zc.moe_route's attributes; `logits` is the node whose value is the
    router logits, `bias` the balancing bias's parameter node (or None)."""
    logits: torch.fx.Node
    k: int
    normalize: bool
    sigmoid: bool = False
    scale: float = 1.0
    groups: int = 1
    topk_groups: int = 1
    bias: torch.fx.Node = None


ROUTE_OP = torch.ops.zcc.moe_route.default


def router(self, node, index_node, weights_node):
    """The Rule of the router that chose `index_node` and weighed the choices `weights_node`: a
    checked DeepSeek-V3 router (zcc::moe_route) or Hugging Face's softmax top-k router read from its
    ATen ops; otherwise an error naming the part that is not either rule."""
    what = "a MoE router the importer does not recognize"
    index = patterns.strip(index_node)
    if is_getitem(index, 2) and patterns.is_op(index.args[0], ROUTE_OP):
        route, weights = index.args[0], patterns.strip(weights_node)
        if not (is_getitem(weights, 1) and weights.args[0] is route):
            self.fail(node, f"{what}: the experts' weights are not those of the router that chose them")
        _, _, bias, k, groups, topk_groups, normalize, scale = route.args
        return Rule(route, k, normalize, True, scale, groups, topk_groups, bias)
    if not is_getitem(index, 1) or not patterns.is_op(index.args[0], aten.topk.default):
        self.fail(node, f"{what}: the experts' choices are not a topk's indices")
    topk = index.args[0]
    probs = patterns.strip(topk.args[0])
    k = topk.args[1]
    dim = topk.args[2] if len(topk.args) > 2 else topk.kwargs.get("dim", -1)
    largest = topk.args[3] if len(topk.args) > 3 else topk.kwargs.get("largest", True)
    if not largest or not last_axis(dim, len(topk.args[0].meta["val"].shape)):
        self.fail(node, f"{what}: a topk that is not the largest over the experts' axis")
    if not any(patterns.is_op(probs, t) for t in SOFTMAX) or not last_axis(probs.args[1], len(probs.meta["val"].shape)):
        self.fail(node, f"{what}: the choices are not a top-k of a softmax over the experts "
                        f"(zc's router: softmax scores; sigmoid scores and group-limited routing are not imported yet)")
    logits = probs.args[0]
    weights = patterns.strip(weights_node)
    normalize = False
    if any(patterns.is_op(weights, t) for t in DIVIDE):
        top, total = patterns.strip(weights.args[0]), patterns.strip(weights.args[1])
        if not (patterns.is_op(total, aten.sum.dim_IntList) and patterns.strip(total.args[0]) is top
                and len(total.args[1]) == 1 and last_axis(total.args[1][0], len(top.meta["val"].shape))
                and (total.args[2] if len(total.args) > 2 else total.kwargs.get("keepdim", False))):
            self.fail(node, f"{what}: the choices' weights are divided by something other than their sum")
        normalize, weights = True, top
    if not (is_getitem(weights, 0) and weights.args[0] is topk):
        self.fail(node, f"{what}: the experts' weights are not the topk's values (renormalized or not)")
    return Rule(logits, k, normalize)


def lower_route(self, node):
    """zcc::moe_route's value is its router logits, linear(hidden, weight) in f32: the routing
    itself is written where the experts read it (route)."""
    hidden, weight = node.args[0], node.args[1]
    if patterns.strip(weight) not in self.cap.params:
        self.fail(node, "a MoE router whose weight is not a parameter")
    xv = self.tensor(hidden)
    x = self.rows(xv, node.name)
    w = self.tensor(weight).base
    self.note_role(weight, "weight")
    shape = x.shape[:-1] + (w.shape[0],)
    lg = self.emit.op(node.name + "_logits", shape, f"zc.matmul {x.name}, {w.name} transpose_rhs : {x.type}, {w.type} "
                                                     f"-> {Tensor('', shape).type}")
    return View(lg, xv.shape[:-1] + (w.shape[0],))


def lower_route_item(self, node):
    """An item of zcc::moe_route: the logits (item 0) are a tensor like any; its choices and
    weights are read by the experts they route (lower_moe_experts), nothing else."""
    if node.args[1] == 0:
        return self.value(node.args[0])
    self.fail(node, "a MoE router's choices or weights read by something other than the experts they route: "
                    "zc's routing hands them to the experts only")


def logits_base(self, node, logits_node):
    """The router logits as zc's [B, T, E] tensor (the batch axis first, as the routing splits)."""
    lg = self.rows(self.tensor(logits_node), node.name)
    if len(lg.shape) < 2:
        self.fail(node, "router logits without a batch axis")
    return lg


def route(self, node, lg, rule):
    """zc.moe_route: (weights, experts, rows, offsets)."""
    k = rule.k
    E = lg.shape[-1]
    lead = lg.shape[:-1]
    fresh = lambda part: self.emit.fresh(f"{node.name}_{part}")
    weights = Tensor(fresh("w"), lead + (k,))
    experts, rows = Tensor(fresh("experts"), lead + (k,), "i32"), Tensor(fresh("rows"), lead + (k,), "i32")
    offsets = Tensor(fresh("offsets"), (E + 1,), "i32")
    results = (weights, experts, rows, offsets)
    bias = ""
    if rule.bias is not None:
        b = self.tensor(rule.bias).base
        if patterns.strip(rule.bias) not in self.cap.params or b.shape != (E,):
            self.fail(node, f"a MoE router's balancing bias that is not a [{E}] parameter")
        self.note_role(rule.bias, "bias")
        bias = f" bias {b.name} : {b.type}"
    flags = " sigmoid" if rule.sigmoid else ""
    flags += " normalize" if rule.normalize else ""
    flags += f" scale {number(rule.scale)}" if rule.scale != 1.0 else ""
    flags += f" groups {rule.groups} topk_groups {rule.topk_groups}" if rule.groups > 1 else ""
    self.emit.raw(f"{', '.join(t.name for t in results)} = zc.moe_route {lg.name}{bias} top_k {k}{flags} : {lg.type} -> "
                  f"{', '.join(t.type for t in results)}")
    self.routes[lg.name] = (k, experts)
    return weights, experts, rows, offsets


def experts_weight(self, param_node):
    """An experts' weight [E, out, in] (Hugging Face's), which the grouped product reads transposed."""
    self.note_role(param_node, "weight")
    return self.tensor(param_node).base


def grouped(self, hint, xs, w, offsets):
    """Each expert's rows times its [out, in] weight, read transposed."""
    shape = (xs.shape[0], w.shape[1])
    return self.emit.op(hint, shape, f"zc.grouped_matmul {xs.name}, {w.name}, {offsets.name} transpose_rhs : "
                                     f"{xs.type}, {w.type}, {offsets.type} -> {Tensor('', shape).type}")


def lower_moe_experts(self, node):
    hidden, index, weights_node, gate_up, down, act = node.args
    rule = router(self, node, index, weights_node)
    for p in (gate_up, down):
        if patterns.strip(p) not in self.cap.params:
            self.fail(node, "MoE experts whose weights are not parameters")
    xv = self.tensor(hidden)
    x = self.rows(xv, node.name)
    lg = logits_base(self, node, rule.logits)
    if lg.shape[:-1] != x.shape[:-1]:
        self.fail(node, f"router logits {list(lg.shape)} for tokens {list(x.shape)}: not the experts' tokens")
    w, _, rows, offsets = route(self, node, lg, rule)
    k = rule.k
    R = x.numel() // x.shape[-1] * k  # dropless: every token's k choices
    C = x.shape[-1]
    xs = self.emit.op(node.name + "_xs", (R, C), f"zc.moe_dispatch {x.name}, {rows.name} : {x.type}, {rows.type} -> "
                                                 f"{Tensor('', (R, C)).type}")
    gu = grouped(self, node.name + "_gate_up", xs, experts_weight(self, gate_up), offsets)
    F = gu.shape[1] // 2
    gate = self.emit.op(node.name + "_gate", (R, F), f"zc.slice {gu.name} [0, 0] : {gu.type} -> "
                                                     f"{Tensor('', (R, F)).type}")
    up = self.emit.op(node.name + "_up", (R, F), f"zc.slice {gu.name} [0, {F}] : {gu.type} -> "
                                                 f"{Tensor('', (R, F)).type}")
    a = self.emit.op(node.name + "_act", (R, F), f"zc.{act} {gate.name} : {gate.type}")
    h = self.emit.op(node.name + "_glu", (R, F), f"zc.mul {a.name}, {up.name} : {a.type}")
    ys = grouped(self, node.name + "_down", h, experts_weight(self, down), offsets)
    y = self.emit.op(node.name, x.shape, f"zc.moe_combine {ys.name}, {w.name}, {rows.name} : {ys.type}, {w.type}, "
                                         f"{rows.type} -> {x.type}")
    return View(y, xv.shape)


def balancing_loss(self, node, coef):
    """Hugging Face's load_balancing_loss_func over every layer's tokens pooled, times `coef`:
    zc.moe_aux_loss of the layers' logits and choices joined along the tokens (axis 1, so the
    batch axis still splits over data-parallel ranks). Its f_e is a fraction of the choices, Hugging
    Face's a count per token summed over the k: coef x k."""
    logits_nodes, E, k = node.args
    rules = {n: router(self, n, n.args[1], n.args[2]) for n in self.cap.graph.nodes
             if patterns.is_op(n, torch.ops.zcc.moe_experts.default)}
    layers = {patterns.strip(rule.logits): n for n, rule in rules.items()}
    logits, experts = [], []
    for n in logits_nodes:
        layer = layers.get(patterns.strip(n))
        if layer is None:
            self.fail(node, "a load-balancing loss over logits that route no MoE layer")
        if rules[layer].sigmoid:
            self.fail(node, "a softmax load-balancing loss over a sigmoid router's logits (DeepSeek-V3 balances "
                            "with its bias instead): zc.moe_aux_loss scores by softmax")
        self.value(layer)  # its route: the choices the loss counts
        lg = logits_base(self, node, n)
        routed_k, choices = self.routes[lg.name]
        if lg.shape[-1] != E or len(lg.shape) != 3 or routed_k != k:
            self.fail(node, f"router logits {list(lg.shape)} routed top {routed_k}: the load-balancing loss pools "
                            f"[batch, tokens, {E}] logits routed top {k}")
        logits.append(lg)
        experts.append(choices)
    pooled_logits = join(self, node.name + "_logits", logits)
    pooled_experts = join(self, node.name + "_experts", experts)
    return self.emit.op(node.name, (), f"zc.moe_aux_loss {pooled_logits.name}, {pooled_experts.name} coef "
                                       f"{number(coef * k)} : {pooled_logits.type}, {pooled_experts.type} -> tensor<f32>")


def join(self, hint, tensors):
    if len(tensors) == 1:
        return tensors[0]
    B, _, last = tensors[0].shape
    shape = (B, sum(t.shape[1] for t in tensors), last)
    types = ", ".join(t.type for t in tensors)
    dtype = tensors[0].dtype
    return self.emit.op(hint, shape, f"zc.concat {', '.join(t.name for t in tensors)} axis 1 : {types} -> "
                                     f"{Tensor('', shape, dtype).type}", dtype)


def lower_balancing_loss(self, node):
    return balancing_loss(self, node, 1.0)


def match_scaled_balancing_loss(self, node):
    """router_aux_loss_coef x load_balancing_loss: the coefficient folded into the op."""
    a, b = node.args[0], node.args[1]
    for loss, scale in ((a, b), (b, a)):
        loss = patterns.strip(loss)
        if patterns.is_op(loss, torch.ops.zcc.load_balancing_loss.default) and isinstance(scale, (int, float)):
            return balancing_loss(self, loss, float(scale))
    return None


def match_shared_gate(self, node):
    """sigmoid(gate) * shared, one gate logit per token ([..., 1]) scaling the token's shared
    expert output (Qwen2-MoE's shared_expert_gate): zc.moe_shared_gate."""
    a, b = node.args[0], node.args[1]
    for gate, shared in ((a, b), (b, a)):
        gate = patterns.strip(gate)
        if not patterns.is_op(gate, aten.sigmoid.default) or not isinstance(shared, torch.fx.Node):
            continue
        sv, gv = self.tensor(shared), self.tensor(gate.args[0])
        if tuple(gv.shape) != tuple(sv.shape[:-1]) + (1,):
            self.fail(node, f"a sigmoid gate {list(gv.shape)} of {list(sv.shape)}: zc's shared-expert gate is one "
                            f"logit per token")
        x, g = self.rows(sv, node.name), self.rows(gv, node.name)
        if g.shape != x.shape[:-1] + (1,):
            g = self.reshape(g, x.shape[:-1] + (1,), node.name)
        y = self.emit.op(node.name, x.shape, f"zc.moe_shared_gate {x.name}, {g.name} : {x.type}, {g.type}")
        return View(y, sv.shape)
    return None


def match_loss_sum(self, node):
    """The model's losses added (the cross-entropy and a load-balancing loss): zc.add of 0-d f32."""
    a, b = (self.value(x) if isinstance(x, torch.fx.Node) else None for x in node.args[:2])
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.shape == b.shape == ():
        return self.emit.op("loss", (), f"zc.add {a.name}, {b.name} : tensor<f32>")
    return None
