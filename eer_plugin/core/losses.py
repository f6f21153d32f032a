"""The Expected Entity Ratio (EER) loss and the combined training objective.

Paper (section "Expected Entity Ratio Loss"):

    L_u = max(0, |rho - rho_hat| - gamma)

with ``rho`` the expected entity ratio (``entity_ratio``), ``gamma`` its margin of uncertainty
(``ratio_margin``) and ``rho_hat`` the model's expected fraction of non-``O`` tags, computed exactly
from CRF tag marginals and estimated on a mini-batch (Monte-Carlo over the data set). The full
objective is ``L_p + lambda_u * L_u`` with ``lambda_u`` the ``ratio_loss_weight``.
Paper defaults: ``rho = 0.15``, ``gamma = 0.05``, ``lambda_u = 10``.
"""
from typing import NamedTuple, Optional

import torch

from eer_plugin.core.crf import ConstrainedCRF

DEFAULT_ENTITY_RATIO = 0.15  # rho
DEFAULT_RATIO_MARGIN = 0.05  # gamma
DEFAULT_RATIO_LOSS_WEIGHT = 10.0  # lambda_u


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


class EERLossOutput(NamedTuple):
    loss: torch.Tensor  # the objective to minimise (scalar)
    partial_nll: torch.Tensor  # L_p: mean over rows of -log p(y_O | x)
    ratio_loss: torch.Tensor  # L_u (0 when ratio_loss_weight == 0)
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
) -> EERLossOutput:
    """The full EER training loss ``L_p + ratio_loss_weight * L_u`` on one batch.

    ``allowed`` holds the observations (see :func:`eer_plugin.core.crf.observations_to_allowed`);
    ``ratio_mask`` selects the positions counted in ``rho_hat`` (default: ``mask``; the tagger
    excludes the [CLS]/[SEP] bookends, which are always ``O``). ``L_p`` is averaged over rows, as
    in the paper's eq. (1).
    """
    ratio_mask = mask if ratio_mask is None else ratio_mask
    if ratio_loss_weight:
        pll, marginals = crf.partial_log_likelihood_and_marginals(emissions, mask, allowed)
        ratio_loss = entity_ratio_loss(marginals, ratio_mask, entity_mask, entity_ratio, ratio_margin, per_sequence)
        rho_hat = expected_entity_ratio(marginals.detach(), ratio_mask, entity_mask)
    else:
        pll = crf.partial_log_likelihood(emissions, mask, allowed)
        marginals = None
        ratio_loss = emissions.new_zeros(())
        rho_hat = emissions.new_full((), float("nan"))
    partial_nll = -pll.mean()
    return EERLossOutput(partial_nll + ratio_loss_weight * ratio_loss, partial_nll, ratio_loss, rho_hat, marginals)
