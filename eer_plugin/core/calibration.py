"""Ratio-calibrated start: the ``O`` bias that gives an untrained tagger the prior entity ratio.

An untrained BILUO tagger spreads its mass over 17 tags, 16 of them entity tags, so its expected
entity ratio ``rho_hat`` starts near 0.85 while the prior ``rho`` (``entity_ratio``) is about
0.15. The ratio term's pull on each latent token is about ``lambda_u / (tokens in the batch)``:
too weak to undo such a start within a short budget. Before the first step we therefore shift the
``O`` score of every position by one constant ``b`` (the ``O`` entry of the tag scorer's bias),
chosen on the model's *real* initial scores of a sample of training chunks so that

    rho_hat(b) = sum_i sum_{y != O} p_b(y_i = y | x) / #positions  ==  rho.

``rho_hat(b)`` is non-increasing in ``b``: ``d E[#O] / d b = Var(#O) >= 0`` for a CRF whose ``O``
scores all move by ``b``. So a bisection finds ``b`` to any precision.
"""

from typing import NamedTuple, Sequence

import torch

from eer_plugin.core.crf import ConstrainedCRF
from eer_plugin.core.losses import expected_entity_counts
from eer_plugin.core.ranges import ENTITY_RATIO


class RatioBatch(NamedTuple):
    """One batch of the calibration sample."""

    emissions: torch.Tensor  # (B, n, K) initial tag scores
    mask: torch.Tensor  # (B, n) real positions
    ratio_mask: torch.Tensor  # (B, n) positions counted in rho_hat (bookends excluded)


class Calibration(NamedTuple):
    outside_shift: float  # b, added to the O score of every position
    ratio_before: float  # rho_hat of the sample at b = 0
    ratio_after: float  # rho_hat of the sample at b
    positions: int  # positions counted


@torch.no_grad()
def sample_ratio(
    crf: ConstrainedCRF,
    batches: Sequence[RatioBatch],
    entity_mask: torch.Tensor,
    outside_index: int,
    outside_shift: float = 0.0,
) -> float:
    """``rho_hat`` of the whole sample (expected entity tags / counted positions, pooled over
    batches) when every ``O`` score is raised by ``outside_shift``; the model's unrestricted
    marginals, as in the training loss."""
    entities, positions = 0.0, 0.0
    for batch in batches:
        emissions = batch.emissions.clone()
        emissions[..., outside_index] += outside_shift
        marginals = crf.marginals(emissions, batch.mask)
        entities += float(expected_entity_counts(marginals, batch.ratio_mask, entity_mask).sum())
        positions += float(batch.ratio_mask.sum())
    if positions == 0:
        raise ValueError("the calibration sample has no counted position (every chunk is empty)")
    return entities / positions


def calibrate_outside_shift(
    crf: ConstrainedCRF,
    batches: Sequence[RatioBatch],
    entity_mask: torch.Tensor,
    outside_index: int,
    target_ratio: float,
    tolerance: float = 1e-3,
    max_iterations: int = 100,
) -> Calibration:
    """The shift ``b`` of the ``O`` scores with ``|rho_hat(b) - target_ratio| <= tolerance``.

    ``rho_hat(b)`` is monotone, so a bracket ``[low, high]`` with ``rho_hat(low) >= target >=
    rho_hat(high)`` is found by doubling, then narrowed by the Illinois variant of regula falsi
    (superlinear, and never leaves the bracket): about 8 evaluations of the sample's marginals
    instead of about 25 for bisection. ``target_ratio`` is a ``rho``: strictly between 0 and 1
    (:data:`~eer_plugin.core.ranges.ENTITY_RATIO`).
    """
    ENTITY_RATIO.check("target_ratio", target_ratio)

    def excess(shift: float) -> float:  # rho_hat(b) - rho: positive while b is too small
        return sample_ratio(crf, batches, entity_mask, outside_index, shift) - target_ratio

    before = excess(0.0)
    shift, value = 0.0, before
    if abs(value) > tolerance:
        step = 1.0  # bracket [low, high] around the root, from b = 0 outwards
        if value > 0:
            low, f_low, high, f_high = 0.0, value, step, excess(step)
            while f_high > 0 and high < 1e4:
                low, f_low, step = high, f_high, 2 * step
                high, f_high = low + step, excess(low + step)
        else:
            high, f_high, low, f_low = 0.0, value, -step, excess(-step)
            while f_low < 0 and low > -1e4:
                high, f_high, step = low, f_low, 2 * step
                low, f_low = high - step, excess(high - step)
        side = 0
        for _ in range(max_iterations):
            shift = (low * f_high - high * f_low) / (f_high - f_low) if f_high != f_low else (low + high) / 2
            value = excess(shift)
            if abs(value) <= tolerance or high - low < 1e-9:
                break
            if value > 0:
                low, f_low = shift, value
                if side == 1:
                    f_high /= 2  # Illinois: the end kept twice counts half
                side = 1
            else:
                high, f_high = shift, value
                if side == -1:
                    f_low /= 2
                side = -1
    positions = int(sum(float(batch.ratio_mask.sum()) for batch in batches))
    return Calibration(shift, before + target_ratio, value + target_ratio, positions)
