"""Issue 50: every JSON reader of the package refuses a key repeated in one object, at any nesting level and
for every field, naming the file, the line and the key (``eer_plugin/corpus/strict_json.py``); deep nesting
is one clear error, not a RecursionError. And (bad-input round 3) every reader refuses what Python's parser cannot
read (a number of more than 4300 digits, nesting too deep) and every value of the wrong type at any position (a
list for a number, NaN for an offset, ...) with its own error naming the file, never another exception.

The cases are generated: for each reader, a valid input and, for every object in it (at every depth) and
every key of that object, the same input with that key written twice (the first occurrence with another
value, so a reader that kept the last would silently lose data)."""

import json
from pathlib import Path
from typing import Any, Callable, Iterator, List, Tuple

import pytest
from conftest import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eer_plugin.common.errors import UserError
from eer_plugin.corpus import strict_json
from eer_plugin.corpus.documents import DocumentError

Path_ = Tuple[Any, ...]


def objects(value: Any, path: Path_ = ()) -> Iterator[Tuple[Path_, str]]:
    """``(path of an object, key)`` for every key of every object in ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield path, key
            yield from objects(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from objects(item, path + (index,))


def repeated(value: Any, target: Path_, key: str, path: Path_ = ()) -> str:
    """``value`` as JSON text, with ``key`` of the object at ``target`` written twice (first with another value)."""
    if isinstance(value, dict):
        items = [f"{json.dumps(k)}: {repeated(v, target, key, path + (k,))}" for k, v in value.items()]
        if path == target:
            items.insert(0, f"{json.dumps(key)}: {json.dumps(['another', 'value'])}")
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(repeated(v, target, key, path + (i,)) for i, v in enumerate(value)) + "]"
    return json.dumps(value)


def cases(value: Any) -> List[Tuple[str, str]]:
    """``(key, text)`` of every repeated-key variant of ``value``."""
    return [(key, repeated(value, target, key)) for target, key in objects(value)]


# ------------------------------------------------------------------------------------ the parser itself
def test_the_parser_names_the_key_and_where_it_repeats():
    with pytest.raises(strict_json.JsonError, match=r'repeated key "d" at column \d+ in the object at \$\.x\[1\]\.c'):
        strict_json.loads('{"x": [{"b": 1}, {"b": 1, "c": {"d": 1, "d": 2}}]}')
    with pytest.raises(strict_json.JsonError, match='repeated key "a" at column 10 in the top-level object') as error:
        strict_json.loads('{"a": 1, "a": 2}')
    assert error.value.line == 1
    text = '[\n {"a": 1},\n {"b": 1,\n  "b": 2}\n]'
    with pytest.raises(strict_json.JsonError) as error:
        strict_json.loads(text)
    assert error.value.line == 4  # a file parsed whole: the line of the second occurrence
    assert strict_json.loads('{"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}') == {"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}
    assert (
        strict_json.loads('{"a\\"": 1, "b": "{\\"a\\"\\": 2, \\"a\\"\\": 3}"}')["b"] == '{"a"": 2, "a"": 3}'
    )  # in strings: no key


@pytest.mark.parametrize("depth", [10_000, 100_000])
@pytest.mark.parametrize("opening", ["[", '{"a": '])
def test_deep_nesting_is_one_clear_error(depth, opening):
    with pytest.raises(strict_json.JsonError, match="nested too deeply"):
        strict_json.loads(opening * depth)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
        max_leaves=12,
    )
)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
def test_generated_values_parse_as_json_does_and_every_repeated_key_is_refused(value):
    text = json.dumps(value)
    assert strict_json.loads(text) == json.loads(text)
    for key, variant in cases(value):
        with pytest.raises(strict_json.JsonError) as error:
            strict_json.loads(variant)
        assert f"repeated key {json.dumps(key, ensure_ascii=False)}" in str(error.value)


# ------------------------------------------------------------------------------------ every reader
def _read_jsonl(path: Path) -> None:
    from eer_plugin.corpus.formats import read_documents

    read_documents(path)


def _import(format: str) -> Callable[[Path], None]:
    def read(path: Path) -> None:
        from eer_plugin.corpus.importers import ImportReport, read_raw_documents

        list(read_raw_documents(format, path, ImportReport(format)))

    return read


def _predictions(path: Path) -> None:
    from eer_plugin.corpus.exporters import read_predictions

    read_predictions(path)


def _ratio_estimate(path: Path) -> None:
    from eer_plugin.annotation.ratio_estimate import read_suggestion

    read_suggestion(str(path))


def _manifest(path: Path) -> None:
    from eer_plugin.inference.sharding import read_manifest

    read_manifest(str(path))


def _records(path: Path) -> None:
    from eer_benchmark.run.records import read_records

    read_records(path)


def _exported_settings(path: Path) -> None:
    from eer_plugin.inference.exported import read_settings

    read_settings(path.parent)


def _dictionary(path: Path) -> None:
    from eer_plugin.annotation.dictionary_files import dictionary_lines

    list(dictionary_lines(str(path)))


def _dictionary_input(path: Path) -> None:
    from eer_plugin.annotation.dictionary_input import read_input

    list(read_input(str(path)))


def _predict_document(path: Path) -> None:
    """predict's reading of one input line and its parsing into a document (what it tags or gives an error record)."""
    from eer_plugin.inference.documents import parse_input

    _predict_line(path)
    line = path.read_text(encoding="utf-8").strip()
    from eer_plugin.predictors.tagger import DocumentTaggerPredictor

    parse_input(DocumentTaggerPredictor.load_line(None, line))  # type: ignore[arg-type]


def _predict_line(path: Path) -> None:
    from eer_plugin.inference.documents import ERROR_KEY
    from eer_plugin.predictors.tagger import DocumentTaggerPredictor

    line = path.read_text(encoding="utf-8")
    data = DocumentTaggerPredictor.load_line(None, line)  # type: ignore[arg-type]  (uses no state)
    if ERROR_KEY in data:
        raise ValueError(f"{path}:1: {data[ERROR_KEY]}")


PREDICTION = {
    "id": "p1",
    "tokens": ["Peter", "Blackburn", "spoke"],
    "tags": ["B-PER", "L-PER", "O"],
    "spans": [{"type": "PER", "start": 0, "end": 2, "text": "Peter Blackburn", "probability": 0.9}],
    "sentence_ends": [3],
    "text": "Peter Blackburn spoke",
}
RECORD = {"dir": "runs/x", "files": {"result.json": "{}", "DONE": ""}}


def _fixture_line(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def _exported_settings_value() -> Any:
    from eer_plugin.core.tags import BiluoScheme

    size = len(BiluoScheme(["PER"]).labels)
    return {
        "format": "eer-ner exported tagger",
        "format_version": 1,
        "entity_types": ["PER"],
        "tags": list(BiluoScheme(["PER"]).labels),
        "allowed_transitions": [[True] * size] * size,
        "allowed_start": [True] * size,
        "allowed_end": [True] * size,
        "o_cost": 0.0,
    }


#: reader name -> (file name, valid value, reader, one JSON value per line (else the file is the value))
READERS = {
    "training data (read_jsonl)": (
        "train.jsonl",
        {
            "id": "d1",
            "tokens": ["Peter", "Blackburn"],
            "sentence_ends": [2],
            "spans": [[0, 2, "PER"]],
            "negative_spans": [[1, 2, "LOC"]],
        },
        _read_jsonl,
    ),
    "training data, authors' format": (
        "authors.jsonl",
        {"uid": "u1", "tokens": ["Peter", "Blackburn"], "gold_annotations": [{"start": 0, "end": 2, "type": "PER"}]},
        _read_jsonl,
    ),
    "doccano export": ("doccano.jsonl", _fixture_line(FIXTURES / "import" / "doccano.jsonl"), _import("doccano")),
    "prodigy export": ("prodigy.jsonl", _fixture_line(FIXTURES / "import" / "prodigy.jsonl"), _import("prodigy")),
    "label studio export": (
        "ls.json",
        json.loads((FIXTURES / "import" / "label_studio.json").read_text())[:1],
        _import("label-studio"),
    ),
    "predictions (eer-export)": ("pred.jsonl", PREDICTION, _predictions),
    "ratio estimate": (
        "ratio.json",
        {"suggested": {"entity_ratio": 0.1, "ratio_margin": 0.05}, "complete_documents": 3},
        _ratio_estimate,
    ),
    "shard manifest": (
        "in.shards.json",
        {
            "input": "in.jsonl",
            "documents": 2,
            "shards": [{"file": "a.jsonl", "first_line": 1, "lines": 2, "documents": 2, "sha256": "00"}],
        },
        _manifest,
    ),
    "benchmark records": ("records.jsonl", RECORD, _records),
    "exported model settings": ("eer_tagger.json", _exported_settings_value(), _exported_settings),
    "predict input line": ("in.jsonl", {"id": "x", "tokens": ["a", "b"], "sentence_ends": [1, 2]}, _predict_line),
    "predict input line, raw text": ("in.jsonl", {"id": "x", "text": "Peter Blackburn spoke"}, _predict_document),
    "predict input line, training format": (
        "in.jsonl",
        {
            "id": "d1",
            "tokens": ["Peter", "Blackburn", "spoke"],
            "spans": [[0, 2, "PER"]],
            "text": "Peter Blackburn spoke",
            "provenance": [{"start": 0, "end": 2, "type": "PER", "source": "names", "char_start": 0, "char_end": 15}],
        },
        _predict_document,
    ),
    "training data with provenance (read_jsonl)": (
        "train.jsonl",
        {
            "id": "d1",
            "tokens": ["Peter", "Blackburn", "spoke"],
            "sentence_ends": [3],
            "spans": [[0, 2, "PER"]],
            "negative_spans": [[2, 3]],
            "is_complete": False,
            "o_weights": [0.0, 0.0, 0.5],
            "text": "Peter Blackburn spoke",
            "provenance": [{"start": 0, "end": 2, "type": "PER", "source": "names", "char_start": 0, "char_end": 15}],
        },
        _read_jsonl,
    ),
    "dictionary (eer-dictionary --dictionary)": ("names.jsonl", {"text": "New York", "type": "LOC"}, _dictionary),
    "eer-dictionary input": ("docs.jsonl", {"id": "d1", "text": "Peter Blackburn spoke"}, _dictionary_input),
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_refuses_every_repeated_key_naming_file_line_and_key(reader, tmp_path):
    name, value, read = READERS[reader]
    path = tmp_path / name
    variants = cases(value)
    assert len(variants) >= 2, reader
    for key, text in variants:
        path.write_text("\n" + text + "\n", encoding="utf-8")  # the value on line 2
        with pytest.raises(Exception) as error:
            read(path)
        message = str(error.value)
        assert "repeated key" in message and json.dumps(key, ensure_ascii=False) in message, (reader, key, message)
        assert isinstance(error.value, (DocumentError, ValueError, UserError)), (reader, type(error.value))
        assert name in message, (reader, message)
        if not reader.startswith("predict input line"):  # predict's error records carry the line in their own field
            assert ":2:" in message or "line 2" in message, (reader, message)


def leaves(value: Any, path: Path_ = ()) -> Iterator[Path_]:
    """The path of every value in ``value`` that is neither an object nor a list."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, path + (index,))
    else:
        yield path


def replaced(value: Any, target: Path_, text: str, path: Path_ = ()) -> str:
    """``value`` as JSON text, with the value at ``target`` written as ``text``."""
    if path == target:
        return text
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(k)}: {replaced(v, target, text, path + (k,))}" for k, v in value.items())
            + "}"
        )
    if isinstance(value, list):
        return "[" + ", ".join(replaced(v, target, text, path + (i,)) for i, v in enumerate(value)) + "]"
    return json.dumps(value)


#: what may stand for any value and still be refused by the parser, whatever the reader: an integer longer than
#: Python converts (4300 digits; its ValueError is no JSONDecodeError), either sign, and nesting deeper than
#: Python's recursion limit
UNREADABLE_VALUES = {
    "integer of 5000 digits": ("9" * 5000, "a number of 5000 digits"),
    "negative integer of 4301 digits": ("-" + "1" * 4301, "a number of 4301 digits"),
    "arrays nested 20000 deep": ("[" * 20_000 + "]" * 20_000, "nested too deeply"),
    "objects nested 20000 deep": ('{"a": ' * 20_000 + "1" + "}" * 20_000, "nested too deeply"),
}


@pytest.mark.parametrize("unreadable", sorted(UNREADABLE_VALUES))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_refuses_a_value_python_cannot_read_naming_file_and_line(reader, unreadable, tmp_path):
    """Any value of any reader's input replaced by a number of more digits than Python converts, or by
    nesting deeper than its parser recurses: one error naming the file and the line, never a bare ValueError or
    RecursionError (a traceback, or a line naming no file)."""
    name, value, read = READERS[reader]
    text, expected = UNREADABLE_VALUES[unreadable]
    path = tmp_path / name
    for target in leaves(value):
        path.write_text("\n" + replaced(value, target, text) + "\n", encoding="utf-8")  # on line 2
        with pytest.raises((DocumentError, UserError, ValueError)) as error:
            read(path)
        message = str(error.value)
        assert expected in message and name in message, (reader, target, message[:300])
        assert "None" not in message, (reader, target, message[:300])  # no "FILE:None:" for a line not known
        if not reader.startswith("predict input line"):  # predict's error records carry the line in their own field
            assert ":2:" in message or "line 2" in message, (reader, target, message[:300])


def values(value: Any, path: Path_ = ()) -> Iterator[Path_]:
    """The path of every value inside ``value`` (objects and lists too), ``value`` itself not included."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield path + (key,)
        yield from values(item, path + (key,))


#: JSON values of every type, and the numbers Python's parser takes that no field of eer-ner means (NaN,
#: Infinity, a float beyond range, a fraction, a huge integer, minus zero)
WRONG_VALUES = (
    "null",
    "true",
    "false",
    "0",
    "-1",
    "1.5",
    "-0.0",
    "1e400",
    "NaN",
    "Infinity",
    "-Infinity",
    "100000000000000000000000000000",
    '""',
    '" "',
    '"PER"',
    "[]",
    "[1]",
    '["a", 1]',
    "[[]]",
    "{}",
    '{"a": 1}',
)


def _user_error(reader: str, error: BaseException) -> bool:
    """Whether ``error`` is the reader's own refusal: one of the package's errors (a ``DocumentError`` or
    ``UserError``, or a reader's own ``ValueError`` kind, such as predict's ``InputError``), or for the ratio
    estimate (its contract) a ``ValueError`` naming the file."""
    if isinstance(error, (DocumentError, UserError)) or type(error).__module__.startswith(
        ("eer_plugin", "eer_benchmark")
    ):
        return True
    return reader == "ratio estimate" and type(error) is ValueError


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_value_of_every_reader_replaced_by_a_wrong_one_is_read_or_refused_by_the_reader(reader, tmp_path):
    """Every value of a valid input (at any depth, objects and lists too) replaced in turn by each of
    :data:`WRONG_VALUES`: the reader reads the file, or refuses it with its own error naming the file (and the line,
    but for predict's lines, whose error records carry it), never an exception of Python's (a ``TypeError``
    from a list used as a key, a ``ValueError`` from ``int(NaN)``, an ``OverflowError`` from ``int(Infinity)``)."""
    name, value, read = READERS[reader]
    path = tmp_path / name
    for target in values(value):
        for wrong in WRONG_VALUES:
            path.write_text("\n" + replaced(value, target, wrong) + "\n", encoding="utf-8")  # on line 2
            try:
                read(path)
            except Exception as error:  # noqa: BLE001  (which exception is what the test checks)
                message = str(error)
                assert _user_error(reader, error), (reader, target, wrong, f"{type(error).__name__}: {message[:300]}")
                if reader.startswith("predict input line"):
                    continue
                assert name in message, (reader, target, wrong, message[:300])
                assert "None" not in message.split(": ")[0], (reader, target, wrong, message[:300])


def test_a_valid_input_still_reads_through_every_reader(tmp_path):
    """The generated variants fail for the repeated key, not because the base input is bad."""
    for reader, (name, value, read) in READERS.items():
        if reader in ("benchmark records", "exported model settings", "shard manifest", "predict input line"):
            continue  # valid but incomplete stand-ins (their readers check more than JSON); covered elsewhere
        path = tmp_path / name
        path.write_text(json.dumps(value) + "\n", encoding="utf-8")
        read(path)
