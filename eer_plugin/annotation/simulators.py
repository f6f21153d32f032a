"""Annotation simulators (paper, "Simulated Annotation Scenarios") and the train-data variants.

Each simulator takes gold documents (their ``spans`` are the truth) and returns new, partially
annotated documents (``is_complete=False``, no negative spans) together with statistics::

    {"recall", "precision", "kept_spans", "gold_spans", "false_positives",
     "documents_touched", "documents"}

``kept_spans`` counts kept gold spans (true positives), ``documents_touched`` the output
documents with at least one span. All randomness comes from one ``random.Random(seed)``, and
nothing iterates over a set or dict in hash order, so the output depends only on the input and
the seed (not on ``PYTHONHASHSEED``).
"""

import dataclasses
import random
from collections import defaultdict
from fractions import Fraction
from typing import Dict, List, Sequence, Set, Tuple

from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import Document, Span
from eer_plugin.corpus.tokenizer import tokenize_text

#: EE budgets of the paper's learning curves
learning_curve_budgets = (100, 500, 1000, 5000, 10000)
#: the authors raised EE's per-document cap from 10 to 15 for the 10,000 budget, which a corpus of
#: CoNLL-2003's size cannot supply at 10 per document
LEARNING_CURVE_MAX_PER_DOCUMENT = {10000: 15}
VARIANTS = ("all", "short", "shortest")
#: the variant of the data a scenario writes unless told otherwise: every document as given
DEFAULT_VARIANT = VARIANTS[0]

Stats = Dict[str, float]


class SimulationError(ValueError):
    """The corpus cannot supply what the simulation asks for (or its parameters are invalid)."""


class CorpusSimulationError(SimulationError):
    """The corpus cannot supply what the simulation asks for (its parameters are valid): the error names the
    corpus file where one was read (:func:`eer_plugin.annotation.scenarios.simulate_file`)."""


def learning_curve_max_per_document(budget: int, default: int = 10) -> int:
    """EE per-document cap the authors used for a learning-curve budget."""
    return LEARNING_CURVE_MAX_PER_DOCUMENT.get(budget, default)


def _copy(document: Document, **changes) -> Document:
    """A copy of ``document`` (sharing no list with it) with ``changes`` applied."""
    changes.setdefault("tokens", list(document.tokens))
    return dataclasses.replace(document, **changes)


def _annotated(document: Document, spans: Sequence[Span]) -> Document:
    """A copy of ``document`` carrying ``spans`` as its (partial) annotation."""
    return _copy(document, spans=list(spans), is_complete=False, negative_spans=[])


def _stats(gold: Sequence[Document], output: Sequence[Document], kept: int, false_positives: int) -> Stats:
    gold_spans = sum(len(d.spans) for d in gold)
    annotated = kept + false_positives
    return {
        "recall": kept / gold_spans if gold_spans else 0.0,
        "precision": kept / annotated if annotated else 1.0,  # nothing annotated: nothing false
        "kept_spans": kept,
        "gold_spans": gold_spans,
        "false_positives": false_positives,
        "documents_touched": sum(1 for d in output if d.spans),
        "documents": len(output),
    }


def _check_probability(name: str, value: float, low_open: bool = False) -> None:
    if not (0.0 < value <= 1.0 if low_open else 0.0 <= value <= 1.0):
        raise SimulationError(f"{name} must be in {'(0' if low_open else '[0'}, 1], got {value}")


# ------------------------------------------------------------------------------- gold
def gold(docs: Sequence[Document]) -> Tuple[List[Document], Stats]:
    """The documents as given (complete annotation), with the same statistics as the simulators."""
    output = [_copy(d) for d in docs]
    return output, _stats(docs, output, sum(len(d.spans) for d in docs), 0)


# ------------------------------------------------------------------------------- Exploratory Expert
def exploratory_expert(
    docs: Sequence[Document],
    budget: int = 1000,
    keep_probability: float = 0.8,
    max_per_document: int = 10,
    seed: int = 0,
) -> Tuple[List[Document], Stats]:
    """The Exploratory Expert (EE): an expert skims documents in random order, annotating each
    entity left to right with probability ``keep_probability``, at most ``max_per_document`` per
    document, until exactly ``budget`` entities are annotated.

    Every input document is returned, **in visit order** (the seeded shuffle), as the authors'
    ``subsample_data_ours.py`` does: the visited documents first, then the never-visited ones,
    unannotated. The random stream is the authors' too (``rng.shuffle`` of the documents, then
    one ``rng.random() > 1 - keep_probability`` draw per entity considered), so with their seed
    (42) and the same document order the kept spans are theirs.

    Raises :class:`SimulationError` when the whole corpus yields fewer than ``budget`` spans.
    """
    if budget < 1:
        raise SimulationError(f"budget must be at least 1, got {budget}")
    if max_per_document < 1:
        raise SimulationError(f"max_per_document must be at least 1, got {max_per_document}")
    _check_probability("keep_probability", keep_probability, low_open=True)
    drop_probability = 1.0 - keep_probability
    rng = random.Random(seed)
    order = list(range(len(docs)))
    rng.shuffle(order)
    kept_total = 0
    output = []
    for index in order:
        document = docs[index]
        kept: List[Span] = []
        for span in sorted(document.spans):
            if len(kept) >= max_per_document or kept_total >= budget:
                break
            if rng.random() > drop_probability:
                kept.append(span)
                kept_total += 1
        output.append(_annotated(document, kept))
    if kept_total < budget:
        raise CorpusSimulationError(
            f"the corpus supplies only {kept_total} of the budget of {counted(budget, 'span')} "
            f"(keep probability {keep_probability}, at most {max_per_document} per document, "
            f"{counted(sum(len(d.spans) for d in docs), 'gold span')} in {counted(len(docs), 'document')})"
        )
    return output, _stats(docs, output, kept_total, 0)


def ee_with_complete_documents(
    docs: Sequence[Document],
    budget: int = 1000,
    complete_documents: int = 20,
    keep_probability: float = 0.8,
    max_per_document: int = 10,
    seed: int = 0,
) -> Tuple[List[Document], Stats]:
    """EE data of which ``complete_documents`` documents are annotated exhaustively, **within** the
    budget: the annotator checks ``complete_documents`` documents completely (all their gold spans,
    ``is_complete=True``; e.g. to estimate the entity ratio from them) and spends the rest of the
    budget as the Exploratory Expert on the other documents (:func:`exploratory_expert` with
    ``budget - spans of the complete documents`` and the same seed).

    The complete documents are drawn with ``random.Random(f"complete-documents-{seed}")`` (a stream of its own, so the EE part's draws are those of
    :func:`exploratory_expert`). They come first in the output, then the EE documents in visit order.
    The annotated spans add up to exactly ``budget``; :class:`SimulationError` when the complete
    documents alone hold more spans than the budget, or the rest of the corpus cannot supply the rest.
    Statistics: those of the simulators, plus ``complete_documents``, ``complete_spans``, ``complete_ids``
    and ``ee_budget``."""
    if complete_documents < 1:
        raise SimulationError(f"complete_documents must be at least 1, got {complete_documents}")
    if complete_documents > len(docs):
        raise CorpusSimulationError(
            f"complete_documents is {complete_documents}, but the corpus has only {counted(len(docs), 'document')}"
        )
    rng = random.Random(f"complete-documents-{seed}")
    chosen = sorted(rng.sample(range(len(docs)), complete_documents))
    chosen_set = set(chosen)
    complete = [_copy(docs[i], spans=list(docs[i].spans), is_complete=True, negative_spans=[]) for i in chosen]
    complete_spans = sum(len(d.spans) for d in complete)
    remaining = budget - complete_spans
    if remaining < 0:
        raise CorpusSimulationError(
            f"the {counted(complete_documents, 'complete document')} hold {counted(complete_spans, 'span')}, more than the budget of {budget}"
        )
    others = [d for i, d in enumerate(docs) if i not in chosen_set]
    if remaining > 0:
        rest, _ = exploratory_expert(others, remaining, keep_probability, max_per_document, seed)
    else:
        rest = [_annotated(d, []) for d in others]
    output = complete + rest
    kept = complete_spans + sum(len(d.spans) for d in rest)
    stats = _stats(docs, output, kept, 0)
    stats.update(
        complete_documents=complete_documents,
        complete_spans=complete_spans,
        ee_budget=remaining,
        complete_ids=[d.id for d in complete],
    )
    return output, stats


# ------------------------------------------------------------------------------- Non-Native Speaker
def surface(document: Document, span: Span) -> str:
    """The mention string of a span: its words joined by single spaces."""
    return " ".join(document.tokens[span[0] : span[1]])


def non_native_speaker(
    docs: Sequence[Document],
    recall: float = 0.5,
    precision: float = 0.9,
    seed: int = 0,
    max_fp_length: int = 3,
) -> Tuple[List[Document], Stats]:
    """The Non-Native Speaker (NNS) scenario of Mayhew et al. (2019), reimplemented.

    1. **Recall.** Gold mentions are grouped by surface string (:func:`surface`). The sorted
       unique strings are shuffled and whole groups are dropped in that order until at most
       ``floor(recall * gold)`` mentions remain, so the achieved recall is at most ``recall``
       and within the size of the last dropped group of it.
    2. **Precision.** ``n_fp`` false positives are added, the integer nearest to
       ``kept * (1 - precision) / precision`` (computed exactly with fractions, halves rounded up),
       so the achieved precision ``kept / (kept + n_fp)`` equals ``precision`` whenever that
       product is an integer (for 0.9: whenever ``kept`` is a multiple of 9) and is otherwise the
       closest one fewer or more false positive can give. (The authors used
       ``int(0.1 * kept)``, i.e. precision ~0.909.)
    3. **False positives** have 1..``max_fp_length`` words and a uniformly random type among the
       corpus's gold types (sorted). The first word is drawn uniformly among all words of the
       corpus not covered by a kept span or an earlier false positive; the length is drawn
       uniformly among those that keep the span on such free words within one sentence. A
       false positive never overlaps another span and never equals a gold span (type included),
       so every one is truly false. (The authors' overlap check tested the wrong word and their
       type order depended on the hash seed.)

    All documents are returned, in input order.
    """
    _check_probability("recall", recall)
    _check_probability("precision", precision, low_open=True)
    if max_fp_length < 1:
        raise SimulationError(f"max_fp_length must be at least 1, got {max_fp_length}")
    rng = random.Random(seed)

    # 1. drop whole surface-string groups
    groups: Dict[str, List[Tuple[int, Span]]] = defaultdict(list)
    for doc_index, document in enumerate(docs):
        for span in document.spans:
            groups[surface(document, span)].append((doc_index, span))
    gold_total = sum(len(members) for members in groups.values())
    limit = int(Fraction(str(recall)) * gold_total)  # floor, exact for decimal inputs like 0.5
    strings = sorted(groups)
    rng.shuffle(strings)
    kept_count = gold_total
    dropped: Set[str] = set()
    for string in strings:
        if kept_count <= limit:
            break
        dropped.add(string)
        kept_count -= len(groups[string])
    kept: List[List[Span]] = [[s for s in d.spans if surface(d, s) not in dropped] for d in docs]

    # 2. how many false positives
    target = Fraction(str(precision))
    n_false_positives = int(kept_count * (1 - target) / target + Fraction(1, 2))

    # 3. place them
    types = sorted({label for d in docs for _, _, label in d.spans})
    false_positives = _place_false_positives(docs, kept, n_false_positives, types, max_fp_length, rng)
    output = [_annotated(d, kept[i] + false_positives[i]) for i, d in enumerate(docs)]
    return output, _stats(docs, output, kept_count, n_false_positives)


def _place_false_positives(
    docs: Sequence[Document],
    kept: Sequence[Sequence[Span]],
    count: int,
    types: Sequence[str],
    max_length: int,
    rng: random.Random,
) -> List[List[Span]]:
    """Draws ``count`` non-overlapping false-positive spans (see :func:`non_native_speaker`)."""
    result: List[List[Span]] = [[] for _ in docs]
    if count == 0:
        return result
    if not types:
        raise CorpusSimulationError("cannot add false positives: the corpus has no entity types")
    covered = [[False] * len(d.tokens) for d in docs]
    sentence_end = []  # per document and word: end of its sentence
    for doc_index, document in enumerate(docs):
        for start, end, _ in kept[doc_index]:
            covered[doc_index][start:end] = [True] * (end - start)
        ends = []
        for start, end in document.sentences():
            ends.extend([end] * (end - start))
        sentence_end.append(ends)
    gold_spans = [set(d.spans) for d in docs]
    # Rejection sampling from the initially free words is uniform over the still free ones.
    candidates = [(i, w) for i, flags in enumerate(covered) for w, is_covered in enumerate(flags) if not is_covered]
    free = len(candidates)
    placed = attempts = 0
    max_attempts = 1000 * (count + len(candidates))
    while placed < count:
        attempts += 1
        if free == 0 or attempts > max_attempts:
            raise CorpusSimulationError(f"no room left for false positives after placing {placed} of {count}")
        doc_index, start = candidates[rng.randrange(len(candidates))]
        flags = covered[doc_index]
        if flags[start]:
            continue
        longest = 1
        while longest < max_length and start + longest < sentence_end[doc_index][start] and not flags[start + longest]:
            longest += 1
        end = start + rng.randint(1, longest)
        span = (start, end, rng.choice(types))
        if span in gold_spans[doc_index]:
            continue  # would be a true positive; draw again
        flags[start:end] = [True] * (end - start)
        free -= end - start
        result[doc_index].append(span)
        placed += 1
    return result


# ------------------------------------------------------------------------------- uniform drop
def random_drop(docs: Sequence[Document], keep_probability: float, seed: int = 0) -> Tuple[List[Document], Stats]:
    """Keeps each gold span independently with probability ``keep_probability`` (the uniform
    baseline of Jie et al. 2019 / Li et al. 2021). Documents stay in input order."""
    _check_probability("keep_probability", keep_probability)
    rng = random.Random(seed)
    output = [_annotated(d, [s for s in sorted(d.spans) if rng.random() < keep_probability]) for d in docs]
    return output, _stats(docs, output, sum(len(d.spans) for d in output), 0)


# ------------------------------------------------------------------------------- train-data variants
def variant(docs: Sequence[Document], name: str) -> List[Document]:
    """The paper's training-data variants.

    * ``all``: every document as given.
    * ``short``: only the annotated documents: at least one entity span or negative span, or complete
      (a document checked complete without any entity is annotated: all its words are ``O``).
    * ``shortest``: as ``short``, and every document is cut after the sentence holding its last
      entity span (without one: its last negative span; a complete document with neither is kept
      whole). Negative spans past the cut are dropped and those crossing it are clipped (a part of
      an entity-free span is entity-free); a typed one ``(start, end, type)`` is kept only whole. A raw
      ``text`` is cut before the first word dropped (:func:`_cut_text`).

    Returns new :class:`Document` objects; the input is not modified.
    """
    if name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; expected one of {', '.join(VARIANTS)}")
    if name == "all":
        return [_copy(d) for d in docs]
    # annotated: an entity, a negative span, or checked complete (a complete document with no entity says "all O")
    annotated = [d for d in docs if d.spans or d.negative_spans or d.is_complete]
    if name == "short":
        return [_copy(d) for d in annotated]
    return [_cut_after_last_span(d) for d in annotated]


def _cut_after_last_span(document: Document) -> Document:
    ends = [end for _, end, _ in document.spans] or [n[1] for n in document.negative_spans]
    if not ends:  # a complete document without entities: nothing to cut after
        return _copy(document)
    last_end = max(ends)
    cut = next(end for end in document.sentence_ends if end >= last_end)
    return _copy(
        document,
        tokens=document.tokens[:cut],
        sentence_ends=[end for end in document.sentence_ends if end <= cut],
        negative_spans=[  # "no entity" spans clipped at the cut; a typed one ("not this type") only kept whole
            (n[0], min(n[1], cut)) + tuple(n[2:])
            for n in document.negative_spans
            if n[0] < cut and (len(n) == 2 or n[1] <= cut)
        ],
        o_weights=None if document.o_weights is None else document.o_weights[:cut],
        text=_cut_text(document, cut),
    )


def _cut_text(document: Document, cut: int):
    """The document's raw text up to its first word from ``cut`` on, so that the tokenizer's words of it are
    the words kept (the whole text kept words that are no longer the document's: ``predict`` refused the line
    as tokens that are not the words of its text); the text as it is where its words are not the document's."""
    if document.text is None or cut == len(document.tokens):
        return document.text
    words, offsets, _ = tokenize_text(document.text)
    return document.text[: offsets[cut][0]] if words == document.tokens else document.text
