"""DeepSeek-V3's MoE block (transformers' DeepseekV3MoE: its sigmoid router, group-limited top-k,
e_score_correction_bias and routed scaling factor, 8 routed SwiGLU experts and a shared expert) in a
Llama decoder, whose attention zc has: what a user trains while zc has no form for DeepSeek-V3's
multi-head latent attention. Layer 0 dense (first_k_dense_replace 1), layer 1 MoE.
zcc-import --module deepseek_moe_lm.py:build imports it."""
import torch
import torch.nn as nn
from transformers import DeepseekV3Config, LlamaConfig, LlamaForCausalLM
from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3MoE

HIDDEN = 64


def build():
    llama = LlamaConfig(hidden_size=HIDDEN, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, vocab_size=256, max_position_embeddings=512, tie_word_embeddings=False,
                        attn_implementation="sdpa", dtype=torch.float32)
    # 8 experts in 4 groups of 2, each token among its best 2 groups' experts, top 2, renormalized,
    # times 2.5 (DeepSeek-V3's factor); the experts' eager loop (torch's grouped_mm takes no float64).
    moe = DeepseekV3Config(hidden_size=HIDDEN, moe_intermediate_size=32, n_routed_experts=8, n_shared_experts=1,
                           num_experts_per_tok=2, n_group=4, topk_group=2, norm_topk_prob=True,
                           routed_scaling_factor=2.5, hidden_act="silu")
    moe._experts_implementation = "eager"
    model = LlamaForCausalLM(llama)
    block = DeepseekV3MoE(moe)
    # DeepseekV3PreTrainedModel._init_weights' law, which LlamaForCausalLM's post_init did not see;
    # the router's weight starts at zero in its constructor, so that every score ties: drawn too.
    with torch.no_grad():
        for p in (block.gate.weight, block.experts.gate_up_proj, block.experts.down_proj):
            p.normal_(0.0, 0.02)
        for linear in (block.shared_experts.gate_proj, block.shared_experts.up_proj, block.shared_experts.down_proj):
            linear.weight.normal_(0.0, 0.02)
    model.model.layers[1].mlp = block
    return model


def build_softmax_router():
    """The same model whose router has DeepSeek-V3's attributes but scores by softmax (DeepSeek-V2's
    rule): the importer must refuse it, not import it as DeepSeek-V3's."""
    model = build()
    router = model.model.layers[1].mlp.gate

    def forward(hidden_states):
        logits = nn.functional.linear(hidden_states.reshape(-1, HIDDEN).float(), router.weight.float())
        scores = logits.softmax(dim=-1)
        indices = (scores + router.e_score_correction_bias).topk(router.top_k, dim=-1).indices
        weights = scores.gather(1, indices)
        return logits, weights / weights.sum(-1, keepdim=True) * router.routed_scaling_factor, indices
    router.forward = forward
    return model
