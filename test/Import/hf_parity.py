#!/usr/bin/env python3
"""A model imported by zcc-import trains in train.bin to the losses PyTorch gives the same model.

  hf_parity.py BIN_DIR (--hf-config CONFIG | --module FILE:FACTORY) --data FILE [--steps 20] [--tolerance 1e-4]
               [--np N] [--zero-stage S] [--precision fp32|bf16] [--batch B] [--context T] [--round-trip]
               [--optimizer adamw|sgd] [--moe-aux-loss pooled|per-layer] [--zcc-flags '--tp 2'] [--moe-bias-update-rate X]
               [--planted-defect dropped-term|adam-epsilon|frozen-bias|no-aux-loss|frozen-expert-bias]

zcc-import writes model.mlir and the model's initial weights (its own initialization, --seed); train.bin
starts from them (--init). PyTorch trains the very same nn.Module (the Hugging Face class the config
names, built by the importer's code) from the same weights, with torch.optim.AdamW set as zcc's
(weight decay 0.01 on matrices, none on vectors), on the batches train.bin reads (--data: bytes as
tokens, torch_reference.TextData); a MoE model's load-balancing loss (output_router_logits) is each
data-parallel rank's, over its part of the batch, as under DDP or FSDP; a DeepSeek-V3 router's
balancing bias moves after each step by --moe-bias-update-rate x sign(mean load - load), the loads
over the whole batch, as DeepSeek-V3 trains it and train.bin does. The per-step losses must stay within the bounds of
test/Train/reference_spread.py around PyTorch's float64 run: --tolerance (relative), or 10x the widest
of PyTorch's own fp32 runs from weights one ulp apart, whichever is larger. --planted-defect D runs no
train.bin: a PyTorch fp32 run with defect D must break those bounds.

--round-trip also checkpoints train.bin at step 10, consolidates it with zcc-ckpt, loads it back into
the PyTorch model with load_state_dict(strict=True) (a tied parameter's other names, which the zc module
records as zc.tied, point at the same tensor; persistent buffers are the model's own) and checks the loss of step 11's batch against the one
train.bin logged.
Runs in the importer's Python environment (PyTorch 2.x, transformers, safetensors).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Train"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "zcc-import"))

import torch  # noqa: E402
import transformers  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

from reference_spread import DEFECTS, Envelope, cached, check_planted, file_digest, samples_of  # noqa: E402
from torch_reference import TextData  # noqa: E402
from zcc_import import moe  # noqa: E402
from zcc_import.source import CausalLMLoss, HuggingFaceSource, ModuleSource  # noqa: E402


def tied_names(mlir):
    """{alias: canonical} from the zc.tied attributes of model.mlir's parameters."""
    out = {}
    for name, aliases in re.findall(r'^zc\.param @"?([^" ]+)"? : .*zc\.tied = \[([^\]]*)\]', mlir, re.M):
        for alias in re.findall(r'"([^"]+)"', aliases):
            out[alias] = name
    return out


def expert_bias_loads(model):
    """{router: its loads this step [E]} for DeepSeek-V3's routers (moe.ROUTER_BIAS), filled by a
    forward hook from the experts each training forward chose (the third of the router's outputs)."""
    loads = {}
    for module in model.modules():
        if moe.is_biased_router(module):
            loads[module] = torch.zeros(module.weight.shape[0], dtype=torch.float64)

            def count(module, inputs, outputs):
                loads[module] += torch.bincount(outputs[2].reshape(-1), minlength=loads[module].numel()).double()
            module.register_forward_hook(count)
    return loads


def move_expert_biases(loads, rate):
    """DeepSeek-V3's aux-loss-free balancing after a step (section 2.1.2), as train.bin does: each
    router's bias moves by `rate` towards the mean load, the loads being every rank's choices."""
    with torch.no_grad():
        for module, load in loads.items():
            bias = getattr(module, moe.ROUTER_BIAS)
            bias += rate * torch.sign(load.mean() - load).to(bias.dtype)
            load.zero_()


def train_torch(source, state, data, batch, steps, lr, dtype=torch.float32, defect=None, optimizer="adamw",
                shards=1, bias_rate=1e-3):
    """Per-step losses of the model trained in PyTorch from `state` (its initial weights) in `dtype`
    (float64: the reference's centre), with one of reference_spread.DEFECTS planted if given.
    shards: the data-parallel ranks whose losses are each their own (a MoE model's load-balancing
    loss over each rank's tokens, as under DDP or FSDP): the batch split into that many, each part's
    objective averaged."""
    model = source.build()
    model.load_state_dict(state, strict=False)  # a tied head: its alias is absent
    model = model.to(dtype).train()
    loads = expert_bias_loads(model)
    if defect == "frozen-expert-bias":
        bias_rate = 0.0
    params = dict(model.named_parameters())
    decay = [p for p in params.values() if p.dim() >= 2]
    no_decay = [p for p in params.values() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.01}]
    if defect != "frozen-bias":
        groups.append({"params": no_decay, "weight_decay": 0.0})
    if optimizer == "sgd":  # zcc --optimizer sgd: momentum 0.9, coupled weight decay, as torch.optim.SGD
        opt = torch.optim.SGD(groups, lr=lr, momentum=0.9)
    else:
        opt = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999), eps=1e-6 if defect == "adam-epsilon" else 1e-8)
    losses = []
    for step in range(steps):
        x, y = data.batch(step * batch, batch)
        for p in params.values():
            p.grad = None
        # CausalLMLoss's mean cross-entropy, per token and in the run's dtype, plus what the model
        # adds to it (a MoE family's load-balancing loss), each data-parallel rank's.
        objective = loss = 0.0
        for xs, ys in zip(x.chunk(shards), y.chunk(shards)):
            logits, extra = source.forward(model, xs)
            per_token = F.cross_entropy(logits.to(dtype).reshape(-1, logits.shape[-1]), ys.reshape(-1),
                                        reduction="none")
            ce, extra = per_token.mean(), 0.0 if extra is None or defect == "no-aux-loss" else extra.to(dtype)
            trained = per_token[:-1].sum() / per_token.numel() if defect == "dropped-term" else ce
            loss = loss + (ce + extra) / shards
            objective = objective + (trained + extra) / shards
        objective.backward()
        # zcc's default --grad-clip 1.0, as nanoGPT's and torchtitan's clip_grad_norm_.
        torch.nn.utils.clip_grad_norm_(list(params.values()), 1.0)
        opt.step()
        move_expert_biases(loads, bias_rate)
        losses.append(loss.item())
    return losses


def import_model(argv):
    """zcc-import's own main (its command line, messages and exit code) in this process, which has
    torch and transformers loaded already: as a subprocess it spent 4-5 s of every test loading them
    again (the lit tests run the zcc-import command itself). The importer seeds torch's generator:
    this process's is put back."""
    from zcc_import.__main__ import main as zcc_import_main
    rng = torch.random.get_rng_state()
    try:
        rc = zcc_import_main(argv)
    finally:
        torch.random.set_rng_state(rng)
    if rc != 0:
        sys.exit(f"FAIL: zcc-import {' '.join(argv)} exited {rc}")


def run(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin_dir")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--hf-config")
    src.add_argument("--module")
    ap.add_argument("--data", required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--zero-stage", type=int, default=0)
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--context", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--optimizer", choices=["adamw", "sgd"], default="adamw",
                    help="zcc --optimizer; sgd for MoE routers, whose near-ties Adam's first steps flip")
    ap.add_argument("--round-trip", action="store_true")
    ap.add_argument("--moe-aux-loss", choices=["pooled", "per-layer"], default="pooled", help="zcc-import's")
    ap.add_argument("--zcc-flags", default="", help="more zcc flags, a mesh for one ('--tp 2')")
    ap.add_argument("--moe-bias-update-rate", type=float, default=1e-3,
                    help="train.bin's, and the PyTorch run's for DeepSeek-V3's routers' balancing biases")
    ap.add_argument("--reference-cache", help="a folder where the PyTorch reference runs are kept and reused")
    ap.add_argument("--planted-defect", choices=sorted(DEFECTS),
                    help="run no train.bin: hold a PyTorch fp32 run with this defect to the bounds; passes if caught")
    args = ap.parse_args()
    torch.set_num_threads(1)
    # The rule's matmul paths, not the machine's measured plan: see torch_reference.py.
    os.environ.setdefault("ZRT_MATMUL_TUNE", "off")
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    source = HuggingFaceSource(args.hf_config, args.moe_aux_loss) if args.hf_config else ModuleSource(args.module)
    tools = {t: os.path.join(args.bin_dir, t) for t in ("zcc", "zcc-ckpt")}

    with tempfile.TemporaryDirectory() as work:
        model, weights, exe = (os.path.join(work, f) for f in ("model.mlir", "init.safetensors", "train.bin"))
        spec = ["--hf-config", args.hf_config, "--moe-aux-loss", args.moe_aux_loss] if args.hf_config \
            else ["--module", args.module]
        import_model(spec + ["--batch", str(args.batch), "--context", str(args.context), "-o", model,
                             "--weights-out", weights])
        # The float64 centre and the fp32 bundle's width around it (reference_spread.py).
        data, initial = TextData(args.data, args.context), load_file(weights)
        # A MoE model's load-balancing loss is each rank's: the reference then depends on the ranks.
        args.zcc_flags = args.zcc_flags.split()
        model_parallel = 1
        for flag in ("--tp", "--pp", "--cp"):
            if flag in args.zcc_flags:
                model_parallel *= int(args.zcc_flags[args.zcc_flags.index(flag) + 1])
        shards = args.np // model_parallel if getattr(source, "router_aux_coef", 0) else 1
        train = lambda state, **kw: train_torch(source, state, data, args.batch, args.steps, args.lr,
                                                optimizer=args.optimizer, shards=shards,
                                                bias_rate=args.moe_bias_update_rate, **kw)
        # Shared by the variants of one model (--reference-cache): np, ZeRO stage, precision are train.bin's.
        # The model file names its own path: the source it was imported from stands for it.
        source_file = args.hf_config or args.module.rsplit(":", 1)[0]
        inputs = dict(source=file_digest(source_file), spec=spec, transformers=transformers.__version__,
                      weights=file_digest(weights), data=file_digest(args.data),
                      steps=args.steps, lr=args.lr, batch=args.batch, context=args.context)
        if args.optimizer != "adamw" or shards > 1:
            inputs.update(optimizer=args.optimizer, shards=shards)
        if args.moe_bias_update_rate != 1e-3:
            inputs.update(bias_rate=args.moe_bias_update_rate)
        reference = cached(args.reference_cache, inputs, [__file__],
                           lambda: [train(initial, dtype=torch.float64)] + [train(s) for s in samples_of(initial)])
        centre = reference[0]
        if centre[-1] >= centre[0]:
            sys.exit(f"FAIL: PyTorch's loss did not go down ({centre[0]} -> {centre[-1]})")
        bounds = Envelope("loss", centre, reference[1:], args.tolerance)
        if args.planted_defect:
            failure, _, _ = bounds.check(train(initial, defect=args.planted_defect), who="the defective run's")
            check_planted(args.planted_defect, [failure] if failure else [])
            return

        run([tools["zcc"], model, "-o", exe, "--world-size", str(args.np), "--zero-stage", str(args.zero_stage),
             "--precision", args.precision, "--optimizer", args.optimizer] + args.zcc_flags)
        log, ckpt = os.path.join(work, "log.jsonl"), os.path.join(work, "ckpt")
        cmd = [exe, "--data", args.data, "--steps", str(args.steps), "--lr", str(args.lr), "--log-every", "1",
               "--log-json", log, "--init", weights, "--moe-bias-update-rate", str(args.moe_bias_update_rate)]
        if args.round_trip:
            cmd += ["--ckpt-dir", ckpt, "--ckpt-every", "10", "--ckpt-keep", "3"]
        if args.np > 1:
            cmd = ["mpirun", "-np", str(args.np)] + cmd
        run(cmd)
        losses = [json.loads(line)["loss"] for line in open(log)]
        failure, worst, ratio = bounds.check(losses)
        if failure:
            sys.exit(failure)
        summary = (f"{os.path.basename(args.hf_config or args.module)} np={args.np} stage {args.zero_stage} "
                   f"{args.precision}: {args.steps} steps, loss {centre[0]:.5f} -> {centre[-1]:.5f}; against float64 "
                   f"PyTorch: worst relative loss difference {worst:.2e} ({ratio:.2f} of its bound; {bounds.summary()})")

        if args.round_trip:
            consolidated = os.path.join(work, "step10.safetensors")
            run([tools["zcc-ckpt"], "consolidate", os.path.join(ckpt, "step-00000010"), "-o", consolidated])
            state = load_file(consolidated)
            for alias, name in tied_names(open(model).read()).items():
                state[alias] = state[name]
            restored = source.build()
            # Persistent buffers (a registered causal mask) are not trained: the model's own, unless
            # zc trained them (a MoE router's balancing bias, a parameter in zc: the checkpoint's).
            buffers = {name for name, _ in restored.named_buffers()}
            state.update({k: v for k, v in restored.state_dict().items() if k in buffers and k not in state})
            restored.load_state_dict(state, strict=True)
            x, y = data.batch(10 * args.batch, args.batch)
            with torch.no_grad():
                loss = CausalLMLoss(source, restored).train()(x, y).item()
            rel = abs(loss - losses[10]) / abs(losses[10])
            if rel > args.tolerance:
                sys.exit(f"FAIL: the step-10 checkpoint loaded into PyTorch gives {loss} on step 11's batch, "
                         f"train.bin logged {losses[10]} (relative {rel:.2e})")
            summary += f"; round trip: step 11 loss {loss:.6f} in PyTorch vs {losses[10]:.6f} logged ({rel:.1e})"
    print("PASS: " + summary)


if __name__ == "__main__":
    main()
