#!/usr/bin/env python3
"""One rank of a benchmark peer: zcc's example architecture as PyTorch users write it
(bench/peer_models.py: nanoGPT's module tree with SDPA, or an nn.Sequential MLP), from zcc's
initial weights, on train.bin's batches, with zcc's AdamW, trained by
  ddp        DistributedDataParallel (the module itself at one rank)
  fsdp2      fully_shard on every block, then on the root, as FSDP2's documentation and
             torchtitan apply it; reshard_after_forward False for --stage 2, True for --stage 3;
             --bf16 through MixedPrecisionPolicy(bf16 params, fp32 reduce)
  deepspeed  ZeRO --stage 0-3 with the settings its users set (overlap_comm,
             contiguous_gradients; buckets, prefetch and persistence at the documented defaults)
--compile adds torch.compile the way each system's users add it: the whole model for DDP
(nanoGPT), every block before fully_shard for FSDP2 (torchtitan), engine.compile() for DeepSpeed.
Launched by bench/peers_bench.py under mpirun; rank 0 writes one JSON line per step.

usage: peer_worker.py --system ddp|deepspeed|fsdp2 --stage S --model FILE.mlir --kind gpt|llama|mlp
                      --weights W.f32 --steps N --lr X --log L [--data FILE] [--checkpointing]
                      [--bf16] [--compile]
"""
import argparse, json, os, resource, sys, time

T0 = time.time()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Train"))

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch_reference import LLAMA, TeacherData, TextData, read_context, read_llama_settings, read_model
from peer_models import build, load_zcc_weights


def peak_rss_bytes():
    """VmHWM (reset by exec), as train.bin reports it."""
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def deepspeed_config(a, rows):
    # DeepSpeed's documented defaults, written out so the table's settings are visible here;
    # overlap_comm and contiguous_gradients as its ZeRO tutorials and HF's configs set them.
    zero = {"stage": a.stage, "overlap_comm": True, "contiguous_gradients": True,
            "reduce_bucket_size": int(5e8), "allgather_bucket_size": int(5e8)}
    if a.stage == 3:
        zero.update(stage3_prefetch_bucket_size=int(5e7), stage3_param_persistence_threshold=int(1e5),
                    stage3_max_live_parameters=int(1e9), stage3_max_reuse_distance=int(1e9))
    return {"train_micro_batch_size_per_gpu": rows, "gradient_accumulation_steps": 1,
            "zero_optimization": zero, "steps_per_print": 10 ** 9, "wall_clock_breakdown": False,
            "bf16": {"enabled": a.bf16}, "zero_allow_untested_optimizer": True,
            # Every system clips the global gradient norm at 1.0: DeepSpeed's default (as its
            # users run it), zcc's (--grad-clip), and clip_grad_norm_ in DDP and FSDP2's loops.
            "gradient_clipping": 1.0}


def main():
    ap = argparse.ArgumentParser()
    for flag in ("--system", "--model", "--kind", "--weights", "--log", "--data"):
        ap.add_argument(flag)
    ap.add_argument("--stage", type=int, default=0)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--checkpointing", action="store_true")
    ap.add_argument("--bf16", action="store_true", help="mixed precision: bf16 compute, fp32 master weights")
    ap.add_argument("--compile", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    world = int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                      MASTER_ADDR=os.environ.get("MASTER_ADDR", "127.0.0.1"),
                      MASTER_PORT=os.environ.get("MASTER_PORT", "29533"))
    dist.init_process_group("gloo", rank=rank, world_size=world)

    params, batch, heads = read_model(a.model)
    raw = np.fromfile(a.weights, dtype=np.float32)
    weights, at = {}, 0
    for name, shape in params:
        n = int(np.prod(shape))
        weights[name] = torch.from_numpy(raw[at:at + n].copy()).reshape(shape)
        at += n
    read_llama_settings(a.model)
    model = build(a.kind, params, heads, dict(LLAMA, context=read_context(a.model)) if a.kind == "llama" else None)
    load_zcc_weights(a.kind, model, weights)
    if a.checkpointing:
        for block in model.blocks():
            block.checkpointing = True
    data = TextData(a.data, read_context(a.model)) if a.kind in ("gpt", "llama") else \
        TeacherData(params[0][1][0], params[-1][1][0], 1337)
    rows = batch // world

    # zcc's AdamW: weight decay 0.01 on parameters of rank >= 2, none on the others.
    def groups(m):
        decay = [p for p in m.parameters() if p.dim() >= 2]
        rest = [p for p in m.parameters() if p.dim() < 2]
        return [{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}]

    def adamw(m):
        return torch.optim.AdamW(groups(m), lr=a.lr, betas=(0.9, 0.999), eps=1e-8)

    if a.system == "ddp":
        if a.compile:
            model.compile()
        engine = nn.parallel.DistributedDataParallel(model) if world > 1 else model
        opt = adamw(model)
        def step(x, y):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
                loss = engine(x, y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            return loss
    elif a.system == "deepspeed":
        import deepspeed
        engine, opt, _, _ = deepspeed.initialize(model=model, optimizer=adamw(model),
                                                 config=deepspeed_config(a, rows))
        if a.compile:
            engine.compile()
        def step(x, y):
            loss = engine(x, y)
            engine.backward(loss)
            engine.step()
            return loss
    elif a.system == "fsdp2":
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        from torch.distributed.device_mesh import init_device_mesh
        mesh = init_device_mesh("cpu", (world,))
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if a.bf16 \
            else MixedPrecisionPolicy()
        for block in model.blocks():
            if a.compile:
                block.compile()
            fully_shard(block, mesh=mesh, reshard_after_forward=a.stage == 3, mp_policy=policy)
        # The root keeps its parameters (embeddings, final norm, tied head) gathered after
        # forward, as torchtitan does: backward needs them at once.
        fully_shard(model, mesh=mesh, reshard_after_forward=False, mp_policy=policy)
        opt = adamw(model)
        def step(x, y):
            opt.zero_grad(set_to_none=True)
            loss = model(x, y)
            loss.backward()
            # On DTensor gradients: the global norm over every shard (torchtitan's clip).
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            return loss
    else:
        sys.exit(f"unknown system {a.system}")

    log = open(a.log, "w") if rank == 0 else None
    for s in range(a.steps):
        x, y = data.batch(s * batch + rank * rows, rows)
        if a.bf16 and a.system == "deepspeed" and x.is_floating_point():
            x = x.bfloat16()  # DeepSpeed's bf16 engine holds bf16 weights: its users feed it bf16
        start = time.time()
        loss = step(x, y).detach().float().clone()
        seconds = time.time() - start
        dist.all_reduce(loss)
        if log:
            log.write(json.dumps({"step": s + 1, "loss": loss.item() / world, "step_ms": seconds * 1e3,
                                  "peak_rss_bytes": peak_rss_bytes(),
                                  "unix_time": time.time(), "start_time": T0}) + "\n")
            log.flush()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
