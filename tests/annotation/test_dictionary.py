"""Dictionary labelling (``eer_plugin.annotation.dictionary``, ``eer-dictionary``): the trie matcher against a
brute-force matcher, character offsets, the training reader on the output, propagate, bad input, and the
command end to end from an empty directory."""

import json
import os
import random
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from eer_plugin.annotation.dictionary import Matcher, label_documents, label_file
from eer_plugin.commands import dictionary as command
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats import read_jsonl
from eer_plugin.corpus.tokenizer import tokenize_text

# ß and SS both fold to "ss": case folding is more than lower(); a soft hyphen or a bidi mark inside a word is
# invisible: "b\u00ad" and "b" are the same word
WORDS = ["a", "A", "b", "B", "c", "ß", "SS", "ss", "b\u00ad", "\u200eS\u00adS", "a\u2060a", "aa"]
# composed and decomposed: the same word (and under folding, "Ǆ" and "ǆ" as well as "é" and "É")
WORDS += ["é", "e\u0301", "É", "E\u0301", "ǰ", "j\u030c"]
TYPES = ["PER", "LOC"]


def brute_force(tokens, sentence_ends, entries, case_insensitive, stop, rule):
    """The specification, slowly: at each word, the longest listed form (after folding, without stop-listed
    and, under 'skip', ambiguous forms) ending within the sentence; then go on after it."""
    visible = lambda t: unicodedata.normalize("NFC", "".join(c for c in t if unicodedata.category(c) != "Cf"))  # noqa: E731
    fold = (lambda t: unicodedata.normalize("NFC", visible(t).casefold())) if case_insensitive else visible
    key = lambda words: tuple(fold(t) for t in words)  # noqa: E731
    stopped = {key(s) for s in stop}
    listings = {}
    for form, label, source in entries:
        if key(form) not in stopped:
            listings.setdefault(key(form), []).append((label, source))
    table = {}
    for form, found in listings.items():
        if len({label for label, _ in found}) > 1 and rule == "skip":
            continue
        table[form] = found[0]
    matches, start = [], 0
    for end in sentence_ends:
        i = start
        while i < end:
            for j in range(end, i, -1):
                if key(tokens[i:j]) in table:
                    matches.append((i, j, *table[key(tokens[i:j])]))
                    i = j
                    break
            else:
                i += 1
        start = end
    return matches


forms = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)
entries = st.lists(st.tuples(forms, st.sampled_from(TYPES), st.sampled_from(["d1", "d2"])), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    entries=entries,
    tokens=st.lists(st.sampled_from(WORDS), min_size=1, max_size=30),
    cuts=st.sets(st.integers(1, 29), max_size=4),
    case_insensitive=st.booleans(),
    stop=st.lists(forms, max_size=2),
    rule=st.sampled_from(["skip", "first"]),
)
def test_matcher_equals_brute_force(entries, tokens, cuts, case_insensitive, stop, rule):
    """Longest match, leftmost, on word boundaries, within sentences, case folding, stop list, ambiguity."""
    sentence_ends = sorted({c for c in cuts if c < len(tokens)} | {len(tokens)})
    matcher = Matcher(case_insensitive, rule, stop)
    sources = {}
    for form, label, source in entries:
        if source not in sources:
            sources[source] = matcher.add_source(source)
        matcher.add(form, label, sources[source])
    assert matcher.match(tokens, sentence_ends) == brute_force(
        tokens, sentence_ends, entries, case_insensitive, stop, rule
    )


def test_ambiguous_forms_are_counted_under_either_rule():
    for rule, expected in (("skip", []), ("first", [(0, 1, "LOC", "d")])):
        matcher = Matcher(ambiguous=rule)
        source = matcher.add_source("d", "d.tsv")
        assert [matcher.add(["Washington"], t, source, n) for n, t in ((1, "LOC"), (2, "PER"), (3, "LOC"))] == [
            "added",
            "ambiguous",
            "ambiguous",
        ]
        assert matcher.match(["Washington", "said"]) == expected
        [form] = matcher.ambiguous_forms()
        assert form["form"] == "Washington" and [listing["where"] for listing in form["listings"]] == [
            "d.tsv:1",
            "d.tsv:2",
            "d.tsv:3",
        ]
        assert form["kept"] == (None if rule == "skip" else "LOC")


texts = st.lists(
    st.tuples(
        st.sampled_from(
            ["New", "York", "Times", "Merkel's", "U.S.", "3.5", "Zürich", "Zü\u00adrich", "Yo\u2060rk", "(", "."]
        ),
        st.sampled_from([" ", "  ", "\n", "\t "]),
    ),
    min_size=1,
    max_size=25,
).map(lambda parts: "".join(w + s for w, s in parts))


@settings(max_examples=150, deadline=None)
@given(text=texts)
def test_character_offsets_equal_the_matched_text(text):
    matcher = Matcher()
    source = matcher.add_source("names")
    for form, label in (
        ("New York", "LOC"),
        ("New York Times", "ORG"),
        ("Merkel", "PER"),
        ("U.S.", "LOC"),
        ("Zürich", "LOC"),
        ("\u200eZ\u00adürich", "LOC"),  # the same form, as copied from a web page: a duplicate, not a second type
    ):
        matcher.add(tokenize_text(form)[0], label, source)
    words, offsets, ends = tokenize_text(text)
    [document], _ = label_documents([Document("d", words, ends, text=text)], matcher, offsets=[offsets])
    assert len(document.provenance or []) == len(document.spans)
    for item in document.provenance or []:
        assert text[item["char_start"] : item["char_end"]] == item["text"]
        assert tokenize_text(item["text"])[0] == words[item["start"] : item["end"]]
    plain = text.replace("\u00ad", "").replace("\u2060", "")  # the same matches without the invisible characters
    plain_words = tokenize_text(plain)[0]
    assert [(s, e, t) for s, e, t in document.spans] == [
        (s, e, t) for s, e, t, _ in matcher.match(plain_words, tokenize_text(plain)[2])
    ]
    Document.from_json(json.loads(json.dumps(document.to_json())))  # the format's own check agrees


def _write(path: Path, text) -> Path:
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


NAMES = "# people and places\nAngela Merkel\tPER\nMerkel\tPER\nBerlin\tLOC\nNew York\tLOC\n"
DOCS = [
    {"id": "d1", "text": "Angela Merkel flew to New York.\nMerkel's staff stayed in Berlin."},
    {"id": "d2", "text": "Nothing to see here."},
]


def test_label_file_writes_what_train_reads(tmp_path):
    """The output is read unchanged by the training reader (eer_documents), spans and char offsets exact."""
    from allennlp.data.token_indexers import SingleIdTokenIndexer

    from eer_plugin.data.reader import PartialDocumentReader

    names = _write(tmp_path / "names.tsv", NAMES)
    docs = _write(tmp_path / "docs.jsonl", "".join(json.dumps(d) + "\n" for d in DOCS))
    summary = label_file(str(docs), str(tmp_path / "out.jsonl"), [str(names)], report=str(tmp_path / "report.json"))
    assert summary.matches_per_type == {"LOC": 2, "PER": 2} and summary.matches_per_dictionary == {"names": 4}
    assert summary.documents_without_match == 1 and summary.share_without_match == 0.5
    reader = PartialDocumentReader(model_name="words", token_indexers={"tokens": SingleIdTokenIndexer()})
    first, second = reader.read_documents(str(tmp_path / "out.jsonl"))
    assert [(first.tokens[s:e], t) for s, e, t in first.spans] == [
        (["Angela", "Merkel"], "PER"),
        (["New", "York"], "LOC"),
        (["Merkel"], "PER"),
        (["Berlin"], "LOC"),
    ]
    assert [p["text"] for p in first.provenance] == ["Angela Merkel", "New York", "Merkel", "Berlin"]
    assert all(
        first.text[p["char_start"] : p["char_end"]] == p["text"] and p["source"] == "names" for p in first.provenance
    )
    assert second.spans == [] and list(reader.read(str(tmp_path / "out.jsonl")))
    assert json.loads((tmp_path / "report.json").read_text())["matches"] == 4


@given(
    st.lists(st.sampled_from(["", " ", "\n\t", "Merkel met Smith", "in Berlin ."]), min_size=1, max_size=8),
    st.sampled_from(["text", "tokens"]),
)
@settings(max_examples=25, deadline=None)
def test_documents_without_words_are_skipped_and_listed(texts, kind):
    """A folder of real documents holds empty ones (empty text, white space, no tokens): each is skipped with
    its file:line in the summary, the others are labelled and written in order; no words at all is an error."""
    import tempfile

    line = lambda t: json.dumps({"text": t} if kind == "text" else {"tokens": t.split()}) + "\n"  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        names = _write(Path(tmp) / "names.tsv", NAMES)
        docs = _write(Path(tmp) / "docs.jsonl", "".join(line(t) for t in texts))
        empty = [f"{docs}:{n}" for n, t in enumerate(texts, 1) if not t.strip()]
        if len(empty) == len(texts):
            with pytest.raises(Exception, match=f"no documents with words.*{len(empty)} line"):
                label_file(str(docs), str(Path(tmp) / "out.jsonl"), [str(names)])
            assert not (Path(tmp) / "out.jsonl").exists()
            return
        summary = label_file(str(docs), str(Path(tmp) / "out.jsonl"), [str(names)])
        written = read_jsonl(str(Path(tmp) / "out.jsonl"))
        assert summary.skipped_without_words == empty and summary.documents == len(texts) - len(empty)
        assert [" ".join(d.tokens) for d in written] == [" ".join(t.split()) for t in texts if t.strip()]
        assert [d.id for d in written] == [f"docs-{n}" for n, t in enumerate(texts, 1) if t.strip()]
        assert any(
            line.startswith(f"skipped {len(empty)} document{'s' * (len(empty) != 1)} without words")
            for line in summary.lines()
        ) == bool(empty)


FORM = st.text(alphabet=st.sampled_from(list("ab C,;\"'.-&") + ["é", "東"]), min_size=1, max_size=12).filter(
    lambda form: form.strip() and not form.strip().startswith("#")
)


@given(
    st.lists(st.tuples(FORM, st.sampled_from(["PER", "LOC", "ORG"])), min_size=1, max_size=8),
    st.sampled_from([",", ";", "\t"]),
    st.booleans(),
    st.booleans(),
)
@settings(max_examples=60, deadline=None)
def test_a_spreadsheet_saved_as_csv_or_tsv_reads_as_its_entries(entries, delimiter, header, padded):
    """What a spreadsheet writes (Python's csv writer: quotes around a cell with the delimiter or a quote,
    doubled quotes inside): ``.csv`` with ``,`` or ``;`` (chosen from the file), an optional header row and
    rows padded with empty cells; ``.tsv`` from a tab-delimited export, its quoted cells unquoted, its header
    row (``Name<TAB>Type``) no entry."""
    import csv
    import io
    import tempfile

    from eer_plugin.annotation.dictionary_files import dictionary_lines

    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    if header:
        writer.writerow(["Name", "Type"])
    for form, label in entries:
        writer.writerow([form, label] + ([""] * 2 if padded and delimiter != "\t" else []))
    suffix = ".tsv" if delimiter == "\t" else ".csv"
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp) / f"names{suffix}", buffer.getvalue())
        got = [(form, label) for _, form, label in dictionary_lines(str(path))]
    assert got == [(form.strip(), label) for form, label in entries]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig", "utf-8"])
@pytest.mark.parametrize("name, delimiter", [("names.txt", "\t"), ("names.tsv", "\t"), ("names.csv", ",")])
@pytest.mark.parametrize("header", ["Type", "Entity", "entity type", "Label", "NER", "Category", "TYPES"])
def test_a_sheet_with_a_header_row_saved_by_excel_gives_only_its_entries(name, delimiter, encoding, header, tmp_path):
    """Excel's "Unicode Text" (UTF-16 with a byte-order mark, TABs, CRLF), "CSV UTF-8" (a UTF-8 byte-order mark)
    and plain CSV/TSV keep the sheet's header row: it is no entry ('Name' is not a name of the type 'Type')."""
    from eer_plugin.annotation.dictionary_files import dictionary_lines

    rows = [("Name", header), ("Loyola de Palacio", "PER"), ("Brussels", "LOC")]
    text = "".join(f"{form}{delimiter}{label}\r\n" for form, label in rows)
    path = _write(tmp_path / name, text.encode(encoding))
    assert [(form, label) for _, form, label in dictionary_lines(str(path))] == rows[1:]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", " \n", "Angela Merkel met Berlin's mayor.", "In Zürich , Merkel sprach.\r\nBerlin."]),
            st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "gzip"]),
        ),
        min_size=1,
        max_size=6,
    )
)
@settings(max_examples=20, deadline=None)
def test_a_folder_of_text_files_is_one_document_per_file(files):
    """What a user with a folder of documents has: every .txt file below it (nested, any marked encoding,
    compressed) is a document named by its path, its spans' character offsets exact; empty files are skipped
    and listed, other files left out with a warning, hidden ones ignored."""
    import gzip
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        expected = {}
        for k, (text, encoding) in enumerate(files):
            name = f"part{k % 2}/doc{k}.txt" + (".gz" if encoding == "gzip" else "")
            data = gzip.compress(text.encode("utf-8")) if encoding == "gzip" else text.encode(encoding)
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
            expected[name] = text if text.strip() else None  # kept exactly: the offsets index it
        _write(root / "notes.pdf", b"%PDF-1.4")
        _write(root / ".hidden.txt", "Berlin")
        names = _write(Path(tmp) / "names.tsv", NAMES)
        words = {n: t for n, t in expected.items() if t is not None}
        if not words:
            with pytest.raises(Exception, match="no words in any of the"):
                label_file(str(root), str(Path(tmp) / "out.jsonl"), [str(names)])
            return
        summary = label_file(str(root), str(Path(tmp) / "out.jsonl"), [str(names)])
        written = read_jsonl(str(Path(tmp) / "out.jsonl"))
    assert [d.id for d in written] == sorted(words)
    assert [d.text for d in written] == [words[n] for n in sorted(words)]
    assert summary.skipped_without_words == [str(root / n) for n in sorted(expected) if expected[n] is None]
    assert summary.warnings[0] == f"{root}: left out 1 file that is not .txt (e.g. notes.pdf)"
    for document in written:
        assert all(document.text[p["char_start"] : p["char_end"]] == p["text"] for p in document.provenance)
        for name in ("Merkel", "Berlin"):  # every occurrence labelled, inside "Angela Merkel" or alone
            assert sum(p["text"].count(name) for p in document.provenance) == document.text.count(name)


def test_raw_text_given_as_one_file_or_an_empty_folder_says_what_to_give(tmp_path):
    names = _write(tmp_path / "names.tsv", NAMES)
    raw = _write(tmp_path / "article.txt", "Angela Merkel visited Berlin.\n")
    with pytest.raises(Exception, match=r"article\.txt:1: .*for raw text give a folder of \.txt files"):
        label_file(str(raw), str(tmp_path / "out.jsonl"), [str(names)])
    (tmp_path / "folder").mkdir()
    _write(tmp_path / "folder" / "a.docx", b"PK")
    with pytest.raises(Exception, match=r"folder: no \.txt files below this folder .*1 other file, e\.g\. a\.docx"):
        label_file(str(tmp_path / "folder"), str(tmp_path / "out.jsonl"), [str(names)])
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize(
    "name, text, says",
    [
        ("article.txt", "Angela Merkel visited Berlin.\n", "the file is plain text, not CoNLL (one word per line); read as"),
        ("long.txt", "Angela Merkel met the mayor of Berlin on Monday\n", "the file is plain text, not CoNLL"),
        ("names.tsv", "Angela Merkel\tPER\nBerlin\tLOC\n", "given as INPUT? Give the documents as INPUT and the "
         "dictionary with --dictionary FILE"),
        ("names.txt", "Angela Merkel,PER\n", "given as INPUT?"),
        ("odd.conll", "Angela B-PER\nMerkel X\n", "read as a CoNLL file: for raw text give a folder"),
    ],
)  # fmt: skip
def test_input_that_is_no_document_file_gets_this_commands_fix_once(name, text, says, tmp_path):
    """INPUT read as CoNLL that is plain text or a dictionary: the reader's own fix for training data ("label raw
    text first: eer-dictionary ...") is not repeated to the command that does it; the one fix given is this
    command's, and nothing is written."""
    from eer_plugin.annotation.dictionary_files import DictionaryError

    names = _write(tmp_path / "dictionary.tsv", NAMES)
    source = _write(tmp_path / name, text)
    with pytest.raises(DictionaryError) as raised:
        label_file(str(source), str(tmp_path / "out.jsonl"), [str(names)])
    message = str(raised.value)
    assert message.startswith(f"{source}:") and says in message and "\n" not in message
    assert "eer-dictionary INPUT" not in message and "Fix:" not in message and "it labels documents" not in message
    assert not (tmp_path / "out.jsonl").exists()


def test_propagate_labels_other_occurrences_and_keeps_annotations(tmp_path):
    docs = [
        {"id": "a", "tokens": ["Kohl", "met", "Yeltsin", "in", "Bonn"], "spans": [[0, 1, "PER"], [4, 5, "LOC"]]},
        {"id": "b", "tokens": ["Yeltsin", "left", "Bonn", "for", "Kohl", "Kohl"], "spans": [[0, 1, "ORG"]]},
        {"id": "c", "tokens": ["Kohl", "and", "Bonn"], "is_complete": True},
        {"id": "d", "tokens": ["Kohl", "in", "Bonn"], "negative_spans": [[2, 3]]},
    ]
    path = _write(tmp_path / "partial.jsonl", "".join(json.dumps(d) + "\n" for d in docs))
    summary = label_file(str(path), str(tmp_path / "out.jsonl"), propagate=True)
    a, b, c, d = read_jsonl(tmp_path / "out.jsonl")
    # the annotation unchanged; an unannotated region of an annotated document gets the other documents' names
    assert a.spans == [(0, 1, "PER"), (2, 3, "ORG"), (4, 5, "LOC")] and [p["start"] for p in a.provenance] == [2]
    assert b.spans == [(0, 1, "ORG"), (2, 3, "LOC"), (4, 5, "PER"), (5, 6, "PER")]  # the person's ORG kept
    assert c.spans == [] and c.is_complete  # complete: its O words are observed
    assert d.spans == [(0, 1, "PER")]  # never over a negative span
    assert {p["source"] for p in b.provenance} == {"propagate"}
    assert summary.complete_documents_kept == 1 and summary.overlaps_dropped == 1
    [conflict] = summary.conflicts  # a person's "no entity here" against a name annotated elsewhere
    assert conflict.endswith(
        "partial.jsonl:4: propagate match (2, 3, LOC) 'Bonn' overlaps an annotated or negative span; kept the annotation"
    )


def test_propagate_reports_a_conflict(tmp_path):
    docs = [
        {"id": "a", "tokens": ["New", "York", "Times"], "spans": [[0, 3, "ORG"]]},
        {"id": "b", "tokens": ["New", "York", "is", "big"], "spans": [[0, 2, "LOC"]]},
        {"id": "c", "tokens": ["the", "New", "York", "Times"], "spans": [[1, 3, "LOC"]]},
    ]
    path = _write(tmp_path / "partial.jsonl", "".join(json.dumps(d) + "\n" for d in docs))
    summary = label_file(str(path), str(tmp_path / "out.jsonl"), propagate=True)
    assert read_jsonl(tmp_path / "out.jsonl")[2].spans == [(1, 3, "LOC")]  # the annotation wins
    assert len(summary.conflicts) == 1 and "(1, 4, ORG) 'New York Times'" in summary.conflicts[0]


def test_output_labelled_again_and_the_first_rule_warns(tmp_path):
    """A second dictionary over this command's own output: earlier spans and provenance kept, offsets still exact;
    a form listed under two types with --ambiguous first is kept once, with a warning naming both lines."""
    names = _write(tmp_path / "names.tsv", NAMES)
    docs = _write(tmp_path / "docs.jsonl", "".join(json.dumps(d) + "\n" for d in DOCS))
    label_file(str(docs), str(tmp_path / "once.jsonl"), [str(names)])
    more = _write(tmp_path / "more.tsv", "Berlin\tGPE\nstaff\tROLE\n")
    summary = label_file(
        str(tmp_path / "once.jsonl"), str(tmp_path / "twice.jsonl"), [str(more), str(names)], ambiguous="first"
    )
    first, _ = read_jsonl(tmp_path / "twice.jsonl")
    assert [(p["text"], p["type"], p["source"]) for p in first.provenance] == [
        ("Angela Merkel", "PER", "names"),
        ("New York", "LOC", "names"),
        ("Merkel", "PER", "names"),
        ("Berlin", "LOC", "names"),
        ("staff", "ROLE", "more"),
    ]
    assert all(first.text[p["char_start"] : p["char_end"]] == p["text"] for p in first.provenance)
    [form] = summary.ambiguous
    assert form["form"] == "Berlin" and form["kept"] == "GPE"
    assert any(w.startswith(f"{names}:4: 'Berlin' is listed as GPE ({more}:1) and as LOC") for w in summary.warnings)


def test_type_warnings(tmp_path):
    lines = [f"Person {i}\tPER" for i in range(25)] + ["Someone Else\tPRE"]
    names = _write(tmp_path / "names.tsv", "\n".join(lines) + "\n")
    docs = _write(tmp_path / "docs.jsonl", json.dumps({"tokens": ["Person", "1"], "spans": [[0, 2, "PERSON"]]}) + "\n")
    summary = label_file(str(docs), str(tmp_path / "out.jsonl"), [str(names)])
    assert any(
        f"{names}:26: type 'PRE' is listed on this line only" in w and "did you mean 'PER'" in w
        for w in summary.warnings
    )
    assert any(f"{names}:1: type 'PER' is not used by the input's annotation (PERSON)" in w for w in summary.warnings)


def test_an_unknown_header_row_is_named_as_one_in_the_type_warning(tmp_path):
    """A first row 'Company<TAB>Sector' (a header the reader cannot know) becomes an entry, but its one-line type is
    named as a likely header row, with the fix; a one-line type elsewhere in the file is not."""
    lines = ["Company\tSector"] + [f"Firm {i}\tORG" for i in range(25)] + ["Someone\tPER"]
    names = _write(tmp_path / "names.tsv", "\n".join(lines) + "\n")
    docs = _write(tmp_path / "docs.jsonl", json.dumps({"text": "Firm 1 hired Someone."}) + "\n")
    warnings = label_file(str(docs), str(tmp_path / "out.jsonl"), [str(names)]).warnings
    [sector] = [w for w in warnings if "'Sector'" in w]
    assert sector.startswith(f"{names}:1: type 'Sector' is listed on this line only")
    assert "(a header row? name its type column 'type', or remove the row)" in sector
    [person] = [w for w in warnings if "'PER'" in w]
    assert person.startswith(f"{names}:27: ") and "header row?" not in person


def test_case_folding_and_stop_list_from_files(tmp_path):
    names = _write(tmp_path / "names.tsv", "Apple\tORG\nMay\tPER\n")
    stop = _write(tmp_path / "stop.txt", "# months\nmay\n")
    docs = _write(tmp_path / "docs.jsonl", json.dumps({"text": "APPLE sold apples in May."}) + "\n")
    label_file(str(docs), str(tmp_path / "out.jsonl"), [str(names)], case_insensitive=True, stop_list=str(stop))
    [doc] = read_jsonl(tmp_path / "out.jsonl")
    assert doc.spans == [(0, 1, "ORG")] and doc.id == "docs-1"


def test_conll_input_tags_ignored_and_named_dictionaries(tmp_path):
    a = _write(tmp_path / "a.tsv", "EU\tORG\n")
    b = _write(tmp_path / "b.jsonl", json.dumps({"text": "German", "type": "MISC"}) + "\n")
    summary = label_file(str(FIXTURES / "conll2003_tiny.txt"), str(tmp_path / "out.jsonl"), [f"orgs={a}", str(b)])
    docs = read_jsonl(tmp_path / "out.jsonl")
    german = sum(d.tokens.count("German") for d in docs)
    assert summary.input_kind == "conll" and summary.matches_per_dictionary == {"orgs": 1, "b": german} and german > 1
    assert {t for d in docs for *_, t in d.spans} == {"ORG", "MISC"} and not any(d.is_complete for d in docs)


# ------------------------------------------------------------------------------------------ bad input
class BadInput:
    """One bad file: the file it is written to, its content, and the one line of error it must give."""

    def __init__(self, name, content, message, role="dictionary"):
        self.name, self.content, self.message, self.role = name, content, message, role

    def __repr__(self):
        return self.name


BAD = [
    BadInput("empty.tsv", "# nothing yet\n\n", r"empty\.tsv: empty dictionary"),
    BadInput("notab.tsv", "Berlin\tLOC\nParis LOC\n", r"notab\.tsv:2: no TAB in 'Paris LOC'"),
    BadInput("twotabs.tsv", "Paris\tLOC\tFR\n", r"twotabs\.tsv:1: 2 TABs"),
    BadInput("noform.tsv", "\tLOC\n", r"noform\.tsv:1: empty surface form"),
    BadInput("notype.tsv", "Paris\t\n", r"notype\.tsv:1: bad type ''"),
    BadInput("typeO.tsv", "Paris\tO\n", r"typeO\.tsv:1: bad type 'O'"),
    BadInput(
        "latin1.tsv",
        "Berlin\tLOC\nZ\xfcrich\tLOC\n".encode("latin-1"),
        r"latin1\.tsv:2: invalid UTF-8 byte 0xfc.*iconv -f latin1 -t utf-8",
    ),
    BadInput(
        "repeated.jsonl",
        '{"text": "Paris", "type": "LOC", "type": "GPE"}\n',
        r'repeated\.jsonl:1: repeated key "type" at column 34',
    ),
    BadInput(
        "typo.jsonl",
        '{"txt": "Paris", "type": "LOC"}\n',
        r"typo\.jsonl:1: unknown key\(s\) 'txt' \(did you mean 'text'\?\)",
    ),
    BadInput(
        "documents.jsonl",
        '{"id": "1", "text": "Paris"}\n',
        r'documents\.jsonl:1: no "type": an entry is \{"text": "New York", "type": "LOC"\} \(documents go to INPUT\)$',
    ),
    BadInput("four.csv", "Paris,LOC\na,b,c,PER\n", r"four\.csv:2: 4 cells in 'a,b,c,PER': expected two"),
    BadInput("open.csv", '"Paris,LOC\n', r"open\.csv:1: a quoted cell does not end on this line"),
    BadInput(
        "huge.csv",
        "Paris,LOC\n" + "x" * 140_000 + ",LOC\n",
        r"huge\.csv:2: a line of 140,004 characters, more than a CSV cell may hold \(131,072\): expected "
        r"'surface form,TYPE' per line \(a list of names, not documents: those go to INPUT\)$",
    ),
    BadInput("comma.tsv", "Paris,LOC\n", r"comma\.tsv:1: no TAB in 'Paris,LOC'.* \(a CSV file\? name it \.csv\)"),
    BadInput("notjson.jsonl", '{"text": "Paris", "type": "LOC"}\n{"text": \n', r"notjson\.jsonl:2: invalid JSON"),
    BadInput(
        "docs_repeated.jsonl",
        '{"id": "a", "text": "x", "id": "b"}\n',
        r'docs_repeated\.jsonl:1: repeated key "id" at column 26',
        "input",
    ),
    BadInput(
        "docs_neither.jsonl",
        '{"id": "x"}\n',
        r"docs_neither\.jsonl:1: expected \"text\" \(raw text\) or \"tokens\"",
        "input",
    ),
    BadInput(
        "docs_keys.jsonl", '{"text": "x", "txet": "y"}\n', r"docs_keys\.jsonl:1: unknown key\(s\) 'txet'", "input"
    ),
    BadInput(
        "docs_only_empty_text.jsonl",
        '{"text": ""}\n\n{"text": " \\n\\t"}\n',
        r"docs_only_empty_text\.jsonl: no documents with words; .* \(2 lines without words\)",
        "input",
    ),
    BadInput(
        "docs_text_type.jsonl", '{"text": 12}\n', r"docs_text_type\.jsonl:1: 'text' must be a string, got int", "input"
    ),
    BadInput(
        "docs_mixed.jsonl",
        '{"text": "Paris"}\n\n{"text": "Rome"}\n{"tokens": ["Berlin"], "id": "b"}\n{"text": "Oslo"}\n',
        r'docs_mixed\.jsonl:4: a line with "tokens", after "text" on line 1: lines with "text" \(raw text\) and lines '
        r'with "tokens" \(words\) in one file; give one kind per file',
        "input",
    ),
    BadInput(
        "docs_same_id.jsonl",
        '{"id": 1, "text": "a"}\n{"id": "1", "text": "b"}\n',
        r"docs_same_id\.jsonl:2: document id '1' already used on line 1",
        "input",
    ),
    BadInput(
        "stop.tsv",
        "# forms never matched\nThe\nBerlin\tLOC\n",
        r"stop\.tsv:3: a TAB in 'Berlin\\tLOC': a stop list holds one surface form per line",
        "stop list",
    ),
    BadInput("stop_empty.txt", "", r"stop_empty\.txt: empty stop list: no surface forms", "stop list"),
    BadInput(
        "stop_comments.txt",
        "# forms never matched\n\n  \n# none yet\n",
        r"stop_comments\.txt: empty stop list: no surface forms; .*leave out --stop-list",
        "stop list",
    ),
    BadInput(
        "docs_latin1.jsonl",
        '{"text": "Z\xfcrich"}\n'.encode("latin-1"),
        r"docs_latin1\.jsonl:1: invalid UTF-8 byte 0xfc",
        "input",
    ),
]


@pytest.mark.parametrize("case", BAD, ids=repr)
def test_bad_input_is_one_line_naming_file_and_line(case, tmp_path, capsys):
    good_dictionary = _write(tmp_path / "good.tsv", "Paris\tLOC\n")
    good_input = _write(tmp_path / "good.jsonl", '{"text": "Paris"}\n')
    bad = _write(tmp_path / case.name, case.content)
    output = _write(tmp_path / "out.jsonl", "previous output\n")
    args = [
        str(bad if case.role == "input" else good_input),
        str(output),
        "--dictionary",
        str(bad if case.role == "dictionary" else good_dictionary),
    ] + (["--stop-list", str(bad)] if case.role == "stop list" else [])
    with pytest.raises(SystemExit) as exit:
        command.main(args)
    assert exit.value.code == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("eer-dictionary: error: ")
    assert __import__("re").search(case.message, err), err
    assert output.read_text() == "previous output\n"  # nothing already written is lost


def test_a_dangling_link_in_a_text_folder_is_named_not_left_out(tmp_path, capsys):
    """A .txt link whose file is gone is a document of the folder that cannot be read: one error line naming it
    (before, it was left out unseen and the corpus lost a document)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    _write(folder / "a.txt", "Paris is big .\n")
    (folder / "b.txt").symlink_to(tmp_path / "moved-away.txt")
    names = _write(tmp_path / "names.tsv", "Paris\tLOC\n")
    output = _write(tmp_path / "out.jsonl", "previous output\n")
    with pytest.raises(SystemExit) as exit:
        command.main([str(folder), str(output), "--dictionary", str(names)])
    err = capsys.readouterr().err.strip()
    assert exit.value.code == 1 and err.startswith(f"eer-dictionary: error: {folder / 'b.txt'}: no such file")
    assert len(err.splitlines()) == 1
    assert output.read_text() == "previous output\n"


def test_output_that_is_an_input_is_refused(tmp_path, capsys):
    names = _write(tmp_path / "names.tsv", "Paris\tLOC\n")
    docs = _write(tmp_path / "docs.jsonl", '{"text": "Paris"}\n')
    with pytest.raises(SystemExit):
        command.main([str(docs), str(names), "--dictionary", str(names)])
    assert "is the same file as --dictionary names" in capsys.readouterr().err and names.read_text() == "Paris\tLOC\n"


# ------------------------------------------------------------------------------------------ end to end
@pytest.mark.integration
def test_command_from_an_empty_directory(tmp_path):
    """`eer-ner eer-dictionary docs.jsonl out.jsonl --dictionary names.tsv`, a two-type TSV, outside the checkout."""
    _write(tmp_path / "names.tsv", NAMES)
    _write(tmp_path / "docs.jsonl", "".join(json.dumps(d) + "\n" for d in DOCS))
    env = {k: v for k, v in os.environ.items() if not k.startswith("EER_")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "eer_plugin.cli",
            "eer-dictionary",
            "docs.jsonl",
            "out.jsonl",
            "--dictionary",
            "names.tsv",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "matches: 4 (per type: LOC 2, PER 2; per dictionary: names 4)" in done.stdout
    assert "documents with no match: 1 of 2 (50.0%)" in done.stdout
    first, _ = read_jsonl(tmp_path / "out.jsonl")
    assert [p["text"] for p in first.provenance] == ["Angela Merkel", "New York", "Merkel", "Berlin"]
    assert not (tmp_path / ".allennlp_plugins").exists() and Path.cwd() != tmp_path and REPO != tmp_path


@pytest.mark.parametrize(
    "provenance, message",
    [
        (
            [{"start": 0, "end": 1, "type": "LOC", "source": "d"}],
            r"provenance\[0\] \(0, 1, 'LOC'\) names no span of 'spans'",
        ),
        (
            [{"start": 0, "end": 1, "type": "PER", "source": "d", "char_start": 0, "char_end": 40}],
            r"char_start/char_end must index",
        ),
        (
            [{"start": 0, "end": 1, "type": "PER", "source": "d", "char_start": 0, "char_end": 4, "text": "Kahl"}],
            r"give the span's 'text'",
        ),
        ([{"start": 0, "end": 1, "type": "PER", "source": "d", "char_start": 0, "char_end": 4, "text": "Kohl"}], None),
        ([{"start": 0, "end": 1, "type": "PER", "source": "d", "origin": "x"}], r"unknown key\(s\) 'origin'"),
        ({"start": 0}, r"'provenance' must be a list"),
    ],
)
def test_the_format_checks_provenance(provenance, message):
    """The training reader's own check of the new keys: each provenance object names a span, its offsets index `text`."""
    from eer_plugin.corpus.documents import DocumentError

    data = {
        "id": "d",
        "tokens": ["Kohl", "said"],
        "spans": [[0, 1, "PER"]],
        "text": "Kohl  said",
        "provenance": provenance,
    }
    if message is None:
        assert Document.from_json(data).to_json()["provenance"] == provenance
        return
    with pytest.raises(DocumentError, match=message):
        Document.from_json(data)


def test_progress_bars_show_on_a_terminal_only(tmp_path, monkeypatch):
    """eer-dictionary's progress (each dictionary read, the documents labelled) goes to stderr when it is a
    terminal; piped or logged, stderr stays clean; the output is the same either way."""
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    names = _write(tmp_path / "names.tsv", NAMES)
    docs = _write(
        tmp_path / "docs.jsonl", "".join(json.dumps({"text": f"Merkel met Smith {i}."}) + "\n" for i in range(5))
    )
    outputs = []
    for stderr in (Terminal(), io.StringIO()):
        monkeypatch.setattr(sys, "stderr", stderr)
        out = tmp_path / f"out{len(outputs)}.jsonl"
        label_file(str(docs), str(out), [str(names)], progress=True)
        outputs.append((stderr.getvalue(), out.read_text()))
    (shown, first), (piped, second) = outputs
    assert "eer-dictionary: reading names" in shown and "eer-dictionary: labelling" in shown and "5/5" in shown
    assert piped == "" and first == second


def test_the_summary_names_the_most_matched_forms(tmp_path):
    """The forms that labelled the most spans, counted over the output's provenance, most first (ties by form),
    at most MOST_MATCHED of them: where a common word in a dictionary shows (``The`` as a place labels every
    sentence start), with the stop list as the fix."""
    from collections import Counter

    from eer_plugin.annotation.dictionary import MOST_MATCHED

    forms = [f"Name{i}" for i in range(MOST_MATCHED + 3)]
    names = _write(tmp_path / "names.tsv", "The\tLOC\n" + "".join(f"{form}\tPER\n" for form in forms))
    rng = random.Random(3)
    texts = [" ".join(rng.choice(forms + ["The", "the", "cat", "sat"]) for _ in range(30)) + " ." for _ in range(40)]
    docs = _write(tmp_path / "docs.jsonl", "".join(json.dumps({"text": text}) + "\n" for text in texts))
    out = tmp_path / "out.jsonl"
    summary = label_file(str(docs), str(out), [str(names)])
    counted = Counter(
        (item["text"], item["type"], item["source"])
        for line in out.read_text(encoding="utf-8").splitlines()
        for item in json.loads(line)["provenance"]
    )
    expected = sorted(counted.items(), key=lambda item: (-item[1], item[0]))[:MOST_MATCHED]
    assert [(m["form"], m["type"], m["source"], m["matches"]) for m in summary.most_matched] == [
        (form, label, source, count) for (form, label, source), count in expected
    ]
    top = summary.most_matched[0]
    line = next(line for line in summary.lines() if line.startswith("most matched forms: "))
    assert (
        line.startswith(f"most matched forms: {top['form']!r} {top['type']} {top['matches']}, ")
        and "--stop-list" in line
    )
    assert summary.to_json()["most_matched"] == summary.most_matched
