"""Document ids of every JSON export, generated: a string or an integer (3.0 read as 3) is the id as the tool shows
it; any other JSON value (true, false, a list, an object, 1.5) is one error naming the file, the line where the
format has lines, and the document, with nothing written (before, `true` became the id "True")."""

import json

import pytest

from eer_plugin.corpus.importers import AnnotationImportError, import_documents
from eer_plugin.corpus.tokenizer import tokenize_text

GOOD = [("a-7", "a-7"), (7, "7"), (3.0, "3"), (0, "0")]
BAD = [True, False, [1], {"id": 1}, 1.5]


def export(format, tmp_path, ids):
    """An export of ``format`` with one document per id (None: the id left out), as that tool writes it."""
    texts = [f"Anna lives in Paris {number} ." for number in range(len(ids))]  # Prodigy merges tasks of one text
    if format == "label-studio":
        tasks = [{"data": {"text": text}, "annotations": [{"result": []}]} for text in texts]
        for task, value in zip(tasks, ids):
            if value is not None:
                task["id"] = value
        path = tmp_path / "export.json"
        path.write_text("[\n" + ",\n".join(json.dumps(task) for task in tasks) + "\n]\n")  # task i on line i + 2
        return path
    rows = []
    for value, text in zip(ids, texts):
        row = {"text": text, "label": []} if format == "doccano" else {"text": text, "spans": [], "answer": "accept"}
        if value is not None:
            row["id"] = value
        rows.append(row)
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize("format", ["doccano", "prodigy", "label-studio"])
def test_ids_that_are_strings_or_integers_are_kept_as_the_tool_shows_them(format, tmp_path):
    values = [value for value, _ in GOOD] + [None]
    documents, _ = import_documents(format, export(format, tmp_path, values), tokenize_text)
    fallback = "task-4" if format == "label-studio" else "export-5"
    assert [d.id for d in documents] == [shown for _, shown in GOOD] + [fallback]


@pytest.mark.parametrize("format", ["doccano", "prodigy", "label-studio"])
@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_any_other_id_is_one_error_naming_file_line_and_document(format, bad, tmp_path):
    path = export(format, tmp_path, ["ok", 2, bad])
    with pytest.raises(AnnotationImportError, match=r"its id must be a string or an integer, got ") as info:
        import_documents(format, path, tokenize_text)
    assert info.value.path == str(path)
    if format == "label-studio":  # one JSON list: the line its task starts on, and the task's index
        assert info.value.line == 4 and "document task-2:" in str(info.value)
    else:
        assert info.value.line == 3 and "document export-3:" in str(info.value)
    assert json.dumps(bad)[:20] in str(info.value)
