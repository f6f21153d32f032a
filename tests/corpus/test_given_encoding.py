"""A file encoding given for a run's files meets a file that is UTF-8: the JSON lines this package writes from a
latin-1 corpus (CoNLL-2002) are UTF-8, while one setting (``EER_FILE_ENCODING``, ``--file-encoding``) names the
corpus's encoding for every file of the run. JSON text is UTF-8, so a valid UTF-8 JSON-lines file is read as UTF-8
whatever encoding is given; any other format is read as given, with a warning that its characters change."""

import json
import logging
import random

import pytest

from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats import read_conll, read_documents, read_jsonl, write_jsonl
from eer_plugin.corpus.formats.jsonl import json_lines
from eer_plugin.corpus.inspection import inspect_file

#: single-byte codecs a corpus is given in; each reads any byte, so a misread never fails loudly
SINGLE_BYTE = ("latin-1", "cp1252", "iso-8859-15")
#: letters of Spanish, Portuguese, French, German, Dutch text; "à" is C3 A0 in UTF-8: A0 is a no-break space
#: in latin-1, so a misread token holds white space
ACCENTED = "áéíóúñÑüÜçàèâêôöäß¿¡ºª€"


def random_tokens(rng: random.Random, n: int):
    letters = "abcdefghijklmnopqrstuvwxyzABC" + ACCENTED
    return ["".join(rng.choice(letters) for _ in range(rng.randint(1, 6))) for _ in range(n)]


def random_documents(seed: int):
    rng = random.Random(seed)
    docs = []
    for i in range(rng.randint(1, 5)):
        tokens = random_tokens(rng, rng.randint(1, 12))
        start = rng.randrange(len(tokens))
        spans = [(start, start + 1, rng.choice(["PER", "LOC"]))]
        docs.append(Document(f"d{i}-{tokens[0]}", tokens, [len(tokens)], spans))
    return docs


@pytest.mark.parametrize("seed", range(20))
def test_utf8_json_lines_read_as_utf8_under_a_given_single_byte_encoding(tmp_path, seed, caplog):
    docs = random_documents(seed)
    path = tmp_path / "written.jsonl"
    write_jsonl(docs, path)
    caplog.set_level(logging.INFO, logger="eer_plugin")
    for codec in SINGLE_BYTE:
        for read in (read_jsonl, read_documents):
            got = read(path, file_encoding=codec)
            assert [(d.id, d.tokens, d.spans) for d in got] == [(d.id, d.tokens, d.spans) for d in docs]
        assert [value["tokens"] for _, value in json_lines(path, codec)] == [d.tokens for d in docs]
    if any(not t.isascii() for d in docs for t in d.tokens + [d.id]):
        assert f"{path}: read as UTF-8, not as the given latin-1: the file is valid UTF-8" in caplog.text
        report = inspect_file(path, file_encoding="latin-1")
        assert (report["file_encoding"], report["file_encoding_reason"]) == (
            "utf-8",
            "valid UTF-8 JSON, not the given latin-1",
        )


def test_json_lines_in_the_given_encoding_still_read_as_given(tmp_path):
    """A latin-1 JSON-lines file (not valid UTF-8) is read as the given latin-1; pure ASCII reads the same."""
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(
        json.dumps({"id": "a", "tokens": ["Jos\u00e9", "Mar\u00eda"]}, ensure_ascii=False).encode("latin-1")
    )
    assert read_jsonl(path, file_encoding="latin-1")[0].tokens == ["Jos\u00e9", "Mar\u00eda"]
    ascii_path = tmp_path / "ascii.jsonl"
    ascii_path.write_text(json.dumps({"id": "a", "tokens": ["Jos\u00e9"]}) + "\n", encoding="ascii")  # \u00e9
    assert read_jsonl(ascii_path, file_encoding="cp1252")[0].tokens == ["Jos\u00e9"]


def test_a_utf16_json_file_is_not_second_guessed(tmp_path):
    path = tmp_path / "wide.jsonl"
    path.write_bytes(json.dumps({"id": "a", "tokens": ["\u00e0"]}, ensure_ascii=False).encode("utf-16"))
    assert read_jsonl(path, file_encoding="utf-16")[0].tokens == ["\u00e0"]


@pytest.mark.parametrize("seed", range(5))
def test_utf8_conll_under_a_given_single_byte_encoding_warns(tmp_path, seed, caplog):
    """Column files carry no encoding of their own: read as given, with a warning naming the file and the fix."""
    tokens = random_tokens(random.Random(seed), 8) + ["Jos\u00e9"]
    path = tmp_path / "utf8.conll"
    path.write_text("".join(f"{t} O\n" for t in tokens), encoding="utf-8")
    caplog.set_level(logging.WARNING, logger="eer_plugin")
    got = read_conll(path, file_encoding="cp1252")[0].tokens
    assert got[-1] == "Jos\u00c3\u00a9"  # as asked: the file's bytes in cp1252
    assert f"{path} is valid UTF-8 but is read as the given cp1252" in caplog.text
    assert "leave the file encoding at auto" in caplog.text
    caplog.clear()
    latin = tmp_path / "latin1.conll"
    latin.write_bytes("".join(f"{t} O\n" for t in tokens).encode("latin-1", errors="replace"))
    assert read_conll(latin, file_encoding="latin-1")[0].tokens[-1] == "Jos\u00e9"
    assert "valid UTF-8" not in caplog.text  # a real latin-1 file: nothing to say
    assert read_conll(path, file_encoding="utf-8")[0].tokens == tokens and "valid UTF-8" not in caplog.text


def test_training_reader_reads_simulated_json_and_latin1_conll_with_one_setting(tmp_path, tiny_encoder):
    """The Spanish benchmark's case: `eer-simulate` from a latin-1 CoNLL file writes UTF-8 JSON lines, and the
    training reader, given latin-1 for the run's files, reads both the JSON lines and the CoNLL dev file."""
    from eer_plugin.commands import simulate
    from eer_plugin.data.reader import PartialDocumentReader

    sentence = "La B-LOC\npoblaci\u00f3n O\nde O\nGr\u00e0cia B-LOC\nmir\u00f3 O\nall\u00e1 O\ny O\nac\u00e1 O\n.\tO\n"
    sentence = sentence.replace("\t", " ")
    corpus = tmp_path / "esp.train"
    corpus.write_bytes(("\n".join([sentence] * 4)).encode("latin-1"))
    out = tmp_path / "gold.jsonl"
    assert (
        simulate.main(["gold", str(corpus), str(out), "--file-encoding", "latin-1", "--sentences-per-document", "2"])
        == 0
    )
    assert "Gr\u00e0cia".encode("utf-8") in out.read_bytes()  # "à" is C3 A0: A0 a no-break space in latin-1
    reader = PartialDocumentReader(model_name=tiny_encoder, file_encoding="latin-1", sentences_per_document=2)
    train, dev = reader.read_documents(str(out)), reader.read_documents(str(corpus))
    assert [d.tokens for d in train] == [d.tokens for d in dev]
    assert train[0].tokens[:5] == ["La", "poblaci\u00f3n", "de", "Gr\u00e0cia", "mir\u00f3"]
    instances = list(reader.read(str(out)))
    assert len(instances) == len(train)
