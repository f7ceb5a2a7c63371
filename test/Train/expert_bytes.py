#!/usr/bin/env python3
"""Expert parallelism's traffic: the report's bytes, the runtime's counters and the formulas agree.

usage: expert_bytes.py ZCC MODEL.mlir [--cuda-on-cpu-link SCRIPT] DATA-FLAGS... -- MESH...
       MESH: np=N,ep=E[,zero=S][,cp=C][,target=cuda-on-cpu]

target=cuda-on-cpu: the CUDA backend's train.bin (--target=cuda) linked against runtime/cuda on the
CPU by SCRIPT (test/CudaOnCpu/link-train-bin.sh), run without CUDA graphs: its counters and report
held to the same formulas.

How many rows an exchange moves depends on the routing, so the model's routers start at zero: every
token's expert scores tie and each token chooses experts 0 .. k-1 (ties go to the lower index), on
rank 0 of its expert group. Step 1 routes so (the first update moves the routers). With L MoE
layers of E experts choosing k, d channels of 4 B, R = tokens x k dispatched rows per rank and the
G = ep ranks of an expert group, per step:

- the report (at a balanced routing, what it plans): 4 exchanges a layer (dispatch and combine, and
  their gradients), each sending (G - 1) / G of R rows, and one all-gather of the routing's E + 1
  offsets: 4 L R (G - 1) / G x 4d + L (G - 1) (E + 1) x 4 bytes;
- rank 0's counters at the tied routing: it sends nothing in the dispatch and in the combine's
  gradient (its rows stay), and in the combine and the dispatch's gradient every other rank's R
  rows back: 2 L (G - 1) R x 4d bytes of all-to-all; the offsets' all-gathers as the report's
  (at ZeRO-3 the gathered parameters add theirs, so there only the all-to-alls are compared);
- the log's tokens per expert: one expert receives every token of the rank (max = the rank's
  tokens), the others' none but the k chosen (min 0).

With cp=C (the expert groups then pair context ranks, which route different parts of the same
sequences) a rank's tokens are still the batch's over the N ranks, and its all-to-all counter holds
the Ulysses exchanges too: the report's context-parallel bytes, which no routing changes.
"""
import json, os, re, subprocess, sys, tempfile

from mesh_harness import mesh_arguments, mesh_fields, use_mpi


def model_shape(text):
    """L, E, k, d and the batch's tokens from the model's zc.moe_route lines and router weights."""
    routes = re.findall(r"zc\.moe_route \S+ top_k (\d+)[^:]*: tensor<([0-9x]+)xf32>", text)
    routers = re.findall(r"zc\.param @(\w+_router_w) : tensor<(\d+)x(\d+)xf32>", text)
    if not routes or len(routes) != len(routers):
        sys.exit(f"expert_bytes.py: {len(routes)} zc.moe_route ops and {len(routers)} router weights")
    dims = [int(x) for x in routes[0][1].split("x")]  # [batch, context, E]
    return len(routes), int(routers[0][2]), int(routes[0][0]), int(routers[0][1]), dims[0] * dims[1]


def main():
    argv = list(sys.argv)
    cuda_link = None
    if "--cuda-on-cpu-link" in argv:
        at = argv.index("--cuda-on-cpu-link")
        cuda_link = argv[at + 1]
        del argv[at:at + 2]
    zcc, model, data, meshes = mesh_arguments(argv)
    use_mpi()
    text = open(model).read()
    L, E, k, d, tokens = model_shape(text)
    tied, n = re.subn(r"(@\w+_router_w : tensor<[0-9x]+xf32>) = #zc\.[a-z]+(<[^>]*>)?", r"\1 = #zc.zeros", text)
    if n != L:
        sys.exit(f"expert_bytes.py: zeroed {n} router weights, the model has {L} routers")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        tied_model = os.path.join(work, "tied.mlir")
        open(tied_model, "w").write(tied)
        for mesh in meshes:
            f = mesh_fields(mesh)
            ranks, G, zero, cp = int(f["np"]), int(f["ep"]), int(f.get("zero", "0")), int(f.get("cp", "1"))
            exe = os.path.join(work, f"train-{mesh.replace(',', '-').replace('=', '')}.bin")
            cuda = f.get("target") == "cuda-on-cpu"
            if cuda and not cuda_link:
                sys.exit("expert_bytes.py: target=cuda-on-cpu needs --cuda-on-cpu-link SCRIPT")
            compiled = exe + ".o" if cuda else exe
            subprocess.run([zcc, tied_model, "-o", compiled, "--world-size", str(ranks), "--ep", str(G),
                            "--zero-stage", str(zero), "--cp", str(cp), "--report=json"]
                           + (["--target=cuda", "--emit=obj"] if cuda else []), check=True)
            if cuda:
                subprocess.run([cuda_link, compiled, exe], check=True)
            report = json.load(open(compiled + ".report.json"))
            traffic = report["expert_parallel"]
            context_bytes = report["context_parallel"]["comm_bytes"] if cp > 1 else 0
            R = tokens // ranks * k
            row = 4 * d
            gathers = L * (G - 1) * (E + 1) * 4
            balanced = 4 * L * R * (G - 1) // G * row + gathers
            if traffic["comm_bytes"] != balanced or traffic["routing"] != "balanced":
                failures.append(f"{mesh}: report {traffic}, formula {balanced} B at a balanced routing")
            log = os.path.join(work, f"log-{mesh}.jsonl")
            subprocess.run(["mpirun", "-np", str(ranks), exe, "--steps", "1", "--log-every", "1", "--log-json", log]
                           + (["--cuda-graphs", "off"] if cuda else []) + data,
                           check=True, stdout=subprocess.DEVNULL, timeout=600)
            step = json.loads(open(log).readline())
            sent = step["comm_bytes_by_kind"]
            tied_bytes = 2 * L * (G - 1) * R * row
            if sent["all_to_all"] != tied_bytes + context_bytes:
                failures.append(f"{mesh}: rank 0 sent {sent['all_to_all']} B of all-to-all, formula {tied_bytes} B "
                                f"+ the context exchanges' {context_bytes} B")
            if zero < 3 and sent["all_gather"] != gathers:
                failures.append(f"{mesh}: rank 0 sent {sent['all_gather']} B of all-gathers, the offsets' {gathers} B")
            if step["moe_tokens_max"] != tokens // ranks or step["moe_tokens_min"] != 0:
                failures.append(f"{mesh}: tokens per expert {step['moe_tokens_min']}..{step['moe_tokens_max']}, "
                                f"not the tied routing's 0..{tokens // ranks}")
            print(f"{mesh}: report {traffic['comm_bytes']} B a step at a balanced routing (formula {balanced}); "
                  f"rank 0 sent {sent['all_to_all']} B of all-to-all at the tied routing (formula {tied_bytes} + "
                  f"{context_bytes} of the context exchanges), "
                  f"{sent['all_gather']} B of all-gathers")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))


if __name__ == "__main__":
    main()
