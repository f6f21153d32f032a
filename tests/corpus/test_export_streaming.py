"""eer-export reads predictions and writes each document as it is read, for every tool: memory does not grow with
the predictions, the output is the one written from the whole list of documents, byte for byte, and a bad line
late in the predictions leaves the output there before."""

import filecmp
import importlib
import json
import os

import pytest
from generated_corpora import prediction_lines
from work_counter import peak_memory

from eer_plugin.corpus.exporters import EXPORT_FORMATS, PredictionsError, export, read_predictions


def _output(tmp_path, format, name="out"):
    return tmp_path / (name if format == "brat" else f"{name}.json")


def _same(first, second) -> bool:
    if first.is_dir():
        compared = filecmp.dircmp(first, second)
        return not (compared.left_only or compared.right_only or compared.diff_files or compared.funny_files)
    return first.read_bytes() == second.read_bytes()


@pytest.mark.integration  # memory measured over generated corpora: seconds each, not a unit test
@pytest.mark.parametrize("format", EXPORT_FORMATS)
def test_memory_does_not_grow_with_the_number_of_documents(tmp_path, format):
    peaks = {}
    for documents in (100, 400):
        predictions = tmp_path / f"tagged{documents}.jsonl"
        predictions.write_text(prediction_lines(documents), encoding="utf-8")
        counts, peaks[documents] = peak_memory(
            export, format, predictions, _output(tmp_path, format, f"out{documents}")
        )
        assert counts == (documents, documents * 15, documents // 10)
    # read whole, every prediction stayed until the output was written: over 10 KB per document of 3 KB of JSON;
    # one at a time, what stays is its id (refused twice) and for brat its file name
    per_document = (peaks[400] - peaks[100]) / 300
    assert per_document < 1000, (peaks, per_document)


@pytest.mark.parametrize("format", EXPORT_FORMATS)
def test_the_output_is_the_one_of_the_whole_list(tmp_path, format):
    predictions = tmp_path / "tagged.jsonl"
    predictions.write_text(prediction_lines(45), encoding="utf-8")
    assert export(format, predictions, _output(tmp_path, format)) == (45, 45 * 15, 4)
    documents, errors = read_predictions(predictions)
    module = importlib.import_module(f"eer_plugin.corpus.exporters.{format.replace('-', '_')}")
    module.write(documents, _output(tmp_path, format, "whole"))
    assert _same(_output(tmp_path, format), _output(tmp_path, format, "whole"))


@pytest.mark.parametrize("format", EXPORT_FORMATS)
def test_a_bad_line_late_in_the_predictions_leaves_no_output(tmp_path, format):
    predictions = tmp_path / "tagged.jsonl"
    predictions.write_text(prediction_lines(300), encoding="utf-8")
    lines = predictions.read_text(encoding="utf-8").count("\n")
    with open(predictions, "a", encoding="utf-8") as handle:
        late = {"start": 0, "end": 1, "type": "ORG", "probability": 2}
        handle.write(
            json.dumps({"id": "late", "tokens": ["EU"], "sentence_ends": [1], "spans": [late], "tags": ["O"]}) + "\n"
        )
    output = _output(tmp_path, format)
    if format != "brat":  # brat's OUT is a new directory: never one there before
        output.write_text("before", encoding="utf-8")
    with pytest.raises(PredictionsError) as raised:
        export(format, predictions, output)
    assert raised.value.line == lines + 1 and "probability must be between 0 and 1, got 2" in str(raised.value)
    assert sorted(os.listdir(tmp_path)) == (["tagged.jsonl"] if format == "brat" else ["out.json", "tagged.jsonl"])
    assert format == "brat" or output.read_text(encoding="utf-8") == "before"
