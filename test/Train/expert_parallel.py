#!/usr/bin/env python3
"""Expert parallelism's memory (zcc --ep): what it saves, that the plan holds, and its bound.

usage: expert_parallel.py ZCC MODEL.mlir [--cuda-on-cpu-link SCRIPT] DATA-FLAGS...

--cuda-on-cpu-link SCRIPT: every train.bin is the CUDA backend's (--target=cuda), linked against
runtime/cuda on the CPU by SCRIPT (test/CudaOnCpu/link-train-bin.sh) and run without CUDA graphs:
its device arena held to the same plan, its checkpoints and its bound's error the same.

On 4 ranks, for ep 1, 2 and 4 at ZeRO 0-3 (every parameter sharded at ZeRO-3:
--param-persistence-threshold 0):
- each rank holds 1/ep of the experts (the model description's expert weights [E / ep, ...],
  their ep_split) and the model state is the dense part plus the experts' over the ranks that
  hold each: ZeRO 0 E/ep of them whole, ZeRO 1-2 the states (and gradients) sharded over the
  dp / ep ranks holding the same experts, ZeRO-3 the gathered experts' peak 1/ep of ep 1's;
- the memory plan is what the steps write (train.bin's high-water mark within 1% of the plan);
- the report's expert traffic is its formula at a balanced routing (2 exchanges forward and 2
  backward per layer, (ep - 1) / ep of the dispatched rows each, and the counts' all-gathers);
- the same at ep 2 x pp 2 (1F1B and ZB-H1);
- a checkpoint of an ep mesh resumes on it to the losses of the run without a stop;
- a step that exceeds --moe-max-tokens-per-expert stops every rank with an error naming the flag,
  before its first step is logged.
"""
import json, os, subprocess, sys, tempfile

RANKS = 4

# --cuda-on-cpu-link's script, when the train.bins are the CUDA backend's.
CUDA_LINK = None


def zcc_build(zcc, model, exe, flags, **run):
    """zcc MODEL -o EXE FLAGS (for the CUDA backend: the object, then linked); the report's path."""
    compiled = exe + ".o" if CUDA_LINK else exe
    subprocess.run([zcc, model, "-o", compiled, *flags] + (["--target=cuda", "--emit=obj"] if CUDA_LINK else []),
                   check=True, **run)
    if CUDA_LINK:
        subprocess.run([CUDA_LINK, compiled, exe], check=True)
    return compiled + ".report.json"


def train(exe, *flags, **run):
    """mpirun of EXE on RANKS ranks (the CUDA backend's without graphs: HIP-CPU captures none)."""
    graphs = ["--cuda-graphs", "off"] if CUDA_LINK else []
    return subprocess.run(["mpirun", "-np", str(RANKS), exe, *graphs, *flags], timeout=600, **run)


def compile_(zcc, model, exe, ep, zero, extra=()):
    report = json.load(open(zcc_build(zcc, model, exe, ["--world-size", str(RANKS), "--zero-stage", str(zero), "--ep",
                                                      str(ep), "--param-persistence-threshold", "0", "--report=json",
                                                      *extra])))
    described = json.loads(subprocess.run([exe, "--describe"], check=True, capture_output=True, text=True).stdout)
    return report, described


def main():
    global CUDA_LINK
    zcc, model, data = sys.argv[1], sys.argv[2], sys.argv[3:]
    if "--cuda-on-cpu-link" in data:
        at = data.index("--cuda-on-cpu-link")
        CUDA_LINK = data[at + 1]
        del data[at:at + 2]
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                      OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        base = {}
        for zero in range(4):
            for ep in (1, 2, 4):
                tag = f"ep{ep}-z{zero}"
                exe = os.path.join(work, f"train-{tag}.bin")
                report, described = compile_(zcc, model, exe, ep, zero)
                params = described["params"]
                experts = [p for p in params if p.get("ep_split")]
                if ep == 1:
                    base[zero] = (report, {p["name"]: p for p in params})
                    if experts:
                        failures.append(f"{tag}: expert weights split without --ep")
                    continue
                ref, whole = base[zero]
                # The split: every expert weight of ep 1's, [E / ep, ...] here.
                if {p["name"] for p in experts} != {n for n, p in whole.items() if len(p["shape"]) == 3}:
                    failures.append(f"{tag}: the split weights are {[p['name'] for p in experts]}")
                for p in experts:
                    w = whole[p["name"]]["shape"]
                    if p["shape"] != [w[0] // ep] + w[1:] or p["ep_split"]["ranks"] != ep:
                        failures.append(f"{tag}: {p['name']} is {p['shape']} of {w}")
                # What each rank stores: the dense state as at ep 1, the experts' 1/ep (over dp/ep ranks).
                expert_bytes = sum(whole[p["name"]]["bytes"] for p in experts)
                if zero == 0:
                    want = ref["model_state_bytes"] - expert_bytes * 4 * (ep - 1) // ep  # param, grad, 2 moments
                    if report["model_state_bytes"] != want:
                        failures.append(f"{tag}: model state {report['model_state_bytes']} B, want {want} "
                                        f"(ep 1's {ref['model_state_bytes']} less {ep - 1}/{ep} of the experts')")
                elif zero < 3:
                    if not report["model_state_bytes"] < ref["model_state_bytes"]:
                        failures.append(f"{tag}: model state {report['model_state_bytes']} B, not below ep 1's "
                                        f"{ref['model_state_bytes']}")
                    want = ref["optimizer_bytes"]  # the states: 1/dp of everything either way
                    if abs(report["optimizer_bytes"] - want) > 64 * len(params):  # shard padding
                        failures.append(f"{tag}: optimizer state {report['optimizer_bytes']} B, ep 1's {want}")
                else:
                    if not report["gathered_param_peak_bytes"] < ref["gathered_param_peak_bytes"]:
                        failures.append(f"{tag}: gathered parameters peak {report['gathered_param_peak_bytes']} B, "
                                        f"not below ep 1's {ref['gathered_param_peak_bytes']}")
                # The report's expert traffic at a balanced routing.
                traffic = report["expert_parallel"]
                layers = len(experts) // 3
                if traffic["all_to_all"] != 4 * layers or traffic["all_gather"] != layers:
                    failures.append(f"{tag}: {traffic['all_to_all']} all-to-alls and {traffic['all_gather']} "
                                    f"all-gathers for {layers} layers (4 and 1 each)")
                # Measured: the plan is what the steps write.
                log = os.path.join(work, f"log-{tag}.jsonl")
                train(exe, "--steps", "2", "--log-every", "1", "--log-json", log, *data, check=True,
                      stdout=subprocess.DEVNULL)
                last = [json.loads(line) for line in open(log)][-1]
                planned, measured = last["planned_arena_bytes"], last["measured_arena_bytes"]
                if planned != report["arena_bytes"] or not (0.99 * planned <= measured <= planned):
                    failures.append(f"{tag}: wrote up to {measured} B of a {planned} B plan "
                                    f"(report {report['arena_bytes']})")
                print(f"{tag}: model state {report['model_state_bytes']} B (ep 1: {ref['model_state_bytes']}), "
                      f"gathered peak {report['gathered_param_peak_bytes']} B, arena {planned} B planned, "
                      f"{measured} B written, expert traffic {traffic['comm_bytes']} B a step (balanced)")

        # A pipeline of ep meshes (each stage's experts over its data-parallel ranks): the rank
        # holding most plans what it writes.
        for schedule in ("1f1b", "zb-h1"):
            exe = os.path.join(work, f"train-ep2-pp2-{schedule}.bin")
            zcc_build(zcc, model, exe, ["--world-size", str(RANKS), "--pp", "2", "--ep", "2", "--zero-stage", "1",
                                        "--pp-schedule", schedule, "--grad-accum", "2"], stderr=subprocess.DEVNULL)
            log = os.path.join(work, f"log-pp-{schedule}.jsonl")
            train(exe, "--steps", "2", "--log-every", "1", "--log-json", log, *data, check=True,
                  stdout=subprocess.DEVNULL)
            last = [json.loads(line) for line in open(log)][-1]
            planned, measured = last["planned_arena_bytes"], last["measured_arena_bytes"]
            if not (0.99 * planned <= measured <= planned):
                failures.append(f"ep 2 x pp 2 {schedule}: wrote up to {measured} B of a {planned} B plan")
            print(f"ep 2 x pp 2 ({schedule}, ZeRO-1): arena {planned} B planned, {measured} B written")

        # A checkpoint of an ep mesh resumes on it to the same losses as the run without a stop.
        exe = os.path.join(work, "train-ep2-z3.bin")
        ck = os.path.join(work, "ck")
        def losses(*flags):
            log = os.path.join(work, "log-ck.jsonl")
            train(exe, "--log-every", "1", "--log-json", log, *flags, *data, check=True, stdout=subprocess.DEVNULL)
            return [json.loads(line)["loss"] for line in open(log) if "loss" in json.loads(line)]
        whole = losses("--steps", "4")
        losses("--steps", "2", "--ckpt-dir", ck, "--ckpt-every", "2")
        resumed = losses("--steps", "4", "--ckpt-dir", ck, "--resume")
        if resumed[-2:] != whole[-2:]:
            failures.append(f"resumed at step 2: losses {resumed[-2:]}, without a stop {whole[-2:]}")
        else:
            print(f"ep 2 at ZeRO-3 resumed from step 2: steps 3-4 {resumed[-2:]} as without a stop")

        # A declared bound the routing exceeds: every rank stops naming the flag, no step logged.
        exe = os.path.join(work, "train-bound.bin")
        compile_(zcc, model, exe, 2, 3, ["--moe-max-tokens-per-expert", "1"])
        log = os.path.join(work, "log-bound.jsonl")
        done = train(exe, "--steps", "2", "--log-every", "1", "--log-json", log, *data, capture_output=True, text=True)
        steps = [line for line in open(log)] if os.path.exists(log) else []
        if done.returncode == 0 or "over the 1 the memory plan holds (zcc --moe-max-tokens-per-expert)" not in \
                done.stderr or steps:
            failures.append(f"over the bound: exit {done.returncode}, {len(steps)} steps logged, stderr "
                            f"{done.stderr[-400:]!r}")
        else:
            print("over --moe-max-tokens-per-expert 1: stopped before the first step:",
                  next(l for l in done.stderr.splitlines() if "moe-max-tokens" in l).strip())
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
