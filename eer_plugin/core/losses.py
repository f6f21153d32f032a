"""The Expected Entity Ratio (EER) loss and the combined training objective.

Paper (section "Expected Entity Ratio Loss"):

    L_u = max(0, |rho - rho_hat| - gamma)

with ``rho`` the expected entity ratio (``entity_ratio``), ``gamma`` its margin of uncertainty
(``ratio_margin``) and ``rho_hat`` the model's expected fraction of non-``O`` tags, computed exactly
from CRF tag marginals and estimated on a mini-batch (Monte-Carlo over the data set). The full
objective is ``L_p + lambda_u * L_u`` with ``lambda_u`` the ``ratio_loss_weight``.
Paper defaults: ``rho = 0.15``, ``gamma = 0.05``, ``lambda_u = 10`` (declared with their ranges in
:mod:`eer_plugin.core.ranges`).
"""

from typing import NamedTuple, Optional, Tuple

import torch

from eer_plugin.core.crf import ConstrainedCRF
from eer_plugin.core.ranges import DEFAULT_ENTITY_RATIO, DEFAULT_RATIO_LOSS_WEIGHT, DEFAULT_RATIO_MARGIN


def expected_entity_counts(marginals: torch.Tensor, mask: torch.Tensor, entity_mask: torch.Tensor) -> torch.Tensor:
    """Expected number of non-``O`` tags per row ``(B,)``: ``sum_i sum_{y != O} p(y_i = y | x)``
    over the positions where ``mask`` is True."""
    entity_mass = (marginals * entity_mask.to(marginals.dtype)).sum(-1)
    return (entity_mass * mask.to(marginals.dtype)).sum(-1)


def expected_entity_ratio(
    marginals: torch.Tensor, mask: torch.Tensor, entity_mask: torch.Tensor, per_sequence: bool = False
) -> torch.Tensor:
    """``rho_hat``: expected non-``O`` tags divided by the number of counted positions.

    With ``per_sequence=False`` (the paper's estimate) one scalar over the whole batch; with
    ``per_sequence=True`` one ratio per row ``(B,)`` (rows with no counted position get 0).
    """
    counts = expected_entity_counts(marginals, mask, entity_mask)
    positions = mask.to(marginals.dtype).sum(-1)
    if per_sequence:
        return counts / positions.clamp(min=1)
    return counts.sum() / positions.sum().clamp(min=1)


def ratio_hinge(rho_hat: torch.Tensor, entity_ratio: float, ratio_margin: float) -> torch.Tensor:
    """``max(0, |entity_ratio - rho_hat| - ratio_margin)``, elementwise."""
    return torch.clamp((entity_ratio - rho_hat).abs() - ratio_margin, min=0)


def entity_ratio_loss(
    marginals: torch.Tensor,
    mask: torch.Tensor,
    entity_mask: torch.Tensor,
    entity_ratio: float = DEFAULT_ENTITY_RATIO,
    ratio_margin: float = DEFAULT_RATIO_MARGIN,
    per_sequence: bool = False,
) -> torch.Tensor:
    """``L_u``. Batch version: the hinge of the batch ratio. Per-sequence version: the mean of
    per-row hinges over rows that have at least one counted position."""
    rho_hat = expected_entity_ratio(marginals, mask, entity_mask, per_sequence)
    if not per_sequence:
        return ratio_hinge(rho_hat, entity_ratio, ratio_margin)
    rows = mask.any(-1)
    hinges = ratio_hinge(rho_hat, entity_ratio, ratio_margin) * rows.to(rho_hat.dtype)
    return hinges.sum() / rows.sum().clamp(min=1)


class BandConstraint(NamedTuple):
    """The binding control's state for one batch (see :mod:`eer_plugin.core.ratio_control`)."""

    low: float  # rho - gamma
    high: float  # rho + gamma
    multipliers: Tuple[float, float]  # (lambda_lo, lambda_hi)
    penalty: float  # c
    running_ratio: Optional[float]  # r before this batch (None: the first batch)
    momentum: float  # m


def next_running_ratio(previous: Optional[float], batch, momentum: float):
    """``r = m * r_before + (1 - m) * rho_hat(batch)``, or the batch's ratio when there is no ``r_before``."""
    return batch if previous is None else momentum * previous + (1 - momentum) * batch


def band_sides(ratio: torch.Tensor, band: BandConstraint) -> Tuple[torch.Tensor, torch.Tensor]:
    """``(max(0, lambda_hi + c (r - high)), max(0, lambda_lo + c (low - r)))``: their difference is the
    price per unit of ratio, the derivative of :func:`band_penalty`."""
    lam_lo, lam_hi = band.multipliers
    above = torch.clamp(lam_hi + band.penalty * (ratio - band.high), min=0)
    below = torch.clamp(lam_lo + band.penalty * (band.low - ratio), min=0)
    return above, below


def band_penalty(ratio: torch.Tensor, band: BandConstraint) -> torch.Tensor:
    """The augmented-Lagrangian penalty of ``low <= ratio <= high``::

        psi(r) = (max(0, lambda_hi + c (r - high))^2 + max(0, lambda_lo + c (low - r))^2) / (2 c)

    whose derivative, the price per unit of ratio, is
    ``max(0, lambda_hi + c (r - high)) - max(0, lambda_lo + c (low - r))`` (:func:`band_sides`)."""
    above, below = band_sides(ratio, band)
    return (above.square() + below.square()) / (2 * band.penalty)


def band_term(
    marginals: torch.Tensor, mask: torch.Tensor, entity_mask: torch.Tensor, band: BandConstraint
) -> torch.Tensor:
    """``n_bar * psi(r)`` with ``r = m * r_before + (1 - m) * rho_hat(batch)``, the running ratio this
    batch moves, and ``n_bar`` the mean number of counted positions per row: each token's pull is
    ``(1 - m) * psi'(r)`` per expected entity tag, in the units of ``L_p`` (nats per row)."""
    batch = expected_entity_ratio(marginals, mask, entity_mask)
    ratio = next_running_ratio(band.running_ratio, batch, band.momentum)
    positions_per_row = mask.to(marginals.dtype).sum() / max(mask.shape[0], 1)
    return positions_per_row * band_penalty(ratio, band)


class EERLossOutput(NamedTuple):
    loss: torch.Tensor  # the objective to minimise (scalar)
    partial_nll: torch.Tensor  # L_p: mean over rows of -log p(y_O | x)
    ratio_loss: torch.Tensor  # L_u (0 when ratio_loss_weight == 0)
    band_term: torch.Tensor  # the binding control's term n_bar * psi(r) (0 without it)
    rho_hat: torch.Tensor  # batch expected entity ratio (detached, for logging)
    marginals: Optional[torch.Tensor]  # (B, n, K) model tag marginals, or None when not needed


def eer_objective(
    crf: ConstrainedCRF,
    emissions: torch.Tensor,
    mask: torch.Tensor,
    allowed: torch.Tensor,
    entity_mask: torch.Tensor,
    ratio_mask: Optional[torch.Tensor] = None,
    entity_ratio: float = DEFAULT_ENTITY_RATIO,
    ratio_margin: float = DEFAULT_RATIO_MARGIN,
    ratio_loss_weight: float = DEFAULT_RATIO_LOSS_WEIGHT,
    per_sequence: bool = False,
    band: Optional[BandConstraint] = None,
) -> EERLossOutput:
    """The full EER training loss ``L_p + ratio_loss_weight * L_u (+ band term)`` on one batch.

    ``allowed`` holds the observations (see :func:`eer_plugin.core.crf.observations_to_allowed`);
    ``ratio_mask`` selects the positions counted in ``rho_hat`` (default: ``mask``; the tagger
    excludes the [CLS]/[SEP] bookends, which are always ``O``). ``L_p`` is averaged over rows, as
    in the paper's eq. (1). ``band`` (the binding control, :mod:`eer_plugin.core.ratio_control`) adds
    :func:`band_term`.
    """
    ratio_mask = mask if ratio_mask is None else ratio_mask
    zero = emissions.new_zeros(())
    if ratio_loss_weight or band is not None:
        pll, marginals = crf.partial_log_likelihood_and_marginals(emissions, mask, allowed)
        ratio_loss = entity_ratio_loss(marginals, ratio_mask, entity_mask, entity_ratio, ratio_margin, per_sequence)
        rho_hat = expected_entity_ratio(marginals.detach(), ratio_mask, entity_mask)
        bound = zero if band is None else band_term(marginals, ratio_mask, entity_mask, band)
    else:
        pll = crf.partial_log_likelihood(emissions, mask, allowed)
        marginals = None
        ratio_loss, bound = zero, zero
        rho_hat = emissions.new_full((), float("nan"))
    partial_nll = -pll.mean()
    loss = partial_nll + ratio_loss_weight * ratio_loss + bound
    return EERLossOutput(loss, partial_nll, ratio_loss, bound, rho_hat, marginals)
