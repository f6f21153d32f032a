"""The entity ratio rho of a corpus, estimated from completely annotated documents (no AllenNLP).

EER's ratio loss compares the model's expected share of entity (non-``O``) tags ``rho_hat`` with
``rho`` (``entity_ratio``) over the *subword* positions of each batch, the tokenizer's bookend
tokens excluded. The same share measured on documents whose annotation is complete is therefore the
value rho should have: :func:`chunk_counts` counts it on the chunks the training reader builds
(the encoder's tokenizer, the same chunking), and :func:`estimate` gives it overall and per entity
type with a percentile bootstrap interval over documents (documents drawn with replacement, the
ratio of the summed counts on every resample, as :mod:`eer_plugin.annotation.bootstrap` does for F1).

:func:`suggest` turns the interval into ``entity_ratio`` / ``ratio_margin``: rho the interval's
midpoint and gamma its half-width (at least ``min_margin``), rounded outwards to three decimals, so
that ``[rho - gamma, rho + gamma]`` covers the interval. :func:`warnings` says when the estimate
cannot be trusted: fewer than :data:`MIN_COMPLETE_DOCUMENTS` complete documents (a wide interval),
or partial training data whose *annotated* entities alone already exceed ``rho + gamma`` (the true
ratio of that data is at least its annotated ratio).
"""

import dataclasses
import math
from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence

import numpy as np

from eer_plugin.annotation.bootstrap import resampled_sums
from eer_plugin.core.ranges import RANGES, is_number
from eer_plugin.core.tags import OUTSIDE

DEFAULT_RESAMPLES = 10_000
DEFAULT_CONFIDENCE = 0.95
#: below this many complete documents the interval is called wide
MIN_COMPLETE_DOCUMENTS = 20
#: smallest suggested ratio_margin
DEFAULT_MIN_MARGIN = 0.01
#: per-type key of entity positions whose type the chunk labels do not tell (an entity cut by a chunk boundary)
UNKNOWN_TYPE = ""


@dataclasses.dataclass
class RatioCounts:
    """Subword positions and entity positions (per type) of one document."""

    doc_id: str
    subwords: int = 0
    entities: Counter = dataclasses.field(default_factory=Counter)

    @property
    def entity_subwords(self) -> int:
        return sum(self.entities.values())


def chunk_counts(
    doc_id: str, chunk_labels: Iterable[Sequence[str]], count_bookends: bool = False, latent_is_entity: bool = True
) -> RatioCounts:
    """Counts of one document from the subword labels of its chunks (``O``, BILUO tags, ``_`` for
    latent; the first and last position are the bookends).

    In a complete document the only latent positions are entities cut by a chunk boundary, which
    ``latent_is_entity`` counts as entities (of :data:`UNKNOWN_TYPE`); for the annotated ratio of
    partial documents pass False (latent positions are then neither entity nor ``O`` evidence, but
    they are positions the loss counts, so they stay in ``subwords``).
    """
    counts = RatioCounts(doc_id)
    for labels in chunk_labels:
        content = list(labels[1:-1])
        counts.subwords += len(content) + (2 if count_bookends else 0)
        for label in content:
            if label == OUTSIDE:
                continue
            if "-" in label:
                counts.entities[label[2:]] += 1
            elif latent_is_entity:
                counts.entities[UNKNOWN_TYPE] += 1
    return counts


def ratio(counts: Sequence[RatioCounts], entity_type: Optional[str] = None) -> float:
    """Summed entity positions (of ``entity_type``, or all) over summed positions."""
    total = sum(c.subwords for c in counts)
    entities = sum(c.entity_subwords if entity_type is None else c.entities[entity_type] for c in counts)
    return entities / total if total else 0.0


def estimate(
    counts: Sequence[RatioCounts],
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> Dict[str, object]:
    """Ratio and percentile bootstrap interval, overall and per type.

    Returns ``documents``, ``subwords``, ``entity_subwords``, ``ratio``, ``low``, ``high``,
    ``per_type`` (type -> ``{"ratio", "low", "high", "entity_subwords"}``), ``confidence``,
    ``resamples`` and ``seed``. With one document the interval is that document's ratio.
    """
    if not counts:
        raise ValueError("no complete documents to estimate the entity ratio from")
    check_options(confidence, resamples)
    types = sorted({t for c in counts for t in c.entities if t != UNKNOWN_TYPE})
    stats = np.array(
        [[c.subwords, c.entity_subwords] + [c.entities[t] for t in types] for c in counts], dtype=np.float64
    )
    sums = resampled_sums(stats, resamples, np.random.default_rng(seed))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(sums[:, :1] > 0, sums[:, 1:] / np.where(sums[:, :1] > 0, sums[:, :1], 1), 0.0)
    alpha = 1.0 - confidence
    lows, highs = np.percentile(ratios, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)
    total = stats.sum(0)
    point = total[1:] / total[0] if total[0] else np.zeros(len(total) - 1)
    return {
        "documents": len(counts),
        "subwords": int(total[0]),
        "entity_subwords": int(total[1]),
        "ratio": float(point[0]),
        "low": float(lows[0]),
        "high": float(highs[0]),
        "per_type": {
            t: {
                "ratio": float(point[i + 1]),
                "low": float(lows[i + 1]),
                "high": float(highs[i + 1]),
                "entity_subwords": int(total[i + 2]),
            }
            for i, t in enumerate(types)
        },
        "confidence": confidence,
        "resamples": resamples,
        "seed": seed,
    }


def check_options(
    confidence: float = DEFAULT_CONFIDENCE, resamples: int = DEFAULT_RESAMPLES, min_margin: float = DEFAULT_MIN_MARGIN
) -> None:
    """A ``ValueError`` naming the first option out of range (checked before any document is read)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0.0 <= min_margin < 1.0:  # gamma, a half-width of shares of subwords; nan fails too
        raise ValueError(f"min_margin (the smallest gamma) must be in [0, 1), got {min_margin}")


def suggest(low: float, high: float, min_margin: float = DEFAULT_MIN_MARGIN) -> Dict[str, float]:
    """``entity_ratio`` (rho) and ``ratio_margin`` (gamma) with ``[rho - gamma, rho + gamma]``
    covering ``[low, high]``: the midpoint and the half-width (at least ``min_margin``), rounded to
    three decimals with gamma rounded up so that the rounded band still covers the interval."""
    check_options(min_margin=min_margin)
    rho = round((low + high) / 2, 3)
    gamma = max(rho - low, high - rho, min_margin)
    gamma = math.ceil(gamma * 1000 - 1e-9) / 1000
    return {"entity_ratio": rho, "ratio_margin": gamma}


def warnings(
    estimate_result: Dict[str, object],
    suggestion: Dict[str, float],
    partial_ratio: Optional[float],
    partial_documents: int = 0,
) -> List[str]:
    """The two warnings of the module docstring (empty when neither applies)."""
    messages = []
    documents = int(estimate_result["documents"])  # type: ignore[arg-type]
    if documents < MIN_COMPLETE_DOCUMENTS:
        messages.append(
            f"only {documents} complete document{'s' * (documents != 1)}: the interval is wide and may miss the true ratio; "
            f"annotate about {MIN_COMPLETE_DOCUMENTS} or more documents completely"
        )
    upper = suggestion["entity_ratio"] + suggestion["ratio_margin"]
    if partial_ratio is not None and partial_ratio > upper:
        messages.append(
            f"the annotated entities of the {partial_documents} partial document{'s' * (partial_documents != 1)} alone make up "
            f"{partial_ratio:.3f} of their subwords, above rho + gamma = {upper:.3f}: their true ratio is higher than this "
            "estimate (are the complete documents representative of the training data?); raise rho (-o model.entity_ratio)"
        )
    return messages


def read_suggestion(path: str) -> Dict[str, float]:
    """``{"entity_ratio": rho, "ratio_margin": gamma}`` from the JSON that ``eer-estimate-ratio --output``
    writes (its ``suggested`` entry); a :class:`ValueError` naming the file and the fix otherwise."""
    from eer_plugin.corpus import strict_json

    fix = "write it with: eer-ner eer-estimate-ratio DATA --output ratio.json"
    try:
        with open(path, encoding="utf-8") as handle:
            data = strict_json.load(handle)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file (the ratio estimate; {fix})") from None
    except strict_json.JsonError as error:
        raise ValueError(f"{path}:{error.line}: not a ratio estimate (unreadable JSON: {error}; {fix})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not a ratio estimate (unreadable JSON: {error}; {fix})") from None
    suggested = data.get("suggested") if isinstance(data, dict) else None
    values = {
        key: suggested.get(key) if isinstance(suggested, dict) else None for key in ("entity_ratio", "ratio_margin")
    }
    if not all(is_number(v) for v in values.values()):
        raise ValueError(f"{path}: no 'suggested' entity_ratio and ratio_margin numbers in it ({fix})")
    for key, value in values.items():  # the ranges the model takes them in (core.ranges), in the same words
        problem = RANGES[key].problem(key, value)
        if problem:
            raise ValueError(
                f"{path}: suggested {problem}: no model trains with it; give rho and gamma with -o instead"
            )
    return {key: float(value) for key, value in values.items()}
