// RUN: zcc-opt %s -split-input-file -verify-diagnostics

// --- Parameters and initializers ---------------------------------------------

// expected-error @+1 {{normal initializer needs a positive finite std, got -1.0}}
zc.param @w : tensor<4xf32> = #zc.normal<std = -1.0>

// -----

// expected-error @+1 {{uniform initializer needs low < high, got [1.0, -1.0)}}
zc.param @w : tensor<4xf32> = #zc.uniform<low = 1.0, high = -1.0>

// -----

// expected-error @+1 {{'zc.param' op parameter 'w' has no elements}}
zc.param @w : tensor<0x4xf32> = #zc.zeros

// -----

// expected-error @+1 {{'zc.param' op attribute 'type' failed to satisfy constraint}}
zc.param @w : tensor<4xi32> = #zc.zeros

// -----

// expected-error @+1 {{'zc.param' op attribute 'init' failed to satisfy constraint}}
zc.param @w : tensor<4xf32> = 1.0 : f32

// -----

func.func @f() {
  // expected-error @+1 {{'zc.param' op expects parent op 'builtin.module'}}
  "zc.param"() <{sym_name = "w", type = tensor<4xf32>, init = #zc.zeros}> : () -> ()
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'zc.param_ref' op '@missing' does not name a zc.param}}
  %0 = zc.param_ref @missing : tensor<4xf32>
  return
}

// -----

zc.param @w : tensor<4xf32> = #zc.zeros
func.func @f() {
  // expected-error @+1 {{'zc.param_ref' op result type 'tensor<8xf32>' differs from parameter '@w' declared as 'tensor<4xf32>'}}
  %0 = zc.param_ref @w : tensor<8xf32>
  return
}

// --- Forward and return ------------------------------------------------------

// -----

// expected-error @+1 {{'zc.forward' op must return the loss as tensor<f32>, got 'tensor<4xf32>'}}
zc.forward @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  zc.return %x : tensor<4xf32>
}

// -----

zc.param @p : tensor<f32> = #zc.zeros
// expected-error @+1 {{'zc.forward' op takes the batch as arguments, but has none}}
zc.forward @f() -> tensor<f32> {
  %0 = zc.param_ref @p : tensor<f32>
  zc.return %0 : tensor<f32>
}

// -----

// expected-error @+1 {{'zc.forward' op must return exactly one value, the loss; got 2}}
zc.forward @f(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  zc.return %x, %x : tensor<f32>, tensor<f32>
}

// -----

zc.param @p : tensor<f32> = #zc.zeros
// expected-error @+1 {{'zc.forward' op argument #0 must be a statically shaped tensor, got 'tensor<?xf32>'}}
zc.forward @f(%x: tensor<?xf32>) -> tensor<f32> {
  %0 = zc.param_ref @p : tensor<f32>
  zc.return %0 : tensor<f32>
}

// -----

zc.forward @f(%x: tensor<f32>, %y: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'zc.return' op operand #0 has type 'tensor<4xf32>' but 'f' returns 'tensor<f32>'}}
  zc.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<f32>) {
  // expected-error @+1 {{'zc.return' op expects parent op 'zc.forward'}}
  zc.return %x : tensor<f32>
}

// --- Elementwise ops ---------------------------------------------------------

// -----

func.func @f(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'zc.add' op requires the same type for all operands and results}}
  %0 = "zc.add"(%a, %b) : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'zc.sub' op requires the same type for all operands and results}}
  %0 = "zc.sub"(%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<4xi32>) {
  // expected-error @+1 {{'zc.mul' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = zc.mul %a, %a : tensor<4xi32>
  return
}

// -----

func.func @f(%a: tensor<?xf32>) {
  // expected-error @+1 {{'zc.scale' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type values, but got 'tensor<?xf32>'}}
  %0 = zc.scale %a by 2.0 : tensor<?xf32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'zc.relu' op requires the same type for all operands and results}}
  %0 = "zc.relu"(%a) : (tensor<4xf32>) -> tensor<4xbf16>
  return
}

// -----

func.func @f(%a: tensor<4xf16>) {
  // expected-error @+1 {{'zc.gelu' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type values, but got 'tensor<4xf16>'}}
  %0 = zc.gelu %a : tensor<4xf16>
  return
}

// -----

func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'zc.softmax' op requires the same type for all operands and results}}
  %0 = "zc.softmax"(%a) : (tensor<4x8xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'zc.cast' op casts to the element type it already has ('f32')}}
  %0 = zc.cast %a : tensor<4xf32> -> tensor<4xf32>
  return
}

// --- Matmul ------------------------------------------------------------------

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) {
  // expected-error @+1 {{'zc.matmul' op contracting sizes differ: lhs has 8, rhs has 7}}
  %0 = zc.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'zc.matmul' op result shape must be 'tensor<4x16xf32>', got 'tensor<16x4xf32>'}}
  %0 = zc.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<16x4xf32>
  return
}

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>) {
  // expected-error @+1 {{'zc.matmul' op contracting sizes differ: lhs has 8, rhs has 16}}
  %0 = zc.matmul %a, %b : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @f(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) {
  // expected-error @+1 {{'zc.matmul' op rhs must be 2-D or have the batch axes of lhs}}
  %0 = zc.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x16xf32> -> tensor<2x4x16xf32>
  return
}

// -----

func.func @f(%a: tensor<8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'zc.matmul' op operands must have at least 2 axes}}
  %0 = zc.matmul %a, %b : tensor<8xf32>, tensor<8x16xf32> -> tensor<16xf32>
  return
}

// -----

func.func @f(%a: tensor<4x8xbf16>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'zc.matmul' op operands and result must share one element type, got 'bf16' and 'f32'}}
  %0 = zc.matmul %a, %b : tensor<4x8xbf16>, tensor<8x16xf32> -> tensor<4x16xf32>
  return
}

// --- Neural-network ops ------------------------------------------------------

// -----

func.func @f(%x: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'zc.bias_add' op bias has 4 elements but the input's last axis has 8}}
  %0 = zc.bias_add %x, %b : tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'zc.layernorm' op epsilon must be positive, got 0}}
  %0 = zc.layernorm %x, %g, %g {epsilon = 0.0 : f64} : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %g: tensor<4x8xf32>) {
  // expected-error @+1 {{'zc.layernorm' op gamma must be 1-D, got 'tensor<4x8xf32>'}}
  %0 = zc.layernorm %x, %g, %g : tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'zc.add_layernorm' op epsilon must be positive, got 0}}
  %0:2 = zc.add_layernorm %x, %x, %g, %g {epsilon = 0.0 : f64} : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'zc.layernorm_grad_add' op gamma}}
  %0:3 = zc.layernorm_grad_add %x, %x, %g, %x : tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %g: tensor<6xf32>) {
  // expected-error @+1 {{'zc.rmsnorm' op gamma}}
  %0 = zc.rmsnorm %x, %g : tensor<4x8xf32>, tensor<6xf32>
  return
}

// -----

func.func @f(%dy: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'zc.rmsnorm_grad' op epsilon must be positive, got -1}}
  %0:2 = zc.rmsnorm_grad %dy, %dy, %g {epsilon = -1.0 : f64} : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x6xf32>) {
  // expected-error @+1 {{'zc.swiglu' op requires the same type for all operands and results}}
  %0 = "zc.swiglu"(%x, %y) : (tensor<4x8xf32>, tensor<4x6xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x8xbf16>) {
  // expected-error @+1 {{'zc.swiglu_grad' op failed to verify that all of {grad, gate, up, gate_grad, up_grad} have same type}}
  %0:2 = "zc.swiglu_grad"(%x, %x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'zc.silu' op requires the same type for all operands and results}}
  %0 = "zc.silu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  return
}

// -----

func.func @f(%dy: tensor<4x8xf32>, %x: tensor<4x6xf32>) {
  // expected-error @+1 {{'zc.silu_grad' op requires the same type for all operands and results}}
  %0 = "zc.silu_grad"(%dy, %x) : (tensor<4x8xf32>, tensor<4x6xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x12xf32>) {
  // expected-error @+1 {{'zc.rotary' op channels (12) must be 4 heads of an even size}}
  %0 = zc.rotary %x heads 4 theta 10000.0 : tensor<2x6x12xf32>
  return
}

// -----

func.func @f(%x: tensor<12x8xf32>) {
  // expected-error @+1 {{'zc.rotary' op input must be [batch, time, channels], got 'tensor<12x8xf32>'}}
  %0 = zc.rotary %x heads 2 theta 10000.0 : tensor<12x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'zc.rotary' op theta must be positive, got 0}}
  %0 = zc.rotary %x heads 2 theta 0.0 : tensor<2x6x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'zc.rotary' op rotary_dims (3) must be even and at most the head's 4 channels}}
  %0 = zc.rotary %x heads 2 theta 10000.0 rotary_dims 3 : tensor<2x6x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'zc.rotary' op rotary_dims (6) must be even and at most the head's 4 channels}}
  %0 = zc.rotary %x heads 2 theta 10000.0 rotary_dims 6 : tensor<2x6x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x12xf32>, %kv: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'zc.causal_attention' op the 6 query heads do not split into groups of the 4 key/value heads}}
  %0 = zc.causal_attention %x, %kv, %kv heads 6 kv_heads 4 : tensor<2x6x12xf32>, tensor<2x6x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x8xf32>, %kv: tensor<2x6x6xf32>) {
  // expected-error @+1 {{'zc.causal_attention' op key and value must be 'tensor<2x6x4xf32>' (2 heads of 2), got 'tensor<2x6x6xf32>'}}
  %0 = zc.causal_attention %x, %kv, %kv heads 4 kv_heads 2 : tensor<2x6x8xf32>, tensor<2x6x6xf32>
  return
}

// -----

func.func @f(%dy: tensor<2x6x8xf32>, %kv: tensor<2x6x4xf32>) {
  // expected-error @+1 {{'zc.causal_attention_grad' op key and value must be 'tensor<2x6x8xf32>' (4 heads of 2), got 'tensor<2x6x4xf32>'}}
  %0:3 = zc.causal_attention_grad %dy, %dy, %kv, %kv heads 4 : tensor<2x6x8xf32>, tensor<2x6x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'zc.causal_attention' op softcap must be positive and finite, got -1}}
  %0 = zc.causal_attention %x, %x, %x heads 2 softcap -1.0 : tensor<2x6x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x8xf32>, %y: tensor<2x6xi32>) {
  // expected-error @+1 {{'zc.cross_entropy' op softcap must be positive and finite, got 0}}
  %0 = zc.cross_entropy %x, %y softcap 0.0 : tensor<2x6x8xf32>, tensor<2x6xi32> -> tensor<f32>
  return
}

// -----

func.func @f(%x: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'zc.causal_attention_grad' op scale must be positive and finite, got 0}}
  %0:3 = zc.causal_attention_grad %x, %x, %x, %x heads 2 scale 0.0 : tensor<2x6x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'zc.causal_attention' op attribute 'window' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = zc.causal_attention %x, %x, %x heads 2 window 0 : tensor<2x6x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'zc.causal_attention' op channels (8) are not divisible by the 3 heads}}
  %0 = zc.causal_attention %x, %x, %x heads 3 : tensor<2x6x8xf32>
  return
}

// -----

func.func @f(%x: tensor<6x8xf32>) {
  // expected-error @+1 {{'zc.causal_attention' op expects [batch, time, channels] tensors, got 'tensor<6x8xf32>'}}
  %0 = zc.causal_attention %x, %x, %x heads 2 : tensor<6x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'zc.causal_attention' op attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = zc.causal_attention %x, %x, %x heads 0 : tensor<2x6x8xf32>
  return
}

// -----

func.func @f(%t: tensor<16x8xf32>, %ids: tensor<2x6xi32>) {
  // expected-error @+1 {{'zc.embedding' op result must be 'tensor<2x6x8xf32>' (ids shape + channels), got 'tensor<2x6x16xf32>'}}
  %0 = zc.embedding %t[%ids] : tensor<16x8xf32>, tensor<2x6xi32> -> tensor<2x6x16xf32>
  return
}

// -----

func.func @f(%t: tensor<16x8xf32>, %ids: tensor<2x6xf32>) {
  // expected-error @+1 {{'zc.embedding' op operand #1 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<2x6xf32>'}}
  %0 = zc.embedding %t[%ids] : tensor<16x8xf32>, tensor<2x6xf32> -> tensor<2x6x8xf32>
  return
}

// -----

func.func @f(%t: tensor<16xf32>, %ids: tensor<2x6xi32>) {
  // expected-error @+1 {{'zc.embedding' op table must be [vocab, channels], got 'tensor<16xf32>'}}
  %0 = zc.embedding %t[%ids] : tensor<16xf32>, tensor<2x6xi32> -> tensor<2x6xf32>
  return
}

// --- Shape ops ---------------------------------------------------------------

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'zc.reshape' op cannot reshape 32 elements into 30}}
  %0 = zc.reshape %x : tensor<4x8xf32> -> tensor<5x6xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'zc.reshape' op operands and result must share one element type, got 'f32' and 'bf16'}}
  %0 = zc.reshape %x : tensor<4x8xf32> -> tensor<32xbf16>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'zc.transpose' op permutation must list every axis exactly once, got [0, 1, 1]}}
  %0 = zc.transpose %x [0, 1, 1] : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'zc.transpose' op result shape must be 'tensor<2x8x4xf32>', got 'tensor<2x4x8xf32>'}}
  %0 = zc.transpose %x [0, 2, 1] : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'zc.transpose' op permutation has 2 entries for a rank-3 input}}
  %0 = zc.transpose %x [1, 0] : tensor<2x4x8xf32> -> tensor<4x2x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'zc.slice' op box [6, 10) on axis 2 is outside [0, 8)}}
  %0 = zc.slice %x [0, 0, 6] : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'zc.slice' op expects one offset per axis (3), got 2}}
  %0 = zc.slice %x [0, 0] : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  return
}

// -----

func.func @f(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'zc.concat' op input #1 has size 3 on axis 0, the result has 2}}
  %0 = zc.concat %a, %b axis 1 : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @f(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'zc.concat' op inputs add up to 8 on axis 1 but the result has 9}}
  %0 = zc.concat %a, %b axis 1 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x9xf32>
  return
}

// -----

func.func @f(%a: tensor<2x4xf32>, %b: tensor<2x4xi32>) {
  // expected-error @+1 {{'zc.concat' op input #1 'tensor<2x4xi32>' must have the result's rank and element type}}
  %0 = zc.concat %a, %b axis 1 : tensor<2x4xf32>, tensor<2x4xi32> -> tensor<2x8xf32>
  return
}

// -----

func.func @f(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{'zc.concat' op axis 2 is out of range for rank 2}}
  %0 = zc.concat %a axis 2 : tensor<2x4xf32> -> tensor<2x4xf32>
  return
}

// --- Losses ------------------------------------------------------------------

// -----

func.func @f(%l: tensor<2x6x16xf32>, %y: tensor<2x5xi32>) {
  // expected-error @+1 {{'zc.cross_entropy' op labels shape 'tensor<2x5xi32>' must be the logits shape without its class axis (logits 'tensor<2x6x16xf32>')}}
  %0 = zc.cross_entropy %l, %y : tensor<2x6x16xf32>, tensor<2x5xi32> -> tensor<f32>
  return
}

// -----

func.func @f(%l: tensor<2x16xf32>, %y: tensor<2xi32>) {
  // expected-error @+1 {{'zc.cross_entropy' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = zc.cross_entropy %l, %y : tensor<2x16xf32>, tensor<2xi32> -> tensor<1xf32>
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %t: tensor<5xf32>) {
  // expected-error @+1 {{'zc.mse' op failed to verify that all of {prediction, target} have same type}}
  %0 = "zc.mse"(%p, %t) : (tensor<4xf32>, tensor<5xf32>) -> tensor<f32>
  return
}

// --- Backward ops ------------------------------------------------------------

// -----

func.func @f(%dy: tensor<4xf32>, %x: tensor<5xf32>) {
  // expected-error @+1 {{'zc.relu_grad' op requires the same type for all operands and results}}
  %0 = "zc.relu_grad"(%dy, %x) : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @f(%dy: tensor<4xf32>, %x: tensor<4xbf16>) {
  // expected-error @+1 {{'zc.gelu_grad' op requires the same type for all operands and results}}
  %0 = "zc.gelu_grad"(%dy, %x) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}

// -----

func.func @f(%dy: tensor<4x8xf32>, %y: tensor<4x8xf32>) {
  // expected-error @+1 {{'zc.softmax_grad' op requires the same type for all operands and results}}
  %0 = "zc.softmax_grad"(%dy, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @f(%dy: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'zc.layernorm_grad' op gamma has 4 elements but the input's last axis has 8}}
  %0:3 = zc.layernorm_grad %dy, %dy, %g : tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x10xf32>) {
  // expected-error @+1 {{'zc.causal_attention_grad' op channels (10) are not divisible by the 4 heads}}
  %0:3 = zc.causal_attention_grad %x, %x, %x, %x heads 4 : tensor<2x6x10xf32>
  return
}

// -----

func.func @f(%dy: tensor<2x6x8xf32>, %ids: tensor<2x5xi32>) {
  // expected-error @+1 {{'zc.embedding_grad' op grad must be 'tensor<2x5x8xf32>' (ids shape + channels), got 'tensor<2x6x8xf32>'}}
  %0 = zc.embedding_grad %dy[%ids] : tensor<2x6x8xf32>, tensor<2x5xi32> -> tensor<16x8xf32>
  return
}

// -----

func.func @f(%dl: tensor<f32>, %l: tensor<2x16xf32>, %y: tensor<3xi32>) {
  // expected-error @+1 {{'zc.cross_entropy_grad' op labels shape 'tensor<3xi32>' must be the logits shape without its class axis}}
  %0 = zc.cross_entropy_grad %dl, %l, %y : tensor<2x16xf32>, tensor<3xi32>
  return
}

// -----

func.func @f(%dl: tensor<1xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'zc.mse_grad' op operand #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = "zc.mse_grad"(%dl, %p, %p) : (tensor<1xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'zc.reduce_sum' op axes must be distinct, sorted and within [0, 3), got [1, 0]}}
  %0 = zc.reduce_sum %x [1, 0] : tensor<2x6x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'zc.reduce_sum' op result shape must be 'tensor<6x8xf32>', got 'tensor<8xf32>'}}
  %0 = zc.reduce_sum %x [0] : tensor<2x6x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @f(%dy: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'zc.slice_grad' op box [20, 28) on axis 2 is outside [0, 24)}}
  %0 = zc.slice_grad %dy [0, 0, 20] : tensor<2x6x8xf32> -> tensor<2x6x24xf32>
  return
}

// --- Collectives, wait and release --------------------------------------------

// -----

func.func @f(%s: tensor<5xf32>) {
  // expected-error @+1 {{'zc.all_gather' op gathered axis 0 (16) must be 4 ranks x shard axis 0 (5)}}
  %0 = zc.all_gather %s ranks 4 : tensor<5xf32> -> tensor<16xf32>
  return
}

// -----

func.func @f(%s: tensor<5xf32>) {
  // expected-error @+1 {{'zc.all_gather' op attribute 'ranks' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = zc.all_gather %s ranks 0 : tensor<5xf32> -> tensor<0xf32>
  return
}

// -----

func.func @f(%g: tensor<18xf32>) {
  // expected-error @+1 {{'zc.reduce_scatter' op gathered axis 0 (18) must be 4 ranks x shard axis 0 (4)}}
  %0 = zc.reduce_scatter sum %g ranks 4 : tensor<18xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%g: tensor<4x3xf32>) {
  // expected-error @+1 {{'zc.reduce_scatter' op shard 'tensor<2x4xf32>' and gathered 'tensor<4x3xf32>' tensors must agree on every axis but the first}}
  %0 = zc.reduce_scatter sum %g ranks 2 : tensor<4x3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::zc::ReduceKind to be one of: sum, avg}}
  // expected-error @+1 {{failed to parse ZC_ReduceKindAttr parameter 'value' which is to be a `::mlir::zc::ReduceKind`}}
  %0 = zc.all_reduce max %g ranks 2 : tensor<4xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::zc::MeshAxis to be one of: data, tensor, pipeline}}
  // expected-error @+1 {{failed to parse ZC_MeshAxisAttr parameter 'value' which is to be a `::mlir::zc::MeshAxis`}}
  %0 = zc.all_reduce sum %g ranks 2 on rows : tensor<4xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{'zc.tp_copy' op input and result must have the same type without `sequence`, got 'tensor<4xf32>' and 'tensor<2xf32>'}}
  %0 = "zc.tp_copy"(%g) <{ranks = 2 : i64}> : (tensor<4xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{'zc.tp_reduce' op attribute 'ranks' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = zc.tp_reduce %g ranks 0 : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%g: tensor<2x6xf32>) {
  // expected-error @+1 {{'zc.tp_reduce' op 'tensor<2x3xf32>' must be one of 2 parts of 'tensor<2x6xf32>' split along its first axis longer than 1 (sequence parallelism)}}
  %0 = zc.tp_reduce %g ranks 2 sequence : tensor<2x6xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @f(%g: tensor<1x6xf32>) {
  // expected-error @+1 {{'zc.sp_shard' op 'tensor<1x3xf32>' must be one of 3 parts of 'tensor<1x6xf32>'}}
  %0 = zc.sp_shard %g ranks 3 : tensor<1x6xf32> -> tensor<1x3xf32>
  return
}

// -----

func.func @f(%g: tensor<2x6xf32>) {
  // expected-error @+1 {{'zc.sp_gather' op 'tensor<2x6xf32>' must be one of 2 parts of 'tensor<6x6xf32>'}}
  %0 = zc.sp_gather %g ranks 2 : tensor<2x6xf32> -> tensor<6x6xf32>
  return
}

// -----

func.func @f(%g: tensor<2x2xf32>) {
  // The tensor axis' all-gather splits as sequence parallelism does: the first axis longer than 1.
  // expected-error @+1 {{'zc.all_gather' op 'tensor<2x2xf32>' must be one of 2 parts of 'tensor<1x8xf32>'}}
  %0 = zc.all_gather %g ranks 2 on tensor : tensor<2x2xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{'zc.pipe_send' op attribute 'stage' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  zc.pipe_send %g to stage -1 : tensor<4xf32>
  return
}

// -----

func.func @f(%h: tensor<4xf32>, %kept: tensor<4xf32> {zc.input = "activation"}) {
  // expected-error @+1 {{'zc.pipe_stash' op stash must be an argument of the function with zc.input = "stash"}}
  zc.pipe_stash %h into %kept : tensor<4xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{'zc.stage_input' op failed to verify that all of {input, result} have same type}}
  %0 = "zc.stage_input"(%g) <{from = 0 : i64}> : (tensor<4xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>, %d: tensor<2xf32>) {
  // expected-error @+1 {{'zc.stage_output' op failed to verify that all of {output, grad} have same type}}
  %0 = "zc.stage_output"(%g, %d) : (tensor<4xf32>, tensor<2xf32>) -> tensor<f32>
  return
}

// -----

func.func @f(%t: tensor<8x4xf32>, %ids: tensor<3xi32>) {
  // expected-error @+1 {{'zc.embedding' op attribute 'vocab_shards' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = zc.embedding %t[%ids] {vocab_shards = 0} : tensor<8x4xf32>, tensor<3xi32> -> tensor<3x4xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{'zc.all_reduce' op failed to verify that all of {input, result} have same type}}
  %0 = "zc.all_reduce"(%g) <{kind = #zc<reduce sum>, ranks = 2 : i64}> : (tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @f(%s: tensor<5xf32>) {
  // expected-error @+1 {{'zc.all_gather_start' op handle must be waited on by exactly one zc.wait}}
  %h = zc.all_gather_start %s ranks 2 : tensor<5xf32> -> !zc.async<tensor<10xf32>>
  return
}

// -----

func.func @f(%s: tensor<5xf32>) {
  // expected-error @+1 {{'zc.all_gather_start' op gathered axis 0 (12) must be 2 ranks x shard axis 0 (5)}}
  %h = zc.all_gather_start %s ranks 2 : tensor<5xf32> -> !zc.async<tensor<12xf32>>
  %0 = zc.wait %h : !zc.async<tensor<12xf32>>
  return
}

// -----

func.func @f(%g: tensor<10xf32>) {
  // expected-error @+1 {{'zc.reduce_scatter_start' op handle must be waited on by exactly one zc.wait}}
  %h = zc.reduce_scatter_start avg %g ranks 2 : tensor<10xf32> -> !zc.async<tensor<5xf32>>
  %0 = zc.wait %h : !zc.async<tensor<5xf32>>
  %1 = zc.wait %h : !zc.async<tensor<5xf32>>
  return
}

// -----

func.func @f(%g: tensor<10xf32>) {
  // expected-error @+1 {{'zc.all_reduce_start' op handle must produce the input's type 'tensor<10xf32>', got 'tensor<5xf32>'}}
  %h = zc.all_reduce_start sum %g ranks 2 : tensor<10xf32> -> !zc.async<tensor<5xf32>>
  %0 = zc.wait %h : !zc.async<tensor<5xf32>>
  return
}

// -----

func.func @f(%h: !zc.async<tensor<5xf32>>) {
  // expected-error @+1 {{'zc.wait' op handle must come from a zc.*_start op}}
  %0 = zc.wait %h : !zc.async<tensor<5xf32>>
  return
}

// -----

func.func @f(%s: tensor<5xf32>, %c: i1) {
  %h = zc.all_gather_start %s ranks 2 : tensor<5xf32> -> !zc.async<tensor<10xf32>>
  scf.if %c {
    // expected-error @+1 {{'zc.wait' op must be in the same block as its zc.*_start op}}
    %0 = zc.wait %h : !zc.async<tensor<10xf32>>
  }
  return
}

// -----

func.func @f(%s: tensor<5xf32>) {
  %full = zc.all_gather %s ranks 2 : tensor<5xf32> -> tensor<10xf32>
  // expected-error @+1 {{'zc.release' op must be the last use of its operand, but 'zc.relu' uses it afterwards}}
  zc.release %full : tensor<10xf32>
  // expected-note @+1 {{later use here}}
  %0 = zc.relu %full : tensor<10xf32>
  return
}

// -----

func.func @f(%s: tensor<5xf32>) {
  %full = zc.all_gather %s ranks 2 : tensor<5xf32> -> tensor<10xf32>
  // expected-error @+1 {{'zc.release' op must be the last use of its operand, but 'zc.release' uses it afterwards}}
  zc.release %full : tensor<10xf32>
  // expected-note @+1 {{later use here}}
  zc.release %full : tensor<10xf32>
  return
}

// -----

func.func @f(%s: tensor<5xi32>) {
  // expected-error @+1 {{'zc.release' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type values, but got 'tensor<5xi32>'}}
  zc.release %s : tensor<5xi32>
  return
}

// -----

// --- Gradient and optimizer state ----------------------------------------------

zc.param @w : tensor<4x3xf32> = #zc.zeros
// expected-error @+1 {{'zc.state' op shape of 'tensor<3x4xf32>' differs from parameter @w declared as 'tensor<4x3xf32>'}}
zc.state @w.m : tensor<3x4xf32> of @w

// -----

zc.param @w : tensor<4x3xf32> = #zc.zeros
func.func @f(%g: tensor<4x4xf32>) {
  // expected-error @+1 {{'zc.grad_accumulate' op type 'tensor<4x4xf32>' differs from parameter '@w' declared as 'tensor<4x3xf32>'}}
  zc.grad_accumulate @w, %g : tensor<4x4xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'zc.grad_ref' op '@nope' does not name a zc.param}}
  %g = zc.grad_ref @nope : tensor<4xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'zc.grad_zero' op '@nope' does not name a zc.param}}
  zc.grad_zero @nope
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{'zc.grad_norm' op has 1 gradients but 2 weights}}
  %norm, %coef = zc.grad_norm %g {max_norm = 1.0 : f64, weights = [1.0, 0.5]} : tensor<4xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{'zc.grad_norm' op weights must be positive}}
  %norm, %coef = zc.grad_norm %g {max_norm = 1.0 : f64, weights = [0.0]} : tensor<4xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{'zc.grad_norm' op max_norm must be >= 0 (0: no clipping), got -1}}
  %norm, %coef = zc.grad_norm %g {max_norm = -1.0 : f64, weights = [1.0]} : tensor<4xf32>
  return
}

// -----

zc.param @w : tensor<4xf32> = #zc.zeros
zc.param @v : tensor<4xf32> = #zc.zeros
zc.state @v.m : tensor<4xf32> of @v
zc.state @w.v : tensor<4xf32> of @w
func.func @f(%g: tensor<4xf32>, %lr: f64, %step: i64) {
  // expected-error @+1 {{'zc.adamw' op state '@v.m' belongs to @v, not @w}}
  zc.adamw @w, %g state(@v.m, @w.v) lr %lr step %step {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0} : tensor<4xf32>
  return
}

// -----

zc.param @w : tensor<4xbf16> = #zc.zeros
zc.state @w.m : tensor<4xf32> of @w
zc.state @w.v : tensor<4xf32> of @w
func.func @f(%g: tensor<4xbf16>, %lr: f64, %step: i64) {
  // expected-error @+1 {{'zc.adamw' op parameter @w is stored in 'bf16': its update needs an f32 master state (master(@...))}}
  zc.adamw @w, %g state(@w.m, @w.v) lr %lr step %step {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0} : tensor<4xbf16>
  return
}

// -----

zc.param @w : tensor<4xf32> = #zc.zeros
zc.state @w.m : tensor<4xf32> of @w
zc.state @w.master : tensor<4xf32> of @w
func.func @f(%g: tensor<4xf32>, %lr: f64) {
  // expected-error @+1 {{'zc.sgd' op parameter @w is f32: it is its own master, name none}}
  zc.sgd @w, %g state(@w.m) master(@w.master) lr %lr {momentum = 0.9, weight_decay = 0.0} : tensor<4xf32>
  return
}

// -----

zc.param @w : tensor<4xbf16> = #zc.zeros
zc.param @v : tensor<4xbf16> = #zc.zeros
zc.state @w.m : tensor<4xf32> of @w
zc.state @v.master : tensor<4xf32> of @v
func.func @f(%g: tensor<4xbf16>, %lr: f64) {
  // expected-error @+1 {{'zc.sgd' op state '@v.master' belongs to @v, not @w}}
  zc.sgd @w, %g state(@w.m) master(@v.master) lr %lr {momentum = 0.9, weight_decay = 0.0} : tensor<4xbf16>
  return
}

// -----

zc.param @w : tensor<4xf32> = #zc.zeros
func.func @f(%g: tensor<4xf32>, %lr: f64) {
  // expected-error @+1 {{'zc.sgd' op '@w.buf' does not name a zc.state}}
  zc.sgd @w, %g state(@w.buf) lr %lr {momentum = 0.9, weight_decay = 0.0} : tensor<4xf32>
  return
}

// -----

zc.param @w : tensor<4xf32> = #zc.zeros
func.func @f() {
  // expected-error @+1 {{'zc.gather_param' op parameter @w is stored whole: read it with zc.param_ref}}
  %w = zc.gather_param @w : tensor<4xf32>
  return
}

// -----

zc.param @w : tensor<4xf32> = #zc.zeros {zc.shards = 2 : i64, zc.shard_param}
func.func @f() {
  // expected-error @+1 {{'zc.all_gather_param' op parameter @w must be stored whole and updated shard-wise (zc.shards, no zc.shard_param)}}
  zc.all_gather_param @w
  return
}

// -----

zc.param @w : tensor<3x5xf32> = #zc.zeros {zc.shards = 2 : i64, zc.shard_grad}
func.func @f(%g: tensor<3x5xf32>) {
  // expected-error @+1 {{'zc.grad_accumulate' op type 'tensor<3x5xf32>' differs from the shard 'tensor<8xf32>' of parameter '@w' (split over 2 ranks)}}
  zc.grad_accumulate @w, %g : tensor<3x5xf32>
  return
}

// -----

zc.param @w : tensor<3x5xf32> = #zc.zeros {zc.shards = 2 : i64}
// expected-error @+1 {{'zc.state' op shape of 'tensor<3x5xf32>' differs from parameter @w declared as 'tensor<3x5xf32>' (its shard)}}
zc.state @w.m : tensor<3x5xf32> of @w

// -----

func.func @f(%x: tensor<15xf32>) {
  // expected-error @+1 {{'zc.reduce_scatter' op}}
  %s = zc.reduce_scatter avg %x ranks 2 : tensor<15xf32> -> tensor<7xf32>
  return
}

// -----

func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'zc.pack' op bucket of these tensors over 2 ranks is 'tensor<16xf32>', got 'tensor<15xf32>'}}
  %p = zc.pack %a, %b ranks 2 : tensor<4x3xf32>, tensor<3xf32> -> tensor<15xf32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>, %b: tensor<3xbf16>) {
  // expected-error @+1 {{'zc.pack' op}}
  %p = zc.pack %a, %b ranks 1 : tensor<4xf32>, tensor<3xbf16> -> tensor<7xf32>
  return
}

// -----

func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'zc.unpack' op bucket of these tensors over 1 ranks is 'tensor<9xf32>', got 'tensor<8xf32>'}}
  %a, %b = zc.unpack %x ranks 1 : tensor<8xf32> -> tensor<6xf32>, tensor<3xf32>
  return
}

// -----

zc.param @w : tensor<4x3xf32> = #zc.zeros
func.func @f() {
  // expected-error @+1 {{'zc.pack_shards' op parameter @w is not partitioned over 1 ranks}}
  %own = zc.pack_shards [@w] : tensor<12xf32>
  return
}

// -----

zc.param @w : tensor<4x3xf32> = #zc.zeros {zc.shards = 2 : i64, zc.shard_param}
func.func @f(%all: tensor<12xf32>) {
  // expected-error @+1 {{'zc.unpack_params' op parameter @w is stored as a shard, not whole}}
  zc.unpack_params %all ranks 2 into [@w] : tensor<12xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'zc.matmul_bias' op}}
  %y = zc.matmul_bias %x, %w, %b : tensor<4x8xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'zc.matmul_bias_gelu' op pre and result must have one type}}
  %pre, %a = zc.matmul_bias_gelu %x, %w, %b : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xbf16>, tensor<4x16xf32>
  return
}

// -----

func.func @f(%g: tensor<4x8xf32>, %w: tensor<16x8xf32>, %pre: tensor<4x16xf32>) {
  // expected-error @+1 {{'zc.matmul_dgelu_bgrad' op contracting sizes differ: lhs has 8, rhs has 16}}
  %dpre, %db = zc.matmul_dgelu_bgrad %g, %w, %pre : tensor<4x8xf32>, tensor<16x8xf32>, tensor<4x16xf32> -> tensor<4x16xf32>, tensor<16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>, %w: tensor<16x4xf32>, %labels: tensor<2x4xi32>, %seed: tensor<f32>) {
  // expected-error @+1 {{'zc.matmul_cross_entropy' op contracting sizes differ: input has 8 channels, weight 4}}
  %l, %dx, %dw, %ws = zc.matmul_cross_entropy %x, %w, %labels, %seed transpose_weight chunk_rows 4 : tensor<2x4x8xf32>, tensor<16x4xf32>, tensor<2x4xi32> -> tensor<320xi8>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %labels: tensor<8xi32>, %seed: tensor<f32>) {
  // expected-error @+1 {{'zc.matmul_cross_entropy' op labels shape 'tensor<8xi32>' must be the input shape without its channel axis}}
  %l, %dx, %dw, %ws = zc.matmul_cross_entropy %x, %w, %labels, %seed transpose_weight chunk_rows 4 : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<8xi32> -> tensor<320xi8>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %labels: tensor<2x4xi32>, %seed: tensor<f32>) {
  // expected-error @+1 {{'zc.matmul_cross_entropy' op chunk_rows must be in [1, 8], got 9}}
  %l, %dx, %dw, %ws = zc.matmul_cross_entropy %x, %w, %labels, %seed transpose_weight chunk_rows 9 : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32> -> tensor<320xi8>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %labels: tensor<2x4xi32>, %seed: tensor<f32>) {
  // expected-error @+1 {{'zc.matmul_cross_entropy' op workspace must be 'tensor<320xi8>' for these shapes and chunk, got 'tensor<64xi8>'}}
  %l, %dx, %dw, %ws = zc.matmul_cross_entropy %x, %w, %labels, %seed transpose_weight chunk_rows 4 : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32> -> tensor<64xi8>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>, %w: tensor<16x4xf32>, %labels: tensor<2x4xi32>) {
  // expected-error @+1 {{'zc.matmul_cross_entropy_loss' op contracting sizes differ: input has 8 channels, weight 4}}
  %l, %ws = zc.matmul_cross_entropy_loss %x, %w, %labels transpose_weight chunk_rows 4 : tensor<2x4x8xf32>, tensor<16x4xf32>, tensor<2x4xi32> -> tensor<320xi8>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %labels: tensor<2x4xi32>) {
  // expected-error @+1 {{'zc.matmul_cross_entropy_loss' op chunk_rows must be in [1, 8], got 0}}
  %l, %ws = zc.matmul_cross_entropy_loss %x, %w, %labels transpose_weight chunk_rows 0 : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<2x4xi32> -> tensor<320xi8>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xbf16>, %w: tensor<16x8xbf16>, %labels: tensor<2x4xi32>) {
  // expected-error @+1 {{'zc.matmul_cross_entropy_loss' op workspace must be 'tensor<192xi8>' for these shapes and chunk, got 'tensor<960xi8>'}}
  %l, %ws = zc.matmul_cross_entropy_loss %x, %w, %labels transpose_weight chunk_rows 4 : tensor<2x4x8xbf16>, tensor<16x8xbf16>, tensor<2x4xi32> -> tensor<960xi8>
  return
}

// -----

module attributes {zc.offload = {tier = "nvme", slots = 2, slot_bytes = 8192}} {
  zc.param @w : tensor<64x32xf32> = #zc.zeros
  zc.state @w.exp_avg : tensor<64x32xf32> of @w
  func.func @f() {
    // expected-error @+1 {{'zc.swap_in' op @w.exp_avg is not on the NVMe tier (zc.tier = "nvme")}}
    zc.swap_in @w.exp_avg[0, 1024] slot 0 at 0
    return
  }
}

// -----

module attributes {zc.offload = {tier = "nvme", slots = 2, slot_bytes = 8192}} {
  zc.param @w : tensor<64x32xf32> = #zc.zeros
  zc.state @w.exp_avg : tensor<64x32xf32> of @w {zc.tier = "nvme"}
  func.func @f() {
    // expected-error @+1 {{'zc.swap_out' op first (512) x 4 bytes and at (0) must be multiples of 4096 (O_DIRECT)}}
    zc.swap_out @w.exp_avg[512, 1024] slot 0 at 0
    return
  }
}

// -----

module attributes {zc.offload = {tier = "nvme", slots = 2, slot_bytes = 8192}} {
  zc.param @w : tensor<64x32xf32> = #zc.zeros
  zc.state @w.exp_avg : tensor<64x32xf32> of @w {zc.tier = "nvme"}
  func.func @f() {
    // expected-error @+1 {{'zc.swap_in' op elements [1024, 3072) are outside @w.exp_avg's 2048}}
    zc.swap_in @w.exp_avg[1024, 2048] slot 0 at 0
    return
  }
}

// -----

module attributes {zc.offload = {tier = "nvme", slots = 2, slot_bytes = 8192}} {
  zc.param @w : tensor<64x32xf32> = #zc.zeros
  zc.state @w.exp_avg : tensor<64x32xf32> of @w {zc.tier = "nvme"}
  func.func @f() {
    // expected-error @+1 {{'zc.swap_in' op ends at byte 12288 of its slot, past the slot's 8192}}
    zc.swap_in @w.exp_avg[0, 1024] slot 1 at 8192
    return
  }
}

// -----

module attributes {zc.offload = {tier = "nvme", slots = 2, slot_bytes = 8192}} {
  func.func @f() {
    // expected-error @+1 {{'zc.swap_wait' op slot 2 is outside the module's 2 swap slots}}
    zc.swap_wait slot 2
    return
  }
}

// -----

func.func @f() {
  // expected-error @+1 {{'zc.swap_wait' op needs the module's zc.offload = {slots, slot_bytes}}}
  zc.swap_wait slot 0
  return
}

// -----

module attributes {zc.offload = {tier = "nvme", slots = 2, slot_bytes = 8192}} {
  zc.param @w : tensor<64x32xf32> = #zc.zeros
  zc.state @w.m : tensor<64x32xf32> of @w {zc.tier = "nvme"}
  zc.state @w.v : tensor<64x32xf32> of @w {zc.tier = "nvme"}
  func.func @f(%g: tensor<64x32xf32>, %lr: f64, %step: i64) {
    // expected-error @+1 {{'zc.adamw' op state @w.m is on the NVMe tier: the update reads it from a swap slot (swap_slot)}}
    zc.adamw @w, %g state(@w.m, @w.v) lr %lr step %step {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0} : tensor<64x32xf32>
    return
  }
}

// -----

module attributes {zc.offload = {tier = "nvme", slots = 2, slot_bytes = 8192}} {
  zc.param @w : tensor<64x32xf32> = #zc.zeros
  zc.state @w.m : tensor<64x32xf32> of @w {zc.tier = "nvme"}
  zc.state @w.v : tensor<64x32xf32> of @w {zc.tier = "nvme"}
  func.func @f(%g: tensor<64x32xf32>, %lr: f64, %step: i64) {
    // expected-error @+1 {{'zc.adamw' op chunk must be [first, count] inside the 2048 elements}}
    zc.adamw @w, %g state(@w.m, @w.v) lr %lr step %step {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0, chunk = array<i64: 1024, 2048>, swap_slot = 0 : i64} : tensor<64x32xf32>
    return
  }
}

// -----

module attributes {zc.offload = {tier = "nvme", slots = 2, slot_bytes = 4096}} {
  zc.param @w : tensor<64x32xf32> = #zc.zeros
  zc.state @w.m : tensor<64x32xf32> of @w {zc.tier = "nvme"}
  zc.state @w.v : tensor<64x32xf32> of @w {zc.tier = "nvme"}
  func.func @f(%g: tensor<64x32xf32>, %lr: f64, %step: i64) {
    // expected-error @+1 {{'zc.adamw' op ends at byte 8192 of its slot, past the slot's 4096}}
    zc.adamw @w, %g state(@w.m, @w.v) lr %lr step %step {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0, chunk = array<i64: 0, 1024>, swap_slot = 0 : i64} : tensor<64x32xf32>
    return
  }
}

// -----

// --- Activations in host memory (zcc-offload-activations) ----------------------

func.func @reload_first() {
  // expected-error @+1 {{'zc.reload_activation' op slot 0 has no zc.offload_activation before it in its block}}
  %0 = zc.reload_activation slot 0 : tensor<4xf32>
  return
}

// -----

func.func @reload_other_type(%x: tensor<4xf32>) {
  zc.offload_activation %x to slot 2 : tensor<4xf32>
  // expected-error @+1 {{'zc.reload_activation' op reloads slot 2 as 'tensor<8xf32>' but it holds 'tensor<4xf32>'}}
  %0 = zc.reload_activation slot 2 : tensor<8xf32>
  return
}

// -----

func.func @slot_twice(%x: tensor<4xf32>) {
  zc.offload_activation %x to slot 1 : tensor<4xf32>
  // expected-error @+1 {{'zc.offload_activation' op slot 1 is already used by an earlier zc.offload_activation}}
  zc.offload_activation %x to slot 1 : tensor<4xf32>
  return
}

// -----

func.func @f(%g: tensor<2x6xi32>) {
  // 6 tokens are not 2 x 2 chunks.
  // expected-error @+1 {{'zc.cp_shard' op 'tensor<2x3xi32>' must be 'tensor<2x6xi32>' with axis 1 holding 2 of its 2 x 2 chunks}}
  %0 = zc.cp_shard %g ranks 2 axis 1 : tensor<2x6xi32> -> tensor<2x3xi32>
  return
}

// -----

func.func @f(%g: tensor<4x4xf32>) {
  // expected-error @+1 {{'zc.cp_unshard' op axis 2 is outside 'tensor<8x4xf32>'}}
  %0 = zc.cp_unshard %g ranks 2 axis 2 : tensor<4x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x6xf32>) {
  // 3 heads do not split over 2 context ranks.
  // expected-error @+1 {{'zc.cp_to_heads' op 3 heads of 'tensor<2x4x6xf32>' must split over 2 context ranks, and the tokens into two chunks}}
  %0 = zc.cp_to_heads %x ranks 2 heads 3 : tensor<2x4x6xf32> -> tensor<2x8x3xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'zc.cp_to_tokens' op 'tensor<2x8x8xf32>' (this rank's tokens) and 'tensor<2x8x4xf32>' (this rank's heads) do not match over 2 context ranks}}
  %0 = zc.cp_to_tokens %x ranks 2 heads 4 : tensor<2x8x4xf32> -> tensor<2x8x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x1000xf32>) {
  // expected-error @+1 {{'zc.quantize' op a row of 1000 values in blocks of 128 at 8 bits is 1032 bytes, got 1000}}
  %q = zc.quantize %x block 128 bits 8 : tensor<2x1000xf32> -> tensor<2x1000xi8>
  return
}

// -----

func.func @f(%x: tensor<2x1000xf32>) {
  // expected-error @+1 {{'zc.quantize' op a 4-bit block must hold an even number of values}}
  %q = zc.quantize %x block 127 bits 4 : tensor<2x1000xf32> -> tensor<2x1032xi8>
  return
}

// -----

func.func @f(%q: tensor<2x1032xi8>) {
  // expected-error @+1 {{'zc.dequantize' op bits must be 8 or 4, got 2}}
  %y = zc.dequantize %q block 128 bits 2 : tensor<2x1032xi8> -> tensor<2x1000xf32>
  return
}

// -----

func.func @f(%x: tensor<3x8xi8>) {
  // expected-error @+1 {{'zc.all_to_all' op the leading axis of 'tensor<3x8xi8>' must be 2 equal blocks}}
  %y = zc.all_to_all %x ranks 2 on node : tensor<3x8xi8>
  return
}

// -----

zc.param @w : tensor<4x6xf32> = #zc.zeros {zc.shards = 4 : i64, zc.shard_param}
// expected-error @+1 {{'zc.state' op a secondary shard must be whole shards of a ZeRO-3 parameter's 6 elements}}
zc.state @w.secondary : tensor<13xf32> of @w secondary

// -----

zc.param @w : tensor<4x6xf32> = #zc.zeros {zc.shards = 4 : i64, zc.shard_param}
zc.state @w.secondary : tensor<12xf32> of @w secondary
func.func @f(%all: tensor<20xf32>) {
  // expected-error @+1 {{'zc.keep_secondary' op the secondary shards hold 12 elements, 1/2 of 'tensor<20xf32>' must}}
  zc.keep_secondary %all ranks 4 group 2 into [@w.secondary] : tensor<20xf32>
  return
}

// -----

zc.param @w : tensor<4x6xf32> = #zc.zeros {zc.shards = 4 : i64, zc.shard_param}
zc.state @w.secondary : tensor<12xf32> of @w secondary
func.func @f() {
  // expected-error @+1 {{'zc.pack_secondary' op groups of 3 ranks do not divide 4}}
  %own = zc.pack_secondary [@w.secondary] ranks 4 group 3 : tensor<12xf32>
  return
}

// -----

func.func @f(%w: tensor<64x32xf32>, %gate: tensor<f32>) {
  // expected-error @+1 {{'zc.fake_quantize' op 3 groups do not divide the 2048 values}}
  %q = zc.fake_quantize %w, %gate bits 8 groups 3 : tensor<64x32xf32>
  return
}

// -----

func.func @f(%w: tensor<64x32xf32>, %gate: tensor<f32>) {
  // expected-error @+1 {{'zc.fake_quantize' op takes `groups G` or `per_row`, one of them}}
  %q = zc.fake_quantize %w, %gate bits 8 groups 2 per_row : tensor<64x32xf32>
  return
}

// -----

func.func @f(%w: tensor<64x32xf32>, %gate: tensor<f32>) {
  // expected-error @+1 {{'zc.fake_quantize' op takes `groups G` or `per_row`, one of them}}
  %q = zc.fake_quantize %w, %gate bits 8 : tensor<64x32xf32>
  return
}

// -----

func.func @f(%w: tensor<64x32xf32>, %gate: tensor<f32>) {
  // expected-error @+1 {{'zc.fake_quantize' op `columns` takes `groups G` dividing the last axis of 'tensor<64x32xf32>'}}
  %q = zc.fake_quantize %w, %gate bits 8 groups 64 columns : tensor<64x32xf32>
  return
}

// -----

func.func @f(%w: tensor<64x32xf32>, %gate: tensor<f32>) {
  // expected-error @+1 {{'zc.fake_quantize' op bits must be 2 to 8}}
  %q = zc.fake_quantize %w, %gate bits 1 groups 1 : tensor<64x32xf32>
  return
}

// -----

func.func @f(%x: tensor<3x8xi8>) {
  // expected-error @+1 {{'zc.all_to_all_start' op the leading axis of 'tensor<3x8xi8>' must be 2 equal blocks}}
  %h = zc.all_to_all_start %x ranks 2 on node : tensor<3x8xi8> -> !zc.async<tensor<3x8xi8>>
  %y = zc.wait %h : !zc.async<tensor<3x8xi8>>
  return
}

// -----

zc.param @w : tensor<64x32xf32> = #zc.zeros
// expected-error @+1 {{'zc.state' op a mask keeps a fraction in (0, 1] of the weights, got 1.5}}
zc.state @w.sparse_mask : tensor<64x32xf32> of @w mask keep 1.5

// -----

zc.param @w : tensor<64x32xf32> = #zc.zeros
// expected-error @+1 {{'zc.state' op a mask is the whole parameter's shape (a row mask: its axis' size) in f32 (every rank holds all of it), got 'tensor<2048xf32>'}}
zc.state @w.sparse_mask : tensor<2048xf32> of @w mask keep 0.5

// -----

zc.param @w : tensor<64x32xf32> = #zc.zeros
zc.state @w.exp_avg : tensor<64x32xf32> of @w
func.func @f(%w: tensor<64x32xf32>, %on: tensor<f32>) {
  // expected-error @+1 {{'zc.apply_mask' op @w.exp_avg is not a mask (zc.state ... mask keep R)}}
  %m = zc.apply_mask %w, %on mask @w.exp_avg : tensor<64x32xf32>
  return
}

// -----

zc.param @w : tensor<64x32xf32> = #zc.zeros
zc.state @w.sparse_mask : tensor<64x32xf32> of @w mask keep 0.5
func.func @f(%w: tensor<32x64xf32>, %on: tensor<f32>) {
  // expected-error @+1 {{'zc.apply_mask' op mask 'tensor<64x32xf32>' differs from the input's shape 'tensor<32x64xf32>'}}
  %m = zc.apply_mask %w, %on mask @w.sparse_mask : tensor<32x64xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'zc.step_gate' op attribute 'from' failed to satisfy constraint}}
  %on = zc.step_gate from -1 : tensor<f32>
  return
}

// -----

zc.param @w : tensor<64x32xf32> = #zc.zeros
// expected-error @+1 {{'zc.state' op a mask is the whole parameter's shape (a row mask: its axis' size) in f32 (every rank holds all of it), got 'tensor<64xf32>'}}
zc.state @w.row_mask : tensor<64xf32> of @w mask keep 0.5 rows 1

// -----

zc.param @w : tensor<64x32xf32> = #zc.zeros
// expected-error @+1 {{'zc.state' op `rows` belongs to a mask}}
zc.state @w.exp_avg : tensor<64x32xf32> of @w rows 0

// -----

zc.param @w : tensor<64x32xf32> = #zc.zeros
zc.state @w.row_mask : tensor<64xf32> of @w mask keep 0.5 rows 0
func.func @f(%w: tensor<64x32xf32>, %on: tensor<f32>) {
  // expected-error @+1 {{'zc.apply_mask' op @w.row_mask is a row mask: name the input's axis it covers}}
  %m = zc.apply_mask %w, %on mask @w.row_mask : tensor<64x32xf32>
  return
}

// -----

zc.param @w : tensor<64x32xf32> = #zc.zeros
zc.state @w.row_mask : tensor<64xf32> of @w mask keep 0.5 rows 0
func.func @f(%w: tensor<64x32xf32>, %on: tensor<f32>) {
  // expected-error @+1 {{'zc.apply_mask' op axis 1 of 'tensor<64x32xf32>' needs a row mask of its size, got 'tensor<64xf32>'}}
  %m = zc.apply_mask %w, %on mask @w.row_mask axis 1 : tensor<64x32xf32>
  return
}

// -----

// --- Mixture of experts ----------------------------------------------------------

func.func @f(%l: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'zc.moe_route' op top_k 5 exceeds the 4 experts}}
  %w, %e, %r, %o = zc.moe_route %l top_k 5 : tensor<2x4x4xf32> -> tensor<2x4x5xf32>, tensor<2x4x5xi32>, tensor<2x4x5xi32>, tensor<5xi32>
  return
}

// -----

func.func @f(%l: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'zc.moe_route' op offsets must be 'tensor<5xi32>', got 'tensor<4xi32>'}}
  %w, %e, %r, %o = zc.moe_route %l top_k 2 : tensor<2x4x4xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<4xi32>
  return
}

// -----

func.func @f(%l: tensor<2x4x4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'zc.moe_route' op bias must be 'tensor<4xf32>', got 'tensor<3xf32>'}}
  %w, %e, %r, %o = zc.moe_route %l bias %b : tensor<3xf32> top_k 2 : tensor<2x4x4xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<5xi32>
  return
}

// -----

func.func @f(%l: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'zc.moe_route' op scale must be positive and finite}}
  %w, %e, %r, %o = zc.moe_route %l top_k 2 scale -1.0 : tensor<2x4x4xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<5xi32>
  return
}

// -----

func.func @f(%dw: tensor<2x4x3xf32>, %l: tensor<2x4x4xf32>, %e: tensor<2x4x2xi32>) {
  // expected-error @+1 {{'zc.moe_route_grad' op grad must be 'tensor<2x4x2xf32>', got 'tensor<2x4x3xf32>'}}
  %d = zc.moe_route_grad %dw, %l, %e, %e top_k 2 : tensor<2x4x3xf32>, tensor<2x4x4xf32>, tensor<2x4x2xi32>
  return
}

// -----

func.func @f(%l: tensor<2x4x6xf32>) {
  // expected-error @+1 {{'zc.moe_route' op groups 4 must divide the 6 experts into groups of at least 2 (a group scores its two best)}}
  %w, %e, %r, %o = zc.moe_route %l top_k 2 groups 4 topk_groups 2 : tensor<2x4x6xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<7xi32>
  return
}

// -----

func.func @f(%l: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'zc.moe_route' op top_k 3 exceeds the 2 experts of the topk_groups 1 groups}}
  %w, %e, %r, %o = zc.moe_route %l top_k 3 groups 4 topk_groups 1 : tensor<2x4x8xf32> -> tensor<2x4x3xf32>, tensor<2x4x3xi32>, tensor<2x4x3xi32>, tensor<9xi32>
  return
}

// -----

func.func @f(%l: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'zc.moe_route' op groups and topk_groups come together (DeepSeek-V3's n_group and topk_group)}}
  %w, %e, %r, %o = zc.moe_route %l top_k 2 groups 4 : tensor<2x4x8xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<9xi32>
  return
}

// -----

func.func @f(%l: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'zc.moe_route' op capacity_factor must be positive and finite (leave it out for dropless routing)}}
  %w, %e, %r, %o = zc.moe_route %l top_k 2 capacity_factor 0.0 : tensor<2x4x4xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<5xi32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>, %l: tensor<2x4x4xf32>) {
  %w, %e, %r, %o = zc.moe_route %l top_k 2 capacity_factor 0.5 : tensor<2x4x4xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<5xi32>
  // expected-error @+1 {{'zc.moe_dispatch' op the dispatched rows must be 'tensor<8x8xf32>', got 'tensor<16x8xf32>'}}
  %xs = zc.moe_dispatch %x, %r : tensor<2x4x8xf32>, tensor<2x4x2xi32> -> tensor<16x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>, %l: tensor<2x4x4xf32>) {
  %w, %e, %r, %o = zc.moe_route %l top_k 2 : tensor<2x4x4xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<5xi32>
  // expected-error @+1 {{'zc.moe_dispatch' op the dispatched rows must be 'tensor<16x8xf32>', got 'tensor<8x8xf32>'}}
  %xs = zc.moe_dispatch %x, %r : tensor<2x4x8xf32>, tensor<2x4x2xi32> -> tensor<8x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>, %r: tensor<2x4x2xi32>) {
  // expected-error @+1 {{'zc.moe_dispatch' op the dispatched rows must be 'tensor<16x8xf32>', got 'tensor<20x8xf32>'}}
  %xs = zc.moe_dispatch %x, %r : tensor<2x4x8xf32>, tensor<2x4x2xi32> -> tensor<20x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x5x8xf32>, %r: tensor<2x4x2xi32>) {
  // expected-error @+1 {{'zc.moe_dispatch' op input 'tensor<2x5x8xf32>' and the routing's 'tensor<2x4x2xi32>' must share their leading (token) axes}}
  %xs = zc.moe_dispatch %x, %r : tensor<2x5x8xf32>, tensor<2x4x2xi32> -> tensor<20x8xf32>
  return
}

// -----

func.func @f(%dxs: tensor<16x8xf32>, %r: tensor<2x4x2xi32>) {
  // expected-error @+1 {{'zc.moe_dispatch_grad' op the dispatched rows must be 'tensor<16x6xf32>', got 'tensor<16x8xf32>'}}
  %dx = zc.moe_dispatch_grad %dxs, %r : tensor<16x8xf32>, tensor<2x4x2xi32> -> tensor<2x4x6xf32>
  return
}

// -----

func.func @f(%xs: tensor<16x8xf32>, %w: tensor<4x7x6xf32>, %o: tensor<5xi32>) {
  // expected-error @+1 {{'zc.grouped_matmul' op weight must be [experts, 8, N], got 'tensor<4x7x6xf32>'}}
  %g = zc.grouped_matmul %xs, %w, %o : tensor<16x8xf32>, tensor<4x7x6xf32>, tensor<5xi32> -> tensor<16x6xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8xf32>, %g: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'zc.moe_shared_gate' op gate must be 'tensor<2x4x1xf32>', got 'tensor<2x4x8xf32>'}}
  %y = zc.moe_shared_gate %x, %g : tensor<2x4x8xf32>, tensor<2x4x8xf32>
  return
}

// -----

func.func @f(%dy: tensor<2x4x8xf32>, %x: tensor<2x4x8xf32>, %g: tensor<2x4x2xf32>) {
  // expected-error @+1 {{'zc.moe_shared_gate_grad' op gate must be 'tensor<2x4x1xf32>', got 'tensor<2x4x2xf32>'}}
  %dx, %dg = zc.moe_shared_gate_grad %dy, %x, %g : tensor<2x4x8xf32>, tensor<2x4x2xf32>
  return
}

// -----

func.func @f(%xs: tensor<16x8xf32>, %w: tensor<4x8x6xf32>, %o: tensor<5xi32>) {
  // expected-error @+1 {{'zc.grouped_matmul' op weight must be [experts, N, 8] (transpose_rhs), got 'tensor<4x8x6xf32>'}}
  %g = zc.grouped_matmul %xs, %w, %o transpose_rhs : tensor<16x8xf32>, tensor<4x8x6xf32>, tensor<5xi32> -> tensor<16x8xf32>
  return
}

// -----

func.func @f(%xs: tensor<16x8xf32>, %w: tensor<4x8x6xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{'zc.grouped_matmul' op offsets must be 'tensor<5xi32>', got 'tensor<4xi32>'}}
  %g = zc.grouped_matmul %xs, %w, %o : tensor<16x8xf32>, tensor<4x8x6xf32>, tensor<4xi32> -> tensor<16x6xf32>
  return
}

// -----

func.func @f(%d: tensor<16x5xf32>, %xs: tensor<16x8xf32>, %w: tensor<4x8x6xf32>, %o: tensor<5xi32>) {
  // expected-error @+1 {{'zc.grouped_matmul_grad' op result must be 'tensor<16x6xf32>', got 'tensor<16x5xf32>'}}
  %dxs, %dw = zc.grouped_matmul_grad %d, %xs, %w, %o : tensor<16x5xf32>, tensor<16x8xf32>, tensor<4x8x6xf32>, tensor<5xi32>
  return
}

// -----

func.func @f(%ys: tensor<16x8xf32>, %w: tensor<2x4x2xf32>, %r: tensor<2x4x3xi32>) {
  // expected-error @+1 {{'zc.moe_combine' op rows must be 'tensor<2x4x2xi32>', got 'tensor<2x4x3xi32>'}}
  %y = zc.moe_combine %ys, %w, %r : tensor<16x8xf32>, tensor<2x4x2xf32>, tensor<2x4x3xi32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @f(%dy: tensor<2x4x8xf32>, %ys: tensor<12x8xf32>, %l: tensor<2x4x4xf32>) {
  %w, %e, %r, %o = zc.moe_route %l top_k 2 : tensor<2x4x4xf32> -> tensor<2x4x2xf32>, tensor<2x4x2xi32>, tensor<2x4x2xi32>, tensor<5xi32>
  // expected-error @+1 {{'zc.moe_combine_grad' op the dispatched rows must be 'tensor<16x8xf32>', got 'tensor<12x8xf32>'}}
  %dys, %dw = zc.moe_combine_grad %dy, %ys, %w, %r : tensor<2x4x8xf32>, tensor<12x8xf32>, tensor<2x4x2xf32>, tensor<2x4x2xi32>
  return
}

// -----

func.func @f(%o: tensor<5xi32>) {
  // expected-error @+1 {{'zc.ep_counts' op 4 experts do not divide over 3 expert-parallel ranks}}
  %all, %local = zc.ep_counts %o ranks 3 rows 32 dispatched 16 : tensor<5xi32> -> tensor<3x5xi32>, tensor<2xi32>
  return
}

// -----

func.func @f(%xs: tensor<16x8xf32>, %all: tensor<3x5xi32>) {
  // expected-error @+1 {{'zc.ep_dispatch' op counts must be a zc.ep_counts' `all` [2, experts + 1], got 'tensor<3x5xi32>'}}
  %xr = zc.ep_dispatch %xs, %all ranks 2 : tensor<16x8xf32>, tensor<3x5xi32> -> tensor<32x8xf32>
  return
}

// -----

func.func @f(%yr: tensor<32x6xf32>, %all: tensor<2x5xi32>) {
  // expected-error @+1 {{'zc.ep_combine' op the rows must be [rows, C] on both sides, got 'tensor<16x8xf32>' and 'tensor<32x6xf32>'}}
  %ys = zc.ep_combine %yr, %all ranks 2 : tensor<32x6xf32>, tensor<2x5xi32> -> tensor<16x8xf32>
  return
}

// -----

func.func @f(%xs: tensor<16x8xf32>, %all: tensor<2x5xi32>) {
  // expected-error @+1 {{'zc.ep_dispatch_start' op the rows must be [rows, C] on both sides, got 'tensor<16x8xf32>' and 'tensor<32x6xf32>'}}
  %h = zc.ep_dispatch_start %xs, %all ranks 2 : tensor<16x8xf32>, tensor<2x5xi32> -> !zc.async<tensor<32x6xf32>>
  return
}

// -----

func.func @f(%yr: tensor<32x8xf32>, %all: tensor<3x5xi32>) {
  // expected-error @+1 {{'zc.ep_combine_start' op counts must be a zc.ep_counts' `all` [2, experts + 1], got 'tensor<3x5xi32>'}}
  %h = zc.ep_combine_start %yr, %all ranks 2 : tensor<32x8xf32>, tensor<3x5xi32> -> !zc.async<tensor<16x8xf32>>
  return
}

// -----

func.func @f(%l: tensor<8xf32>, %e: tensor<9xi32>) {
  // expected-error @+1 {{'zc.moe_aux_loss' op logits must be [tokens..., experts], got 'tensor<8xf32>'}}
  %a = zc.moe_aux_loss %l, %e coef 0.01 : tensor<8xf32>, tensor<9xi32> -> tensor<f32>
  return
}

// -----

func.func @f(%d: tensor<f32>, %l: tensor<2x4x4xf32>, %e: tensor<2x5x2xi32>) {
  // expected-error @+1 {{'zc.moe_aux_loss_grad' op experts 'tensor<2x5x2xi32>' must be the routing's choices [tokens..., k] of the 'tensor<2x4x4xf32>' logits}}
  %g = zc.moe_aux_loss_grad %d, %l, %e coef 0.01 : tensor<2x4x4xf32>, tensor<2x5x2xi32>
  return
}

// -----

func.func @f(%l: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'zc.moe_z_loss' op result #0 must be 0D tensor of 32-bit float values}}
  %z = "zc.moe_z_loss"(%l) {coef = 0.001 : f64} : (tensor<2x4x4xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @f(%d: tensor<f32>, %l: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'zc.moe_z_loss_grad' op failed to verify that all of {logits, result} have same type}}
  %g = "zc.moe_z_loss_grad"(%d, %l) {coef = 0.001 : f64} : (tensor<f32>, tensor<2x4x4xf32>) -> tensor<2x4x5xf32>
  return
}
