"""Prodigy input tasks with pre-annotated spans (JSONL; the source of ``ner.manual`` /
``spans.manual``, which show the spans for the annotator to correct)::

    {"text": "EU rejects German call", "meta": {"id": "d1"},
     "tokens": [{"text": "EU", "start": 0, "end": 2, "id": 0, "ws": true}, ...],
     "spans": [{"start": 0, "end": 2, "token_start": 0, "token_end": 0, "label": "ORG", "score": 0.91}]}

``tokens`` are the model's words (so the spans align with tokens whatever Prodigy's tokenizer
does: the recipes keep a task's tokens); ``token_end`` is inclusive, as in Prodigy. Each span's
``score`` is its CRF probability (Prodigy's field for model scores). ``meta.id`` is our document id:
Prodigy shows ``meta`` on the card and keeps it in ``db-out``, where the importer
(:mod:`eer_plugin.corpus.importers.prodigy`) reads it back as the document id.
"""

from typing import Iterable

from eer_plugin.corpus.exporters import PredictedDocument, rounded, write_json_lines
from eer_plugin.corpus.formats import PathLike


def task(document: PredictedDocument) -> dict:
    text = document.text
    tokens = [
        {"text": text[a:b], "start": a, "end": b, "id": i, "ws": text[b : b + 1].isspace()}
        for i, (a, b) in enumerate(document.words)
    ]
    spans = [
        {
            "start": s.start,
            "end": s.end,
            "token_start": first,
            "token_end": end - 1,
            "label": s.type,
            "score": rounded(s.probability),
        }
        for s, (first, end) in zip(document.spans, document.word_spans)
    ]
    return {"text": document.text, "meta": {"id": document.id}, "tokens": tokens, "spans": spans}


def write(documents: Iterable[PredictedDocument], path: PathLike) -> None:
    write_json_lines((task(d) for d in documents), path)
