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
from typing import NamedTuple, Optional, Tuple

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


#: Largest spread ``max - min`` of the allowed transition scores into one tag for which that tag
#: shares its step of the recursion with the other tags of the same predecessor set (see
#: :func:`_step_constants`). Terms then lie within ``exp(-30)`` of each group's largest one, so
#: the :data:`_LOG_FLOOR` clamp changes sums by less than ``K exp(-50)`` relative; tags beyond it
#: (never seen with learned scores) get an exact step of their own.
_MAX_SPREAD = 30.0

#: Additive mask for the predecessors outside a group: far below any score, never overflowing.
_FAR = 1e30


class _Steps(NamedTuple):
    """Constants of one step of the two stacked recursions (index 0: alpha, 1: beta on reversed
    rows), from :func:`_step_constants`, padded to common sizes ``G`` and ``C``."""

    bias: torch.Tensor  # (2, G, K)
    shift: torch.Tensor  # (2, K)
    group: torch.Tensor  # (2, K) group of each target tag
    slots: torch.Tensor  # (2, C) slot c = (g, x) as the flat index g * K + x
    sources: torch.Tensor  # (2, C) predecessor x of each slot
    slot_factors: torch.Tensor  # (2, C, K) F(x_c, y) when y is in group g_c, else 0
    pair_slots: torch.Tensor  # (2, K, K) [x, y]: the slot (g(y), x) (0 when x -> y is not allowed)
    pair_factors: torch.Tensor  # (2, K, K) [x, y]: F(x, y), 0 when not allowed


def _step_constants(matrix: torch.Tensor) -> Tuple[torch.Tensor, ...]:
    """Constants turning one step ``new(y) = phi(y) + log sum_x exp(old(x) + matrix[y, x])`` of a
    log-space recursion into a few small batched operations and one small matrix product.

    Target tags ``y`` with the same set ``P_g`` of allowed predecessors (``matrix > IMPOSSIBLE / 2``;
    all tags if none) form a group ``g`` and, when their scores spread less than
    :data:`_MAX_SPREAD`, share the shift ``m_g = max_{x in P_g} old(x)``:
    ``new(y) = phi(y) + shift(y) + m_g + log sum_{x in P_g} W_g(x) F(x, y)`` with the weights
    ``W_g(x) = exp(old(x) + bias[g, x] - m_g)`` (``bias = 0`` on ``P_g``, ``-_FAR`` elsewhere),
    ``shift(y) = max_{x in P_g} matrix[y, x]`` and the factors ``F(x, y) = exp(matrix[y, x] -
    shift(y))`` in ``[exp(-_MAX_SPREAD), 1]`` on ``P_g``, 0 elsewhere. A tag with a wider spread is
    a group of its own with ``bias[g, x] = matrix[y, x]`` on ``P_g``, ``shift(y) = 0`` and factors
    1: the exact per-target log-sum-exp. Either way the largest weight of a group is 1 and the
    largest term of every sum is at least ``exp(-_MAX_SPREAD)``, whatever the scores ``old``.

    Only the *slots* ``(g, x)`` with ``x`` in ``P_g`` carry weights (``C = K`` slots for BILUO,
    where the predecessor sets partition the tags), so a step is one ``(C, K)`` matrix product.
    Returns the fields of :class:`_Steps` for one direction, unpadded.
    """
    k = matrix.shape[0]
    positions = torch.arange(k, device=matrix.device)
    allowed = matrix > IMPOSSIBLE / 2  # [y, x]
    allowed |= ~allowed.any(1, keepdim=True)
    top = matrix.masked_fill(~allowed, float("-inf")).amax(1)
    wide = top - matrix.masked_fill(~allowed, float("inf")).amin(1) > _MAX_SPREAD
    key = torch.cat([allowed.long(), torch.where(wide, positions, -1)[:, None]], 1)
    group = torch.unique(key, dim=0, return_inverse=True)[1]
    num_groups = int(group.max()) + 1
    representative = torch.empty(num_groups, dtype=torch.long, device=matrix.device).scatter_(0, group, positions)
    members = allowed[representative]  # (G, K): P_g
    rep_scores = matrix[representative]
    bias = torch.where(members, rep_scores * wide[representative, None], torch.full_like(rep_scores, -_FAR))
    shift = torch.where(wide, torch.zeros_like(top), top)
    log_factors = matrix - shift[:, None] - bias[group]
    factors = torch.where(allowed, log_factors, torch.full_like(matrix, float("-inf"))).exp().t()  # [x, y]
    slot_group, sources = members.nonzero(as_tuple=True)
    slot_of = torch.zeros(num_groups, k, dtype=torch.long, device=matrix.device)
    slot_of[slot_group, sources] = torch.arange(len(sources), device=matrix.device)
    slot_factors = factors[sources] * (group[None, :] == slot_group[:, None])
    pair_slots = slot_of[group[None, :], positions[:, None]]
    return bias, shift, group, slot_group * k + sources, sources, slot_factors, pair_slots, factors


def _stacked_steps(transitions: torch.Tensor) -> _Steps:
    """:func:`_step_constants` of both directions (``matrix[next, previous]`` is ``T^T`` for alpha
    and ``T`` for beta), padded with empty groups (bias ``-_FAR``) and empty slots (factors 0)."""
    parts = [_step_constants(transitions.t()), _step_constants(transitions)]
    k = transitions.shape[0]
    groups = max(p[0].shape[0] for p in parts)
    slots = max(p[3].shape[0] for p in parts)

    def pad(t: torch.Tensor, size: int, value: float) -> torch.Tensor:
        return torch.cat([t, t.new_full((size - t.shape[0],) + t.shape[1:], value)])

    return _Steps(
        torch.stack([pad(p[0], groups, -_FAR) for p in parts]),
        torch.stack([p[1] for p in parts]),
        torch.stack([p[2] for p in parts]),
        torch.stack([pad(p[3], slots, 0) for p in parts]),
        torch.stack([pad(p[4], slots, 0) for p in parts]),
        torch.stack([pad(p[5], slots, 0.0) for p in parts]),
        torch.stack([p[6] for p in parts]),
        torch.stack([p[7] for p in parts]),
    )


def _per_row(values: torch.Tensor, rows: int) -> torch.Tensor:
    """``(2, ...)`` per-direction values repeated for the ``rows`` rows of each direction: ``(2 * rows, ...)``."""
    return values[:, None].expand((2, rows) + values.shape[1:]).reshape((2 * rows,) + values.shape[1:])


class _ForwardBackward(torch.autograd.Function):
    """Exact forward-backward in log space, with a hand-written backward that differentiates both
    ``log Z`` and the marginals (so losses on marginals, like the EER loss, need no double backward).

    Inputs: emissions ``phi (R, n, K)``, transitions ``T (K, K)`` (disallowed entries already at
    :data:`IMPOSSIBLE`), start/end penalties ``(K,)`` and ``lengths (R,)``.

    Forward: one loop over positions runs the forward recursion
    ``alpha_{i+1}(b) = phi_{i+1}(b) + log sum_a exp(alpha_i(a) + T(a, b))`` on the rows and, stacked
    with it, the same recursion on the rows reversed within their lengths with ``T`` transposed,
    which gives ``beta``. :func:`_step_constants` factorizes each step into weights
    ``W_i[g, a] = exp(alpha_i(a) - m_{i,g})`` (``m_{i,g}``: the largest ``alpha_i`` over the
    predecessor set of group ``g``), one small matrix product with constant factors ``F`` giving
    ``s_{i+1}(b) = sum_a W_i[g(b), a] F(a, b)``, and ``alpha_{i+1}(b) = phi_{i+1}(b) + shift(b) +
    m_{i,g(b)} + log s_{i+1}(b)``; ``W`` and ``s`` are kept for the backward. Then
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
      ``Rt_j = G_j + P(y_{j+1} | y_j) Rt_{j+1}``, run together in one loop (the second on reversed
      rows), one small matrix product per step:
      ``H_{j+1}(b) = G_{j+1}(b) + sum_a W_j[g(b), a] H_j(a) F(a, b) / s_{j+1}(b)``. Being averages
      under stochastic conditionals, both stay bounded whatever the scores.
    * All the sums over ``xi`` are one matrix product over steps and rows per direction:
      ``sum_{r,i} W_i[g, a] c_i(a) mu_{i+1}(b) / s_{i+1}(b)`` at ``g = g(b)``, times ``F(a, b)``,
      with ``c_i = g - E[f] + H_i`` on the forward rows and ``c_i = Rt`` on the reversed ones
      (whose pairs are indexed the other way round).
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
        steps = _stacked_steps(transitions)
        groups, slots = steps.bias.shape[1], steps.slots.shape[1]
        # Position-major (n, 2R, K) so each step reads and writes contiguous slices. ``scores`` starts
        # as phi + start/end (position 0) or phi + shift and the loop adds m_{g(b)} + log s.
        scores = torch.cat([emissions, reversed_emissions], 0).transpose(0, 1).contiguous()
        scores[0].view(2, rows, k).add_(torch.stack([start, end])[:, None])
        scores[1:].view(n - 1, 2, rows, k).add_(steps.shift[:, None])
        weights = scores.new_empty(n - 1, 2, rows, slots)
        norms = scores.new_empty(n - 1, 2, rows, k)
        if n > 1:
            bias = _per_row(steps.bias, rows)
            slot_index = _per_row(steps.slots, rows)
            group_index = _per_row(steps.group, rows)
            full = scores.new_empty(2 * rows, groups, k)
            full_flat = full.view(2 * rows, groups * k)
            top = scores.new_empty(2 * rows, groups, 1)
            top_flat = top.view(2 * rows, groups)
            top_b = scores.new_empty(2 * rows, k)
            log_norm = scores.new_empty(2 * rows, k)
            score_steps = scores.unbind(0)
            score_rows = scores.unsqueeze(2).unbind(0)
            weight_steps = weights.view(n - 1, 2 * rows, slots).unbind(0)
            weight_pairs = weights.unbind(0)
            norm_pairs, norm_steps = norms.unbind(0), norms.view(n - 1, 2 * rows, k).unbind(0)
            for i in range(n - 1):
                torch.add(score_rows[i], bias, out=full)
                torch.amax(full, -1, keepdim=True, out=top)
                full.sub_(top)
                w = torch.gather(full_flat, 1, slot_index, out=weight_steps[i])
                w.clamp_(min=_LOG_FLOOR).exp_()
                torch.bmm(weight_pairs[i], steps.slot_factors, out=norm_pairs[i])
                torch.gather(top_flat, 1, group_index, out=top_b)
                torch.log(norm_steps[i], out=log_norm)
                score_steps[i + 1].add_(top_b).add_(log_norm)
        alpha = scores[:, :rows].transpose(0, 1)
        beta = _gather_positions(scores[:, rows:].transpose(0, 1), reverse) - emissions
        last = (lengths - 1).clamp(min=0)
        final = _gather_positions(alpha, last.unsqueeze(1)).squeeze(1) + end
        log_z = torch.where(lengths > 0, torch.logsumexp(final, -1), torch.zeros_like(final[:, 0]))
        mask = torch.arange(n, device=emissions.device) < lengths[:, None]
        log_marginals = alpha + beta - log_z[:, None, None]
        marginals = log_marginals.clamp(_LOG_FLOOR, 0).exp_()
        marginals.masked_fill_((log_marginals <= _LOG_FLOOR) | ~mask.unsqueeze(-1), 0.0)
        ctx.save_for_backward(log_z, marginals, lengths)
        ctx.weights, ctx.norms, ctx.steps, ctx.reverse = weights, norms, steps, reverse
        return log_z, marginals

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_log_z, grad_marginals):
        if ctx.empty:
            emissions_grad = grad_marginals.new_zeros(grad_marginals.shape) if ctx.needs_input_grad[0] else None
            return emissions_grad, None, None, None, None
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
            return grad_emissions, marginals.new_zeros(k, k) if need_transitions else None, None, None, None

        inverse_norms = norms.reciprocal()  # (n-1, 2, R, K)
        row_weight = grad_log_z.clone()  # per-row coefficient of sum_i xi_i in dL/dT (forward rows)
        states = None
        if num_active:
            lo, hi = int(active[0]), int(active[-1]) + 1
            chosen = slice(lo, hi) if hi - lo == num_active else active  # views when contiguous
            g_a = g[active]
            mu_a = marginals[active]
            expected = (g_a * mu_a).sum((1, 2))
            # states[j, 0] = H_j (forward rows), states[j, 1] = Rt on the reversed rows; start from G.
            states = torch.stack([g_a, _gather_positions(g_a, reverse[active])], 0).permute(2, 0, 1, 3).contiguous()
            state_steps = states.view(n, 2 * num_active, k).unbind(0)
            weight_steps = weights[:, :, chosen].unbind(0)
            inverse_steps = inverse_norms[:, :, chosen].reshape(n - 1, 2 * num_active, k).unbind(0)
            source_index = _per_row(steps.sources, num_active)
            weighted = states.new_empty(2 * num_active, slots)
            weighted_pairs = weighted.view(2, num_active, slots)
            summed = states.new_empty(2, num_active, k)
            summed_flat = summed.view(2 * num_active, k)
            for i in range(n - 1):
                torch.gather(state_steps[i], 1, source_index, out=weighted)
                weighted_pairs.mul_(weight_steps[i])
                torch.bmm(weighted_pairs, steps.slot_factors, out=summed)
                state_steps[i + 1].addcmul_(summed_flat, inverse_steps[i])
            prefix = states[:, 0].transpose(0, 1)  # (S, n, K)
            suffix = _gather_positions(states[:, 1].transpose(0, 1), reverse[active])
            grad_emissions[active] += mu_a * (prefix + suffix - g_a - expected[:, None, None])
            row_weight[active] -= expected
        if not need_transitions:
            return grad_emissions, None, None, None, None
        # sum_{i, r} W_i[slot] c_i(source) * mu_{i+1}(b) / s_{i+1}(b) per direction: one batched product.
        coefficients = marginals.new_zeros(2, n - 1, rows, k)
        coefficients[0] = row_weight[None, :, None]
        if states is not None:
            coefficients[:, :, chosen] += states[:-1].transpose(0, 1)
        left = coefficients.gather(3, steps.sources[:, None, None, :].expand(2, n - 1, rows, slots))
        left.mul_(weights.transpose(0, 1))
        following = torch.stack([marginals, _gather_positions(marginals, reverse)], 0).transpose(1, 2)[:, 1:]
        right = following * inverse_norms.transpose(0, 1)  # (2, n-1, R, K)
        sums = torch.bmm(left.view(2, -1, slots).transpose(1, 2), right.reshape(2, -1, k))  # (2, C, K)
        pairs = sums.gather(1, steps.pair_slots) * steps.pair_factors
        return grad_emissions, pairs[0] + pairs[1].t(), None, None, None
