"""eer-import reads an export and writes its documents one at a time where the format has parts (doccano's and
Prodigy's lines, brat's file pairs, a DocBin's docs): memory does not grow with the export (a 50 MB doccano
export took 652 MB read whole), the outputs are those of the whole list of documents, byte for byte, and a bad
line late in the export leaves the outputs there before."""

import os

import pytest
from generated_corpora import character_spans, doccano_lines, prodigy_lines, text
from work_counter import peak_memory

from eer_plugin.corpus.formats import write_jsonl
from eer_plugin.corpus.importers import AnnotationImportError, import_documents
from eer_plugin.corpus.importers.files import import_file
from eer_plugin.corpus.tokenizer import tokenize_text


def _doccano(path, documents):
    path.write_text(doccano_lines(documents), encoding="utf-8")
    return path


def _brat(path, documents):
    path.mkdir()
    for i in range(documents):
        (path / f"d{i:04d}.txt").write_text(text(5), encoding="utf-8")
        annotations = [f"T{k}\t{t} {s} {e}\t{text(5)[s:e]}\n" for k, (s, e, t) in enumerate(character_spans(5), 1)]
        (path / f"d{i:04d}.ann").write_text("".join(annotations), encoding="utf-8")
    return path


def _prodigy(path, documents):
    path.write_text(prodigy_lines(documents), encoding="utf-8")
    return path


EXPORTS = {"doccano": ("in.jsonl", _doccano), "brat": ("in", _brat), "prodigy": ("in.jsonl", _prodigy)}


@pytest.mark.integration  # memory measured over generated corpora: seconds each, not a unit test
@pytest.mark.parametrize("format", EXPORTS)
def test_memory_does_not_grow_with_the_number_of_documents(tmp_path, format):
    name, write = EXPORTS[format]
    peaks = {}
    for documents in (100, 400):
        source = write(tmp_path / f"{documents}-{name}", documents)
        out = tmp_path / f"out{documents}.jsonl"
        (result, _, _), peaks[documents] = peak_memory(import_file, format, source, out)
        assert result["documents"] == documents and result["spans"] == documents * 15
    # read whole, every document's text, words and spans stayed: over 20 KB per document of 0.4 KB of text;
    # one at a time, what stays is its id (refused twice) and, for brat, its file in the sorted list, for
    # Prodigy what the later tasks of a document add (a manual accept, their spans; no text)
    per_document = (peaks[400] - peaks[100]) / 300
    assert per_document < 1000, (peaks, per_document)


@pytest.mark.parametrize("format", EXPORTS)
def test_the_outputs_are_those_of_the_whole_list(tmp_path, format):
    name, write = EXPORTS[format]
    source = write(tmp_path / name, 120)
    ids = tmp_path / "ids.txt"
    ids.write_text("".join(f"{f'd{i:04d}' if format == 'brat' else i}\n" for i in range(0, 120, 7)))
    out, held_out = tmp_path / "out.jsonl", tmp_path / "complete.jsonl"
    result, _, lines = import_file(format, source, out, complete_ids=ids, complete_output=held_out)
    wanted = [line.strip() for line in ids.read_text().splitlines()]
    documents, report = import_documents(format, source, tokenize_text, complete_ids=wanted)
    write_jsonl([d for d in documents if not d.is_complete], tmp_path / "whole.jsonl")
    write_jsonl([d for d in documents if d.is_complete], tmp_path / "whole-complete.jsonl")
    assert out.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    assert held_out.read_bytes() == (tmp_path / "whole-complete.jsonl").read_bytes()
    complete = sum(d.is_complete for d in documents)
    assert result["complete_documents"] == report.complete_documents == complete >= 18
    assert lines == [f"{120 - complete} -> {out}", f"{complete} complete -> {held_out}"]


def test_a_bad_line_late_in_the_export_leaves_the_earlier_output(tmp_path):
    source = _doccano(tmp_path / "export.jsonl", 300)
    out = tmp_path / "out.jsonl"
    import_file("doccano", source, out)
    before = out.read_bytes()
    with open(source, "a", encoding="utf-8") as handle:
        handle.write('{"id": "late", "text": "EU", "label": [[0, 9, "ORG"]]}\n')  # line 301: out of range
    with pytest.raises(AnnotationImportError) as raised:
        import_file("doccano", source, out)
    assert raised.value.line == 301 and "out of range" in str(raised.value)
    assert out.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["export.jsonl", "out.jsonl"]  # no temporary file left
    with pytest.raises(AnnotationImportError):
        import_file("doccano", source, tmp_path / "new" / "out.jsonl")
    assert not (tmp_path / "new").exists()


def test_complete_ids_of_no_document_are_named_after_the_last_and_nothing_is_written(tmp_path):
    source = _doccano(tmp_path / "export.jsonl", 50)
    ids = tmp_path / "ids.txt"
    ids.write_text("3\nnine\n", encoding="utf-8")
    with pytest.raises(AnnotationImportError) as raised:
        import_file("doccano", source, tmp_path / "out.jsonl", complete_ids=ids)
    assert (raised.value.path, raised.value.line) == (str(ids), 2) and "'nine' (line 2)" in str(raised.value)
    assert sorted(os.listdir(tmp_path)) == ["export.jsonl", "ids.txt"]
