"""Round trips under generated text: seeded adversarial documents (combining marks and decomposed letters, CJK
without spaces, emoji with ZWJ, skin tones and flags, right-to-left text and bidi marks, NBSP and other Unicode
spaces, zero-width and other invisible format characters, a byte-order mark, tabs, ``\\r\\n`` and lone ``\\r``,
U+2028/U+2029, JSON with escaped surrogate pairs, words that are only punctuation, entities at the first and last
word, adjacent entities of one type, one-word and empty documents, very long words, types with unusual characters,
ids of every shape) through every annotation tool and our own writers, each document compared with what it was:

* ``eer-export`` (doccano, Label Studio, Prodigy, brat) of ``eer-ner predict``'s output, the tool accepting every
  pre-annotation, ``eer-import`` back: the same words, sentence ends, spans with their types, ids, order (brat's:
  its file names) and no warning but the one for a type named like a tag; what ``docs/use-a-model.md`` documents as
  lost is asserted as lost: a pre-split prediction comes back as the tokenizer cuts its tokens joined by spaces
  (words and sentences), an empty document is predict's error record (skipped), an id brat cannot name is one error;
* a spaCy DocBin of the same documents, partial (missing tokens, ``O`` runs, ``incorrect_spans``) or complete,
  through ``eer-import spacy``: also ``is_complete`` and the negative spans;
* eer-ner's own JSON lines, written and read, and ``eer-split``'s two parts: every field identical.

Before: a prediction with an invisible format character between two words (``Paris \\u200d Rome``, which the
tokenizer cuts as it cuts white space) was refused by every exporter as "not the next word"; a brat document whose
text starts with a byte-order mark came back with every span one character off (the importer dropped the mark that
brat counts), and a span across a line break with a warning that the ``.ann`` text "differs" (the exporter writes
its line breaks as spaces); ids ``a`` and ``a.txt/b`` made ``eer-export brat`` fail on the file system
(``[Errno 17] File exists: '.../.out.eer-tmp-.../a.txt'``) instead of naming the two ids. The quick tests draw a few
seeds per tool; ``test_seed_sweep`` (integration) draws 200.
"""

import json
import random
import re
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from adversarial_documents import TYPES, documents_of, generated
from test_same_text import through_the_tool

from eer_plugin.commands import eer_export
from eer_plugin.commands import split as eer_split
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.exporters import EXPORT_FORMATS, PredictionsError, export
from eer_plugin.corpus.formats import read_jsonl, write_jsonl
from eer_plugin.corpus.importers import import_documents
from eer_plugin.corpus.tokenizer import tokenize_text


def write_predictions(documents: List[dict], path: Path, seed: int) -> Path:
    """``eer-ner predict``'s JSON output of ``documents``: an error record for a text without words, the raw text
    and the spans' character offsets where predict got the text, JSON escaped to ASCII (surrogate pairs) or not."""
    rng, lines = random.Random(seed), []
    for number, document in enumerate(documents, start=1):
        if not document["tokens"]:
            lines.append(json.dumps({"line": number, "id": document["id"], "error": '"text" holds no word'}))
            continue
        spans = [{"type": t, "start": s, "end": e, "probability": rng.random()} for s, e, t in document["spans"]]
        record = {"id": document["id"], "tokens": document["tokens"], "spans": spans}
        record.update(tags=["O"] * len(document["tokens"]), sentence_ends=document["ends"])
        if document["raw"]:
            for span, (s, e, _) in zip(spans, document["spans"]):
                span.update(char_start=document["offsets"][s][0], char_end=document["offsets"][e - 1][1])
            record["text"] = document["text"]
        lines.append(json.dumps(record, ensure_ascii=rng.random() < 0.5))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def imported_as(document: dict, line: int, stem: str = "predictions") -> Optional[tuple]:
    """``(id, words, sentence ends, spans)`` of ``document`` as the tools give it back (None: not exported). A raw
    text comes back whole; pre-split words as the tokenizer cuts them joined by a space, a line break between
    sentences: their spans where it keeps every word whole, the sentences it finds (use-a-model.md)."""
    if not document["tokens"]:
        return None
    doc_id = f"{stem}-{line}" if document["id"] in (None, "") else str(document["id"])
    if document["raw"]:
        return doc_id, document["tokens"], document["ends"], sorted(document["spans"])
    breaks = set(document["ends"])
    text = "".join(t + ("\n" if i + 1 in breaks else " ") for i, t in enumerate(document["tokens"]))[:-1]
    words, _, ends = tokenize_text(text)
    return doc_id, words, ends, sorted(document["spans"]) if words == document["tokens"] else None


def brat_safe(documents: List[dict]) -> List[dict]:
    """The documents, an id that brat cannot name as a file (``/abs``, ``a/../b``: :func:`test_brat_refuses_ids`)
    made one it can."""
    for number, document in enumerate(documents):
        parts = str(document["id"]).split("/")
        if document["id"] not in (None, "") and any(p in ("", ".", "..") for p in parts):
            document["id"] = "/".join(p for p in parts if p not in ("", ".", "..")) + f"~{number}"
    return documents


def round_trip(format: str, seed: int, count: int, tmp_path: Path) -> List[str]:
    """What differs between ``count`` generated documents and what the tool gives back (nothing: [])."""
    documents = generated(seed, count)
    if format == "brat":
        documents = brat_safe(documents)
    predictions = write_predictions(documents, tmp_path / "predictions.jsonl", seed)
    exported = tmp_path / f"exported-{seed}" if format == "brat" else tmp_path / f"exported-{seed}.json"
    assert eer_export.main([format, str(predictions), str(exported)]) == 0
    imported, report = import_documents(format, through_the_tool(format, exported), tokenize_text)
    write_jsonl(imported, tmp_path / "imported.jsonl")  # and through our JSON lines, as eer-import writes them
    got = [(d.id, d.tokens, d.sentence_ends, d.spans) for d in read_jsonl(tmp_path / "imported.jsonl")]
    expected = [row for line, d in enumerate(documents, 1) for row in [imported_as(d, line)] if row is not None]
    if format == "brat":  # brat's order: its file names
        expected.sort(key=lambda row: Path(row[0] + ".ann"))
    problems = [f"{len(got)} documents back of {len(expected)}"] if len(got) != len(expected) else []
    for back, sent in zip(got, expected):
        if sent[3] is None:
            back, sent = back[:3], sent[:3]
        if back != sent:
            problems.append(f"seed {seed}: {sent!r} came back as {back!r}")
    problems += [w for w in report.warnings if "is named like a tag" not in w]
    return problems


QUICK_SEEDS = range(2)


@pytest.mark.parametrize("seed", QUICK_SEEDS)
@pytest.mark.parametrize("format", EXPORT_FORMATS)
def test_every_document_comes_back_from_every_tool(format, seed, tmp_path):
    assert round_trip(format, seed, 15, tmp_path) == []


# --------------------------------------------------------------------------------------------- the defects' cases
def predictions_of(tmp_path: Path, *texts: str, ids=None) -> Path:
    documents = []
    for number, text in enumerate(texts):
        tokens, offsets, ends = tokenize_text(text)
        spans = [(0, 1, "PER"), (len(tokens) - 1, len(tokens), "LOC")] if len(tokens) > 1 else [(0, 1, "PER")]
        doc_id = ids[number] if ids else f"d{number}"
        documents.append(dict(id=doc_id, text=text, tokens=tokens, offsets=offsets, ends=ends, spans=spans, raw=True))
    return write_predictions(documents, tmp_path / "predictions.jsonl", 0)


@pytest.mark.parametrize("between", ["\u200d", " \u200d ", "\u200e", "\u00ad", "\u2060 \ufeff", "\u200b"])
@pytest.mark.parametrize("format", EXPORT_FORMATS)
def test_invisible_characters_between_words_are_exported(format, between, tmp_path):
    """The tokenizer gives invisible format characters between words to no word, as white space; the exporters
    took them for text that no word covers and refused the prediction."""
    text = f"Anna{between} met Bob {between}in Paris"  # at a word's edge, they join no word
    out = tmp_path / ("out" if format == "brat" else "out.json")
    assert export(format, predictions_of(tmp_path, text), out)[:2] == (1, 2)
    (document,), report = import_documents(format, through_the_tool(format, out), tokenize_text)
    assert (document.tokens, document.spans) == (tokenize_text(text)[0], [(0, 1, "PER"), (4, 5, "LOC")])
    assert report.warnings == []


@pytest.mark.parametrize("text", ["\ufeffAnna met Bob", "\ufeff\ufeffAnna met Bob", "\ufeff Anna\r\nmet Bob"])
def test_brat_keeps_a_byte_order_mark_that_starts_the_text(text, tmp_path):
    """brat decodes a ``.txt`` with Python's ``utf8`` codec, which keeps a leading byte-order mark as a character,
    and counts its offsets with it: so do the exporter and, now, the importer (it dropped the mark: every span one
    character off, a span on the last word out of range)."""
    out = tmp_path / "out"
    export("brat", predictions_of(tmp_path, text), out)
    assert (out / "d0.txt").read_bytes().startswith(b"\xef\xbb\xbf" * text.count("\ufeff"))
    (document,), report = import_documents("brat", out, tokenize_text)
    assert (document.tokens, document.spans, report.warnings) == (
        ["Anna", "met", "Bob"],
        [(0, 1, "PER"), (2, 3, "LOC")],
        [],
    )


def test_a_brat_file_of_another_program_with_a_byte_order_mark(tmp_path):
    """A ``.txt`` saved with a byte-order mark (Windows Notepad) and annotated in brat: its offsets count the mark."""
    (tmp_path / "doc.txt").write_bytes("\ufeffAnna met Bob".encode("utf-8"))
    (tmp_path / "doc.ann").write_text("T1\tPER 1 5\tAnna\nT2\tPER 10 13\tBob\n", encoding="utf-8")
    (document,), report = import_documents("brat", tmp_path, tokenize_text)
    assert (document.spans, report.warnings) == ([(0, 1, "PER"), (2, 3, "PER")], [])


@pytest.mark.parametrize("between", ["\n", "\r\n", "\r", "\u2028", "\u2029", "\x85", "\x1c", "\n\n"])
def test_brat_spans_across_line_breaks_import_without_a_warning(between, tmp_path):
    """An entity across a line break is one fragment whose ``.ann`` text has the line break as a space (a line of
    the file holds none); the importer took that text for another than the ``.txt``'s and warned."""
    text = f"Anna met New{between}York today"
    predictions = predictions_of(tmp_path, text)
    record = json.loads(predictions.read_text())
    record["spans"][1].update(start=2, end=4)  # New York
    predictions.write_text(json.dumps(record) + "\n")
    export("brat", predictions, tmp_path / "out")
    covered = " ".join(f"New{between}York".splitlines())
    assert f"\t{covered}\n" in (tmp_path / "out" / "d0.ann").read_text(encoding="utf-8")
    (document,), report = import_documents("brat", tmp_path / "out", tokenize_text)
    assert (document.spans, report.warnings) == ([(0, 1, "PER"), (2, 4, "LOC")], [])


def test_a_brat_ann_text_that_differs_is_still_a_warning(tmp_path):
    (tmp_path / "doc.txt").write_text("Anna met\nBob", encoding="utf-8")
    (tmp_path / "doc.ann").write_text("T1\tPER 0 4\tAnne\nT2\tPER 5 12\tmet Bob\n", encoding="utf-8")
    _, report = import_documents("brat", tmp_path, tokenize_text)
    assert [w.split(": ", 1)[1].split(" differs")[0] for w in report.warnings] == ["document 'doc': T1 text 'Anne'"]


@pytest.mark.parametrize(
    "ids, line, needed",
    [
        (["a", "a.txt/b"], 2, "needs 'a.txt' as a directory, which document id 'a' (line 1) needs as a file"),
        (["a.txt/b", "a"], 2, "needs 'a.txt' as a file, which document id 'a.txt/b' (line 1) needs as a directory"),
        (["x/y", "x/y.ann/z"], 2, "needs 'x/y.ann' as a directory, which document id 'x/y' (line 1) needs as a file"),
        (["visual.conf/d"], 1, "needs 'visual.conf' as a directory, which the configuration needs as a file"),
        (["annotation.conf/d"], 1, "needs 'annotation.conf' as a directory, which the configuration needs as a file"),
    ],
)
def test_brat_ids_whose_files_clash_are_one_error_naming_both(ids, line, needed, tmp_path, capsys):
    """A document's files and another's directory (or the configuration's files) on one path: the export failed
    on the file system, naming its temporary directory; now one line names the predictions line and both ids."""
    predictions = predictions_of(tmp_path, *["Anna met Bob"] * len(ids), ids=ids)
    with pytest.raises(PredictionsError, match=re.escape(f"document id {ids[line - 1]!r} {needed}")) as info:
        export("brat", predictions, tmp_path / "out")
    assert info.value.line == line and not (tmp_path / "out").exists()
    with pytest.raises(SystemExit) as exited:
        eer_export.main(["brat", str(predictions), str(tmp_path / "out")])
    assert exited.value.code == 1
    (error,) = capsys.readouterr().err.splitlines()
    assert error.startswith(f"eer-export: error: {predictions}:{line}: document id") and 'another "id"' in error


@pytest.mark.parametrize("bad", ["/abs", "a/../b", "a//b", "a\\b", ".", "a/"])
def test_brat_refuses_ids(bad, tmp_path):
    """The ids that brat cannot name as a file below its directory: one error naming the line (the generator
    leaves them out of brat's round trips)."""
    with pytest.raises(PredictionsError, match="no safe relative file name for brat"):
        export("brat", predictions_of(tmp_path, "Anna met Bob", ids=[bad]), tmp_path / "out")


# ------------------------------------------------------------------------------------------------- spaCy DocBin
def spacy_doc(vocab, document: dict, rng: random.Random):
    """A spaCy ``Doc`` of the document's text (our words, and between them what separates them as tokens of their
    own), its spans as ``ents``, partial (some words ``O``, the others missing; an ``incorrect_spans`` span) or
    complete; and ``(complete, negative spans)`` as the importer should read them."""
    from spacy.tokens import Doc, Span

    text, words, spaces, ours, position = document["text"], [], [], [], 0

    def between(gap: str) -> None:
        if gap == " " and words and not spaces[-1]:
            spaces[-1] = True
        elif gap:
            words.append(gap)
            spaces.append(False)

    for start, end in document["offsets"]:
        between(text[position:start])
        ours.append(len(words))
        words.append(text[start:end])
        spaces.append(False)
        position = end
    between(text[position:])
    doc = Doc(vocab, words=words, spaces=spaces)
    assert doc.text == text
    entities = [Span(doc, ours[s], ours[e - 1] + 1, label=t) for s, e, t in document["spans"]]
    inside = {i for s, e, _ in document["spans"] for i in range(ours[s], ours[e - 1] + 1)}
    outside_words = [w for w in range(len(ours)) if ours[w] not in inside and rng.random() < 0.6]
    if rng.random() < 0.3:  # complete: every token an entity's or O
        outside = [i for i in range(len(doc)) if i not in inside]
    else:
        outside = [ours[w] for w in outside_words]
    missing = [i for i in range(len(doc)) if i not in inside and i not in outside]
    doc.set_ents(
        entities,
        outside=[doc[i : i + 1] for i in outside],
        missing=[doc[i : i + 1] for i in missing],
        default="unmodified",
    )
    doc.user_data["id"] = document["id"]
    if missing:  # the runs of O words with nothing between them but O tokens
        negatives, run = [], []
        for w in outside_words + [None]:
            if w is not None and run and ours[w] == ours[run[-1]] + 1:
                run.append(w)
                continue
            if run:
                negatives.append((run[0], run[-1] + 1))
            run = [w] if w is not None else []
        free = [w for w in range(len(ours)) if ours[w] not in inside]
        if free and rng.random() < 0.5:
            w = rng.choice(free)
            doc.spans["incorrect_spans"] = [Span(doc, ours[w], ours[w] + 1, label=rng.choice(TYPES))]
            negatives.append((w, w + 1, doc.spans["incorrect_spans"][0].label_))
        return doc, False, sorted(negatives)
    return doc, bool(len(doc)), []


@pytest.mark.parametrize("seed", QUICK_SEEDS)
def test_every_document_comes_back_from_a_docbin(seed, tmp_path):
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import DocBin

    problems = docbin_round_trip(spacy, DocBin, seed, 15, tmp_path)
    assert problems == []


def docbin_round_trip(spacy, DocBin, seed: int, count: int, tmp_path: Path) -> List[str]:
    rng, vocab = random.Random(seed), spacy.blank("xx").vocab
    documents = [d for d in generated(seed, count) if d["id"] not in (None, "")]
    docs, expected = [], []
    for document in documents:
        doc, complete, negatives = spacy_doc(vocab, document, rng)
        docs.append(doc)
        if document["tokens"]:  # a doc without words is skipped with a warning
            row = (str(document["id"]), document["tokens"], document["ends"], sorted(document["spans"]))
            expected.append(row + (complete, negatives))
    DocBin(docs=docs, store_user_data=True).to_disk(tmp_path / "corpus.spacy")
    imported, report = import_documents("spacy", tmp_path / "corpus.spacy", tokenize_text)
    got = [(d.id, d.tokens, d.sentence_ends, d.spans, d.is_complete, d.negative_spans) for d in imported]
    problems = [f"seed {seed}: {sent!r} came back as {back!r}" for back, sent in zip(got, expected) if back != sent]
    problems += [] if len(got) == len(expected) else [f"{len(got)} documents back of {len(expected)}"]
    return problems + [w for w in report.warnings if "is named like a tag" not in w and "has no words" not in w]


# ------------------------------------------------------------------------------------- our JSON lines, eer-split
def fields(document: Document) -> tuple:
    d = document
    return d.id, d.tokens, d.sentence_ends, d.spans, d.is_complete, d.negative_spans, d.text


@pytest.mark.parametrize("seed", QUICK_SEEDS)
def test_json_lines_and_eer_split_keep_every_field(seed, tmp_path):
    documents = documents_of(seed, 20)
    write_jsonl(documents, tmp_path / "corpus.jsonl")
    assert [fields(d) for d in read_jsonl(tmp_path / "corpus.jsonl")] == [fields(d) for d in documents]
    train, dev = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    assert eer_split.main([str(tmp_path / "corpus.jsonl"), str(train), str(dev), "--seed", str(seed)]) == 0
    parts: Dict[str, tuple] = {d.id: fields(d) for path in (train, dev) for d in read_jsonl(path)}
    assert sorted(parts) == sorted(d.id for d in documents)
    assert [parts[d.id] for d in documents] == [fields(d) for d in documents]
    for part in (train, dev):  # each in the input's order
        ids = [d.id for d in read_jsonl(part)]
        assert ids == [d.id for d in documents if d.id in set(ids)]


# ------------------------------------------------------------------------------------------------ the seed sweep
@pytest.mark.integration
def test_seed_sweep(tmp_path):
    """200 seeds of 15 documents per tool (3,000 each), 100 of the DocBin and the JSON lines."""
    problems: List[str] = []
    for seed in range(200):
        for format in EXPORT_FORMATS:
            (tmp_path / format).mkdir(exist_ok=True)
            problems += [f"{format}: {p}" for p in round_trip(format, seed, 15, tmp_path / format)]
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import DocBin

    for seed in range(100):
        problems += docbin_round_trip(spacy, DocBin, seed, 15, tmp_path)
        documents = documents_of(seed, 20)
        write_jsonl(documents, tmp_path / "corpus.jsonl")
        if [fields(d) for d in read_jsonl(tmp_path / "corpus.jsonl")] != [fields(d) for d in documents]:
            problems.append(f"JSON lines: seed {seed}")
    assert problems == []
