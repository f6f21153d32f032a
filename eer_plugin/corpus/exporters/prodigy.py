"""Prodigy input tasks with pre-annotated spans (JSONL; the source of ``ner.manual`` /
``spans.manual``, which show the spans for the annotator to correct)::

    {"text": "EU rejects German call", "meta": {"id": "d1"},
     "_input_hash": -1280640510, "_task_hash": 355250431,
     "tokens": [{"text": "EU", "start": 0, "end": 2, "id": 0, "ws": true}, ...],
     "spans": [{"start": 0, "end": 2, "token_start": 0, "token_end": 0, "label": "ORG", "score": 0.91}]}

``tokens`` are the model's words (so the spans align with tokens whatever Prodigy's tokenizer
does: the recipes keep a task's tokens); ``token_end`` is inclusive, as in Prodigy. Each span's
``score`` is its CRF probability (Prodigy's field for model scores). ``meta.id`` is our document id:
Prodigy shows ``meta`` on the card and keeps it in ``db-out``, where the importer
(:mod:`eer_plugin.corpus.importers.prodigy`) reads it back as the document id.

**Hashes.** Prodigy names a task's input by ``_input_hash`` and the question asked about it by ``_task_hash``; it
computes them where a task has none (``set_hashes``: the input hash from the ``text``, the task hash from the input
hash and the ``spans``) and keeps those it is given. Computed from the text, two of our documents with the same text
("Thank you .", a repeated headline) would be one input: Prodigy leaves a task out of the stream when it has seen its
hash (the same text with the same spans: the annotator never sees the second document), and ``review`` and
``data-to-spacy`` merge the answers of one input into one example. So each task carries its own hashes, made as
Prodigy makes them but of what makes one of our documents: the input hash of the document id and the text (our
documents are distinct by id; the text keeps Prodigy's meaning, an edited text being another input), the task hash
of the input hash and the spans (``[start, end, label]``, as Prodigy hashes a task's ``spans``: another model's
spans are another question). Both are deterministic, so an export made again from the same predictions has the
same hashes, and Prodigy's exclusion of what a dataset already holds still finds the documents annotated before.
They are 32-bit signed integers, as Prodigy's own (murmurhash), so its database stores them as it stores its own;
within one export no two documents share either hash (a collision, a chance of about 1 in 100 among 10,000
documents and 1 in 2 among 77,000, is drawn again with a counter: :func:`distinct`).
"""

import hashlib
import json
from typing import Iterable, Set

from eer_plugin.corpus.exporters import PredictedDocument, rounded, write_json_lines
from eer_plugin.corpus.formats import PathLike


def hash32(*parts) -> int:
    """A 32-bit signed integer of ``parts`` (JSON values), the same in every run (as Prodigy's hashes are)."""
    data = json.dumps(parts, separators=(",", ":")).encode("ascii")  # ASCII: lone surrogates escaped too
    return int.from_bytes(hashlib.blake2b(data, digest_size=4).digest(), "big", signed=True)


def distinct(used: Set[int], *parts) -> int:
    """:func:`hash32` of ``parts``, drawn again (``parts`` and a counter) while it is in ``used``; added to it."""
    value, again = hash32(*parts), 0
    while value in used:
        again += 1
        value = hash32(*parts, again)
    used.add(value)
    return value


def task(document: PredictedDocument, input_hash: int, task_hash: int) -> dict:
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
    return {
        "text": document.text,
        "meta": {"id": document.id},
        "_input_hash": input_hash,
        "_task_hash": task_hash,
        "tokens": tokens,
        "spans": spans,
    }


def write(documents: Iterable[PredictedDocument], path: PathLike) -> None:
    inputs: Set[int] = set()  # the hashes written so far (a few bytes a document, as the ids the reader keeps)
    questions: Set[int] = set()

    def hashed(document: PredictedDocument) -> dict:
        input_hash = distinct(inputs, document.id, document.text)
        spans = [[s.start, s.end, s.type] for s in document.spans]
        return task(document, input_hash, distinct(questions, input_hash, spans))

    write_json_lines((hashed(d) for d in documents), path)
