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

The four settings of ``allennlp cbl``'s ``cbl`` block are declared once below, each with its range and its default
(:data:`RANGES`, :data:`DEFAULTS`, the ranges as :class:`~eer_plugin.core.ranges.Bounds`, as the EER objective's): a
ratio ``b`` in (0, 1) (0 relabels nothing, 1 every word; the paper's 0.2 for CoNLL is the gold ratio + 0.05), a step
in (0, 1) (0 would never reach ``b``; a step past ``b`` is one round), a clip in [0, 1] (0 keeps every weight 1, the
Raw view; 1 lets a weight drop to ``1 - p``; above 1 or below 0 a weight would leave [0, 1]) and the epochs of a
round, at least 1. :func:`block_settings` checks a config's block against them (``allennlp cbl`` before it writes
anything), and :func:`ratio_schedule` and :func:`relabel` check their arguments with the same words. A run plans at
most :data:`MAX_ROUNDS` rounds (:func:`round_plan`, once the training data's annotated ratio is known, also before
anything is written): a smaller ``step`` is one line with the round count and the step that fits.

A weight ``w`` on an unannotated word is soft evidence for the CRF: the word's tags contribute
``w`` for ``O`` and ``1 - w`` for every entity tag to the partial likelihood (``w = 1``: observed
``O``, the Raw baseline; ``w = 0``: observed "some entity tag").
"""

import math
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from eer_plugin.common.errors import SettingError
from eer_plugin.common.wording import counted, not_a_setting
from eer_plugin.core.ranges import Bounds
from eer_plugin.corpus.documents import Document

BINARY_TYPE = "ENT"

#: b: the entity ratio the rounds relabel up to (Mayhew et al.: the gold ratio + 0.05, 0.2 on CoNLL)
ENTITY_RATIO = Bounds(0, 1, low_open=True, high_open=True, symbol="b", note="the share of entity words to reach")
#: the rise of the target ratio per round (0.02 in Mayhew et al.'s code); 0 would never reach b
STEP = Bounds(0, 1, low_open=True, high_open=True, note="the target ratio's rise per round")
#: an unannotated word's O weight is 1 - min(p, clip) (0.5 in their code); 0: every weight 1, the Raw view
CLIP = Bounds(0, 1, note="an unannotated word's O weight is 1 - min(p, clip)")
#: the training epochs of every binary round
ROUND_EPOCHS = Bounds(1, integer=True, note="epochs of each binary round")
#: the keys of the ``cbl`` block -> their ranges
RANGES: Dict[str, Bounds] = {"entity_ratio": ENTITY_RATIO, "step": STEP, "clip": CLIP, "round_epochs": ROUND_EPOCHS}
#: the keys of the ``cbl`` block -> the value a block that leaves one out gets (the packaged configs write the same)
DEFAULTS: Dict[str, Any] = {"entity_ratio": 0.2, "step": 0.02, "clip": 0.5, "round_epochs": 5}
#: the most binary rounds a run plans (:func:`round_plan`): each trains a model for ``round_epochs`` epochs, so a tiny
#: ``step`` (1e-6: tens of thousands of rounds) would train for days; the default step reaches any ratio within it
MAX_ROUNDS = 50


def block_settings(block: Any) -> Dict[str, Any]:
    """The settings of a config's ``cbl`` block, each left out at its :data:`DEFAULTS`; a :class:`SettingError`, one
    line naming the key (``cbl.step``), the value and what it must be, for a value out of its range (another type,
    NaN, null, ...), a key that is none of them or a block that is no object."""
    if not isinstance(block, Mapping):
        raise SettingError(f"cbl must be an object of the settings {', '.join(RANGES)}, got {block!r}")
    unknown = sorted(str(key) for key in block if key not in RANGES)
    if unknown:
        raise SettingError(not_a_setting("cbl", unknown[0], list(RANGES), "the cbl block"))
    values = {**DEFAULTS, **block}
    for key, bounds in RANGES.items():
        problem = bounds.problem(f"cbl.{key}", values[key])
        if problem is not None:
            raise SettingError(problem)
    return values


def annotated_words(doc: Document) -> List[bool]:
    marked = [False] * len(doc.tokens)
    for start, end, _ in doc.spans:
        marked[start:end] = [True] * (end - start)
    return marked


def annotated_ratio(docs: Sequence[Document]) -> float:
    words = sum(len(d.tokens) for d in docs)
    return sum(sum(annotated_words(d)) for d in docs) / max(words, 1)


def round_count(start: float, target: float, step: float = 0.02) -> int:
    """How many target ratios :func:`ratio_schedule` gives (computed, not listed: a tiny ``step`` gives billions)."""
    ENTITY_RATIO.check("entity_ratio", target)
    STEP.check("step", step)
    return 1 if target <= start else math.ceil((target - start) / step - 1e-9)


def ratio_schedule(start: float, target: float, step: float = 0.02) -> List[float]:
    """Target ratios ``start + step, start + 2 step, ...`` up to and including ``target`` (:data:`ENTITY_RATIO`,
    :data:`STEP`: a ``ValueError`` otherwise)."""
    # a target at or below start: one round, whose min is the target
    return [min(start + step * (i + 1), target) for i in range(round_count(start, target, step))]


def _rounded_up(value: float) -> float:
    """``value`` rounded up to two significant digits (a step to suggest: never below ``value``)."""
    digits = 1 - math.floor(math.log10(value))
    return math.ceil(value * 10**digits) / 10**digits


def round_plan(start: float, settings: Mapping[str, Any]) -> List[float]:
    """The target ratios of a run from the training data's annotated ratio ``start`` with the ``cbl`` block's
    ``settings`` (:func:`block_settings`); a :class:`SettingError`, one line with the round count, the step and the
    least step that plans :data:`MAX_ROUNDS` or fewer, when ``cbl.step`` plans more."""
    target, step = settings["entity_ratio"], settings["step"]
    count = round_count(start, target, step)
    if count > MAX_ROUNDS:
        least, epochs = _rounded_up((target - start) / MAX_ROUNDS), counted(settings["round_epochs"], "epoch")
        raise SettingError(
            f"cbl.step {step!r} plans {count} binary rounds (from the training data's annotated ratio {start:.4f} to "
            f"cbl.entity_ratio {target!r}), each training a model for {epochs}: a run plans at most {MAX_ROUNDS}; "
            f"give a cbl.step of at least {least:g} (the default is {DEFAULTS['step']})"
        )
    return ratio_schedule(start, target, step)


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
    word order, so the result is deterministic. ``clip``: :data:`CLIP` (a ``ValueError`` otherwise).
    """
    CLIP.check("clip", clip)
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
