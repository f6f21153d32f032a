"""Where the parallel scan's time goes on a GPU, and what fusing its semiring products would save (issue 52).

The scan's log-semiring product (:class:`eer_plugin.core.scan.LogMatMul`) materialises a ``(M, K, K, K)``
temporary per step and reads it several times (add, max, subtract, exp, sum); at 4 x 512 x 17 in
float64 that is about 80 MB per step, so the EER loss is bound by memory traffic, not launches. This
script times one training step's CRF work (the EER loss forward + backward, and Viterbi) at that size on
the path as it is (``eager``) and with the products compiled by ``torch.compile`` (``compiled``: the
broadcast add fused into its reductions, no temporary), checks the compiled results against the eager
ones, then the fused path (one Triton kernel per recursion) at 1-8 warps per program, and prints one JSON line. Pure PyTorch (``eer_plugin.core`` only): it runs on a lent GPU machine's
own torch, without the carried packages:

    python3 benchmarks/gpu/scan_variants.py            # CUDA device 0; --device cpu for a dry run
"""

import argparse
import json
import statistics
import sys
import time
import traceback
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import step_breakdown  # noqa: E402  (benchmarks/step_breakdown.py: its timer synchronises CUDA)

from eer_plugin.core import fused, scan  # noqa: E402
from eer_plugin.core.crf import LATENT, ConstrainedCRF, observations_to_allowed  # noqa: E402
from eer_plugin.core.losses import eer_objective  # noqa: E402
from eer_plugin.core.tags import BiluoScheme  # noqa: E402


def _forward(a, b):
    return torch.logsumexp(a.unsqueeze(-1) + b.unsqueeze(-3), -2)


def _backward(a, b, c, grad):
    weights = (a.unsqueeze(-1) + b.unsqueeze(-3) - c.unsqueeze(-2)).exp() * grad.unsqueeze(-2)
    return weights.sum(-1), weights.sum(-3)


def _max_product(a, b):
    return (a.unsqueeze(-1) + b.unsqueeze(-3)).amax(-2)


def compiled_products():
    """The three semiring kernels compiled (dynamic shapes: the scan's steps shrink)."""
    forward = torch.compile(_forward, dynamic=True)
    backward = torch.compile(_backward, dynamic=True)
    max_product = torch.compile(_max_product, dynamic=True)

    class CompiledLogMatMul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            c = forward(a, b)
            ctx.save_for_backward(a, b, c)
            return c

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, grad):
            return backward(*ctx.saved_tensors, grad.contiguous())

    return CompiledLogMatMul, max_product


def batch(device, rows=4, n=512, k=17, seed=0):
    scheme = BiluoScheme(["PER", "LOC", "ORG", "MISC"][: (k - 1) // 4])
    gen = torch.Generator().manual_seed(seed)
    emissions = torch.randn(rows, n, k, generator=gen).to(device)
    mask = torch.ones(rows, n, dtype=torch.bool, device=device)
    mask[1, n // 2 :] = False  # a shorter row: padding on the path too
    observations = torch.where(torch.rand(rows, n, generator=gen) < 0.1, 0, LATENT)
    crf = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end(), path="scan").to(
        device
    )
    return scheme, crf, emissions, mask, observations_to_allowed(observations, k).to(device)


def timed(fn, device, reps):
    """Median milliseconds of ``fn`` on ``device`` after two warm-up calls."""
    fn()
    fn()
    return 1000 * statistics.median(step_breakdown._timed(fn, device) for _ in range(reps))


def graphed(crf, scheme, emissions, mask, allowed, reference, device, reps):
    """The eager path captured as CUDA graphs (the loss's forward and backward, and Viterbi): one replay
    each instead of about a thousand launches from Python."""
    entity_mask = scheme.entity_mask().to(device)

    def objective(scores):
        return eer_objective(crf, scores, mask, allowed, entity_mask).loss

    start = time.perf_counter()
    graphed_objective = torch.cuda.make_graphed_callables(objective, (emissions.clone().requires_grad_(),))
    static = emissions.clone()
    decode_graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        crf.viterbi(static, mask)  # warm up outside the capture
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(decode_graph):
        static_tags = crf.viterbi(static, mask)[0]
    capture = time.perf_counter() - start

    def loss():
        scores = emissions.clone().requires_grad_()
        value = graphed_objective(scores)
        value.backward()
        return value.detach(), scores.grad

    def decode():
        static.copy_(emissions)
        decode_graph.replay()
        return static_tags

    return variant_result(loss, decode, reference, device, reps, setup_s=capture)


def variant_result(loss, decode, reference, device, reps, setup_s=0.0):
    """A variant's times (medians, ms), its first call's seconds (compilation or ``setup_s``, a capture, included)
    and its results against the eager ``reference`` ``((loss, grad), tags)``."""
    start = time.perf_counter()
    (value, grad), tags = loss(), decode()
    first_call_s = setup_s + time.perf_counter() - start
    return {
        "loss_ms": timed(loss, device, reps),
        "decoding_ms": timed(decode, device, reps),
        "first_call_s": first_call_s,
        "loss_abs_diff": float((value - reference[0][0]).abs()),
        "grad_max_abs_diff": float((grad - reference[0][1]).abs().max()),
        "same_tags": bool(torch.equal(tags, reference[1])),
    }


def measure(device, reps):
    scheme, crf, emissions, mask, allowed = batch(device)

    def loss():
        scores = emissions.clone().requires_grad_()
        value = eer_objective(crf, scores, mask, allowed, scheme.entity_mask().to(device)).loss
        value.backward()
        return value.detach(), scores.grad

    def decode():
        return crf.viterbi(emissions, mask)[0]

    result = {}
    reference = (loss(), decode())
    eager = scan.LogMatMul, scan._max_mat_mul
    variants = {"eager": eager}
    if device.type == "cuda":
        variants["compiled"] = compiled_products()
    for name, (log_product, max_product) in variants.items():
        scan.LogMatMul, scan._max_mat_mul = log_product, max_product
        try:
            result[name] = variant_result(loss, decode, reference, device, reps)  # compiles on first use
        finally:
            scan.LogMatMul, scan._max_mat_mul = eager
    if device.type == "cuda":
        try:
            result["graphed"] = graphed(crf, scheme, emissions, mask, allowed, reference, device, reps)
        except Exception as err:  # noqa: BLE001 - reported, not raised: the other variants still count
            traceback.print_exc()
            result["graphed"] = {"error": f"{type(err).__name__}: {err}"[:500]}
    if fused.fused_unavailable_reason(device) is None:
        result.update(fused_variants(crf, loss, decode, reference, device, reps))
    return result


def fused_variants(crf, loss, decode, reference, device, reps):
    """The fused path (one Triton kernel per recursion, :mod:`eer_plugin.core.fused`) with 1, 2, 4 and 8 warps
    per program (:data:`~eer_plugin.core.fused.NUM_WARPS`: the default is the one a GPU measurement chose)."""
    result, default = {}, fused.NUM_WARPS
    crf.path = "fused"
    try:
        for warps in (1, 2, 4, 8):
            fused.NUM_WARPS = warps
            try:
                result[f"fused_{warps}"] = variant_result(loss, decode, reference, device, reps)  # compiles first
            except Exception as err:  # noqa: BLE001 - reported: the other variants still count
                traceback.print_exc()
                result[f"fused_{warps}"] = {"error": f"{type(err).__name__}: {err}"[:500]}
    finally:
        crf.path, fused.NUM_WARPS = "scan", default
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda", help="device (default: %(default)s)")
    parser.add_argument("--reps", type=int, default=20, help="timed repetitions, median (default: %(default)s)")
    args = parser.parse_args()
    device = torch.device(args.device)
    facts = {"device": str(device), "torch": torch.__version__}
    if device.type == "cuda":
        facts.update(device_name=torch.cuda.get_device_name(device), cuda=torch.version.cuda)
    print(json.dumps({**facts, "lattice": "4 x 512 x 17, float64 recursion", **measure(device, args.reps)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
