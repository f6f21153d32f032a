"""The constrained CRF as a parallel (associative) scan: ``O(log n)`` sequential steps instead of ``n``.

The sequential recursions of :mod:`eer_plugin.core.forward_backward` and :meth:`ConstrainedCRF.viterbi
<eer_plugin.core.crf.ConstrainedCRF.viterbi>` issue a few small operations per position: on a GPU each
is a kernel launch, so 512 positions cost thousands of launches per training step whatever the
arithmetic. Here the same quantities come from products of ``K x K`` matrices in the log semiring
(``(A * B)[a, c] = logsumexp_b (A[a, b] + B[b, c])``) and the max-plus semiring, which are
associative, so all prefix and suffix products take ``ceil(log2(n + 1))`` batched steps
(Hillis-Steele scan), each a handful of operations over all positions at once.

For a row of length ``L`` (same notation as :mod:`eer_plugin.core.crf`: emissions ``phi``, transitions
``T``, start/end penalties, :data:`IMPOSSIBLE` for what the grammar forbids) the scan runs over the
``n + 1`` matrices

* ``X_0[a, b] = phi_0(b) + start(b)`` (every row the same: the first position),
* ``X_i[a, b] = T[a, b] + phi_i(b)`` for ``0 < i < L``,
* ``X_L[a, b] = end(a)`` (every column the same: the last position's exit),
* ``X_i = I`` (0 on the diagonal, :data:`IMPOSSIBLE` elsewhere) for ``i > L`` (padding),

so that with prefix products ``P_i = X_0 * .. * X_i`` and suffix products ``S_j = X_j * .. * X_n``:
``alpha_i = P_i[0, :]``, ``beta_i(a) = S_{i+1}[a, 0]``, ``log Z = P_n[0, 0]`` and the marginals
``exp(alpha_i + beta_i - log Z)``, exactly as the sequential path defines them (including ``phi_i``
in ``alpha_i``). Every log-semiring product is an exact ``logsumexp`` over ``K`` terms (no
rescaled matrix product, which underflows at large score spreads), in the recursion dtype
(float64 for float32 inputs, as the sequential path). Gradients of ``log Z`` and of the marginals
(the EER loss is a function of them) follow by autograd through the scan: :class:`LogMatMul` has a
hand-written backward that recomputes its ``K^3`` terms instead of storing them.

Viterbi runs the same scan in the max-plus semiring for ``delta_i = P_i[0, :]`` (best score of a
prefix ending in each tag), takes every position's backpointers at once
(``argmax_a delta_{i-1}(a) + T[a, b]``, as the sequential loop does) and follows them with a second
scan that composes the backpointer maps (``(f o g)(x) = f(g(x))``, associative), so the traceback is
exact (the same path as a sequential walk back) in ``O(log n)`` steps too.

The cost: ``O(n K^3 log n)`` arithmetic instead of ``O(n K^2)``, in ``O(log n)`` launches. On a CPU,
where an operation costs its arithmetic, the sequential path is faster and stays the default
(``auto``, :mod:`eer_plugin.core.crf_paths`: on CUDA devices the fused kernels of
:mod:`eer_plugin.core.fused` where Triton runs, else this scan; the sequential path elsewhere).
"""

import math
from typing import Optional, Tuple

import torch

from eer_plugin.core.step_constants import IMPOSSIBLE

#: Largest number of elements of one ``K^3`` temporary of a semiring product; bigger batches are
#: multiplied in pieces (bounds memory; a 2 x 4 x 512 x 17 float64 lattice fits in one piece).
_MAX_TERMS = 1 << 25

#: Log-probabilities below this give marginal 0 (as in :mod:`eer_plugin.core.forward_backward`).
_LOG_FLOOR = -80.0


def _pieces(rows: int, k: int):
    """Slices of the leading dimension so that each piece's ``K^3`` temporary has at most ``_MAX_TERMS`` elements."""
    size = max(1, _MAX_TERMS // (k * k * k))
    return [slice(i, min(i + size, rows)) for i in range(0, rows, size)]


def _log_terms(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.unsqueeze(-1) + b.unsqueeze(-3)  # (M, K, K, K): [m, a, b, c]


class LogMatMul(torch.autograd.Function):
    """``C[m, a, c] = logsumexp_b (A[m, a, b] + B[m, b, c])`` for ``(M, K, K)`` tensors, exact (a
    ``logsumexp`` over the ``K`` terms of each entry), with a backward that recomputes the terms:
    ``dA[a, b] = sum_c G[a, c] exp(A[a, b] + B[b, c] - C[a, c])`` (exponents <= 0: no overflow)."""

    @staticmethod
    def forward(ctx, a, b):
        if a.shape[0] * a.shape[1] ** 3 <= _MAX_TERMS:
            c = torch.logsumexp(_log_terms(a, b), -2)
        else:
            c = torch.cat([torch.logsumexp(_log_terms(a[s], b[s]), -2) for s in _pieces(a.shape[0], a.shape[1])])
        ctx.save_for_backward(a, b, c)
        return c

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        a, b, c = ctx.saved_tensors
        grads_a, grads_b = [], []
        for s in _pieces(a.shape[0], a.shape[1]):
            weights = (_log_terms(a[s], b[s]) - c[s].unsqueeze(-2)).exp_().mul_(grad[s].unsqueeze(-2))
            grads_a.append(weights.sum(-1))
            grads_b.append(weights.sum(-3))
        if len(grads_a) == 1:
            return grads_a[0], grads_b[0]
        return torch.cat(grads_a), torch.cat(grads_b)


def _max_mat_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``C[m, a, c] = max_b (A[m, a, b] + B[m, b, c])`` (no gradient: Viterbi only)."""
    if a.shape[0] * a.shape[1] ** 3 <= _MAX_TERMS:
        return _log_terms(a, b).amax(-2)
    return torch.cat([_log_terms(a[s], b[s]).amax(-2) for s in _pieces(a.shape[0], a.shape[1])])


def _scan(x: torch.Tensor, product, reverse: bool) -> torch.Tensor:
    """Inclusive Hillis-Steele scan of ``x (R, N, ...)`` along ``N`` under the associative ``product``:
    prefix products ``x_0 * .. * x_i`` or, with ``reverse``, suffix products ``x_j * .. * x_{N-1}``,
    in ``ceil(log2 N)`` steps."""
    rows, count = x.shape[:2]
    tail = x.shape[2:]
    shift = 1
    while shift < count:
        left, right = (x[:, shift:], x[:, : count - shift]) if not reverse else (x[:, : count - shift], x[:, shift:])
        # prefix: x_i <- x_{i-shift} * x_i ; suffix: x_j <- x_j * x_{j+shift}
        first, second = (right, left) if not reverse else (left, right)
        combined = product(first.reshape((-1,) + tail), second.reshape((-1,) + tail)).view((rows, count - shift) + tail)
        x = torch.cat([x[:, :shift], combined], 1) if not reverse else torch.cat([combined, x[:, count - shift :]], 1)
        shift *= 2
    return x


def _chain(emissions, transitions, start, end, lengths) -> torch.Tensor:
    """The ``n + 1`` matrices ``X (R, n + 1, K, K)`` of the module docstring (rows of length 0: ``X_0 = end``)."""
    rows, n, k = emissions.shape
    positions = torch.arange(n + 1, device=emissions.device)[None, :, None, None]
    length = lengths.view(rows, 1, 1, 1)
    steps = transitions + emissions.unsqueeze(-2)  # (R, n, K, K): T[a, b] + phi_i(b)
    first = (emissions[:, :1] + start).unsqueeze(-2).expand(rows, 1, k, k)
    steps = torch.cat([first, steps[:, 1:], emissions.new_zeros(rows, 1, k, k)], 1)  # (R, n + 1, K, K)
    exit_ = end.unsqueeze(-1).expand(k, k)
    identity = torch.full((k, k), IMPOSSIBLE, dtype=emissions.dtype, device=emissions.device).fill_diagonal_(0.0)
    return torch.where(positions < length, steps, torch.where(positions == length, exit_, identity))


def scan_forward_backward(
    emissions, transitions, start, end, lengths, marginals: bool = True
) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """``(log Z (R,), marginals (R, n, K))`` of restricted emissions ``(R, n, K)`` by the log-semiring scan,
    in their dtype, differentiable (autograd) in the emissions and the transitions; the same
    quantities and conventions as :class:`~eer_plugin.core.forward_backward.ForwardBackward`.
    Without ``marginals`` only the prefix scan runs (``log Z`` alone, half the work) and the
    marginals are ``None``."""
    rows, n, k = emissions.shape
    lengths = lengths.long().to(emissions.device)
    if n == 0:
        return emissions.new_zeros(rows), emissions.new_zeros(rows, 0, k) if marginals else None
    chain = _chain(emissions, transitions, start, end, lengths)
    prefix = _scan(chain, LogMatMul.apply, reverse=False)
    valid = lengths > 0
    log_z = torch.where(valid, prefix[:, n, 0, 0], torch.zeros_like(prefix[:, n, 0, 0]))
    if not marginals:
        return log_z, None
    suffix = _scan(chain, LogMatMul.apply, reverse=True)
    alpha = prefix[:, :n, 0, :]  # (R, n, K)
    beta = suffix[:, 1:, :, 0]  # beta_i = S_{i+1}[:, 0]
    return log_z, tag_marginals(alpha, beta, log_z, lengths)


def tag_marginals(alpha, beta, log_z, lengths) -> torch.Tensor:
    """``mu_i(y) = exp(alpha_i(y) + beta_i(y) - log Z)`` ``(R, n, K)``, 0 below ``exp(_LOG_FLOOR)`` and on
    padding (``alpha`` including ``phi_i``, ``beta`` excluding it)."""
    mask = torch.arange(alpha.shape[1], device=alpha.device) < lengths[:, None]
    log_marginals = alpha + beta - log_z[:, None, None]
    marginals = log_marginals.clamp(_LOG_FLOOR, 0).exp()
    return marginals.masked_fill((log_marginals <= _LOG_FLOOR) | ~mask.unsqueeze(-1), 0.0)


def _compose(f: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """``(f o g)(x) = f(g(x))`` for maps stored as index tensors ``(M, K)``."""
    return f.gather(-1, g)


@torch.no_grad()
def scan_viterbi(emissions, transitions, start, end, lengths, outside_index: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """``(tags (R, n), scores (R,))``: the best tagging of restricted emissions by the max-plus scan and
    a scan over the backpointer maps; rows of length 0 get ``outside_index`` and score 0."""
    rows, n, k = emissions.shape
    device = emissions.device
    lengths = lengths.long().to(device)
    chain = _chain(emissions, transitions, start, end, lengths)
    prefix = _scan(chain, _max_mat_mul, reverse=False)
    delta = prefix[:, :n, 0, :]  # (R, n, K): best score of a prefix ending in each tag
    # backpointers of positions 1..n-1 at once (as the sequential loop: argmax over the predecessor)
    pointers = (delta[:, :-1].unsqueeze(-1) + transitions).argmax(-2)  # (R, n-1, K)
    return trace_back(delta, pointers, end, lengths, outside_index)


def trace_back(delta, pointers, end, lengths, outside_index: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """``(tags (R, n), scores (R,))`` from ``delta (R, n, K)`` (best score of a prefix ending in each tag) and
    the backpointers ``(R, n-1, K)`` of positions ``1..n-1``, by a scan over the backpointer maps; rows of
    length 0 get ``outside_index`` and score 0."""
    rows, n, k = delta.shape
    device = delta.device
    last = (lengths - 1).clamp(min=0)
    final = delta.gather(1, last.view(rows, 1, 1).expand(rows, 1, k)).squeeze(1) + end
    best_score, tag = final.max(-1)
    positions = torch.arange(n, device=device)
    identity = torch.arange(k, device=device).expand(rows, max(n - 1, 0), k)
    maps = torch.where((positions[1:] < lengths[:, None]).unsqueeze(-1), pointers, identity)
    # G_j = f_j o f_{j+1} o .. o f_{n-1}; tag_i = G_{i+1}(final tag), tag_{n-1} = final tag
    if n > 1:
        composed = _scan(maps, _compose, reverse=True)
        walked = composed.gather(2, tag.view(rows, 1, 1).expand(rows, n - 1, 1)).squeeze(2)
        tags = torch.cat([walked, tag[:, None]], 1)
    else:
        tags = tag[:, None]
    inside = positions < lengths[:, None]
    tags = torch.where(inside, tags, torch.full_like(tags, outside_index))
    best_score = torch.where(lengths > 0, best_score, torch.zeros_like(best_score))
    return tags, best_score


def sequential_depth(n: int) -> int:
    """Steps of one scan over ``n`` positions (``n + 1`` matrices): ``ceil(log2(n + 1))``."""
    return math.ceil(math.log2(n + 1)) if n > 0 else 0
