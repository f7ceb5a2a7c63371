// RUN: zcc-opt %s -split-input-file -zcc-context-parallel="ranks=2 mode=ulysses" -verify-diagnostics

// Tests that what cannot split the sequence is a located error. DeepSpeed-Ulysses needs the heads
// to divide by the context ranks.

zc.param @w : tensor<6x6xf32> = #zc.normal<std = 0.02>
zc.forward @odd_heads(%x: tensor<1x8x6xf32> {zc.input = "features"}, %y: tensor<1x8x6xf32> {zc.input = "values"}) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<6x6xf32>
  %q = zc.matmul %x, %w : tensor<1x8x6xf32>, tensor<6x6xf32> -> tensor<1x8x6xf32>
  // expected-error @+1 {{'zc.causal_attention' op cannot run on a part of the sequence (--cp 2): 3 heads (key/value heads too) do not split over the context ranks (DeepSpeed-Ulysses needs them to)}}
  %a = zc.causal_attention %q, %q, %q heads 3 : tensor<1x8x6xf32>
  %loss = zc.mse %a, %y : tensor<1x8x6xf32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// -----

// A softmax over the tokens (the last axis of a [B, T] view) needs them all.
zc.forward @over_tokens(%x: tensor<2x8xf32> {zc.input = "features"}, %y: tensor<2x8xf32> {zc.input = "values"}) -> tensor<f32> {
  // expected-error @+1 {{'zc.softmax' op cannot run on a part of the sequence (--cp 2): it normalizes over the tokens}}
  %s = zc.softmax %x : tensor<2x8xf32>
  %loss = zc.mse %s, %y : tensor<2x8xf32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}

// -----

// A sequence that does not split into 2 x 2 chunks.
// expected-error @+1 {{'zc.forward' op --cp 2: argument #0 ('tensor<2x6xi32>') has no token axis (axis 1) that splits into 2 x 2 chunks}}
zc.forward @short(%ids: tensor<2x6xi32>, %tgt: tensor<2x6xi32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  zc.return %c : tensor<f32>
}

