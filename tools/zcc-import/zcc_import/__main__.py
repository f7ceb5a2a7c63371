"""zcc-import: writes a PyTorch causal language model as a zc training graph, and its weights.

  zcc-import --hf-config config.json -o model.mlir [--weights-out model.safetensors] [--weights in.safetensors]
  zcc-import --module my_model.py:build -o model.mlir ...
  zcc-import --list-ops

The graph is the model's forward plus the mean cross-entropy of its logits against the next tokens,
for a fixed --batch x --context. Parameter names are the model's state_dict names; the weights file
holds them in f32 (train.bin --init reads it; zcc-ckpt consolidate writes the same names back).
"""
import argparse
import os
import sys
import time


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="zcc-import", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--hf-config", metavar="config.json",
                     help="a Hugging Face transformers configuration (the model is built from it; no hub access)")
    src.add_argument("--module", metavar="file.py:factory",
                     help="factory() returns an nn.Module; forward(tokens [B, T] int64) returns logits [B, T, V]")
    ap.add_argument("-o", "--output", metavar="model.mlir", help="the zc module to write")
    ap.add_argument("--batch", type=int, default=8, help="global batch (sequences a step; default 8)")
    ap.add_argument("--context", type=int, default=64, help="sequence length (default 64)")
    ap.add_argument("--weights", metavar="FILE.safetensors", help="start from these weights (state_dict names)")
    ap.add_argument("--weights-out", metavar="FILE.safetensors",
                    help="write the initial weights (the model's own initialization from --seed, or --weights) "
                         "for train.bin --init")
    ap.add_argument("--seed", type=int, default=0, help="torch.manual_seed before the model initializes (default 0)")
    ap.add_argument("--name", default=None, help="the zc.forward's name (default: the model class)")
    ap.add_argument("--moe-aux-loss", choices=["pooled", "per-layer"], default="pooled",
                    help="a MoE config's load-balancing loss (output_router_logits): pooled, Hugging Face's over "
                         "every layer's tokens at once (default); per-layer, each layer's summed, as Megatron-LM "
                         "and DeepSpeed-MoE (pipelines: pooled ties every MoE layer to one stage)")
    ap.add_argument("--list-ops", action="store_true", help="print what the importer maps, and exit")
    args = ap.parse_args(argv)
    if not args.list_ops and not (args.hf_config or args.module):
        ap.error("one of --hf-config or --module is required")
    if not args.list_ops and not args.output:
        ap.error("-o model.mlir is required")
    if args.batch < 1 or args.context < 2:
        ap.error("--batch must be >= 1 and --context >= 2")
    return args


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    from .lower import MAPPED
    if args.list_ops:
        width = max(len(k) for k in MAPPED)
        for aten_ops, zc_ops in MAPPED.items():
            print(f"{aten_ops:<{width}}  ->  {zc_ops}")
        return 0
    return run_with_deep_stack(args)


def run_with_deep_stack(args):
    """run() in a thread with a large stack: the lowering recurses from the loss back along the
    residual stream, a few frames per op (an 80-layer model goes thousands of frames deep)."""
    import threading
    from .source import ImportError_
    outcome = {"rc": 1}

    def body():
        try:
            run(args)
            outcome["rc"] = 0
        except ImportError_ as e:
            print(f"zcc-import: error: {e}", file=sys.stderr)
        except BaseException as e:  # an importer bug: keep the traceback
            outcome["error"] = e

    sys.setrecursionlimit(200000)
    threading.stack_size(1 << 30)
    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["rc"]


def run(args):
    import torch
    from . import capture as cap_mod
    from . import lower as low
    from .mlir import module_text
    from .source import HuggingFaceSource, ModuleSource, skeleton, tied_aliases, weighted

    started = time.time()
    source = HuggingFaceSource(args.hf_config, args.moe_aux_loss) if args.hf_config else ModuleSource(args.module)
    model = skeleton(source)
    aliases = tied_aliases(model)
    model_class = type(model).__name__
    captured = cap_mod.capture(source, model, args.batch, args.context)
    lowering = low.Lowering(captured)
    loss_node = next(n for n in captured.graph.nodes if n.op == "output").args[0][0]
    lowering.check_supported(loss_node)
    loss = lowering.value(loss_node)
    if not hasattr(loss, "shape") or loss.shape != ():
        raise ImportError_("the loss is not a scalar")

    weights = None
    if args.weights_out:
        real = weighted(source, args.seed, args.weights)
        # A buffer the capture made a parameter (a MoE router's balancing bias, moe.py) too.
        tensors = {name: b for name, b in real.named_buffers() if name in captured.param_shapes}
        tensors.update(real.named_parameters())
        weights = {name: t.detach().float().contiguous() for name, t in tensors.items()}

    params = []
    for name in captured.param_shapes:
        if name not in lowering.param_refs:
            print(f"zcc-import: warning: parameter {name} is not used by the loss; not imported", file=sys.stderr)
            continue
    order = [name for name in dict.fromkeys(captured.params.values()) if name in lowering.param_refs]
    for name in order:
        shape = captured.param_shapes[name]
        role = lowering.param_roles.get(name, "weight")
        init = initializer(weights[name] if weights else None, role, source.init_std)
        attrs = []
        tied = sorted(a for a, c in aliases.items() if c == name)
        if tied:
            attrs.append("zc.tied = [" + ", ".join(f'"{a}"' for a in tied) + "]")
        params.append((name, shape, init, ", ".join(attrs)))

    B, T = args.batch, args.context
    numel = sum(int(torch.Size(s).numel()) for _, s, _, _ in params)
    label = args.hf_config and os.path.basename(args.hf_config) or args.module
    header = [
        f"// Imported by zcc-import from {label} ({model_class}, {numel:,} parameters).",
        f"// Regenerate: zcc-import {' '.join(regenerate_args(args))}",
        f"// Batch {B} x context {T}: forward + mean cross-entropy against the next tokens.",
    ]
    tokens, targets = lowering.inputs["tokens"], lowering.inputs["targets"]
    text = module_text(header, params, args.name or model_class, [tokens, targets], loss, lowering.emit.lines)
    write_atomic(args.output, text)
    if weights is not None:
        from safetensors.torch import save_file
        save_file({name: weights[name] for name in order}, args.weights_out + ".tmp")
        os.replace(args.weights_out + ".tmp", args.weights_out)
    ops = sum(1 for line in lowering.emit.lines if " = zc." in line and "zc.param_ref" not in line)
    print(f"zcc-import: {args.output}: {model_class}, {len(params)} parameters ({numel:,} values), {ops} zc ops, "
          f"{time.time() - started:.1f} s", file=sys.stderr)


def initializer(value, role, std):
    """The zc initializer train.bin draws when no --init is given: the model's own values' law when
    they are known (all ones, all zeros, else normal with their std), otherwise by role."""
    if value is not None:
        if bool((value == 1).all()):
            return "#zc.ones"
        if bool((value == 0).all()):
            return "#zc.zeros"
        return f"#zc.normal<std = {float(value.std()):.6g}>"
    return {"gain": "#zc.ones", "bias": "#zc.zeros"}.get(role, f"#zc.normal<std = {std:.6g}>")


def regenerate_args(args):
    out = []
    if args.hf_config:
        out += ["--hf-config", args.hf_config]
    if args.module:
        out += ["--module", args.module]
    out += ["--batch", str(args.batch), "--context", str(args.context), "-o", args.output]
    return out


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
