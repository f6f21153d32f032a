"""PartialSpanMetric: model selection on partially annotated dev data."""

import pytest

from eer_plugin.corpus.documents import Document
from eer_plugin.inference.chunking import chunk_document
from eer_plugin.models.partial_metrics import PartialSpanMetric


def meta(spans, complete=False, negatives=(), words=10, pieces=1):
    """Metadata as the reader writes it: every word ``pieces`` subwords, bookend at position 0."""
    return {
        "spans": list(spans),
        "is_complete": complete,
        "negative_spans": [list(n) for n in negatives],
        "word_subwords": [(1 + w * pieces, 1 + (w + 1) * pieces) for w in range(words)],
        "words": ["w"] * words,
    }


def test_recall_on_annotated_spans_ignores_unmarked_predictions():
    metric = PartialSpanMetric(entity_ratio=0.2)
    # partial chunk: 2 annotated spans, one found; the extra prediction (7, 8) may be an unmarked entity
    metric([(0, 2, "PER"), (7, 8, "LOC")], meta([(0, 2, "PER"), (4, 5, "ORG")]))
    m = metric.get_metric()
    assert m["partial-recall"] == 0.5 and m["partial-recall-PER"] == 1.0 and m["partial-recall-ORG"] == 0.0
    assert m["partial-complete-chunks"] == 0 and m["partial-precision-complete"] == 0.0
    # predicted ratio 3 subwords of 10; estimated precision = R * rho / r = 0.5 * 0.2 / 0.3
    assert m["partial-predicted-ratio"] == pytest.approx(0.3)
    assert m["partial-precision-estimated"] == pytest.approx(0.5 * 0.2 / 0.3)
    assert m["partial-precision"] == m["partial-precision-estimated"] and m["partial-uses-complete-precision"] == 0.0
    p, r = m["partial-precision"], m["partial-recall"]
    assert m["partial-f1"] == pytest.approx(2 * p * r / (p + r))


def test_precision_on_complete_documents_once_they_hold_enough_spans():
    metric = PartialSpanMetric(entity_ratio=0.2, min_complete_spans=2)
    metric([(0, 1, "PER"), (3, 4, "LOC"), (6, 7, "ORG")], meta([(0, 1, "PER"), (3, 4, "LOC")], complete=True))
    metric([(1, 2, "PER")], meta([(5, 6, "LOC")]))  # partial: no precision evidence, one missed span
    m = metric.get_metric()
    assert m["partial-precision-complete"] == pytest.approx(2 / 3) and m["partial-uses-complete-precision"] == 1.0
    assert m["partial-precision"] == pytest.approx(2 / 3) and m["partial-recall"] == pytest.approx(2 / 3)
    assert m["partial-f1"] == pytest.approx(2 / 3) and m["partial-complete-spans"] == 2
    assert m["partial-f1-complete"] == pytest.approx(0.8)  # P 2/3, R 1 on the complete chunk
    metric.get_metric(reset=True)
    assert metric.get_metric()["partial-annotated-spans"] == 0


def test_on_gold_data_it_is_the_usual_span_f1():
    from eer_plugin.core.spans import SpanCounts

    metric, counts = PartialSpanMetric(min_complete_spans=1), SpanCounts()
    cases = [
        ([(0, 1, "PER"), (2, 4, "LOC")], [(0, 1, "PER"), (2, 3, "LOC")]),
        ([(5, 6, "ORG")], [(5, 6, "ORG"), (7, 9, "MISC")]),
    ]
    for predicted, gold in cases:
        metric(predicted, meta(gold, complete=True))
        counts.add(predicted, gold)
    assert metric.get_metric()["partial-f1"] == pytest.approx(counts.metrics()["f1-measure-overall"])


def test_negative_span_hits_and_subword_weighting():
    metric = PartialSpanMetric()
    negatives = [(2, 4), (6, 8, "PER")]
    predicted = [(3, 4, "LOC"), (6, 8, "PER"), (6, 8, "ORG"), (0, 1, "PER")]
    metric(predicted, meta([(0, 1, "PER")], negatives=negatives, pieces=2))
    m = metric.get_metric()
    assert m["partial-negative-hits"] == 2 and m["partial-negative-hit-rate"] == pytest.approx(0.5)
    assert m["partial-predicted-ratio"] == pytest.approx((1 + 2 + 2 + 1) / 10)  # word counts, 2 subwords each
    assert m["partial-precision-estimated"] == 0.0  # no entity_ratio given


def test_reader_chunks_carry_negative_spans_relative_to_the_chunk():
    doc = Document(
        "d", list("abcdefgh"), [4, 8], [(0, 1, "PER")], negative_spans=[(2, 6), (5, 6, "LOC"), (3, 5, "ORG")]
    )
    chunks = chunk_document(doc, lambda ws: [[1] for _ in ws], lambda ids: ["x"] * len(ids), (0, 0), max_length=6)
    assert [(c.word_start, c.negative_spans) for c in chunks] == [(0, [(2, 4)]), (4, [(0, 2), (1, 2, "LOC")])]


def test_update_with_reader_metadata(tiny_encoder):
    """The reader's instance metadata carries every field the metric reads."""
    from eer_plugin.data.reader import PartialDocumentReader

    reader = PartialDocumentReader(model_name=tiny_encoder)
    doc = Document("d", ["john", "smith", "said", "new", "york", "."], [6], [(0, 2, "PER")], negative_spans=[(2, 3)])
    instances = [reader.chunk_to_instance(c) for c in reader.chunk(doc)]
    metadata = [i["metadata"].metadata for i in instances]
    assert metadata[0]["negative_spans"] == [(2, 3)] and metadata[0]["is_complete"] is False
    metric = PartialSpanMetric(entity_ratio=0.3)
    metric.update([[(0, 2, "PER"), (2, 3, "LOC"), (3, 5, "LOC")]], metadata)
    m = metric.get_metric()
    assert m["partial-recall"] == 1.0 and m["partial-negative-hits"] == 1
    pieces = [e - s for s, e in metadata[0]["word_subwords"]]
    assert m["partial-predicted-ratio"] == pytest.approx(sum(pieces[:5]) / sum(pieces))
