import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from eer_plugin.core.span_sampling import enumerate_spans, greedy_decode, sample_negatives


def test_enumerate_spans():
    assert enumerate_spans(3, 2) == [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]
    assert len(enumerate_spans(10, 10)) == 55


@settings(max_examples=200, deadline=None)
@given(length=st.integers(1, 40), seed=st.integers(0, 10**6), rate=st.floats(0.0, 3.0), width=st.integers(1, 12))
def test_negatives_never_annotated_and_count(length, seed, rate, width):
    rng = random.Random(seed)
    annotated = {(s, min(s + rng.randint(1, 3), length)) for s in rng.sample(range(length), min(3, length))}
    negatives = sample_negatives(length, annotated, rate, width, random.Random(seed))
    assert not set(negatives) & annotated
    assert len(set(negatives)) == len(negatives)
    available = len([s for s in enumerate_spans(length, width) if s not in annotated])
    assert len(negatives) == min(available, math.ceil(rate * length))
    assert all(0 <= s < e <= length and e - s <= width for s, e in negatives)
    assert negatives == sample_negatives(length, annotated, rate, width, random.Random(seed))  # seeded


def test_greedy_decode_keeps_best_non_overlapping():
    scored = [(0.9, 0, 2, "PER"), (0.8, 1, 3, "LOC"), (0.7, 3, 4, "ORG"), (0.95, 5, 6, "PER"), (0.6, 4, 6, "LOC")]
    assert greedy_decode(scored) == [(0, 2, "PER"), (3, 4, "ORG"), (5, 6, "PER")]
