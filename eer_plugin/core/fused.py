"""The CRF with its recursions fused into GPU kernels (path ``fused``): one launch per recursion.

The sequential path (:mod:`eer_plugin.core.forward_backward`) issues a few operations per position, each
a kernel launch on a GPU; the scan (:mod:`eer_plugin.core.scan`) issues ``O(log n)`` launches but does
``O(n K^3 log n)`` work. Here each recursion is one Triton kernel (:mod:`eer_plugin.core.fused_kernels`)
whose program walks one row's positions in registers, ``O(n K^2)`` work in one launch:

* :class:`FusedForwardBackward`: ``alpha`` and ``beta`` in one launch (grid ``(rows, 2)``), then ``log Z``
  and the marginals ``exp(alpha + beta - log Z)`` as the sequential path defines them; its backward is the
  sequential path's covariance backward (``H`` and ``Rt`` in one launch, the pair marginals ``xi`` and the
  transition gradient as a few batched operations), so gradients of ``log Z`` and of any function of the
  marginals (the EER loss) are exact without a double backward;
* :func:`fused_viterbi`: ``delta`` and the backpointers in one launch, the traceback as the scan's
  composition of backpointer maps (:func:`~eer_plugin.core.scan.trace_back`).

The recursions run in the CRF's recursion dtype (float64 for float32 inputs), as on the other paths.
Triton comes with PyTorch's CUDA builds; without it (or on a CPU) the path is unavailable and
:func:`require_fused` says why. Under ``TRITON_INTERPRET=1`` Triton's interpreter runs the same kernels
on CPU tensors: the tests check the path that way against brute-force enumeration and the sequential path.
"""

import os
from typing import Optional, Tuple

import torch

from eer_plugin.core.scan import tag_marginals, trace_back

#: warps per program (a ``BK x BK`` tile, BK = 32 for the 17 BILUO tags of CoNLL, over 8 warps: 4 elements
#: per thread). Chosen by measurement (benchmarks/gpu/scan_variants.py, NVIDIA H200, torch 2.11.0+cu130,
#: CUDA 13.0, 4 x 512 x 17, 2026-11-27): EER loss forward+backward 7.1 / 4.5 / 4.7 / 4.0 ms and Viterbi
#: 1.8 / 1.8 / 2.0 / 1.3 ms at 1 / 2 / 4 / 8 warps.
NUM_WARPS = 8


#: the oldest GPUs (Volta) that Triton compiles for
MIN_CAPABILITY = (7, 0)


class FusedUnavailable(RuntimeError):
    """The fused path cannot run here (no Triton, or a CPU tensor without Triton's interpreter)."""


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def fused_unavailable_reason(device: torch.device) -> Optional[str]:
    """Why the fused path cannot run on ``device`` (``None`` when it can)."""
    try:
        import triton  # noqa: F401
    except ImportError:
        return "the fused CRF path needs Triton (it comes with PyTorch's CUDA builds: pip install triton)"
    if device.type != "cuda" and not _interpreting():
        return (
            f"the fused CRF path runs on CUDA devices, not {device.type} (TRITON_INTERPRET=1 runs it in "
            "Triton's interpreter, for tests)"
        )
    if device.type == "cuda" and not _interpreting():
        capability = torch.cuda.get_device_capability(device)
        if capability < MIN_CAPABILITY:
            return (
                f"the fused CRF path needs a GPU of compute capability {MIN_CAPABILITY[0]}.{MIN_CAPABILITY[1]} "
                f"or newer (Triton's), this one has {capability[0]}.{capability[1]}: use path='scan'"
            )
    return None


def require_fused(device: torch.device) -> None:
    reason = fused_unavailable_reason(device)
    if reason is not None:
        raise FusedUnavailable(reason)


def _kernels():
    """The kernels ``(forward_backward, conditional_sums, viterbi)``, compiled on their first launch."""
    from eer_plugin.core import fused_kernels

    return fused_kernels.forward_backward, fused_kernels.conditional_sums, fused_kernels.viterbi


#: each kernel's pointer and scalar arguments, as Triton types (ahead-of-time compilation: :func:`compile_for`)
SIGNATURES = (
    ("forward_backward", ("*fp", "*fp", "*fp", "*fp", "*i64", "*fp", "*fp", "i32")),
    ("conditional_sums", ("*fp", "*fp", "*fp", "*fp", "*fp", "*i64", "*fp", "*fp", "i32")),
    ("viterbi", ("*fp", "*fp", "*fp", "*i64", "*fp", "*i64", "i32")),
)


def compile_for(capability: int, tags: int = 17, dtype: str = "fp64", num_warps: int = NUM_WARPS) -> dict:
    """Compiles the kernels for a CUDA compute capability (e.g. 90: H100/H200) without a GPU (Triton's
    own ``ptxas``): ``{kernel name: cubin size in bytes}``; raises what Triton raises on a kernel it
    cannot compile (what the interpreter does not check: types, globals, layouts). Not in a process
    that runs Triton's interpreter (``TRITON_INTERPRET=1``)."""
    import inspect

    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, compile

    from eer_plugin.core import fused_kernels

    sizes = {}
    for name, types in SIGNATURES:
        kernel = getattr(fused_kernels, name)
        names = list(inspect.signature(kernel.fn).parameters)[: len(types)]
        signature = {arg: kind.replace("fp", dtype) for arg, kind in zip(names, types)}
        signature.update(K="constexpr", BK="constexpr")
        source = ASTSource(fn=kernel, signature=signature, constexprs={"K": tags, "BK": _block(tags)})
        compiled = compile(source, target=GPUTarget("cuda", capability, 32), options={"num_warps": num_warps})
        sizes[name] = len(compiled.asm["cubin"])
    return sizes


def _launch(index: int, grid, *args, k: int):
    require_fused(args[0].device)
    kernel = _kernels()[index]
    options = {} if args[0].device.type != "cuda" else {"num_warps": NUM_WARPS}
    kernel[grid](*args, K=k, BK=_block(k), **options)


def _block(tags: int) -> int:
    """The tile's side: the number of tags rounded up to a power of two (at least 2)."""
    return max(2, 1 << (tags - 1).bit_length())


def _contiguous(*tensors):
    return [t.contiguous() for t in tensors]


class FusedForwardBackward(torch.autograd.Function):
    """``(log Z (R,), marginals (R, n, K))`` of restricted emissions ``(R, n, K)``, differentiable in the
    emissions and the transitions (the quantities and conventions of
    :class:`~eer_plugin.core.forward_backward.ForwardBackward`, whose docstring derives the backward)."""

    @staticmethod
    def forward(ctx, emissions, transitions, start, end, lengths):
        rows, n, k = emissions.shape
        lengths = lengths.long().to(emissions.device)
        if n == 0:
            ctx.empty = True
            return emissions.new_zeros(rows), emissions.new_zeros(rows, 0, k)
        ctx.empty = False
        phi, trans, start, end = _contiguous(emissions, transitions, start, end)
        alpha = torch.zeros_like(phi)
        beta = torch.zeros_like(phi)
        _launch(0, (rows, 2), phi, trans, start, end, lengths, alpha, beta, n, k=k)
        last = (lengths - 1).clamp(min=0)
        final = alpha.gather(1, last.view(rows, 1, 1).expand(rows, 1, k)).squeeze(1) + end
        log_z = torch.where(lengths > 0, torch.logsumexp(final, -1), torch.zeros_like(final[:, 0]))
        marginals = tag_marginals(alpha, beta, log_z, lengths)
        ctx.save_for_backward(phi, trans, lengths, alpha, beta, log_z, marginals)
        return log_z, marginals

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_log_z, grad_marginals):
        if ctx.empty:
            return torch.zeros_like(grad_marginals), None, None, None, None
        phi, trans, lengths, alpha, beta, log_z, marginals = ctx.saved_tensors
        rows, n, k = phi.shape
        mask = (torch.arange(n, device=phi.device) < lengths[:, None]).unsqueeze(-1)
        grad = (grad_marginals * mask).to(phi.dtype).contiguous()
        prefix = torch.zeros_like(phi)  # H_j(l) = E[sum_{t <= j} G_t(y_t) | y_j = l]
        suffix = torch.zeros_like(phi)  # Rt_j(l) = E[sum_{t >= j} G_t(y_t) | y_j = l]
        _launch(1, (rows, 2), phi, trans, alpha, beta, grad, lengths, prefix, suffix, n, k=k)
        expected = (grad * marginals).sum((1, 2))  # E[f], f = sum_i G_i(y_i)
        grad_emissions = marginals * (grad_log_z[:, None, None] + prefix + suffix - grad - expected[:, None, None])
        grad_transitions = None
        if ctx.needs_input_grad[1] and n > 1:
            # xi_j(a, b) = p(y_j = a, y_{j+1} = b), weighted by g + H_j(a) + Rt_{j+1}(b) - E[f]
            log_xi = alpha[:, :-1, :, None] + trans + (phi[:, 1:] + beta[:, 1:])[:, :, None, :]
            log_xi = log_xi - log_z[:, None, None, None]
            pair_mask = mask[:, 1:, :, None]
            xi = torch.where(pair_mask & (log_xi > -80.0), log_xi.clamp(max=0.0).exp(), 0.0)
            weights = (grad_log_z - expected)[:, None, None, None] + prefix[:, :-1, :, None] + suffix[:, 1:, None, :]
            grad_transitions = (xi * weights).sum((0, 1))
        elif ctx.needs_input_grad[1]:
            grad_transitions = torch.zeros_like(trans)
        return grad_emissions, grad_transitions, None, None, None


def fused_forward_backward(emissions, transitions, start, end, lengths) -> Tuple[torch.Tensor, torch.Tensor]:
    """:class:`FusedForwardBackward` (``log Z`` and marginals, in the emissions' dtype)."""
    return FusedForwardBackward.apply(emissions, transitions, start, end, lengths)


@torch.no_grad()
def fused_viterbi(emissions, transitions, start, end, lengths, outside_index: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """``(tags (R, n), scores (R,))`` as :func:`~eer_plugin.core.scan.scan_viterbi` returns them."""
    rows, n, k = emissions.shape
    if n == 0:
        return torch.full((rows, 0), outside_index, dtype=torch.long, device=emissions.device), emissions.new_zeros(
            rows
        )
    lengths = lengths.long().to(emissions.device)
    phi, trans, start = _contiguous(emissions, transitions, start)
    delta = torch.zeros_like(phi)
    pointers = torch.zeros(rows, n - 1, k, dtype=torch.long, device=phi.device)
    _launch(2, (rows,), phi, trans, start, lengths, delta, pointers, n, k=k)
    return trace_back(delta, pointers, end, lengths, outside_index)
