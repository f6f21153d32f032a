"""Subword tags -> word spans, and span precision/recall/F1 counts (conlleval-equivalent).

Word rule: a predicted subword entity ``[s, e)`` becomes the word span from the word holding its
first subword to the word holding its last subword. The CRF's constraints make subword tags valid
BILUO, so spans never overlap at subword level; two of them can only land on the same word when an
entity boundary falls inside a word, and then the earlier span is kept. Gold spans are already at
word level, so scoring is exact-match on (start, end, type) like conlleval.
"""

from collections import Counter
from typing import Dict, Iterable, List, Sequence, Tuple

Span = Tuple[int, int, str]


def subword_owners(word_subwords: Sequence[Tuple[int, int]], length: int) -> List[int]:
    """Word index of every subword position (-1 for bookends), from each word's [start, end) range."""
    owners = [-1] * length
    for word, (start, end) in enumerate(word_subwords):
        owners[start:end] = [word] * (end - start)
    return owners


def map_to_words(subword_spans: Sequence[Span], subword_to_word: Sequence[int]) -> List[Tuple[int, Span]]:
    """``(index in subword_spans, word span)`` of the subword spans kept by the word rule above."""
    kept: List[Tuple[int, Span]] = []
    for index in sorted(range(len(subword_spans)), key=lambda i: subword_spans[i]):
        start, end, label = subword_spans[index]
        first, last = subword_to_word[start], subword_to_word[end - 1]
        if first < 0 or last < 0:
            continue  # touches a bookend token (cannot happen when bookends are forced to O)
        if kept and first < kept[-1][1][1]:
            continue  # overlaps the previous span after mapping to words
        kept.append((index, (first, last + 1, label)))
    return kept


class SpanCounts:
    """True positives, false positives and false negatives per entity type."""

    def __init__(self) -> None:
        self.tp: Counter = Counter()
        self.fp: Counter = Counter()
        self.fn: Counter = Counter()

    def add(self, predicted: Iterable[Span], gold: Iterable[Span]) -> None:
        predicted, gold = set(predicted), set(gold)
        for _, _, label in predicted & gold:
            self.tp[label] += 1
        for _, _, label in predicted - gold:
            self.fp[label] += 1
        for _, _, label in gold - predicted:
            self.fn[label] += 1

    @staticmethod
    def prf(tp: float, fp: float, fn: float) -> Tuple[float, float, float]:
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f1

    def metrics(self) -> Dict[str, float]:
        """AllenNLP-style names: ``precision-PER``, ..., ``f1-measure-overall``."""
        out: Dict[str, float] = {}
        for label in sorted(set(self.tp) | set(self.fp) | set(self.fn)):
            p, r, f = self.prf(self.tp[label], self.fp[label], self.fn[label])
            out.update({f"precision-{label}": p, f"recall-{label}": r, f"f1-measure-{label}": f})
        p, r, f = self.prf(sum(self.tp.values()), sum(self.fp.values()), sum(self.fn.values()))
        out.update({"precision-overall": p, "recall-overall": r, "f1-measure-overall": f})
        return out
