"""A linear-chain CRF with hard grammar constraints and partially observed tags.

Notation follows the paper (Effland & Collins, "Partially Supervised Named Entity Recognition via
the Expected Entity Ratio Loss", section "Tagging Model"). For one sequence of ``n`` positions,
emission scores ``phi(i, y)`` (``emissions[b, i, y]``) and transition scores ``T[y, y']``
(``transitions[y, y']``), a tagging ``y_1..y_n`` scores

    s(y) = sum_i phi(i, y_i) + sum_{i<n} T[y_i, y_{i+1}]

and ``p(y | x) = exp(s(y)) / Z``. There are no start/end states and no start/end scores. Grammar
constraints give zero probability to (a) transitions ``allowed_transitions[y, y'] == False``,
(b) first tags with ``allowed_start[y] == False`` and (c) last tags with ``allowed_end[y] == False``,
in training *and* decoding: every quantity below sums over valid taggings only.

Partial observations ("Supervised Marginal Tag Loss") are a boolean tensor ``allowed (B, n, K)``
saying which tags each position may take: a one-hot row is an observed tag, an all-True row a
latent tag, and any other set also works ("any entity tag", "O only", dictionary constraints).
:func:`observations_to_allowed` builds it from integer observations.

Batches are padded: ``mask (B, n)`` is True on the first ``length_b`` positions of row ``b``
and False after them. Rows may have length 0 (then ``log Z = 0`` and every marginal is 0).

Every function is vectorized over batch and tags; the only Python loop is over positions, and
the partial likelihood runs its constrained and unconstrained passes together in that one loop.
Disallowed configurations get the finite score :data:`IMPOSSIBLE` instead of ``-inf`` so that
values and gradients stay finite even when a row has no valid tagging at all.
"""
from typing import Optional, Tuple

import torch

#: Score given to impossible tags/transitions: ``exp(IMPOSSIBLE - anything reasonable) == 0``
#: exactly in float32 and float64, and unlike ``-inf`` it never produces NaN gradients.
IMPOSSIBLE = -1e9

#: Log-probabilities below this are treated as exactly 0 inside exponentials. ``exp`` of very
#: negative arguments takes a slow path on CPUs (10-40x slower); clamping at -80 keeps it on the
#: fast path and changes every sum by less than 1e-33 relative, far below float32/64 rounding.
_LOG_FLOOR = -80.0

#: Integer codes for :func:`observations_to_allowed` (values >= 0 are observed tag indices).
LATENT = -1
ANY_ENTITY = -2


def observations_to_allowed(observations: torch.Tensor, num_tags: int, outside_index: int = 0) -> torch.Tensor:
    """Turns integer observations ``(B, n)`` into an allowed-tag mask ``(B, n, K)``.

    ``observations[b, i]`` is a tag index (observed), :data:`LATENT` (any tag) or
    :data:`ANY_ENTITY` (any tag but ``O``: a position known to be inside some entity).
    An observed ``O`` (``outside_index``) means "O only", i.e. a known negative.
    """
    if observations.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        raise TypeError(f"observations must be an integer tensor, got {observations.dtype}")
    if bool(((observations < ANY_ENTITY) | (observations >= num_tags)).any()):
        raise ValueError(f"observations must be in [{ANY_ENTITY}, {num_tags - 1}]")
    tags = torch.arange(num_tags, device=observations.device)
    obs = observations.long().unsqueeze(-1)
    allowed = obs == tags
    allowed |= obs == LATENT
    allowed |= (obs == ANY_ENTITY) & (tags != outside_index)
    return allowed


class ConstrainedCRF(torch.nn.Module):
    """Linear-chain CRF over ``K`` tags with learned transitions and fixed grammar constraints.

    Parameters
    ----------
    allowed_transitions : ``(K, K)`` bool tensor
        ``[y, y']`` is True when ``y'`` may follow ``y`` (for BILUO see
        :meth:`eer_plugin.core.tags.BiluoScheme.allowed_transitions`).
    allowed_start, allowed_end : ``(K,)`` bool tensors, optional
        Tags a sequence may start / end with. Default: all tags.
    init_std : float
        Standard deviation of the initial transition scores (the authors used 0.001).
    """

    def __init__(
        self,
        allowed_transitions: torch.Tensor,
        allowed_start: Optional[torch.Tensor] = None,
        allowed_end: Optional[torch.Tensor] = None,
        init_std: float = 1e-3,
    ):
        super().__init__()
        allowed_transitions = torch.as_tensor(allowed_transitions, dtype=torch.bool)
        num_tags = allowed_transitions.shape[0]
        if allowed_transitions.shape != (num_tags, num_tags):
            raise ValueError(f"allowed_transitions must be square, got {tuple(allowed_transitions.shape)}")
        if allowed_start is None:
            allowed_start = torch.ones(num_tags, dtype=torch.bool)
        if allowed_end is None:
            allowed_end = torch.ones(num_tags, dtype=torch.bool)
        self.num_tags = num_tags
        self.transitions = torch.nn.Parameter(torch.randn(num_tags, num_tags) * init_std)
        self.register_buffer("allowed_transitions", allowed_transitions.clone(), persistent=False)
        self.register_buffer("allowed_start", torch.as_tensor(allowed_start, dtype=torch.bool).clone(), persistent=False)
        self.register_buffer("allowed_end", torch.as_tensor(allowed_end, dtype=torch.bool).clone(), persistent=False)

    # ------------------------------------------------------------------ potentials
    def _constrained_transitions(self, dtype: torch.dtype) -> torch.Tensor:
        return torch.where(self.allowed_transitions, self.transitions.to(dtype), torch.tensor(IMPOSSIBLE, dtype=dtype))

    def _boundary(self, allowed: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        return torch.where(allowed, torch.tensor(0.0, dtype=dtype), torch.tensor(IMPOSSIBLE, dtype=dtype))

    @staticmethod
    def _restrict(emissions: torch.Tensor, allowed: Optional[torch.Tensor]) -> torch.Tensor:
        if allowed is None:
            return emissions
        if allowed.shape != emissions.shape:
            raise ValueError(f"allowed has shape {tuple(allowed.shape)}, emissions {tuple(emissions.shape)}")
        return torch.where(allowed, emissions, torch.tensor(IMPOSSIBLE, dtype=emissions.dtype))

    def _check(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if emissions.dim() != 3 or emissions.shape[-1] != self.num_tags:
            raise ValueError(f"emissions must be (batch, length, {self.num_tags}), got {tuple(emissions.shape)}")
        if mask.shape != emissions.shape[:2]:
            raise ValueError(f"mask must be {tuple(emissions.shape[:2])}, got {tuple(mask.shape)}")
        return mask.bool().sum(-1)

    # ------------------------------------------------------------------ forward-backward
    def _forward_backward(self, emissions: torch.Tensor, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """``(log Z (R,), marginals (R, n, K))`` of (already restricted) emissions; differentiable
        in the emissions and the transitions, marginals included (see :class:`_ForwardBackward`)."""
        dtype = emissions.dtype
        return _ForwardBackward.apply(
            emissions,
            self._constrained_transitions(dtype),
            self._boundary(self.allowed_start, dtype),
            self._boundary(self.allowed_end, dtype),
            lengths,
        )

    def log_partition(
        self, emissions: torch.Tensor, mask: torch.Tensor, allowed: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        """``log Z`` per row ``(B,)``: log-sum of ``exp(s(y))`` over valid taggings ``y`` whose
        tags are all allowed by ``allowed`` (all tags when ``None``)."""
        lengths = self._check(emissions, mask)
        return self._forward_backward(self._restrict(emissions, allowed), lengths)[0]

    def marginals(self, emissions: torch.Tensor, mask: torch.Tensor, allowed: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Tag marginals ``p(y_i = t | x)`` ``(B, n, K)``; with ``allowed``, the posterior given
        those observations. Padding positions get 0. Differentiable (exact second-order backward)."""
        lengths = self._check(emissions, mask)
        return self._forward_backward(self._restrict(emissions, allowed), lengths)[1]

    def partial_log_likelihood(self, emissions: torch.Tensor, mask: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        """``log p(y_O | x)`` per row ``(B,)``: the log of the total probability of the valid
        taggings consistent with the observations (paper eq. 2). It equals
        ``log Z(restricted) - log Z``: 0 when nothing is observed, the ordinary CRF
        log-likelihood when every position is observed."""
        return self.partial_log_likelihood_and_marginals(emissions, mask, allowed)[0]

    def partial_log_likelihood_and_marginals(
        self, emissions: torch.Tensor, mask: torch.Tensor, allowed: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """The partial log-likelihood ``(B,)`` and the model's (unrestricted) tag marginals
        ``p(y_i = t | x)`` ``(B, n, K)``, both from one batched forward-backward pass over the
        unrestricted and the restricted lattice."""
        lengths = self._check(emissions, mask)
        batch = emissions.shape[0]
        both = torch.cat([emissions, self._restrict(emissions, allowed)], 0)
        log_z, marginals = self._forward_backward(both, lengths.repeat(2))
        return log_z[batch:] - log_z[:batch], marginals[:batch]

    def sequence_score(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``s(y)`` of given taggings ``tags (B, n)`` (padding ignored); invalid taggings score
        about :data:`IMPOSSIBLE` per violation."""
        lengths = self._check(emissions, mask)
        mask = mask.bool()
        tags = tags.long().masked_fill(~mask, 0)
        unary = (emissions.gather(2, tags.unsqueeze(2)).squeeze(2) * mask).sum(1)
        trans = self._constrained_transitions(emissions.dtype)
        pair = trans[tags[:, :-1], tags[:, 1:]] * (mask[:, 1:])
        first = self._boundary(self.allowed_start, emissions.dtype)[tags[:, 0]]
        last_tags = tags.gather(1, (lengths - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
        last = self._boundary(self.allowed_end, emissions.dtype)[last_tags]
        boundary = torch.where(lengths > 0, first + last, torch.zeros_like(first))
        return unary + pair.sum(1) + boundary

    def log_likelihood(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Ordinary CRF log-likelihood ``log p(y | x)`` ``(B,)`` of fully observed taggings."""
        return self.sequence_score(emissions, tags, mask) - self.log_partition(emissions, mask)

    # ------------------------------------------------------------------ decoding
    @torch.no_grad()
    def viterbi(
        self,
        emissions: torch.Tensor,
        mask: torch.Tensor,
        allowed: Optional[torch.Tensor] = None,
        o_cost: float = 0.0,
        outside_index: int = 0,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """Best valid tagging per row: ``(tags (B, n), scores (B,))``. Padding positions get tag
        ``outside_index``. ``o_cost`` (``b_O``, the Raw+CD baseline) is subtracted from the ``O``
        emission at every position before decoding; ``scores`` include it. ``allowed`` restricts
        the tags per position as in :meth:`log_partition`."""
        lengths = self._check(emissions, mask)
        batch, n, k = emissions.shape
        if n == 0:
            return torch.zeros(batch, 0, dtype=torch.long, device=emissions.device), emissions.new_zeros(batch)
        if o_cost:
            emissions = emissions.clone()
            emissions[..., outside_index] -= o_cost
        emissions = self._restrict(emissions, allowed)
        trans = self._constrained_transitions(emissions.dtype)
        steps = emissions.unbind(1)
        score = steps[0] + self._boundary(self.allowed_start, emissions.dtype)
        scores, pointers = [score], []
        for emit in steps[1:]:
            best, pointer = (score.unsqueeze(2) + trans).max(dim=1)
            score = best + emit
            scores.append(score)
            pointers.append(pointer)
        scores = torch.stack(scores, 1)
        last = (lengths - 1).clamp(min=0)
        final = scores.gather(1, last.view(batch, 1, 1).expand(batch, 1, k)).squeeze(1)
        final = final + self._boundary(self.allowed_end, emissions.dtype)
        best_score, tag = final.max(-1)
        tags = torch.full((batch, n), outside_index, dtype=torch.long, device=emissions.device)
        # Walk back from each row's own last position: position i takes the pointer stored at i+1.
        for i in range(n - 1, -1, -1):
            at_end = last == i
            inside = last > i
            if i < n - 1:
                prev = pointers[i].gather(1, tags[:, i + 1].unsqueeze(1)).squeeze(1)
                tag = torch.where(inside, prev, tag)
            tags[:, i] = torch.where(at_end | inside, tag, tags[:, i])
        best_score = torch.where(lengths > 0, best_score, torch.zeros_like(best_score))
        return tags, best_score


def _reverse_index(lengths: torch.Tensor, n: int) -> torch.Tensor:
    """``(R, n)`` index reversing each row within its length (padding positions map to themselves)."""
    positions = torch.arange(n, device=lengths.device).expand(lengths.shape[0], n)
    return torch.where(positions < lengths[:, None], lengths[:, None] - 1 - positions, positions)


def _gather_positions(values: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``values[r, index[r, i]]`` for ``values`` of shape ``(R, n, ...)``."""
    shape = index.shape + (1,) * (values.dim() - 2)
    return values.gather(1, index.view(shape).expand(index.shape + values.shape[2:]))


def _logsumexp_last(scores: torch.Tensor) -> torch.Tensor:
    """``logsumexp`` over the last dimension, with the exponent floored at :data:`_LOG_FLOOR`
    (exact to rounding; see there)."""
    top = scores.amax(-1, keepdim=True)
    return (scores - top).clamp_(min=_LOG_FLOOR).exp_().sum(-1).log_() + top.squeeze(-1)


class _ForwardBackward(torch.autograd.Function):
    """Exact forward-backward in log space, with a hand-written backward that differentiates both
    ``log Z`` and the marginals (so losses on marginals, like the EER loss, need no double backward).

    Inputs: emissions ``phi (R, n, K)``, transitions ``T (K, K)`` (disallowed entries already at
    :data:`IMPOSSIBLE`), start/end penalties ``(K,)`` and ``lengths (R,)``.

    Forward: one loop over positions runs the forward recursion ``alpha`` on the rows and, stacked
    with it, the same recursion on the rows reversed within their lengths with ``T`` transposed,
    which gives ``beta``. Then ``log Z = logsumexp(alpha_{L-1} + end)`` and
    ``mu_i(y) = exp(alpha_i(y) + beta_i(y) - log Z)``.

    Backward, for upstream gradients ``g = dL/dlog Z`` and ``G = dL/dmu``:

    * ``d log Z / d phi_i(y) = mu_i(y)``, ``d log Z / d T(a, b) = sum_i xi_i(a, b)`` with the pair
      marginals ``xi_i(a, b) = p(y_i = a, y_{i+1} = b)``;
    * with ``f(y) = sum_i G_i(y_i)`` (so ``sum G * mu = E[f]``), ``dE[f]/dtheta = Cov(f, feature)``:
      ``dE[f]/dphi_j(l) = mu_j(l) (H_j(l) + Rt_j(l) - G_j(l) - E[f])`` and
      ``dE[f]/dT(a, b) = sum_j xi_j(a, b) (H_j(a) + Rt_{j+1}(b) - E[f])``, where
      ``H_j(l) = E[sum_{t<=j} G_t(y_t) | y_j = l]`` and ``Rt_j(l) = E[sum_{t>=j} G_t(y_t) | y_j = l]``
      follow the linear recursions ``H_j = G_j + H_{j-1} P(y_{j-1} | y_j)`` and
      ``Rt_j = G_j + P(y_{j+1} | y_j) Rt_{j+1}``, run together in one loop (the second on reversed
      rows). The conditionals are softmaxes of the pair log-marginals, hence exactly stochastic,
      which keeps both recursions bounded whatever the scores.
    """

    @staticmethod
    def forward(ctx, emissions, transitions, start, end, lengths):
        rows, n, k = emissions.shape
        if n == 0:
            ctx.empty = True
            return emissions.new_zeros(rows), emissions.new_zeros(rows, 0, k)
        ctx.empty = False
        lengths = lengths.long()
        reverse = _reverse_index(lengths, n)
        reversed_emissions = _gather_positions(emissions, reverse)
        # Position-major so each step reads a contiguous slice; the reduction runs over the last
        # (contiguous) dimension: matrices[r, next, previous].
        stacked = torch.cat([emissions, reversed_emissions], 0).transpose(0, 1).contiguous()
        matrices = torch.cat([transitions.t().expand(rows, k, k), transitions.expand(rows, k, k)], 0)
        score = torch.cat([emissions[:, 0] + start, reversed_emissions[:, 0] + end], 0)
        scores = [score]
        for emit in stacked[1:]:
            score = _logsumexp_last(score.unsqueeze(1) + matrices) + emit
            scores.append(score)
        scores = torch.stack(scores, 1)
        alpha = scores[:rows]
        beta = _gather_positions(scores[rows:], reverse) - emissions
        last = (lengths - 1).clamp(min=0)
        final = _gather_positions(alpha, last.unsqueeze(1)).squeeze(1) + end
        log_z = torch.where(lengths > 0, torch.logsumexp(final, -1), torch.zeros_like(final[:, 0]))
        mask = torch.arange(n, device=emissions.device) < lengths[:, None]
        log_marginals = alpha + beta - log_z[:, None, None]
        marginals = log_marginals.clamp(_LOG_FLOOR, 0).exp_()
        marginals.masked_fill_((log_marginals <= _LOG_FLOOR) | ~mask.unsqueeze(-1), 0.0)
        ctx.save_for_backward(emissions, transitions, alpha, beta, log_z, marginals, lengths)
        return log_z, marginals

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_log_z, grad_marginals):
        if ctx.empty:
            emissions_grad = grad_marginals.new_zeros(grad_marginals.shape) if ctx.needs_input_grad[0] else None
            return emissions_grad, None, None, None, None
        emissions, transitions, alpha, beta, log_z, marginals, lengths = ctx.saved_tensors
        rows, n, k = emissions.shape
        mask = torch.arange(n, device=emissions.device) < lengths[:, None]
        grad_emissions = grad_log_z[:, None, None] * marginals
        grad_transitions = torch.zeros_like(transitions) if ctx.needs_input_grad[1] else None
        g = grad_marginals * mask.unsqueeze(-1)
        active = g.flatten(1).ne(0).any(1).nonzero().squeeze(1)
        if n == 1:
            if len(active):
                mu_a = marginals[active]
                expected = (g[active] * mu_a).sum((1, 2))
                grad_emissions[active] += mu_a * (g[active] - expected[:, None, None])
            return grad_emissions, grad_transitions, None, None, None

        # Pair marginals xi_i(a, b) = exp(alpha_i(a) + T(a, b) + phi_{i+1}(b) + beta_{i+1}(b) - log Z),
        # position-major (n-1, R, K, K); exactly 0 on pairs that reach into padding.
        pairs = (alpha.transpose(0, 1)[:-1, :, :, None] + transitions) + (
            (emissions + beta - log_z[:, None, None]).transpose(0, 1)[1:, :, None, :]
        )
        pairs.clamp_(_LOG_FLOOR, 0).exp_()
        pairs.masked_fill_(~mask.t()[1:, :, None, None], 0.0)
        row_weight = grad_log_z.clone()  # per-row coefficient of sum_i xi_i in dL/dT
        if len(active):
            g_a = g[active]
            mu_a = marginals[active]
            expected = (g_a * mu_a).sum((1, 2))
            pairs_a = pairs[:, active]
            # P(y_i = a | y_{i+1} = b) and P(y_{i+1} = b | y_i = a) for the pair (i, i+1); the floor
            # keeps real sums positive, so both are exactly stochastic, and 0 on padding pairs.
            tiny = torch.finfo(pairs.dtype).tiny
            previous = pairs_a / pairs_a.sum(2, keepdim=True).clamp_(min=tiny)
            following = pairs_a / pairs_a.sum(3, keepdim=True).clamp_(min=tiny)
            g_steps = g_a.transpose(0, 1).unsqueeze(2)  # (n, S, 1, K)
            prefix = [g_steps[0]]
            suffix = [g_steps[n - 1]]
            for i in range(1, n):
                # H_i = G_i + H_{i-1} P(y_{i-1} | y_i);  Rt_j = G_j + Rt_{j+1} P(y_{j+1} | y_j)^T
                prefix.append(torch.baddbmm(g_steps[i], prefix[-1], previous[i - 1]))
                suffix.append(torch.baddbmm(g_steps[n - 1 - i], suffix[-1], following[n - 1 - i].transpose(1, 2)))
            prefix = torch.stack(prefix, 0).squeeze(2)  # (n, S, K)
            suffix = torch.stack(suffix[::-1], 0).squeeze(2)
            grad_emissions[active] += mu_a * (prefix + suffix - g_steps.squeeze(2) - expected[None, :, None]).transpose(0, 1)
            if grad_transitions is not None:
                grad_transitions += torch.einsum("isab,isa->ab", pairs_a, prefix[:-1])
                grad_transitions += torch.einsum("isab,isb->ab", pairs_a, suffix[1:])
            row_weight[active] -= expected
        if grad_transitions is not None:
            grad_transitions += torch.einsum("irab,r->ab", pairs, row_weight)
        return grad_emissions, grad_transitions, None, None, None
