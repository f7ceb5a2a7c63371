"""Mixture-of-experts layers through torch.export: the experts and the load-balancing loss as leaf ops.

Hugging Face's MoE families (Mixtral, Qwen2/3-MoE, OLMoE, DeepSeek-V3) run their experts as a loop
over the experts a batch reached (`nonzero`, `where`, `index_add_`): data-dependent shapes that
torch.export cannot trace, and that zc writes as one routing and three grouped products. So, before
the export, each experts module's forward becomes one custom op, `zcc::moe_experts(hidden, top_k_index,
top_k_weights, gate_up_proj, down_proj, act)`, and the family's `load_balancing_loss_func` becomes
`zcc::load_balancing_loss(router_logits, num_experts, top_k)`. A softmax router (its linear,
softmax, top-k and renormalization) is traced as it is: the lowering reads the routing rule from those
ATen ops (lower_moe.py), so a family whose router differs is refused there, by its line.

DeepSeek-V3's router (sigmoid scores, group-limited top-k, the balancing bias that only chooses, the
routed scaling factor) is written with a scatter into a group mask, a masked fill and a gather, which
zc has no ops for: it is one rule, zc.moe_route's. So its module becomes one custom op too,
`zcc::moe_route(hidden, weight, bias, top_k, groups, topk_groups, normalize, scale)`, but only
after its own forward has been run on probe weights and agreed with that rule (check_router): a
router that merely looks like DeepSeek-V3's (same attributes, another rule) is refused, not
mis-imported. Its bias (`e_score_correction_bias`, a buffer in Hugging Face, which the capture would
fold as a constant) becomes a parameter under the same state_dict name, so that zc trains it as
DeepSeek-V3 does (moved by the loads after each step, no gradient) and the checkpoint's way back
still loads.

An experts module is recognized by what it holds, not by its class name: the 3-D parameters
`gate_up_proj` `[E, 2F, C]` and `down_proj` `[E, C, F]` and an `act_fn` (transformers 5's layout for
every MoE family above).
"""
import sys

import torch
import torch.nn as nn

from .source import ImportError_

# transformers' experts layout flags (integrations/moe.py, use_experts_implementation) and the values
# the lowering reads: [gate; up] concatenated, each [out, in], no biases, a gate, no norm after.
LAYOUT = {"is_concatenated": True, "is_transposed": False, "has_bias": False, "has_gate": True,
          "has_post_expert_norm": False}
# The activations zc has for the experts' gate (the families use SiLU).
ACTIVATIONS = {"silu": torch.nn.functional.silu}


@torch.library.custom_op("zcc::moe_experts", mutates_args=())
def moe_experts(hidden: torch.Tensor, top_k_index: torch.Tensor, top_k_weights: torch.Tensor,
                gate_up_proj: torch.Tensor, down_proj: torch.Tensor, act: str) -> torch.Tensor:
    """Each token's top-k experts' SwiGLU outputs, weighted and summed: [N, C] -> [N, C]. The eager
    form of Hugging Face's experts loop (what the op means; the export never runs it)."""
    out = torch.zeros_like(hidden)
    for expert in range(gate_up_proj.shape[0]):
        token, choice = torch.where(top_k_index == expert)
        if token.numel() == 0:
            continue
        gate, up = nn.functional.linear(hidden[token], gate_up_proj[expert]).chunk(2, dim=-1)
        y = nn.functional.linear(ACTIVATIONS[act](gate) * up, down_proj[expert])
        out.index_add_(0, token, y * top_k_weights[token, choice, None])
    return out


@moe_experts.register_fake
def _(hidden, top_k_index, top_k_weights, gate_up_proj, down_proj, act):
    return torch.empty_like(hidden)


@torch.library.custom_op("zcc::load_balancing_loss", mutates_args=())
def load_balancing_loss(router_logits: list[torch.Tensor], num_experts: int, top_k: int) -> torch.Tensor:
    """Hugging Face's load_balancing_loss_func without an attention mask: over every layer's tokens
    pooled, num_experts x sum_e (expert e's share of the top-k choices, summed over the k) x (its mean
    softmax score)."""
    logits = torch.cat(list(router_logits), dim=0)
    scores = torch.softmax(logits.float(), dim=-1)
    chosen = torch.topk(scores, top_k, dim=-1).indices
    counts = torch.nn.functional.one_hot(chosen, num_experts).float().sum(dim=(0, 1))
    return (counts / logits.shape[0] * scores.mean(dim=0)).sum() * num_experts


@load_balancing_loss.register_fake
def _(router_logits, num_experts, top_k):
    return router_logits[0].new_empty(())


@torch.library.custom_op("zcc::moe_route", mutates_args=())
def moe_route(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, top_k: int, groups: int,
              topk_groups: int, normalize: bool, scale: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """zc.moe_route's sigmoid rule on [N, C] tokens: (router logits [N, E] in f32, the chosen
    experts' weights [N, k], their ids [N, k] int64, by descending score + bias). A group's score is
    the sum of its two best; a token chooses among its topk_groups best groups' experts."""
    logits = nn.functional.linear(hidden.float(), weight.float())
    scores = logits.sigmoid()
    key = scores + bias
    tokens, experts = key.shape
    if groups > 1:
        per_group = experts // groups
        group_scores = key.view(tokens, groups, per_group).topk(2, dim=-1).values.sum(dim=-1)
        kept = group_scores.topk(topk_groups, dim=-1).indices
        mask = torch.zeros(tokens, groups, dtype=torch.bool, device=key.device).scatter(1, kept, True)
        key = key.masked_fill(~mask.repeat_interleave(per_group, dim=1), float("-inf"))
    chosen = key.topk(top_k, dim=-1).indices
    weights = scores.gather(1, chosen)
    if normalize:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return logits, weights * scale, chosen


@moe_route.register_fake
def _(hidden, weight, bias, top_k, groups, topk_groups, normalize, scale):
    tokens, experts = hidden.shape[0], weight.shape[0]
    return (hidden.new_empty(tokens, experts, dtype=torch.float32), hidden.new_empty(tokens, top_k),
            hidden.new_empty(tokens, top_k, dtype=torch.long))


# DeepSeek-V3's router (transformers' DeepseekV3TopkRouter; GLM-4-MoE's has the same form): what it
# holds besides `weight` [E, C], and the attribute names of its rule.
ROUTER_BIAS = "e_score_correction_bias"
ROUTER_RULE = {"top_k": ("top_k",), "groups": ("num_group", "n_group"), "topk_groups": ("topk_group",),
               "normalize": ("norm_topk_prob",), "scale": ("routed_scaling_factor",)}


def is_biased_router(module):
    weight = dict(module.named_parameters(recurse=False)).get("weight")
    bias = getattr(module, ROUTER_BIAS, None)
    return (isinstance(bias, torch.Tensor) and weight is not None and weight.dim() == 2 and bias.dim() == 1
            and bias.shape[0] == weight.shape[0])


def router_rule(module, name, label):
    """{top_k, groups, topk_groups, normalize, scale} read off a biased router, or a refusal
    naming what it lacks."""
    rule = {}
    for key, names in ROUTER_RULE.items():
        found = [getattr(module, n) for n in names if hasattr(module, n)]
        if not found:
            raise ImportError_(f"{label}: {name} ({type(module).__name__}) chooses experts with a balancing bias "
                               f"({ROUTER_BIAS}) but has no {' or '.join(names)}: the importer reads DeepSeek-V3's "
                               f"router rule (sigmoid, group-limited top-k, routed scale) from those")
        rule[key] = found[0]
    experts = module.weight.shape[0]
    rule = {"top_k": int(rule["top_k"]), "groups": int(rule["groups"] or 1),
            "topk_groups": int(rule["topk_groups"] or 1), "normalize": bool(rule["normalize"]),
            "scale": float(rule["scale"] if rule["scale"] is not None else 1.0)}
    G, M, k = rule["groups"], rule["topk_groups"], rule["top_k"]
    if experts % G or (G > 1 and experts // G < 2) or not 1 <= M <= G or k > M * (experts // G):
        raise ImportError_(f"{label}: {name}: {experts} experts in {G} groups, top {k} of the best {M}: zc's "
                           f"group-limited routing needs groups of 2 or more experts and top_k within the kept groups")
    return rule


def check_router(module, name, label, rule):
    """Runs the router's own forward on probe weights (the model is on meta) and compares it with
    zc's rule: the same logits, the same experts chosen (as sets: Hugging Face's topk is unsorted)
    with the same weights. Refuses on a difference, naming it."""
    experts, hidden = module.weight.shape
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 16, hidden, generator=g)
    w = torch.randn(experts, hidden, generator=g) * hidden ** -0.5
    b = torch.randn(experts, generator=g) * 0.1  # a bias that changes choices: the rule must use it
    with torch.no_grad():
        try:
            out = torch.func.functional_call(module, {"weight": w, ROUTER_BIAS: b}, (x,))
        except Exception as e:
            raise ImportError_(f"{label}: {name} ({type(module).__name__}): its forward failed on probe weights "
                               f"({type(e).__name__}: {e}); the importer checks a biased router's rule by running it")
        want = moe_route(x.view(-1, hidden), w, b, rule["top_k"], rule["groups"], rule["topk_groups"],
                         rule["normalize"], rule["scale"])
    what = f"{label}: {name} ({type(module).__name__}) is not DeepSeek-V3's routing rule (zc.moe_route sigmoid"
    if not isinstance(out, tuple) or len(out) != 3:
        raise ImportError_(f"{what}): its forward does not return (router_logits, weights, indices)")
    logits, weights, chosen = out
    if tuple(logits.shape) != tuple(want[0].shape) or not torch.allclose(logits.float(), want[0], rtol=1e-5, atol=1e-6):
        raise ImportError_(f"{what}): its logits are not linear(hidden, weight) in f32")
    if tuple(chosen.shape) != tuple(want[2].shape):
        raise ImportError_(f"{what}): it chooses {list(chosen.shape)} experts, zc's rule {list(want[2].shape)}")
    order, want_order = chosen.long().sort(dim=-1), want[2].sort(dim=-1)
    if not torch.equal(order.values, want_order.values):
        raise ImportError_(f"{what}, top {rule['top_k']} of sigmoid + {ROUTER_BIAS} within the best "
                           f"{rule['topk_groups']} of {rule['groups']} groups): it chooses other experts")
    got_w = weights.float().gather(1, order.indices)
    want_w = want[1].gather(1, want_order.indices)
    if not torch.allclose(got_w, want_w, rtol=1e-5, atol=1e-7):
        raise ImportError_(f"{what}{' normalize' if rule['normalize'] else ''} scale {rule['scale']:g}): "
                           f"it weighs the chosen experts otherwise")


def leaf_routers(model, label):
    """Each biased router (DeepSeek-V3's) -> zcc::moe_route, once its rule is checked; its bias a
    parameter without gradient under the same name. Returns how many. Before the model moves to
    meta: the bias keeps its value (the checkpoint's)."""
    count = 0
    for name, module in model.named_modules():
        if not is_biased_router(module):
            continue
        rule = router_rule(module, name, label)
        check_router(module, name, label, rule)
        bias = getattr(module, ROUTER_BIAS)
        if ROUTER_BIAS in module._buffers:
            del module._buffers[ROUTER_BIAS]
            module.register_parameter(ROUTER_BIAS, nn.Parameter(bias.detach().float(), requires_grad=False))

        def forward(hidden_states, module=module, rule=rule):
            tokens = hidden_states.reshape(-1, module.weight.shape[1])
            return torch.ops.zcc.moe_route(tokens, module.weight, getattr(module, ROUTER_BIAS), rule["top_k"],
                                           rule["groups"], rule["topk_groups"], rule["normalize"], rule["scale"])
        module.forward = forward
        count += 1
    return count


def is_experts(module):
    params = dict(module.named_parameters(recurse=False))
    gate_up, down = params.get("gate_up_proj"), params.get("down_proj")
    return (gate_up is not None and down is not None and gate_up.dim() == 3 and down.dim() == 3
            and hasattr(module, "act_fn"))


def activation_name(module, label):
    for name, fn in ACTIVATIONS.items():
        act = module.act_fn
        if act is fn or type(act).__name__.lower().startswith(name) or getattr(act, "__name__", "") == name:
            return name
    raise ImportError_(f"{label}: the experts' activation {type(module.act_fn).__name__} has no zc form for "
                       f"the experts (zc's experts gate with {', '.join(ACTIVATIONS)})")


def leaf_experts(model, label):
    """Each experts module's forward -> zcc::moe_experts; returns how many. Refuses the router's
    jitter noise (a random scaling of the router's input while training: zc has no noise)."""
    count = 0
    for name, module in model.named_modules():
        if getattr(module, "jitter_noise", 0):
            raise ImportError_(f"{label}: {name} has router_jitter_noise {module.jitter_noise}: zc's router has "
                               f"no jitter noise; set the config's router_jitter_noise to 0")
        if not is_experts(module):
            continue
        layout = {flag: getattr(module, flag, default) for flag, default in LAYOUT.items()}
        if layout != LAYOUT:
            odd = ", ".join(f"{flag}={value}" for flag, value in layout.items() if value != LAYOUT[flag])
            raise ImportError_(f"{label}: {name} ({type(module).__name__}) keeps its experts' weights with {odd}: "
                               f"zc imports [E, 2F, C] gate-then-up and [E, C, F] weights without biases or norms")
        act = activation_name(module, label)

        def forward(hidden_states, top_k_index, top_k_weights, module=module, act=act):
            return torch.ops.zcc.moe_experts(hidden_states, top_k_index, top_k_weights, module.gate_up_proj,
                                             module.down_proj, act)
        module.forward = forward
        count += 1
    return count


def leaf_balancing_loss(model):
    """The model's family's load_balancing_loss_func -> zcc::load_balancing_loss, for the
    forward that computes it (a config with output_router_logits)."""
    family = sys.modules.get(type(model).__module__)
    if family is None or not hasattr(family, "load_balancing_loss_func"):
        return None
    original = family.load_balancing_loss_func

    def pooled(gate_logits, num_experts=None, top_k=2, attention_mask=None):
        if attention_mask is not None:
            raise ImportError_("the load-balancing loss with an attention mask: zc trains unpadded batches")
        return torch.ops.zcc.load_balancing_loss(list(gate_logits), int(num_experts), int(top_k))
    family.load_balancing_loss_func = pooled
    return lambda: setattr(family, "load_balancing_loss_func", original)
