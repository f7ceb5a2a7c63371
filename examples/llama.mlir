// Imported by zcc-import from llama-config.json (LlamaForCausalLM, 791,680 parameters).
// Regenerate: zcc-import --hf-config examples/llama-config.json --batch 8 --context 64 -o examples/llama.mlir
// Batch 8 x context 64: forward + mean cross-entropy against the next tokens.

zc.param @"model.embed_tokens.weight" : tensor<256x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.0.self_attn.q_proj.weight" : tensor<128x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.0.self_attn.k_proj.weight" : tensor<64x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.0.self_attn.v_proj.weight" : tensor<64x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.0.self_attn.o_proj.weight" : tensor<128x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.0.mlp.gate_proj.weight" : tensor<344x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.0.mlp.up_proj.weight" : tensor<344x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.0.mlp.down_proj.weight" : tensor<128x344xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.0.input_layernorm.weight" : tensor<128xf32> = #zc.ones
zc.param @"model.layers.0.post_attention_layernorm.weight" : tensor<128xf32> = #zc.ones
zc.param @"model.layers.1.self_attn.q_proj.weight" : tensor<128x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.1.self_attn.k_proj.weight" : tensor<64x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.1.self_attn.v_proj.weight" : tensor<64x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.1.self_attn.o_proj.weight" : tensor<128x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.1.mlp.gate_proj.weight" : tensor<344x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.1.mlp.up_proj.weight" : tensor<344x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.1.mlp.down_proj.weight" : tensor<128x344xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.1.input_layernorm.weight" : tensor<128xf32> = #zc.ones
zc.param @"model.layers.1.post_attention_layernorm.weight" : tensor<128xf32> = #zc.ones
zc.param @"model.layers.2.self_attn.q_proj.weight" : tensor<128x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.2.self_attn.k_proj.weight" : tensor<64x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.2.self_attn.v_proj.weight" : tensor<64x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.2.self_attn.o_proj.weight" : tensor<128x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.2.mlp.gate_proj.weight" : tensor<344x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.2.mlp.up_proj.weight" : tensor<344x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.2.mlp.down_proj.weight" : tensor<128x344xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.2.input_layernorm.weight" : tensor<128xf32> = #zc.ones
zc.param @"model.layers.2.post_attention_layernorm.weight" : tensor<128xf32> = #zc.ones
zc.param @"model.layers.3.self_attn.q_proj.weight" : tensor<128x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.3.self_attn.k_proj.weight" : tensor<64x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.3.self_attn.v_proj.weight" : tensor<64x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.3.self_attn.o_proj.weight" : tensor<128x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.3.mlp.gate_proj.weight" : tensor<344x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.3.mlp.up_proj.weight" : tensor<344x128xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.3.mlp.down_proj.weight" : tensor<128x344xf32> = #zc.normal<std = 0.02>
zc.param @"model.layers.3.input_layernorm.weight" : tensor<128xf32> = #zc.ones
zc.param @"model.layers.3.post_attention_layernorm.weight" : tensor<128xf32> = #zc.ones
zc.param @"model.norm.weight" : tensor<128xf32> = #zc.ones
zc.param @"lm_head.weight" : tensor<256x128xf32> = #zc.normal<std = 0.02>

zc.forward @LlamaForCausalLM(%tokens: tensor<8x64xi32>, %targets: tensor<8x64xi32>) -> tensor<f32> {
  %p_model_embed_tokens_weight = zc.param_ref @"model.embed_tokens.weight" : tensor<256x128xf32> loc("transformers/models/llama/modeling_llama.py":370:0)
  %embedding = zc.embedding %p_model_embed_tokens_weight[%tokens] : tensor<256x128xf32>, tensor<8x64xi32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":370:0)
  %p_model_layers_0_input_layernorm_weight = zc.param_ref @"model.layers.0.input_layernorm.weight" : tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %mul_4 = zc.rmsnorm %embedding, %p_model_layers_0_input_layernorm_weight {epsilon = 1.0e-05 : f64} : tensor<8x64x128xf32>, tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %p_model_layers_0_self_attn_q_proj_weight = zc.param_ref @"model.layers.0.self_attn.q_proj.weight" : tensor<128x128xf32> loc("transformers/models/llama/modeling_llama.py":243:0)
  %linear = zc.matmul %mul_4, %p_model_layers_0_self_attn_q_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<128x128xf32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":243:0)
  %add_4 = zc.rotary %linear heads 4 theta 500000.0 : tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":248:0)
  %p_model_layers_0_self_attn_k_proj_weight = zc.param_ref @"model.layers.0.self_attn.k_proj.weight" : tensor<64x128xf32> loc("transformers/models/llama/modeling_llama.py":244:0)
  %linear_1 = zc.matmul %mul_4, %p_model_layers_0_self_attn_k_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<64x128xf32> -> tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":244:0)
  %add_5 = zc.rotary %linear_1 heads 2 theta 500000.0 : tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":248:0)
  %p_model_layers_0_self_attn_v_proj_weight = zc.param_ref @"model.layers.0.self_attn.v_proj.weight" : tensor<64x128xf32> loc("transformers/models/llama/modeling_llama.py":245:0)
  %linear_2 = zc.matmul %mul_4, %p_model_layers_0_self_attn_v_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<64x128xf32> -> tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":245:0)
  %scaled_dot_product_attention = zc.causal_attention %add_4, %add_5, %linear_2 heads 4 kv_heads 2 : tensor<8x64x128xf32>, tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":257:0)
  %p_model_layers_0_self_attn_o_proj_weight = zc.param_ref @"model.layers.0.self_attn.o_proj.weight" : tensor<128x128xf32> loc("transformers/models/llama/modeling_llama.py":269:0)
  %linear_3 = zc.matmul %scaled_dot_product_attention, %p_model_layers_0_self_attn_o_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<128x128xf32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":269:0)
  %add_6 = zc.add %embedding, %linear_3 : tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":306:0)
  %p_model_layers_0_post_attention_layernorm_weight = zc.param_ref @"model.layers.0.post_attention_layernorm.weight" : tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %mul_10 = zc.rmsnorm %add_6, %p_model_layers_0_post_attention_layernorm_weight {epsilon = 1.0e-05 : f64} : tensor<8x64x128xf32>, tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %p_model_layers_0_mlp_gate_proj_weight = zc.param_ref @"model.layers.0.mlp.gate_proj.weight" : tensor<344x128xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %linear_4 = zc.matmul %mul_10, %p_model_layers_0_mlp_gate_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<344x128xf32> -> tensor<8x64x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %silu = zc.silu %linear_4 : tensor<8x64x344xf32> loc("transformers/activations.py":103:0)
  %p_model_layers_0_mlp_up_proj_weight = zc.param_ref @"model.layers.0.mlp.up_proj.weight" : tensor<344x128xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %linear_5 = zc.matmul %mul_10, %p_model_layers_0_mlp_up_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<344x128xf32> -> tensor<8x64x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %mul_11 = zc.mul %silu, %linear_5 : tensor<8x64x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %p_model_layers_0_mlp_down_proj_weight = zc.param_ref @"model.layers.0.mlp.down_proj.weight" : tensor<128x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %linear_6 = zc.matmul %mul_11, %p_model_layers_0_mlp_down_proj_weight transpose_rhs : tensor<8x64x344xf32>, tensor<128x344xf32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %add_8 = zc.add %add_6, %linear_6 : tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":312:0)
  %p_model_layers_1_input_layernorm_weight = zc.param_ref @"model.layers.1.input_layernorm.weight" : tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %mul_13 = zc.rmsnorm %add_8, %p_model_layers_1_input_layernorm_weight {epsilon = 1.0e-05 : f64} : tensor<8x64x128xf32>, tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %p_model_layers_1_self_attn_q_proj_weight = zc.param_ref @"model.layers.1.self_attn.q_proj.weight" : tensor<128x128xf32> loc("transformers/models/llama/modeling_llama.py":243:0)
  %linear_7 = zc.matmul %mul_13, %p_model_layers_1_self_attn_q_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<128x128xf32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":243:0)
  %add_10 = zc.rotary %linear_7 heads 4 theta 500000.0 : tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":248:0)
  %p_model_layers_1_self_attn_k_proj_weight = zc.param_ref @"model.layers.1.self_attn.k_proj.weight" : tensor<64x128xf32> loc("transformers/models/llama/modeling_llama.py":244:0)
  %linear_8 = zc.matmul %mul_13, %p_model_layers_1_self_attn_k_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<64x128xf32> -> tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":244:0)
  %add_11 = zc.rotary %linear_8 heads 2 theta 500000.0 : tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":248:0)
  %p_model_layers_1_self_attn_v_proj_weight = zc.param_ref @"model.layers.1.self_attn.v_proj.weight" : tensor<64x128xf32> loc("transformers/models/llama/modeling_llama.py":245:0)
  %linear_9 = zc.matmul %mul_13, %p_model_layers_1_self_attn_v_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<64x128xf32> -> tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":245:0)
  %scaled_dot_product_attention_1 = zc.causal_attention %add_10, %add_11, %linear_9 heads 4 kv_heads 2 : tensor<8x64x128xf32>, tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":257:0)
  %p_model_layers_1_self_attn_o_proj_weight = zc.param_ref @"model.layers.1.self_attn.o_proj.weight" : tensor<128x128xf32> loc("transformers/models/llama/modeling_llama.py":269:0)
  %linear_10 = zc.matmul %scaled_dot_product_attention_1, %p_model_layers_1_self_attn_o_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<128x128xf32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":269:0)
  %add_12 = zc.add %add_8, %linear_10 : tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":306:0)
  %p_model_layers_1_post_attention_layernorm_weight = zc.param_ref @"model.layers.1.post_attention_layernorm.weight" : tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %mul_19 = zc.rmsnorm %add_12, %p_model_layers_1_post_attention_layernorm_weight {epsilon = 1.0e-05 : f64} : tensor<8x64x128xf32>, tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %p_model_layers_1_mlp_gate_proj_weight = zc.param_ref @"model.layers.1.mlp.gate_proj.weight" : tensor<344x128xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %linear_11 = zc.matmul %mul_19, %p_model_layers_1_mlp_gate_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<344x128xf32> -> tensor<8x64x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %silu_1 = zc.silu %linear_11 : tensor<8x64x344xf32> loc("transformers/activations.py":103:0)
  %p_model_layers_1_mlp_up_proj_weight = zc.param_ref @"model.layers.1.mlp.up_proj.weight" : tensor<344x128xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %linear_12 = zc.matmul %mul_19, %p_model_layers_1_mlp_up_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<344x128xf32> -> tensor<8x64x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %mul_20 = zc.mul %silu_1, %linear_12 : tensor<8x64x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %p_model_layers_1_mlp_down_proj_weight = zc.param_ref @"model.layers.1.mlp.down_proj.weight" : tensor<128x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %linear_13 = zc.matmul %mul_20, %p_model_layers_1_mlp_down_proj_weight transpose_rhs : tensor<8x64x344xf32>, tensor<128x344xf32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %add_14 = zc.add %add_12, %linear_13 : tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":312:0)
  %p_model_layers_2_input_layernorm_weight = zc.param_ref @"model.layers.2.input_layernorm.weight" : tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %mul_22 = zc.rmsnorm %add_14, %p_model_layers_2_input_layernorm_weight {epsilon = 1.0e-05 : f64} : tensor<8x64x128xf32>, tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %p_model_layers_2_self_attn_q_proj_weight = zc.param_ref @"model.layers.2.self_attn.q_proj.weight" : tensor<128x128xf32> loc("transformers/models/llama/modeling_llama.py":243:0)
  %linear_14 = zc.matmul %mul_22, %p_model_layers_2_self_attn_q_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<128x128xf32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":243:0)
  %add_16 = zc.rotary %linear_14 heads 4 theta 500000.0 : tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":248:0)
  %p_model_layers_2_self_attn_k_proj_weight = zc.param_ref @"model.layers.2.self_attn.k_proj.weight" : tensor<64x128xf32> loc("transformers/models/llama/modeling_llama.py":244:0)
  %linear_15 = zc.matmul %mul_22, %p_model_layers_2_self_attn_k_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<64x128xf32> -> tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":244:0)
  %add_17 = zc.rotary %linear_15 heads 2 theta 500000.0 : tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":248:0)
  %p_model_layers_2_self_attn_v_proj_weight = zc.param_ref @"model.layers.2.self_attn.v_proj.weight" : tensor<64x128xf32> loc("transformers/models/llama/modeling_llama.py":245:0)
  %linear_16 = zc.matmul %mul_22, %p_model_layers_2_self_attn_v_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<64x128xf32> -> tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":245:0)
  %scaled_dot_product_attention_2 = zc.causal_attention %add_16, %add_17, %linear_16 heads 4 kv_heads 2 : tensor<8x64x128xf32>, tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":257:0)
  %p_model_layers_2_self_attn_o_proj_weight = zc.param_ref @"model.layers.2.self_attn.o_proj.weight" : tensor<128x128xf32> loc("transformers/models/llama/modeling_llama.py":269:0)
  %linear_17 = zc.matmul %scaled_dot_product_attention_2, %p_model_layers_2_self_attn_o_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<128x128xf32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":269:0)
  %add_18 = zc.add %add_14, %linear_17 : tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":306:0)
  %p_model_layers_2_post_attention_layernorm_weight = zc.param_ref @"model.layers.2.post_attention_layernorm.weight" : tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %mul_28 = zc.rmsnorm %add_18, %p_model_layers_2_post_attention_layernorm_weight {epsilon = 1.0e-05 : f64} : tensor<8x64x128xf32>, tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %p_model_layers_2_mlp_gate_proj_weight = zc.param_ref @"model.layers.2.mlp.gate_proj.weight" : tensor<344x128xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %linear_18 = zc.matmul %mul_28, %p_model_layers_2_mlp_gate_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<344x128xf32> -> tensor<8x64x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %silu_2 = zc.silu %linear_18 : tensor<8x64x344xf32> loc("transformers/activations.py":103:0)
  %p_model_layers_2_mlp_up_proj_weight = zc.param_ref @"model.layers.2.mlp.up_proj.weight" : tensor<344x128xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %linear_19 = zc.matmul %mul_28, %p_model_layers_2_mlp_up_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<344x128xf32> -> tensor<8x64x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %mul_29 = zc.mul %silu_2, %linear_19 : tensor<8x64x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %p_model_layers_2_mlp_down_proj_weight = zc.param_ref @"model.layers.2.mlp.down_proj.weight" : tensor<128x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %linear_20 = zc.matmul %mul_29, %p_model_layers_2_mlp_down_proj_weight transpose_rhs : tensor<8x64x344xf32>, tensor<128x344xf32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %add_20 = zc.add %add_18, %linear_20 : tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":312:0)
  %p_model_layers_3_input_layernorm_weight = zc.param_ref @"model.layers.3.input_layernorm.weight" : tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %mul_31 = zc.rmsnorm %add_20, %p_model_layers_3_input_layernorm_weight {epsilon = 1.0e-05 : f64} : tensor<8x64x128xf32>, tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %p_model_layers_3_self_attn_q_proj_weight = zc.param_ref @"model.layers.3.self_attn.q_proj.weight" : tensor<128x128xf32> loc("transformers/models/llama/modeling_llama.py":243:0)
  %linear_21 = zc.matmul %mul_31, %p_model_layers_3_self_attn_q_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<128x128xf32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":243:0)
  %add_22 = zc.rotary %linear_21 heads 4 theta 500000.0 : tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":248:0)
  %p_model_layers_3_self_attn_k_proj_weight = zc.param_ref @"model.layers.3.self_attn.k_proj.weight" : tensor<64x128xf32> loc("transformers/models/llama/modeling_llama.py":244:0)
  %linear_22 = zc.matmul %mul_31, %p_model_layers_3_self_attn_k_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<64x128xf32> -> tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":244:0)
  %add_23 = zc.rotary %linear_22 heads 2 theta 500000.0 : tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":248:0)
  %p_model_layers_3_self_attn_v_proj_weight = zc.param_ref @"model.layers.3.self_attn.v_proj.weight" : tensor<64x128xf32> loc("transformers/models/llama/modeling_llama.py":245:0)
  %linear_23 = zc.matmul %mul_31, %p_model_layers_3_self_attn_v_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<64x128xf32> -> tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":245:0)
  %scaled_dot_product_attention_3 = zc.causal_attention %add_22, %add_23, %linear_23 heads 4 kv_heads 2 : tensor<8x64x128xf32>, tensor<8x64x64xf32> loc("transformers/models/llama/modeling_llama.py":257:0)
  %p_model_layers_3_self_attn_o_proj_weight = zc.param_ref @"model.layers.3.self_attn.o_proj.weight" : tensor<128x128xf32> loc("transformers/models/llama/modeling_llama.py":269:0)
  %linear_24 = zc.matmul %scaled_dot_product_attention_3, %p_model_layers_3_self_attn_o_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<128x128xf32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":269:0)
  %add_24 = zc.add %add_20, %linear_24 : tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":306:0)
  %p_model_layers_3_post_attention_layernorm_weight = zc.param_ref @"model.layers.3.post_attention_layernorm.weight" : tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %mul_37 = zc.rmsnorm %add_24, %p_model_layers_3_post_attention_layernorm_weight {epsilon = 1.0e-05 : f64} : tensor<8x64x128xf32>, tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %p_model_layers_3_mlp_gate_proj_weight = zc.param_ref @"model.layers.3.mlp.gate_proj.weight" : tensor<344x128xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %linear_25 = zc.matmul %mul_37, %p_model_layers_3_mlp_gate_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<344x128xf32> -> tensor<8x64x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %silu_3 = zc.silu %linear_25 : tensor<8x64x344xf32> loc("transformers/activations.py":103:0)
  %p_model_layers_3_mlp_up_proj_weight = zc.param_ref @"model.layers.3.mlp.up_proj.weight" : tensor<344x128xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %linear_26 = zc.matmul %mul_37, %p_model_layers_3_mlp_up_proj_weight transpose_rhs : tensor<8x64x128xf32>, tensor<344x128xf32> -> tensor<8x64x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %mul_38 = zc.mul %silu_3, %linear_26 : tensor<8x64x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %p_model_layers_3_mlp_down_proj_weight = zc.param_ref @"model.layers.3.mlp.down_proj.weight" : tensor<128x344xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %linear_27 = zc.matmul %mul_38, %p_model_layers_3_mlp_down_proj_weight transpose_rhs : tensor<8x64x344xf32>, tensor<128x344xf32> -> tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":164:0)
  %add_26 = zc.add %add_24, %linear_27 : tensor<8x64x128xf32> loc("transformers/models/llama/modeling_llama.py":312:0)
  %p_model_norm_weight = zc.param_ref @"model.norm.weight" : tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %mul_40 = zc.rmsnorm %add_26, %p_model_norm_weight {epsilon = 1.0e-05 : f64} : tensor<8x64x128xf32>, tensor<128xf32> loc("transformers/models/llama/modeling_llama.py":66:0)
  %p_lm_head_weight = zc.param_ref @"lm_head.weight" : tensor<256x128xf32> loc("transformers/models/llama/modeling_llama.py":468:0)
  %linear_28 = zc.matmul %mul_40, %p_lm_head_weight transpose_rhs : tensor<8x64x128xf32>, tensor<256x128xf32> -> tensor<8x64x256xf32> loc("transformers/models/llama/modeling_llama.py":468:0)
  %loss = zc.cross_entropy %linear_28, %targets : tensor<8x64x256xf32>, tensor<8x64xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
