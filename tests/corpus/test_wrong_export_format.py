"""An export given to ``eer-import`` under another tool's format, or a file of this package given as an export:
one line naming the file, the line and the format (or step) that reads it; nothing written, nothing lost.

Before, the JSON-lines importers read only their own keys: a Prodigy export imported as doccano gave documents
without a span, and a doccano export imported as Prodigy gave documents taken for manual accepts, complete and
without entities (every entity then taught as ``O``)."""

import json

import pytest
from conftest import FIXTURES

from eer_plugin.commands import eer_import

IMPORT = FIXTURES / "import"
TRAINING_LINE = {"id": "d1", "tokens": ["Fischler", "met", "Palacio", "."], "spans": [[0, 1, "PER"]], "text": "x"}
PREDICTION_LINE = {"id": "d1", "tokens": ["Fischler", "."], "tags": ["U-PER", "O"], "spans": [], "text": "Fischler."}
RAW_TEXT_LINE = {"id": "d1", "text": "Fischler met Loyola de Palacio in Brussels."}


def lines(tmp_path, name, *rows):
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


CASES = [
    ("doccano", "prodigy.jsonl", r"prodigy\.jsonl:1: document 'prodigy-1': no doccano 'label'.*eer-import prodigy`$"),
    (
        "prodigy",
        "doccano.jsonl",
        r"doccano\.jsonl:1: not a Prodigy task: the line is a doccano line.*eer-import doccano`$",
    ),
    ("doccano", "label_studio.json", r"label_studio\.json:1: .*one JSON document .*`eer-ner eer-import label-studio`"),
    ("prodigy", "label_studio.json", r"label_studio\.json:1: .*one JSON document .*`eer-ner eer-import label-studio`"),
    (
        "label-studio",
        "doccano.jsonl",
        r"doccano\.jsonl:2: .*not Label Studio's JSON export .*imported with that format$",
    ),
    ("label-studio", "prodigy.jsonl", r"prodigy\.jsonl:2: .*not Label Studio's JSON export"),
    (
        "doccano",
        "training",
        r"training\.jsonl:1: document 'd1': .*this package's training data .*train on it as it is$",
    ),
    ("prodigy", "training", r"training\.jsonl:1: not a Prodigy task: the line is this package's training data"),
    ("doccano", "predictions", r"predictions\.jsonl:1: .*`eer-ner predict`'s output .*`eer-ner eer-export`\)$"),
    ("prodigy", "predictions", r"predictions\.jsonl:1: not a Prodigy task: .*`eer-ner predict`'s output"),
    ("prodigy", "raw", r"raw\.jsonl:1: not a Prodigy task: none of answer, .*writes an 'answer' on every task\)$"),
]


@pytest.mark.parametrize("format, export, message", CASES, ids=[f"{c[0]}<-{c[1]}" for c in CASES])
def test_an_export_under_the_wrong_format_is_one_line_naming_the_right_one(format, export, message, tmp_path, capsys):
    made = {"training": TRAINING_LINE, "predictions": PREDICTION_LINE, "raw": RAW_TEXT_LINE}
    path = lines(tmp_path, f"{export}.jsonl", made[export], made[export]) if export in made else IMPORT / export
    output = tmp_path / "annotated.jsonl"
    output.write_text("the previous import\n")
    with pytest.raises(SystemExit) as exit:
        eer_import.main([format, str(path), str(output)])
    assert exit.value.code == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("eer-import: error: "), err
    assert __import__("re").search(message, err), err
    assert output.read_text() == "the previous import\n" and sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [output.name] + ([path.name] if export in made else [])
    )


def test_the_right_formats_and_unannotated_doccano_lines_still_import(tmp_path, capsys):
    """The checks refuse only what another tool wrote: doccano lines without spans (an unannotated document, or
    one with doccano's metadata keys) import as documents without spans, as before."""
    from eer_plugin.corpus.formats import read_jsonl

    for format, export in (("doccano", "doccano.jsonl"), ("prodigy", "prodigy.jsonl")):
        assert eer_import.main([format, str(IMPORT / export), str(tmp_path / "out.jsonl")]) == 0
    plain = lines(tmp_path, "plain.jsonl", RAW_TEXT_LINE, {"id": 2, "text": "Brussels.", "Comments": [], "meta": {}})
    assert eer_import.main(["doccano", str(plain), str(tmp_path / "out.jsonl")]) == 0
    assert [(d.id, d.spans, d.is_complete) for d in read_jsonl(tmp_path / "out.jsonl")] == [
        ("d1", [], False),
        ("2", [], False),
    ]


#: a line of the tool's own shape whose "text" is missing, misspelt or not a string
NO_TEXT = {
    "missing": lambda row: {k: v for k, v in row.items() if k != "text"},
    "misspelt": lambda row: {("txet" if k == "text" else k): v for k, v in row.items()},
    "a number": lambda row: dict(row, text=12345),
    "a list": lambda row: dict(row, text=["EU", "rejects"]),
    "null": lambda row: dict(row, text=None),
}
OWN_LINES = {
    "doccano": {"id": 1, "text": "EU rejects it.", "label": [[0, 2, "ORG"]]},
    "prodigy": {"text": "EU rejects it.", "spans": [{"start": 0, "end": 2, "label": "ORG"}], "answer": "accept"},
}


@pytest.mark.parametrize("problem", NO_TEXT)
@pytest.mark.parametrize("format", OWN_LINES)
def test_a_line_of_the_right_format_without_its_text_says_what_it_holds(format, problem, tmp_path, capsys):
    """The line is the tool's own (it has the tool's keys), so the error says what is wrong with its "text"
    (what it holds, or the keys it has and the closest one), never "looks like a <format> line: import it with
    `eer-ner eer-import <format>`", the command that was just run."""
    path = lines(tmp_path, "export.jsonl", NO_TEXT[problem](OWN_LINES[format]))
    with pytest.raises(SystemExit) as exit:
        eer_import.main([format, str(path), str(tmp_path / "out.jsonl")])
    err = capsys.readouterr().err.strip()
    assert exit.value.code == 1 and len(err.splitlines()) == 1 and "export.jsonl:1: " in err, err
    assert f"eer-import {format}" not in err, err
    expected = {"missing": "its keys are ", "misspelt": "(did you mean 'txet'?)"}.get(problem, ", got ")
    assert expected in err and not (tmp_path / "out.jsonl").exists(), err


@pytest.mark.parametrize("problem", ["a number", "a list", "null"])
def test_a_label_studio_task_whose_text_is_no_string_says_so(problem, tmp_path, capsys):
    """Not "cannot tell which of data's keys ['text'] holds the text; pass --text-key": the key is there."""
    task = {"id": 7, "data": NO_TEXT[problem]({"text": "EU rejects it."}), "annotations": []}
    path = tmp_path / "export.json"
    path.write_text(json.dumps([task]))
    with pytest.raises(SystemExit):
        eer_import.main(["label-studio", str(path), str(tmp_path / "out.jsonl")])
    err = capsys.readouterr().err.strip()
    assert "export.json:1: task '7': data['text'] must be the task's text, a string, got " in err, err
    assert "--text-key" not in err and len(err.splitlines()) == 1 and not (tmp_path / "out.jsonl").exists()
