"""The binding ratio control (eer_plugin/core/ratio_control.py): its term, its multipliers, and a
tiny tagger whose band lies far from where the likelihood pulls rho_hat."""

import re

import pytest
import torch

from eer_plugin.core.crf import ConstrainedCRF
from eer_plugin.core.losses import BandConstraint, band_penalty, band_term, eer_objective, expected_entity_ratio
from eer_plugin.core.ranges import RANGES
from eer_plugin.core.ratio_control import EntityPrice, batch_ratio, check_ratio_control
from eer_plugin.core.tags import BiluoScheme


def price_per_unit(r, lam_lo, lam_hi, low, high, c):
    return max(0.0, lam_hi + c * (r - high)) - max(0.0, lam_lo + c * (low - r))


@pytest.mark.parametrize("ratio", [0.0, 0.05, 0.11, 0.15, 0.19, 0.26, 0.9])
@pytest.mark.parametrize("multipliers", [(0.0, 0.0), (0.0, 1.5), (0.7, 0.0), (0.2, 0.3)])
def test_the_penalty_s_derivative_is_the_price(ratio, multipliers):
    x = torch.tensor(ratio, dtype=torch.float64, requires_grad=True)
    band = BandConstraint(0.10, 0.20, multipliers, 30.0, None, 0.9)
    value = band_penalty(x, band)
    (grad,) = torch.autograd.grad(value, x)
    assert float(grad) == pytest.approx(price_per_unit(ratio, *multipliers, 0.10, 0.20, 30.0), abs=1e-12)
    if multipliers == (0.0, 0.0) and 0.10 <= ratio <= 0.20:
        assert float(value.detach()) == 0.0  # no pull inside the band until a multiplier has built up


@pytest.mark.parametrize("running_ratio", [None, 0.05])
def test_the_band_term_pulls_each_token_by_the_price_per_expected_entity_tag(running_ratio):
    """d(term)/d(emissions) = (1 - m) psi'(r) d(mean expected entity tags per row)/d(emissions), padding
    included; r = m r_before + (1 - m) rho_hat(batch), or rho_hat(batch) on the first batch."""
    torch.manual_seed(0)
    scheme = BiluoScheme(["PER", "LOC"])
    crf = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end())
    emissions = (3 * torch.randn(3, 6, scheme.num_tags, dtype=torch.float64)).requires_grad_()
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4], dtype=torch.bool)
    band = BandConstraint(0.05, 0.10, (0.0, 0.4), 30.0, running_ratio, 0.9)
    entity = scheme.entity_mask()
    (grad_term,) = torch.autograd.grad(band_term(crf.marginals(emissions, mask), mask, entity, band), emissions)
    marginals = crf.marginals(emissions, mask)
    batch = float(expected_entity_ratio(marginals.detach(), mask, entity))
    weight, ratio = (1.0, batch) if running_ratio is None else (0.1, 0.9 * running_ratio + 0.1 * batch)
    counts = (marginals * entity).sum(-1).mul(mask).sum(-1).mean()
    (grad_counts,) = torch.autograd.grad(counts, emissions)
    price = weight * price_per_unit(ratio, 0.0, 0.4, 0.05, 0.10, 30.0)
    assert price != 0
    torch.testing.assert_close(grad_term, price * grad_counts, rtol=1e-9, atol=1e-12)
    assert torch.isfinite(grad_term).all()


def test_the_multipliers_follow_the_running_ratio():
    price = EntityPrice(0.15, 0.05, price_rate=2.0, price_penalty=10.0, momentum=0.5)
    assert price.price() == 0.0  # no batch seen yet
    price.update(torch.tensor(0.30))  # r = 0.30 (the first batch), 0.10 above: lambda_hi = 2 * 0.10
    assert price.state.tolist()[:2] == pytest.approx([0.0, 0.2])
    assert price.price() == pytest.approx(0.2 + 10 * 0.10)  # the multiplier plus the immediate push
    price.update(torch.tensor(0.10))  # r = 0.20: on the edge, the multiplier stays
    assert price.running_ratio == pytest.approx(0.20) and price.price() == pytest.approx(0.2)
    for _ in range(10):
        price.update(torch.tensor(0.15))  # r falls into the band: lambda_hi relaxes, never below 0
    assert price.state.tolist()[:2] == [0.0, 0.0] and price.price() == 0.0
    for _ in range(3):
        price.update(torch.tensor(0.0))  # r below the band: a subsidy
    assert price.price() < 0 and price.state[0] > 0
    state = price.state_dict()
    assert set(state) == {"state"}
    restored = EntityPrice(0.15, 0.05, price_rate=2.0, price_penalty=10.0, momentum=0.5)
    restored.load_state_dict(state)
    assert restored.price() == price.price()


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="^ratio_control must be one of fixed, bind, got 'adaptive'$"):
        check_ratio_control("adaptive")
    with pytest.raises(ValueError, match=r"^ratio_margin must be a number of at least 0 \(gamma: "):
        EntityPrice(0.15, -0.1)
    with pytest.raises(ValueError, match=r"^momentum must be a number in \[0, 1\) \(m: "):
        EntityPrice(0.15, 0.05, momentum=1.0)


def _core_checks():
    """Each setting of :data:`RANGES` -> the maths' checks that take it (a function of the value), the others at
    their defaults: the EER loss's (:func:`check_ratio_loss`) and the binding control's (:class:`EntityPrice`)."""
    from eer_plugin.core.ratio_control import check_ratio_loss

    loss = {"entity_ratio": 0.15, "ratio_margin": 0.05, "ratio_loss_weight": 10.0}
    price = {"entity_ratio": 0.15, "ratio_margin": 0.05}
    checks = {name: [] for name in RANGES}
    for name in loss:
        checks[name].append(lambda value, name=name: check_ratio_loss(**{**loss, name: value}))
    for name in ("entity_ratio", "ratio_margin", "price_rate", "price_penalty", "momentum"):
        checks[name].append(lambda value, name=name: EntityPrice(**{**price, name: value}))
    return checks


@pytest.mark.parametrize("name", list(RANGES))
def test_every_range_is_checked_at_its_edges_in_the_one_wording(name):
    """From the one declaration of each range (:mod:`eer_plugin.core.ranges`): every check of the maths that takes
    the setting refuses each value just outside an end, an open end, NaN, the infinities, a bool, a string and null
    with the range's own line, and takes each value just inside (tests/runtime/test_constructor_settings.py probes the
    registered classes' rules at the same edges)."""
    import setting_edges

    bounds = RANGES[name]
    checks = _core_checks()[name]
    assert checks, name
    for check in checks:
        for value in setting_edges.outside(bounds):
            with pytest.raises(ValueError) as raised:
                check(value)
            assert str(raised.value) == bounds.problem(name, value), str(raised.value)
        for value in setting_edges.inside(bounds):
            check(value)
    assert bounds.symbol and f"({bounds.symbol}: " in bounds.expected


def test_the_ranges_and_defaults_are_the_papers():
    """One range per setting, the default inside it: rho in (0, 1), gamma and lambda_u at least 0, eta at least 0,
    c above 0, m in [0, 1)."""
    from eer_plugin.core import ranges

    assert [b.expected.split(f" ({b.symbol}: ")[0] for b in RANGES.values()] == [
        "a number in (0, 1)",
        "a number of at least 0",
        "a number of at least 0",
        "a number of at least 0",
        "a number above 0",
        "a number in [0, 1)",
    ]
    for name, bounds in RANGES.items():
        assert bounds.holds(getattr(ranges, "DEFAULT_" + name.upper())), name
    assert ranges.DEFAULT_RATIO_CONTROL in ranges.RATIO_CONTROLS


def test_batch_ratio_is_the_expected_entity_ratio():
    torch.manual_seed(1)
    scheme = BiluoScheme(["X"])
    crf = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end())
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    marginals = crf.marginals(torch.randn(2, 4, scheme.num_tags), mask)
    expected = expected_entity_ratio(marginals, mask, scheme.entity_mask())
    assert float(batch_ratio(marginals, mask, scheme.entity_mask())) == pytest.approx(float(expected.detach()))


# ---------------------------------------------------------------- a tiny tagger
VOCAB, ENTITY_WORDS = 30, 6


def batch(step: int, rows: int = 8, length: int = 30):
    """Words ``(rows, length)``: 30% are entity words (single-word entities), a third of those annotated;
    every other position is latent. The likelihood pulls rho_hat toward the entity words' share."""
    g = torch.Generator().manual_seed(step)
    entity = torch.rand(rows, length, generator=g) < 0.3
    words = torch.where(
        entity,
        torch.randint(0, ENTITY_WORDS, (rows, length), generator=g),
        torch.randint(ENTITY_WORDS, VOCAB, (rows, length), generator=g),
    )
    return words, entity & (torch.rand(rows, length, generator=g) < 1 / 3)


def train_tiny_tagger(control: str, rho: float, gamma: float, steps: int = 120) -> float:
    """Trains word scores + a BILUO CRF with the EER objective; returns the mean training rho_hat of
    the last 30 batches (what the tagger's per-epoch rho_hat metric averages)."""
    torch.manual_seed(0)
    scheme = BiluoScheme(["X"])
    crf = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end())
    scores = torch.nn.Embedding(VOCAB, scheme.num_tags)
    optimizer = torch.optim.Adam([*scores.parameters(), *crf.parameters()], lr=0.05)
    control_state = EntityPrice(rho, gamma) if control == "bind" else None
    unit = scheme.index["U-X"]
    ratios = []
    for step in range(steps):
        words, annotated = batch(step)
        mask = torch.ones_like(words, dtype=torch.bool)
        allowed = torch.ones(*words.shape, scheme.num_tags, dtype=torch.bool)
        allowed[annotated] = torch.nn.functional.one_hot(torch.tensor(unit), scheme.num_tags).bool()
        result = eer_objective(
            crf,
            scores(words),
            mask,
            allowed,
            scheme.entity_mask(),
            entity_ratio=rho,
            ratio_margin=gamma,
            ratio_loss_weight=10.0,
            band=None if control_state is None else control_state.constraint(),
        )
        optimizer.zero_grad()
        result.loss.backward()
        optimizer.step()
        assert torch.isfinite(result.loss)
        if control_state is not None:
            control_state.update(batch_ratio(result.marginals, mask, scheme.entity_mask()))
        ratios.append(float(result.rho_hat))
    return sum(ratios[-30:]) / 30


@pytest.mark.parametrize("rho, gamma", [(0.05, 0.01), (0.10, 0.02)])
def test_the_band_binds_under_the_control_and_not_under_the_fixed_weight(rho, gamma):
    fixed = train_tiny_tagger("fixed", rho, gamma)
    bound = train_tiny_tagger("bind", rho, gamma)
    assert not rho - gamma - 0.01 <= fixed <= rho + gamma + 0.01, fixed  # the likelihood's pull wins
    assert rho - gamma - 0.01 <= bound <= rho + gamma + 0.01, bound


# ---------------------------------------------------------------- estimate, then bind
def write_estimate(path, rho=0.105, gamma=0.02):
    import json

    path.write_text(json.dumps({"ratio": rho, "suggested": {"entity_ratio": rho, "ratio_margin": gamma}}))
    return str(path)


def test_ratio_estimate_sets_rho_gamma_and_the_binding_control(tmp_path):

    from eer_plugin.training import ratio_overrides

    given = '{"trainer.num_epochs": 2}'  # the user's own -o stays
    merged = ratio_overrides.apply_ratio_estimate(write_estimate(tmp_path / "ratio.json"), given, "eer_short.jsonnet")
    assert merged == {
        "trainer.num_epochs": 2,
        "model.entity_ratio": 0.105,
        "model.ratio_margin": 0.02,
        "model.ratio_control": "bind",
    }
    # a config whose model has no ratio control gets rho and gamma only (Raw's ratio settings, as before)
    raw = ratio_overrides.apply_ratio_estimate(write_estimate(tmp_path / "ratio.json"), "", "raw_short.jsonnet")
    assert raw == {"model.entity_ratio": 0.105, "model.ratio_margin": 0.02}


def test_ratio_estimate_keeps_a_control_the_user_set_and_refuses_a_conflicting_ratio(tmp_path):

    from eer_plugin.common.errors import UserError
    from eer_plugin.training import ratio_overrides

    estimate = write_estimate(tmp_path / "ratio.json")
    given = '{"model": {"entity_ratio": 0.105, "ratio_control": "fixed"}}'  # the same rho: no conflict
    merged = ratio_overrides.apply_ratio_estimate(estimate, given, "eer_short.jsonnet")
    assert merged == {"model": {"entity_ratio": 0.105, "ratio_control": "fixed", "ratio_margin": 0.02}}
    with pytest.raises(UserError, match="gives model.entity_ratio=0.105 but your -o sets model.entity_ratio=0.2"):
        ratio_overrides.apply_ratio_estimate(estimate, '{"model.entity_ratio": 0.2}', "eer_short.jsonnet")
    with pytest.raises(UserError, match="^-o/--overrides {not json: not valid JSON"):
        ratio_overrides.apply_ratio_estimate(estimate, "{not json", "eer_short.jsonnet")


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        ("{not json", "unreadable JSON"),
        ('{"ratio": 0.1}', "no 'suggested' entity_ratio and ratio_margin"),
        (
            '{"suggested": {"entity_ratio": 1.5, "ratio_margin": 0.1}}',
            "suggested entity_ratio must be a number in \\(0, 1\\)",
        ),
        (
            '{"suggested": {"entity_ratio": 0, "ratio_margin": 0.1}}',
            "suggested entity_ratio must be a number in \\(0, 1\\)",
        ),
        ('{"suggested": {"entity_ratio": 0.1, "ratio_margin": -0.1}}', "suggested ratio_margin must be a number of at"),
        ('{"suggested": {"entity_ratio": true, "ratio_margin": 0.1}}', "no 'suggested'"),
    ],
)
def test_a_bad_ratio_estimate_is_one_clear_error(tmp_path, content, message):
    from eer_plugin.annotation.ratio_estimate import read_suggestion

    path = tmp_path / "ratio.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ValueError, match=message) as error:
        read_suggestion(str(path))
    assert str(path) in str(error.value) and "\n" not in str(error.value)


@pytest.mark.integration
def test_train_with_a_ratio_estimate_binds_the_estimated_band(tiny_env, monkeypatch, tmp_path):
    """`eer-ner train eer_short.jsonnet --ratio-estimate ratio.json`: the estimate's numbers and the binding
    control are in the run's config, the price is logged per epoch and saved with the weights."""
    import json

    from conftest import REPO

    from eer_plugin.cli import main
    from eer_plugin.runtime.archive import load_weights

    estimate = write_estimate(tmp_path / "ratio.json", rho=0.05, gamma=0.01)
    out = tmp_path / "run"
    config = str(REPO / "training_configs" / "eer_short.jsonnet")
    # the user's own -o (2 epochs; no calibrated start: rho_hat starts far above the band, ~0.85) and the estimate's
    overrides = '{"trainer.num_epochs": 2, "trainer.callbacks": []}'
    assert main(["train", config, "-s", str(out), "-o", overrides, "--ratio-estimate", estimate]) == 0
    model = json.loads((out / "config.json").read_text())["model"]
    assert (model["entity_ratio"], model["ratio_margin"], model["ratio_control"]) == (0.05, 0.01, "bind")
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["training_entity_price"] > 0  # rho_hat above the band: a positive price per entity tag
    assert "validation_entity_price" not in metrics
    state = load_weights(out / "best.th")["entity_price.state"]
    assert state.dtype == torch.float64 and state.shape == (3,)


@pytest.mark.parametrize(
    "rho, gamma, weight, named",
    [
        (0.0, 0.05, 10, "entity_ratio must be a number in (0, 1) (rho: "),
        (1.0, 0.05, 10, "entity_ratio must be a number in (0, 1) (rho: "),
        (float("nan"), 0.05, 10, "entity_ratio must be a number in (0, 1) (rho: "),
        (0.15, -0.01, 10, "ratio_margin must be a number of at least 0 (gamma: "),
        (0.15, float("inf"), 10, "ratio_margin must be a number of at least 0 (gamma: "),
        (0.15, 0.05, -1, "ratio_loss_weight must be a number of at least 0 (lambda_u: "),
        (0.15, 0.05, float("nan"), "ratio_loss_weight must be a number of at least 0 (lambda_u: "),
    ],
)
def test_a_band_or_weight_the_loss_cannot_use_is_refused(rho, gamma, weight, named):
    from eer_plugin.core.ratio_control import check_ratio_loss

    check_ratio_loss(0.15, 0.0, 0.0)  # Raw's weight 0 and a band of width 0 are fine
    with pytest.raises(ValueError, match="^" + re.escape(named)):
        check_ratio_loss(rho, gamma, weight)
