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

import math
from typing import Optional

import torch

from eer_plugin.core.losses import BandConstraint, band_sides, expected_entity_counts, next_running_ratio

#: eta: the multipliers' step per unit of ratio outside the band, per training batch (nats per entity tag)
DEFAULT_PRICE_RATE = 1.0
#: c: the price's immediate slope per unit of ratio outside the band (nats per entity tag)
DEFAULT_PRICE_PENALTY = 10.0
#: m: the running ratio's decay per batch (0.9: about the last 10 batches)
DEFAULT_MOMENTUM = 0.9
#: the ratio controls a tagger accepts: the paper's fixed weight alone, or with the band held
RATIO_CONTROLS = ("fixed", "bind")


def _finite(value) -> bool:
    """Whether ``value`` is a finite ``int`` or ``float`` (not a bool, None or string, not NaN or infinite; not a whole
    number too large for a float, as jsonnet writes ``1e999``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def check_ratio_loss(entity_ratio: float, ratio_margin: float, ratio_loss_weight: float) -> None:
    """``ValueError`` for a band or weight the EER loss cannot use: ``rho`` outside (0, 1),
    ``gamma`` or ``lambda_u`` below 0 (a negative weight maximises the ratio loss), or any of them not a finite
    number (null, a string)."""
    if not (_finite(entity_ratio) and 0 < entity_ratio < 1):
        raise ValueError(f"entity_ratio (rho) must be a number in (0, 1), got {entity_ratio!r}")
    if not (_finite(ratio_margin) and ratio_margin >= 0):
        raise ValueError(f"ratio_margin (gamma) must be a number of at least 0, got {ratio_margin!r}")
    if not (_finite(ratio_loss_weight) and ratio_loss_weight >= 0):
        raise ValueError(f"ratio_loss_weight (lambda_u) must be a number of at least 0, got {ratio_loss_weight!r}")


def check_ratio_control(control: str) -> str:
    if control not in RATIO_CONTROLS:
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
        if not (_finite(entity_ratio) and 0.0 <= entity_ratio <= 1.0):
            raise ValueError(f"entity_ratio (rho) must be in [0, 1], got {entity_ratio!r}")
        if not (_finite(ratio_margin) and ratio_margin >= 0):
            raise ValueError(f"ratio_margin (gamma) must be >= 0, got {ratio_margin!r}")
        if not (_finite(price_rate) and price_rate >= 0):
            raise ValueError(f"price_rate (eta) must be a finite number >= 0, got {price_rate!r}")
        if not (_finite(price_penalty) and price_penalty > 0):
            raise ValueError(f"price_penalty (c) must be a finite number > 0, got {price_penalty!r}")
        if not (_finite(momentum) and 0.0 <= momentum < 1.0):
            raise ValueError(f"momentum must be in [0, 1), got {momentum!r}")
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
