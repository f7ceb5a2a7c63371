#!/usr/bin/env python3
"""ZeRO++ at np=4 with 2 ranks per node (two nodes declared on one machine): what crosses nodes
and what training gives, against plain ZeRO-3.

Cross-node bytes are train.bin's link counters summed over the ranks (each rank prints its own:
the ring collectives send everything to the next rank of their group, an all-to-all each peer
its block; node = world rank / --ranks-per-node). Each part of ZeRO++ must cut them, and all
three together to at most 0.3x (the issue's bar; the paper's 4x is 0.25x from fp16, int8
weights from fp32 here are 0.25x of the forward gather alone), with the final loss within 1% of
plain ZeRO-3's after the same steps on the same data. The compiler's report (zcc --report=json,
"links": all ranks, per step) must predict the counters exactly, and count hpZ's secondary
shards (1/K of the parameters per rank) apart from the optimizer state.

usage: zeropp.py ZCC MODEL.mlir DATA
"""
import json, os, re, subprocess, sys, tempfile

STEPS = 60
PARTS = {
    "plain": [],
    "qwZ": ["--zero-quantized-weights"],
    "hpZ": ["--zero-hpz-partition-size", "2"],
    "qgZ": ["--zero-quantized-gradients"],
    "all": ["--zero-quantized-weights", "--zero-hpz-partition-size", "2", "--zero-quantized-gradients"],
}
# Most cross-node bytes each part may leave, as a fraction of plain ZeRO-3's: hpZ removes the
# backward gathers (a third), qwZ quarters the forward gather, qgZ sends int4 across once.
BOUND = {"qwZ": 0.8, "hpZ": 0.7, "qgZ": 0.75, "all": 0.3}


def main():
    zcc, model, data = sys.argv[1:4]
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    cross, inside_of, loss, failures = {}, {}, {}, []
    with tempfile.TemporaryDirectory() as work:
        for name, flags in PARTS.items():
            exe = os.path.join(work, f"{name}.bin")
            subprocess.run([zcc, model, "-o", exe, "--world-size", "4", "--zero-stage", "3",
                            "--param-persistence-threshold", "1000", "--ranks-per-node", "2", "--report=json"] + flags,
                           check=True)
            report = json.load(open(exe + ".report.json"))
            steps = STEPS if name in ("plain", "all") else 3
            out = subprocess.run(["mpirun", "-np", "4", exe, "--data", data, "--steps", str(steps),
                                  "--log-every", str(steps), "--ranks-per-node", "2"],
                                 check=True, capture_output=True, text=True, timeout=900).stdout
            links = re.findall(r"rank (\d+) link bytes over (\d+) steps: in node (\d+), across nodes (\d+)", out)
            if len(links) != 4:
                failures.append(f"{name}: expected 4 ranks' link bytes, got {len(links)}:\n{out}")
                continue
            cross[name] = sum(int(l[3]) for l in links) / steps
            inside = inside_of[name] = sum(int(l[2]) for l in links) / steps
            predicted = report.get("links", {})
            if (predicted.get("cross_node_bytes"), predicted.get("in_node_bytes")) != (cross[name], inside):
                failures.append(f"{name}: the report predicts {predicted} per step, the counters measured "
                                f"cross {cross[name]}, in node {inside}")
            secondary = report.get("hpz_secondary_bytes", 0)
            if ("--zero-hpz-partition-size" in flags) != (0 < secondary <= 2 * report["param_bytes"]):
                failures.append(f"{name}: hpz_secondary_bytes {secondary} (param_bytes {report['param_bytes']})")
            loss[name] = float(re.search(r"final loss ([0-9.]+)", out).group(1))
            print(f"{name:6s} cross-node bytes per step (all ranks) {cross[name]:12.0f}, "
                  f"in node {sum(int(l[2]) for l in links) / steps:12.0f}, final loss {loss[name]:.6f} "
                  f"({steps} steps)")
    if "plain" in cross:
        # The formula: a ring over 4 ranks on 2 nodes crosses at 2 of its 4 links, so half of
        # plain ZeRO-3's bytes cross.
        if "plain" in inside_of and cross["plain"] != inside_of["plain"]:
            failures.append(f"plain ZeRO-3: cross {cross['plain']} != in node {inside_of['plain']} (2 of 4 ring links)")
        for name, bound in BOUND.items():
            if name in cross and not cross[name] <= bound * cross["plain"]:
                failures.append(f"{name}: {cross[name]:.0f} cross-node bytes per step, more than {bound}x plain "
                                f"ZeRO-3's {cross['plain']:.0f}")
            elif name in cross:
                print(f"{name}: {cross[name] / cross['plain']:.3f}x plain ZeRO-3's cross-node bytes (at most {bound})")
        if "all" in loss:
            gap = abs(loss["all"] - loss["plain"]) / loss["plain"]
            print(f"final loss after {STEPS} steps: ZeRO++ {loss['all']:.6f}, ZeRO-3 {loss['plain']:.6f} "
                  f"({gap * 100:.2f}% apart)")
            if gap > 0.01:
                failures.append(f"ZeRO++'s final loss {loss['all']} is {gap * 100:.2f}% from ZeRO-3's {loss['plain']}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
