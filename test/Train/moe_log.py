#!/usr/bin/env python3
"""train.bin's log of a Mixture-of-Experts model's routings (--log-json's moe_* fields and the
console line), on meshes where the MoE layers sit on other ranks than rank 0's (pp), where
tensor-parallel ranks route the same tokens (tp: counted once), with accumulation and under full
recomputation (the backward's recomputed routings not counted again):

  moe_routings    = MoE layers x data-parallel ranks x micro-batches
  moe_tokens_mean = rows per routing x top_k / experts (every token routed: dropless)
  0 <= moe_tokens_min <= mean <= moe_tokens_max <= rows per routing (an expert gets a token at most once)
  moe_dropped     = 0
and a model without MoE layers logs none of them.

usage: moe_log.py ZCC MIXTRAL.mlir DENSE.mlir DATA
"""
import json, os, re, subprocess, sys, tempfile

def main():
    zcc, model, dense, data = sys.argv[1:5]
    text = open(model).read()
    layers = len(re.findall(r"zc\.moe_route ", text))
    k = int(re.search(r"zc\.moe_route \S+ top_k (\d+)", text).group(1))
    experts = int(re.search(r"zc\.param @h0_router_w : tensor<\d+x(\d+)xf32>", text).group(1))
    batch, context = map(int, re.search(r"zc\.forward @\w+\(%\w+: tensor<(\d+)x(\d+)xi32>", text).groups())
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        def run(path, np_, flags, name):
            exe, log = os.path.join(work, name + ".bin"), os.path.join(work, name + ".jsonl")
            subprocess.run([zcc, path, "-o", exe, "--world-size", str(np_)] + flags, check=True)
            out = subprocess.run(["mpirun", "-np", str(np_), exe, "--data", data, "--steps", "4", "--log-every", "1",
                                  "--log-json", log], check=True, env=env, capture_output=True, text=True).stdout
            return out, [json.loads(line) for line in open(log)]
        for np_, flags, dp, accum in ((1, [], 1, 1), (2, [], 2, 1), (2, ["--grad-accum", "2"], 2, 2),
                                      (2, ["--tp", "2"], 1, 1), (1, ["--recompute", "full"], 1, 1), (2, ["--pp", "2", "--grad-accum", "2"], 1, 2),
                                      (4, ["--tp", "2", "--pp", "2", "--grad-accum", "2"], 1, 2)):
            name = f"np{np_}" + "".join(flags).replace("--", "-")
            out, records = run(model, np_, flags, name)
            rows = batch // (dp * accum) * context
            for r in records:
                where = f"{name} step {r['step']}"
                want = {"moe_routings": layers * dp * accum, "moe_tokens_mean": rows * k / experts, "moe_dropped": 0}
                for key, value in want.items():
                    if r.get(key) != value:
                        failures.append(f"{where}: {key} {r.get(key)}, expected {value}")
                if not 0 <= r["moe_tokens_min"] <= r["moe_tokens_mean"] <= r["moe_tokens_max"] <= rows:
                    failures.append(f"{where}: min {r['moe_tokens_min']}, mean {r['moe_tokens_mean']}, "
                                    f"max {r['moe_tokens_max']} outside [0, {rows}]")
            lines = re.findall(r"^step +\d+ \| experts: tokens per expert min (\d+) mean ([0-9.]+) max (\d+)", out, re.M)
            if len(lines) != len(records):
                failures.append(f"{name}: {len(lines)} console lines of the routing, {len(records)} steps logged")
        out, records = run(dense, 1, [], "dense")
        if any(key.startswith("moe_") for r in records for key in r) or "experts:" in out:
            failures.append("a model without MoE layers logged routings")
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print(f"PASS: {layers} MoE layers, {experts} experts, top {k}: routings, mean, bounds and dropped tokens on 7 meshes")

if __name__ == "__main__":
    main()
