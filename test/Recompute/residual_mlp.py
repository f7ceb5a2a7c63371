"""Generates residual MLPs in the zc dialect for the recompute tests."""
import sys
def block_model(blocks, d, h, classes=5, rows=4):
    """A residual MLP: blocks of (layernorm, matmul d->h, gelu, matmul h->d, residual add)."""
    lines = []
    for i in range(blocks):
        lines += [f"zc.param @g{i} : tensor<{d}xf32> = #zc.ones", f"zc.param @b{i} : tensor<{d}xf32> = #zc.zeros",
                  f"zc.param @up{i} : tensor<{d}x{h}xf32> = #zc.normal<std = 0.1>",
                  f"zc.param @down{i} : tensor<{h}x{d}xf32> = #zc.normal<std = 0.1>"]
    lines += [f"zc.param @head : tensor<{d}x{classes}xf32> = #zc.normal<std = 0.1>"]
    lines += [f"zc.forward @net(%x: tensor<{rows}x{d}xf32>, %y: tensor<{rows}xi32>) -> tensor<f32> {{"]
    cur = "%x"
    for i in range(blocks):
        lines += [f"  %g{i} = zc.param_ref @g{i} : tensor<{d}xf32>", f"  %b{i} = zc.param_ref @b{i} : tensor<{d}xf32>",
                  f"  %n{i} = zc.layernorm {cur}, %g{i}, %b{i} : tensor<{rows}x{d}xf32>, tensor<{d}xf32>",
                  f"  %up{i} = zc.param_ref @up{i} : tensor<{d}x{h}xf32>",
                  f"  %u{i} = zc.matmul %n{i}, %up{i} : tensor<{rows}x{d}xf32>, tensor<{d}x{h}xf32> -> tensor<{rows}x{h}xf32>",
                  f"  %a{i} = zc.gelu %u{i} : tensor<{rows}x{h}xf32>",
                  f"  %down{i} = zc.param_ref @down{i} : tensor<{h}x{d}xf32>",
                  f"  %o{i} = zc.matmul %a{i}, %down{i} : tensor<{rows}x{h}xf32>, tensor<{h}x{d}xf32> -> tensor<{rows}x{d}xf32>",
                  f"  %r{i} = zc.add {cur}, %o{i} : tensor<{rows}x{d}xf32>"]
        cur = f"%r{i}"
    lines += [f"  %head = zc.param_ref @head : tensor<{d}x{classes}xf32>",
              f"  %l = zc.matmul {cur}, %head : tensor<{rows}x{d}xf32>, tensor<{d}x{classes}xf32> -> tensor<{rows}x{classes}xf32>",
              f"  %loss = zc.cross_entropy %l, %y : tensor<{rows}x{classes}xf32>, tensor<{rows}xi32> -> tensor<f32>",
              "  zc.return %loss : tensor<f32>", "}"]
    return "\n".join(lines) + "\n"
if __name__ == "__main__":
    print(block_model(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
