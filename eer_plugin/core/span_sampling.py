"""Span enumeration, negative sampling and greedy decoding for the SNS baseline
(Li et al. 2021, "Empirical Analysis of Unlabeled Entity Problem in Named Entity Recognition").

All spans are word spans ``(start, end)`` with ``end`` exclusive.
"""

import math
import random
from typing import Iterable, List, Sequence, Set, Tuple

WordSpan = Tuple[int, int]


def enumerate_spans(length: int, max_width: int) -> List[WordSpan]:
    """Every span of at most ``max_width`` words in a sentence of ``length`` words, by start then end."""
    return [(s, e) for s in range(length) for e in range(s + 1, min(length, s + max_width) + 1)]


def sample_negatives(
    length: int,
    annotated: Iterable[WordSpan],
    rate: float,
    max_width: int,
    rng: random.Random,
) -> List[WordSpan]:
    """Li et al.'s negative sampling: ``ceil(rate * length)`` spans drawn uniformly without
    replacement from the spans that are *not annotated* (they may overlap annotated ones; a span
    equal to an annotated span is never drawn). Fewer are returned when fewer exist."""
    positive: Set[WordSpan] = set(annotated)
    candidates = [span for span in enumerate_spans(length, max_width) if span not in positive]
    count = min(len(candidates), math.ceil(rate * length))
    return sorted(rng.sample(candidates, count))


def greedy_decode(scored: Sequence[Tuple[float, int, int, str]]) -> List[Tuple[int, int, str]]:
    """Keeps the highest-scoring spans that overlap no span kept before them (ties: shorter, earlier).

    ``scored`` holds ``(score, start, end, label)`` of the spans predicted as entities."""
    kept: List[Tuple[int, int, str]] = []
    taken: Set[int] = set()
    for _score, start, end, label in sorted(scored, key=lambda x: (-x[0], x[2] - x[1], x[1])):
        if any(w in taken for w in range(start, end)):
            continue
        kept.append((start, end, label))
        taken.update(range(start, end))
    return sorted(kept)
