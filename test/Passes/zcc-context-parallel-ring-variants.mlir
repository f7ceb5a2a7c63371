// RUN: zcc-opt %s -split-input-file -zcc-context-parallel="ranks=2 mode=ring" -verify-diagnostics
// RUN: zcc-opt %s -split-input-file -zcc-context-parallel="ranks=2 mode=ulysses" | FileCheck %s

// Ring attention computes the plain causal softmax: a window, a cap or a scale of its own is a
// located error naming the mode that runs it. DeepSpeed-Ulysses gives each rank whole sequences
// of its heads, so the op keeps its attributes there.

zc.param @w : tensor<8x8xf32> = #zc.normal<std = 0.02>
// CHECK-LABEL: zc.forward @windowed
zc.forward @windowed(%x: tensor<1x8x8xf32> {zc.input = "features"}, %y: tensor<1x8x8xf32> {zc.input = "values"}) -> tensor<f32> {
  %w = zc.param_ref @w : tensor<8x8xf32>
  %q = zc.matmul %x, %w : tensor<1x8x8xf32>, tensor<8x8xf32> -> tensor<1x8x8xf32>
  // CHECK: zc.causal_attention %{{.+}} heads 1 softcap 3.000000e+01 window 4 : tensor<1x8x4xf32>
  // expected-error @+1 {{'zc.causal_attention' op cannot run on a part of the sequence (--cp 2): ring attention computes the plain causal softmax: a scale, softcap or window needs --cp-mode ulysses}}
  %a = zc.causal_attention %q, %q, %q heads 2 softcap 30.0 window 4 : tensor<1x8x8xf32>
  %loss = zc.mse %a, %y : tensor<1x8x8xf32> -> tensor<f32>
  zc.return %loss : tensor<f32>
}
