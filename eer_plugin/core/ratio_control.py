"""A ratio control that binds: a price per entity tag that holds the running rho_hat in the band.

The paper's EER term ``lambda_u * max(0, |rho - rho_hat| - gamma)`` acts on one batch ratio, while
the partial likelihood ``L_p`` is a mean over rows of *summed* per-token terms. The hinge's pull on
each token's marginals is therefore about ``lambda_u / N`` for ``N`` counted tokens in the batch,
against about ``1 / B`` from the likelihood (``B`` rows): with chunks of a few hundred subwords the
likelihood wins and ``rho_hat`` goes where it sends it, whatever band ``[rho - gamma, rho + gamma]``
the user gave (docs/results.md, the ratio issue).

The binding control (``ratio_control: bind``) keeps the paper's objective and treats the band as a
constraint on ``r``, a running mean of the training batches' ``rho_hat`` (``r = m r_before + (1 - m)
rho_hat(batch)``, ``momentum`` m), held by the augmented Lagrangian of the method of multipliers::

    L = L_p + lambda_u * L_u + n_bar * psi(r)
    psi(r) = (max(0, lambda_hi + c (r - high))^2 + max(0, lambda_lo + c (low - r))^2) / (2 c)
    lambda_hi <- max(0, lambda_hi + eta (r - high))          high = rho + gamma
    lambda_lo <- max(0, lambda_lo + eta (low - r))           low  = rho - gamma

``n_bar`` is the mean number of counted positions per row, so ``psi'(r)`` is a *price per expected
entity tag* in the likelihood's own units (nats per row): positive while the model has too many
entity tags, negative (a subsidy) while it has too few, zero inside the band once the multipliers
have relaxed. It has a part proportional to the distance outside the band (``c``,
``price_penalty``: a push that does not wait) and the multipliers (``eta``, ``price_rate``: dual
ascent, one step per batch), which accumulate while ``r`` stays outside and relax while it is
inside, so at equilibrium the price balances the likelihood's pull and ``r`` sits at the band's
edge, whatever the chunk length or batch size. The penalty acts on the running ratio rather than on
each batch's: a batch of entity-dense documents moves ``r`` by only ``(1 - m)`` of its deviation,
so it is not pushed down much harder than a sparse one, and the band is held on average, as the
paper's prior means it. ``psi`` is differentiated exactly through the batch's CRF marginals
(:func:`eer_plugin.core.losses.band_term`).

The running ratio and the multipliers are buffers, so every checkpoint saves them and ``--recover``
continues exactly; under distributed training each batch's ratio is taken over all workers, so
every worker holds the same price.
"""

from typing import Optional

import torch

from eer_plugin.core.losses import BandConstraint, band_sides, expected_entity_counts, next_running_ratio
from eer_plugin.core.ranges import (
    DEFAULT_MOMENTUM,
    DEFAULT_PRICE_PENALTY,
    DEFAULT_PRICE_RATE,
    ENTITY_RATIO,
    MOMENTUM,
    PRICE_PENALTY,
    PRICE_RATE,
    RATIO_CONTROLS,
    RATIO_LOSS_WEIGHT,
    RATIO_MARGIN,
)


def check_ratio_loss(entity_ratio: float, ratio_margin: float, ratio_loss_weight: float) -> None:
    """``ValueError`` for a band or weight the EER loss cannot use: each outside its range of
    :mod:`eer_plugin.core.ranges` (``rho`` in (0, 1), ``gamma`` and ``lambda_u`` at least 0: a negative weight
    maximises the ratio loss), or not a finite number (null, a string, NaN, an infinity)."""
    ENTITY_RATIO.check("entity_ratio", entity_ratio)
    RATIO_MARGIN.check("ratio_margin", ratio_margin)
    RATIO_LOSS_WEIGHT.check("ratio_loss_weight", ratio_loss_weight)


def check_ratio_control(control: str) -> str:
    """``control``, or a ``ValueError`` unless it is one of :data:`~eer_plugin.core.ranges.RATIO_CONTROLS`."""
    if type(control) is not str or control not in RATIO_CONTROLS:
        raise ValueError(f"ratio_control must be one of {', '.join(RATIO_CONTROLS)}, got {control!r}")
    return control


class EntityPrice(torch.nn.Module):
    """The state of the binding control: the multipliers and the running ratio ``r``.

    Parameters
    ----------
    entity_ratio : float
        ``rho``: the band's centre.
    ratio_margin : float
        ``gamma``: the band's half width.
    price_rate : float
        ``eta``: each multiplier moves by ``eta`` times the running ratio's distance outside (or,
        relaxing, inside) its side of the band, per batch.
    price_penalty : float
        ``c``: the price's immediate slope outside the band.
    momentum : float
        ``m`` of the running ratio ``r <- m r + (1 - m) rho_hat(batch)``.
    """

    def __init__(
        self,
        entity_ratio: float,
        ratio_margin: float,
        price_rate: float = DEFAULT_PRICE_RATE,
        price_penalty: float = DEFAULT_PRICE_PENALTY,
        momentum: float = DEFAULT_MOMENTUM,
    ) -> None:
        super().__init__()
        ENTITY_RATIO.check("entity_ratio", entity_ratio)  # the ranges of core.ranges, as the tagger's rules
        RATIO_MARGIN.check("ratio_margin", ratio_margin)
        PRICE_RATE.check("price_rate", price_rate)
        PRICE_PENALTY.check("price_penalty", price_penalty)
        MOMENTUM.check("momentum", momentum)
        self.low = entity_ratio - ratio_margin
        self.high = entity_ratio + ratio_margin
        self.price_rate = price_rate
        self.price_penalty = price_penalty
        self.momentum = momentum
        # [lambda_lo, lambda_hi, r] in float64 (many small steps add up without rounding); r is NaN
        # until the first training batch
        self.register_buffer("state", torch.tensor([0.0, 0.0, float("nan")], dtype=torch.float64))

    @property
    def running_ratio(self) -> Optional[float]:
        ratio = float(self.state[2])
        return None if ratio != ratio else ratio

    def constraint(self) -> BandConstraint:
        """What :func:`eer_plugin.core.losses.eer_objective` needs for the next training batch."""
        lam_lo, lam_hi, _ = self.state.tolist()
        return BandConstraint(
            self.low, self.high, (lam_lo, lam_hi), self.price_penalty, self.running_ratio, self.momentum
        )

    def price(self) -> float:
        """``psi'(r)``: the current price per expected entity tag per unit of ratio (0 before the first batch)."""
        ratio = self.running_ratio
        if ratio is None:
            return 0.0
        above, below = band_sides(torch.tensor(ratio, dtype=torch.float64), self.constraint())
        return float(above - below)

    @torch.no_grad()
    def update(self, rho_hat: torch.Tensor) -> None:
        """Folds a training batch's ``rho_hat`` into ``r`` (as :func:`band_term` did), then one dual step."""
        rho_hat = float(rho_hat)
        lam_lo, lam_hi, _ = self.state.tolist()
        ratio = next_running_ratio(self.running_ratio, rho_hat, self.momentum)
        lam_lo = max(0.0, lam_lo + self.price_rate * (self.low - ratio))
        lam_hi = max(0.0, lam_hi + self.price_rate * (ratio - self.high))
        self.state.copy_(torch.tensor([lam_lo, lam_hi, ratio], dtype=torch.float64))


def batch_ratio(
    marginals: torch.Tensor, mask: torch.Tensor, entity_mask: torch.Tensor, group: Optional[object] = None
) -> torch.Tensor:
    """``rho_hat`` of a batch, summed over every worker when ``torch.distributed`` is initialised
    (so that all workers hold the same running ratio and multipliers)."""
    import torch.distributed as dist

    totals = torch.stack(
        [expected_entity_counts(marginals.detach(), mask, entity_mask).sum(), mask.to(marginals.dtype).sum()]
    ).double()
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(totals, group=group)
    return totals[0] / totals[1].clamp(min=1)
