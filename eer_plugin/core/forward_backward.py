"""The fast forward-backward pass behind :class:`eer_plugin.core.crf.ConstrainedCRF`.

:class:`ForwardBackward` computes ``log Z`` and the exact tag marginals of a batch of (already
restricted) lattices in one pass over the positions: a factorised log-space recursion (the
grammar's allowed transitions grouped into slots, see
:func:`~eer_plugin.core.step_constants.step_constants`), run in float64 for float32 inputs, with a hand-written backward so that
the marginals are differentiable without a double backward (the EER loss is a function of them).
``reference_log_partition`` in ``tests/oracles.py`` is the textbook forward algorithm the tests
check this against (and both against brute-force enumeration).
"""

import math
from typing import NamedTuple, Optional

import torch

from eer_plugin.core.step_constants import FAR, IMPOSSIBLE, Steps, cast_steps, step_constants

__all__ = ["IMPOSSIBLE", "ForwardBackward", "build_lattice", "work_dtype"]

#: Log-probabilities below this are treated as exactly 0 inside exponentials. ``exp`` of very
#: negative arguments takes a slow path on CPUs (10-40x slower); clamping at -80 keeps it on the
#: fast path and changes every sum by less than 1e-33 relative, far below float32/64 rounding.
_LOG_FLOOR = -80.0


def _reverse_index(lengths: torch.Tensor, n: int) -> torch.Tensor:
    """``(R, n)`` index reversing each row within its length (padding positions map to themselves)."""
    positions = torch.arange(n, device=lengths.device).expand(lengths.shape[0], n)
    return torch.where(positions < lengths[:, None], lengths[:, None] - 1 - positions, positions)


def _gather_positions(values: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``values[r, index[r, i]]`` for ``values`` of shape ``(R, n, ...)``."""
    rows, n = values.shape[:2]
    flat = (index + n * torch.arange(rows, device=index.device)[:, None]).flatten()
    return values.reshape((rows * n,) + values.shape[2:]).index_select(0, flat).view(index.shape + values.shape[2:])


def _gather_steps(values: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``values[index[r, i], r]`` for position-major ``values`` of shape ``(n, R, ...)``: ``(R, n, ...)``."""
    n, rows = values.shape[:2]
    flat = (rows * index + torch.arange(rows, device=index.device)[:, None]).flatten()
    return values.reshape((n * rows,) + values.shape[2:]).index_select(0, flat).view(index.shape + values.shape[2:])


#: ``1 / ln 2``: the forward loop runs in base-2 logarithms (see :meth:`ForwardBackward.forward`).
_LOG2E = 1.0 / math.log(2.0)


class ForwardBackward(torch.autograd.Function):
    """Exact forward-backward in log space, with a hand-written backward that differentiates both
    ``log Z`` and the marginals (so losses on marginals, like the EER loss, need no double backward).

    Inputs: emissions ``phi (R, n, K)``, transitions ``T (K, K)`` (disallowed entries already at
    :data:`IMPOSSIBLE`), start/end penalties ``(K,)`` and ``lengths (R,)``.

    Forward: one loop over positions runs the forward recursion
    ``alpha_{i+1}(b) = phi_{i+1}(b) + log sum_a exp(alpha_i(a) + T(a, b))`` on the rows and, side by
    side with it (columns ``K..2K-1``), the same recursion on the rows reversed within their lengths
    with ``T`` transposed, which gives ``beta``. :func:`~eer_plugin.core.step_constants.step_constants` factorizes each step into
    weights ``W_i[g, a] = exp(alpha_i(a) - m_{i,g})`` (``m_{i,g}``: the largest ``alpha_i`` over the
    predecessor set of group ``g``; in float32 floored at ``exp(_LOG_FLOOR)``), one small matrix product with
    constant factors ``F`` giving ``s_{i+1}(b) = sum_a W_i[g(b), a] F(a, b)``, and
    ``alpha_{i+1}(b) = phi_{i+1}(b) + shift(b) + m_{i,g(b)} + log s_{i+1}(b)``; ``W`` and ``s`` are
    kept for the backward. Then
    ``log Z = logsumexp(alpha_{L-1} + end)`` and ``mu_i(y) = exp(alpha_i(y) + beta_i(y) - log Z)``.

    The pair marginals and the conditionals follow without any further exponential:
    ``xi_i(a, b) = p(y_i = a, y_{i+1} = b) = W_i[g(b), a] F(a, b) mu_{i+1}(b) / s_{i+1}(b)`` and
    ``P(y_i = a | y_{i+1} = b) = W_i[g(b), a] F(a, b) / s_{i+1}(b)``, stochastic by construction
    (the reversed rows give ``P(y_{i+1} = b | y_i = a)`` the same way).

    Backward, for upstream gradients ``g = dL/dlog Z`` and ``G = dL/dmu``:

    * ``d log Z / d phi_i(y) = mu_i(y)``, ``d log Z / d T(a, b) = sum_i xi_i(a, b)``;
    * with ``f(y) = sum_i G_i(y_i)`` (so ``sum G * mu = E[f]``), ``dE[f]/dtheta = Cov(f, feature)``:
      ``dE[f]/dphi_j(l) = mu_j(l) (H_j(l) + Rt_j(l) - G_j(l) - E[f])`` and
      ``dE[f]/dT(a, b) = sum_j xi_j(a, b) (H_j(a) + Rt_{j+1}(b) - E[f])``, where
      ``H_j(l) = E[sum_{t<=j} G_t(y_t) | y_j = l]`` and ``Rt_j(l) = E[sum_{t>=j} G_t(y_t) | y_j = l]``
      follow the linear recursions ``H_j = G_j + H_{j-1} P(y_{j-1} | y_j)`` and
      ``Rt_j = G_j + P(y_{j+1} | y_j) Rt_{j+1}``, run side by side in one loop (the second on
      reversed rows), one small matrix product per step:
      ``H_{j+1}(b) = G_{j+1}(b) + sum_a W_j[g(b), a] H_j(a) F(a, b) / s_{j+1}(b)``. Being averages
      under stochastic conditionals, both stay bounded whatever the scores.
    * All the sums over ``xi`` are one matrix product over steps and rows:
      ``sum_{r,i} W_i[g, a] c_i(a) mu_{i+1}(b) / s_{i+1}(b)`` at ``g = g(b)``, times ``F(a, b)``,
      with ``c_i = g - E[f] + H_i`` on the forward columns and ``c_i = Rt`` on the reversed ones
      (whose pairs are indexed the other way round).
    """

    @staticmethod
    def forward(ctx, emissions, transitions, start, end, lengths, recursion_dtype=None):
        rows, n, k = emissions.shape
        if n == 0:
            ctx.empty = True
            return emissions.new_zeros(rows), emissions.new_zeros(rows, 0, k)
        ctx.empty = False
        dtype = emissions.dtype
        work = work_dtype(dtype, recursion_dtype)
        lattice = build_lattice(emissions.to(work), transitions.to(work), start.to(work), end.to(work), lengths)
        # the backward's quantities are bounded (probabilities, conditionals): the input dtype suffices
        log_z, marginals = lattice.log_z.to(dtype), lattice.marginals.to(dtype)
        ctx.save_for_backward(log_z, marginals, lattice.lengths)
        ctx.weights, ctx.norms = lattice.weights.to(dtype), lattice.norms.to(dtype)
        ctx.steps, ctx.reverse = cast_steps(lattice.steps, dtype), lattice.reverse
        return log_z, marginals

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_log_z, grad_marginals):
        if ctx.empty:
            emissions_grad = grad_marginals.new_zeros(grad_marginals.shape) if ctx.needs_input_grad[0] else None
            return emissions_grad, None, None, None, None, None
        log_z, marginals, lengths = ctx.saved_tensors
        weights, norms, steps, reverse = ctx.weights, ctx.norms, ctx.steps, ctx.reverse
        rows, n, k = marginals.shape
        slots = weights.shape[-1]
        mask = torch.arange(n, device=marginals.device) < lengths[:, None]
        grad_emissions = grad_log_z[:, None, None] * marginals
        need_transitions = ctx.needs_input_grad[1]
        g = grad_marginals * mask.unsqueeze(-1)
        active = g.flatten(1).ne(0).any(1).nonzero().squeeze(1)
        num_active = len(active)
        if n == 1:
            if num_active:
                mu_a = marginals[active]
                expected = (g[active] * mu_a).sum((1, 2))
                grad_emissions[active] += mu_a * (g[active] - expected[:, None, None])
            return grad_emissions, marginals.new_zeros(k, k) if need_transitions else None, None, None, None, None

        inverse_norms = norms.reciprocal()  # (n-1, R, 2K)
        row_weight = grad_log_z.clone()  # per-row coefficient of sum_i xi_i in dL/dT (forward columns)
        states = None
        if num_active:
            lo, hi = int(active[0]), int(active[-1]) + 1
            chosen = slice(lo, hi) if hi - lo == num_active else active  # views when contiguous
            g_a = g[chosen]
            mu_a = marginals[chosen]
            expected = (g_a * mu_a).sum((1, 2))
            # states[j, :, :K] = H_j, states[j, :, K:] = Rt on the reversed rows; both start from G.
            states = torch.cat([g_a, _gather_positions(g_a, reverse[chosen])], 2).transpose(0, 1).contiguous()
            state_steps = states.unbind(0)
            weight_steps = weights[:, chosen].unbind(0)
            inverse_steps = inverse_norms[:, chosen].unbind(0)
            weighted = states.new_empty(num_active, slots)
            summed = states.new_empty(num_active, 2 * k)
            for i in range(n - 1):
                torch.index_select(state_steps[i], 1, steps.slot_sources, out=weighted)
                weighted.mul_(weight_steps[i])
                torch.mm(weighted, steps.slot_factors, out=summed)
                state_steps[i + 1].addcmul_(summed, inverse_steps[i])
            prefix = states[:, :, :k].transpose(0, 1)  # (S, n, K)
            suffix = _gather_steps(states, reverse[chosen])[:, :, k:]
            grad_emissions[chosen] += mu_a * (prefix + suffix - g_a - expected[:, None, None])
            row_weight[chosen] -= expected
        if not need_transitions:
            return grad_emissions, None, None, None, None, None
        # sum_{i, r} W_i[slot] c_i(source) * mu_{i+1}(b) / s_{i+1}(b): one product over steps and rows.
        coefficients = marginals.new_zeros(n - 1, rows, 2 * k)
        coefficients[:, :, :k] = row_weight[None, :, None]
        if states is not None:
            coefficients[:, chosen] += states[:-1]
        # Floored weights (the dead predecessors) become exact zeros, which keeps the products of
        # small numbers below from turning into slow denormals (a change below exp(_LOG_FLOOR)).
        weights = weights.view(-1, slots).masked_fill(weights.view(-1, slots) <= math.exp(_LOG_FLOOR), 0.0)
        left = coefficients.view(-1, 2 * k).index_select(1, steps.slot_sources).mul_(weights)
        following = torch.cat([marginals, _gather_positions(marginals, reverse)], 2).transpose(0, 1)[1:]
        right = inverse_norms.mul_(following)  # (n-1, R, 2K), contiguous
        sums = torch.mm(left.t(), right.view(-1, 2 * k))  # (C, 2K)
        pairs = sums.view(slots, 2, k).transpose(0, 1).gather(1, steps.pair_slots) * steps.pair_factors
        return grad_emissions, pairs[0] + pairs[1].t(), None, None, None, None


def build_lattice(emissions, transitions, start, end, lengths) -> "_Lattice":
    """The forward-backward pass of :class:`ForwardBackward` (see there) on ``n >= 1`` positions,
    in the dtype of its inputs: ``log Z``, marginals, ``alpha``/``beta`` and what the backward needs."""
    rows, n, k = emissions.shape
    lengths = lengths.long()
    reverse = _reverse_index(lengths, n)
    steps = step_constants(transitions)
    groups = steps.target_group.max().item() + 1 if n > 1 else 0
    slots = len(steps.slot_sources)
    # Position-major (n, R, 2K + 1) so each step reads and writes contiguous slices; the last
    # column stays at -FAR for the padding of the predecessor lists. ``scores`` starts as
    # phi + start/end (position 0) or phi + shift and the loop adds m_{g(b)} + log s.
    far = emissions.new_full((rows, n, 1), -FAR)
    scores = torch.cat([emissions, _gather_positions(emissions, reverse), far], 2).transpose(0, 1).contiguous()
    scores[0, :, : 2 * k] += torch.cat([start, end])
    scores[1:, :, : 2 * k] += steps.shift
    # The loop works in base-2 logarithms: ``exp2``/``log2`` stay single-threaded on small
    # tensors, where ``exp``/``log`` may fork threads at every step.
    scores.mul_(_LOG2E)
    weights = scores.new_empty(n - 1, rows, slots)
    norms = scores.new_empty(n - 1, rows, 2 * k)
    if n > 1:
        padded = scores.new_empty(rows, len(steps.sources))
        padded_groups = padded.view(rows, groups, steps.width)
        top = scores.new_empty(rows, groups, 1)
        top_flat = top.view(rows, groups)
        top_b = scores.new_empty(rows, 2 * k)
        log_norm = scores.new_empty(rows, 2 * k)
        score_steps, weight_steps, norm_steps = scores.unbind(0), weights.unbind(0), norms.unbind(0)
        target_steps = scores[:, :, : 2 * k].unbind(0)
        bias = None if steps.bias is None else steps.bias * _LOG2E
        gather_sources = _column_selector(steps.sources, rows, scores.dtype)
        gather_slots = _column_selector(steps.slot_index, rows, scores.dtype)
        gather_groups = _column_selector(steps.target_group, rows, scores.dtype)
        # float32: weights below exp(_LOG_FLOOR) would be denormals (exp2 10-40x slower) and are
        # floored; float64 reaches denormals only below exp(-708) (slower there, never wrong)
        floor = _LOG_FLOOR * _LOG2E if scores.dtype != torch.float64 else None
        for i in range(n - 1):
            gather_sources(score_steps[i], padded)
            if bias is not None:
                padded.add_(bias)
            torch.amax(padded_groups, -1, keepdim=True, out=top)
            padded_groups.sub_(top)
            w = gather_slots(padded, weight_steps[i])
            if floor is not None:
                w.clamp_(min=floor)
            w.exp2_()
            torch.mm(w, steps.slot_factors, out=norm_steps[i])
            gather_groups(top_flat, top_b)
            torch.log2(norm_steps[i], out=log_norm)
            target_steps[i + 1].add_(top_b).add_(log_norm)
        if floor is None:  # the weights go to the backward in float32: no denormals there either
            weights.masked_fill_(weights < math.exp(_LOG_FLOOR), 0.0)
    scores.mul_(math.log(2.0))
    alpha = scores[:, :, :k].transpose(0, 1)
    beta = _gather_steps(scores, reverse)[:, :, k : 2 * k] - emissions
    last = (lengths - 1).clamp(min=0)
    final = _gather_positions(alpha, last.unsqueeze(1)).squeeze(1) + end
    log_z = torch.where(lengths > 0, torch.logsumexp(final, -1), torch.zeros_like(final[:, 0]))
    mask = torch.arange(n, device=emissions.device) < lengths[:, None]
    log_marginals = alpha + beta - log_z[:, None, None]
    marginals = log_marginals.clamp(_LOG_FLOOR, 0).exp_()
    marginals.masked_fill_((log_marginals <= _LOG_FLOOR) | ~mask.unsqueeze(-1), 0.0)
    return _Lattice(log_z, marginals, alpha, beta, weights, norms, steps, reverse, lengths)


def _column_selector(index: torch.Tensor, rows: int, dtype: torch.dtype):
    """``select(values, out)``: ``out = values[:, index]`` for ``(rows, m)`` tensors, by
    ``index_select`` or, in float64 (where ``index_select`` is ~3x slower on CPU), ``gather``."""
    if dtype == torch.float64:
        full = index.expand(rows, len(index)).contiguous()
        return lambda values, out: torch.gather(values, 1, full, out=out)
    return lambda values, out: torch.index_select(values, 1, index, out=out)


class _Lattice(NamedTuple):
    """What one forward-backward pass (:func:`_lattice`) leaves: per row ``log_z (R,)``, ``marginals``,
    ``alpha`` (including ``phi_i``) and ``beta`` (excluding it) ``(R, n, K)``, and for the backward
    the step weights ``(n-1, R, C)``, norms ``(n-1, R, 2K)``, step constants and reversal index."""

    log_z: torch.Tensor
    marginals: torch.Tensor
    alpha: torch.Tensor
    beta: torch.Tensor
    weights: torch.Tensor
    norms: torch.Tensor
    steps: "Steps"
    reverse: torch.Tensor
    lengths: torch.Tensor


def work_dtype(dtype: torch.dtype, recursion_dtype: Optional[torch.dtype]) -> torch.dtype:
    """The dtype the recursion runs in: ``recursion_dtype`` unless the input is more precise."""
    return dtype if recursion_dtype is None else torch.promote_types(dtype, recursion_dtype)
