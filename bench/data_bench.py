#!/usr/bin/env python3
"""Token files at the sizes people train on: a uint16 token file of --gigabytes GB (nanoGPT's
OpenWebText train.bin is 18 GB) against a 1 MB one, the same model (examples/gpt.mlir unless
--model), both with --data-order random. Prints, for each: the seconds from launch to the end of
the first step (train.bin's start-up plus step 1) and train.bin's peak RSS after 5 steps
(peak_rss_bytes of the log). train.bin maps the file, so the big file should cost neither time
nor memory: the done-when of the data issue is under 2 s and within 100 MB of the small file.

usage: bench/data_bench.py [--gigabytes 8] [--dir /tmp] [--keep] [--model M.mlir] [--zcc build/bin/zcc]
"""
import argparse, json, os, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_tokens(path, size_bytes, vocab=256):
    """A uint16 file of `size_bytes`, written 64 MiB at a time (tokens below the vocabulary)."""
    import array
    block = array.array("H", [(i * 2654435761 >> 7) % vocab for i in range(1 << 25)]).tobytes()  # 64 MiB
    with open(path, "wb") as f:
        left = size_bytes
        while left > 0:
            f.write(block[:min(left, len(block))])
            left -= len(block)


def run(exe, data, log):
    start = time.perf_counter()
    proc = subprocess.Popen([exe, "--data", data, "--steps", "5", "--log-every", "1", "--log-json", log,
                             "--data-order", "random"], stdout=subprocess.PIPE, text=True)
    first = None
    for line in proc.stdout:
        if line.startswith("step     1 |") and first is None:
            first = time.perf_counter() - start
    if proc.wait() != 0:
        sys.exit(f"train.bin exited {proc.returncode} on {data}")
    rows = [json.loads(l) for l in open(log)]
    return first, max(r["peak_rss_bytes"] for r in rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gigabytes", type=float, default=8)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--keep", action="store_true", help="keep the big file (it is reused when present)")
    ap.add_argument("--model", default=os.path.join(ROOT, "examples/gpt.mlir"))
    ap.add_argument("--zcc", default=os.path.join(ROOT, "build/bin/zcc"))
    a = ap.parse_args()
    big = os.path.join(a.dir, f"zcc-data-bench-{a.gigabytes:g}G.bin")
    size = int(a.gigabytes * 1e9) // 2 * 2
    if not (os.path.exists(big) and os.path.getsize(big) == size):
        t = time.perf_counter()
        write_tokens(big, size)
        print(f"wrote {big}: {size / 1e9:.1f} GB in {time.perf_counter() - t:.0f} s")
    with tempfile.TemporaryDirectory() as w:
        small = os.path.join(w, "small.bin")
        write_tokens(small, 1 << 20)
        exe = os.path.join(w, "train.bin")
        subprocess.run([a.zcc, a.model, "-o", exe], check=True)
        # The page cache: drop the big file's pages from the writing, as a file not read before.
        subprocess.run(["sh", "-c", "sync; echo 1 > /proc/sys/vm/drop_caches"], stderr=subprocess.DEVNULL)
        results = {name: run(exe, path, os.path.join(w, name + ".jsonl")) for name, path in
                   [("1 MB", small), (f"{a.gigabytes:g} GB", big)]}
    if not a.keep:
        os.remove(big)
    print("| token file | launch to the end of step 1, s | peak RSS MB |")
    print("|---|---|---|")
    for name, (first, rss) in results.items():
        print(f"| {name} | {first:.2f} | {rss / 1e6:.1f} |")
    (s_first, s_rss), (b_first, b_rss) = results.values()
    print(f"peak RSS difference {(b_rss - s_rss) / 1e6:+.1f} MB; first step {b_first:.2f} s")


if __name__ == "__main__":
    main()
