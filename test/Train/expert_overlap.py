#!/usr/bin/env python3
"""Expert parallelism's exchanges overlapped with the compute that does not read their rows.

usage: expert_overlap.py ZCC MODEL.mlir PLAIN.mlir DATA-FLAGS...

MODEL has a shared expert beside the routed ones (Inputs/mixtral-shared.mlir), PLAIN none
(Inputs/mixtral.mlir). zcc-schedule starts each ep_dispatch / ep_combine on the communication stream,
pulls the shared expert (and its gradient) in before the wait, and runs the experts' weight gradients
during the backward's return exchange. Checked, against the same mesh compiled with --no-overlap:

- the report's predicted exposed communication drops by at least 10% at ep 2 on 2 ranks (the shared
  expert's time hidden), and at ep 2 x ZeRO-3 on 4 ranks (whose parameter gathers are most of the
  communication) by at least half as much time; PLAIN's at ep 2 by at least 10% too (the weight
  gradients hidden);
- in train.bin's trace (rank 0, --trace), compute issued after an exchange begins before the
  exchange is done (not a time overlap: with a rank to each of this machine's cores the
  communication thread runs when the compute thread waits); with --no-overlap none does (the
  compute thread runs the exchange);
- the losses are the same.
"""
import json, os, subprocess, sys, tempfile

from mesh_harness import use_mpi


def spans(trace):
    """(name, tid, begin, end) of the complete events in a --trace file."""
    events = json.load(open(trace))
    events = events["traceEvents"] if isinstance(events, dict) else events
    return [(e["name"], e.get("tid"), e["ts"], e["ts"] + e["dur"]) for e in events if e.get("ph") == "X"]


def compute_in_flight(trace):
    """How many of the expert exchanges were still on the communication track when compute that
    was issued after them began (rank 0's trace): each exchange's issue is its compute-track span
    of the same name (a blocking one is the whole exchange, on the compute thread)."""
    all_spans = spans(trace)
    exchange = lambda n: n.startswith(("zrt_ep_dispatch", "zrt_ep_combine"))
    issued = [(n, e) for n, tid, b, e in all_spans if tid == 0 and exchange(n)]
    moved = [(n, e) for n, tid, b, e in all_spans if tid == 1 and exchange(n)]
    compute = sorted(b for n, tid, b, e in all_spans
                     if tid == 0 and not exchange(n) and not n.startswith(("step", "zrt_wait", "blocking collective")))
    if len(issued) != len(moved) or any(a[0] != b[0] for a, b in zip(issued, moved)):
        sys.exit(f"expert_overlap.py: {len(issued)} exchanges issued and {len(moved)} moved")
    return sum(any(issue_end <= b < moved_end for b in compute)
               for (_, issue_end), (_, moved_end) in zip(issued, moved))


def main():
    zcc, model, plain, data = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    use_mpi()
    failures = []
    with tempfile.TemporaryDirectory() as work:
        def build(tag, flags, source=model):
            exe = os.path.join(work, f"train-{tag}.bin")
            subprocess.run([zcc, source, "-o", exe, "--report=json", *flags], check=True)
            return exe, json.load(open(exe + ".report.json"))["predicted"]

        saved = {}
        for mesh, flags in (("ep2", ["--world-size", "2", "--ep", "2"]),
                            ("ep2-zero3", ["--world-size", "4", "--ep", "2", "--zero-stage", "3"])):
            _, overlapped = build(mesh, flags)
            _, blocking = build(mesh + "-blocking", flags + ["--no-overlap"])
            saved[mesh] = blocking["exposed_comm_s"] - overlapped["exposed_comm_s"]
            print(f"{mesh}: predicted exposed communication {overlapped['exposed_comm_s'] * 1e3:.3f} ms of "
                  f"{overlapped['comm_s'] * 1e3:.3f} ms, {blocking['exposed_comm_s'] * 1e3:.3f} ms with --no-overlap")
            if mesh == "ep2" and not overlapped["exposed_comm_s"] <= 0.9 * blocking["exposed_comm_s"]:
                failures.append(f"{mesh}: exposed communication {overlapped['exposed_comm_s']} s, not 10% under "
                                f"--no-overlap's {blocking['exposed_comm_s']} s")
        _, overlapped = build("plain", ["--world-size", "2", "--ep", "2"], plain)
        _, blocking = build("plain-blocking", ["--world-size", "2", "--ep", "2", "--no-overlap"], plain)
        print(f"without a shared expert: predicted exposed communication {overlapped['exposed_comm_s'] * 1e3:.3f} ms, "
              f"{blocking['exposed_comm_s'] * 1e3:.3f} ms with --no-overlap")
        if not overlapped["exposed_comm_s"] <= 0.9 * blocking["exposed_comm_s"]:
            failures.append(f"without a shared expert: exposed communication {overlapped['exposed_comm_s']} s, not "
                            f"10% under --no-overlap's {blocking['exposed_comm_s']} s")
        if not saved["ep2-zero3"] >= 0.5 * saved["ep2"]:
            failures.append(f"ep2-zero3: {saved['ep2-zero3']} s of communication hidden, under half of ep2's "
                            f"{saved['ep2']} s")
        losses, hidden = {}, {}
        for tag, extra in (("overlap", []), ("blocking", ["--no-overlap"])):
            exe, _ = build("run-" + tag, ["--world-size", "2", "--ep", "2", *extra])
            trace, log = os.path.join(work, f"trace-{tag}.json"), os.path.join(work, f"log-{tag}.jsonl")
            subprocess.run(["mpirun", "-np", "2", exe, "--steps", "3", "--log-every", "1", "--log-json", log,
                            "--trace", trace, *data], check=True, stdout=subprocess.DEVNULL, timeout=600)
            losses[tag] = [json.loads(line)["loss"] for line in open(log)]
            hidden[tag] = compute_in_flight(trace)
            print(f"{tag}: compute began during {hidden[tag]} of rank 0's expert exchanges; losses {losses[tag]}")
        if hidden["overlap"] <= 0:
            failures.append("no compute began while an expert exchange was in flight")
        if hidden["blocking"] > 0:
            failures.append(f"--no-overlap: compute began during {hidden['blocking']} blocking exchanges")
        if any(abs(a - b) > 1e-6 * abs(a) for a, b in zip(losses["overlap"], losses["blocking"])):
            failures.append(f"losses {losses['overlap']} overlapped, {losses['blocking']} blocking")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
