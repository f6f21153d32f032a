"""Bad input, left over: the labels of one region (a Label Studio result, a doccano or Prodigy span, a brat ``T`` line).

Label Studio writes the labels selected on a region as a list (``value.labels``). Before, a region with an empty list
was dropped unseen, a string (``"PER"``) was read as a list of one, and a region with two labels was an "overlapping
spans ... 'r1' and 'r1'" error. Now a region without a label is skipped with a warning naming the file, the task's line
and the region, counted in the summary (an error in a complete document, where its words would be taught as ``O``);
``value.labels`` that is no list, or holds several labels, is a one-line error saying what was expected. The other
importers take one label's name per span: a list there (empty, of one, of several) is an error saying a span takes one
type, and two spans giving the same words two types say so instead of "overlapping"."""

import json

import pytest
from test_entity_types import _export, _import, _status
from test_importers import jsonl, write

from eer_plugin.commands import eer_import
from eer_plugin.corpus.importers import AnnotationImportError, import_documents, read_ids
from eer_plugin.corpus.tokenizer import tokenize_text

TEXT = "Anna saw Rome."


def _result(labels, region_id="r1", start=0, end=4) -> dict:
    value = {"start": start, "end": end, "text": TEXT[start:end]}
    if labels is not ...:
        value["labels"] = labels
    result = {"from_name": "label", "to_name": "text", "type": "labels", "value": value}
    return dict(result, id=region_id) if region_id is not None else result


def _label_studio(tmp_path, *annotations, name="export.json"):
    """A Label Studio export whose one task (id 2, on line 2) has ``annotations``, each a list of results."""
    task = {
        "id": 2,
        "data": {"text": TEXT},
        "annotations": [{"id": number, "result": results} for number, results in enumerate(annotations, 1)],
    }
    return write(tmp_path, name, "[\n" + json.dumps(task) + "\n]\n")


def _one_line_error(format, path, capsys, *options) -> str:
    out = path.parent / "out.jsonl"
    out.write_text("previous\n")
    status = _status(eer_import.main, [format, path, out, *options])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("eer-import: error:")]
    assert status == 1 and len(errors) == 1 and "Traceback" not in err, err
    assert errors[0].count(str(path)) == 1, errors[0]
    assert out.read_text() == "previous\n"  # nothing written
    return errors[0]


# ----------------------------------------------------------------------------------- 1. a region without a label
#: name -> the annotations of the task (the unlabelled region is result 'r1' of annotation 1, or result 0 unnamed)
UNLABELLED = {
    "alone": ([_result([])],),
    "beside a labelled region": ([_result([]), _result(["LOC"], "r2", 9, 13)],),
    "without a result id": ([_result([], region_id=None), _result(["LOC"], "r2", 9, 13)],),
    "over a labelled one's words": ([_result(["PER"], "r0"), _result([])],),
}


@pytest.mark.parametrize("annotations", list(UNLABELLED.values()), ids=list(UNLABELLED))
def test_a_region_without_a_label_is_skipped_with_a_warning_and_counted(annotations, tmp_path):
    path = _label_studio(tmp_path, *annotations)
    [document], report = import_documents("label-studio", path, tokenize_text)
    labelled = [r for r in annotations[0] if r["value"]["labels"]]
    assert [(document.tokens[s], t) for s, _, t in document.spans] == [
        (TEXT[r["value"]["start"] : r["value"]["end"]], r["value"]["labels"][0]) for r in labelled
    ]
    [(position, unlabelled)] = [(p, r) for p, r in enumerate(annotations[0]) if not r["value"]["labels"]]
    region = f"result {unlabelled['id']!r}" if "id" in unlabelled else f"result {position}"
    [warning] = report.warnings
    assert warning == (
        f"{path}:2: document '2': region {region} of annotation 1 [0, 4) 'Anna' has no label; skipped (its words stay "
        "unannotated): label the region or delete it"
    )
    assert report.skipped == {"regions without a label": 1}
    assert "skipped: 1 regions without a label" in report.summary() and "1 warning" in report.summary()


def test_every_region_without_a_label_is_counted_across_annotators(tmp_path, capsys):
    path = _label_studio(tmp_path, [_result([])], [_result([], "r9"), _result(["PER"], "r3")])
    documents, report = import_documents("label-studio", path, tokenize_text, annotators="union")
    assert documents[0].spans == [(0, 1, "PER")] and report.skipped == {"regions without a label": 2}
    assert [w.split(" [0, 4)")[0] for w in report.warnings] == [
        f"{path}:2: document '2': region result 'r1' of annotation 1",
        f"{path}:2: document '2': region result 'r9' of annotation 2",
    ]
    out = tmp_path / "out.jsonl"  # the command: the warnings on stderr, the count in its summary line
    assert eer_import.main(["label-studio", str(path), str(out), "--annotators", "union"]) == 0
    printed = capsys.readouterr()
    assert printed.err.count("has no label; skipped") == 2 and "skipped: 2 regions without a label" in printed.out


@pytest.mark.parametrize("how", ["--complete", "--complete-ids"])
def test_a_region_without_a_label_in_a_complete_document_is_an_error(how, tmp_path, capsys):
    path = _label_studio(tmp_path, [_result([]), _result(["LOC"], "r2", 9, 13)])
    ids = write(tmp_path, "ids.txt", "2\n")
    options = [how] if how == "--complete" else [how, str(ids)]
    error = _one_line_error("label-studio", path, capsys, *options)
    assert error == (
        f"eer-import: error: {path}:2: document '2': region result 'r1' of annotation 1 [0, 4) 'Anna' has no label, and the "
        "document is complete: its words would be taught as O (no entity); label the region or delete it"
    )
    with pytest.raises(AnnotationImportError, match="has no label, and the document is complete"):
        import_documents("label-studio", path, tokenize_text, complete_ids=read_ids(ids))


# ----------------------------------------------------------------------------------- 2. labels that are no list
NOT_LISTS = {"string": "PER", "empty string": "", "null": None, "integer": 7, "object": {"PER": 1}, "true": True}


@pytest.mark.parametrize("labels", list(NOT_LISTS.values()), ids=list(NOT_LISTS))
def test_labels_that_are_no_list_are_an_error_saying_a_list_of_one_label(labels, tmp_path, capsys):
    path = _label_studio(tmp_path, [_result(["LOC"], "r0", 9, 13), _result(labels)])
    error = _one_line_error("label-studio", path, capsys)
    example = f"['{labels}']" if isinstance(labels, str) else "['PER']"
    assert error.startswith(
        f"eer-import: error: {path}:2: document '2': result 'r1' of annotation 1: value.labels must be a list of one label, such "
        f"as {example}, got {labels!r} (Label Studio writes a list"
    ), error


def test_labels_missing_are_still_the_error_of_before(tmp_path, capsys):
    error = _one_line_error("label-studio", _label_studio(tmp_path, [_result(...)]), capsys)
    assert "result 0 of type 'labels' needs value.start, value.end and value.labels" in error


# ----------------------------------------------------------------------------------- 3. several labels on a region
SEVERAL = [["PER", "ORG"], ["PER", "PER"], ["PER", "ORG", "LOC"], [f"T{i}" for i in range(7)], ["PER", []]]


@pytest.mark.parametrize("labels", SEVERAL, ids=[str(len(x)) + "-" + "".join(map(str, x))[:12] for x in SEVERAL])
@pytest.mark.parametrize("annotators", ["first", "union"])
def test_a_region_with_several_labels_says_a_span_takes_one_type(labels, annotators, tmp_path, capsys):
    path = _label_studio(tmp_path, [_result(labels)])
    error = _one_line_error("label-studio", path, capsys, "--annotators", annotators)
    shown = ", ".join(repr(x) for x in labels[:5]) + (", ..." if len(labels) > 5 else "")
    assert error == (
        f"eer-import: error: {path}:2: document '2': result 'r1' of annotation 1 carries {len(labels)} labels ({shown}) on one "
        'region; a span takes one type: keep one label on the region (the labelling config\'s choice="multiple" '
        "allows several)"
    )
    assert "overlapping" not in error


def test_one_label_per_region_still_imports_and_two_annotators_disagreeing_say_two_types(tmp_path, capsys):
    path = _label_studio(tmp_path, [_result(["PER"]), _result(["LOC"], "r2", 9, 13)])
    [document], report = import_documents("label-studio", path, tokenize_text)
    assert document.spans == [(0, 1, "PER"), (2, 3, "LOC")] and not report.warnings and not report.skipped
    path = _label_studio(tmp_path, [_result(["PER"])], [_result(["ORG"])], name="two.json")
    error = _one_line_error("label-studio", path, capsys, "--annotators", "union")
    assert "result 'r1' of annotation 2 [0, 4) ORG 'Anna' and span result 'r1' of annotation 1 [0, 4) PER" in error
    assert "give words 0-1 two types (ORG, PER); a span takes one type: keep one of them" in error, error


# ----------------------------------------------------------------------------------- 4. the other importers
#: a label that is no one name -> what the error adds
LIST_LABELS = {"empty list": [], "list of one": ["PER"], "list of two": ["PER", "ORG"]}
#: format -> the export's line 2 with one span labelled ``label`` (test_entity_types' exports)
FORMATS = ["doccano", "doccano entities", "prodigy", "prodigy binary reject"]


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("label", list(LIST_LABELS.values()), ids=list(LIST_LABELS))
def test_a_list_where_a_span_takes_one_label_is_an_error_saying_so(format, label, tmp_path, capsys):
    path = _export(format, label, tmp_path)
    status, err, out = _import(format, path, capsys)
    [error] = [line for line in err.splitlines() if line.startswith("eer-import: error:")]
    assert status == 1 and out.read_text() == "previous\n"
    assert (
        error.startswith(f"eer-import: error: {path}:2: document ")
        and (
            f"the type must be a string (the label's name), got {label!r} (a list of labels? a span takes one type: give "
            "one label's name)"
        )
        in error
    ), error


TWO_TYPES = {
    "doccano": lambda path: jsonl(path, "e.jsonl", [{"id": 7, "text": TEXT, "label": [[0, 4, "PER"], [0, 4, "ORG"]]}]),
    "doccano entities": lambda path: jsonl(
        path,
        "e.jsonl",
        [
            {
                "id": 7,
                "text": TEXT,
                "entities": [{"start_offset": 0, "end_offset": 4, "label": t} for t in ("PER", "ORG")],
            }
        ],
    ),
    "prodigy": lambda path: jsonl(
        path,
        "e.jsonl",
        [
            {"text": TEXT, "_input_hash": 7, "_view_id": "ner_manual", "answer": "accept", "spans": [s]}
            for s in ({"start": 0, "end": 4, "label": "PER"}, {"start": 0, "end": 4, "label": "ORG"})
        ],
    ),
    "brat": lambda path: (
        write(path, "d/e.txt", TEXT),
        write(path, "d/e.ann", "T1\tPER 0 4\tAnna\nT2\tORG 0 4\tAnna\n"),
    )[1],
    "snapped onto the same word": lambda path: jsonl(
        path, "e.jsonl", [{"id": 7, "text": TEXT, "label": [[0, 4, "PER"], [1, 3, "ORG"]]}]
    ),
}


@pytest.mark.parametrize("case", list(TWO_TYPES))
def test_two_types_on_the_same_words_say_a_span_takes_one_type(case, tmp_path, capsys):
    path = TWO_TYPES[case](tmp_path)
    format = "doccano" if case.startswith(("doccano", "snapped")) else case
    error = _one_line_error(format, path, capsys)
    assert "give words 0-1 two types (ORG, PER); a span takes one type: keep one of them" in error, error
    assert "overlapping" not in error


def test_brat_takes_one_type_per_span_by_its_shape(tmp_path, capsys):
    """A brat type is one word before the offsets: two types, or none, is no T line (the error of before)."""
    write(tmp_path, "b/e.txt", TEXT)
    for line in ("T1\tPER ORG 0 4\tAnna", "T1\t 0 4\tAnna", "T1\t0 4\tAnna"):
        ann = write(tmp_path, "b/e.ann", line + "\n")
        error = _one_line_error("brat", ann, capsys)
        assert error.startswith(f"eer-import: error: {ann}:1: document 'e': expected a text-bound annotation"), error


# ------------------------------------------------------------ 2. a region whose words are not the task's text there
#: name -> (value.text the annotator marked, whether the import warns): the task's text at [0, 4) is 'Anna'
MARKED = {
    "the same words": ("Anna", False),
    "other white space": (" Anna\n", False),
    "no value.text (a task written by a script)": (None, False),
    "other words (the task's text was edited)": ("Bert", True),
    "a shorter name": ("Ann", True),
}


@pytest.mark.parametrize("marked, warns", list(MARKED.values()), ids=list(MARKED))
def test_a_region_whose_text_is_not_the_tasks_there_is_a_warning_naming_the_line(marked, warns, tmp_path):
    """The check lives in the importer, so ``eer-import label-studio`` and the Label Studio backend's training both
    warn; the span is kept at its offsets (the export's own)."""
    region = _result(["PER"])
    if marked is None:
        del region["value"]["text"]
    else:
        region["value"]["text"] = marked
    path = _label_studio(tmp_path, [region])
    [document], report = import_documents("label-studio", path, tokenize_text)
    assert [(document.tokens[s], t) for s, _, t in document.spans] == [("Anna", "PER")]
    moved = [w for w in report.warnings if "changed after it was annotated" in w]
    assert moved == (
        [f"{path}:2: task '2': result 'r1' of annotation 1: the region {marked!r} [0, 4) reads 'Anna': the task's text "
         "changed after it was annotated"]
        if warns
        else []
    )  # fmt: skip
