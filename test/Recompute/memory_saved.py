#!/usr/bin/env python3
"""Recomputation frees memory at every ZeRO stage and on a mesh (a check that fails when it
stops saving, not only when results change).

Compile-only at nanoGPT's shakespeare-char shape (6 layers, d=384, 6 heads, context 256,
batch 8), 2 ranks, at each ZeRO stage (DeepSpeed's default persistence threshold, and 0 at
stage 3), with tensor parallelism and a pipeline: the activation peak of `full` is at most
0.3x of `none` (0.5x on a mesh, whose per-rank activations are already split), `selective`'s
at most 0.7x while adding at most 5% to the step's FLOPs; 24 layers deep, `layer` (each layer's input
kept) at most 0.8x of full's (0.9x in a pipeline) for more FLOPs; on a Llama, `op` (torchtitan's
op-level policy) at most 0.9x of selective's for at most 12% more FLOPs. With GPT-2's vocabulary the LM head
stays chunked (no whole logits in the step or the eval function) under every policy. At ZeRO-3, `--recompute auto` fits
every budget between full recomputation's arena and none's. Then the small GPT example is
trained at ZeRO-3: the arena train.bin allocates is the plan's, it is written up to within 1%,
and it shrinks with each policy.

usage: memory_saved.py ZCC GEN_GPT.py GPT.mlir DATA
"""
import json, os, subprocess, sys, tempfile

def report(zcc, model, out, flags):
    """The plan's report; a pipeline's stage with the largest activation peak."""
    for old in [f for f in os.listdir(os.path.dirname(out)) if f.endswith(".report.json")]:
        os.remove(os.path.join(os.path.dirname(out), old))
    subprocess.run([zcc, model, "-o", out, "--report=json", "--emit=mlir"] + flags, check=True,
                   stdout=subprocess.DEVNULL)
    if os.path.exists(out + ".report.json"):
        return json.load(open(out + ".report.json"))
    stages = [json.load(open(f"{out}.stage{s}.report.json")) for s in range(int(flags[flags.index("--pp") + 1]))]
    return max(stages, key=lambda r: r["activation_peak_bytes"])

def main():
    zcc, gen, small, data = sys.argv[1:5]
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "shakespeare.mlir")
        with open(model, "w") as f:
            subprocess.run([sys.executable, gen, "--layers", "6", "--dim", "384", "--heads", "6",
                            "--context", "256", "--batch", "8"], stdout=f, check=True)
        out = os.path.join(work, "plan.mlir")
        configs = [(f"zero {s}", ["--world-size", "2", "--zero-stage", str(s)], 0.3) for s in range(4)]
        configs += [("zero 3, persistence 0", ["--world-size", "2", "--zero-stage", "3",
                                               "--param-persistence-threshold", "0"], 0.3),
                    ("tp 2, zero 3", ["--world-size", "4", "--tp", "2", "--zero-stage", "3"], 0.5),
                    ("pp 2, zero 1", ["--world-size", "4", "--pp", "2", "--zero-stage", "1"], 0.5)]
        for name, flags, full_limit in configs:
            r = {p: report(zcc, model, out, flags + ["--recompute", p]) for p in ("none", "selective", "full")}
            peak = {p: r[p]["activation_peak_bytes"] for p in r}
            sel_flops = r["selective"]["recompute"]["flops_per_step"] / r["selective"]["recompute"]["step_flops"]
            print(f"{name}: activation peak none {peak['none']}, selective {peak['selective']} "
                  f"({peak['selective'] / peak['none']:.3f}x, +{100 * sel_flops:.2f}% FLOPs), full {peak['full']} "
                  f"({peak['full'] / peak['none']:.3f}x)")
            if peak["full"] > full_limit * peak["none"]:
                failures.append(f"{name}: full keeps {peak['full'] / peak['none']:.3f}x of the activations")
            if peak["selective"] > 0.7 * peak["none"]:
                failures.append(f"{name}: selective keeps {peak['selective'] / peak['none']:.3f}x")
            if sel_flops > 0.05:
                failures.append(f"{name}: selective adds {100 * sel_flops:.1f}% FLOPs")

        # `layer` (Megatron's and torchtitan's full: each layer's input kept, the layer re-run) keeps
        # half full's checkpoints, at more FLOPs (the output projections again, and under tensor
        # parallelism their all-reduces). The saving grows with depth: at 6 layers one layer's
        # re-run working set at the peak cancels it; at 24 layers of d=256 it is 0.70x of full's peak
        # at ZeRO-3, 0.74x at tp 2, 0.84x in a 2-stage pipeline.
        deep = os.path.join(work, "deep.mlir")
        with open(deep, "w") as f:
            subprocess.run([sys.executable, gen, "--layers", "24", "--dim", "256", "--heads", "4", "--context", "256",
                            "--batch", "8"], stdout=f, check=True)
        for name, flags, limit in [("24 layers, zero 3", ["--world-size", "2", "--zero-stage", "3"], 0.8),
                                   ("24 layers, tp 2, zero 3", ["--world-size", "4", "--tp", "2", "--zero-stage", "3"],
                                    0.8),
                                   ("24 layers, pp 2, zero 1", ["--world-size", "4", "--pp", "2", "--zero-stage", "1"],
                                    0.9)]:
            r = {p: report(zcc, deep, out, flags + ["--recompute", p]) for p in ("full", "layer")}
            peak = {p: r[p]["activation_peak_bytes"] for p in r}
            flops = {p: r[p]["recompute"]["flops_per_step"] for p in r}
            print(f"{name}: activation peak full {peak['full']}, layer {peak['layer']} "
                  f"({peak['layer'] / peak['full']:.3f}x), recompute FLOPs {flops['layer'] / flops['full']:.3f}x")
            if peak["layer"] > limit * peak["full"]:
                failures.append(f"{name}: layer keeps {peak['layer'] / peak['full']:.3f}x of full's activations")
            if flops["layer"] <= flops["full"]:
                failures.append(f"{name}: layer recomputes no more than full ({flops['layer']} FLOPs)")

        # torchtitan's op-level policy on a Llama (gated MLP), counted per layer as torchtitan
        # counts over its checkpointed block: it frees what selective does and the output and up
        # projections, 0.79x of selective's peak at ZeRO-3 and 0.86x on a tp 2 mesh (whose
        # all-reduced output projection stays kept, as torchtitan saves its collectives' outputs),
        # for 7-10% more FLOPs.
        llama = os.path.join(work, "llama.mlir")
        with open(llama, "w") as f:
            subprocess.run([sys.executable, os.path.join(os.path.dirname(gen), "gen_llama.py"), "--layers", "4",
                            "--dim", "256", "--heads", "8", "--kv-heads", "2", "--ffn", "688", "--context", "256",
                            "--vocab", "256", "--batch", "8"], stdout=f, check=True)
        for name, flags in [("llama, zero 3", ["--world-size", "2", "--zero-stage", "3"]),
                            ("llama, tp 2, zero 3", ["--world-size", "4", "--tp", "2", "--zero-stage", "3"])]:
            r = {p: report(zcc, llama, out, flags + ["--recompute", p]) for p in ("selective", "op")}
            peak = {p: r[p]["activation_peak_bytes"] for p in r}
            op_flops = r["op"]["recompute"]["flops_per_step"] / r["op"]["recompute"]["step_flops"]
            print(f"{name}: activation peak selective {peak['selective']}, op {peak['op']} "
                  f"({peak['op'] / peak['selective']:.3f}x, +{100 * op_flops:.2f}% FLOPs)")
            if peak["op"] > 0.9 * peak["selective"]:
                failures.append(f"{name}: op keeps {peak['op'] / peak['selective']:.3f}x of selective's activations")
            if op_flops > 0.12:
                failures.append(f"{name}: op adds {100 * op_flops:.1f}% FLOPs")

        # GPT-2's vocabulary on the same shape: the LM head's logits (206 MB a rank) must stay
        # chunked under every policy, in the step and in the eval function. When recomputation
        # broke the head's fusion, selective kept 1.40x and full 1.24x of none's activations.
        big = os.path.join(work, "shakespeare-v50304.mlir")
        with open(big, "w") as f:
            subprocess.run([sys.executable, gen, "--layers", "6", "--dim", "384", "--heads", "6",
                            "--context", "256", "--batch", "8", "--vocab", "50304"], stdout=f, check=True)
        peak, unfused = {}, []
        for p in ("none", "selective", "full"):
            peak[p] = report(zcc, big, out, ["--world-size", "2", "--zero-stage", "3", "--recompute", p])[
                "activation_peak_bytes"]
            lowered = open(out).read()  # the step and eval functions' runtime calls
            if "@zrt_cross_entropy(" in lowered or "@zrt_cross_entropy_grad(" in lowered:
                unfused.append(p)
        print(f"vocabulary 50304, zero 3: activation peak none {peak['none']}, selective {peak['selective']} "
              f"({peak['selective'] / peak['none']:.3f}x), full {peak['full']} ({peak['full'] / peak['none']:.3f}x)")
        if unfused:
            failures.append(f"vocabulary 50304: the LM head is not fused with --recompute {', '.join(unfused)}")
        if peak["selective"] > 0.9 * peak["none"] or peak["full"] > 0.7 * peak["none"]:
            failures.append(f"vocabulary 50304: selective keeps {peak['selective'] / peak['none']:.3f}x, "
                            f"full {peak['full'] / peak['none']:.3f}x of none's activations")

        zero3 = ["--world-size", "2", "--zero-stage", "3"]
        lo = report(zcc, model, out, zero3 + ["--recompute", "full"])["arena_bytes"]
        hi = report(zcc, model, out, zero3 + ["--recompute", "none"])["arena_bytes"]
        previous = None
        for i in range(9):
            budget = lo + (hi - lo) * i // 8
            r = report(zcc, model, out, zero3 + ["--recompute", "auto", "--memory-budget", str(budget)])
            flops = r["recompute"]["flops_per_step"]
            print(f"auto, budget {budget}: arena {r['arena_bytes']}, {flops} FLOPs ({r['recompute']['plan']})")
            if r["arena_bytes"] > budget:
                failures.append(f"auto at {budget}: arena {r['arena_bytes']} over budget")
            if previous is not None and flops > previous:
                failures.append(f"auto at {budget}: {flops} FLOPs, more than at a smaller budget ({previous})")
            previous = flops

        arenas = {}
        for policy in ("none", "selective", "full"):
            exe = os.path.join(work, f"train-{policy}.bin")
            log = os.path.join(work, f"log-{policy}.jsonl")
            flags = ["--world-size", "2", "--zero-stage", "3", "--param-persistence-threshold", "0",
                     "--recompute", policy]
            subprocess.run([zcc, small, "-o", exe, "--report=json"] + flags, check=True, stdout=subprocess.DEVNULL)
            planned_report = json.load(open(exe + ".report.json"))["arena_bytes"]
            subprocess.run(["mpirun", "-np", "2", exe, "--steps", "2", "--log-every", "1", "--log-json", log,
                            "--data", data], check=True, stdout=subprocess.DEVNULL, timeout=600)
            last = [json.loads(line) for line in open(log)][-1]
            planned, measured = last["planned_arena_bytes"], last["measured_arena_bytes"]
            arenas[policy] = measured
            print(f"trained, zero 3, {policy}: arena {planned} planned, {measured} written")
            if planned != planned_report or not (0.99 * planned <= measured <= planned):
                failures.append(f"{policy}: plan {planned_report}, allocated {planned}, written {measured}")
        if not arenas["full"] < arenas["selective"] < arenas["none"]:
            failures.append(f"trained arenas do not shrink: {arenas}")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("PASS")

if __name__ == "__main__":
    main()
