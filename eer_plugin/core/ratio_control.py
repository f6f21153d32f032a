"""A ratio control that binds: the band as a constraint, held by an augmented Lagrangian.

The paper's EER term ``lambda_u * max(0, |rho - rho_hat| - gamma)`` acts on one batch ratio, while
the partial likelihood ``L_p`` is a mean over rows of *summed* per-token terms. The hinge's pull on
each token's marginals is therefore about ``lambda_u / N`` for ``N`` counted tokens in the batch,
against about ``1 / B`` from the likelihood (``B`` rows): with chunks of a few hundred subwords the
likelihood wins and ``rho_hat`` goes where it sends it, whatever band ``[rho - gamma, rho + gamma]``
the user gave (docs/results.md, the ratio issue).

The binding control (``ratio_control: bind``) keeps the paper's objective and adds the augmented
Lagrangian of the constraint ``rho - gamma <= rho_hat <= rho + gamma`` (method of multipliers)::

    L = L_p + lambda_u * L_u + n_bar * psi(rho_hat)
    psi' (rho_hat) = max(0, lambda_hi + c (rho_hat - high)) - max(0, lambda_lo + c (low - rho_hat))
    lambda_hi <- max(0, lambda_hi + eta (rho_hat - high))       high = rho + gamma
    lambda_lo <- max(0, lambda_lo + eta (low - rho_hat))        low  = rho - gamma

``n_bar`` is the mean number of counted positions per row, so ``psi'`` is a *price per expected
entity tag* in the likelihood's own units (nats per row): positive when the model has too many
entity tags, negative (a subsidy) when it has too few. It has a part proportional to the distance
outside the band (``c``, ``penalty``: an immediate push that does not wait for the multipliers) and
the multipliers, which accumulate while the batch ratio is outside the band (``eta``,
``price_rate``: stochastic dual ascent, one step per training batch) and relax while it is inside.
At equilibrium the multiplier balances the likelihood's pull and ``rho_hat`` sits at the band's
edge, whatever the chunk length or batch size. Functions: :func:`eer_plugin.core.losses.band_penalty`
(``psi``) and :func:`eer_plugin.core.losses.band_term`; this module holds the multipliers.

The multipliers are a buffer, so every checkpoint saves them and ``--recover`` continues exactly;
under distributed training the dual step uses the ratio over all workers' batches, so every worker
holds the same multipliers. The gradient is exact (autograd through the CRF marginals).
"""
from typing import Optional

import torch

from eer_plugin.core.losses import BandConstraint, expected_entity_counts

#: eta: the multipliers' step per unit of ratio violation per training batch (nats per entity tag)
DEFAULT_PRICE_RATE = 1.0
#: c: the effective price's slope per unit of ratio outside the band (nats per entity tag)
DEFAULT_PRICE_PENALTY = 10.0
#: the ratio controls a tagger accepts: the paper's fixed weight alone, or with the band constraint
RATIO_CONTROLS = ("fixed", "bind")


def check_ratio_control(control: str) -> str:
    if control not in RATIO_CONTROLS:
        raise ValueError(f"ratio_control must be one of {', '.join(RATIO_CONTROLS)}, got {control!r}")
    return control


class BandMultipliers(torch.nn.Module):
    """The multipliers ``[lambda_lo, lambda_hi]`` of the band ``rho - gamma <= rho_hat <= rho + gamma``.

    Parameters
    ----------
    entity_ratio : float
        ``rho``: the band's centre.
    ratio_margin : float
        ``gamma``: the band's half width.
    price_rate : float
        ``eta``: each multiplier moves by ``eta`` times the batch ratio's distance outside (or, with
        the opposite sign, inside) its side of the band.
    price_penalty : float
        ``c``: the slope of the effective price outside the band.
    """

    def __init__(
        self,
        entity_ratio: float,
        ratio_margin: float,
        price_rate: float = DEFAULT_PRICE_RATE,
        price_penalty: float = DEFAULT_PRICE_PENALTY,
    ) -> None:
        super().__init__()
        if not 0.0 <= entity_ratio <= 1.0:
            raise ValueError(f"entity_ratio (rho) must be in [0, 1], got {entity_ratio}")
        if ratio_margin < 0:
            raise ValueError(f"ratio_margin (gamma) must be >= 0, got {ratio_margin}")
        if not price_rate >= 0:
            raise ValueError(f"price_rate (eta) must be >= 0, got {price_rate}")
        if not price_penalty > 0:
            raise ValueError(f"price_penalty (c) must be > 0, got {price_penalty}")
        self.low = entity_ratio - ratio_margin
        self.high = entity_ratio + ratio_margin
        self.price_rate = price_rate
        self.price_penalty = price_penalty
        # float64, so that many small dual steps add up without rounding
        self.register_buffer("multipliers", torch.zeros(2, dtype=torch.float64))

    def constraint(self) -> BandConstraint:
        """The band and the current multipliers, for :func:`eer_plugin.core.losses.eer_objective`."""
        return BandConstraint(self.low, self.high, self.multipliers.detach().clone(), self.price_penalty)

    def price(self) -> float:
        """``mu = lambda_hi - lambda_lo``: the accumulated price per expected entity tag."""
        return float(self.multipliers[1] - self.multipliers[0])

    @torch.no_grad()
    def update(self, rho_hat: torch.Tensor) -> None:
        """One dual-ascent step from a training batch's expected entity ratio ``rho_hat``."""
        rho_hat = float(rho_hat)
        step = torch.tensor([self.low - rho_hat, rho_hat - self.high], dtype=torch.float64)
        self.multipliers.add_(self.price_rate * step.to(self.multipliers.device)).clamp_(min=0.0)


def batch_ratio(marginals: torch.Tensor, mask: torch.Tensor, entity_mask: torch.Tensor, group: Optional[object] = None) -> torch.Tensor:
    """``rho_hat`` of a batch, summed over every worker when ``torch.distributed`` is initialised
    (so that all workers take the same dual step)."""
    import torch.distributed as dist

    totals = torch.stack(
        [expected_entity_counts(marginals.detach(), mask, entity_mask).sum(), mask.to(marginals.dtype).sum()]
    ).double()
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(totals, group=group)
    return totals[0] / totals[1].clamp(min=1)
