"""A file name (or any value a message names as it is) holding a line break, a carriage return, an ANSI escape or a
bidirectional override must not break a command's one error line or act on the terminal: the one error printer and
the one warning printer write those characters as their Python escapes (:func:`eer_plugin.common.errors.printable`),
for every command, and leave every other character (letters of any script) as it is."""

import random
import re
from pathlib import Path

import pytest
from test_error_lines import BAD_INPUTS, _workplace

from eer_plugin.commands import subcommand
from eer_plugin.common import errors

#: every character the printers escape, by kind
UNPRINTABLE = {
    "C0": [chr(c) for c in range(0x20)],
    "DEL and C1": [chr(c) for c in range(0x7F, 0xA0)],
    "separators": ["\u2028", "\u2029"],
    "bidi": [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))],
}
ALL_UNPRINTABLE = [c for kind in UNPRINTABLE.values() for c in kind]
#: characters that stay: letters of several scripts, marks, emoji, zero-width joiner, NBSP, a backslash
KEPT = list("aZé中ع\u0301🙂\u200d\u00a0\\'\" ")
RAW = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _name(rng: random.Random) -> str:
    """A file name with at least one unprintable character among printable ones (never ``/`` or NUL: no file system
    takes them in a name)."""
    chars = [rng.choice(KEPT) for _ in range(rng.randint(0, 6))]
    for _ in range(rng.randint(1, 3)):
        chars.insert(rng.randint(0, len(chars)), rng.choice([c for c in ALL_UNPRINTABLE if c != "\x00"]))
    return "in" + "".join(chars) + ".jsonl"


@pytest.mark.parametrize("kind", sorted(UNPRINTABLE))
def test_each_unprintable_character_is_its_escape_and_the_rest_stays(kind):
    for char in UNPRINTABLE[kind]:
        shown = errors.printable(f"a{char}b")
        assert shown == "a" + repr(char)[1:-1] + "b" and not RAW.search(shown) and len(shown.splitlines()) == 1
    assert errors.printable("".join(KEPT)) == "".join(KEPT)


def test_generated_text_prints_as_one_line_that_shows_what_is_there():
    rng = random.Random(53)
    for _ in range(500):
        text = "".join(rng.choice(ALL_UNPRINTABLE + KEPT) for _ in range(rng.randint(0, 20)))
        shown = errors.printable(text)
        assert not RAW.search(shown) and len(shown.splitlines()) <= 1
        # each unprintable character its own escape, in place; every other character as it was
        assert shown == "".join(repr(c)[1:-1] if c in ALL_UNPRINTABLE else c for c in text)


def test_the_warning_printer_writes_one_line(capsys):
    errors.print_warning("file a\nb\x1b[2J.tsv: line 3\r ignored")
    err = capsys.readouterr().err
    assert err == "warning: file a\\nb\\x1b[2J.tsv: line 3\\r ignored\n"


def test_commands_print_their_warnings_through_the_one_printer():
    """No command module writes its own ``warning:`` line (it would print a file name's line break as it is)."""
    commands = Path(subcommand.__file__).parent
    own = [p.name for p in commands.glob("*.py") if re.search(r"print\(f?[\"']warning: ", p.read_text())]
    assert own == []


@pytest.mark.parametrize("name", sorted(set(subcommand.descriptions()) - {"eer-settings", "eer-records"}))
def test_a_missing_file_with_an_unprintable_name_is_one_error_line(name, tmp_path, monkeypatch, capsys):
    """Every command's error for a missing input named with control, separator or bidi characters (generated)."""
    monkeypatch.chdir(_workplace(tmp_path))
    monkeypatch.delenv("EER_TRACEBACK", raising=False)
    rng = random.Random(name)
    for _ in range(3):
        missing = _name(rng)
        arguments = [missing if argument.startswith("missing") else argument for argument in BAD_INPUTS[name]]
        try:
            status = subcommand.main_of(name)(arguments, prog=f"tool {name}")
        except SystemExit as exited:
            status = exited.code
        err = capsys.readouterr().err
        assert status == 1 and err.startswith(f"tool {name}: error: "), err[-2000:]
        assert err.endswith("\n") and "\n" not in err[:-1] and not RAW.search(err[:-1]), repr(err[-2000:])
        if name != "serve":  # without the serve extra its line names the extra, not the file
            # as the printer shows it, or quoted as a Python string (a message that quotes the name with !r)
            shown = (errors.printable(missing), repr(missing)[1:-1])
            assert any(form in err for form in shown), (missing, err[-2000:])
