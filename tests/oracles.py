"""Test-only oracles for :class:`eer_plugin.core.crf.ConstrainedCRF`, written for reading, not speed:
the score and the log-likelihood of full taggings and the textbook forward algorithm. The tests check
the CRF's fast path (:class:`~eer_plugin.core.forward_backward.ForwardBackward`) against them, and
them against brute-force enumeration. They use the CRF's own grammar helpers, so an oracle and the
fast path see the same constrained transitions and boundaries."""

from typing import Optional

import torch

from eer_plugin.core.crf import ConstrainedCRF


def sequence_score(
    crf: ConstrainedCRF, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """``s(y)`` of given taggings ``tags (B, n)`` (padding ignored); invalid taggings score about
    :data:`~eer_plugin.core.crf.IMPOSSIBLE` per violation."""
    lengths = crf._check(emissions, mask)
    mask = mask.bool()
    tags = tags.long().masked_fill(~mask, 0)
    unary = (emissions.gather(2, tags.unsqueeze(2)).squeeze(2) * mask).sum(1)
    trans = crf._constrained_transitions(emissions.dtype)
    pair = trans[tags[:, :-1], tags[:, 1:]] * (mask[:, 1:])
    first = crf._boundary(crf.allowed_start, emissions.dtype)[tags[:, 0]]
    last_tags = tags.gather(1, (lengths - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
    last = crf._boundary(crf.allowed_end, emissions.dtype)[last_tags]
    boundary = torch.where(lengths > 0, first + last, torch.zeros_like(first))
    return unary + pair.sum(1) + boundary


def log_likelihood(
    crf: ConstrainedCRF, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """Ordinary CRF log-likelihood ``log p(y | x)`` ``(B,)`` of fully observed taggings."""
    return sequence_score(crf, emissions, tags, mask) - crf.log_partition(emissions, mask)


def reference_log_partition(
    crf: ConstrainedCRF, emissions: torch.Tensor, mask: torch.Tensor, allowed: Optional[torch.Tensor] = None
) -> torch.Tensor:
    """The textbook forward algorithm for ``log Z`` ``(B,)``:

        alpha_1(y)     = phi(1, y) + start(y)
        alpha_{i+1}(y') = phi(i+1, y') + logsumexp_y (alpha_i(y) + T[y, y'])
        log Z          = logsumexp_y (alpha_n(y) + end(y))

    with ``T``, ``start``, ``end`` = :data:`~eer_plugin.core.crf.IMPOSSIBLE` where the grammar forbids
    them, and each row stopping at its own length. The marginals are its gradient in the emissions
    (``torch.autograd.grad(log_z.sum(), emissions, create_graph=True)``)."""
    lengths = crf._check(emissions, mask)
    emissions = crf._restrict(emissions, allowed)
    trans = crf._constrained_transitions(emissions.dtype)
    alpha = emissions[:, 0] + crf._boundary(crf.allowed_start, emissions.dtype)
    for i in range(1, emissions.shape[1]):
        step = emissions[:, i] + torch.logsumexp(alpha.unsqueeze(2) + trans, dim=1)
        alpha = torch.where((i < lengths).unsqueeze(1), step, alpha)  # finished rows keep their alpha
    log_z = torch.logsumexp(alpha + crf._boundary(crf.allowed_end, emissions.dtype), dim=1)
    return torch.where(lengths > 0, log_z, torch.zeros_like(log_z))
