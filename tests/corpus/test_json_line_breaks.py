"""Every JSON line eer-ner writes is one line for every reader: U+0085, U+2028 and U+2029, which JSON leaves as they
are inside strings but ``str.splitlines`` (and JavaScript before ES2019) ends a line at, are written escaped by the
one JSON-line writer (:func:`eer_plugin.corpus.strict_json.dumps`): training data (``write_jsonl``: import, split,
simulate, dictionary), the exporters' JSON lines and Label Studio's task list, and ids in CoNLL comments. Before,
``write_jsonl`` wrote them as they are: a line of ``eer-import``'s output read with ``splitlines`` was two broken
records."""

import json
import random

import pytest

from eer_plugin.corpus import strict_json
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.exporters import write_json_lines
from eer_plugin.corpus.formats.columns import id_comment
from eer_plugin.corpus.formats.jsonl import read_jsonl, write_jsonl

BREAKS = "\x85\u2028\u2029"
PIECES = ["a", "Zürich", "中", "🙂", '"', "\\", "'"]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 4)))


def _documents(seed: int, count: int = 20):
    rng = random.Random(seed)
    for number in range(count):
        tokens = [_word(rng) for _ in range(rng.randint(1, 6))]
        spans = [(0, 1, rng.choice(["PER", "Product Name"]))] if rng.random() < 0.5 else []
        yield Document(
            id=f"d{number}{rng.choice(BREAKS)}{_word(rng)}",  # the words hold no white space; an id may
            text=" ".join(tokens) if rng.random() < 0.5 else None,
            tokens=tokens,
            sentence_ends=[len(tokens)],
            spans=spans,
            is_complete=rng.random() < 0.5,
        )


@pytest.mark.parametrize("seed", range(5))
def test_training_data_lines_split_as_records_and_read_back(seed, tmp_path):
    documents = list(_documents(seed))
    path = tmp_path / "data.jsonl"
    write_jsonl(documents, path)
    text = path.read_text(encoding="utf-8")
    assert not any(c in text for c in BREAKS)
    assert [json.loads(line)["id"] for line in text.splitlines()] == [d.id for d in documents]
    back = read_jsonl(path)
    assert [(d.id, d.tokens, d.spans, d.is_complete) for d in back] == [
        (d.id, d.tokens, d.spans, d.is_complete) for d in documents
    ]


def test_every_writer_of_json_lines_escapes_them(tmp_path):
    records = [{"id": "a\u2028b", "text": "x\x85y\u2029z"}, {"id": 2, "text": "plain"}]
    path = tmp_path / "records.jsonl"
    write_json_lines(records, path)
    assert [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] == records
    assert len(id_comment("a\u2028b").splitlines()) == 1
    for value in ("\u2028", {"k": ["\x85", "é\u2029"]}, "🙂\\\u2028"):
        line = strict_json.dumps(value)
        assert len(line.splitlines()) == 1 and strict_json.loads(line) == value and "🙂" not in line or "🙂" in value
