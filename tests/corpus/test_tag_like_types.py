"""Bad input, left over: an entity type named like a tag (``B-PER``, ``I-ORG``, ``U-LOC``, ``L-MISC``, ``S-PER``,
``E-PER``), most often a tag pasted where its type belongs, which the model would tag ``B-B-PER``. Every reader that
takes a type from its input (the importers, ``eer-dictionary``'s dictionaries, training JSON lines) keeps it, as it may
be the type's real name, with one warning per type naming the first file and line it is on and the type it would be
(:mod:`eer_plugin.corpus.tag_like`, the one check). Before, it was taken silently."""

import json
import logging

import pytest
from conftest import FIXTURES
from test_entity_types import FIRST_LINES, IMPORTS
from test_importers import write

from eer_plugin.annotation.dictionary import label_file
from eer_plugin.corpus.formats import read_jsonl
from eer_plugin.corpus.importers import import_documents
from eer_plugin.corpus.tag_like import TAG_PREFIXES, TagLikeTypes, tag_like
from eer_plugin.corpus.tokenizer import tokenize_text

NAMES = ["PER", "ORG", "Product Name", "ÉTAT", "人名", "B-PER"]
#: types not named like a tag: no prefix, an unknown or lower-case one, nothing after the hyphen, no hyphen
NOT_TAGS = ["PER", "O-PER", "X-PER", "b-per", "B-", "B- PER", "BPER", "B_PER", "Bio-PER", "PER-B", "B PER", "I"]


@pytest.mark.parametrize("prefix", list(TAG_PREFIXES))
@pytest.mark.parametrize("name", NAMES)
def test_a_prefix_and_a_name_is_named_like_a_tag(prefix, name):
    assert tag_like(f"{prefix}-{name}") == name


@pytest.mark.parametrize("label", NOT_TAGS)
def test_other_types_are_not(label):
    assert tag_like(label) is None and TagLikeTypes().check(label, "here") is None


def test_the_warning_comes_once_per_type_naming_the_first_place():
    seen = TagLikeTypes()
    assert seen.check("B-PER", "a:1") == (
        "a:1: entity type 'B-PER' is named like a tag: probably a tag pasted as a type, whose type would be 'PER' (as a "
        "type of its own it is tagged 'B-B-PER', 'U-B-PER', ...); use 'PER' unless 'B-PER' is the type's real name"
    )
    assert seen.check("B-PER", "a:2") is None and seen.check("PER", "a:3") is None
    assert seen.check("I-PER", "a:4").startswith("a:4: entity type 'I-PER' ")


# ----------------------------------------------------------------------------------- the importers
TEXT = "Anna saw Rome."


def _two_documents(format: str, tmp_path, types):
    """An export of ``format`` whose documents (lines 2 and 3; brat: files a and b, line 1 and 2) give ``TEXT``'s
    two names ``types[0]`` and ``types[1]``, the first document line 1 of a plain type."""
    tool = format.split()[0]
    if tool == "brat":
        write(tmp_path, "brat/a.txt", TEXT)
        write(tmp_path, "brat/a.ann", f"T1\t{types[0]} 0 4\tAnna\nT2\t{types[1]} 9 13\tRome\n")
        write(tmp_path, "brat/b.txt", TEXT)
        write(tmp_path, "brat/b.ann", f"T1\tPER 0 4\tAnna\nT2\t{types[0]} 9 13\tRome\n")
        return tmp_path / "brat"
    name, line = IMPORTS[format]
    path = tmp_path / name
    if tool == "label-studio":
        tasks = [json.loads(line(label))[0] for label in types]
        for number, task in enumerate(tasks, 2):
            task["id"] = number
        path.write_text("[\n" + ",\n".join(json.dumps(task) for task in tasks) + "\n]\n", encoding="utf-8")
    else:
        lines = [json.loads(line(label)) for label in types]
        for number, task in enumerate(lines, 2):
            task["id" if tool == "doccano" else "_input_hash"] = number
        path.write_text("\n".join([FIRST_LINES[tool], *map(json.dumps, lines)]) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("format", sorted(IMPORTS) + ["brat"])
@pytest.mark.parametrize("prefix", list(TAG_PREFIXES))
def test_an_importer_warns_once_per_tag_like_type_naming_the_first_file_and_line(format, prefix, tmp_path):
    tag, other = f"{prefix}-PER", f"{prefix}-LOC"
    path = _two_documents(format, tmp_path, [tag, tag] if format != "brat" else [tag, other])
    documents, report = import_documents(format.split()[0], path, tokenize_text)
    warnings = [w for w in report.warnings if "named like a tag" in w]
    if format == "brat":
        where = [f"{path / 'a.ann'}:1: document 'a': span T1 (line 1)", f"{path / 'a.ann'}:2: document 'a': span T2"]
        assert [w.split(": entity type")[0] for w in warnings] == [where[0], where[1] + " (line 2)"], warnings
        assert {t for d in documents for _, _, t in d.spans} == {"PER", tag, other}  # kept as they are
        return
    kind = "negative span" if format == "prodigy binary reject" else "span"
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"{path}:2: document '2': {kind} "), warnings[0]
    assert f"entity type {tag!r} is named like a tag" in warnings[0] and "would be 'PER'" in warnings[0]
    kept = [n[2] for n in documents[-1].negative_spans] if kind == "negative span" else [documents[-1].spans[0][2]]
    assert kept == [tag]  # a warning, not an error: the type is kept


def test_the_fixture_exports_give_no_such_warning_and_any_prefix_and_name_does(tmp_path):
    for format, name in (
        ("doccano", "doccano.jsonl"),
        ("prodigy", "prodigy.jsonl"),
        ("label-studio", "label_studio.json"),
    ):
        _, report = import_documents(format, FIXTURES / "import" / name, tokenize_text)
        assert not [w for w in report.warnings if "named like a tag" in w]
    _, report = import_documents("doccano", _two_documents("doccano", tmp_path, ["PER", "E-mail"]), tokenize_text)
    assert [w.split(": entity type")[1][:9] for w in report.warnings] == [" 'E-mail'"]  # a prefix and a name: warned


# ----------------------------------------------------------------------------------- eer-dictionary's dictionaries
@pytest.mark.parametrize("prefix", list(TAG_PREFIXES))
@pytest.mark.parametrize("shape", ["tsv", "csv", "jsonl"])
def test_a_dictionary_type_named_like_a_tag_is_warned_about_once(prefix, shape, tmp_path):
    entries = [("Anna", "PER"), ("Rome", f"{prefix}-LOC"), ("Paris", f"{prefix}-LOC"), ("Bob", "PER")]
    if shape == "jsonl":
        text = "".join(json.dumps({"text": form, "type": label}) + "\n" for form, label in entries)
    else:
        text = "".join(f"{form}{',' if shape == 'csv' else chr(9)}{label}\n" for form, label in entries)
    names = write(tmp_path, f"names.{shape}", text)
    more = write(tmp_path, "more.tsv", f"Milan\t{prefix}-LOC\nBerlin\t{prefix}-GPE\n")
    docs = write(tmp_path, "docs.jsonl", json.dumps({"text": "Anna left Rome for Milan and Berlin."}) + "\n")
    summary = label_file(str(docs), str(tmp_path / "out.jsonl"), [str(names), str(more)])
    warnings = [w for w in summary.warnings if "named like a tag" in w]
    assert [w.split(" is named")[0] for w in warnings] == [
        f"{names}:2: entity type '{prefix}-LOC'",
        f"{more}:2: entity type '{prefix}-GPE'",
    ]
    assert "would be 'LOC'" in warnings[0]
    [document] = read_jsonl(tmp_path / "out.jsonl")
    assert [t for _, _, t in document.spans] == ["PER", f"{prefix}-LOC", f"{prefix}-LOC", f"{prefix}-GPE"]


# ----------------------------------------------------------------------------------- training JSON lines
@pytest.mark.parametrize("prefix", list(TAG_PREFIXES))
@pytest.mark.parametrize("key", ["spans", "negative_spans"])
def test_training_data_warns_once_per_type_naming_the_first_line(prefix, key, tmp_path, caplog):
    lines = [
        {"id": "a", "tokens": ["Anna", "saw", "Rome"], "spans": [[0, 1, "PER"]]},
        {"id": "b", "tokens": ["Anna", "saw", "Rome"], key: [[2, 3, f"{prefix}-LOC"]]},
        {"id": "c", "tokens": ["Anna", "saw", "Rome"], key: [[0, 1, f"{prefix}-LOC"], [2, 3, f"{prefix}-LOC"]]},
    ]
    data = write(tmp_path, "train.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    with caplog.at_level(logging.WARNING, logger="eer_plugin.corpus.formats.jsonl"):
        documents = read_jsonl(data)
        read_jsonl(data)  # each reading of the file says it once
    warnings = [r.getMessage() for r in caplog.records if "named like a tag" in r.getMessage()]
    assert len(warnings) == 2 and warnings[0] == warnings[1], warnings
    assert warnings[0].startswith(f"{data}:2: document 'b': entity type '{prefix}-LOC' is named like a tag")
    assert getattr(documents[1], key)[0][2] == f"{prefix}-LOC"
