#!/usr/bin/env python3
"""One rank of a benchmark peer: the example model in PyTorch (the functional GPT/MLP of
test/Train/torch_reference.py), trained with DDP, DeepSpeed ZeRO-S or FSDP2 on the CPU
(gloo), from the same weights, on the same batches, with the same AdamW as zcc.
Launched by bench/peers_bench.py under mpirun; rank 0 writes one JSON line per step.

usage: peer_worker.py --system ddp|deepspeed|fsdp2 --stage S --model FILE.mlir --kind gpt|mlp
                      --weights W.f32 --steps N --lr X --log L [--data FILE] [--checkpointing]
"""
import argparse, json, os, resource, sys, time

T0 = time.time()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Train"))

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch_reference import TeacherData, TextData, gpt_loss, mlp_loss, read_model


def peak_rss_bytes():
    """VmHWM (reset by exec), as train.bin reports it."""
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Model(nn.Module):
    def __init__(self, weights, kind, heads, checkpointing):
        super().__init__()
        self.p = nn.ParameterDict({k.replace(".", "_"): nn.Parameter(v.clone()) for k, v in weights.items()})
        self.kind, self.heads, self.checkpointing = kind, heads, checkpointing

    def forward(self, x, y):
        w = dict(self.p.items())
        if self.kind == "mlp":
            return mlp_loss(w, x, y)
        if self.checkpointing:  # the peer's activation checkpointing: the whole forward recomputed
            return torch.utils.checkpoint.checkpoint(lambda a, b: gpt_loss(w, a, b, self.heads), x, y,
                                                     use_reentrant=False)
        return gpt_loss(w, x, y, self.heads)


def main():
    ap = argparse.ArgumentParser()
    for flag in ("--system", "--model", "--kind", "--weights", "--log", "--data"):
        ap.add_argument(flag)
    ap.add_argument("--stage", type=int, default=0)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--checkpointing", action="store_true")
    ap.add_argument("--bf16", action="store_true", help="mixed precision: bf16 compute, fp32 master weights")
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
    model = Model(weights, a.kind, heads, a.checkpointing)
    data = TextData(a.data, dict(params)["wpe"][0]) if a.kind == "gpt" else \
        TeacherData(dict(params)["fc1_w"][0], dict(params)[[n for n, _ in params if n.endswith("_w")][-1]][1], 1337)
    rows = batch // world

    # zcc's AdamW: weight decay 0.01 on parameters of rank >= 2, none on the others.
    def groups(m):
        decay = [p for p in m.parameters() if p.dim() >= 2]
        rest = [p for p in m.parameters() if p.dim() < 2]
        return [{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}]

    if a.system == "ddp":
        engine = nn.parallel.DistributedDataParallel(model) if world > 1 else model
        opt = torch.optim.AdamW(groups(model), lr=a.lr, betas=(0.9, 0.999), eps=1e-8)
        def step(x, y):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
                loss = engine(x, y)
            loss.backward()
            opt.step()
            return loss
    elif a.system == "deepspeed":
        import deepspeed
        opt = torch.optim.AdamW(groups(model), lr=a.lr, betas=(0.9, 0.999), eps=1e-8)
        config = {"train_micro_batch_size_per_gpu": rows, "gradient_accumulation_steps": 1,
                  "zero_optimization": {"stage": a.stage}, "steps_per_print": 10 ** 9,
                  "wall_clock_breakdown": False, "bf16": {"enabled": a.bf16}}
        engine, opt, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=config)
        def step(x, y):
            if a.bf16 and x.is_floating_point():  # DeepSpeed's bf16 engine holds bf16 weights: feed it bf16
                x = x.bfloat16()
            loss = engine(x, y)
            engine.backward(loss)
            engine.step()
            return loss
    elif a.system == "fsdp2":
        try:
            from torch.distributed.fsdp import fully_shard
        except ImportError:
            from torch.distributed._composable.fsdp import fully_shard
        from torch.distributed.device_mesh import init_device_mesh
        mesh = init_device_mesh("cpu", (world,))
        fully_shard(model, mesh=mesh, reshard_after_forward=a.stage == 3)
        opt = torch.optim.AdamW(groups(model), lr=a.lr, betas=(0.9, 0.999), eps=1e-8)
        def step(x, y):
            opt.zero_grad(set_to_none=True)
            loss = model(x, y)
            loss.backward()
            opt.step()
            return loss
    else:
        sys.exit(f"unknown system {a.system}")

    log = open(a.log, "w") if rank == 0 else None
    for s in range(a.steps):
        x, y = data.batch(s * batch + rank * rows, rows)
        start = time.time()
        loss = step(x, y).detach().clone()
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
