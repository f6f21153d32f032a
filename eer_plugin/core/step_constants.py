"""The constants of one step of the fast forward-backward recursion
(:class:`~eer_plugin.core.forward_backward.ForwardBackward`): the grammar's allowed transitions
grouped into slots (:func:`step_constants`), so that a step of both recursions is a few small
operations and one small matrix product. They depend only on the transition scores, not on the
emissions; the index structure depends only on which transitions are allowed and is cached."""

from typing import NamedTuple, Optional

import torch

#: Score given to impossible tags/transitions: ``exp(IMPOSSIBLE - anything reasonable) == 0``
#: exactly in float32 and float64, and unlike ``-inf`` it never produces NaN gradients.
IMPOSSIBLE = -1e9

#: Largest spread ``max - min`` of the allowed transition scores into one tag for which that tag
#: shares its step of the recursion with the other tags of the same predecessor set (see
#: :func:`step_constants`). Terms then lie within ``exp(-30)`` of each group's largest one, so
#: the ``_LOG_FLOOR`` clamp of the forward-backward changes sums by less than ``K exp(-50)`` relative; tags beyond it
#: (never seen with learned scores) get an exact step of their own.
MAX_SPREAD = 30.0

#: Score of the padding of the predecessor lists: far below any score, never overflowing.
FAR = 1e30


class _Structure(NamedTuple):
    """The index structure of :func:`step_constants`; depends only on which transitions are allowed
    and which target tags have a wide spread, so it is cached."""

    sources: torch.Tensor  # (G * P,) column of the p-th predecessor of group g (at g * P + p); 2K: padding
    wide_entries: torch.Tensor  # positions in (G * P) of the predecessors of wide tags ...
    wide_scores: torch.Tensor  # ... and the flat index of their scores in matrices (2, K, K)
    width: int  # P, the longest predecessor list
    slot_index: torch.Tensor  # (C,) positions in (G * P) of the slots, the real predecessors
    slot_sources: torch.Tensor  # (C,) column of each slot's predecessor
    slot_targets: torch.Tensor  # (C, 2K) bool: target column y is in the slot's group
    target_group: torch.Tensor  # (2K,) group of each target column
    pair_slots: torch.Tensor  # (2, K, K) [d, x, y]: the slot of the pair x -> y in direction d


class Steps(NamedTuple):
    """Constants of one step of the two recursions run side by side on ``2K`` columns (column
    ``d * K + y``; direction 0: alpha, 1: beta on reversed rows), see :func:`step_constants`."""

    sources: torch.Tensor  # (G * P,) column of the p-th predecessor of group g; 2K (always -FAR): padding
    bias: Optional[torch.Tensor]  # (G * P,) the scores of the tags with a group of their own, else 0 (None: all 0)
    width: int  # P
    slot_index: torch.Tensor  # (C,) positions in (G * P) of the slots
    slot_sources: torch.Tensor  # (C,)
    slot_factors: torch.Tensor  # (C, 2K): F(x_c, y) when target column y is in the slot's group, else 0
    target_group: torch.Tensor  # (2K,)
    shift: torch.Tensor  # (2K,)
    pair_slots: torch.Tensor  # (2, K, K)
    pair_factors: torch.Tensor  # (2, K, K) [d, x, y]: F(x, y) in direction d (0 when not allowed)


_STRUCTURES: "dict" = {}


def _step_structure(allowed: torch.Tensor, wide: torch.Tensor) -> _Structure:
    """:class:`_Structure` for ``allowed (2, K, K)`` ([d, y, x]) and ``wide (2, K)``, cached."""
    key = (allowed.cpu().numpy().tobytes(), wide.cpu().numpy().tobytes(), allowed.shape[1], str(allowed.device))
    if key in _STRUCTURES:
        return _STRUCTURES[key]
    k = allowed.shape[1]
    device = allowed.device
    tags = torch.arange(k, device=device)
    sources, valid, wide_entries, wide_scores, target_group = [], [], [], [], []
    parts = []
    for d in (0, 1):
        # group: the targets with the same predecessor set, except that a wide tag has its own
        key_rows = torch.cat([allowed[d].long(), torch.where(wide[d], tags, -1)[:, None]], 1)
        group = torch.unique(key_rows, dim=0, return_inverse=True)[1]
        representative = torch.empty(int(group.max()) + 1, dtype=torch.long, device=device)
        representative.scatter_(0, group, tags)
        parts.append((group, representative, allowed[d][representative]))  # members (G_d, K): P_g
    width = max(int(members.sum(1).max()) for _, _, members in parts)
    offset = 0
    for d, (group, representative, members) in enumerate(parts):
        order = torch.argsort((~members).to(torch.uint8), dim=1, stable=True)[:, :width]  # members first
        real = torch.arange(width, device=device) < members.sum(1, keepdim=True)
        sources.append(torch.where(real, order + d * k, 2 * k))
        valid.append(real)
        is_wide = real & wide[d][representative][:, None]
        wide_entries.append((is_wide.flatten().nonzero().squeeze(1) + offset * width))
        wide_scores.append((d * k * k + representative[:, None] * k + order)[is_wide])
        target_group.append(group + offset)
        offset += len(representative)
    sources, valid = torch.cat(sources).flatten(), torch.cat(valid).flatten()
    target_group = torch.cat(target_group)
    slot_index = valid.nonzero().squeeze(1)
    slot_sources = sources[slot_index]
    slot_group = slot_index // width
    slot_targets = target_group[None, :] == slot_group[:, None]
    slot_of = torch.zeros(offset, 2 * k, dtype=torch.long, device=device)
    slot_of[slot_group, slot_sources] = torch.arange(len(slot_index), device=device)
    pair_slots = torch.stack([slot_of[target_group[d * k + tags][None, :], d * k + tags[:, None]] for d in (0, 1)])
    structure = _Structure(
        sources,
        torch.cat(wide_entries),
        torch.cat(wide_scores),
        width,
        slot_index,
        slot_sources,
        slot_targets,
        target_group,
        pair_slots,
    )
    if len(_STRUCTURES) >= 16:
        _STRUCTURES.clear()
    _STRUCTURES[key] = structure
    return structure


def step_constants(transitions: torch.Tensor) -> Steps:
    """Constants turning one step ``new(y) = phi(y) + log sum_x exp(old(x) + matrix[y, x])`` of both
    recursions (``matrix = T^T`` for alpha, ``T`` for beta) into a few small operations and one
    small matrix product.

    Target tags ``y`` with the same set ``P_g`` of allowed predecessors (``matrix > IMPOSSIBLE / 2``;
    all tags if none) form a group ``g`` and, when their scores spread less than
    :data:`MAX_SPREAD`, share the shift ``m_g = max_{x in P_g} old(x)``:
    ``new(y) = phi(y) + shift(y) + m_g + log sum_{x in P_g} W_g(x) F(x, y)`` with the weights
    ``W_g(x) = exp(old(x) - m_g)``, ``shift(y) = max_{x in P_g} matrix[y, x]`` and the factors
    ``F(x, y) = exp(matrix[y, x] - shift(y))`` in ``[exp(-MAX_SPREAD), 1]`` on ``P_g``, 0
    elsewhere. A tag with a wider spread is a group of its own whose weights include its scores,
    ``W_g(x) = exp(old(x) + matrix[y, x] - m_g)`` with ``m_g`` the max of ``old(x) + matrix[y, x]``,
    ``shift(y) = 0`` and factors 1: the exact per-target log-sum-exp. Either way the largest weight
    of a group is 1 and the largest term of every sum at least ``exp(-MAX_SPREAD)``, whatever the
    scores ``old``, so flooring the weights at ``exp(_LOG_FLOOR)`` is exact to rounding.

    The predecessor lists are padded to a common length ``P`` (with a ``-FAR`` column) for the max; the
    weights are kept only on the ``C`` *slots* ``(g, x in P_g)`` (BILUO: the predecessor sets
    partition the tags, so ``C = 2K`` slots for both directions).
    """
    matrices = torch.stack([transitions.t(), transitions])  # (2, K, K): [d, y, x]
    allowed = matrices > IMPOSSIBLE / 2
    allowed |= ~allowed.any(2, keepdim=True)  # no allowed predecessor: keep the IMPOSSIBLE scores of all
    top = matrices.masked_fill(~allowed, float("-inf")).amax(2)
    wide = top - matrices.masked_fill(~allowed, float("inf")).amin(2) > MAX_SPREAD
    structure = _step_structure(allowed, wide)
    shift = torch.where(wide, torch.zeros_like(top), top)
    log_factors = torch.where(allowed, matrices - shift[:, :, None], torch.full_like(matrices, float("-inf")))
    log_factors = torch.where(wide[:, :, None] & allowed, torch.zeros_like(matrices), log_factors)
    factors = log_factors.exp().transpose(1, 2)  # (2, K, K): [d, x, y]
    bias = None
    if len(structure.wide_entries):
        bias = transitions.new_zeros(len(structure.sources))
        bias[structure.wide_entries] = matrices.flatten()[structure.wide_scores]
    slot_factors = torch.block_diag(factors[0], factors[1])[structure.slot_sources] * structure.slot_targets
    return Steps(
        structure.sources,
        bias,
        structure.width,
        structure.slot_index,
        structure.slot_sources,
        slot_factors,
        structure.target_group,
        shift.flatten(),
        structure.pair_slots,
        factors,
    )


def cast_steps(steps: "Steps", dtype: torch.dtype) -> "Steps":
    if steps.slot_factors.dtype == dtype:
        return steps
    cast = lambda t: None if t is None else t.to(dtype)  # noqa: E731
    return steps._replace(
        bias=cast(steps.bias),
        slot_factors=cast(steps.slot_factors),
        shift=cast(steps.shift),
        pair_factors=cast(steps.pair_factors),
    )
