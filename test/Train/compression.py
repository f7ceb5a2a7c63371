#!/usr/bin/env python3
"""zcc --compression against DeepSpeed's init_compression on the same module, weights and batches.

The model is the shakespeare-char GPT as nanoGPT writes it (Inputs/compression_gpt.py), imported
with zcc-import so both sides name the same modules. DeepSpeed's side is its engine
(deepspeed.initialize, which steps the compression scheduler) with zcc's AdamW and gradient
clipping, one process, fp32, on the CPU. The compression_training configurations:
  1. l1 sparse pruning of half of each MLP weight and l1 row pruning of a quarter of each
     attention layer's output features (bias included), from step PRUNE_ONLY_AT;
  2. W8A4: int8 symmetric weights (4 groups per weight) of every attention and MLP linear, and
     their inputs quantized to 4 bits token by token (dynamic range), from step 0;
  3. the issue's: int8 weights from step 0, half of each MLP weight pruned from step PRUNE_AT.

Checks: every step's loss within TOLERANCE of DeepSpeed's until DeepSpeed's own runs from weights
one ulp apart part (quantization's rounding amplifies the last bit of a sum; pruning alone never
parts), then on average within 10x of that run's distance. The exported safetensors (train.bin
--export-weights) hold each compressed weight on its int8 grid (every group's values integer
multiples of one scale, at most 256 levels) and zero wherever DeepSpeed's mask (computed from the
same initial weights) prunes; PyTorch loads the file into the plain module and computes from it
train.bin's last validation loss (the compressed forward pass). A run with pruning from step 0
and no quantization checks the pruned fraction of each weight is exactly 1 - dense_ratio.

usage: compression.py ZCC ZCC_IMPORT DEEPSPEED_0.19.6_DIR CORPUS HELD_OUT [STEPS] [TOLERANCE]
"""
import json, math, os, subprocess, sys, tempfile

import numpy as np
import torch
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from torch_reference import TextData  # noqa: E402  train.bin's --data batches, bit for bit

PRUNE_AT = 50
PRUNE_ONLY_AT, PRUNE_ONLY_STEPS = 10, 30
W8A4_STEPS = 30
ROWS, CONTEXT, LR = 8, 64, 5e-4  # at 1e-3 this model spikes near step 27 (plain training too)
QUANTIZE_GROUPS = 4


def config(quantize=True, prune_at=PRUNE_AT, activations=None, rows_at=None):
    c = {}
    if rows_at is not None:
        c["row_pruning"] = {
            "shared_parameters": {"enabled": True, "schedule_offset": rows_at, "method": "l1"},
            "different_groups": {"rp1": {"params": {"dense_ratio": 0.75}, "modules": ["attn"]}}}
    if prune_at is not None:
        c["sparse_pruning"] = {
            "shared_parameters": {"enabled": True, "schedule_offset": prune_at, "method": "l1"},
            "different_groups": {"sp1": {"params": {"dense_ratio": 0.5}, "modules": ["mlp"]}}}
    if activations:
        c["activation_quantization"] = {
            "shared_parameters": {"enabled": True, "quantization_type": "symmetric",
                                  "range_calibration": "dynamic", "schedule_offset": 0},
            "different_groups": {"aq1": {"params": {"bits": activations}, "modules": ["attn", "mlp"]}}}
    if quantize:
        c["weight_quantization"] = {
            "shared_parameters": {"enabled": True, "quantizer_kernel": False, "schedule_offset": 0,
                                  "quantize_groups": QUANTIZE_GROUPS, "quantize_verbose": False,
                                  "quantization_type": "symmetric", "quantize_weight_in_forward": True,
                                  "rounding": "nearest", "fp16_mixed_quantize": {"enabled": False}},
            "different_groups": {"wq1": {"params": {"start_bits": 8, "target_bits": 8, "quantization_period": 0},
                                         "modules": ["attn", "mlp"]}}}
    return {"compression_training": c}


def compressed_modules(model, pattern_words):
    return [n for n, m in model.named_modules()
            if isinstance(m, torch.nn.Linear) and any(w in n for w in pattern_words)]


def run_zcc(zcc, mlir, cfg_path, init, corpus, steps, work, heldout=None):
    exe, log, out = (os.path.join(work, f) for f in ("train.bin", "log.jsonl", "final.safetensors"))
    subprocess.run([zcc, mlir, "-o", exe, "--compression", cfg_path], check=True)
    evaluation = ["--eval-data", heldout, "--eval-every", str(steps), "--eval-iters", "1"] if heldout else []
    subprocess.run([exe, "--steps", str(steps), "--lr", str(LR), "--log-every", "1", "--log-json", log,
                    "--init", init, "--export-weights", out, "--data", corpus] + evaluation,
                   check=True, stdout=subprocess.DEVNULL, timeout=600)
    from safetensors.torch import load_file
    records = [json.loads(line) for line in open(log)]
    val = [r["val_loss"] for r in records if "val_loss" in r]
    return [r["loss"] for r in records], load_file(out), (val[-1] if val else None)


def run_deepspeed(build, weights, cfg, corpus, steps):
    import deepspeed
    from deepspeed.compression.compress import init_compression
    model = build()
    model.load_state_dict(weights, strict=False)
    model.lm_head.weight = model.transformer.wte.weight
    model = init_compression(model, cfg)
    # init_compression swaps every nn.Linear and nn.Embedding for a new module with a new
    # Parameter: the tied head is re-tied, as a user of a tied model must.
    model.lm_head.weight = model.transformer.wte.weight
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.999), eps=1e-8)
    ds_config = dict(cfg, train_micro_batch_size_per_gpu=ROWS, gradient_accumulation_steps=1,
                     gradient_clipping=1.0, steps_per_print=10 ** 9)
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=ds_config)
    # DeepSpeed 0.19.6's scheduler reads sparse pruning's schedule_offset_end when the offset is
    # reached, but its config parser keeps that key for snip_momentum only: an l1 schedule stops
    # with a KeyError there. Its value (the offset: DeepSpeed's documented default) is given here.
    sparse = engine.compression_scheduler.different_compression_methods["sparse_pruning"]["shared_parameters"]
    sparse.setdefault("schedule_offset_end", sparse["schedule_offset"])
    data = TextData(corpus, CONTEXT)
    losses = []
    for step in range(steps):
        x, y = data.batch(step * ROWS, ROWS)
        logits = engine(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.reshape(-1))
        engine.backward(loss)
        engine.step()
        losses.append(loss.item())
    masks = {n: m.sparse_pruning_mask.clone() for n, m in model.named_modules()
             if getattr(m, "sparse_pruning_mask", None) is not None}
    return losses, masks


def check_grid(name, w, groups, bits=8):
    """Each group's values are integer multiples of one scale: max|v| is 2^(bits-1) - 1 or
    2^(bits-1) steps (DeepSpeed's largest level is +127 or -128)."""
    for g in w.reshape(groups, -1).double():
        top = g.abs().max().item()
        if top == 0:
            continue
        ok = False
        for levels in (2 ** (bits - 1) - 1, 2 ** (bits - 1)):
            q = g / (top / levels)
            if (q - q.round()).abs().max().item() < 1e-3 and q.round().unique().numel() <= 2 ** bits:
                ok = True
        if not ok:
            sys.exit(f"FAIL: exported {name} is not on an int{bits} grid")


def main():
    zcc, zcc_import, ds_dir, corpus, heldout = sys.argv[1:6]
    steps = int(sys.argv[6]) if len(sys.argv) > 6 else 60
    tolerance = float(sys.argv[7]) if len(sys.argv) > 7 else 1e-4
    sys.path.insert(0, ds_dir)
    os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=os.environ.get("MASTER_PORT", "29541"))
    torch.set_num_threads(1)
    sys.path.insert(0, os.path.join(here, "Inputs"))
    from compression_gpt import build
    from safetensors.torch import save_file

    with tempfile.TemporaryDirectory() as work:
        mlir = os.path.join(work, "gpt.mlir")
        subprocess.run([zcc_import, "--module", os.path.join(here, "Inputs", "compression_gpt.py") + ":build",
                        "--batch", str(ROWS), "--context", str(CONTEXT), "-o", mlir], check=True)
        # GPT-2's initialization (nanoGPT's _init_weights): matrices N(0, 0.02), biases 0, norms 1.
        torch.manual_seed(1234)
        model = build()
        with torch.no_grad():
            for name, p in model.named_parameters():
                if p.dim() >= 2:
                    p.normal_(0.0, 0.02)
                elif name.endswith("bias"):
                    p.zero_()
        weights = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}
        init = os.path.join(work, "init.safetensors")
        save_file(weights, init)

        # Each configuration against DeepSpeed, bounded by DeepSpeed against itself. A weight whose
        # value sits on a rounding boundary of its grid (or two competing for a group's largest
        # magnitude) goes one way or the other with the last bit of an fp32 sum: from then on the
        # runs take different paths. DeepSpeed does the same against itself from weights one ulp
        # apart, so that run is the bound: zcc within TOLERANCE until DeepSpeed's own runs part,
        # and after it, on average, within 10x of DeepSpeed's distance from itself (a sample of the
        # same spread; a wrong grid shows at the first steps, from the same weights).
        nudged = {k: torch.from_numpy(np.nextafter(v.numpy(), np.float32(np.inf))) for k, v in weights.items()}

        def against_deepspeed(what, cfg, n, heldout_file=None, exact_steps=10):
            cfg_path = os.path.join(work, "compression.json")
            json.dump(cfg, open(cfg_path, "w"))
            zcc_losses, exported, val_loss = run_zcc(zcc, mlir, cfg_path, init, corpus, n, work, heldout_file)
            ds_losses, masks = run_deepspeed(build, weights, json.loads(json.dumps(cfg)), corpus, n)
            floor_losses, _ = run_deepspeed(build, nudged, json.loads(json.dumps(cfg)), corpus, n)
            ours = [abs(a - b) for a, b in zip(zcc_losses, ds_losses)]
            floor = [abs(a - b) for a, b in zip(floor_losses, ds_losses)]
            parted = next((s for s, d in enumerate(floor) if d > tolerance), n)
            print(f"{what}, {n} steps: zcc {zcc_losses[0]:.6f} -> {zcc_losses[-1]:.6f}, DeepSpeed "
                  f"{ds_losses[0]:.6f} -> {ds_losses[-1]:.6f}")
            print("  |zcc - DeepSpeed|:           ", " ".join(f"{d:.0e}" for d in ours))
            print("  |DeepSpeed - itself + 1 ulp|:", " ".join(f"{d:.0e}" for d in floor))
            before = max(ours[:parted], default=0.0)
            after_ours = sum(ours[parted:]) / max(1, n - parted)
            after_floor = sum(floor[parted:]) / max(1, n - parted)
            print(f"  DeepSpeed's runs part at step {parted + 1}; before it zcc is within {before:.1e}"
                  + (f"; after it the mean difference is {after_ours:.1e} (DeepSpeed against itself: "
                     f"{after_floor:.1e})" if parted < n else ""))
            if ours[0] > max(tolerance, 3 * floor[0]):
                sys.exit(f"FAIL: {what}: the first step's loss (from the same weights) differs by {ours[0]:.1e}")
            # Where DeepSpeed parts from itself within the first exact_steps (seen on an AVX2-only EPYC
            # under 4-bit activations: at step 2, its step-1 losses already 5e-5 apart), no run can be
            # held to TOLERANCE longer than DeepSpeed holds itself: the first step's check above and
            # the spread after the parting are the bounds (before it: TOLERANCE or 3x DeepSpeed's own
            # distance, whichever is wider), and the test says so.
            if parted < exact_steps:
                print(f"  note: DeepSpeed parts from itself before step {exact_steps} on this CPU: zcc is held to "
                      f"its spread from step {parted + 1}")
            within = max(tolerance, 3 * max(floor[:parted], default=0.0))  # as the first step's check
            if len(zcc_losses) != n or before > within or after_ours > 10 * after_floor:
                sys.exit(f"FAIL: {what}: the losses differ from DeepSpeed's init_compression beyond its own spread")
            if abs(zcc_losses[-1] - ds_losses[-1]) > 0.02 * ds_losses[-1]:
                sys.exit(f"FAIL: {what}: the final losses differ by more than 2%")
            return exported, masks, val_loss

        # 1. Pruning alone, from step PRUNE_ONLY_AT (sparse: half of each MLP weight; rows: a
        #    quarter of each attention layer's output features, bias included): nothing rounds
        #    (the masks come from the same initial weights), so every step within TOLERANCE.
        against_deepspeed(f"sparse and row pruning from step {PRUNE_ONLY_AT}",
                          config(quantize=False, prune_at=PRUNE_ONLY_AT, rows_at=PRUNE_ONLY_AT), PRUNE_ONLY_STEPS,
                          exact_steps=20)

        # 2. W8A4: activations quantized token by token to 4 bits as well. Every forward pass rounds
        # fresh activations, so DeepSpeed's runs one ulp apart part at once: only its own spread
        # bounds the difference, and the first step (the same weights) the quantizer's use.
        against_deepspeed("int8 weights, 4-bit activations from step 0", config(activations=4, prune_at=None),
                          W8A4_STEPS, exact_steps=0)
        # 3. The configuration: int8 weights from step 0, half of each MLP weight pruned from
        #    step PRUNE_AT.
        exported, masks, val_loss = against_deepspeed(
            f"int8 weights from step 0, pruning from step {PRUNE_AT}", config(), steps, heldout)

        # 4. The exported weights: on the grid, pruned where DeepSpeed's mask prunes, close to
        #    DeepSpeed's redundancy_clean weights.
        quantized = compressed_modules(model, ["attn", "mlp"])
        if not masks or any(n not in quantized for n in masks):
            sys.exit(f"FAIL: DeepSpeed pruned {sorted(masks)}")
        for name in quantized:
            w = exported[name + ".weight"]
            check_grid(name, w, QUANTIZE_GROUPS)
            if name in masks:
                pruned = masks[name] == 0
                if (w[pruned] != 0).any():
                    sys.exit(f"FAIL: {name}: weights DeepSpeed's mask prunes are not zero in the export")
        print(f"export: {len(quantized)} weights on their int8 grid, {len(masks)} pruned where DeepSpeed prunes")
        # PyTorch loads the file into the plain module, which then computes train.bin's last
        # validation loss (the compressed forward pass after the last update) from it.
        reloaded = build()
        missing = reloaded.load_state_dict(exported, strict=False).missing_keys
        if missing != ["lm_head.weight"]:
            sys.exit(f"FAIL: PyTorch's load_state_dict misses {missing}")
        with torch.no_grad():
            x, y = TextData(heldout, CONTEXT).batch(0, ROWS)
            torch_val = reloaded.loss(x, y).item()
        print(f"export: PyTorch's loss on the held-out batch from the file {torch_val:.6f}, train.bin's {val_loss:.6f}")
        if abs(torch_val - val_loss) > tolerance:
            sys.exit("FAIL: the exported weights are not the ones train.bin's forward pass computes with")

        # 5. Pruning from step 0: exactly half of each MLP weight is zero in the export.
        cfg_path = os.path.join(work, "prune.json")
        json.dump(config(quantize=False, prune_at=0), open(cfg_path, "w"))
        _, pruned_export, _ = run_zcc(zcc, mlir, cfg_path, init, corpus, 3, work)
        for name in compressed_modules(model, ["mlp"]):
            w = pruned_export[name + ".weight"]
            zeros = (w == 0).sum().item()
            if zeros != w.numel() - math.ceil(0.5 * w.numel()):
                sys.exit(f"FAIL: {name}: {zeros} of {w.numel()} exported weights are zero, not half")
        print("pruning from step 0: half of every MLP weight exported as zero")
    print("PASS")


if __name__ == "__main__":
    main()
