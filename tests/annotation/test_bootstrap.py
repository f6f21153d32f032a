"""Paired percentile bootstrap of micro-F1 differences (eer_plugin.annotation.bootstrap)."""

import numpy as np
import pytest

from eer_plugin.annotation.bootstrap import (
    BootstrapError,
    align,
    micro_f1,
    paired_bootstrap,
    pooled_bootstrap,
    resampled_sums,
    sum_over_runs,
)


def test_micro_f1_matches_precision_recall_harmonic_mean():
    from eer_plugin.core.spans import SpanCounts

    for tp, fp, fn in [(3, 1, 2), (0, 4, 1), (0, 0, 0), (5, 0, 0), (7, 2, 9)]:
        assert micro_f1([tp, fp, fn]) == pytest.approx(SpanCounts.prf(tp, fp, fn)[2])


def test_identical_systems_have_a_zero_interval():
    counts = np.random.default_rng(0).integers(0, 9, size=(40, 3))
    result = paired_bootstrap(counts, counts.copy(), n_resamples=2000)
    assert result["delta"] == 0.0
    assert (result["ci_low"], result["ci_high"]) == (0.0, 0.0)
    assert not result["significant"]
    assert result["p_value"] == 1.0 and result["share_a_better"] == 0.0


def test_better_on_every_document_is_significant():
    rng = np.random.default_rng(1)
    gold = rng.integers(3, 10, size=30)
    a = np.stack([gold, np.zeros(30), np.zeros(30)], 1)  # perfect
    b = np.stack([gold - 2, np.full(30, 2), np.full(30, 2)], 1)  # two misses and two false alarms per document
    result = paired_bootstrap(a, b, n_resamples=5000, seed=3)
    assert result["f1_a"] == 1.0 and result["delta"] > 0
    assert result["ci_low"] > 0 and result["significant"]
    assert result["p_value"] == 0.0 and result["share_a_better"] == 1.0
    flipped = paired_bootstrap(b, a, n_resamples=5000, seed=3)
    assert flipped["significant"] and flipped["ci_high"] < 0
    assert flipped["ci_low"] == pytest.approx(-result["ci_high"]) and flipped["ci_high"] == pytest.approx(
        -result["ci_low"]
    )


def two_document_case():
    """Two documents: A wins the first, loses the second. Resampling draws the multiplicities
    (2, 0), (1, 1), (0, 2) with probabilities 1/4, 1/2, 1/4."""
    a = np.array([[8, 0, 0], [1, 3, 3]])
    b = np.array([[4, 2, 2], [3, 1, 1]])
    deltas = {m: float(micro_f1(np.array(m) @ a) - micro_f1(np.array(m) @ b)) for m in [(2, 0), (1, 1), (0, 2)]}
    return a, b, deltas


def test_two_documents_match_the_exact_resampling_distribution():
    a, b, deltas = two_document_case()
    assert deltas[(2, 0)] == pytest.approx(1 / 3)  # 1.0 - 2/3
    assert deltas[(0, 2)] == pytest.approx(0.25 - 0.75)
    assert deltas[(0, 2)] < deltas[(1, 1)] < deltas[(2, 0)]
    result = paired_bootstrap(a, b, n_resamples=200_000, seed=7)
    assert result["delta"] == pytest.approx(deltas[(1, 1)])
    # 99%: the 0.5% and 99.5% percentiles fall inside the 25% masses at the two extremes
    assert result["ci_low"] == pytest.approx(deltas[(0, 2)]) and result["ci_high"] == pytest.approx(deltas[(2, 0)])
    assert not result["significant"]
    # 40%: the 30% and 70% percentiles both fall inside the 50% mass of the observed sample
    narrow = paired_bootstrap(a, b, n_resamples=200_000, confidence=0.4, seed=7)
    assert narrow["ci_low"] == narrow["ci_high"] == pytest.approx(deltas[(1, 1)])
    assert narrow["significant"] == (deltas[(1, 1)] != 0)
    # shares of the resampling distribution: P(delta > 0) = P((2, 0)) + P((1, 1)) if that delta > 0
    expected_better = 0.25 + (0.5 if deltas[(1, 1)] > 0 else 0.0)
    assert result["share_a_better"] == pytest.approx(expected_better, abs=0.005)
    expected_mean = 0.25 * deltas[(2, 0)] + 0.5 * deltas[(1, 1)] + 0.25 * deltas[(0, 2)]
    assert result["mean_delta"] == pytest.approx(expected_mean, abs=0.003)
    assert result["p_value"] == pytest.approx(2 * min(expected_better, 1 - expected_better), abs=0.01)


def test_resampled_sums_are_multinomial_draws():
    stats = np.eye(4)  # the sum of column d = how often document d was drawn
    sums = resampled_sums(stats, 20_000, np.random.default_rng(0), chunk_cells=1000)  # many small chunks
    assert (sums.sum(1) == 4).all()
    assert sums.mean(0) == pytest.approx(np.ones(4), abs=0.03)
    assert sums.var(0) == pytest.approx(np.full(4, 4 * 0.25 * 0.75), abs=0.05)


def test_seed_determinism():
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 12, size=(60, 3)), rng.integers(0, 12, size=(60, 3))
    first, second = paired_bootstrap(a, b, 3000, seed=11), paired_bootstrap(a, b, 3000, seed=11)
    assert first == second
    other = paired_bootstrap(a, b, 3000, seed=12)
    assert other["ci_low"] != first["ci_low"] or other["ci_high"] != first["ci_high"]
    assert other["delta"] == first["delta"]


def test_mappings_are_aligned_by_document_id():
    a = {"d1": [3, 1, 0], "d2": [0, 2, 5], "d3": [4, 0, 1]}
    b = {"d3": [4, 0, 1], "d1": [3, 1, 0], "d2": [0, 2, 5]}
    result = paired_bootstrap(a, b, n_resamples=500)
    assert result["delta"] == 0.0 and result["ci_high"] == 0.0
    a_counts, b_counts, ids = align(a, b)
    assert ids == ["d1", "d2", "d3"] and (a_counts == b_counts).all()
    with pytest.raises(BootstrapError, match="same documents"):
        paired_bootstrap(a, {"d1": [1, 1, 1]})


def test_pooled_concatenates_data_sets():
    a1, b1, _ = two_document_case()
    a2 = np.array([[5, 1, 0], [2, 2, 2], [6, 0, 1]])
    b2 = np.array([[4, 1, 1], [2, 3, 2], [5, 1, 2]])
    pooled = pooled_bootstrap([(a1, b1), (a2, b2)], n_resamples=4000, seed=2)
    direct = paired_bootstrap(np.concatenate([a1, a2]), np.concatenate([b1, b2]), n_resamples=4000, seed=2)
    assert pooled == direct and pooled["n_documents"] == 5


def test_sum_over_runs_keeps_documents():
    runs = [{"x": [1, 0, 2], "y": [0, 1, 0]}, {"x": [2, 1, 1], "y": [1, 0, 0]}]
    assert sum_over_runs(runs) == {"x": [3.0, 1.0, 3.0], "y": [1.0, 1.0, 0.0]}
    with pytest.raises(BootstrapError):
        sum_over_runs([{"x": [1, 0, 0]}, {"z": [1, 0, 0]}])


def test_invalid_inputs_are_rejected():
    with pytest.raises(BootstrapError, match=r"shape \(D, 3\)"):
        paired_bootstrap(np.zeros((4, 2)), np.zeros((4, 2)))
    with pytest.raises(BootstrapError, match="non-negative"):
        paired_bootstrap([[1, -1, 0]], [[1, 0, 0]])
    with pytest.raises(BootstrapError, match="documents"):
        paired_bootstrap(np.ones((3, 3)), np.ones((4, 3)))
    with pytest.raises(BootstrapError, match="confidence"):
        paired_bootstrap(np.ones((3, 3)), np.ones((3, 3)), confidence=1.0)


def test_paper_scale_runs():
    """100k resamples over ~250 documents (the CoNLL-2003 test set has 231): vectorized, seconds."""
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 40, size=250)
    a = np.stack([gold * 0.9, gold * 0.1, gold * 0.1], 1).round()
    b = np.stack([gold * 0.85, gold * 0.12, gold * 0.15], 1).round()
    result = paired_bootstrap(a, b)
    assert result["n_resamples"] == 100_000 and result["ci_low"] <= result["delta"] <= result["ci_high"]
