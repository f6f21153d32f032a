"""Bad input: an entity type whose characters brat's files read specially (``A|B``, ``#tag``, ``!x``, ``<X>``,
``a:b``, ``-``, ``Ünïcode``). ``eer-export brat`` writes every type so that brat takes it, a word of letters, digits,
``_`` and ``-`` in ``annotation.conf`` and the ``.ann`` lines, and names it back in ``visual.conf``, from which
``eer-import brat`` reads the type exactly; a type that ``visual.conf`` cannot name, or two types written alike, is
one error line naming the predictions line, and no directory. A hand-written brat directory whose configuration uses
these forms (aliases, ``!`` abstract types, comments, macros, separators) imports as brat reads it, or is one error
line naming the ``visual.conf`` line (:mod:`eer_plugin.corpus.brat_names`)."""

import json
import random
import re
import shutil
import string
from pathlib import Path

import pytest
from conftest import eer_ner

from eer_plugin.commands import eer_export, eer_import
from eer_plugin.corpus.brat_names import storage_form
from eer_plugin.corpus.exporters.brat import PALETTE, SPAN_DEFAULT
from eer_plugin.corpus.formats import read_jsonl

#: characters that brat's files may read specially, and letters and signs of other scripts
CHARACTERS = sorted(set(string.punctuation) | set("ÜïéçßİıﬁＡ²½人名Пαاहि–—…€™\u00a0\u200d\ufffd😀"))
#: where a generated type holds the character
PATTERNS = ["{c}", "X{c}", "{c}X", "Ab{c}Cd", "{c}{c}"]
#: the names brat reserves, valid in ``<...>`` of its configuration (projectconfig.py ``reserved_config_name``)
RESERVED = {"<ENTITY>", "<ANY>", "<EMPTY>", "<NONE>", "<RELATION>", "<EVENT>", "<DEFAULT>", "<INHERIT>"}


def visual_conf_cannot_name(label: str) -> bool:
    """brat's ``[labels]`` line ``form | label`` shows another name: ``|`` splits names, a leading ``!`` is dropped,
    ``<...>`` is a macro (undefined: the file is not read) and ``<EMPTY>`` an empty name."""
    macros = re.findall(r"<.*?>", label)
    return "|" in label or label.startswith("!") or any(m not in RESERVED for m in macros) or label == "<EMPTY>"


def no_name(label: str) -> bool:
    """A type that no importer takes (:func:`eer_plugin.corpus.documents.type_problem`)."""
    return label != label.strip() or any(c.isspace() and c != " " for c in label)


def predictions(path: Path, *types: str) -> Path:
    """One predicted document with a span of each type, on line 1."""
    tokens = [f"w{i}" for i in range(len(types))]
    spans = [{"type": t, "start": i, "end": i + 1, "probability": 0.5} for i, t in enumerate(types)]
    record = {"id": "d", "tokens": tokens, "spans": spans, "sentence_ends": [len(tokens)]}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def status(main, *argv) -> int:
    try:
        return main([str(a) for a in argv])
    except SystemExit as exit:
        return exit.code


def check_brat_takes(directory: Path, types) -> None:
    """What brat reads of the directory: each ``annotation.conf`` entity a storage form (``[a-zA-Z0-9_-]``, not
    hyphens alone, which would be a separator line), each ``.ann`` type one of them, each ``visual.conf`` line
    ``form | name`` that brat splits into the form and the type's own name."""
    entities = (directory / "annotation.conf").read_text(encoding="utf-8").split("[relations]")[0].splitlines()[1:]
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", e) and not re.fullmatch(r"-+", e) for e in entities), entities
    written = [line.split("\t")[1].split(" ")[0] for line in (directory / "d.ann").read_text().splitlines()[::2]]
    assert set(written) == set(entities) and len(entities) == len(set(types))
    visual = directory / "visual.conf"  # [labels], then [drawing]
    labels = visual.read_text(encoding="utf-8").split("[drawing]")[0].splitlines()[1:]
    shown = {}
    for line in labels:
        form, name = (term.strip() for term in line.split("|"))
        assert form in entities and not name.startswith("!") and not visual_conf_cannot_name(name), line
        shown[form] = name
    assert [shown.get(form, form) for form in written] == list(types)


def round_trip(tmp_path: Path, capsys, *types: str) -> tuple:
    """``(status, error lines)`` of ``eer-export brat``; on success the import gives the types back exactly."""
    out = tmp_path / "brat"
    shutil.rmtree(out, ignore_errors=True)  # the directory of the type before
    source = predictions(tmp_path / "p.jsonl", *types)
    exported = status(eer_export.main, "brat", source, out)
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    if exported != 0:
        assert not out.exists()
        return exported, errors
    check_brat_takes(out, types)
    assert status(eer_import.main, "brat", out, tmp_path / "back.jsonl") == 0, capsys.readouterr().err
    (document,) = read_jsonl(tmp_path / "back.jsonl")
    assert [label for _, _, label in document.spans] == list(types)
    return exported, errors


@pytest.mark.parametrize("character", CHARACTERS, ids=lambda c: f"U+{ord(c):04X}")
def test_a_type_with_any_character_survives_brat_or_is_one_named_error(character, tmp_path, capsys):
    for pattern in PATTERNS:
        label = pattern.format(c=character)
        exported, errors = round_trip(tmp_path, capsys, label, "PER")
        if no_name(label):  # white space at its ends, or inside other than a space: no importer takes it
            assert exported == 1 and len(errors) == 1, (label, errors)  # refused by the reader of every format
            where = f"{tmp_path / 'p.jsonl'}:1: spans[0]"
            what = f"type {label!r} is no entity type" if label.isspace() else f"entity type {label!r} "
            assert errors[0].startswith(f"eer-export: error: {where}: {what}"), errors
        elif visual_conf_cannot_name(label):
            assert exported == 1 and len(errors) == 1, (label, errors)
            assert errors[0].startswith(f"eer-export: error: {tmp_path / 'p.jsonl'}:1: entity type {label!r} cannot")
            assert "visual.conf" in errors[0] and "rename the type" in errors[0], errors[0]
        else:
            assert exported == 0 and errors == [], (label, errors)


def test_the_named_examples(tmp_path, capsys):
    """Each type of an annotation tool or a model that brat's files read specially, exported alone."""
    expected = {
        "Product Name": "Product_Name",
        "NATIONAL-PARK": None,
        "#tag": "_tag",
        "a:b": "a_b",
        "x=y": "x_y",
        "a,b": "a_b",
        "-": "_-",
        "---": "_---",
        "Ünïcode": "Unicode",
        "人名": "u4EBAu540D",
        "<ENTITY>": "_ENTITY_",
    }
    for label, form in expected.items():
        assert round_trip(tmp_path, capsys, label) == (0, [])
        drawing = f"[drawing]\n{SPAN_DEFAULT}\n{form or label}\tbgColor:{PALETTE[0]}\n"
        assert (tmp_path / "brat" / "visual.conf").read_text(encoding="utf-8") == (
            f"[labels]\n{form} | {label}\n{drawing}" if form else f"[labels]\n{drawing}"
        )
    for label, why in {
        "A|B": "separates a type's names by '|'",
        "!x": "drops a leading '!'",
        "<X>": "reads '<X>' as a macro",
        "a<b>c": "reads '<b>' as a macro",
        "<EMPTY>": "reads '<EMPTY>' as an empty name",
        " PER": "white space at its start or end",
        "P\tER": "white space other than a space",
        "P\u2028ER": "white space other than a space",
    }.items():
        exported, errors = round_trip(tmp_path, capsys, "PER", label)
        assert exported == 1 and len(errors) == 1 and why in errors[0] and repr(label) in errors[0], (label, errors)


def test_generated_type_sets_survive_brat_or_name_the_two_types_written_alike(tmp_path, capsys):
    """Sets of generated names (seeded): exported together they come back exactly, or the export names the first
    two types that brat would write alike."""
    generator = random.Random(7)
    pool = CHARACTERS + list("aBz09 _-")
    for _ in range(60):
        names = {"".join(generator.choice(pool) for _ in range(generator.randint(1, 4))).strip() for _ in range(6)}
        types = sorted(n for n in names if n and not visual_conf_cannot_name(n) and not no_name(n))
        if not types:
            continue
        forms = [storage_form(t) for t in types]
        exported, errors = round_trip(tmp_path, capsys, *types)
        if len(set(forms)) == len(forms):
            assert exported == 0, (types, errors)
        else:
            assert exported == 1 and len(errors) == 1 and "would both be" in errors[0], (types, errors)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


ANNOTATION_CONF = """# hand-written, with every form brat's annotation.conf knows
[entities]
!Abstract
 Org|Organisation|ORG
  -----
  Product_Name
<MAC>=Org
Thing\tArg:<MAC>
[relations]
Equiv\tArg1:<ENTITY>, Arg2:<ENTITY>, <REL-TYPE>:symmetric-transitive
[events]
[attributes]
"""

VISUAL_CONF = """[ labels ]
a_b|a:b
[labels]
# a_b | a:b
!Org | Organisation | Org
 Product_Name | Product Name | Product
-----
<NAME>=Tagged Thing
Tagged_Thing | <NAME>
Unicode | Ünïcode
X_Y | X Y
X_Y | Other name
PER | <EMPTY>
_tag | #tag\tglyph:*
[drawing]
a_b\tbgColor:#ffccaa
"""


def test_a_hand_written_brat_configuration_is_read_as_brat_reads_it(tmp_path, capsys):
    """annotation.conf names no span (its aliases, ``!`` and macros change nothing); visual.conf's ``[labels]`` as
    brat reads them: comments, a section brat does not know, ``!``, indentation (a line under another names nothing:
    brat's labels are the top level's), separators, macros, the last line of a type, ``<EMPTY>``, names after a tab;
    a type in an ``.ann`` line is read as it is written."""
    text = "Anna met Acme at Ulm for X and Y in Paris"
    write(tmp_path / "b" / "x.txt", text)
    types = ["Org", "Product_Name", "Tagged_Thing", "Unicode", "X_Y", "PER", "_tag", "a_b", "A|B"]
    words = [m.span() for m in re.finditer(r"\S+", text)]
    ann = "".join(f"T{i + 1}\t{t} {s} {e}\t{text[s:e]}\n" for i, (t, (s, e)) in enumerate(zip(types, words)))
    write(tmp_path / "b" / "x.ann", ann)
    write(tmp_path / "b" / "annotation.conf", ANNOTATION_CONF)
    write(tmp_path / "b" / "visual.conf", VISUAL_CONF)
    assert status(eer_import.main, "brat", tmp_path / "b", tmp_path / "out.jsonl") == 0, capsys.readouterr().err
    (document,) = read_jsonl(tmp_path / "out.jsonl")
    expected = ["Org", "Product_Name", "Tagged Thing", "Ünïcode", "X_Y", "PER", "#tag", "a_b", "A|B"]
    assert [label for _, _, label in document.spans] == expected


@pytest.mark.parametrize(
    "line, why",
    [
        ("Org | <UNDEFINED>", "'<UNDEFINED>', which is no macro defined above it"),
        ("<ENTITY>=Org", "redefines <ENTITY>, a name brat reserves"),
        ("  Org | Organisation", "indents a line more than one deeper"),
        ("<E>=\n<E>", "a line without a name"),
        ("Org\tOrganisation", "'Organisation' after a tab"),
        (" | ", "a line without a name"),
    ],
)
def test_a_visual_conf_brat_would_not_read_is_one_error_naming_its_line(line, why, tmp_path, capsys):
    write(tmp_path / "b" / "x.txt", "Acme")
    write(tmp_path / "b" / "x.ann", "T1\tOrg 0 4\tAcme\n")
    conf = write(tmp_path / "b" / "visual.conf", f"[labels]\n# {line.splitlines()[0]}\n{line}\n")
    assert status(eer_import.main, "brat", tmp_path / "b", tmp_path / "out.jsonl") == 1
    err = capsys.readouterr().err
    where = f"{conf}:{3 + line.count(chr(10))}: [labels] "
    assert err.startswith(f"eer-import: error: {where}") and why in err and len(err.splitlines()) == 1, err
    assert "Traceback" not in err and not (tmp_path / "out.jsonl").exists()


#: the named examples that are no two alike in brat, exported together through the real commands
TOGETHER = ["Product Name", "NATIONAL-PARK", "#tag", "a:b", "x=y", "-", "Ünïcode", "人名", "Персона", "C++"]


@pytest.mark.integration
def test_types_survive_the_real_export_and_import_commands(tmp_path):
    source = predictions(tmp_path / "p.jsonl", *TOGETHER)
    exported = eer_ner("eer-export", "brat", source, tmp_path / "brat", capture_output=True, text=True)
    assert exported.returncode == 0, exported.stderr
    check_brat_takes(tmp_path / "brat", TOGETHER)
    imported = eer_ner("eer-import", "brat", tmp_path / "brat", tmp_path / "back.jsonl", capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    (document,) = read_jsonl(tmp_path / "back.jsonl")
    assert [label for _, _, label in document.spans] == TOGETHER
    source = predictions(tmp_path / "q.jsonl", "PER", "A|B")
    refused = eer_ner("eer-export", "brat", source, tmp_path / "no", capture_output=True, text=True)
    assert refused.returncode == 1 and not (tmp_path / "no").exists() and len(refused.stderr.splitlines()) == 1
    assert refused.stderr.startswith(f"eer-ner eer-export: error: {source}:1: entity type 'A|B' cannot be named")
