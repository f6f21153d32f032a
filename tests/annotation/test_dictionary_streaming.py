"""eer-dictionary reads and writes one document at a time: its memory does not grow with the corpus (a 50 MB
raw-text file took 2.8 GB when the input was read whole), for every kind of input (CoNLL too) and with
--propagate's second pass; a bad line late in a long input still leaves no output, or the one there before."""

import json

import pytest
from generated_corpora import conll_text
from work_counter import peak_memory

from eer_plugin.annotation.dictionary import label_file
from eer_plugin.annotation.dictionary_files import DictionaryError

NAMES = "Angela Merkel\tPER\nNew York\tLOC\nSiemens\tORG\n"
SENTENCE = "Angela Merkel met the board of Siemens in New York on Monday and said little . "
SUFFIXES = {"folder": "", "conll": ".conll"}
#: sentences per document (10; a CoNLL file holds a line per word, 3 of its sentences take what 10 take in the
#: others)
REPEATS = {"conll": 3}


def _text_line(i, repeats):
    return json.dumps({"id": f"d{i}", "text": SENTENCE * repeats}) + "\n"


def _tokens_line(i, repeats):
    tokens = (SENTENCE * repeats).split()
    return json.dumps({"id": f"d{i}", "tokens": tokens, "spans": [[0, 2, "PER"]]}) + "\n"


def _write_input(kind, path, documents, repeats=10):
    if kind == "conll":  # the same sentence, its tags ignored
        path.write_text(conll_text(documents, sentences=repeats), encoding="utf-8")
        return path
    if kind == "folder":
        path.mkdir()
        for i in range(documents):
            (path / f"{i}.txt").write_text(SENTENCE * repeats, encoding="utf-8")
        return path
    line = _text_line if kind == "text" else _tokens_line
    path.write_text("".join(line(i, repeats) for i in range(documents)), encoding="utf-8")
    return path


@pytest.mark.integration  # memory measured over generated corpora: seconds each, not a unit test
@pytest.mark.parametrize(
    "kind, propagate", [("text", False), ("tokens", False), ("tokens", True), ("folder", False), ("conll", False)]
)
def test_memory_does_not_grow_with_the_number_of_documents(tmp_path, kind, propagate):
    names = tmp_path / "names.tsv"
    names.write_text(NAMES, encoding="utf-8")
    peaks = {}
    for documents in (100, 400):
        repeats = REPEATS.get(kind, 10)
        source = _write_input(kind, tmp_path / f"in{documents}{SUFFIXES.get(kind, '.jsonl')}", documents, repeats)
        out = tmp_path / f"out{documents}.jsonl"
        summary, peaks[documents] = peak_memory(label_file, str(source), str(out), [str(names)], propagate=propagate)
        assert summary.documents == documents
        labelled = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert len(labelled) == documents and all(len(d["spans"]) == repeats * 3 for d in labelled)
    # read whole (before fa5f83e), each document stayed in memory: 18-40 KB per document of 0.8 KB of text here
    # (measured, every kind); streamed, what stays is its id (the ids checked for repeats, a folder's list of
    # files): under 2 KB
    per_document = (peaks[400] - peaks[100]) / 300
    assert per_document < 2000, (peaks, per_document)


def test_a_bad_line_late_in_the_input_leaves_the_earlier_output(tmp_path):
    names = tmp_path / "names.tsv"
    names.write_text(NAMES, encoding="utf-8")
    source = tmp_path / "docs.jsonl"
    source.write_text("".join(_text_line(i, 2) for i in range(300)), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    label_file(str(source), str(out), [str(names)])
    before = out.read_bytes()
    with open(source, "a", encoding="utf-8") as handle:
        handle.write(_text_line(300, 2))
        handle.write('{"text": 7}\n')  # line 302
    with pytest.raises(DictionaryError) as raised:
        label_file(str(source), str(out), [str(names)])
    assert raised.value.line == 302 and "'text' must be a string" in str(raised.value)
    assert out.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".") or "tmp" in p.name] == []
    fresh = tmp_path / "fresh.jsonl"
    with pytest.raises(DictionaryError):
        label_file(str(source), str(fresh), [str(names)])
    assert not fresh.exists()


def test_a_bad_first_line_fails_before_the_dictionaries_are_read(tmp_path):
    """The input's first document is read before the dictionaries (a million entries take a while): a wrong
    INPUT fails at once, with its own error, even when a dictionary is bad too."""
    source = tmp_path / "docs.jsonl"
    source.write_text('["not", "an", "object"]\n', encoding="utf-8")
    bad_dictionary = tmp_path / "names.tsv"
    bad_dictionary.write_text("a line without a type\n", encoding="utf-8")
    with pytest.raises(DictionaryError) as raised:
        label_file(str(source), str(tmp_path / "out.jsonl"), [str(bad_dictionary)])
    assert raised.value.path == str(source) and raised.value.line == 1
