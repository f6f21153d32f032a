"""Corpus readers and writers: round trips on the fixtures and one test per kind of bad input,
each checking that the error names the file and the line."""

import json
import shutil
from pathlib import Path
from typing import List, Tuple

import pytest
from conftest import CONLL_EN, FIXTURES, requires_conll

from eer_plugin.corpus.documents import Document, DocumentError
from eer_plugin.corpus.formats import (
    FormatError,
    detect_format,
    read_conll,
    read_documents,
    read_jsonl,
    read_ontonotes,
    write_jsonl,
)

CONLL2003 = FIXTURES / "conll2003_tiny.txt"
CONLL2003_DEV = FIXTURES / "conll2003_tiny_dev.txt"
CONLL2002 = FIXTURES / "conll2002_tiny.txt"
ONTONOTES = FIXTURES / "ontonotes_tiny.gold_conll"
PARTIAL = FIXTURES / "partial_tiny.jsonl"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def raises_at(path: Path, line, match: str, function, *args, **kwargs) -> FormatError:
    """Asserts ``function`` raises a FormatError located at ``path:line`` whose message matches."""
    with pytest.raises(FormatError, match=match) as info:
        function(*args, **kwargs)
    error = info.value
    assert error.path == str(path) and error.line == line, (error.path, error.line, str(error))
    assert str(error).startswith(f"{path}:{line}: " if line is not None else f"{path}: "), str(error)
    return error


def file_tags(path: Path, column: int = -1) -> List[List[str]]:
    """Tag column of every sentence of a column file (skipping -DOCSTART- lines)."""
    sentences, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if current:
                sentences.append(current)
            current = []
        else:
            current.append(fields[column])
    if current:
        sentences.append(current)
    return sentences


def encode(spans, length: int, scheme: str) -> List[str]:
    """Independent IOB1 / IOB2 encoder: IOB1 marks B- only right after an entity of the same type."""
    tags = ["O"] * length
    previous = (None, None)  # (end, type) of the previous span
    for start, end, label in sorted(spans):
        tags[start:end] = [f"I-{label}"] * (end - start)
        if scheme == "IOB2" or previous == (start, label):
            tags[start] = f"B-{label}"
        previous = (end, label)
    return tags


def sentence_tags(docs: List[Document], scheme: str) -> List[List[str]]:
    result = []
    for doc in docs:
        for start, end in doc.sentences():
            spans = [(s - start, e - start, t) for s, e, t in doc.spans if start <= s and e <= end]
            result.append(encode(spans, end - start, scheme))
    return result


def mentions(doc: Document) -> List[Tuple[str, str]]:
    return [(" ".join(doc.tokens[s:e]), t) for s, e, t in doc.spans]


# ----------------------------------------------------------------------------------- CoNLL
def test_conll2003_fixture_round_trip():
    docs = read_conll(CONLL2003)
    assert [d.id for d in docs] == [f"conll2003_tiny-{i}" for i in range(4)]
    assert all(d.is_complete for d in docs)
    assert sum(len(d.sentence_ends) for d in docs) == 34
    assert sum(len(d.spans) for d in docs) == 82
    assert {t for d in docs for _, _, t in d.spans} == {"PER", "LOC", "ORG", "MISC"}
    assert sentence_tags(docs, "IOB1") == file_tags(CONLL2003)  # spans re-encode to the file's tags
    assert docs[0].source == f"{CONLL2003}:1"
    # IOB1's B- separates adjacent entities of one type
    squad = [m for m in mentions(docs[1]) if m[1] == "PER"]
    assert ("David Seaman", "PER") in squad and ("Tony Adams", "PER") in squad and ("Paul Gascoigne", "PER") in squad
    dev = read_conll(CONLL2003_DEV)
    assert len(dev) == 2 and sum(len(d.spans) for d in dev) == 26
    assert sentence_tags(dev, "IOB1") == file_tags(CONLL2003_DEV)


def test_conll2002_fixture_groups_sentences_and_keeps_utf8():
    docs = read_conll(CONLL2002)  # no -DOCSTART-: 10 sentences per document
    assert [len(d.sentence_ends) for d in docs] == [10, 5]
    assert sentence_tags(docs, "IOB2") == file_tags(CONLL2002)
    assert ("José María Aznar", "PER") in mentions(docs[0])
    assert ("Plan Hidrológico Nacional", "MISC") in mentions(docs[1])
    assert [len(d.sentence_ends) for d in read_conll(CONLL2002, sentences_per_document=4)] == [4, 4, 4, 3]
    assert len(read_conll(CONLL2002, encoding="IOB2")) == 2


def test_conll2002_dutch_docstart_and_wnut_tab_separated(tmp_path):
    dutch = write(
        tmp_path,
        "ned.train",
        "-DOCSTART- -DOCSTART- O\nDe Art O\nbelg N B-MISC\nwerd V O\n\nHij Pron O\n\n"
        "-DOCSTART- -DOCSTART- O\nAmsterdam N B-LOC\nligt V O\n",
    )
    docs = read_conll(dutch)
    assert [len(d.tokens) for d in docs] == [4, 2] and docs[1].spans == [(0, 1, "LOC")]
    assert docs[0].sentence_ends == [3, 4] and docs[1].source == f"{dutch}:8"
    wnut = write(tmp_path, "wnut.conll", "@paul\tO\nvisits\tO\nNew\tB-location\nYork\tI-location\n\t\nok\tO\n")
    (doc,) = read_conll(wnut)
    assert doc.spans == [(2, 4, "location")] and doc.sentence_ends == [4, 5]
    crlf = write(tmp_path, "crlf.txt", "a O\r\nb B-PER\r\n\r\nc O\r\n")
    assert read_conll(crlf)[0].tokens == ["a", "b", "c"]


def test_conll_tag_column_and_bioul(tmp_path):
    path = write(tmp_path, "cols.txt", "John B-PER NNP\nSmith L-PER NNP\nruns O VBZ\nParis U-LOC NNP\n")
    (doc,) = read_conll(path, tag_column=1)
    assert doc.spans == [(0, 2, "PER"), (3, 4, "LOC")]
    raises_at(path, 1, "tag column 5 does not exist", read_conll, path, tag_column=5)


def test_conll_wrong_column_count(tmp_path):
    path = write(tmp_path, "bad.txt", "-DOCSTART- -X- -X- O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\ncalls NNS I-NP\n")
    raises_at(path, 5, r"expected 4 columns \(as on line 3\), got 3", read_conll, path)


def test_conll_i_tag_that_cannot_continue(tmp_path):
    path = write(tmp_path, "bio.txt", "EU B-ORG\nrejects O\n\nGerman I-MISC\ncall O\n")
    raises_at(path, 4, r"'I-MISC' .* cannot continue .*BIO", read_conll, path, encoding="BIO")
    raises_at(CONLL2003, 3, "'I-ORG' at position 0 cannot continue", read_conll, CONLL2003, encoding="IOB2")
    bioul = write(tmp_path, "bioul.txt", "New B-LOC\nYork O\n\nParis U-LOC\n")  # auto: detected BIOUL
    raises_at(bioul, 2, "not closed before 'O'", read_conll, bioul)


def test_conll_malformed_tag(tmp_path):
    path = write(tmp_path, "tag.txt", "EU B-ORG\nrejects X-PER\n")
    raises_at(path, 2, "expected a tag 'O' or B-/I-/L-/U-/S-/E-TYPE", read_conll, path)


def test_conll_unknown_encoding():
    raises_at(CONLL2003, None, "unknown tag encoding 'BMES'", read_conll, CONLL2003, encoding="BMES")


def test_conll_non_utf8_bytes_read_as_latin1_with_a_warning(tmp_path, caplog):
    path = tmp_path / "latin1.txt"
    path.write_bytes("EU B-ORG\n\nMuller B-PER\n".encode("utf-8") + "Jos\u00e9 I-PER\n".encode("latin-1"))
    docs = read_conll(path)
    assert docs[0].tokens == ["EU", "Muller", "Jos\u00e9"] and docs[0].spans == [(0, 1, "ORG"), (1, 3, "PER")]
    assert "is not valid UTF-8 (byte 0xe9 on line 4); reading it as latin-1" in caplog.text
    # an explicit encoding: no fallback, the bad byte is located
    error = raises_at(path, 4, "invalid UTF-8 byte 0xe9 at byte 3 of the line", read_conll, path, file_encoding="utf-8")
    assert "(byte 26 of the file)" in str(error) and "--file-encoding" in str(error)
    assert read_conll(path, file_encoding="latin-1")[0].tokens[2] == "Jos\u00e9"
    assert read_documents(path, file_encoding="latin-1")[0].tokens[2] == "Jos\u00e9"
    raises_at(path, None, "unknown file encoding 'klingon'", read_conll, path, file_encoding="klingon")
    for codec in ("rot13", "hex", "base64"):  # codecs Python knows that decode no bytes to text: a traceback before
        raises_at(path, None, f"unknown file encoding '{codec}'; expected 'auto' or the name of a text codec", read_conll, path, file_encoding=codec)  # fmt: skip


def test_conll2002_latin1_distribution(tmp_path, caplog):
    """The CoNLL-2002 Spanish files as distributed: latin-1, no -DOCSTART-."""
    text = "Sao B-LOC\nPaulo I-LOC\n( O\nBrasil B-LOC\n) O\n. O\n\nLa O\nAgencia B-ORG\nEFE I-ORG\nespa\u00f1ola O\n"
    path = tmp_path / "esp.train"
    path.write_bytes(text.encode("latin-1"))
    docs = read_documents(path)
    assert docs[0].tokens[-1] == "espa\u00f1ola" and docs[0].spans[-1] == (7, 9, "ORG")
    assert caplog.text.count("reading it as latin-1") == 1  # detection does not warn twice


def test_conll_empty_document(tmp_path, caplog):
    path = write(tmp_path, "empty.txt", "-DOCSTART- -X- -X- O\n\n-DOCSTART- -X- -X- O\n\nEU NNP I-NP I-ORG\n")
    raises_at(path, 1, "empty document: -DOCSTART- is followed by no tokens", read_conll, path)
    blank = write(tmp_path, "blank.txt", "\n\n")
    raises_at(blank, None, "no tokens found", read_conll, blank)
    only = write(tmp_path, "only.txt", "-DOCSTART- -X- -X- O\n\n")
    raises_at(only, None, "no tokens found", read_conll, only)


def test_conll_docstart_ending_documents(tmp_path, caplog):
    """-DOCSTART- lines after each document instead of before: the trailing empty document is
    dropped with a warning."""
    trailing = write(tmp_path, "trailing.txt", "-DOCSTART- -X- -X- O\n\nEU NNP I-NP I-ORG\n\n-DOCSTART- -X- -X- O\n\n")
    docs = read_conll(trailing)
    assert [d.tokens for d in docs] == [["EU"]]
    assert f"{trailing}:5: -DOCSTART- at the end of the file is followed by no tokens; dropping" in caplog.text
    ending = write(
        tmp_path,
        "ending.txt",
        "EU B-ORG\nrejects O\n\n-DOCSTART- O\n\nPeter B-PER\n\nBlackburn B-PER\n\n-DOCSTART- O\n",
    )
    docs = read_conll(ending)
    assert [d.tokens for d in docs] == [["EU", "rejects"], ["Peter", "Blackburn"]]
    assert [d.sentence_ends for d in docs] == [[2], [1, 2]] and docs[1].spans == [(0, 1, "PER"), (1, 2, "PER")]


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\u2028", "\u2029"])
def test_conll_line_endings(tmp_path, newline):
    lines = ["-DOCSTART- O", "", "EU B-ORG", "rejects O", "", "Peter B-PER", "Blackburn I-PER", ""]
    path = tmp_path / "endings.txt"
    path.write_bytes(newline.join(lines).encode("utf-8"))
    docs = read_documents(path)
    assert docs[0].tokens == ["EU", "rejects", "Peter", "Blackburn"] and docs[0].sentence_ends == [2, 4]
    assert docs[0].spans == [(0, 1, "ORG"), (2, 4, "PER")]
    bad = tmp_path / "bad.txt"
    bad.write_bytes(newline.join(["EU B-ORG", "rejects O", "calls X-Y"]).encode("utf-8"))
    raises_at(bad, 3, "expected a tag", read_conll, bad)


def test_jsonl_line_endings_keep_u2028_inside_strings(tmp_path):
    line = json.dumps({"id": "a\u2028b", "tokens": ["x"]}, ensure_ascii=False)
    assert "\u2028" in line
    path = tmp_path / "cr.jsonl"
    path.write_bytes((line + "\r" + json.dumps({"id": "c", "tokens": ["y"]}) + "\r").encode("utf-8"))
    assert [d.id for d in read_jsonl(path)] == ["a\u2028b", "c"]


def test_missing_file(tmp_path):
    raises_at(tmp_path / "nope.txt", None, "no such file", read_conll, tmp_path / "nope.txt")


# ----------------------------------------------------------------------------------- OntoNotes
def test_ontonotes_fixture():
    docs = read_ontonotes(ONTONOTES)
    assert [d.id for d in docs] == ["nw/wsj/00/wsj_0001-000", "bn/cnn/01/cnn_0101-000", "bn/cnn/01/cnn_0101-001"]
    assert [d.sentence_ends for d in docs] == [[19, 36, 49], [10, 24], [9, 16]]
    assert all(d.is_complete for d in docs)
    assert mentions(docs[0])[:5] == [
        ("Acme Industries", "ORG"),
        ("Tuesday", "DATE"),
        ("12 %", "PERCENT"),
        ("$ 4.5 million", "MONEY"),
        ("third quarter", "DATE"),
    ]
    assert ("The Wall Street Journal", "ORG") in mentions(docs[0])
    assert mentions(docs[1]) == [
        ("John King", "PERSON"),
        ("Washington", "GPE"),
        ("Three", "CARDINAL"),
        ("Gulf Coast", "LOC"),
        ("last night", "TIME"),
    ]
    assert len({t for d in docs for _, _, t in d.spans}) == 12


def test_ontonotes_directory_reads_all_files_sorted(tmp_path):
    (tmp_path / "b" / "x").mkdir(parents=True)
    (tmp_path / "a").mkdir()
    shutil.copy(ONTONOTES, tmp_path / "b" / "x" / "one.gold_conll")
    text = ONTONOTES.read_text().replace("wsj_0001", "wsj_0002").replace("cnn_0101", "cnn_0102")
    write(tmp_path / "a", "two.v4_gold_conll", text)
    write(tmp_path / "a", "notes.txt", "not a conll file")
    docs = read_ontonotes(tmp_path)
    assert [d.id for d in docs][:2] == ["nw/wsj/00/wsj_0002-000", "bn/cnn/01/cnn_0102-000"] and len(docs) == 6
    assert read_documents(tmp_path)[0].id == docs[0].id
    (tmp_path / "c").mkdir()
    write(tmp_path / "c", "notes.txt", "nothing here")
    raises_at(tmp_path / "c", None, r"no \*_conll or \*.gold_conll files", read_ontonotes, tmp_path / "c")
    shutil.copy(ONTONOTES, tmp_path / "a" / "dup_conll")
    raises_at(tmp_path / "b" / "x" / "one.gold_conll", None, "appears twice", read_ontonotes, tmp_path)


def ontonotes_lines(named_entities: List[str]) -> str:
    rows = [f"doc 0 {i} w{i} NN * - - - - {ne} -" for i, ne in enumerate(named_entities)]
    return "#begin document (doc); part 000\n" + "\n".join(rows) + "\n\n#end document\n"


@pytest.mark.parametrize(
    "named_entities, line, message",
    [
        (["(PERSON*", "*", "*"], 2, r"PERSON opened here is not closed before the end of its sentence \(line 5\)"),
        (["*", "*)", "*"], 3, r"'\*\)' closes no open entity"),
        (["(ORG*", "(GPE)", "*)"], 3, "opens an entity inside ORG opened on line 2"),
        (["(PERSN*", "*)"], 2, "unknown OntoNotes entity type 'PERSN'"),
        (["PERSON", "*"], 2, "expected a named-entity bracket"),
    ],
)
def test_ontonotes_unbalanced_brackets(tmp_path, named_entities, line, message):
    path = write(tmp_path, "bad.gold_conll", ontonotes_lines(named_entities))
    raises_at(path, line, message, read_ontonotes, path)


def test_ontonotes_structure_errors(tmp_path):
    short = write(tmp_path, "short_conll", "#begin document (d); part 000\nd 0 0 word NN *\n#end document\n")
    raises_at(short, 2, "expected at least 11 columns", read_ontonotes, short)
    unterminated = write(tmp_path, "open_conll", ontonotes_lines(["*"]).replace("#end document\n", ""))
    raises_at(unterminated, 1, "has no '#end document'", read_ontonotes, unterminated)
    empty = write(tmp_path, "empty_conll", "#begin document (d); part 000\n\n#end document\n")
    raises_at(empty, 1, "empty document 'd-000'", read_ontonotes, empty)
    outside = write(tmp_path, "outside_conll", "d 0 0 w NN * - - - - * -\n")
    raises_at(outside, 1, "outside '#begin document'", read_ontonotes, outside)


# ----------------------------------------------------------------------------------- JSON lines
def test_partial_fixture():
    docs = read_jsonl(PARTIAL)
    assert [d.id for d in docs] == ["partial-1", "partial-2", "partial-3"]
    assert not any(d.is_complete for d in docs)
    assert mentions(docs[1]) == [("LONDON", "LOC"), ("Arsene Wenger", "PER"), ("Leeds", "ORG")]
    assert docs[1].negative_spans == [(1, 2), (6, 7), (11, 13)] and docs[1].sentence_ends == [2, 10, 16]
    assert docs[2].spans == [] and docs[1].source == f"{PARTIAL}:2"


@pytest.mark.parametrize("source", [CONLL2003, CONLL2002, ONTONOTES, PARTIAL])
def test_jsonl_write_read_identity(tmp_path, source):
    docs = read_documents(source)
    out = tmp_path / "sub" / "out.jsonl"
    assert write_jsonl(docs, out) == len(docs)
    again = read_jsonl(out)
    assert [d.to_json() for d in again] == [d.to_json() for d in docs]
    assert out.read_text(encoding="utf-8") == "".join(json.dumps(d.to_json(), ensure_ascii=False) + "\n" for d in again)


def test_jsonl_defaults_and_authors_format(tmp_path):
    path = write(
        tmp_path,
        "authors.jsonl",
        json.dumps({"id": "plain", "tokens": ["a", "b"]})
        + "\n\n"
        + json.dumps(
            {
                "uid": "D1-S2",
                "tokens": ["John", "lives", "in", "Paris"],
                "is_complete": False,
                "gold_annotations": [
                    {"kind": "entity", "type": "PER", "start": 0, "end": 1, "mention": "John"},
                    {"kind": "entity", "type": "LOC", "start": 3, "end": 4, "mention": "Paris", "comment": "x"},
                    {"kind": "entity", "type": "O", "start": 1, "end": 3},
                ],
            }
        )
        + "\n",
    )
    plain, authors = read_jsonl(path)
    assert plain.sentence_ends == [2] and plain.spans == [] and not plain.is_complete
    assert authors.id == "D1-S2" and authors.spans == [(0, 1, "PER"), (3, 4, "LOC")]
    assert authors.negative_spans == [(1, 3)] and authors.source == f"{path}:3"


def jsonl_error(tmp_path, records, line, match):
    path = write(tmp_path, "bad.jsonl", "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return raises_at(path, line, match, read_jsonl, path)


GOOD = {"id": "ok", "tokens": ["John", "Smith", "visited", "Paris", "."], "spans": [[0, 2, "PER"]]}


def test_jsonl_overlapping_spans(tmp_path):
    bad = dict(GOOD, id="bad", spans=[[0, 2, "PER"], [1, 3, "ORG"]])
    jsonl_error(tmp_path, [GOOD, bad], 2, r"span \(1, 3, ORG\) overlaps the span before it")


def test_jsonl_span_out_of_range(tmp_path):
    jsonl_error(tmp_path, [GOOD, dict(GOOD, id="x", spans=[[3, 6, "LOC"]])], 2, r"span \(3, 6, LOC\) is out of range")
    jsonl_error(tmp_path, [dict(GOOD, negative_spans=[[4, 9]])], 1, r"negative span \(4, 9\) is out of range")
    jsonl_error(tmp_path, [dict(GOOD, negative_spans=[[1, 3]])], 1, r"negative span \(1, 3\) overlaps entity")
    jsonl_error(tmp_path, [dict(GOOD, sentence_ends=[2, 4])], 1, "sentence_ends must increase strictly and end at 5")


def test_jsonl_unknown_key(tmp_path):
    error = jsonl_error(tmp_path, [GOOD, {"id": "t", "tokens": ["a"], "span": [[0, 1, "PER"]]}], 2, "unknown key")
    assert "'span' (did you mean 'spans'?)" in str(error)
    jsonl_error(tmp_path, [{"uid": "u", "tokens": ["a"], "gold_annotation": []}], 1, "did you mean 'gold_annotations'")


def test_jsonl_bad_json_and_types(tmp_path):
    jsonl_error(tmp_path, [GOOD, '{"id": "x", "tokens": ["a"]'], 2, "invalid JSON at column")
    jsonl_error(tmp_path, [dict(GOOD, tokens="John Smith")], 1, "'tokens' must be a list of strings")
    jsonl_error(tmp_path, [dict(GOOD, spans=[[0, 2]])], 1, r"'spans' must be a list of \[start, end, type\] triples")
    jsonl_error(tmp_path, [dict(GOOD, is_complete="yes")], 1, "'is_complete' must be true or false")
    jsonl_error(tmp_path, [{"tokens": ["a"]}], 1, "missing key 'id'")
    jsonl_error(tmp_path, [GOOD, GOOD], 2, "document id 'ok' already used on line 1")
    jsonl_error(tmp_path, [dict(GOOD, tokens=["John", "", "a", "b", "c"])], 1, "empty token")
    jsonl_error(tmp_path, [GOOD, {"id": "e", "tokens": [], "sentence_ends": []}], 2, "'e' is empty: .* remove its line")
    jsonl_error(tmp_path, [[1, 2]], 1, "expected a JSON object")


def test_jsonl_non_utf8(tmp_path):
    """JSON lines must be UTF-8 (RFC 8259): no latin-1 fallback unless asked for."""
    path = tmp_path / "bytes.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b'\n{"id": "caf\xe9", "tokens": ["a"]}\n')
    raises_at(path, 2, "invalid UTF-8 byte 0xe9 at byte 11 of the line", read_jsonl, path)
    assert read_jsonl(path, file_encoding="latin-1")[1].id == "caf\u00e9"


def test_write_jsonl_validates_and_leaves_no_partial_file(tmp_path):
    out = tmp_path / "out.jsonl"
    bad = Document("bad", ["a", "b"], [2], [(0, 3, "PER")], source="made:1")
    with pytest.raises(DocumentError, match="made:1: document 'bad'"):
        write_jsonl([Document("ok", ["a"], [1]), bad], out)
    assert not out.exists() and list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------------- dispatch
def test_read_documents_dispatch(tmp_path):
    assert detect_format(CONLL2003) == "conll"
    assert detect_format(ONTONOTES) == "ontonotes"
    assert detect_format(PARTIAL) == "jsonl"
    assert detect_format(FIXTURES) == "ontonotes"
    sniffed = write(tmp_path, "partial.data", PARTIAL.read_text())
    assert detect_format(sniffed) == "jsonl" and len(read_documents(sniffed)) == 3
    ontonotes_text = write(tmp_path, "on.txt", ONTONOTES.read_text())
    assert detect_format(ontonotes_text) == "ontonotes"
    # CoNLL options are ignored by the formats that carry their own annotation
    assert len(read_documents(PARTIAL, encoding="IOB1", sentences_per_document=3)) == 3
    assert len(read_documents(CONLL2002, format="conll", sentences_per_document=5)) == 3
    raises_at(PARTIAL, None, "unknown format 'xml'", read_documents, PARTIAL, format="xml")


# ----------------------------------------------------------------------------------- real data
@requires_conll
def test_real_conll2003_train():
    docs = read_documents(CONLL_EN / "train.txt")
    tokens, spans = sum(len(d.tokens) for d in docs), sum(len(d.spans) for d in docs)
    print(f"CoNLL-2003 en train: {len(docs)} documents, {tokens} tokens, {spans} gold spans")
    assert (len(docs), tokens, spans) == (946, 203621, 23499)  # as the authors' converted files


def test_simulate_command_file_encoding(tmp_path, capsys):
    from eer_plugin.commands import simulate

    path = tmp_path / "ned.train"
    path.write_bytes("-DOCSTART- -DOCSTART- O\nDe Art O\nbelg N B-MISC\nJos\u00e9 N B-PER\n".encode("latin-1"))
    out = tmp_path / "gold.jsonl"
    assert simulate.main(["gold", str(path), str(out), "--file-encoding", "latin-1"]) == 0
    assert read_jsonl(out)[0].tokens == ["De", "belg", "Jos\u00e9"]
    with pytest.raises(SystemExit):
        simulate.main(["gold", str(path), str(out), "--file-encoding", "utf-8"])
    assert "invalid UTF-8 byte 0xe9" in capsys.readouterr().err


#: white space that is neither a space nor a tab, which Python's str.split() cuts columns at: a no-break space
#: (French numbers, scraped text), U+0085 (a Windows-1252 ellipsis read as latin-1), figure, narrow no-break,
#: ideographic and Ogham spaces
UNICODE_SPACES = ["\u00a0", "\u0085", "\u2007", "\u202f", "\u3000", "\u1680"]


@pytest.mark.parametrize("space", UNICODE_SPACES, ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize("where", ["inside", "start"])
def test_a_unicode_space_in_a_token_is_named_where_it_cuts_the_columns(space, where, tmp_path):
    token = f"1{space}000" if where == "inside" else f"{space}x :"
    path = write(tmp_path, "nbsp.txt", f"-DOCSTART- -X- -X- O\n\nJohn NNP B-NP B-PER\n{token} CD B-NP O\n")
    with pytest.raises(FormatError) as error:
        read_conll(path)
    message = str(error.value)
    assert f"{path}:4: expected 4 columns (as on line 3)" in message, message
    assert f"U+{ord(space):04X}, white space that separates columns as a space does" in message, message
