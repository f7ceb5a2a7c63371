// One Llama decoder block written by hand in the zc dialect (until zcc-import writes them):
// RMSNorm, rotary q and k (Hugging Face's half-split layout, theta 10000), grouped-query causal
// attention (4 query heads of 8 channels, 2 key/value heads),
// a SwiGLU MLP (silu(x w_gate) * (x w_up)) w_down, residuals, a final RMSNorm and an untied
// LM head over a byte vocabulary. No biases. test/Train/torch_reference.py's `llama` kind is
// the same model in PyTorch.
zc.param @embed : tensor<256x32xf32> = #zc.normal<std = 0.02>
zc.param @h0_attn_norm_g : tensor<32xf32> = #zc.ones
zc.param @h0_qkv_w : tensor<32x64xf32> = #zc.normal<std = 0.02>
zc.param @h0_o_w : tensor<32x32xf32> = #zc.normal<std = 0.02>
zc.param @h0_mlp_norm_g : tensor<32xf32> = #zc.ones
zc.param @h0_gate_w : tensor<32x88xf32> = #zc.normal<std = 0.02>
zc.param @h0_up_w : tensor<32x88xf32> = #zc.normal<std = 0.02>
zc.param @h0_down_w : tensor<88x32xf32> = #zc.normal<std = 0.02>
zc.param @norm_g : tensor<32xf32> = #zc.ones
zc.param @head_w : tensor<32x256xf32> = #zc.normal<std = 0.02>

zc.forward @llama(%tokens: tensor<4x16xi32>, %targets: tensor<4x16xi32>) -> tensor<f32> {
  %embed = zc.param_ref @embed : tensor<256x32xf32>
  %x = zc.embedding %embed[%tokens] : tensor<256x32xf32>, tensor<4x16xi32> -> tensor<4x16x32xf32>
  %n1 = zc.param_ref @h0_attn_norm_g : tensor<32xf32>
  %h = zc.rmsnorm %x, %n1 : tensor<4x16x32xf32>, tensor<32xf32>
  %wqkv = zc.param_ref @h0_qkv_w : tensor<32x64xf32>
  %qkv = zc.matmul %h, %wqkv : tensor<4x16x32xf32>, tensor<32x64xf32> -> tensor<4x16x64xf32>
  %q = zc.slice %qkv [0, 0, 0] : tensor<4x16x64xf32> -> tensor<4x16x32xf32>
  %k = zc.slice %qkv [0, 0, 32] : tensor<4x16x64xf32> -> tensor<4x16x16xf32>
  %v = zc.slice %qkv [0, 0, 48] : tensor<4x16x64xf32> -> tensor<4x16x16xf32>
  %qr = zc.rotary %q heads 4 theta 10000.0 : tensor<4x16x32xf32>
  %kr = zc.rotary %k heads 2 theta 10000.0 : tensor<4x16x16xf32>
  %a = zc.causal_attention %qr, %kr, %v heads 4 kv_heads 2 : tensor<4x16x32xf32>, tensor<4x16x16xf32>
  %wo = zc.param_ref @h0_o_w : tensor<32x32xf32>
  %o = zc.matmul %a, %wo : tensor<4x16x32xf32>, tensor<32x32xf32> -> tensor<4x16x32xf32>
  %r1 = zc.add %x, %o : tensor<4x16x32xf32>
  %n2 = zc.param_ref @h0_mlp_norm_g : tensor<32xf32>
  %h2 = zc.rmsnorm %r1, %n2 : tensor<4x16x32xf32>, tensor<32xf32>
  %wgate = zc.param_ref @h0_gate_w : tensor<32x88xf32>
  %wup = zc.param_ref @h0_up_w : tensor<32x88xf32>
  %g = zc.matmul %h2, %wgate : tensor<4x16x32xf32>, tensor<32x88xf32> -> tensor<4x16x88xf32>
  %u = zc.matmul %h2, %wup : tensor<4x16x32xf32>, tensor<32x88xf32> -> tensor<4x16x88xf32>
  %sg = zc.silu %g : tensor<4x16x88xf32>
  %m = zc.mul %sg, %u : tensor<4x16x88xf32>
  %wdown = zc.param_ref @h0_down_w : tensor<88x32xf32>
  %d = zc.matmul %m, %wdown : tensor<4x16x88xf32>, tensor<88x32xf32> -> tensor<4x16x32xf32>
  %r2 = zc.add %r1, %d : tensor<4x16x32xf32>
  %nf = zc.param_ref @norm_g : tensor<32xf32>
  %hf = zc.rmsnorm %r2, %nf : tensor<4x16x32xf32>, tensor<32xf32>
  %head = zc.param_ref @head_w : tensor<32x256xf32>
  %logits = zc.matmul %hf, %head : tensor<4x16x32xf32>, tensor<32x256xf32> -> tensor<4x16x256xf32>
  %loss = zc.cross_entropy %logits, %targets : tensor<4x16x256xf32>, tensor<4x16xi32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
