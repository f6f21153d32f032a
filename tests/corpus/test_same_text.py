"""Documents with the same text ("Thank you ." in many documents, a repeated headline) survive export and import in
every format as separate documents, in order, each with its own id and spans: generated corpora (duplicates of a
text with different spans, with identical spans, without spans, mixed and drawn by seed) through every exporter, the
tool, every importer and the JSON lines that ``eer-import`` writes; and through the readers without an exporter
(CoNLL, OntoNotes, JSON lines, spaCy). Before, Prodigy's round trip merged the documents of one text into one, their
spans combined (its tasks had no hashes of their own, so Prodigy and the importer took the text for the input)."""

import hashlib
import json
import random
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from conftest import FIXTURES

from eer_plugin.commands import eer_export, eer_import
from eer_plugin.core.tags import spans_to_tags
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.exporters import EXPORT_FORMATS
from eer_plugin.corpus.exporters import prodigy as prodigy_export
from eer_plugin.corpus.formats import read_conll, read_jsonl, read_ontonotes, write_jsonl
from eer_plugin.corpus.importers import import_documents
from eer_plugin.corpus.tokenizer import tokenize_text

Spans = List[Tuple[int, int, str]]
THANKS, ANNA, EU = "Thank you .", "Anna met Bob in Paris .", "EU rejects German call ."
#: each text and the entities that a generated document may mark in it (words, end exclusive)
ENTITIES = {THANKS: [], ANNA: [(0, 1, "PER"), (2, 3, "PER"), (4, 5, "LOC")], EU: [(0, 1, "ORG"), (2, 3, "MISC")]}


def generated(seed: int, documents: int = 10) -> List[Tuple[str, str, Spans]]:
    """``documents`` drawn from three texts (so most texts come several times), each with a drawn subset of its
    entities (often the same as another's, or none), under unique ids in no sorted order."""
    rng = random.Random(seed)
    ids = rng.sample(range(100, 1000), documents)
    drawn = []
    for number in ids:
        text = rng.choice(list(ENTITIES))
        drawn.append((f"n{number}", text, sorted(s for s in ENTITIES[text] if rng.random() < 0.5)))
    return drawn


CASES: Dict[str, List[Tuple[str, str, Spans]]] = {
    "different spans": [("d1", ANNA, [(0, 1, "PER")]), ("d2", ANNA, [(2, 3, "PER"), (4, 5, "LOC")]), ("d3", ANNA, [])],
    "identical spans": [("d1", ANNA, [(0, 1, "PER")]), ("d2", ANNA, [(0, 1, "PER")]), ("d3", ANNA, [(0, 1, "PER")])],
    "no spans": [("t1", THANKS, []), ("t2", THANKS, []), ("t3", THANKS, [])],
    "mixed": [("z", THANKS, []), ("m", ANNA, [(0, 1, "PER")]), ("a", THANKS, []), ("b", ANNA, [(0, 1, "PER")])]
    + [("c", EU, [(0, 1, "ORG")]), ("y", ANNA, [])],
    **{f"seed {seed}": generated(seed) for seed in range(4)},
}


def write_predictions(documents, path: Path) -> Path:
    """``eer-ner predict`` output for ``documents`` (raw text, its words, the spans with a probability each)."""
    lines = []
    for doc_id, text, spans in documents:
        tokens, _, ends = tokenize_text(text)
        predicted = [{"start": s, "end": e, "type": t, "probability": 0.9} for s, e, t in spans]
        lines.append(
            json.dumps({"id": doc_id, "text": text, "tokens": tokens, "sentence_ends": ends, "spans": predicted})
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def stand_in_hash(value) -> int:
    """A stand-in for Prodigy's murmurhash (a 32-bit signed integer of a JSON value)."""
    digest = hashlib.md5(json.dumps(value, sort_keys=True).encode()).digest()[:4]
    return int.from_bytes(digest, "big", signed=True)


def through_prodigy(path: Path, ours: bool = True) -> Path:
    """What ``prodigy db-out`` gives back when ``ner.manual`` streams the tasks of ``path`` and the annotator accepts
    each unchanged: hashes set where a task has none (``set_hashes``: the input's from the text, the task's from it
    and the spans; ``ours`` False drops the export's own first, as exports written before them had none), a task
    whose task hash the stream has seen left out (Prodigy's ``exclude_by`` default, ``task``), then the answer and
    the view."""
    seen, answered = set(), []
    for line in path.read_text().splitlines():
        task = json.loads(line)
        if not ours:
            del task["_input_hash"], task["_task_hash"]
        task.setdefault("_input_hash", stand_in_hash(task["text"]))
        task.setdefault("_task_hash", stand_in_hash([task["_input_hash"], task["spans"]]))
        if task["_task_hash"] not in seen:
            seen.add(task["_task_hash"])
            answered.append(dict(task, answer="accept", _view_id="ner_manual"))
    path.write_text("".join(json.dumps(task) + "\n" for task in answered))
    return path


def through_label_studio(path: Path) -> Path:
    """Label Studio's JSON export after import (it numbers the tasks 1, 2, ...) and one annotation per task that
    submits the prediction unchanged."""
    tasks = json.loads(path.read_text())
    for number, task in enumerate(tasks, start=1):
        task["id"] = number
        task["annotations"] = [{"id": number, "result": task["predictions"][0]["result"], "was_cancelled": False}]
    path.write_text(json.dumps(tasks))
    return path


def through_the_tool(format: str, path: Path) -> Path:
    """The tool's export after the annotator accepted every pre-annotation (doccano and brat give the file back as
    it was imported)."""
    return {"prodigy": through_prodigy, "label-studio": through_label_studio}.get(format, lambda p: p)(path)


def expected(format: str, documents) -> List[Tuple[str, List[str], Spans]]:
    """``(id, words, spans)`` of each document as imported: our ids (Label Studio's too: its tasks keep
    ``data.eer_id``), in the export's order, but brat's order of file names (a brat collection is a directory: brat
    lists its files by name)."""
    rows = [(doc_id, tokenize_text(text)[0], sorted(spans)) for doc_id, text, spans in documents]
    return sorted(rows, key=lambda row: row[0] + ".ann") if format == "brat" else rows


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("format", EXPORT_FORMATS)
def test_every_document_comes_back_in_order_with_its_own_spans(format, case, tmp_path):
    documents = CASES[case]
    exported = tmp_path / ("brat" if format == "brat" else "exported.json")
    assert (
        eer_export.main([format, str(write_predictions(documents, tmp_path / "predictions.jsonl")), str(exported)]) == 0
    )
    imported, report = tmp_path / "imported.jsonl", tmp_path / "report.json"
    argv = [format, str(through_the_tool(format, exported)), str(imported), "--report", str(report)]
    assert eer_import.main(argv) == 0
    assert [(d.id, d.tokens, d.spans) for d in read_jsonl(imported)] == expected(format, documents)
    assert json.loads(report.read_text())["warnings"] == 0  # nothing merged, nothing moved


def prodigy_tasks(path: Path) -> List[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_prodigy_export_gives_each_document_hashes_of_its_own(tmp_path):
    documents = CASES["mixed"] + CASES["seed 0"]
    predictions = write_predictions(documents, tmp_path / "predictions.jsonl")
    eer_export.main(["prodigy", str(predictions), str(tmp_path / "a.jsonl")])
    eer_export.main(["prodigy", str(predictions), str(tmp_path / "b.jsonl")])
    tasks = prodigy_tasks(tmp_path / "a.jsonl")
    assert [list(task)[:4] for task in tasks] == [["text", "meta", "_input_hash", "_task_hash"]] * len(documents)
    for key in ("_input_hash", "_task_hash"):
        hashes = [task[key] for task in tasks]
        assert all(isinstance(h, int) and -(2**31) <= h < 2**31 for h in hashes)  # as Prodigy's (murmurhash)
        assert len(set(hashes)) == len(documents)  # documents of one text: an input and a question each
    assert tasks == prodigy_tasks(tmp_path / "b.jsonl")  # the same predictions, the same hashes
    # of what they are made: the input hash of the id and the text, the task hash of it and the spans
    assert tasks[0]["_input_hash"] == prodigy_export.hash32("z", THANKS)
    assert tasks[1]["_task_hash"] == prodigy_export.hash32(tasks[1]["_input_hash"], [[0, 4, "PER"]])


def test_prodigy_hashes_that_collide_are_drawn_again(tmp_path, monkeypatch):
    drawn = prodigy_export.hash32
    monkeypatch.setattr(prodigy_export, "hash32", lambda *parts: drawn(*parts) if len(parts) > 2 else 7)
    predictions = write_predictions(CASES["no spans"], tmp_path / "predictions.jsonl")
    eer_export.main(["prodigy", str(predictions), str(tmp_path / "tasks.jsonl")])
    tasks = prodigy_tasks(tmp_path / "tasks.jsonl")
    assert [t["_input_hash"] for t in tasks] == [7, drawn("t2", THANKS, 1), drawn("t3", THANKS, 1)]
    assert len({t["_task_hash"] for t in tasks}) == 3 and tasks[0]["_task_hash"] == 7


def first_questions(documents):
    """The documents whose text and spans no document before them has (Prodigy streams one of each)."""
    seen = set()
    return [d for d in documents if (d[1], tuple(d[2])) not in seen and not seen.add((d[1], tuple(d[2])))]


@pytest.mark.parametrize("case", ["different spans", "seed 0", "seed 3"])
def test_prodigy_export_without_hashes_imports_as_separate_documents(case, tmp_path):
    """An export written before the hashes: Prodigy hashed the tasks of one text alike, and the importer, which
    merged tasks by their input alone, made one document of them; the document ids in ``meta`` keep them apart. (Of
    tasks with the same text and spans Prodigy showed the annotator one only: the export's hashes prevent that.)"""
    documents = first_questions(CASES[case])
    exported = tmp_path / "tasks.jsonl"
    eer_export.main(["prodigy", str(write_predictions(documents, tmp_path / "p.jsonl")), str(exported)])
    imported, report = import_documents("prodigy", through_prodigy(exported, ours=False), tokenize_text)
    assert len({t["_input_hash"] for t in prodigy_tasks(exported)}) < len(documents)  # one input, as Prodigy saw it
    assert [(d.id, d.spans) for d in imported] == [(i, sorted(s)) for i, _, s in documents]
    assert report.warnings == []


def test_several_annotators_answers_on_one_document_are_merged_and_reported(tmp_path):
    """``feed_overlap``: every annotator answers every task, with the task's hashes and ``meta``; the importer makes
    one document of a document's answers (the spans of all of them) where its first answer stands, and says so."""
    documents = CASES["different spans"]
    exported = tmp_path / "tasks.jsonl"
    eer_export.main(["prodigy", str(write_predictions(documents, tmp_path / "p.jsonl")), str(exported)])
    answers = []
    for annotator, added in (("alice", None), ("bob", {"start": 9, "end": 12, "label": "PER"})):
        for task in prodigy_tasks(exported):
            spans = task["spans"] + ([added] if added and task["meta"]["id"] == "d3" else [])
            answers.append(dict(task, spans=spans, answer="accept", _view_id="ner_manual", _annotator_id=annotator))
    exported.write_text("".join(json.dumps(answer) + "\n" for answer in answers))
    imported, report = import_documents("prodigy", exported, tokenize_text)
    assert [(d.id, d.spans, d.is_complete) for d in imported] == [
        ("d1", [(0, 1, "PER")], True),
        ("d2", [(2, 3, "PER"), (4, 5, "LOC")], True),
        ("d3", [(2, 3, "PER")], True),  # bob's span
    ]
    assert report.warnings == [
        f"{exported}: 6 tasks merged into 3 documents (tasks of one input and one document id are answers on one "
        "document, their spans taken together): 'd1' (lines 1, 4), 'd2' (lines 2, 5), 'd3' (lines 3, 6)"
    ]


def test_merges_of_tasks_without_ids_are_reported_naming_file_and_lines(tmp_path):
    """Prodigy's binary decisions on one input (the fixture's '102'), and tasks without hash nor id that share a
    text, are still one document each, as before, now with a warning; the warning shows five documents and five
    lines of each."""
    _, report = import_documents("prodigy", FIXTURES / "import" / "prodigy.jsonl", tokenize_text)
    assert report.warnings == [
        f"{FIXTURES / 'import' / 'prodigy.jsonl'}: 2 tasks merged into 1 document (tasks of one input and one "
        "document id are answers on one document, their spans taken together): '102' (lines 2, 3)"
    ]
    texts = [f"Anna met Bob in Paris {number} ." for number in range(7)]
    rows = [{"text": t, "answer": "accept", "_view_id": "ner", "spans": []} for t in texts for _ in range(2)]
    rows += [{"text": texts[0], "answer": "reject", "_view_id": "ner", "spans": []}] * 5
    path = tmp_path / "binary.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    imported, report = import_documents("prodigy", path, tokenize_text)
    assert [d.id for d in imported] == [f"binary-{line}" for line in range(1, 14, 2)]
    assert report.warnings == [
        f"{path}: 19 tasks merged into 7 documents (tasks of one input and one document id are answers on one "
        "document, their spans taken together): 'binary-1' (lines 1, 2, 15, 16, 17 and 2 more), 'binary-3' (lines 3, "
        "4), 'binary-5' (lines 5, 6), 'binary-7' (lines 7, 8), 'binary-9' (lines 9, 10) and 2 more"
    ]


# ------------------------------------------------------------------ the readers without an exporter
def documents_of(case: str) -> List[Document]:
    return [Document(i, tokenize_text(t)[0], tokenize_text(t)[2], sorted(s)) for i, t, s in CASES[case]]


@pytest.mark.parametrize("case", CASES)
def test_json_lines_keep_documents_of_one_text_apart(case, tmp_path):
    documents = documents_of(case)
    write_jsonl(documents, tmp_path / "corpus.jsonl")
    assert [(d.id, d.tokens, d.spans) for d in read_jsonl(tmp_path / "corpus.jsonl")] == [
        (d.id, d.tokens, d.spans) for d in documents
    ]


@pytest.mark.parametrize("case", CASES)
def test_conll_documents_of_one_text_stay_apart(case, tmp_path):
    """CoNLL has no ids: the documents between ``-DOCSTART-`` lines are named by their place, each kept."""
    documents = documents_of(case)
    blocks = [
        "-DOCSTART- O\n\n"
        + "".join(f"{w} {t}\n" for w, t in zip(d.tokens, spans_to_tags(d.spans, len(d.tokens), "BIO")))
        for d in documents
    ]
    path = tmp_path / "corpus.conll"
    path.write_text("\n".join(blocks) + "\n")
    read = read_conll(path)
    assert [d.id for d in read] == [f"corpus-{n:0{len(str(len(documents) - 1))}d}" for n in range(len(documents))]
    assert [(d.tokens, d.spans) for d in read] == [(d.tokens, d.spans) for d in documents]


def test_ontonotes_parts_of_one_text_stay_apart(tmp_path):
    rows = "".join(
        f"doc 0 {i} {w} NN * - - - - {ne} -\n" for i, (w, ne) in enumerate(zip(["Anna", "left"], ["(PERSON)", "*"]))
    )
    parts = "".join(f"#begin document (doc); part 00{n}\n{rows}\n#end document\n" for n in range(3))
    path = tmp_path / "doc.gold_conll"
    path.write_text(parts)
    assert [(d.id, d.spans) for d in read_ontonotes(path)] == [(f"doc-00{n}", [(0, 1, "PERSON")]) for n in range(3)]


def test_spacy_docs_of_one_text_stay_apart(tmp_path):
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import DocBin, Span

    nlp, docs = spacy.blank("en"), []
    for doc_id, text, spans in CASES["mixed"]:
        doc = nlp(text)
        doc.set_ents([Span(doc, s, e, t) for s, e, t in spans], default="outside")
        doc.user_data["id"] = doc_id
        docs.append(doc)
    DocBin(docs=docs, store_user_data=True).to_disk(tmp_path / "corpus.spacy")
    imported, report = import_documents("spacy", tmp_path / "corpus.spacy", tokenize_text)
    assert [(d.id, d.spans, d.is_complete) for d in imported] == [(i, s, True) for i, _, s in CASES["mixed"]]
    assert report.warnings == []
