"""Mixture-of-experts layers through torch.export: the experts and the load-balancing loss as leaf ops.

Hugging Face's MoE families (Mixtral, Qwen2/3-MoE, OLMoE, DeepSeek-V3) run their experts as a loop
over the experts a batch reached (`nonzero`, `where`, `index_add_`): data-dependent shapes that
torch.export cannot trace, and that zc writes as one routing and three grouped products. So, before
the export, each experts module's forward becomes one custom op, `zcc::moe_experts(hidden, top_k_index,
top_k_weights, gate_up_proj, down_proj, act)`, and the family's `load_balancing_loss_func` becomes
`zcc::load_balancing_loss(router_logits, num_experts, top_k)`. The router itself (its linear,
softmax, top-k and renormalization) is traced as it is: the lowering reads the routing rule from those
ATen ops (lower_moe.py), so a family whose router differs is refused there, by its line.

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
