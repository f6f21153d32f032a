"""Bad input, round 3: an entity type is a name, in every reader that takes one from a JSON field (training data,
the annotation tools' exports). A type that is not a string (a label id, a list, an object) is refused, never
written as its ``str()`` (``"['PER']"``); a blank type is no type; white space at a type's ends (``"PER "``, a
second type beside ``PER``) and a tab or a line break inside (one line of CoNLL output, one vocabulary line per
tag) are refused. A space inside is a type's own (``Product Name``, an annotation tool's label). The rule is
:func:`eer_plugin.corpus.documents.type_problem`, checked by :meth:`Document.validate`, which every reader runs;
the importers refuse a type that is not a string before it is normalised (``to_document``)."""

import json
from pathlib import Path

import pytest
from conftest import FIXTURES

from eer_plugin.commands import eer_import, split
from eer_plugin.corpus.formats import read_jsonl

#: a type that is no name -> what the one-line error says
BAD_TYPES = {
    " ": "no entity type",
    "\t": "no entity type",
    "PER ": "white space at its start or end",
    " PER": "white space at its start or end",
    "\u00a0PER": "white space at its start or end",
    "PER\n": "white space at its start or end",
    "P\tER": "white space other than a space",
    "P\nER": "white space other than a space",
    "P\u2028ER": "white space other than a space",
    "P\r\nER": "white space other than a space",
    "P\u00a0ER": "U+00A0 NO-BREAK SPACE",
    "P\u2003ER": "U+2003 EM SPACE",
}
#: a type that is not a string, in an annotation tool's export
NOT_STRINGS = {"integer": 7, "list": ["PER"], "object": {"name": "PER"}, "true": True, "float": 1.5}
#: types that are names: kept exactly
GOOD_TYPES = ["PER", "Product Name", "B-PER", "ÉTAT", "人名"]

TEXT = "Anna saw Rome."


def _doccano(label) -> str:
    return json.dumps({"id": 2, "text": TEXT, "label": [[0, 4, label]]})


def _doccano_entities(label) -> str:
    return json.dumps({"id": 2, "text": TEXT, "entities": [{"start_offset": 0, "end_offset": 4, "label": label}]})


def _prodigy(label, view: str = "ner_manual", answer: str = "accept") -> str:
    span = {"start": 0, "end": 4, "label": label}
    return json.dumps({"text": TEXT, "_input_hash": 2, "_view_id": view, "answer": answer, "spans": [span]})


def _prodigy_reject(label) -> str:  # a binary reject: a negative span with a type
    return _prodigy(label, "ner", "reject")


def _label_studio(label) -> str:
    result = {
        "type": "labels",
        "from_name": "label",
        "to_name": "text",
        "value": {"start": 0, "end": 4, "labels": [label]},
    }
    return json.dumps([{"id": 2, "data": {"text": TEXT}, "annotations": [{"id": 1, "result": [result]}]}])


#: format -> (file name, the export's line 2 with a span of this type; for label-studio the whole file)
IMPORTS = {
    "doccano": ("export.jsonl", _doccano),
    "doccano entities": ("export.jsonl", _doccano_entities),
    "prodigy": ("export.jsonl", _prodigy),
    "prodigy binary reject": ("export.jsonl", _prodigy_reject),
    "label-studio": ("export.json", _label_studio),
}
FIRST_LINES = {
    "doccano": json.dumps({"id": 1, "text": "Peter met Bob.", "label": [[0, 5, "PER"]]}),
    "prodigy": json.dumps(
        {"text": "Peter met Bob.", "_input_hash": 1, "_view_id": "ner_manual", "answer": "accept", "spans": []}
    ),
}


def _export(format: str, label, tmp_path: Path) -> Path:
    name, line = IMPORTS[format]
    path = tmp_path / name
    tool = format.split()[0]
    if tool == "label-studio":
        path.write_text("\n" + line(label) + "\n", encoding="utf-8")  # the task on line 2
    else:
        path.write_text(FIRST_LINES[tool] + "\n" + line(label) + "\n", encoding="utf-8")
    return path


def _status(main, argv) -> int:
    try:
        return main([str(a) for a in argv])
    except SystemExit as exit:
        return exit.code


def _import(format: str, path: Path, capsys) -> tuple:
    out = path.parent / "out.jsonl"
    out.write_text("previous\n")
    status = _status(eer_import.main, [format.split()[0], path, out])
    return status, capsys.readouterr().err, out


@pytest.mark.parametrize("format", sorted(IMPORTS))
def test_an_importer_refuses_a_type_that_is_no_name_naming_file_and_line(format, tmp_path, capsys):
    for bad, expected in [*BAD_TYPES.items(), *((v, "the type must be a string") for v in NOT_STRINGS.values())]:
        path = _export(format, bad, tmp_path)
        status, err, out = _import(format, path, capsys)
        errors = [line for line in err.splitlines() if line.startswith("eer-import: error: ")]
        assert status == 1 and len(errors) == 1 and "Traceback" not in err, (format, bad, err)
        if format == "prodigy binary reject" and expected == "no entity type":
            expected = "must be (start, end) or (start, end, type)"
        # a Label Studio export is one JSON list: the line its task starts on, and the task (document '2')
        where = f"{path}:2: document '2'" if format == "label-studio" else f"{path}:2:"
        assert expected in errors[0] and where in errors[0], (format, bad, errors[0])
        assert errors[0].count(str(path)) == 1, errors[0]  # the location once, not repeated in the reason
        assert out.read_text() == "previous\n", (format, bad)  # the previous output is untouched


@pytest.mark.parametrize("format", sorted(IMPORTS))
def test_an_importer_keeps_a_type_that_is_a_name_exactly(format, tmp_path, capsys):
    for good in GOOD_TYPES:
        path = _export(format, good, tmp_path)
        status, err, out = _import(format, path, capsys)
        assert status == 0, (format, good, err)
        documents = read_jsonl(out)
        if format == "prodigy binary reject":
            assert documents[-1].negative_spans == [(0, 1, good)], (format, good)
        else:
            assert documents[-1].spans == [(0, 1, good)], (format, good)


def _training_line(label, negative: bool) -> str:
    key = "negative_spans" if negative else "spans"
    return json.dumps({"id": "b", "tokens": ["Anna", "saw", "Rome", "."], key: [[0, 1, label]]})


@pytest.mark.parametrize("negative", [False, True], ids=["spans", "negative_spans"])
def test_training_data_refuses_a_type_that_is_no_name_in_every_reader_naming_file_and_line(negative, tmp_path, capsys):
    """Training JSON lines (read by train, eer-split, eer-inspect, eer-simulate, eer-estimate-ratio,
    eer-dictionary): the type rule of :meth:`Document.validate`, here through ``eer-split``."""
    first = json.dumps({"id": "a", "tokens": ["Peter", "spoke"], "spans": [[0, 1, "PER"]]})
    for bad, expected in BAD_TYPES.items():
        data = tmp_path / "data.jsonl"
        data.write_text(first + "\n" + _training_line(bad, negative) + "\n", encoding="utf-8")
        status = _status(split.main, [data, tmp_path / "train.jsonl", tmp_path / "dev.jsonl"])
        err = capsys.readouterr().err
        if negative and expected == "no entity type":
            expected = "must be (start, end) or (start, end, type)"
        assert status == 1 and expected in err and f"{data}:2:" in err, (bad, err)
        assert not (tmp_path / "train.jsonl").exists() and not (tmp_path / "dev.jsonl").exists()
    for good in GOOD_TYPES:
        data = tmp_path / "data.jsonl"
        data.write_text(first + "\n" + _training_line(good, negative) + "\n", encoding="utf-8")
        document = read_jsonl(data)[1]
        assert (document.negative_spans if negative else document.spans) == [(0, 1, good)]


def test_the_fixture_exports_still_import(tmp_path, capsys):
    """Real exports' types are names: every fixture export imports as before."""
    for format, name in (
        ("doccano", "doccano.jsonl"),
        ("prodigy", "prodigy.jsonl"),
        ("label-studio", "label_studio.json"),
    ):
        status = _status(eer_import.main, [format, FIXTURES / "import" / name, tmp_path / f"{format}.jsonl"])
        assert status == 0, capsys.readouterr().err
