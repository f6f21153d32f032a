"""Character offsets to words: the words that a character span of an export touches, or holds whole (no import of
the importers' own modules: their ``__init__`` imports this)."""

from bisect import bisect_left, bisect_right
from typing import Sequence


def words_of(start: int, end: int, starts, ends, ordered: bool, whole: bool) -> Sequence[int]:
    """The words (indices) that the character span ``[start, end)`` touches, or with ``whole`` those lying wholly
    inside it; ``starts``/``ends`` are the words' character offsets. Words in text order (``ordered``, as
    :func:`~eer_plugin.corpus.tokenizer.tokenize_text` gives them) are found by binary search, so a document's
    spans cost O(spans log words), not O(spans x words); other words by a scan of every word."""
    if not ordered:
        return [
            w
            for w in range(len(starts))
            if (starts[w] >= start and ends[w] <= end if whole else ends[w] > start and starts[w] < end)
        ]
    if whole:
        return range(bisect_left(starts, start), bisect_right(ends, end))
    return range(bisect_right(ends, start), bisect_left(starts, end))
