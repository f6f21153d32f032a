"""``predict`` (and the Python API) tag a file in the package's training format as it is: the output of
``eer-dictionary``, ``eer-simulate`` or an importer, whose annotations are ignored and whose words are its
``tokens``; where the line keeps the raw ``text`` the tokens were cut from, the spans keep their character
offsets. Misspelt keys and tokens that are not the text's words are still refused."""

import json

import pytest
from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from eer_plugin.annotation.dictionary import label_file
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats import read_conll
from eer_plugin.inference.documents import ANNOTATION_KEYS, InputError, parse_input


def test_eer_dictionary_output_is_tagged_with_its_character_offsets(tmp_path):
    texts = ["Angela Merkel visited Paris on Monday.", "  Paris is in France .\nIt rained in Oslo."]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    (tmp_path / "names.tsv").write_text("Paris\tLOC\nFrance\tLOC\nAngela Merkel\tPER\n")
    label_file(str(tmp_path / "docs.jsonl"), str(tmp_path / "out.jsonl"), [str(tmp_path / "names.tsv")])
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert all({"spans", "provenance", "text", "tokens"} <= set(line) for line in lines)
    for line, text in zip(lines, texts):
        doc, offsets, kept = parse_input(line)
        assert doc.tokens == line["tokens"] and doc.sentence_ends == line["sentence_ends"] and doc.id == line["id"]
        assert doc.spans == [] and kept == text  # the annotations are not the model's input
        assert [text[a:b] for a, b in offsets] == doc.tokens


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(read_conll(str(FIXTURES / "conll2003_tiny.txt"))), st.booleans())
def test_a_training_format_document_is_tagged_by_its_tokens(doc, complete):
    """Every document a writer of the training format produces (spans, completeness, provenance-free) parses
    to the same words and sentences, without its annotations."""
    data = Document(
        id=doc.id, tokens=doc.tokens, sentence_ends=doc.sentence_ends, spans=doc.spans, is_complete=complete
    ).to_json()
    parsed, offsets, text = parse_input(json.loads(json.dumps(data)))
    assert (parsed.tokens, parsed.sentence_ends, parsed.spans) == (doc.tokens, doc.sentence_ends, [])
    assert offsets == [] and text is None


@pytest.mark.parametrize(
    "line,reason",
    [
        (
            {"id": "a", "tokens": ["Paris", "is"], "spans": [], "text": "Paris was"},
            '"tokens" are not the words of "text"',
        ),
        ({"id": "b", "tokens": ["A"], "spanz": []}, "'spanz' (did you mean 'spans'?)"),
        ({"id": "c", "text": "x", "tokens": ["x"]}, 'needs exactly one of "text"'),  # no annotations: still one of them
        ({"id": "d", "tokens": "Paris", "spans": []}, '"tokens" must be a list of strings'),
        ({"id": "e", "tokens": ["Paris"], "spans": [], "text": 7}, '"text" must be a string'),
    ],
)
def test_a_bad_training_format_line_says_what_is_wrong(line, reason):
    with pytest.raises(InputError, match=reason.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        parse_input(line)


def test_the_ignored_keys_are_the_training_formats_annotations():
    assert set(ANNOTATION_KEYS) == set(Document.JSON_KEYS) - {"id", "text", "tokens", "sentence_ends"}


@pytest.mark.parametrize(
    "export, importer",
    [("doccano.jsonl", "doccano"), ("prodigy.jsonl", "prodigy"), ("label_studio.json", "label-studio")],
)
def test_an_annotation_tools_export_given_to_predict_names_its_importer(export, importer):
    """Every record of the checkout's real exports, given to predict as it is, is refused with the importer
    that reads it (predict then reads the imported file), never tagged as if its keys were misspelt."""
    path = FIXTURES / "import" / export
    text = path.read_text(encoding="utf-8")
    records = json.loads(text) if export.endswith(".json") else [json.loads(line) for line in text.splitlines()]
    for record in [records] + records if export.endswith(".json") else records:  # the whole list, then each task
        with pytest.raises(InputError) as info:
            parse_input(record)
        assert f"`eer-ner eer-import {importer}`, then predict the imported file" in str(info.value)


def test_predicts_own_output_given_back_to_it_says_so(tmp_path):
    line = {"id": "a", "tokens": ["John", "ran"], "tags": ["U-PER", "O"], "entities": [], "text": "John ran"}
    with pytest.raises(InputError, match="the line is predict's own output \\(its 'tags'\\): give predict the"):
        parse_input(line)
    with pytest.raises(InputError, match="did you mean 'text'\\?\\); expected keys among [^;]*$"):
        parse_input({"id": "a", "txt": "John ran"})  # a misspelt key: no guess at a tool
