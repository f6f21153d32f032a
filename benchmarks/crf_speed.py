"""Speed of the EER training loss on the constrained CRF vs. AllenNLP's plain CRF NLL.

For each lattice ``B x n x K`` this times, in one process and interleaved (ours, theirs, ours, ...):

* ours: ``eer_objective(crf, emissions, mask, allowed, entity_mask)`` -- partial NLL over ~10%
  observed tags (rest latent) + tag marginals + EER hinge -- then ``.loss.backward()``;
* allennlp: ``-ConditionalRandomField(K)(emissions, tags, mask)`` (fully observed NLL) then
  ``.backward()``;
* ours with the recursion in float32 (``recursion_dtype=None``): the cost of the default float64
  recursion (exact float32 marginals at any score scale).

Masks are realistic (rows of random lengths, the first one full), tags are random valid BILUO
sequences with ~15% entity tags. Reports the median over ``--reps`` repetitions after warm-up,
the ratio ours/allennlp (target <= 0.25), a forward/backward split for ours and, labelled as such,
the growth of the process' peak RSS (``ru_maxrss``) during each method's first run -- a coarse
upper bound on extra memory, 0 when it fits in memory already touched.

Usage: ``python benchmarks/crf_speed.py [--reps 9] [--json out.json] [--lattices 14x128x17,...]``.
It is a benchmark, not a test: it always exits 0.
"""

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import time
import traceback
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eer_plugin.core.crf import LATENT, ConstrainedCRF, observations_to_allowed  # noqa: E402
from eer_plugin.core.losses import eer_objective  # noqa: E402
from eer_plugin.core.tags import BiluoScheme  # noqa: E402

LATTICES = ((14, 128, 17), (14, 512, 17), (2, 512, 73))
TARGET_RATIO = 0.25
TYPE_NAMES = [
    "PER",
    "LOC",
    "ORG",
    "MISC",
    "DATE",
    "TIME",
    "MONEY",
    "PERCENT",
    "QUANTITY",
    "ORDINAL",
    "CARDINAL",
    "NORP",
    "FAC",
    "GPE",
    "PRODUCT",
    "EVENT",
    "WORK_OF_ART",
    "LAW",
    "LANGUAGE",
]


def make_scheme(num_tags):
    if (num_tags - 1) % 4:
        raise ValueError(f"K={num_tags} is not 1 + 4 * types")
    types = (num_tags - 1) // 4
    names = TYPE_NAMES[:types] + [f"T{i}" for i in range(len(TYPE_NAMES), types)]
    return BiluoScheme(names)


def random_biluo(scheme, length, gen, entity_rate=0.15):
    """A random valid BILUO tagging with roughly ``entity_rate`` entity tags."""
    types = len(scheme.entity_types)
    tags, i = [], 0
    while i < length:
        # entities of length 1-4 start with a probability giving ~entity_rate entity tokens
        if torch.rand((), generator=gen) < entity_rate / 2.5:
            size = min(int(torch.randint(1, 5, (), generator=gen)), length - i)
            t = 1 + 4 * int(torch.randint(types, (), generator=gen))
            tags += [t + 3] if size == 1 else [t] + [t + 1] * (size - 2) + [t + 2]
            i += size
        else:
            tags.append(0)
            i += 1
    return tags


def make_batch(batch, n, k, seed=0, observed=0.10):
    gen = torch.Generator().manual_seed(seed)
    scheme = make_scheme(k)
    lengths = torch.randint(n // 3, n + 1, (batch,), generator=gen)
    lengths[0] = n
    mask = torch.arange(n) < lengths[:, None]
    tags = torch.zeros(batch, n, dtype=torch.long)
    obs = torch.full((batch, n), LATENT, dtype=torch.long)
    for b in range(batch):
        length = int(lengths[b])
        truth = torch.tensor(random_biluo(scheme, length, gen))
        tags[b, :length] = truth
        reveal = torch.rand(length, generator=gen) < observed
        obs[b, :length] = torch.where(reveal, truth, obs[b, :length])
    emissions = torch.randn(batch, n, k, generator=gen) * 2
    return scheme, emissions, mask, tags, observations_to_allowed(obs, k)


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def maxrss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def bench_lattice(batch, n, k, reps, warmup):
    from allennlp.modules import ConditionalRandomField

    scheme, emissions, mask, tags, allowed = make_batch(batch, n, k)
    torch.manual_seed(0)
    ours = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end())
    # the same CRF with the recursion in float32 (recursion_dtype=None): the cost of the float64 recursion
    ours32 = ConstrainedCRF(
        scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end(), recursion_dtype=None
    )
    with torch.no_grad():
        ours32.transitions.copy_(ours.transitions)
    theirs = ConditionalRandomField(k)
    entity_mask = scheme.entity_mask()
    em_ours = emissions.clone().requires_grad_(True)
    em_theirs = emissions.clone().requires_grad_(True)
    state = {}

    def ours_forward():
        state["out"] = eer_objective(ours, em_ours, mask, allowed, entity_mask)

    def ours_backward():
        state["out"].loss.backward()
        em_ours.grad = None
        ours.transitions.grad = None
        del state["out"]

    def ours32_step():
        eer_objective(ours32, em_ours, mask, allowed, entity_mask).loss.backward()
        em_ours.grad = None
        ours32.transitions.grad = None

    def theirs_step():
        loss = -theirs(em_theirs, tags, mask)
        loss.backward()
        em_theirs.grad = None
        for p in theirs.parameters():
            p.grad = None

    rss0 = maxrss_mb()
    ours_forward()
    rho_hat = float(state["out"].rho_hat)
    ours_backward()
    rss1 = maxrss_mb()
    theirs_step()
    rss2 = maxrss_mb()
    for _ in range(warmup):
        ours_forward()
        ours_backward()
        ours32_step()
        theirs_step()
    fwd, bwd, total, ref, total32 = [], [], [], [], []
    for _ in range(reps):
        f = timed(ours_forward)
        b = timed(ours_backward)
        fwd.append(f)
        bwd.append(b)
        total.append(f + b)
        total32.append(timed(ours32_step))
        ref.append(timed(theirs_step))
    ms = lambda xs: 1e3 * statistics.median(xs)  # noqa: E731
    return {
        "lattice": f"{batch}x{n}x{k}",
        "ours_ms": ms(total),
        "allennlp_ms": ms(ref),
        "ratio": ms(total) / ms(ref),
        "ours_float32_recursion_ms": ms(total32),
        "float64_recursion_cost": ms(total) / ms(total32),
        "ours_forward_ms": ms(fwd),
        "ours_backward_ms": ms(bwd),
        "ours_peak_rss_growth_mb": rss1 - rss0,
        "allennlp_peak_rss_growth_mb": rss2 - rss1,
        "rho_hat": rho_hat,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=9, help="timed repetitions (median reported, >= 7)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--lattices", default=",".join("x".join(map(str, l)) for l in LATTICES))
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"torch {torch.__version__}, threads {torch.get_num_threads()}, {platform.processor() or platform.machine()}, "
        f"python {platform.python_version()}; median of {max(args.reps, 7)} reps after {args.warmup} warm-up; "
        f"load average {os.getloadavg()[0]:.1f} (other processes skew timings)"
    )
    results = []
    for spec in args.lattices.split(","):
        try:
            batch, n, k = (int(x) for x in spec.lower().split("x"))
            results.append(bench_lattice(batch, n, k, max(args.reps, 7), args.warmup))
        except Exception:  # a benchmark never fails the build
            traceback.print_exc()
    header = f"{'lattice':>10} {'ours ms':>9} {'allennlp ms':>12} {'ratio':>6} {'target':>7} {'fwd ms':>8} {'bwd ms':>8} {'peakRSS+ ours/alnlp MB':>23}"
    print(header)
    print("-" * len(header))
    for r in results:
        ok = "ok" if r["ratio"] <= TARGET_RATIO else "MISS"
        rss = f"{r['ours_peak_rss_growth_mb']:.0f}/{r['allennlp_peak_rss_growth_mb']:.0f}"
        print(
            f"{r['lattice']:>10} {r['ours_ms']:9.1f} {r['allennlp_ms']:12.1f} {r['ratio']:6.3f} "
            f"{'<=' + str(TARGET_RATIO):>5}{ok:>5} {r['ours_forward_ms']:8.1f} {r['ours_backward_ms']:8.1f} {rss:>23}"
        )
    print(
        "ours = EER loss (partial NLL, ~10% observed + marginals + ratio hinge) fwd+bwd; "
        "allennlp = plain NLL fwd+bwd; peakRSS+ = ru_maxrss growth on first run (coarse)"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"threads": torch.get_num_threads(), "results": results}, indent=2))
    return 0


def never_fail(main_function):
    """Runs a benchmark's ``main`` and exits 0 whatever happens (a benchmark never fails the build)."""
    try:
        main_function()
    except Exception:
        traceback.print_exc()
    sys.exit(0)


def op_counts(batch, n, k):
    """Top-level ATen operations of one forward+backward, ours and AllenNLP's (torch.profiler): on
    short lattices both are dominated by the fixed cost per operation, so their ratio bounds the
    time ratio from below."""
    from allennlp.modules import ConditionalRandomField
    from torch.profiler import profile

    scheme, emissions, mask, tags, allowed = make_batch(batch, n, k)
    ours = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end())
    theirs = ConditionalRandomField(k)
    em = emissions.clone().requires_grad_(True)
    steps = {
        "ours": lambda: eer_objective(ours, em, mask, allowed, scheme.entity_mask()).loss.backward(),
        "allennlp": lambda: (-theirs(em, tags, mask)).backward(),
    }
    counts = {}
    for name, step in steps.items():
        step()
        with profile() as prof:
            step()
        counts[name] = sum(
            1
            for e in prof.events()
            if e.name.startswith("aten::") and (e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::"))
        )
    return {
        "lattice": f"{batch}x{n}x{k}",
        "ours_ops": counts["ours"],
        "allennlp_ops": counts["allennlp"],
        "ops_ratio": counts["ours"] / counts["allennlp"],
        "ours_ops_per_position": counts["ours"] / (n - 1),
    }


if __name__ == "__main__":
    never_fail(main)
