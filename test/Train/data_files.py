#!/usr/bin/env python3
"""Token files as train.bin maps them (GPT example, vocabulary 256):

  1. The same tokens as a text file, nanoGPT's uint16 .bin, a uint32 file (--data-dtype uint32)
     and a Megatron-LM indexed dataset (PREFIX.idx + PREFIX.bin, MMIDIDX, uint16 tokens, several
     documents) train to bitwise the same losses.
     A Llama (examples/gen_llama.py, vocabulary 1024: more than a byte) trains from a uint32 file and from a
     Megatron dataset of int32 tokens to the same losses, which go down.
  2. --data-order random reads other windows (other losses), the same ones whatever the world size,
     and a run stopped and resumed from its checkpoint continues bitwise.
  3. Bad files stop before the first step, with the file named: a truncated uint16 file, 32-bit
     tokens read as 16-bit ones, a token outside the vocabulary, an index without the MMIDIDX
     header, an index whose sequences end past its .bin, a missing file.

usage: data_files.py ZCC MODEL.mlir TEXT GEN_LLAMA.py
"""
import json, os, struct, subprocess, sys, tempfile

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")


def run(exe, *flags, ranks=1):
    cmd = ([] if ranks == 1 else ["mpirun", "-np", str(ranks)]) + [exe, "--log-every", "1"] + list(flags)
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=600)


def losses(exe, work, name, *flags, ranks=1):
    log = os.path.join(work, name + ".jsonl")
    r = run(exe, "--steps", "8", "--log-json", log, *flags, ranks=ranks)
    if r.returncode != 0:
        sys.exit(f"FAIL: {name}: exited {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return [json.loads(line)["loss"] for line in open(log)]


def write_megatron(prefix, documents, code=8):
    """MMIDIDX as megatron/core/datasets/indexed_dataset.py writes it: uint16 (code 8) or int32
    (code 4) tokens."""
    fmt, width = {8: ("H", 2), 4: ("i", 4)}[code]
    with open(prefix + ".bin", "wb") as f:
        for doc in documents:
            f.write(struct.pack(f"<{len(doc)}{fmt}", *doc))
    with open(prefix + ".idx", "wb") as f:
        f.write(b"MMIDIDX\x00\x00" + struct.pack("<Q", 1) + struct.pack("<B", code))
        f.write(struct.pack("<Q", len(documents)) + struct.pack("<Q", len(documents) + 1))
        f.write(struct.pack(f"<{len(documents)}i", *[len(d) for d in documents]))
        pointers, at = [], 0
        for doc in documents:
            pointers.append(at)
            at += width * len(doc)
        f.write(struct.pack(f"<{len(documents)}q", *pointers))
        f.write(struct.pack(f"<{len(documents) + 1}q", *range(len(documents) + 1)))


def main():
    zcc, model, text, gen_llama = sys.argv[1:5]
    tokens = list(open(text, "rb").read())
    failures = []
    with tempfile.TemporaryDirectory() as w:
        j = lambda *p: os.path.join(w, *p)
        subprocess.run([zcc, model, "-o", j("one.bin")], check=True)
        subprocess.run([zcc, model, "-o", j("two.bin"), "--world-size", "2", "--zero-stage", "3"], check=True)
        with open(j("tokens16.bin"), "wb") as f:
            f.write(struct.pack(f"<{len(tokens)}H", *tokens))
        with open(j("tokens32.u32"), "wb") as f:
            f.write(struct.pack(f"<{len(tokens)}I", *tokens))
        third = len(tokens) // 3
        write_megatron(j("mega"), [tokens[:third], tokens[third:2 * third], tokens[2 * third:]])

        # 1. One token stream, four files.
        reference = losses(j("one.bin"), w, "text", "--data", text)
        for name, flags in [("uint16", ["--data", j("tokens16.bin")]),
                            ("uint32", ["--data", j("tokens32.u32"), "--data-dtype", "uint32"]),
                            ("megatron", ["--data", j("mega")]),
                            ("megatron-by-bin", ["--data", j("mega.bin")])]:
            got = losses(j("one.bin"), w, name, *flags)
            if got != reference:
                failures.append(f"{name}: losses {got[:3]}... differ from the text file's {reference[:3]}...")

        # The Llama example's vocabulary of 1024: uint32 and Megatron int32 tokens.
        with open(j("llama.mlir"), "w") as f:
            subprocess.run([sys.executable, gen_llama, "--layers", "2", "--dim", "64", "--heads", "4", "--kv-heads", "2",
                            "--ffn", "172", "--context", "32", "--vocab", "1024", "--batch", "8"], stdout=f, check=True)
        subprocess.run([zcc, j("llama.mlir"), "-o", j("llama.bin")], check=True)
        wide = [(t * 3 + i) % 1024 for i, t in enumerate(tokens)]
        with open(j("llama.u32"), "wb") as f:
            f.write(struct.pack(f"<{len(wide)}I", *wide))
        write_megatron(j("llama-mega"), [wide[:third], wide[third:]], code=4)
        by_file = losses(j("llama.bin"), w, "llama-u32", "--data", j("llama.u32"), "--data-dtype", "uint32")
        by_index = losses(j("llama.bin"), w, "llama-mega", "--data", j("llama-mega"))
        if by_file != by_index or not by_file[-1] < by_file[0]:
            failures.append(f"Llama: uint32 file {by_file} and Megatron int32 dataset {by_index} differ or do not train")

        # 2. Random windows: other rows, the same on two ranks, resumed bitwise.
        rand = losses(j("one.bin"), w, "random", "--data", text, "--data-order", "random")
        if rand == reference:
            failures.append("--data-order random read the same rows as sequential")
        rand2 = losses(j("two.bin"), w, "random-np2", "--data", text, "--data-order", "random", ranks=2)
        worst = max(abs(a - b) / abs(a) for a, b in zip(rand, rand2))
        if worst > 1e-5:
            failures.append(f"random windows at 2 ranks differ from 1 rank's by {worst:.2e}")
        ckpt = j("ckpt")
        first = run(j("two.bin"), "--data", text, "--data-order", "random", "--steps", "4", "--ckpt-dir", ckpt,
                    "--ckpt-every", "4", ranks=2)
        resumed = run(j("two.bin"), "--data", text, "--data-order", "random", "--steps", "8", "--ckpt-dir", ckpt,
                      "--resume", "--log-json", j("resumed.jsonl"), ranks=2)
        if first.returncode or resumed.returncode:
            failures.append(f"random-order resume failed: {first.stderr[-500:]} {resumed.stderr[-500:]}")
        else:
            tail = [json.loads(l)["loss"] for l in open(j("resumed.jsonl"))]
            if tail != rand2[4:]:
                failures.append(f"resumed random-order losses {tail} are not {rand2[4:]}")

        # 3. Bad files, refused by name before the first step.
        with open(j("odd.bin"), "wb") as f:
            f.write(struct.pack(f"<{len(tokens)}H", *tokens) + b"\x01")
        with open(j("wide.bin"), "wb") as f:
            f.write(struct.pack(f"<{len(tokens)}I", *[t + 1 for t in tokens]))
        with open(j("vocab.bin"), "wb") as f:
            f.write(struct.pack(f"<{len(tokens)}H", *[t if i != 100 else 300 for i, t in enumerate(tokens)]))
        with open(j("nomagic.idx"), "wb") as f:
            f.write(b"NOTANIDX\x00" + bytes(64))
        with open(j("nomagic.bin"), "wb") as f:
            f.write(bytes(64))
        write_megatron(j("short"), [tokens[:1000], tokens[1000:2000]])
        with open(j("short.bin"), "r+b") as f:
            f.truncate(1500 * 2)
        for name, flags, expected in [
                ("truncated", ["--data", j("odd.bin")], "odd.bin: %d bytes are not a whole number of 2-byte tokens"
                 % (2 * len(tokens) + 1)),
                ("32-bit as 16-bit", ["--data", j("wide.bin")], "looks like a file of 32-bit tokens"),
                ("vocabulary", ["--data", j("vocab.bin")], "token 100 is 300, outside the model's vocabulary of 256"),
                ("no MMIDIDX", ["--data", j("nomagic")], "nomagic.idx is not a Megatron-LM index"),
                ("short .bin", ["--data", j("short")], "short.bin holds 1500 tokens but"),
                ("missing", ["--data", j("absent.bin")], "cannot open --data")]:
            r = run(j("one.bin"), *flags, "--steps", "2")
            if r.returncode == 0 or expected not in r.stderr or "step     1" in r.stdout:
                failures.append(f"{name}: expected a refusal with '{expected}', got exit {r.returncode}: "
                                f"{r.stderr.strip()[-300:]}")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print(f"PASS: text, uint16, uint32 and Megatron files train alike ({len(reference)} steps; a Llama of 1024 tokens from "
          f"32-bit tokens, loss {by_file[0]:.4f} -> {by_file[-1]:.4f}); random windows "
          f"resume bitwise; 6 bad files refused by name")


if __name__ == "__main__":
    main()
