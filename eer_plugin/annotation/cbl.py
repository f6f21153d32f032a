"""Constrained Binary Learning (CBL; Mayhew et al. 2019, "Named Entity Recognition with Partially
Annotated Training Data") — the pure parts: the target-ratio schedule and the relabelling step.

The meta-algorithm (the rounds of ``allennlp cbl``, :mod:`eer_plugin.training.cbl_rounds`):

1. Every unannotated word starts as ``O`` with weight 1 (the Raw view of the data).
2. Repeat for each target ratio ``b`` of the schedule (from the annotated ratio up to
   ``entity_ratio`` in steps of ``step``, as in Mayhew et al.'s released code):
   train a *binary* tagger (``O`` vs one entity type ``ENT``) on the weighted data, score every
   unannotated word's entity probability, then relabel: the most entity-like unannotated words
   become hard entity words so that annotated + relabelled entity words are ``b`` of all words,
   and every other unannotated word keeps ``O`` with weight ``1 - min(p, clip)``
   (its entity probability clipped to ``clip``, 0.5 in their code).
3. Train the final tagger on the full tag set with these weights.

A weight ``w`` on an unannotated word is soft evidence for the CRF: the word's tags contribute
``w`` for ``O`` and ``1 - w`` for every entity tag to the partial likelihood (``w = 1``: observed
``O``, the Raw baseline; ``w = 0``: observed "some entity tag").
"""

import math
from typing import List, Sequence, Tuple

from eer_plugin.corpus.documents import Document

BINARY_TYPE = "ENT"


def annotated_words(doc: Document) -> List[bool]:
    marked = [False] * len(doc.tokens)
    for start, end, _ in doc.spans:
        marked[start:end] = [True] * (end - start)
    return marked


def annotated_ratio(docs: Sequence[Document]) -> float:
    words = sum(len(d.tokens) for d in docs)
    return sum(sum(annotated_words(d)) for d in docs) / max(words, 1)


def ratio_schedule(start: float, target: float, step: float = 0.02) -> List[float]:
    """Target ratios ``start + step, start + 2 step, ...`` up to and including ``target``."""
    if step <= 0:
        raise ValueError(f"step must be positive, got {step}")
    if target <= start:
        return [target]
    count = math.ceil((target - start) / step - 1e-9)
    return [min(start + step * (i + 1), target) for i in range(count)]


def binary(doc: Document) -> Document:
    """The document with every entity type collapsed into :data:`BINARY_TYPE`."""
    return Document(
        id=doc.id,
        tokens=doc.tokens,
        sentence_ends=doc.sentence_ends,
        spans=[(s, e, BINARY_TYPE) for s, e, _ in doc.spans],
        is_complete=doc.is_complete,
        negative_spans=doc.negative_spans,
        source=doc.source,
        o_weights=doc.o_weights,
    )


def relabel(
    docs: Sequence[Document], entity_probabilities: Sequence[Sequence[float]], target_ratio: float, clip: float = 0.5
) -> Tuple[List[List[float]], int]:
    """New ``O`` weights per word of every document, and how many words were made hard entities.

    ``entity_probabilities[d][i]`` is the binary tagger's probability that word ``i`` of document
    ``d`` is inside an entity. The ``k`` most entity-like unannotated words get weight 0, with
    ``k = round(target_ratio * words) - annotated words`` (at least 0), so that annotated plus
    relabelled entity words are ``target_ratio`` of all words; the others get ``1 - min(p, clip)``.
    Annotated words keep weight 1 (their tags are observed anyway). Ties break by document, then
    word order, so the result is deterministic.
    """
    total = sum(len(d.tokens) for d in docs)
    candidates = []
    weights: List[List[float]] = []
    annotated = 0
    for d, (doc, probabilities) in enumerate(zip(docs, entity_probabilities)):
        if len(probabilities) != len(doc.tokens):
            raise ValueError(f"document {doc.id!r}: {len(probabilities)} probabilities for {len(doc.tokens)} words")
        marked = annotated_words(doc)
        annotated += sum(marked)
        row = []
        for i, (p, is_marked) in enumerate(zip(probabilities, marked)):
            row.append(1.0 if is_marked else 1.0 - min(float(p), clip))
            if not is_marked:
                candidates.append((-float(p), d, i))
        weights.append(row)
    hard = max(0, min(len(candidates), round(target_ratio * total) - annotated))
    for _, d, i in sorted(candidates)[:hard]:
        weights[d][i] = 0.0
    return weights, hard
