"""Subword expansion and chunking of documents (no AllenNLP import).

A document's words are tokenized into subwords once; the document is then cut into *chunks* of at
most ``max_length`` subwords including the tokenizer's two bookend tokens, at sentence boundaries
(whole sentences packed greedily). A sentence longer than the budget is cut at word boundaries,
moving each cut back to the start of an annotated entity rather than through it; an entity that
still has to be cut (it is longer than the budget by itself) loses its annotation in both pieces
(its subwords become latent) instead of producing invalid tags.

Each chunk keeps an exact word <-> subword map, so predictions map back to words and documents.
"""

import dataclasses
import logging
from typing import Callable, List, Optional, Sequence, Tuple

from eer_plugin.core.spans import subword_owners
from eer_plugin.core.tags import OUTSIDE
from eer_plugin.corpus.documents import Document

logger = logging.getLogger(__name__)

#: subword tag of a position whose tag is not observed
LATENT_LABEL = "_"
#: the fewest positions of a chunk: the two bookends and a word
MIN_CHUNK_LENGTH = 3


@dataclasses.dataclass
class Chunk:
    doc_id: str
    index: int  # position of the chunk in its document
    word_start: int  # document index of the chunk's first word
    words: List[str]
    subword_ids: List[int]  # including the two bookend tokens
    subword_tokens: List[str]
    #: subword position range [start, end) of every word of the chunk (bookend at position 0)
    word_subwords: List[Tuple[int, int]]
    #: BILUO tag or LATENT_LABEL per subword (bookends are "O")
    labels: List[str]
    #: annotated word spans relative to the chunk (only meaningful as gold when ``is_complete``)
    spans: List[Tuple[int, int, str]]
    is_complete: bool
    sentence_ends: List[int]  # relative to the chunk
    #: O weight (soft evidence) per subword, from the document's per-word ``o_weights`` (CBL)
    o_weights: Optional[List[float]] = None
    #: negative word spans relative to the chunk: ``(start, end)`` clipped to it, ``(start, end, type)`` when wholly inside
    negative_spans: List[Tuple] = dataclasses.field(default_factory=list)

    def subword_to_word(self) -> List[int]:
        return subword_owners(self.word_subwords, len(self.subword_ids))


def _subword_labels(spans, negatives, word_pieces, observe_unmarked: bool) -> List[str]:
    """Word-level annotation -> subword labels: an entity covers its first word's first subword to
    its last word's last subword, in BILUO; unmarked subwords are ``O`` when observed, else latent."""
    offsets = [0]
    for pieces in word_pieces:
        offsets.append(offsets[-1] + len(pieces))
    labels = [OUTSIDE if observe_unmarked else LATENT_LABEL] * offsets[-1]
    for negative in negatives:
        if len(negative) != 2:
            continue  # (start, end, type): "not this type here" is kept in the data, not used as evidence yet
        start, end = negative
        labels[offsets[start] : offsets[end]] = [OUTSIDE] * (offsets[end] - offsets[start])
    for start, end, label in spans:
        first, last = offsets[start], offsets[end] - 1
        if first == last:
            labels[first] = f"U-{label}"
        else:
            labels[first] = f"B-{label}"
            labels[first + 1 : last] = [f"I-{label}"] * (last - first - 1)
            labels[last] = f"L-{label}"
    return labels


def _cut_points(
    doc: Document, piece_counts: Sequence[int], budget: int, sentence_level: bool = False
) -> List[Tuple[int, int]]:
    """Word ranges of the chunks: whole sentences packed greedily (one sentence per chunk when
    ``sentence_level``), long sentences cut at words."""
    entity_at = {}
    for start, end, _ in doc.spans:
        for w in range(start + 1, end):
            entity_at[w] = start  # cutting before word w would split the entity starting at `start`
    pieces: List[Tuple[int, int]] = []
    for s_start, s_end in doc.sentences():
        start = s_start
        while start < s_end:
            size, end = 0, start
            while end < s_end and size + piece_counts[end] <= budget:
                size += piece_counts[end]
                end += 1
            if end == start:  # a single word longer than the budget: it is truncated later
                end = start + 1
            elif end < s_end and end in entity_at and entity_at[end] > start:
                end = entity_at[end]  # cut before the entity instead of through it
            pieces.append((start, end))
            start = end
    # Merge consecutive pieces while they fit, but only across sentence boundaries.
    sentence_ends = set(doc.sentence_ends)
    chunks: List[Tuple[int, int]] = []
    chunk_size = 0
    for start, end in pieces:
        size = sum(piece_counts[start:end])
        if chunks and not sentence_level and start in sentence_ends and chunk_size + size <= budget:
            chunks[-1] = (chunks[-1][0], end)
            chunk_size += size
        else:
            chunks.append((start, end))
            chunk_size = size
    return chunks


class _Sweep:
    """The spans of a document (sorted by start) that reach into consecutive word ranges: ``reaching(start, end)``
    gives, in order, those with ``span start < end`` and ``span end > start``; the ranges must advance (starts and
    ends never decreasing). Each span is looked at while it reaches into a range, and once more."""

    def __init__(self, spans: Sequence[Tuple]) -> None:
        self.spans, self.taken, self.open = spans, 0, []

    def reaching(self, start: int, end: int) -> List[Tuple]:
        self.open = [span for span in self.open if span[1] > start]
        while self.taken < len(self.spans) and self.spans[self.taken][0] < end:
            if self.spans[self.taken][1] > start:
                self.open.append(self.spans[self.taken])
            self.taken += 1
        return self.open


def chunk_document(
    doc: Document,
    tokenize: Callable[[List[str]], List[List[int]]],
    convert_ids_to_tokens: Callable[[List[int]], List[str]],
    bookends: Tuple[int, int],
    max_length: int = 512,
    observe_unmarked: Optional[bool] = None,
    sentence_level: bool = False,
) -> List[Chunk]:
    """Splits ``doc`` into chunks of at most ``max_length`` subwords (bookends included).

    ``tokenize(words)`` returns the subword ids of every word (without bookends); ``bookends`` is
    the (first, last) special token id pair. ``observe_unmarked`` defaults to ``doc.is_complete``.
    ``sentence_level`` makes every sentence its own chunk (the SNS baseline's input).
    """
    budget = max_length - 2
    if max_length < MIN_CHUNK_LENGTH:
        raise ValueError(f"max_length must be at least {MIN_CHUNK_LENGTH}, got {max_length}")
    observe = doc.is_complete if observe_unmarked is None else observe_unmarked
    word_pieces = tokenize(doc.tokens)
    for w, pieces in enumerate(word_pieces):
        if len(pieces) > budget:
            logger.warning(
                "%s: word %d of document %s has %d subwords; keeping the first %d",
                doc.source,
                w,
                doc.id,
                len(pieces),
                budget,
            )
            word_pieces[w] = pieces[:budget]
    labels = _subword_labels(doc.spans, doc.negative_spans, word_pieces, observe)
    offsets = [0]
    for pieces in word_pieces:
        offsets.append(offsets[-1] + len(pieces))
    chunks = []
    # the spans, negative spans and sentence ends that reach into each chunk, by one sweep over the document's
    # (sorted) lists as the chunks advance: O(words + spans), not O(chunks x spans)
    entities, negatives = _Sweep(doc.spans), _Sweep(doc.negative_spans)
    ends, next_end = doc.sentence_ends, 0
    for index, (start, end) in enumerate(_cut_points(doc, [len(p) for p in word_pieces], budget, sentence_level)):
        chunk_labels = labels[offsets[start] : offsets[end]]
        spans = []
        first_end = next_end
        while next_end < len(ends) and ends[next_end] <= end:
            next_end += 1
        for s, e, label in entities.reaching(start, end):
            if start <= s and e <= end:
                spans.append((s - start, e - start, label))
            elif s < end and start < e:  # an entity cut by the chunk boundary: unobserved here
                lo, hi = max(s, start), min(e, end)
                chunk_labels[offsets[lo] - offsets[start] : offsets[hi] - offsets[start]] = [LATENT_LABEL] * (
                    offsets[hi] - offsets[lo]
                )
                logger.warning(
                    "%s: entity (%d, %d, %s) of document %s is cut by a chunk boundary", doc.source, s, e, label, doc.id
                )
        ids = [bookends[0]] + [i for pieces in word_pieces[start:end] for i in pieces] + [bookends[1]]
        weights = None
        if doc.o_weights is not None:
            weights = [1.0] + [doc.o_weights[w] for w in range(start, end) for _ in word_pieces[w]] + [1.0]
        word_subwords = [
            (offsets[w] - offsets[start] + 1, offsets[w + 1] - offsets[start] + 1) for w in range(start, end)
        ]
        chunks.append(
            Chunk(
                doc_id=doc.id,
                index=index,
                word_start=start,
                words=doc.tokens[start:end],
                subword_ids=ids,
                subword_tokens=convert_ids_to_tokens(ids),
                word_subwords=word_subwords,
                labels=[OUTSIDE] + chunk_labels + [OUTSIDE],
                spans=spans,
                is_complete=doc.is_complete,
                sentence_ends=[e - start for e in ends[first_end:next_end] if start < e],
                o_weights=weights,
                negative_spans=[
                    (max(n[0], start) - start, min(n[1], end) - start) + tuple(n[2:])
                    for n in negatives.reaching(start, end)
                    if len(n) == 2 or (start <= n[0] and n[1] <= end)
                ],
            )
        )
    return chunks
