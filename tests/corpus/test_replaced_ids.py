"""Document ids that differ only in characters the one text normalisation replaces (``"a\\u0000"`` and
``"a\\u0001"`` are both ``a\\ufffd``): every importer and reader that refuses an id twice says why the two ids are
one and how to fix it, in the one wording (:func:`eer_plugin.corpus.text.replaced_id_note`); before, the line named
only the replaced id, and the Label Studio, brat and spaCy importers compared the ids before replacing, so they wrote
two documents of one id (a file that no reader takes back). Generated: ids drawn with the replaced characters
(control characters, lone surrogates where the format can hold one) at drawn places."""

import json
import os
import random
import sys
from pathlib import Path

import pytest

from eer_plugin.corpus import text
from eer_plugin.corpus.formats import FormatError, read_documents
from eer_plugin.corpus.importers import AnnotationImportError, import_documents
from eer_plugin.corpus.tokenizer import tokenize_text

#: the characters replaced by U+FFFD: control characters that are not white space, and lone surrogates
CONTROLS = [chr(c) for c in range(0xA0) if text.BAD_CHARACTERS.fullmatch(chr(c))]
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff"]
NOTE = text.replaced_id_note(text.REPLACEMENT)
TEXT = "Anna lives in Paris ."


def id_pair(draw: random.Random, replaced=CONTROLS, banned: str = ""):
    """Two ids that differ only in one replaced character at a drawn place, and the id both become."""
    letters = [c for c in "abcXYZ09-_." if c not in banned]
    stem = "".join(draw.choice(letters) for _ in range(draw.randint(0, 6)))
    at = draw.randint(0, len(stem))
    first, second = draw.sample(replaced, 2)
    ids = [stem[:at] + first + stem[at:], stem[:at] + second + stem[at:]]
    return ids, text.normalise(ids[0])


def _json_lines(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def doccano(tmp_path, ids):
    return _json_lines(tmp_path / "d.jsonl", [{"id": i, "text": TEXT, "label": []} for i in ids])


def prodigy(tmp_path, ids):
    rows = [{"text": TEXT, "meta": {"id": i}, "_input_hash": n, "spans": [], "answer": "accept"} for n, i in enumerate(ids)]  # fmt: skip
    return _json_lines(tmp_path / "p.jsonl", rows)


def label_studio(tmp_path, ids):
    tasks = [{"id": n + 1, "data": {"text": TEXT, "eer_id": i}, "annotations": [{"result": []}]} for n, i in enumerate(ids)]  # fmt: skip
    path = tmp_path / "ls.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return path


def brat(tmp_path, ids):
    folder = tmp_path / "brat"
    folder.mkdir()
    for i in ids:
        (folder / f"{i}.txt").write_text(TEXT, encoding="utf-8")
        (folder / f"{i}.ann").write_text("T1\tLOC 14 19\tParis\n", encoding="utf-8")
    return folder


def spacy_docbin(tmp_path, ids):
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import DocBin

    nlp, docs = spacy.blank("en"), []
    for i in ids:
        doc = nlp(TEXT)
        doc.user_data["id"] = i
        docs.append(doc)
    path = tmp_path / "d.spacy"
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    return path


#: importer format -> (the export of two documents of the ids, the replaced characters its ids can hold)
IMPORTERS = {
    "doccano": (doccano, CONTROLS + SURROGATES),
    "prodigy": (prodigy, CONTROLS + SURROGATES),
    "label-studio": (label_studio, CONTROLS + SURROGATES),
    "brat": (brat, [c for c in CONTROLS if c != "\x00"]),  # a file name: no NUL, no "/"
    "spacy": (spacy_docbin, CONTROLS),  # msgpack: UTF-8 strings
}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("format", list(IMPORTERS))
def test_every_importer_says_why_two_ids_that_differ_only_in_replaced_characters_are_one(format, seed, tmp_path):
    """The line names the id both become and ends with the shared note; the export's documents with distinct
    printable ids (the fix) import."""
    write, replaced = IMPORTERS[format]
    ids, cleaned = id_pair(random.Random(f"{format}{seed}"), replaced)
    for place in ("bad", "good"):
        (tmp_path / place).mkdir()
    with pytest.raises(AnnotationImportError) as raised:
        import_documents(format, write(tmp_path / "bad", ids), tokenize_text)
    message = str(raised.value)
    assert f"document id {cleaned!r} of " in message and " is already used by " in message
    assert message.endswith(NOTE), message
    documents, _ = import_documents(format, write(tmp_path / "good", ["a", "b"]), tokenize_text)
    assert sorted(d.id for d in documents) == ["a", "b"]


def test_complete_ids_name_the_documents_as_they_are_written(tmp_path):
    """``--complete-ids`` (and the backend's complete tasks) given as the export spells an id: the document of that
    id, written with U+FFFD, is complete."""
    path = label_studio(tmp_path, ["a\x00", "b"])
    for wanted in (["a\x00"], ["a\ufffd"]):
        documents, _ = import_documents("label-studio", path, tokenize_text, complete_ids=wanted)
        assert [(d.id, d.is_complete) for d in documents] == [("a\ufffd", True), ("b", False)]


def training_jsonl(tmp_path, ids):
    return _json_lines(tmp_path / "t.jsonl", [{"id": i, "tokens": TEXT.split(), "spans": []} for i in ids])


def conll(tmp_path, ids):
    blocks = [f"-DOCSTART- O\n# id = {i}\nAnna B-PER\n\n" for i in ids]
    path = tmp_path / "t.conll"
    path.write_text("".join(blocks), encoding="utf-8")
    return path


def ontonotes(tmp_path, ids):
    part = "{i}  0  0  Anna  NNP  *  -  -  -  -  (PERSON)  -\n"
    blocks = [f"#begin document ({i}); part 000\n" + part.format(i="x") + "\n#end document\n" for i in ids]
    path = tmp_path / "t.gold_conll"
    path.write_text("".join(blocks), encoding="utf-8")
    return path


#: reader -> (the file of two documents of the ids, the replaced characters its ids can hold); a text file holds no
#: lone surrogate, and the column formats split on white space (never replaced)
READERS = {
    "jsonl": (training_jsonl, CONTROLS + SURROGATES),
    "conll": (conll, [c for c in CONTROLS if c != "\x00"]),
    "ontonotes": (ontonotes, [c for c in CONTROLS if c != "\x00"]),
}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("reader", list(READERS))
def test_every_reader_says_why_two_ids_that_differ_only_in_replaced_characters_are_one(reader, seed, tmp_path):
    """``eer-split``, ``eer-inspect``, training and evaluation read through these."""
    write, replaced = READERS[reader]
    banned = "()" if reader == "ontonotes" else ""
    ids, cleaned = id_pair(random.Random(f"{reader}{seed}"), replaced, banned)
    path = write(tmp_path, ids)
    with pytest.raises(FormatError) as raised:
        read_documents(str(path))
    message = str(raised.value)
    assert repr(cleaned if reader != "ontonotes" else f"{cleaned}-000") in message and message.endswith(NOTE), message


@pytest.mark.parametrize("seed", range(3))
def test_eer_dictionary_input_says_why(seed, tmp_path):
    from eer_plugin.annotation.dictionary_files import DictionaryError
    from eer_plugin.annotation.dictionary_input import read_input

    ids, cleaned = id_pair(random.Random(seed), CONTROLS + SURROGATES)
    path = _json_lines(tmp_path / "in.jsonl", [{"id": i, "text": TEXT} for i in ids])
    with pytest.raises(DictionaryError) as raised:
        list(read_input(str(path)))
    assert f"document id {cleaned!r} already used on line 1" in str(raised.value)
    assert str(raised.value).endswith(NOTE)


@pytest.mark.parametrize("seed", range(3))
def test_eer_export_predictions_say_why(seed, tmp_path):
    from eer_plugin.corpus.exporters import PredictionsError, read_predictions

    ids, cleaned = id_pair(random.Random(seed), CONTROLS + SURROGATES)
    record = {"tokens": ["x"], "spans": [], "tags": ["O"], "sentence_ends": [1]}
    path = _json_lines(tmp_path / "p.jsonl", [dict(record, id=i) for i in ids])
    with pytest.raises(PredictionsError) as raised:
        read_predictions(path)
    assert f"document id {cleaned!r} is also the id of line 1" in str(raised.value)
    assert str(raised.value).endswith(NOTE)


@pytest.mark.skipif(sys.platform == "win32", reason="file names of control characters and of bytes that are no UTF-8")
@pytest.mark.parametrize("seed", range(3))
def test_a_folder_of_text_files_names_its_documents_with_replaced_characters_and_refuses_two_of_one_id(seed, tmp_path):
    """``eer-dictionary`` and ``predict`` take a folder of .txt files, each named by its path: a name's control
    characters, and its bytes that are no UTF-8, are replaced as every id's (before, such a name was written as a
    lone surrogate, a traceback at the output: UTF-8 cannot hold it); two files of one id are one line naming both."""
    from eer_plugin.annotation.dictionary_input import read_input
    from eer_plugin.corpus.formats.files import text_files

    ids, cleaned = id_pair(random.Random(seed), [c for c in CONTROLS if c != "\x00"], banned=".")
    folder = tmp_path / "texts"
    folder.mkdir()
    for i in ids:
        (folder / f"{i}.txt").write_text(TEXT, encoding="utf-8")
    with pytest.raises(FormatError) as raised:
        text_files(folder)
    names = sorted(f"{i}.txt" for i in ids)
    assert str(raised.value).startswith(f"{folder}: the files {names[0]!r} and {names[1]!r} are both document ")
    assert NOTE in str(raised.value)
    (folder / names[0]).unlink()
    os.rename(folder / names[1], os.fsencode(folder) + b"/x\xff.txt")  # a name that is no UTF-8
    assert [doc.id for doc, _ in read_input(str(folder))] == ["x\ufffd.txt"]
