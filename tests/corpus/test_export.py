"""Pre-annotations (``eer-ner eer-export``): a model's predictions written in each annotation tool's import
format come back through the project's own importer as the same spans, with the probabilities in the
tools' score fields; bad predictions files and outputs are one clear error and touch nothing."""

import json
import re
from pathlib import Path

import pytest
from conftest import FIXTURES
from untrained_tagger import TEXT

from eer_plugin.commands import eer_export
from eer_plugin.corpus.exporters import EXPORT_FORMATS, TAG_FIRST, PredictionsError, export, read_predictions
from eer_plugin.corpus.exporters.brat import NAME_MAX
from eer_plugin.corpus.importers import import_documents
from eer_plugin.corpus.tokenizer import tokenize_text


@pytest.fixture(scope="module")
def predictions(predictor, tmp_path_factory) -> Path:  # noqa: F811
    """``eer-ner predict`` output: the example fixture (raw text and tokens), more text, one bad line."""
    lines = FIXTURES.joinpath("example_document.jsonl").read_text().splitlines()
    lines += [json.dumps({"id": "news/t1", "text": TEXT}), json.dumps({"id": "empty", "text": " "})]
    inputs = [predictor.load_line(line) for line in lines]
    path = tmp_path_factory.mktemp("predictions") / "tagged.jsonl"
    path.write_text("".join(predictor.dump_line(output) for output in predictor.predict_batch_json(inputs)))
    return path


def predicted(predictions: Path) -> list:
    return [json.loads(line) for line in predictions.read_text().splitlines() if "error" not in json.loads(line)]


def as_annotated(format: str, output: Path) -> Path:
    """What the tool gives back when the annotator accepts every pre-annotation unchanged."""
    if format == "label-studio":  # submitting a task copies its prediction's result into an annotation
        tasks = json.loads(output.read_text())
        for task in tasks:
            task["annotations"] = [{"id": 1, "result": task["predictions"][0]["result"], "was_cancelled": False}]
        output.write_text(json.dumps(tasks))
    if format == "prodigy":  # db-out adds the answer and the view of ner.manual
        tasks = [
            dict(json.loads(line), answer="accept", _view_id="ner_manual") for line in output.read_text().splitlines()
        ]
        output.write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return output


@pytest.mark.parametrize("format", EXPORT_FORMATS)
def test_export_then_import_gives_the_same_spans(format, predictions, tmp_path):
    output = tmp_path / ("out" if format == "brat" else "out.json")
    assert eer_export.main([format, str(predictions), str(output)]) == 0
    documents, report = import_documents(format, as_annotated(format, output), tokenize_text)
    expected = predicted(predictions)
    assert len(documents) == len(expected) == 3 and report.warnings == []
    assert sum(len(d.spans) for d in documents) >= 10
    for document, tagged in zip(documents, expected):
        assert document.tokens == tagged["tokens"]
        assert document.spans == [(s["start"], s["end"], s["type"]) for s in tagged["spans"]]
    if format in ("doccano", "prodigy", "brat"):  # the tools that keep our document ids
        assert [d.id for d in documents] == [t["id"] for t in expected]


def test_the_probabilities_go_into_the_tools_score_fields(predictions, tmp_path):
    expected = [round(s["probability"], 6) for t in predicted(predictions) for s in t["spans"]]
    export("label-studio", predictions, tmp_path / "ls.json", model_version="eer-short-1")
    tasks = json.loads((tmp_path / "ls.json").read_text())
    assert [r["score"] for t in tasks for r in t["predictions"][0]["result"]] == expected
    assert [t["predictions"][0]["model_version"] for t in tasks] == ["eer-short-1"] * 3
    assert tasks[0]["predictions"][0]["score"] == min(r["score"] for r in tasks[0]["predictions"][0]["result"])
    assert tasks[0]["data"]["eer_id"] == "example-1"
    export("prodigy", predictions, tmp_path / "prodigy.jsonl")
    prodigy = [json.loads(line) for line in (tmp_path / "prodigy.jsonl").read_text().splitlines()]
    assert [s["score"] for t in prodigy for s in t["spans"]] == expected
    assert prodigy[1]["text"] == "Manchester United beat Chelsea 2-1 at Old Trafford ."  # tokens joined by spaces
    export("brat", predictions, tmp_path / "brat")
    notes = [line for line in (tmp_path / "brat" / "news" / "t1.ann").read_text().splitlines() if line.startswith("#")]
    assert notes[0] == f"#1\tAnnotatorNotes T1\tprobability {expected[-len(notes)]}"
    assert (tmp_path / "brat" / "annotation.conf").read_text().startswith("[entities]\nLOC\nPER\n")


def test_the_error_records_of_predict_are_skipped_and_counted(predictions, capsys, tmp_path):
    assert eer_export.main(["doccano", str(predictions), str(tmp_path / "d.jsonl")]) == 0
    assert "3 documents" in capsys.readouterr().out and read_predictions(predictions)[1] == 1


@pytest.mark.parametrize(
    "lines, message",
    [
        (
            ['{"id": "a", "tokens": ["x"], "spans": [], "sentence_ends": [1]}'] * 2,
            ":2: document id 'a' is also the id of line 1",
        ),
        (["[1, 2]"], ":1: expected a JSON object"),
        (['{"id": "a", "tokens": "x", "tags": []}'], ':1: expected a prediction of eer-ner predict: "tokens", "spans"'),
        # another step's file: what it is and the fix (tag it first)
        (
            ['{"id": "a", "text": "Paris ."}'],
            ":1: a document without predictions \\(eer-ner predict's input\\); " + re.escape(TAG_FIRST),
        ),
        (
            ['{"id": "a", "tokens": ["Paris"], "sentence_ends": [1], "spans": [[0, 1, "LOC"]]}'],
            ":1: annotations \\(eer-import's or eer-dictionary's training format",
        ),
        (
            ['{"text": "Paris .", "label": [[0, 5, "LOC"]]}'],
            ":1: an annotation tool's record .*eer-ner eer-import TOOL",
        ),
        (
            ["Paris B-LOC", ". O"],
            ":1: invalid JSON .*: not JSON lines; eer-export reads the JSON lines of eer-ner predict",
        ),
        (
            [
                '{"id": "a", "tokens": ["x"], "spans": [{"start": 0, "end": 2, "type": "PER", "probability": 1}], "sentence_ends": [1]}'
            ],
            ":1: spans\\[0\\] covers words 0-2 of a document of 1 words",
        ),
        (['{"line": 1, "id": null, "error": "bad"}'], "no predicted documents in this file \\(1 error records\\)"),
        # an id predict never writes (it keeps a string or an integer id, else null): never written as its str()
        *(
            (
                [f'{{"id": {value}, "tokens": ["x"], "spans": [], "tags": ["O"], "sentence_ends": [1]}}'],
                ':1: "id" must be a string, an integer or null',
            )
            for value in ("[1]", '{"a": 1}', "true", "1.5", "NaN")
        ),
    ],
)
def test_bad_predictions_are_one_error_naming_the_line(lines, message, tmp_path, capsys):
    source = tmp_path / "p.jsonl"
    source.write_text("\n".join(lines) + "\n")
    with pytest.raises(SystemExit):
        eer_export.main(["prodigy", str(source), str(tmp_path / "out.jsonl")])
    assert capsys.readouterr().err.startswith("eer-export: error: ") and not (tmp_path / "out.jsonl").exists()
    with pytest.raises(PredictionsError, match=message):
        read_predictions(source)


@pytest.mark.parametrize("value", [0, -3, "0", ""])
def test_every_id_predict_writes_is_kept_and_only_a_missing_one_is_named_by_the_line(value, tmp_path):
    """predict takes integer ids and writes them back; 0 is an id like any other (not "no id")."""
    source = tmp_path / "p.jsonl"
    record = {"id": value, "tokens": ["x"], "spans": [], "tags": ["O"], "sentence_ends": [1]}
    source.write_text(json.dumps(record) + "\n" + json.dumps(dict(record, id=None)) + "\n")
    documents, _ = read_predictions(source)
    assert [d.id for d in documents] == [str(value) if value != "" else "p-1", "p-2"]


def test_an_unsafe_brat_id_is_refused_before_anything_is_written(tmp_path):
    source = tmp_path / "p.jsonl"
    source.write_text('{"id": "../escape", "tokens": ["x"], "spans": [], "sentence_ends": [1]}\n')
    with pytest.raises(PredictionsError, match="'../escape' is no safe relative file name"):
        export("brat", source, tmp_path / "brat")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl"]


@pytest.mark.parametrize("parts", [["x"], ["news", "x"], ["x", "news"]])
@pytest.mark.parametrize("letter", ["a", "é", "東"])
def test_a_brat_id_too_long_for_a_file_name_is_refused_naming_its_line(parts, letter, tmp_path):
    """brat writes ``<id>.txt`` and ``<id>.ann``: an id part longer than a file name may be (255 bytes with the
    suffix; a CJK character takes 3) is one error naming the line and the fix, not the temporary directory's
    path that the system refused; a part one byte shorter is written."""
    source = tmp_path / "p.jsonl"
    fits = (NAME_MAX - len(".ann")) // len(letter.encode("utf-8"))
    for length, refused in ((fits, False), (fits + 1, True)):
        ident = "/".join(letter * length if part == "x" else part for part in parts)
        record = {"id": ident, "tokens": ["x"], "spans": [], "tags": ["O"], "sentence_ends": [1]}
        source.write_text(json.dumps({"id": "first", **{k: v for k, v in record.items() if k != "id"}}) + "\n")
        source.write_text(source.read_text() + json.dumps(record) + "\n")
        if refused:
            with pytest.raises(PredictionsError, match=r"p\.jsonl:2: .* more than the 255 a file name may have"):
                export("brat", source, tmp_path / "brat")
            assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl"]
        else:
            export("brat", source, tmp_path / "brat")
            assert (tmp_path / "brat" / f"{ident}.ann").is_file()
            __import__("shutil").rmtree(tmp_path / "brat")


def test_prodigy_tasks_no_annotator_answered_are_refused_not_imported_complete(predictions, tmp_path):
    """eer-export prodigy's tasks (a model's spans, no 'answer') given to eer-import before anyone annotated them,
    or any task of a db-out export whose 'answer' is gone: read as manual accepts, the model's guesses would be
    complete documents (every other word an observed O). Each is an error naming its line."""
    from eer_plugin.corpus.importers import AnnotationImportError

    exported = tmp_path / "tasks.jsonl"
    assert eer_export.main(["prodigy", str(predictions), str(exported)]) == 0
    with pytest.raises(AnnotationImportError, match=r"tasks\.jsonl:1: .*no 'answer', so no annotator saw this task"):
        import_documents("prodigy", exported, tokenize_text)
    tasks = FIXTURES.joinpath("import", "prodigy.jsonl").read_text().splitlines()
    for number in range(1, len(tasks) + 1):
        lines = [json.loads(t) for t in tasks]
        del lines[number - 1]["answer"]
        (tmp_path / "db-out.jsonl").write_text("".join(json.dumps(t) + "\n" for t in lines))
        with pytest.raises(AnnotationImportError, match=rf"db-out\.jsonl:{number}: .*no 'answer'"):
            import_documents("prodigy", tmp_path / "db-out.jsonl", tokenize_text)


@pytest.mark.parametrize("case", ["output is the input", "brat directory not empty", "option of another format"])
def test_bad_outputs_and_options_touch_nothing(case, predictions, tmp_path, capsys):
    argv = {
        "output is the input": ["doccano", str(predictions), str(predictions)],
        "brat directory not empty": ["brat", str(predictions), str(tmp_path)],
        "option of another format": ["doccano", str(predictions), str(tmp_path / "d.jsonl"), "--to-name", "body"],
    }[case]
    before = predictions.read_bytes()
    (tmp_path / "keep.txt").write_text("earlier work")
    with pytest.raises(SystemExit):
        eer_export.main(argv)
    error = capsys.readouterr().err
    assert error.startswith("eer-export: error: ") and len(error.splitlines()) == 1, error
    assert predictions.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_two_types_brat_would_write_alike_are_refused_before_anything_is_written(tmp_path):
    source = tmp_path / "p.jsonl"
    spans = [{"type": "A B", "start": 0, "end": 1, "probability": 0.5}]
    source.write_text(
        json.dumps({"id": "x", "tokens": ["a", "b"], "spans": spans, "sentence_ends": [2]})
        + "\n"
        + json.dumps({"id": "y", "tokens": ["a", "b"], "spans": [dict(spans[0], type="A_B")], "sentence_ends": [2]})
        + "\n"
    )
    with pytest.raises(PredictionsError, match="entity types 'A B' and 'A_B' would both be 'A_B' in brat") as info:
        export("brat", source, tmp_path / "brat")
    assert info.value.line == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl"]
