"""Importers of annotation-tool exports (eer-import): one hand-written example per tool in
fixtures/import/, round-tripped to the expected word spans, and every warning and error."""

import json
import unicodedata
from pathlib import Path
from typing import List, Tuple

import pytest
from conftest import FIXTURES

from eer_plugin.annotation.simulators import variant
from eer_plugin.commands import eer_import
from eer_plugin.corpus.documents import Document, DocumentError
from eer_plugin.corpus.formats import read_jsonl
from eer_plugin.corpus.importers import (
    AnnotationImportError,
    ImportReport,
    RawDocument,
    RawSpan,
    import_documents,
    read_ids,
    to_document,
)
from eer_plugin.corpus.tokenizer import VISIBLE_FORMAT_CHARACTERS, tokenize_text
from eer_plugin.inference.chunking import LATENT_LABEL, chunk_document

IMPORT = FIXTURES / "import"


def spans_text(doc: Document) -> List[Tuple[str, str]]:
    return [(" ".join(doc.tokens[s:e]), label) for s, e, label in doc.spans]


def negatives_text(doc: Document) -> List[Tuple]:
    return [(" ".join(doc.tokens[n[0] : n[1]]),) + tuple(n[2:]) for n in doc.negative_spans]


def by_id(docs: List[Document]):
    return {d.id: d for d in docs}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(tmp_path: Path, name: str, rows) -> Path:
    return write(tmp_path, name, "".join(json.dumps(r) + "\n" for r in rows))


def doccano_error(tmp_path, rows, match, line=1):
    path = jsonl(tmp_path, "bad.jsonl", rows)
    with pytest.raises(AnnotationImportError, match=match) as info:
        import_documents("doccano", path, tokenize_text)
    assert info.value.path == str(path) and info.value.line == line, str(info.value)
    return info.value


# ----------------------------------------------------------------------------------- fixtures, per format
def test_doccano_fixture_both_shapes_snapping_and_complete_ids():
    docs, report = import_documents(
        "doccano", IMPORT / "doccano.jsonl", tokenize_text, complete_ids=read_ids(IMPORT / "doccano_complete_ids.txt")
    )
    docs = by_id(docs)
    assert list(docs) == ["1", "2", "3", "4", "5", "6"]
    assert spans_text(docs["1"]) == [("EU", "ORG"), ("German", "MISC"), ("British", "MISC")]
    assert spans_text(docs["2"]) == [("Peter Blackburn", "PER"), ("Brussels", "LOC")]  # 'Brusse' snapped
    assert spans_text(docs["3"]) == [("European Commission", "ORG"), ("German", "MISC")]  # the entities variant
    assert spans_text(docs["4"]) == [("Fischler", "PER"), ("Britain", "LOC"), ("France", "LOC")]  # 'Britain ' trimmed
    assert spans_text(docs["5"]) == [] and docs["5"].is_complete  # checked: no entity at all
    assert [d for d, doc in docs.items() if doc.is_complete] == ["1", "3", "5"]
    assert docs["1"].tokens[-1] == "." and docs["1"].sentence_ends == [len(docs["1"].tokens)]
    assert report.warnings == [
        f"{IMPORT / 'doccano.jsonl'}:2: document '2': span label[1] [30, 36) LOC 'Brusse' does not align with word "
        "boundaries; snapped to words 4-5 'Brussels'"
    ]
    assert (report.documents, report.spans, report.complete_documents, report.negative_spans) == (6, 12, 3, 0)
    assert report.summary() == (
        "6 documents, 12 spans (LOC 3, MISC 4, ORG 2, PER 3), 3 complete, 0 negative spans, 1 warning"
    )


def test_label_studio_fixture_first_and_union_skip_cancelled():
    docs, report = import_documents("label-studio", IMPORT / "label_studio.json", tokenize_text)
    docs = by_id(docs)
    assert spans_text(docs["101"]) == [("Nigel Fagan", "PER"), ("Daily Mail", "ORG")]  # first annotator
    assert spans_text(docs["102"]) == [] and not docs["102"].is_complete  # nobody annotated it: latent
    assert report.skipped == {"cancelled annotations": 1, "annotations of other annotators (--annotators first)": 1}
    docs, report = import_documents("label-studio", IMPORT / "label_studio.json", tokenize_text, annotators="union")
    assert spans_text(by_id(docs)["101"]) == [("Nigel Fagan", "PER"), ("Daily Mail", "ORG"), ("London", "LOC")]
    assert report.spans == 3 and report.skipped == {"cancelled annotations": 1}  # the shared PER span counts once


def test_brat_fixture_skips_discontinuous_and_other_lines():
    docs, report = import_documents("brat", IMPORT / "brat", tokenize_text)
    docs = by_id(docs)
    assert spans_text(docs["news1"]) == [("Hendrix", "Person")]
    assert spans_text(docs["news2"]) == [("Jimi Hendrix", "Person"), ("London", "Location")]
    assert report.skipped == {"discontinuous spans": 1}
    assert report.warnings == [
        f"{IMPORT / 'brat' / 'news2.ann'}:3: document 'news2': T3 Location is discontinuous (34 37;38 42); skipped"
    ]
    single, _ = import_documents("brat", IMPORT / "brat" / "news1.ann", tokenize_text)
    assert [d.id for d in single] == ["news1"]


def test_prodigy_fixture_manual_binary_ignore():
    docs, report = import_documents("prodigy", IMPORT / "prodigy.jsonl", tokenize_text)
    docs = by_id(docs)
    assert list(docs) == ["101", "102"]
    manual = docs["101"]  # ner_manual + accept: complete; one span given by token_start/token_end only
    assert spans_text(manual) == [("Clinton", "PER"), ("Yeltsin", "PER"), ("Moscow", "LOC")] and manual.is_complete
    binary = docs["102"]  # two binary decisions on one input, merged
    assert spans_text(binary) == [("Apple", "ORG")] and not binary.is_complete
    assert negatives_text(binary) == [("New York", "PER")]  # reject: not a PER here
    assert report.skipped == {"ignored tasks": 1, "rejected manual tasks": 1}
    assert (report.complete_documents, report.negative_spans) == (1, 1)


def test_spacy_fixture_missing_tokens_latent_outside_runs_negative():
    docs, report = import_documents("spacy", IMPORT / "spacy.spacy", tokenize_text)
    complete, partial = docs
    assert spans_text(complete) == [("Angela Merkel", "PER"), ("Paris", "LOC")] and complete.is_complete
    assert spans_text(partial) == [("Siemens", "ORG")] and not partial.is_complete
    assert negatives_text(partial) == [("opened a plant",), ("March", "PER")]  # O tokens; incorrect_spans
    assert report.summary() == "2 documents, 3 spans (LOC 1, ORG 1, PER 1), 1 complete, 2 negative spans, 0 warnings"


def test_spacy_fixture_is_what_the_script_builds(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_spacy_fixture", IMPORT / "make_spacy_fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rebuilt = tmp_path / "rebuilt.spacy"
    module.build().to_disk(rebuilt)
    again, _ = import_documents("spacy", rebuilt, tokenize_text)
    fixture, _ = import_documents("spacy", IMPORT / "spacy.spacy", tokenize_text)
    assert [d.to_json() for d in again] == [dict(d.to_json(), id=d.id.replace("spacy", "rebuilt")) for d in fixture]


def test_negative_spans_as_training_evidence():
    """'No entity' spans are observed O; typed ones ('not PER here') are kept but leave the words latent."""
    docs, _ = import_documents("spacy", IMPORT / "spacy.spacy", tokenize_text)
    partial = docs[1]
    one_piece = lambda words: [[i] for i, _ in enumerate(words)]  # noqa: E731
    chunk = chunk_document(partial, one_piece, lambda ids: [str(i) for i in ids], (100, 101))[0]
    labels = chunk.labels[1:-1]
    assert labels[:4] == ["U-ORG", "O", "O", "O"]  # Siemens, then 'opened a plant' observed O
    assert labels[4:] == [LATENT_LABEL] * 5  # 'March' rejected as PER is still latent
    again = Document.from_json(partial.to_json())
    assert again.negative_spans == partial.negative_spans and partial.to_json()["negative_spans"] == [
        [1, 4],
        [7, 8, "PER"],
    ]


def test_variants_keep_documents_checked_complete_without_entities():
    docs, _ = import_documents(
        "doccano", IMPORT / "doccano.jsonl", tokenize_text, complete_ids=read_ids(IMPORT / "doccano_complete_ids.txt")
    )
    assert "5" in [d.id for d in variant(docs, "short")] and "5" in [d.id for d in variant(docs, "shortest")]
    spacy_docs, _ = import_documents("spacy", IMPORT / "spacy.spacy", tokenize_text)
    cut = variant(spacy_docs, "shortest")[1]  # one sentence: nothing cut, the typed negative kept whole
    assert cut.negative_spans == spacy_docs[1].negative_spans


# ----------------------------------------------------------------------------------- warnings
def raw(text: str, *spans: RawSpan, doc_id: str = "d") -> RawDocument:
    return RawDocument(doc_id, text, list(spans), source="test:1", line=1, path="test")


def test_snap_warnings_name_document_and_span():
    report = ImportReport("test")
    doc = to_document(
        raw(
            "Jimi Hendrix played in London town.",
            RawSpan(2, 12, "PER", "s1"),  # 'mi Hendrix' -> snapped out to 'Jimi Hendrix'
            RawSpan(23, 35, None, "n1", negative=True),  # 'London town.' whole words: exact
            RawSpan(13, 21, None, "n2", negative=True),  # 'played i' -> shrunk in to 'played'
            RawSpan(12, 13, "LOC", "s2"),  # a space only
            RawSpan(21, 22, None, "n3", negative=True),  # 'n' of 'in': holds no whole word
        ),
        tokenize_text,
        report,
    )
    assert spans_text(doc) == [("Jimi Hendrix", "PER")]
    assert negatives_text(doc) == [("played",), ("London town .",)]
    assert report.warnings == [
        "test:1: document 'd': span s1 [2, 12) PER 'mi Hendrix' does not align with word boundaries; "
        "snapped to words 0-2 'Jimi Hendrix'",
        "test:1: document 'd': negative span n2 [13, 21) 'played i' does not align with word boundaries; "
        "shrunk to words 2-3 'played'",
        "test:1: document 'd': span s2 [12, 13) LOC ' ' covers only white space; skipped",
        "test:1: document 'd': negative span n3 [21, 22) 'n' holds no whole word; skipped",
    ]
    assert report.snapped_spans == 2
    assert report.skipped == {"white-space spans": 1, "negative spans without a whole word": 1}


FORMAT_CHARACTERS = [
    chr(c)
    for c in [*range(0x20000), *range(0xE0000, 0xE0080)]
    if unicodedata.category(chr(c)) == "Cf" and chr(c) not in VISIBLE_FORMAT_CHARACTERS
]


@pytest.mark.parametrize("invisible", FORMAT_CHARACTERS, ids=lambda c: f"U+{ord(c):04X}")
def test_invisible_format_characters_neither_split_nor_widen_an_entity(invisible):
    """Every invisible format character (Unicode Cf): inside a name it stays inside its one word (the zero-width
    space separates two), at the span's edges it is trimmed silently like white space, alone it is no span."""
    c = invisible
    text = f"Visit {c}Brus{c}sels{c} and{c} {c} Ghent."
    report = ImportReport("test")
    at, alone = text.index("Brus"), text.index(f" {c} ") + 1
    doc = to_document(
        raw(
            text,
            RawSpan(at - 1, at + 9, "LOC", "edges"),  # the invisible characters around the name inside the span
            RawSpan(text.index("Ghent"), text.index("Ghent") + 5, "LOC", "plain"),
            RawSpan(alone, alone + 1, "LOC", "alone"),
        ),
        tokenize_text,
        report,
    )
    name = ["Brus", "sels"] if c == "\u200b" else [f"Brus{c}sels"]
    assert doc.tokens == ["Visit", *name, "and", "Ghent", "."]
    assert spans_text(doc) == [(" ".join(name), "LOC"), ("Ghent", "LOC")]
    [warning] = report.warnings
    assert warning.startswith(f"test:1: document 'd': span alone [{alone}, {alone + 1}) LOC ")
    assert warning.endswith(" covers only white space and invisible format characters; skipped")


def test_document_without_words_is_skipped_with_a_warning(tmp_path):
    path = jsonl(
        tmp_path,
        "d.jsonl",
        [{"id": 1, "text": "  \n ", "label": []}, {"id": 2, "text": "Paris.", "label": [[0, 5, "LOC"]]}],
    )
    docs, report = import_documents("doccano", path, tokenize_text)
    assert [d.id for d in docs] == ["2"]
    assert report.warnings == [f"{path}:1: document '1' has no words; skipped"]


def test_brat_text_mismatch_warns(tmp_path):
    write(tmp_path, "b/x.txt", "Paris is nice.\n")
    ann = write(tmp_path, "b/x.ann", "T1\tLocation 0 5\tParsi\n")
    docs, report = import_documents("brat", tmp_path / "b", tokenize_text)
    assert spans_text(docs[0]) == [("Paris", "Location")]
    assert report.warnings == [
        f"{ann}:1: document 'x': T1 text 'Parsi' differs from the .txt characters [0, 5) 'Paris' "
        "(offsets counted in another encoding or newline convention?)"
    ]


def test_brat_latin1_text_file(tmp_path, caplog):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.txt").write_bytes("Jos\u00e9 vit \u00e0 S\u00e3o Paulo.\n".encode("latin-1"))
    write(tmp_path, "b/x.ann", "T1\tPerson 0 4\tJos\u00e9\nT2\tLocation 11 20\tS\u00e3o Paulo\n")
    docs, report = import_documents("brat", tmp_path / "b", tokenize_text)
    assert spans_text(docs[0]) == [("Jos\u00e9", "Person"), ("S\u00e3o Paulo", "Location")] and not report.warnings
    assert "reading it as latin-1" in caplog.text


# ----------------------------------------------------------------------------------- errors
def test_overlapping_spans_error_names_both(tmp_path):
    text = "New York City is big."
    error = doccano_error(
        tmp_path, [{"id": 7, "text": text, "label": [[0, 8, "LOC"], [4, 13, "LOC"]]}], "overlapping spans"
    )
    assert (
        "document '7': overlapping spans: span label[0] [0, 8) LOC 'New York' and span label[1] [4, 13) LOC 'York City'"
        in str(error)
    )
    # the same range with two types is an error naming both (a span takes one type); the same span twice is not
    doccano_error(
        tmp_path,
        [{"id": 7, "text": text, "label": [[0, 8, "LOC"], [0, 8, "ORG"]]}],
        "label\\[0\\].*label\\[1\\].* two types \\(LOC, ORG\\); a span takes one type",
    )
    path = jsonl(tmp_path, "twice.jsonl", [{"id": 7, "text": text, "label": [[0, 8, "LOC"], [0, 8, "LOC"]]}])
    assert import_documents("doccano", path, tokenize_text)[1].spans == 1
    # overlapping only after snapping: 'Yo' snaps to 'York'
    doccano_error(tmp_path, [{"id": 7, "text": text, "label": [[0, 8, "LOC"], [4, 6, "ORG"]]}], "words 0-2 and 1-2")


def test_negative_span_overlapping_or_contradicting_an_entity(tmp_path):
    report = ImportReport("test")
    with pytest.raises(
        AnnotationImportError, match="negative span n1 \\[0, 4\\) 'Jimi' overlaps span s1 \\[0, 12\\) PER"
    ):
        to_document(
            raw("Jimi Hendrix played.", RawSpan(0, 12, "PER", "s1"), RawSpan(0, 4, None, "n1", negative=True)),
            tokenize_text,
            report,
        )
    with pytest.raises(
        AnnotationImportError, match="negative span n1 \\[0, 12\\) PER 'Jimi Hendrix' contradicts span s1"
    ):
        to_document(
            raw("Jimi Hendrix played.", RawSpan(0, 12, "PER", "s1"), RawSpan(0, 12, "PER", "n1", negative=True)),
            tokenize_text,
            report,
        )
    doc = to_document(
        raw("Jimi Hendrix played.", RawSpan(0, 12, "PER", "s1"), RawSpan(0, 12, "ORG", "n1", negative=True)),
        tokenize_text,
        report,
    )
    assert negatives_text(doc) == [("Jimi Hendrix", "ORG")]  # not ORG, and it is a PER: consistent
    with pytest.raises(DocumentError, match="contradicts entity"):
        Document("x", ["a", "b"], [2], [(0, 1, "PER")], negative_spans=[(0, 1, "PER")]).validate()


def test_offsets_out_of_range_and_not_integers(tmp_path):
    error = doccano_error(tmp_path, [{"id": 1, "text": "Paris.", "label": [[0, 9, "LOC"]]}], "out of range")
    assert "span label[0] [0, 9) is out of range: the text has 6 characters" in str(error)
    doccano_error(
        tmp_path, [{"id": 1, "text": "Paris.", "label": [[0, "5", "LOC"]]}], "label\\[0\\] end must be an integer"
    )
    doccano_error(tmp_path, [{"id": 1, "text": "Paris.", "label": [[5, 0, "LOC"]]}], "out of range")


def test_doccano_structure_errors(tmp_path):
    doccano_error(tmp_path, [{"id": 1, "text": "x", "label": ["POSITIVE"]}], "text classification export")
    doccano_error(tmp_path, [{"id": 1, "text": "x", "label": [[0, 1]]}], "must be \\[start, end, type\\]")
    doccano_error(tmp_path, [{"id": 1, "label": []}], 'a "text" string')
    doccano_error(
        tmp_path,
        [{"id": 1, "text": "x", "entities": [{"start_offset": 0, "label": "A"}]}],
        "start_offset, end_offset and label",
    )
    # spans under two keys: one would be dropped unread (an empty list beside them is no annotation)
    entity = {"start_offset": 0, "end_offset": 1, "label": "A"}
    both = {"id": 1, "text": "x", "entities": [entity], "label": [[0, 1, "B"]]}
    doccano_error(tmp_path, [both], "document '1': spans under both 'label' and 'entities'; doccano writes one of them")
    both = {"id": 1, "text": "x", "labels": [[0, 1, "A"]], "label": [[0, 1, "B"]]}
    doccano_error(tmp_path, [both], "spans under both 'label' and 'labels'")
    path = jsonl(tmp_path, "one.jsonl", [{"id": 1, "text": "x y", "label": [], "entities": [entity]}])
    assert import_documents("doccano", path, tokenize_text)[1].spans == 1
    path = write(tmp_path, "broken.jsonl", '{"id": 1, "text": "x"}\n{"id": 2,\n')
    with pytest.raises(AnnotationImportError, match="invalid JSON") as info:
        import_documents("doccano", path, tokenize_text)
    assert info.value.line == 2
    with pytest.raises(AnnotationImportError, match="unzip it"):
        import_documents("doccano", write(tmp_path, "export.zip", ""), tokenize_text)


def test_duplicate_ids_unknown_complete_ids_unknown_format(tmp_path):
    path = jsonl(tmp_path, "dup.jsonl", [{"id": 1, "text": "a"}, {"id": 1, "text": "b"}])
    with pytest.raises(AnnotationImportError, match=f"document id '1' of {path}:2 is already used by {path}:1"):
        import_documents("doccano", path, tokenize_text)
    with pytest.raises(AnnotationImportError, match="--complete-ids names 2 documents not in the export: '42', '9'"):
        import_documents("doccano", IMPORT / "doccano.jsonl", tokenize_text, complete_ids=["1", "9", "42"])
    with pytest.raises(AnnotationImportError, match="unknown import format 'inception'"):
        import_documents("inception", path, tokenize_text)
    with pytest.raises(AnnotationImportError, match="no documents with text"):
        import_documents("doccano", jsonl(tmp_path, "empty.jsonl", [{"id": 1, "text": " "}]), tokenize_text)


def test_label_studio_errors(tmp_path):
    def ls_error(tasks, match, **options):
        path = write(tmp_path, "ls.json", json.dumps(tasks))
        with pytest.raises(AnnotationImportError, match=match):
            import_documents("label-studio", path, tokenize_text, **options)

    ls_error({"id": 1}, "a list of task objects")
    ls_error([{"id": 1, "text": "a", "label": [{"start": 0, "end": 1, "labels": ["X"]}]}], "JSON_MIN export")
    ls_error([{"id": 1, "data": {"title": "a", "body": "b"}, "annotations": []}], "pass --text-key")
    ls_error([{"id": 1, "data": {"text": "a"}, "annotations": []}], "data\\['body'\\] is not a string", text_key="body")
    ls_error(
        [{"id": 1, "data": {"text": "a"}, "annotations": []}],
        "annotators must be one of first, union",
        annotators="all",
    )
    bad_value = {"id": "r", "type": "labels", "value": {"start": 0, "labels": ["A"]}}
    ls_error(
        [{"id": 1, "data": {"text": "a"}, "annotations": [{"id": 5, "result": [bad_value]}]}],
        "annotation 5: result 0 of type 'labels'",
    )
    two = [
        {
            "id": 1,
            "data": {"text": "New York City"},
            "annotations": [
                {
                    "id": 5,
                    "result": [{"id": "a", "type": "labels", "value": {"start": 0, "end": 8, "labels": ["LOC"]}}],
                },
                {
                    "id": 6,
                    "result": [{"id": "b", "type": "labels", "value": {"start": 4, "end": 13, "labels": ["LOC"]}}],
                },
            ],
        }
    ]
    ls_error(
        two,
        "result 'a' of annotation 5 \\[0, 8\\) LOC 'New York' and span result 'b' of annotation 6",
        annotators="union",
    )
    # annotations under both names: one would be dropped unread; an empty list beside the other is none
    result = [{"id": "a", "type": "labels", "value": {"start": 0, "end": 3, "labels": ["LOC"]}}]
    both = {"id": 1, "data": {"text": "New York"}, "annotations": [{"id": 5, "result": result}]}
    ls_error([dict(both, completions=[{"id": 6, "result": []}])], "task '1': both 'annotations' and 'completions'")
    ls_error([{"id": 1, "data": {"text": "x"}, "completions": None}], "task '1': 'completions' must be a list")
    path = write(
        tmp_path, "old.json", json.dumps([dict(both, annotations=[], completions=[{"id": 6, "result": result}])])
    )
    assert import_documents("label-studio", path, tokenize_text)[1].spans == 1
    # the only string of data is the text; a single task object is accepted too
    path = write(tmp_path, "one.json", json.dumps({"id": 3, "data": {"body": "Paris."}, "annotations": []}))
    assert import_documents("label-studio", path, tokenize_text)[0][0].tokens == ["Paris", "."]


@pytest.mark.parametrize("cancelled", ["false", "true", 0, 1, [], {}])
def test_label_studio_was_cancelled_is_true_or_false_never_read_by_its_truth(cancelled, tmp_path):
    """A hand-edited export's "was_cancelled": "false" is true to Python: it would drop a real annotation."""
    annotation = {"id": 7, "was_cancelled": cancelled, "result": []}
    path = write(tmp_path, "ls.json", json.dumps([{"id": 3, "data": {"text": "Paris."}, "annotations": [annotation]}]))
    with pytest.raises(AnnotationImportError, match="task '3': annotation 7: 'was_cancelled' must be true or false"):
        import_documents("label-studio", path, tokenize_text)


def test_brat_errors(tmp_path):
    write(tmp_path, "b/x.ann", "T1\tPerson 0 4\tJimi\n")
    with pytest.raises(AnnotationImportError, match="no text file x.txt"):
        import_documents("brat", tmp_path / "b", tokenize_text)
    write(tmp_path, "c/x.txt", "Jimi\n")
    ann = write(tmp_path, "c/x.ann", "T1\tPerson 0 4\tJimi\nT2\tPerson zero four\tJimi\n")
    with pytest.raises(AnnotationImportError, match="expected a text-bound annotation") as info:
        import_documents("brat", tmp_path / "c", tokenize_text)
    assert (info.value.path, info.value.line) == (str(ann), 2)
    (tmp_path / "empty").mkdir()
    with pytest.raises(AnnotationImportError, match="no .ann files"):
        import_documents("brat", tmp_path / "empty", tokenize_text)
    with pytest.raises(AnnotationImportError, match="a brat directory"):
        import_documents("brat", tmp_path / "c" / "x.txt", tokenize_text)


@pytest.mark.parametrize(
    "offsets, message",
    [
        ("0 " + "9" * 5000, "an offset of more than 18 digits"),  # beyond what Python converts: no ValueError
        ("0 " + "9" * 19, "an offset of more than 18 digits"),
        ("0 4;" + "9" * 5000 + " 5", "an offset of more than 18 digits"),
        ("0 400", "out of range"),
        ("\u0660 \u0664", "expected a text-bound annotation"),  # digits of another script are no offsets
        ("-1 4", "expected a text-bound annotation"),
        ("0.0 4.0", "expected a text-bound annotation"),
    ],
)
def test_brat_offsets_that_are_no_offsets_into_the_text_name_the_ann_line(offsets, message, tmp_path):
    write(tmp_path, "b/x.txt", "Jimi Hendrix\n")
    ann = write(tmp_path, "b/x.ann", f"T1\tPerson 0 4\tJimi\nT2\tPerson {offsets}\tHendrix\n")
    with pytest.raises(AnnotationImportError, match=message) as info:
        import_documents("brat", tmp_path / "b", tokenize_text)
    assert info.value.path == str(ann) and (info.value.line == 2 or message == "out of range"), info.value


def test_prodigy_errors(tmp_path):
    def prodigy_error(rows, match):
        path = jsonl(tmp_path, "p.jsonl", rows)
        with pytest.raises(AnnotationImportError, match=match):
            import_documents("prodigy", path, tokenize_text)

    prodigy_error([{"text": "a", "answer": "maybe"}], "answer must be accept, reject or ignore")
    prodigy_error(
        [{"text": "a b", "answer": "accept", "spans": [{"token_start": 0, "token_end": 1, "label": "X"}]}],
        "has no tokens|the task has no tokens",
    )
    prodigy_error([{"text": "a b", "answer": "accept", "spans": [{"label": "X"}]}], "needs start/end")
    prodigy_error(
        [{"text": "a", "answer": "accept", "spans": [{"start": 0, "end": 1}]}], "must be an object with a label"
    )
    prodigy_error(
        [{"text": "a", "_input_hash": 1, "answer": "accept"}, {"text": "b", "_input_hash": 1, "answer": "accept"}],
        "same _input_hash as line 1 but another text",
    )
    prodigy_error([{"answer": "accept"}], 'a "text" string')


def test_spacy_errors(tmp_path):
    with pytest.raises(AnnotationImportError, match="not a spaCy DocBin"):
        import_documents("spacy", write(tmp_path, "x.spacy", "not msgpack"), tokenize_text)


# ----------------------------------------------------------------------------------- command line
def run_cli(*argv) -> int:
    return eer_import.main([str(a) for a in argv])


def test_cli_writes_jsonl_and_report(tmp_path, capsys):
    out, report = tmp_path / "out.jsonl", tmp_path / "report.json"
    run_cli(
        "doccano",
        IMPORT / "doccano.jsonl",
        out,
        "--complete-ids",
        IMPORT / "doccano_complete_ids.txt",
        "--report",
        report,
    )
    captured = capsys.readouterr()
    assert "eer-import doccano: 6 documents, 12 spans (LOC 3, MISC 4, ORG 2, PER 3), 3 complete" in captured.out
    assert "warning: " in captured.err and "snapped to words 4-5 'Brussels'" in captured.err
    docs = read_jsonl(out)
    assert [d.id for d in docs if d.is_complete] == ["1", "3", "5"]
    data = json.loads(report.read_text())
    assert data["documents"] == 6 and data["warnings"] == 1 and len(data["warning_messages"]) == 1


def test_cli_complete_output_and_complete_flag(tmp_path, capsys):
    train, held = tmp_path / "train.jsonl", tmp_path / "complete.jsonl"
    run_cli(
        "doccano",
        IMPORT / "doccano.jsonl",
        train,
        "--complete-ids",
        IMPORT / "doccano_complete_ids.txt",
        "--complete-output",
        held,
    )
    assert [d.id for d in read_jsonl(train)] == ["2", "4", "6"] and [d.id for d in read_jsonl(held)] == ["1", "3", "5"]
    assert "wrote 3 -> " in capsys.readouterr().out
    run_cli("label-studio", IMPORT / "label_studio.json", train, "--complete", "--annotators", "union")
    docs = read_jsonl(train)
    # task 102's only annotation was cancelled: nobody annotated it, so --complete does not make it complete
    assert [d.id for d in docs if d.is_complete] == ["101"] and len(docs[0].spans) == 3
    assert "1 unannotated (never complete)" in capsys.readouterr().out


def test_cli_errors_leave_no_output(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    with pytest.raises(SystemExit):
        run_cli("brat", IMPORT / "brat", out, "--annotators", "union")
    assert "--annotators is an option of the label-studio format, not of brat" in capsys.readouterr().err
    bad = jsonl(tmp_path, "bad.jsonl", [{"id": 1, "text": "Paris.", "label": [[0, 9, "LOC"]]}])
    with pytest.raises(SystemExit):
        run_cli("doccano", bad, out)
    assert f"eer-import: error: {bad}:1: document '1': span label[0] [0, 9) is out of range" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize(
    "ids, line, named",
    [
        ("id\n1\n3\n5\n", 1, "'id' (line 1)"),  # a header row
        ("\ufeff1\r\n# checked\r\n30\r\n5\r\n", 3, "'30' (line 3)"),  # a typo; the BOM and CRLF of a spreadsheet
    ],
)
def test_complete_ids_that_name_no_document_are_named_by_their_line(ids, line, named, tmp_path, capsys):
    path = tmp_path / "complete_ids.txt"
    path.write_text(ids, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    with pytest.raises(SystemExit):
        run_cli("doccano", IMPORT / "doccano.jsonl", out, "--complete-ids", path)
    assert capsys.readouterr().err.strip() == (
        f"eer-import: error: {path}:{line}: 1 id names no document of {IMPORT / 'doccano.jsonl'}: {named}; list the export's "
        "document ids, one per line (no header)"
    )
    assert not out.exists()
    assert read_ids(path) == {i: n for n, i in enumerate(ids.lstrip("\ufeff").splitlines(), 1) if i and i[0] != "#"}


@pytest.mark.parametrize("ids", ["", "\n\n", "# complete documents\n\n", "\ufeff\r\n  \r\n"])
def test_complete_ids_that_name_no_id_at_all_are_an_error_and_nothing_is_written(ids, tmp_path, capsys):
    path = tmp_path / "complete_ids.txt"
    path.write_text(ids, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    out.write_text("kept\n")
    with pytest.raises(SystemExit):
        run_cli("doccano", IMPORT / "doccano.jsonl", out, "--complete-ids", path)
    err = capsys.readouterr().err.strip()
    assert err == (
        f"eer-import: error: {path}: --complete-ids names no document id (the file is empty, or only blank lines and # "
        "comments); list the ids of the complete documents, one per line, or leave out --complete-ids"
    )
    assert out.read_text() == "kept\n"


@pytest.mark.integration
def test_readme_walk_import_estimate_train(tmp_path, tiny_env, monkeypatch, capsys):
    """README 'Train on your own data' (docs/data.md, 'Your own annotations'): a tool export -> partial
    JSON lines -> ratio -> a trained model, no gold file (the tiny encoder stands in for MiniLM in training)."""
    from allennlp.commands.train import train_model_from_file
    from conftest import REPO

    from eer_plugin.commands import estimate_ratio

    train, complete = tmp_path / "train.jsonl", tmp_path / "complete.jsonl"
    run_cli(
        "doccano",
        IMPORT / "doccano.jsonl",
        train,
        "--complete-ids",
        IMPORT / "doccano_complete_ids.txt",
        "--complete-output",
        complete,
    )
    estimate = estimate_ratio.run(
        estimate_ratio.add_arguments(__import__("argparse").ArgumentParser()).parse_args(
            [str(complete), "--partial", str(train), "--encoder", "all-MiniLM-L6-v2", "--resamples", "200"]
        )
    )
    suggested = estimate["suggested"]
    for name, value in {"EER_TRAIN_DATA": train, "EER_DEV_DATA": complete, "EER_TEST_DATA": complete}.items():
        monkeypatch.setenv(name, str(value))
    overrides = {
        "model.entity_ratio": suggested["entity_ratio"],
        "model.ratio_margin": suggested["ratio_margin"],
        "trainer.num_epochs": 1,
    }
    model = train_model_from_file(
        str(REPO / "training_configs" / "eer_short.jsonnet"), str(tmp_path / "model"), overrides=json.dumps(overrides)
    )
    assert model.entity_ratio == suggested["entity_ratio"] and (tmp_path / "model" / "model.tar.gz").exists()
    capsys.readouterr()


def test_brat_types_take_the_names_visual_conf_gives_them_with_spaces(tmp_path):
    """``Product_Name | Product Name`` (what eer-export writes for a type with spaces) names the type; a display
    name that is more than the type with spaces (``PER | Person``), another section (where brat splits names from
    settings at white space, so ``Other_Kind | Other Kind`` there would make it drop the file), a comment: nothing
    changes."""
    write(tmp_path, "b/x.txt", "Jimi sold Acme Rocket Fuel\n")
    write(tmp_path, "b/x.ann", "T1\tPER 0 4\tJimi\nT2\tProduct_Name 10 21\tAcme Rocket\nT3\tOther_Kind 22 26\tFuel\n")
    conf = "[labels]\nPER | Person | P\nProduct_Name | Product Name\n# Other_Kind | Other Kind\n[drawing]\n"
    write(tmp_path, "b/visual.conf", conf + "Other_Kind|Other:Kind\tbgColor:#ffccaa\n")
    (document,), _ = import_documents("brat", tmp_path / "b", tokenize_text)
    assert document.spans == [(0, 1, "PER"), (2, 4, "Product Name"), (4, 5, "Other_Kind")]


def test_a_brat_type_with_a_space_names_the_fix(tmp_path):
    write(tmp_path, "b/x.txt", "Acme Rocket\n")
    ann = write(tmp_path, "b/x.ann", "T1\tProduct Name 0 11\tAcme Rocket\n")
    with pytest.raises(AnnotationImportError, match="the type 'Product Name' holds a space") as info:
        import_documents("brat", tmp_path / "b", tokenize_text)
    assert (info.value.path, info.value.line) == (str(ann), 1) and "'Product_Name'" in str(info.value)
