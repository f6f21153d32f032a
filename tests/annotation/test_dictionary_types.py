"""A dictionary's types follow the one rule of every reader (``eer_plugin.corpus.documents.type_problem``):
``eer-dictionary`` takes a type exactly when the partial-annotation JSON lines it writes take it (after dropping the
white space at its ends, as a dictionary cell is read), so ``Product Name`` (a Label Studio label) labels text and
a no-break space inside a type is one line naming the file and line. Generated: every Unicode white-space character
at the start, inside and at the end of a type, and seeded random names."""

import json
import random
import re
import sys

import pytest

from eer_plugin.annotation.dictionary import label_file
from eer_plugin.annotation.dictionary_files import DictionaryError, dictionary_lines
from eer_plugin.commands import dictionary as command
from eer_plugin.corpus.documents import Document, DocumentError
from eer_plugin.corpus.formats import read_jsonl

WHITE_SPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


def generated_types():
    rng = random.Random(7)
    types = ["PER", "Product Name", "Product  Name", "B-PER", "O", "", " ", "o", "LOC ", " LOC"]
    for space in WHITE_SPACE:
        types += [f"{space}LOC", f"Prod{space}Name", f"LOC{space}"]
    alphabet = "ABCXYZaz09_-. \u00a0\u00e9\u4e2d"
    types += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(60)]
    return types


def reader_takes(label: str) -> bool:
    """Whether the partial-annotation JSON lines (what train reads) take a span of type ``label``."""
    try:
        Document.from_json({"id": "d", "tokens": ["Paris"], "spans": [[0, 1, label]]})
    except DocumentError:
        return False
    return True


def test_a_dictionary_takes_a_type_exactly_when_the_training_data_does(tmp_path):
    """Each generated type alone in a JSON-lines dictionary: read (``dictionary_lines``, what ``--dictionary`` reads)
    or refused in one line naming the file and line; then every taken type labels its own word of one document in
    one run, and the output is read back with those types."""
    taken, refused = [], 0
    for index, label in enumerate(generated_types()):
        names = tmp_path / f"names{index}.jsonl"
        names.write_text(json.dumps({"text": "Paris", "type": label}) + "\n")
        expected = reader_takes(label.strip())
        try:
            entries = list(dictionary_lines(str(names)))
        except DictionaryError as error:
            assert not expected, (label, str(error))
            assert str(error).startswith(f"{names}:1: bad type"), str(error)
            refused += 1
            continue
        assert expected and entries == [(1, "Paris", label.strip())], label
        taken.append(label.strip())
    assert len(taken) > 100 and refused > 30  # every white space but a plain one inside is refused
    words = [f"w{index}" for index in range(len(taken))]
    names = tmp_path / "names.jsonl"
    names.write_text("".join(json.dumps({"text": w, "type": t}) + "\n" for w, t in zip(words, taken)))
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "d1", "tokens": words}) + "\n")
    label_file(str(docs), str(tmp_path / "out.jsonl"), [str(names)], ambiguous="first")
    (document,) = read_jsonl(str(tmp_path / "out.jsonl"))
    assert document.spans == [(i, i + 1, t) for i, t in enumerate(taken)]


@pytest.mark.parametrize(
    "content, says",
    [
        ("Paris\tCapital city\n", None),
        ("Paris\tCapital\u00a0city\n", r"U\+00A0 NO-BREAK SPACE"),
        ("Paris\tCapital\u2028city\n", r"U\+2028 LINE SEPARATOR"),
        ("Paris\tO\n", r"bad type 'O' for 'Paris'"),
    ],
)
def test_the_command_on_a_spaced_type(content, says, tmp_path, capsys):
    names = tmp_path / "names.tsv"
    names.write_text(content, encoding="utf-8")
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"text": "Paris is nice."}\n')
    output = tmp_path / "out.jsonl"
    if says is None:
        command.main([str(docs), str(output), "--dictionary", str(names)])
        (document,) = read_jsonl(str(output))
        assert document.spans == [(0, 1, "Capital city")]
        return
    with pytest.raises(SystemExit) as exit:
        command.main([str(docs), str(output), "--dictionary", str(names)])
    err = capsys.readouterr().err.strip()
    assert exit.value.code == 1 and len(err.splitlines()) == 1 and f"{names}:1: bad type" in err, err
    assert re.search(says, err), err
    assert not output.exists()
