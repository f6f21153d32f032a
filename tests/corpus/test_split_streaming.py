"""eer-split reads its input one document at a time and keeps each document's output line in a temporary file
until the split is drawn: its memory does not grow with the corpus (a 60 MB file took 373 MB when read whole),
its outputs are those of the split of the whole list of documents, byte for byte, and a bad line late in the
input leaves the outputs there before."""

import os

import pytest
from generated_corpora import conll_text, partial_lines
from work_counter import peak_memory

from eer_plugin.corpus.dev_split import split_documents, split_file
from eer_plugin.corpus.documents import DocumentError
from eer_plugin.corpus.formats import FormatError, read_documents, write_jsonl

INPUTS = {"jsonl": ("in.jsonl", partial_lines), "conll": ("in.conll", conll_text)}


def _write(tmp_path, kind, documents, name=None):
    file_name, text = INPUTS[kind]
    path = tmp_path / (name or f"{documents}-{file_name}")
    path.write_text(text(documents), encoding="utf-8")
    return str(path)


@pytest.mark.integration  # memory measured over generated corpora: seconds each, not a unit test
@pytest.mark.parametrize("kind", INPUTS)
def test_memory_does_not_grow_with_the_number_of_documents(tmp_path, kind):
    peaks = {}
    for documents in (100, 400):
        train, dev = tmp_path / f"train{documents}.jsonl", tmp_path / f"dev{documents}.jsonl"
        split, peaks[documents] = peak_memory(split_file, _write(tmp_path, kind, documents), str(train), str(dev))
        assert (split.documents, split.train + split.dev) == (documents, documents)
    # read whole, every document stayed until both outputs were written: over 10 KB per document of 1-2 KB of
    # text; streamed, a byte of completeness, a dev index and a JSON line's id (refused twice) stay
    per_document = (peaks[400] - peaks[100]) / 300
    assert per_document < 1000, (peaks, per_document)


@pytest.mark.parametrize("kind, complete_only, seed", [("jsonl", False, 3), ("jsonl", True, 1), ("conll", False, 0)])
def test_the_outputs_are_those_of_the_whole_list_split(tmp_path, kind, complete_only, seed):
    data = _write(tmp_path, kind, 230)
    split = split_file(data, str(tmp_path / "train.jsonl"), str(tmp_path / "dev.jsonl"), 0.3, seed, complete_only)
    train, dev = split_documents(read_documents(data), 0.3, seed, complete_only)
    write_jsonl(train, tmp_path / "whole-train.jsonl")
    write_jsonl(dev, tmp_path / "whole-dev.jsonl")
    for name in ("train", "dev"):
        assert (tmp_path / f"{name}.jsonl").read_bytes() == (tmp_path / f"whole-{name}.jsonl").read_bytes()
    assert (split.train, split.dev, split.dev_complete) == (len(train), len(dev), sum(d.is_complete for d in dev))


def test_a_bad_line_late_in_the_input_leaves_the_earlier_outputs(tmp_path):
    data = _write(tmp_path, "jsonl", 300, name="data.jsonl")
    outputs = [tmp_path / "train.jsonl", tmp_path / "dev.jsonl"]
    split_file(data, *map(str, outputs))
    before = [path.read_bytes() for path in outputs]
    with open(data, "a", encoding="utf-8") as handle:
        handle.write('{"tokens": ["a"], "spans": [[0, 2, "PER"]]}\n')  # line 301
    with pytest.raises(FormatError) as raised:
        split_file(data, *map(str, outputs))
    assert (raised.value.path, raised.value.line) == (data, 301)
    assert [path.read_bytes() for path in outputs] == before
    assert sorted(os.listdir(tmp_path)) == ["data.jsonl", "dev.jsonl", "train.jsonl"]  # no temporary file left
    with pytest.raises(FormatError):
        split_file(data, str(tmp_path / "new" / "train.jsonl"), str(tmp_path / "new" / "dev.jsonl"))
    assert not (tmp_path / "new").exists()


def test_too_few_documents_is_the_error_it_was_and_writes_nothing(tmp_path):
    data = _write(tmp_path, "jsonl", 1, name="one.jsonl")
    with pytest.raises(DocumentError, match="one.jsonl: cannot split 1 document:"):
        split_file(data, str(tmp_path / "train.jsonl"), str(tmp_path / "dev.jsonl"))
    assert sorted(os.listdir(tmp_path)) == ["one.jsonl"]
