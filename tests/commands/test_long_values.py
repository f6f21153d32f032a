"""Over-long values in bad input, a class across every command: an error quotes what it found (a line of a
column file, a key, an entity type, an id), and a value without a line break can be megabytes (a file of another
kind, a JSON value on one line). The one error printer (:func:`eer_plugin.common.errors.print_error`) keeps each
error one readable line naming the file, the line and the fix, whatever the command and whatever it quotes
(a 50 MB line printed whole before); ``eer-inspect``'s per-file errors the same."""

import json

import pytest
from test_bad_inputs import one_line_error, run

from eer_plugin.commands import dictionary, eer_export, eer_import, simulate, split
from eer_plugin.common.errors import MESSAGE_LIMIT, shortened

LONG = 300_000
PARTIAL = {"id": "d1", "tokens": ["Kohl", "met", "Yeltsin"], "spans": [[0, 1, "PER"]]}


def _jsonl(*objects) -> str:
    return "".join(json.dumps(o) + "\n" for o in objects)


#: (what, file name, content with LONG characters of ``c`` in one value); every reader that quotes what it read
INPUTS = {
    "a column line without a tag": ("in.txt", lambda c: c * LONG + "\n"),
    "a column line of two long columns": ("in.txt", lambda c: f"{c * LONG} {c * LONG}\n"),
    "an unknown JSON key": ("in.jsonl", lambda c: _jsonl(dict(PARTIAL, **{c * LONG: 1}))),
    "an entity type with white space": ("in.jsonl", lambda c: _jsonl(dict(PARTIAL, spans=[[0, 1, c * LONG + " "]]))),
    "an entity type with tabs": ("in.jsonl", lambda c: _jsonl(dict(PARTIAL, spans=[[0, 1, (c + "\t") * LONG]]))),
    "a negative span's type": ("in.jsonl", lambda c: _jsonl(dict(PARTIAL, negative_spans=[[1, 2, " " + c * LONG]]))),
    "long sentence ends": ("in.jsonl", lambda c: _jsonl(dict(PARTIAL, sentence_ends=list(range(1, LONG // 4))))),
}
#: command -> (main, argv with IN and OUT, the inputs it reads)
COMMANDS = {
    "eer-split": (split.main, ["IN", "OUT", "dev.jsonl"], list(INPUTS)),
    "eer-simulate gold": (simulate.main, ["gold", "IN", "OUT"], list(INPUTS)),
    "eer-dictionary": (dictionary.main, ["IN", "OUT", "--dictionary", "names.tsv"], list(INPUTS)),
}


def _one_short_error(err: str, name: str) -> None:
    """:func:`one_line_error` naming ``name``, and no line of stderr longer than a shortened message."""
    one_line_error(err, name)
    assert all(len(line) < MESSAGE_LIMIT + 100 for line in err.splitlines()), max(map(len, err.splitlines()))


@pytest.mark.parametrize("character", ["a", "é", "東"])
@pytest.mark.parametrize("what", list(INPUTS))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_error_quoting_a_long_value_is_one_short_line(command, what, character, tmp_path, capsys):
    main, argv, inputs = COMMANDS[command]
    name, content = INPUTS[what]
    (tmp_path / name).write_text(content(character), encoding="utf-8")
    (tmp_path / "names.tsv").write_text("Kohl\tPER\n")
    (tmp_path / "out.jsonl").write_text("the earlier output\n")
    paths = {"IN": name, "OUT": "out.jsonl", "dev.jsonl": "dev.jsonl", "names.tsv": "names.tsv"}
    status, err = run(main, [tmp_path / paths[a] if a in paths else a for a in argv], capsys)
    assert status == 1
    _one_short_error(err, name)
    assert (tmp_path / "out.jsonl").read_text() == "the earlier output\n"


@pytest.mark.parametrize(
    "command, argv, name, content",
    [
        ("dictionary", ["docs.jsonl", "out.jsonl", "--dictionary", "IN"], "names.tsv", "a" * LONG + "\tB\tC\n"),
        ("dictionary", ["docs.jsonl", "out.jsonl", "--dictionary", "IN"], "names.tsv", "a\t" + "T\u00a0" * LONG + "\n"),
        ("import", ["doccano", "docs.jsonl", "out.jsonl", "--complete-ids", "IN"], "ids.txt", "x" * LONG + "\n"),
        (
            "import",
            ["doccano", "IN", "out.jsonl"],
            "in.jsonl",
            _jsonl({"text": "EU", "label": [[0, 2, "T" * LONG + " "]]}),
        ),
        ("export", ["prodigy", "IN", "out.jsonl"], "in.jsonl", _jsonl({"id": "a", "tokens": ["x" * LONG], "tags": 1})),
    ],
)
def test_every_reader_of_names_and_exports_keeps_its_errors_short(command, argv, name, content, tmp_path, capsys):
    main = {"dictionary": dictionary.main, "import": eer_import.main, "export": eer_export.main}[command]
    (tmp_path / name).write_text(content, encoding="utf-8")
    (tmp_path / "docs.jsonl").write_text(_jsonl({"id": "1", "text": "Kohl met Yeltsin."}))
    paths = {"IN": tmp_path / name, "docs.jsonl": tmp_path / "docs.jsonl", "out.jsonl": tmp_path / "out.jsonl"}
    status, err = run(main, [paths.get(a, a) for a in argv], capsys)
    assert status == 1 and not (tmp_path / "out.jsonl").exists()
    _one_short_error(err, name)


def test_shortened_keeps_the_start_and_the_end_and_counts_what_it_left_out():
    message = "in.txt:3: expected a tag, got '" + "x" * 5000 + "'; fix: give the tag in the last column"
    short = shortened(message)
    assert len(short) < MESSAGE_LIMIT + 60 and short.startswith("in.txt:3: expected a tag, got 'xxx")
    assert short.endswith("xx'; fix: give the tag in the last column")
    left_out = int(short.split(" ... (")[1].split(" characters left out")[0])
    assert len(short) - len(f" ... ({left_out} characters left out) ... ") + left_out == len(message)
    assert shortened("short") == "short" and shortened("x" * MESSAGE_LIMIT) == "x" * MESSAGE_LIMIT
