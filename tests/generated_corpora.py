"""Test-only: generated corpora of any number of documents, alike in every document, for the tests that bound
the memory of a reader by the number of documents (tests/*/test_*_streaming.py): the file's lines or text, one
document after another."""

import json
from typing import List

#: one sentence of every document: 16 words, an entity of each type (word offsets 0-2 PER, 6-7 ORG, 8-10 LOC)
WORDS = "Angela Merkel met the board of Siemens in New York on Monday and said little .".split()
SPANS = [(0, 2, "PER"), (6, 7, "ORG"), (8, 10, "LOC")]
TAGS = ["B-PER", "I-PER", "O", "O", "O", "O", "B-ORG", "O", "B-LOC", "I-LOC"] + ["O"] * 6


def _words(sentences: int) -> List[str]:
    return WORDS * sentences


def _spans(sentences: int) -> List[List]:
    return [[s + k * len(WORDS), e + k * len(WORDS), t] for k in range(sentences) for s, e, t in SPANS]


def partial_lines(documents: int, sentences: int = 5) -> str:
    """Partial-annotation JSON lines (``eer-import``'s output), every third document complete."""
    return "".join(
        json.dumps(
            {
                "id": f"d{i}",
                "tokens": _words(sentences),
                "sentence_ends": [len(WORDS) * (k + 1) for k in range(sentences)],
                "spans": _spans(sentences) if i % 3 == 0 else _spans(sentences)[:1],
                "is_complete": i % 3 == 0,
            }
        )
        + "\n"
        for i in range(documents)
    )


def conll_text(documents: int, sentences: int = 5, docstart: bool = True) -> str:
    """A CoNLL column file (BIO); without ``docstart``, its sentences are grouped by the reader."""
    sentence = "".join(f"{word} NN {tag}\n" for word, tag in zip(WORDS, TAGS)) + "\n"
    document = ("-DOCSTART- -X- O\n\n" if docstart else "") + sentence * sentences
    return document * documents


def text(sentences: int) -> str:
    """A document's raw text: its words joined by a space, a line break after each sentence."""
    return "\n".join(" ".join(WORDS) for _ in range(sentences))


def character_spans(sentences: int) -> List[List]:
    """The character offsets of :func:`text`'s entities, ``[start, end, type]``."""
    starts, position = [], 0
    for word in WORDS:
        starts.append(position)
        position += len(word) + 1
    length = len(" ".join(WORDS)) + 1
    return [
        [k * length + starts[s], k * length + starts[e - 1] + len(WORDS[e - 1]), t]
        for k in range(sentences)
        for s, e, t in SPANS
    ]


def doccano_lines(documents: int, sentences: int = 5) -> str:
    """A doccano sequence-labelling export."""
    return "".join(
        json.dumps({"id": i, "text": text(sentences), "label": character_spans(sentences)}) + "\n"
        for i in range(documents)
    )


def prediction_lines(documents: int, sentences: int = 5) -> str:
    """``eer-ner predict`` output (raw text), with an error record after every tenth document."""
    lines = []
    spans = [
        {"start": s, "end": e, "type": t, "probability": 0.875, "char_start": c[0], "char_end": c[1]}
        for (s, e, t), c in zip(_spans(sentences), character_spans(sentences))
    ]
    for i in range(documents):
        record = {
            "id": f"p{i}",
            "text": text(sentences),
            "tokens": _words(sentences),
            "sentence_ends": [len(WORDS) * (k + 1) for k in range(sentences)],
            "spans": spans,
            "tags": ["O"] * len(WORDS) * sentences,
        }
        lines.append(json.dumps(record) + "\n")
        if i % 10 == 9:
            lines.append(json.dumps({"line": i + 2, "id": None, "error": "a generated error record"}) + "\n")
    return "".join(lines)


def prodigy_lines(documents: int, sentences: int = 5) -> str:
    """A Prodigy export: a manual accept per document, and for every fourth document a binary reject of another
    type at the end of the file (merged into the document of its first task, wherever that stands)."""
    spans = [{"start": s, "end": e, "label": t} for s, e, t in character_spans(sentences)]
    manual = [
        {
            "text": text(sentences),
            "_input_hash": i,
            "_task_hash": i,
            "_view_id": "ner_manual",
            "spans": spans,
            "answer": "accept",
        }
        for i in range(documents)
    ]
    rejected = [dict(spans[0], label="ORG")]
    binary = [
        {
            "text": text(sentences),
            "_input_hash": i,
            "_task_hash": -i,
            "_view_id": "ner",
            "spans": rejected,
            "answer": "reject",
        }
        for i in range(0, documents, 4)
    ]
    return "".join(json.dumps(task) + "\n" for task in manual + binary)
