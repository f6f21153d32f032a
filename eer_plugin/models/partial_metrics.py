"""Model selection on *partially* annotated dev data: :class:`PartialSpanMetric`.

Scoring predictions against a partial annotation as if unmarked words were ``O`` makes every
correct prediction of an unmarked entity a false positive (``allennlp evaluate`` on EE data reports
precision near 0). This metric uses only what the annotation says:

* **recall on the annotated spans** (``partial-recall``): of the spans someone marked, in any
  document, the share predicted exactly (start, end and type). Annotated spans are a sample of the
  true entities, so this estimates the model's recall without needing the unmarked ones;
* **precision on the complete documents** (``partial-precision-complete``): exact-match span
  precision on the chunks whose document is ``is_complete`` (there every unmarked word is ``O``);
* **precision estimated from the entity ratio** (``partial-precision-estimated``), when
  ``entity_ratio`` (rho, e.g. from ``allennlp eer-estimate-ratio``) is given: if recall is R and
  the model tags a share r of the subwords as entities while a share rho are entities, about
  ``R * rho`` of the subwords are correctly tagged entity subwords, so precision is about
  ``min(1, R * rho / r)`` (subword-weighted; it assumes that found entities are as long as the
  others). A model that tags too much has ``r >> rho`` and a low estimate;
* **negative-span hits** (``partial-negative-hits``): predicted spans that overlap a span known to
  hold no entity, or equal a span known not to be of that type (certain false positives, counted
  in partial documents; in complete documents they are already false positives).

The combined validation value is ``partial-f1``, the harmonic mean of ``partial-recall`` and
``partial-precision``, where ``partial-precision`` is the complete-document precision when the
complete dev documents hold at least ``min_complete_spans`` gold spans (a property of the dev data,
so the formula does not change between epochs), else the ratio estimate (0 without
``entity_ratio``). Select checkpoints with ``"validation_metric": "+partial-f1"``. On gold
(complete) dev data with at least ``min_complete_spans`` spans it is the usual span F1
(``partial-f1`` equals ``f1-measure-overall``).

Every count is a sum, so the metric is exact under distributed training (summed over workers).
"""

import logging
from collections import Counter
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import torch
import torch.distributed as dist
from allennlp.training.metrics import Metric

logger = logging.getLogger(__name__)

Span = Tuple[int, int, str]
#: default least number of gold spans in the complete dev documents for their precision to be used
MIN_COMPLETE_SPANS = 20
_COUNTS = (
    "annotated",
    "found",
    "complete_tp",
    "complete_fp",
    "complete_fn",
    "predicted",
    "partial_predicted",
    "negative_hits",
    "predicted_subwords",
    "content_subwords",
    "chunks",
    "complete_chunks",
)


def harmonic_mean(a: float, b: float) -> float:
    return 2 * a * b / (a + b) if a + b else 0.0


@Metric.register("eer_partial_span")
class PartialSpanMetric(Metric):
    """See the module docstring.

    Call once per chunk (or document) with the predicted word spans and the instance's metadata,
    all relative to the same words: ``spans`` (annotated entity spans), ``is_complete``,
    optionally ``negative_spans`` (``[start, end]`` no entity / ``[start, end, type]`` not this
    type) and ``word_subwords`` (each word's subword range, for the predicted ratio; without it
    the ratio counts words).

    Parameters
    ----------
    entity_ratio : float, optional
        rho, for ``partial-precision-estimated``.
    min_complete_spans : int
        Least number of gold spans in the complete documents for ``partial-precision`` to be their
        measured precision rather than the ratio estimate.
    """

    def __init__(self, entity_ratio: Optional[float] = None, min_complete_spans: int = MIN_COMPLETE_SPANS) -> None:
        self.entity_ratio = entity_ratio
        self.min_complete_spans = min_complete_spans
        self.reset()

    def reset(self) -> None:
        self.counts: Counter = Counter()
        self.found_by_type: Counter = Counter()
        self.annotated_by_type: Counter = Counter()

    def __call__(self, predicted: Iterable[Sequence], metadata: Mapping[str, Any]) -> None:  # type: ignore[override]
        predicted_set = {(int(s), int(e), str(t)) for s, e, t in predicted}
        annotated = {(int(s), int(e), str(t)) for s, e, t in metadata.get("spans") or []}
        counts = self.counts
        counts["chunks"] += 1
        counts["annotated"] += len(annotated)
        counts["predicted"] += len(predicted_set)
        found = annotated & predicted_set
        counts["found"] += len(found)
        self.annotated_by_type.update(t for _, _, t in annotated)
        self.found_by_type.update(t for _, _, t in found)
        if metadata.get("is_complete"):
            counts["complete_chunks"] += 1
            counts["complete_tp"] += len(found)
            counts["complete_fp"] += len(predicted_set - annotated)
            counts["complete_fn"] += len(annotated - predicted_set)
        else:
            counts["partial_predicted"] += len(predicted_set)
            negatives = [tuple(n) for n in metadata.get("negative_spans") or []]
            for s, e, t in predicted_set:
                if any((n[0] < e and s < n[1]) if len(n) == 2 else (s, e, t) == (n[0], n[1], n[2]) for n in negatives):
                    counts["negative_hits"] += 1
        word_subwords = metadata.get("word_subwords")
        if word_subwords:
            counts["content_subwords"] += word_subwords[-1][1] - word_subwords[0][0]
            counts["predicted_subwords"] += sum(
                word_subwords[e - 1][1] - word_subwords[s][0] for s, e, _ in predicted_set
            )
        else:
            counts["content_subwords"] += len(metadata.get("words") or [])
            counts["predicted_subwords"] += sum(e - s for s, e, _ in predicted_set)

    def update(self, word_spans: Sequence[Iterable[Sequence]], metadata: Sequence[Mapping[str, Any]]) -> None:
        """One batch: the model's predicted word spans per chunk (``EERTagger.word_spans``) and the
        batch's ``metadata`` list, in the same order."""
        for spans, meta in zip(word_spans, metadata):
            self(spans, meta)

    def _summed(self) -> Tuple[Counter, Counter, Counter]:
        if not (dist.is_available() and dist.is_initialized()):
            return self.counts, self.found_by_type, self.annotated_by_type
        types = sorted(set(self.annotated_by_type))
        gathered: List[List[str]] = [[] for _ in range(dist.get_world_size())]
        dist.all_gather_object(gathered, types)
        types = sorted({t for part in gathered for t in part})
        row = (
            [self.counts[k] for k in _COUNTS]
            + [self.found_by_type[t] for t in types]
            + [self.annotated_by_type[t] for t in types]
        )
        table = torch.tensor(row, dtype=torch.float64)
        dist.all_reduce(table)
        values = [int(v) for v in table.tolist()]
        n = len(_COUNTS)
        return (
            Counter(dict(zip(_COUNTS, values[:n]))),
            Counter(dict(zip(types, values[n : n + len(types)]))),
            Counter(dict(zip(types, values[n + len(types) :]))),
        )

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        counts, found_by_type, annotated_by_type = self._summed()
        recall = counts["found"] / counts["annotated"] if counts["annotated"] else 0.0
        tp, fp = counts["complete_tp"], counts["complete_fp"]
        precision_complete = tp / (tp + fp) if tp + fp else 0.0
        predicted_ratio = (
            counts["predicted_subwords"] / counts["content_subwords"] if counts["content_subwords"] else 0.0
        )
        if self.entity_ratio is not None and predicted_ratio > 0:
            precision_estimated = min(1.0, recall * self.entity_ratio / predicted_ratio)
        else:
            precision_estimated = 0.0
        complete_gold = counts["complete_tp"] + counts["complete_fn"]
        use_complete = complete_gold >= self.min_complete_spans
        precision = precision_complete if use_complete else precision_estimated
        metrics = {
            "partial-recall": recall,
            "partial-precision-complete": precision_complete,
            "partial-precision-estimated": precision_estimated,
            "partial-precision": precision,
            "partial-f1": harmonic_mean(precision, recall),
            "partial-f1-complete": harmonic_mean(precision_complete, tp / complete_gold if complete_gold else 0.0),
            "partial-predicted-ratio": predicted_ratio,
            "partial-annotated-spans": float(counts["annotated"]),
            "partial-complete-spans": float(complete_gold),
            "partial-complete-chunks": float(counts["complete_chunks"]),
            "partial-uses-complete-precision": float(use_complete),
            "partial-negative-hits": float(counts["negative_hits"]),
            "partial-negative-hit-rate": counts["negative_hits"] / counts["partial_predicted"]
            if counts["partial_predicted"]
            else 0.0,
        }
        for entity_type in sorted(annotated_by_type):
            metrics[f"partial-recall-{entity_type}"] = found_by_type[entity_type] / annotated_by_type[entity_type]
        if reset:
            self.reset()
        return metrics


def evaluation_metrics(metric: PartialSpanMetric, training: bool, reset: bool) -> Dict[str, float]:
    """What a model adds to its metrics: the ``partial-*`` values in evaluation (validation,
    ``allennlp evaluate``), nothing during training (the metric only sees evaluation batches).
    When some evaluated chunks are not complete it says so once per reset, since then
    ``f1-measure-overall`` covers only the complete documents."""
    if training:
        return {}
    chunks, complete = metric.counts["chunks"], metric.counts["complete_chunks"]
    if reset and chunks > complete:
        logger.warning(
            "the evaluation data is partially annotated (%d of %d chunks not complete): f1-measure-overall "
            "counts only the complete documents; partial-recall, partial-precision and partial-f1 use the "
            'annotation as it is (select checkpoints with -o \'{"trainer.validation_metric": "+partial-f1"}\')',
            chunks - complete,
            chunks,
        )
    return metric.get_metric(reset)
