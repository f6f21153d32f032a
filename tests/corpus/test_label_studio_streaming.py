"""eer-import label-studio reads the export's JSON list one task at a time (strict_json.list_elements): memory
does not grow with the number of tasks, the documents are those of the export parsed whole, and a bad export is
the error of the export parsed whole (class, message, line), with no output written.

The reference is the reader before the change, kept here: the export parsed whole by strict_json.loads, then
each task converted as the importer converts it."""

import codecs
import dataclasses
import json
import os
import random
import re

import pytest
from generated_corpora import character_spans, text
from work_counter import peak_memory

from eer_plugin.corpus import strict_json
from eer_plugin.corpus.formats import FormatError, decode_file
from eer_plugin.corpus.importers import AnnotationImportError, ImportReport, label_studio
from eer_plugin.corpus.importers.files import import_file

BLOCK = 64 * 1024  # the blocks the files are read in: the generated exports below run past one


def _whole_parse_read(path, report, file_encoding="auto", annotators="first", text_key=None):
    """label_studio.read before the change: the export parsed whole, then its tasks converted."""
    try:
        tasks = strict_json.loads(decode_file(path, file_encoding, json=True))
    except strict_json.JsonError as err:
        lines = (
            "; the file is JSON lines (a value per line), not Label Studio's JSON export (one list of tasks): a doccano "
            "or Prodigy export is imported with that format"
        )
        raise AnnotationImportError(f"{err}" + (lines if "Extra data" in str(err) else ""), path, err.line) from None
    if isinstance(tasks, dict) and "annotations" in tasks:
        tasks = [tasks]
    if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
        raise AnnotationImportError("expected the Label Studio JSON export: a list of task objects", path)
    for index, task in enumerate(tasks):
        yield label_studio.task_document(task, index, report, path, annotators, text_key)


def _outcome(read, path, **options):
    """(documents, what the report counted) of a reader, or (the error's class, message, line). The documents
    without the line their task starts on, which the reader before the change did not know (see
    test_every_task_names_the_line_it_starts_on)."""
    report = ImportReport("label-studio")
    try:
        documents = [dataclasses.replace(d, line=None) for d in read(path, report, **options)]
        return documents, dict(report.skipped)
    except FormatError as error:
        return type(error), str(error), error.line


# ------------------------------------------------------------------------------------------ generated exports
#: characters of the generated strings: JSON's own punctuation, escapes, white space and text beyond ASCII
CHARACTERS = list('abc XYZ[]{},:"\\/') + ["\n", "\t", "\u2028", "é", "€", "😀", "\\u", "\\n"]


def _string(rng):
    return "".join(rng.choice(CHARACTERS) for _ in range(rng.randrange(12)))


def _task(rng, index):
    words = text(rng.randrange(1, 4))
    spans = [s for s in character_spans(3) if s[1] <= len(words)]
    result = [
        {"id": _string(rng), "from_name": "label", "to_name": "text", "type": "labels",
         "value": {"start": s, "end": e, "text": words[s:e], "labels": [t]}}
        for s, e, t in spans
    ]  # fmt: skip
    result.append({"id": "c", "type": "choices", "value": {"choices": [_string(rng), 1.5e-3, None, True]}})
    annotations = [{"id": index, "was_cancelled": rng.random() < 0.1, "result": result}]
    if rng.random() < 0.3:
        annotations.append({"id": -index, "result": result[:1], "lead_time": 12.25})
    task = {"id": index if rng.random() < 0.8 else _string(rng) + str(index), "data": {"text": words + _string(rng)}}
    return dict(task, annotations=annotations, meta={_string(rng): _string(rng) for _ in range(3)}, predictions=[])


def _spaced(value, rng) -> str:
    """``value`` as JSON, with random white space between its tokens and strings escaped or not at random."""
    space = lambda: rng.choice(["", "", " ", "\n", "\n  ", "\t", "\r\n", " \n\t "])  # noqa: E731
    if isinstance(value, dict):
        items = [f"{space()}{_spaced(k, rng)}{space()}:{space()}{_spaced(v, rng)}{space()}" for k, v in value.items()]
        return "{" + (",".join(items) or space()) + "}"
    if isinstance(value, list):
        return "[" + (",".join(space() + _spaced(v, rng) + space() for v in value) or space()) + "]"
    return json.dumps(value, ensure_ascii=rng.random() < 0.5)


def _export(rng, tasks) -> str:
    return "\n" * rng.randrange(3) + _spaced([_task(rng, i) for i in range(tasks)], rng) + rng.choice(["", "\n"])


def _task_starts(export: str):
    """Where the tasks of an export of :func:`_export` start (their opening brace)."""
    return [found.start() for found in re.finditer(r'\{\s*"id"\s*:[^{]*"data"', export)]


def _write(tmp_path, name, content: str):
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8"))
    return path


@pytest.mark.parametrize("seed", range(4))
def test_generated_exports_give_the_documents_of_the_export_parsed_whole(tmp_path, seed):
    rng = random.Random(seed)
    path = _write(tmp_path, "export.json", _export(rng, 150))
    assert path.stat().st_size > 2 * BLOCK
    documents, skipped = _outcome(label_studio.read, path, annotators=["first", "union"][seed % 2])
    assert (documents, skipped) == _outcome(_whole_parse_read, path, annotators=["first", "union"][seed % 2])
    assert len(documents) == 150


@pytest.mark.parametrize("mark", ["utf-8", "utf-16 LE with a mark", "utf-8 with a mark"])
def test_encodings_and_a_single_task_read_as_parsed_whole(tmp_path, mark):
    content = _export(random.Random(7), 60)
    encoded = {
        "utf-8": content.encode("utf-8"),
        "utf-16 LE with a mark": codecs.BOM_UTF16_LE + content.encode("utf-16-le"),
        "utf-8 with a mark": codecs.BOM_UTF8 + content.encode("utf-8"),
    }[mark]
    (tmp_path / "export.json").write_bytes(encoded)
    outcome = _outcome(label_studio.read, tmp_path / "export.json")
    assert len(outcome[0]) == 60 and outcome == _outcome(_whole_parse_read, tmp_path / "export.json")
    one = _write(tmp_path, "one.json", " \n" + _spaced(_task(random.Random(1), 3), random.Random(2)) + "\n")
    assert len(_outcome(label_studio.read, one)[0]) == 1
    assert _outcome(label_studio.read, one) == _outcome(_whole_parse_read, one)
    latin = tmp_path / "latin.json"  # a JSON file that is not UTF-8 is read as given
    latin.write_bytes(json.dumps([{"id": 1, "data": {"text": "Zürich"}, "annotations": []}]).encode("latin-1"))
    assert _outcome(label_studio.read, latin, file_encoding="latin-1")[0][0].text == "Zürich"
    assert _outcome(label_studio.read, latin, file_encoding="latin-1") == _outcome(
        _whole_parse_read, latin, file_encoding="latin-1"
    )


def test_an_undecodable_byte_is_an_error_before_any_document(tmp_path):
    path = tmp_path / "export.json"
    path.write_bytes(_export(random.Random(3), 100).encode("utf-8") + b"\n\xff\n")
    tasks = label_studio.read(path, ImportReport("label-studio"))
    with pytest.raises(FormatError, match="invalid UTF-8 byte 0xff") as raised:
        next(tasks)
    assert _outcome(_whole_parse_read, path) == (type(raised.value), str(raised.value), raised.value.line)


# ---------------------------------------------------------------------------------------------- bad exports
def _bad_exports(rng, good: str):
    """(what is wrong, the export's text, and where the bad task starts when what is wrong is one task's content,
    else None) of every kind of mistake, at random places of ``good``."""
    starts = _task_starts(good)
    for cut in sorted(rng.sample(range(len(good)), 25)):
        yield f"truncated at {cut}", good[:cut], None
    task = rng.choice(starts[1:])
    yield "repeated key", good[:task] + '{"data": {"text": "a", "text": "b"}, ' + good[task + 1 :], None
    inner = good.index('"value"', rng.choice(starts[1:]))
    yield "repeated key inside", good[:inner] + '"value": 1, ' + good[inner:], None
    yield "not an object", good[:task] + '"task", ' + good[task:], task
    yield "a number", good[:task] + "12e3 , " + good[task:], task
    yield "a list", good[:task] + "[1, 2] , " + good[task:], task
    yield "garbage after the list", good.rstrip() + "\n  ]", None
    yield "text after the list", good.rstrip() + ' {"id": 1}', None
    yield "missing comma", good[:task].rstrip().rstrip(",") + "\n " + good[task:], None
    yield "trailing comma", good.rstrip()[:-1].rstrip() + ",\n]", None
    yield "two commas", good[:task] + ", " + good[task:], None
    yield "a long number", good[:task] + '{"id": ' + "7" * 5000 + ", " + good[task + 1 :], None
    yield "too deep", good[:task] + "[" * 3000 + "]" * 3000 + ", " + good[task:], None
    yield "NaN id", good[:task] + '{"id": NaN, "data": {"text": "a"}}, ' + good[task:], task
    yield "JSON lines", "\n".join(json.dumps(_task(rng, i)) for i in range(30)) + "\n", None
    yield "empty", " \n ", None
    yield "empty list", "[ \n ]", None
    yield "an object, not a task", '{"data": {"text": "a"}}', 0
    yield "a byte-order mark twice", "\ufeff\ufeff" + good, None


@pytest.mark.parametrize("seed", range(3))
def test_bad_exports_are_the_errors_of_the_export_parsed_whole(tmp_path, seed):
    rng = random.Random(seed)
    good = _export(rng, 80)
    assert len(good.encode("utf-8")) > BLOCK
    for mistake, content, task in _bad_exports(rng, good):
        path = _write(tmp_path, "bad.json", content)
        streamed, whole = _outcome(label_studio.read, path), _outcome(_whole_parse_read, path)
        if len(whole) == 3 and whole[2] is None and streamed[2] is not None:
            # an error in a task's content: the reader before did not know the task's line, this one names it
            assert task is not None, mistake
            line = content.count("\n", 0, task) + 1
            whole = whole[0], whole[1].replace(f"{path}: ", f"{path}:{line}: ", 1), line
        assert streamed == whole, mistake


def _pretty_export(tasks):
    """An export of ``tasks`` as Label Studio writes it (indented), and the line each task starts on."""
    lines, starts = ["["], []
    for index, task in enumerate(tasks):
        starts.append(len(lines) + 1)
        lines.extend(("  " + json.dumps(task, indent=2) + ("," if index < len(tasks) - 1 else "")).split("\n"))
    return "\n".join(lines + ["]"]) + "\n", starts


def test_every_task_names_the_line_it_starts_on(tmp_path):
    """The documents carry their task's first line, and an error in a task's content names it (file:line)."""
    rng = random.Random(5)
    tasks = [_task(rng, i) for i in range(120)]
    content, starts = _pretty_export(tasks)
    assert len(content.encode("utf-8")) > 2 * BLOCK
    documents = list(label_studio.read(_write(tmp_path, "export.json", content), ImportReport("label-studio")))
    assert [d.line for d in documents] == starts
    for index, broken in ((0, {"annotations": {"result": []}}), (77, {"data": {"a": "x", "b": "y"}})):
        bad = [dict(t, **broken) if i == index else t for i, t in enumerate(tasks)]
        content, starts = _pretty_export(bad)
        path = _write(tmp_path, "bad.json", content)
        with pytest.raises(AnnotationImportError) as raised:
            list(label_studio.read(path, ImportReport("label-studio")))
        assert raised.value.line == starts[index] and str(raised.value).startswith(f"{path}:{starts[index]}: task ")


# ------------------------------------------------------------------------------ the list reader, any block size
def _streamed(content: str, rng):
    """list_elements of ``content`` in blocks of random sizes: (values, or the value) or (message, line)."""
    blocks, at = [], 0
    while at < len(content):
        size = rng.choice([1, 2, 3, 7, 64, 500])
        blocks.append(content[at : at + size])
        at += size
    try:
        is_list, elements = strict_json.list_elements(blocks)
        values = [value for _, value in elements]
        return values if is_list else values[0]
    except strict_json.JsonError as error:
        return str(error), error.line


def test_a_trailing_comma_is_named_where_python_names_it(monkeypatch):
    """Python 3.13 names a list's trailing comma itself (3.11: "Expecting value" at the bracket, as any value)."""
    monkeypatch.setattr(strict_json, "_TRAILING_COMMA", "Illegal trailing comma before end of array")
    with pytest.raises(strict_json.JsonError) as raised:
        list(strict_json.list_elements(["[1,\n", " 2 ,", "\n ]"])[1])
    assert (str(raised.value), raised.value.line) == (
        "invalid JSON at column 4: Illegal trailing comma before end of array",
        2,
    )


def _parsed_whole(content: str):
    try:
        return strict_json.loads(content)
    except strict_json.JsonError as error:
        return str(error), error.line


@pytest.mark.parametrize("seed", range(3))
def test_the_list_reader_is_loads_for_any_blocks_and_any_mistake(seed):
    """Every text cut in blocks of 1 to 500 characters: mistakes made by inserting or deleting one of JSON's
    characters anywhere, or by cutting the text."""
    rng = random.Random(seed)
    good = _spaced([_task(rng, i) for i in range(3)] + [1, -0.5e2, "s", None, [], {}], rng)
    assert _streamed(good, rng) == _parsed_whole(good)
    for _ in range(400):
        at = rng.randrange(len(good) + 1)
        change = rng.choice(['"', "[", "]", "{", "}", ",", ":", "\\", "x", "1", "-", "e", ".", " ", "\ufeff", ""])
        content = good[:at] + change + good[at + (change == "" or rng.random() < 0.5) :]
        assert _streamed(content, rng) == _parsed_whole(content), (at, change)
    assert [line for line, _ in strict_json.list_elements(["[\n1,\n\n", '  {"a":\n', "2}]"])[1]] == [2, 4]


# --------------------------------------------------------------------------------------- memory, atomic output
def _label_studio(path, tasks):
    spans = character_spans(5)
    content = [
        {"id": i, "data": {"text": text(5)},
         "annotations": [{"id": i, "result": [{"id": f"r{k}", "type": "labels", "value": {"start": s, "end": e, "labels": [t]}}
                                              for k, (s, e, t) in enumerate(spans)]}]}
        for i in range(tasks)
    ]  # fmt: skip
    path.write_text(json.dumps(content, indent=1), encoding="utf-8")
    return path


@pytest.mark.integration  # memory measured over generated corpora: seconds each, not a unit test
def test_memory_does_not_grow_with_the_number_of_tasks(tmp_path):
    import_file("label-studio", _label_studio(tmp_path / "first.json", 2), tmp_path / "out.jsonl")  # imports done
    peaks = {}
    for tasks in (100, 400):
        source = _label_studio(tmp_path / f"{tasks}.json", tasks)
        assert source.stat().st_size > 4 * BLOCK
        (result, _, _), peaks[tasks] = peak_memory(import_file, "label-studio", source, tmp_path / "out.jsonl")
        assert result["documents"] == tasks and result["spans"] == tasks * 15
    # measured: parsed whole (the reader before), the export's text and every task's objects stayed, 13.8 KB per
    # task of 3.0 KB of JSON (0.4 KB of text); one task at a time, what stays is its id (refused twice), 0.2 KB
    per_task = (peaks[400] - peaks[100]) / 300
    assert per_task < 1000, (peaks, per_task)


def test_a_bad_task_late_in_the_export_leaves_the_earlier_output(tmp_path):
    source = _label_studio(tmp_path / "export.json", 300)
    out = tmp_path / "out.jsonl"
    import_file("label-studio", source, out)
    before = out.read_bytes()
    content = source.read_text(encoding="utf-8")
    late = content.rindex('"id": 299')
    source.write_text(content[:late] + '"id": 299, "id": 300,' + content[late + len('"id": 299,') :], encoding="utf-8")
    with pytest.raises(AnnotationImportError) as raised:
        import_file("label-studio", source, out)
    assert _outcome(_whole_parse_read, source) == (AnnotationImportError, str(raised.value), raised.value.line)
    assert raised.value.line > 10000 and 'repeated key "id"' in str(raised.value) and "$[299]" in str(raised.value)
    assert out.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["export.json", "out.jsonl"]  # no temporary file left
    with pytest.raises(AnnotationImportError):
        import_file("label-studio", source, tmp_path / "new" / "out.jsonl")
    assert not (tmp_path / "new").exists()
