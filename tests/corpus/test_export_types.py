"""Bad input: a predicted span's type that no importer takes (white space at its ends, white space other than a
space inside, blank, ``O``, not a string). Every ``eer-export`` format reads the predictions through one reader
(:func:`eer_plugin.corpus.exporters.span_type_problem`), which refuses exactly the types that ``eer-import``
refuses (:meth:`eer_plugin.corpus.documents.Document.validate`): one error line naming the file, the line and the
span, and nothing written. Every other type is exported by every format and imported back as it was (brat: where
``visual.conf`` can name it, :mod:`eer_plugin.corpus.brat_names`); a type named like a tag (``B-PER``) too, with
the importer's warning."""

import json
import os
import random
import string
import sys
from pathlib import Path

import pytest
from test_brat_type_names import CHARACTERS, visual_conf_cannot_name
from test_export import as_annotated

from eer_plugin.commands import eer_export
from eer_plugin.corpus.brat_names import storage_form
from eer_plugin.corpus.exporters import EXPORT_FORMATS, PredictionsError, read_predictions
from eer_plugin.corpus.importers import IMPORT_FORMATS, AnnotationImportError, import_documents
from eer_plugin.corpus.tag_like import tag_like
from eer_plugin.corpus.text import normalise
from eer_plugin.corpus.tokenizer import tokenize_text

#: every character that the type rule (``str.isspace``) takes for white space, the ASCII ones and Unicode's
WHITE_SPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
#: characters of the names generated: ASCII, other scripts and signs, format characters, control characters
#: (which every reader replaces by U+FFFD, :mod:`eer_plugin.corpus.text`), and the space (inside a name only)
NAME_CHARACTERS = sorted(
    set(string.ascii_letters + string.digits + "  ") | set(CHARACTERS) - set(WHITE_SPACE) | set("\u200b\ufeff\x01\x7f")
)
#: types that are not strings, in a predictions file (a label id, a list of labels, ...)
NOT_STRINGS = [7, 1.5, True, None, ["PER"], {"name": "PER"}]


def name(generator: random.Random) -> str:
    """A generated type that every importer takes: 1 to 8 characters of :data:`NAME_CHARACTERS`, a space only
    inside, not ``O``."""
    while True:
        label = "".join(generator.choice(NAME_CHARACTERS) for _ in range(generator.randint(1, 8))).strip(" ")
        if label and label != "O":
            return label


def bad_types(seed: int = 11) -> list:
    """``(type, what the error says)``: every white-space character alone, at a type's start, at its end and (but
    the space) inside; ``O`` and the empty string; types that are not strings; and generated names with white
    space put in at a random place."""
    cases = [("", "is no entity type"), ("O", "is no entity type")]
    cases += [(value, "the type must be a string") for value in NOT_STRINGS]
    for c in WHITE_SPACE:
        cases += [(c, "is no entity type"), (c * 2, "is no entity type")]
        cases += [(c + "PER", "white space at its start or end"), ("PER" + c, "white space at its start or end")]
        if c != " ":
            cases.append((f"P{c}ER", f"U+{ord(c):04X} "))  # named: a character that looks like a space
    generator = random.Random(seed)
    for _ in range(60):
        label, c = name(generator), generator.choice([w for w in WHITE_SPACE if w != " "])
        at = generator.randint(0, len(label))
        what = "white space at its start or end" if at in (0, len(label)) else f"U+{ord(c):04X} "
        cases.append((label[:at] + c + label[at:], what))
    return cases


def prediction(doc_id: str, types: list) -> str:
    """A line of predict output (token predictions: the text is the words joined by a space): a span on each word,
    of each of ``types``; the words name the document (Prodigy's importer merges tasks of the same text)."""
    tokens = [f"{doc_id}w{i}" for i in range(max(len(types), 1))]
    spans = [{"type": t, "start": i, "end": i + 1, "probability": 0.5} for i, t in enumerate(types)]
    return json.dumps({"id": doc_id, "tokens": tokens, "spans": spans, "sentence_ends": [len(tokens)]}) + "\n"


def output_of(format: str, directory: Path) -> Path:
    return directory / ("brat" if format == "brat" else "out.json")


def exported(format: str, source: Path, output: Path, capsys) -> tuple:
    """``(exit status, the error lines)`` of ``eer-export FORMAT SOURCE OUTPUT``."""
    try:
        status = eer_export.main([format, str(source), str(output)])
    except SystemExit as exit:
        status = exit.code
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return status, err.splitlines()


@pytest.mark.parametrize("format", EXPORT_FORMATS)
def test_a_type_no_importer_takes_is_one_error_naming_file_line_and_span_and_nothing_is_written(
    format, tmp_path, capsys
):
    source = tmp_path / "p.jsonl"
    output = output_of(format, tmp_path)
    for number, (bad, what) in enumerate(bad_types()):
        index = number % 3  # the bad span among good ones, on the last line, after documents already written
        types = ["PER", "Product Name", "LOC"]
        types[index] = bad
        source.write_text(prediction("a", ["PER"]) + prediction("b", ["LOC"]) + prediction("c", types), "utf-8")
        before = format != "brat" and number % 2 == 0  # a file there before is left as it was, or none appears
        if before:
            output.write_text("before\n", encoding="utf-8")
        status, errors = exported(format, source, output, capsys)
        assert status == 1 and len(errors) == 1, (format, bad, errors)
        assert errors[0].startswith(f"eer-export: error: {source}:3: spans[{index}]: "), (format, bad, errors)
        assert what in errors[0] and "eer-import refuses such a type" in errors[0], (format, bad, errors)
        assert sorted(os.listdir(tmp_path)) == sorted(["p.jsonl"] + ["out.json"] * before), (format, bad)
        if before:
            assert output.read_text(encoding="utf-8") == "before\n"
            output.unlink()
        with pytest.raises(PredictionsError) as raised:
            read_predictions(source)
        assert (raised.value.path, raised.value.line) == (str(source), 3)


def importer_refuses(label, tmp_path: Path) -> bool:
    """Whether ``eer-import doccano`` refuses an export with a span of type ``label``."""
    path = tmp_path / "doccano.jsonl"
    path.write_text(json.dumps({"id": 1, "text": "w0 w1", "label": [[0, 2, label]]}) + "\n", encoding="utf-8")
    try:
        import_documents("doccano", path, tokenize_text)
    except AnnotationImportError:
        return True
    return False


def test_the_reader_refuses_exactly_the_types_the_importers_refuse(tmp_path):
    """The refused types above and generated names, each read by the predictions reader and by an importer."""
    generator = random.Random(5)
    types = [t for t, _ in bad_types()] + [name(generator) for _ in range(200)] + ["B-PER", "I-ORG", "O-x", "OO"]
    source = tmp_path / "p.jsonl"
    for label in types:
        source.write_text(prediction("a", [label]), encoding="utf-8")
        try:
            read_predictions(source)
            refused = False
        except PredictionsError:
            refused = True
        assert refused == importer_refuses(label, tmp_path), label


def good_types(seed: int) -> list:
    """Generated names and the named examples: spaces inside, punctuation, other scripts, format and control
    characters, types named like tags."""
    generator = random.Random(seed)
    named = ["Product Name", "B-PER", "I-ORG", "人名", "Персона", "C++", "a:b", "ÉTAT", "A\x00B"]
    return named + [name(generator) for _ in range(120)]


def documents_of(types: list) -> list:
    """The types in documents of up to 7 spans each."""
    return [types[i : i + 7] for i in range(0, len(types), 7)]


@pytest.mark.parametrize("format", EXPORT_FORMATS)
def test_every_type_the_importers_take_is_exported_and_imported_back_as_it_was(format, tmp_path, capsys):
    """Each format writes the type itself (brat: its brat form, named back in ``visual.conf``), so the import gives it
    back; control characters are U+FFFD in the predictions as read, and so in the export and back. brat refuses a
    type that ``visual.conf`` cannot name, and two types it would write alike (``tests/corpus/test_brat_type_names.py``
    tests both): they are left out of its documents here."""
    assert format in IMPORT_FORMATS  # the matching importer
    types = good_types(seed=len(format))
    if format == "brat":
        forms = {}
        for label in types:
            if not visual_conf_cannot_name(normalise(label)):
                forms.setdefault(storage_form(normalise(label)), label)
        types = list(forms.values())
    documents = documents_of(types)
    source = tmp_path / "p.jsonl"
    lines = [prediction(f"d{i:03d}", t) for i, t in enumerate(documents)]  # brat reads them sorted by name
    source.write_text("".join(lines), encoding="utf-8")
    output = output_of(format, tmp_path)
    status, errors = exported(format, source, output, capsys)
    assert status == 0, errors
    imported, report = import_documents(format, as_annotated(format, output), tokenize_text)
    assert [[label for _, _, label in d.spans] for d in imported] == [[normalise(t) for t in d] for d in documents]
    tag_like_types = {normalise(t) for t in types if tag_like(normalise(t))}
    assert len(tag_like_types) >= 2 and len(report.warnings) == len(tag_like_types), report.warnings
    assert all("is named like a tag" in warning for warning in report.warnings), report.warnings
