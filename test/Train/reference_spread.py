"""How far a correct fp32 implementation may land from a float64 reference, measured, not assumed.

A training run in fp32 is not one curve but a bundle: every correct kernel (another BLAS, another
oneDNN primitive, another blocking or thread count) sums in its own order, and AdamW turns those
last-bit differences in near-zero gradients (g / sqrt(v) is +-1 whatever g's size) and ReLU units
at their kink into differences of 1e-4 within a few steps. A fixed tolerance against one fp32
PyTorch run is then a test of which BLAS kernel both sides picked (OPENBLAS_CORETYPE moves it).

So the parity harnesses hold zcc to the float64 run of the same model (the bundle's centre: its own
rounding is 2^-29 of fp32's) and measure the bundle's width there: the same PyTorch model in fp32,
once as it is and SAMPLES - 1 times from weights each moved by one ulp in a random direction (every
sum then rounds differently, as another correct kernel's would). A step's bound is FACTOR times the
widest distance any of those fp32 runs has reached by that step, never below the harness's fixed
tolerance. A real defect (a gradient term dropped, a wrong epsilon, a parameter not updated) moves
the curve by far more, and each harness shows that with --planted-defect, which holds a defective
fp32 run to the same bounds.

Why several samples: the bundle is not always one curve. A ReLU unit whose pre-activation is within
rounding of zero for one sample learns from it or not, and Adam turns that into a step of +-lr: the
examples/mlp.mlir bundle splits at step 3 (10 fp32 runs measured on an AMD EPYC: 7 go one way, 3
with the float64 run, 2e-4 apart at step 4, 3e-3 by step 13; the failure issue 54 saw on Zen 5).
A correct zcc may take either branch, and the bound covers it once one sample did: with 4 samples
and the branch the float64 run did not take at 70%, all 4 miss it with probability 0.3^4 = 0.8%.
The smooth models (GPT, Llama: GELU and SiLU) stay one curve: 20 steps, 6 samples, all within 3e-7.
"""
import fcntl
import hashlib
import json
import math
import os
import sys

import numpy as np
import torch

# A correct run's distance from the float64 centre, in units of the widest measured fp32 run's.
# Seen (AMD EPYC, AVX2; every fp32 parity test under OPENBLAS_CORETYPE=Haswell OPENBLAS_L2_SIZE=512
# and without, ZRT_ISA=generic with oneDNN capped at SSE4.1, and the measured matmul plan): zcc's
# worst step at 0.00 to 0.14 of its bound in fp32 (the bf16 runs, bounded by bf16's tolerance: up to
# 0.92); the planted defects at 1.6x to 46x their bound.
FACTOR = 10

# The defects --planted-defect plants in the PyTorch run that stands in for zcc.
DEFECTS = {
    "dropped-term": "each gradient misses the batch's last token (sample): a reduction one short",
    "adam-epsilon": "AdamW's epsilon 1e-6 instead of 1e-8",
    "frozen-bias": "the 1-D parameters (biases, norm gains) are never updated",
    "no-aux-loss": "a MoE model trained without its load-balancing loss (output_router_logits ignored)",
    "frozen-expert-bias": "a DeepSeek-V3 router's balancing bias never moved (its loads ignored)",
}


# fp32 runs that measure the bundle's width: the weights as they are, then moved by one ulp.
SAMPLES = 4


def nudged(weights, seed):
    """Every weight one fp32 ulp up or down (a seeded coin each): the same model, every sum
    rounding differently."""
    rng = np.random.default_rng(seed)
    out = {}
    for k, v in weights.items():
        a = v.detach().float().numpy()
        toward = np.where(rng.random(a.shape) < 0.5, np.float32(-np.inf), np.float32(np.inf))
        out[k] = torch.from_numpy(np.nextafter(a, toward).astype(np.float32))
    return out


def samples_of(weights):
    """The starting weights of the SAMPLES fp32 runs."""
    return [weights] + [nudged(weights, seed) for seed in range(1, SAMPLES)]


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


class Envelope:
    """Per-step bounds on a curve (losses, gradient norms) around its float64 centre."""

    def __init__(self, what, centre, samples, floor, factor=FACTOR):
        self.what, self.centre, self.floor, self.factor = what, list(centre), floor, factor
        widest, self.bounds, self.widths = 0.0, [], []
        # A reference run that diverged would widen nothing (NaN compares false): refuse it.
        for curve in [self.centre] + [list(s) for s in samples]:
            if any(not math.isfinite(v) for v in curve):
                sys.exit(f"FAIL: a PyTorch reference run's {what} is not finite: {curve}")
        for i, c in enumerate(self.centre):
            widest = max([widest] + [relative(s[i], c) for s in samples])
            self.widths.append(widest)
            self.bounds.append(max(floor, factor * widest))

    def check(self, values, steps=None, who="zcc"):
        """None if every value is inside its step's bound, else a FAIL line; also returns the
        worst value's distance and its ratio to the bound."""
        steps = steps or list(range(1, len(self.centre) + 1))
        if len(values) != len(self.centre):
            return f"FAIL: {self.what}: {len(values)} values, expected {len(self.centre)}", math.inf, math.inf
        worst, ratio = 0.0, 0.0
        for step, v, c, bound, width in zip(steps, values, self.centre, self.bounds, self.widths):
            d = relative(v, c)
            worst, ratio = max(worst, d), max(ratio, d / bound)
            if not d <= bound:
                return (f"FAIL: step {step}: {who} {self.what} {v} vs float64 PyTorch {c}, relative difference "
                        f"{d:.2e} > bound {bound:.2e} (max of the tolerance {self.floor:g} and {self.factor}x the "
                        f"widest fp32 run's {width:.2e})"), worst, ratio
        return None, worst, ratio

    def summary(self):
        return f"widest fp32 run {max(self.widths):.1e}, bound {max(self.bounds):.1e}"


def check_planted(defect, failures):
    """--planted-defect's verdict: the harness passes only when its bounds caught the defect."""
    if failures:
        print(f"PASS: planted defect '{defect}' ({DEFECTS[defect]}) caught: {failures[0]}")
        return
    sys.exit(f"FAIL: planted defect '{defect}' ({DEFECTS[defect]}) was not caught: the bounds are too wide")


def cached(cache_dir, inputs, sources, compute):
    """compute()'s result (dicts, lists, numbers and tensors), kept in cache_dir under a hash of
    `inputs` (a JSON-able dict naming everything the result depends on: files by digest, flags) and
    of the harness's `sources` and torch's version, so that the ZeRO, mesh and precision variants of
    one model share one reference. No cache_dir: computed every time."""
    if not cache_dir:
        return compute()
    # The BLAS's switches choose the reference's kernels too (Debian's torch runs on OpenBLAS).
    blas = {k: v for k, v in os.environ.items() if k.startswith(("OPENBLAS_", "MKL_", "ONEDNN_", "DNNL_"))}
    key = dict(inputs, torch=torch.__version__, blas=blas, sources=[file_digest(f) for f in sources + [__file__]])
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:32]
    path = os.path.join(cache_dir, digest + ".pt")
    os.makedirs(cache_dir, exist_ok=True)
    # One test computes it while the variants that need the same reference wait for the file.
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(path):
            return torch.load(path)
        result = compute()
        tmp = f"{path}.{os.getpid()}"
        torch.save(result, tmp)
        os.replace(tmp, path)
    return result


def file_digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()
