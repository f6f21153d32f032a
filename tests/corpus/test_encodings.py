"""Character encodings, a class of bad input across every reader of text files: a file saved as UTF-16 or
UTF-32 with a byte-order mark (Excel's "Unicode Text", PowerShell, Notepad) or as UTF-8 with a mark reads
as its UTF-8 twin, compressed or not; UTF-16 without a mark is one error naming the file and the iconv
command that converts it, never read as garbage, and so is any other file with NUL bytes; ``eer-shard``, which cuts UTF-8 lines, refuses wide text
with the same command."""

import codecs
import gzip
import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES
from hypothesis import example, given, settings
from hypothesis import strategies as st

from eer_plugin.annotation.dictionary_files import dictionary_lines, read_stop_list
from eer_plugin.annotation.dictionary_input import read_input
from eer_plugin.corpus.formats import FormatError, read_documents
from eer_plugin.corpus.importers import import_documents, read_ids
from eer_plugin.corpus.tokenizer import tokenize_text

#: how each variant writes a text (str -> bytes)
ENCODINGS = {
    "utf-8 with a mark": lambda text: codecs.BOM_UTF8 + text.encode("utf-8"),
    "utf-16 LE with a mark": lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
    "utf-16 BE with a mark": lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
    "utf-32 with a mark": lambda text: codecs.BOM_UTF32_LE + text.encode("utf-32-le"),
    "gzip of utf-16": lambda text: gzip.compress(codecs.BOM_UTF16_LE + text.encode("utf-16-le")),
}


def _documents(path):
    return [(d.tokens, d.sentence_ends, d.spans, d.is_complete) for d in read_documents(path)]


def _imported(format):
    return lambda path: [
        (d.id, d.tokens, d.spans, d.is_complete) for d in import_documents(format, path, tokenize_text)[0]
    ]


def _raw_input(path):
    read = read_input(str(path))
    documents = list(read)
    return [(d.tokens, d.text) for d, _ in documents], read.kind, [o for _, o in documents], read.without_words


#: reader name -> (fixture, what the reader makes of a path); every reader of a user's text file
READERS = {
    "conll": ("conll2003_tiny.txt", _documents),
    "conll2002 (utf-8 accents)": ("conll2002_tiny.txt", _documents),
    "ontonotes": ("ontonotes_tiny.gold_conll", _documents),
    "partial json lines": ("partial_tiny.jsonl", _documents),
    "doccano": ("import/doccano.jsonl", _imported("doccano")),
    "label studio": ("import/label_studio.json", _imported("label-studio")),
    "prodigy": ("import/prodigy.jsonl", _imported("prodigy")),
    "--complete-ids": ("import/doccano_complete_ids.txt", read_ids),
    "eer-dictionary input (conll)": ("conll2003_tiny.txt", _raw_input),
}


def _twin(tmp_path: Path, fixture: str, encode) -> Path:
    path = tmp_path / Path(fixture).name
    path.write_bytes(encode((FIXTURES / fixture).read_text(encoding="utf-8")))
    return path


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("reader", READERS)
def test_every_reader_reads_a_marked_encoding_as_its_utf8_twin(reader, encoding, tmp_path):
    fixture, read = READERS[reader]
    assert read(_twin(tmp_path, fixture, ENCODINGS[encoding])) == read(FIXTURES / fixture)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_brat_reads_a_marked_encoding_as_its_utf8_twin(encoding, tmp_path):
    (tmp_path / "brat").mkdir()
    for source in (FIXTURES / "import" / "brat").iterdir():
        _twin(tmp_path / "brat", f"import/brat/{source.name}", ENCODINGS[encoding])
    assert _imported("brat")(tmp_path / "brat") == _imported("brat")(FIXTURES / "import" / "brat")


@pytest.mark.parametrize("reader", READERS)
def test_utf16_without_a_mark_is_one_error_with_the_iconv_command(reader, tmp_path):
    fixture, read = READERS[reader]
    path = _twin(tmp_path, fixture, lambda text: text.encode("utf-16-le"))
    with pytest.raises(FormatError, match=r"looks like UTF-16 \(LE\) text without a byte-order mark") as error:
        read(path)
    assert f"iconv -f utf-16le -t utf-8 {path}" in str(error.value) and str(error.value).startswith(str(path))


TEXT = st.text(
    alphabet=st.sampled_from(list("abzAZ09 .,-'") + ["ü", "é", "ß", "東", "京", "🙂", "\u0301", "İ"]),
    min_size=1,
    max_size=30,
).filter(lambda t: tokenize_text(t)[0])


@given(
    st.lists(TEXT, min_size=1, max_size=4),
    st.lists(st.tuples(TEXT, st.sampled_from(["PER", "LOC"])), min_size=1, max_size=4),
    st.sampled_from(sorted(ENCODINGS)),
)
@settings(max_examples=30, deadline=None)
def test_dictionaries_stop_lists_and_raw_text_read_alike_in_any_marked_encoding(texts, entries, encoding):
    """Generated text with accents, combining marks, CJK and emoji: the streaming readers of eer-dictionary
    (dictionaries, stop lists, raw-text input) give the same entries and documents, offsets included."""
    import tempfile

    entries = [(form.replace("\t", " ").strip(), label) for form, label in entries if form.strip()]
    files = {
        "names.tsv": "".join(f"{form}\t{label}\n" for form, label in entries),
        "stop.txt": "".join(f"{form}\n" for form, _ in entries),
        "docs.jsonl": "".join(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in texts),
    }
    readers = {
        "names.tsv": lambda p: list(dictionary_lines(str(p))),
        "stop.txt": lambda p: read_stop_list(str(p)),
        "docs.jsonl": _raw_input,
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            plain, encoded = Path(tmp) / "plain", Path(tmp) / "encoded"
            for folder, data in ((plain, text.encode("utf-8")), (encoded, ENCODINGS[encoding](text))):
                folder.mkdir(exist_ok=True)
                (folder / name).write_bytes(data)
            if name == "names.tsv" and not entries:
                continue
            expected = readers[name](plain / name)
            got = readers[name](encoded / name)
            if name == "docs.jsonl":  # the documents' ids and sources name the file, which differs
                assert got[0] == expected[0] and got[1:3] == expected[1:3]
            else:
                assert got == expected


def test_predict_reads_a_marked_encoding_and_names_utf16_without_a_mark(tmp_path):
    from eer_plugin.common.errors import UserError
    from eer_plugin.predictors.predict_manager import _open_input

    text = '{"id": "a", "text": "Zürich ist schön."}\n{"id": "b", "text": "東京 🙂"}\n'
    (tmp_path / "plain.jsonl").write_text(text, encoding="utf-8")
    with _open_input(str(tmp_path / "plain.jsonl")) as handle:
        expected = list(handle)
    for name, encode in ENCODINGS.items():
        (tmp_path / "in.jsonl").write_bytes(encode(text))
        with _open_input(str(tmp_path / "in.jsonl")) as handle:
            assert list(handle) == expected, name
    (tmp_path / "in.jsonl").write_bytes(text.encode("utf-16-be"))
    with pytest.raises(UserError, match="iconv -f utf-16be -t utf-8"):
        _open_input(str(tmp_path / "in.jsonl"))


def test_eer_shard_refuses_wide_text_with_the_command_that_converts_it(tmp_path):
    from eer_plugin.inference.sharding import ShardError, split_input

    shutil.copy(FIXTURES / "example_document.jsonl", tmp_path / "plain.jsonl")
    text = (tmp_path / "plain.jsonl").read_text(encoding="utf-8")
    for encode, command in (
        (ENCODINGS["utf-16 LE with a mark"], "iconv -f utf-16 -t utf-8"),
        (lambda t: t.encode("utf-16-le"), "iconv -f utf-16le -t utf-8"),
    ):
        (tmp_path / "in.jsonl").write_bytes(encode(text))
        with pytest.raises(ShardError, match=command):
            split_input(str(tmp_path / "in.jsonl"), str(tmp_path / "shards"), 1)
    assert not (tmp_path / "shards").exists() or not any((tmp_path / "shards").iterdir())


def test_predict_input_with_stray_nuls_is_cut_and_read_line_by_line(tmp_path):
    """predict's input (and eer-shard's, which cuts it) is a stream whose lines fail alone: a raw line of NUL
    bytes is its line's problem there, where a corpus file with as many is no text at all."""
    from eer_plugin.corpus.formats.files import open_text
    from eer_plugin.inference.sharding import split_input

    lines = [json.dumps({"text": "Paris ."}), "\x00" * 12, json.dumps({"text": "Rome ."})]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with open_text(tmp_path / "in.jsonl", whole_file=False) as handle:
        assert [line.rstrip("\n") for line in handle] == lines
    manifest = split_input(str(tmp_path / "in.jsonl"), str(tmp_path / "shards"), 2)
    assert len(manifest["shards"]) == 2
    with pytest.raises(FormatError, match="holds NUL bytes"):
        open_text(tmp_path / "in.jsonl")


LINES = st.lists(
    st.text(
        alphabet=st.sampled_from(list("abzAZ09 .,-") + ["ü", "é", "東", "京", "一", "丁", "Ā", "🙂"]),
        min_size=1,
        max_size=20,
    ),
    min_size=1,
    max_size=6,
)


@given(LINES, st.sampled_from(["le", "be"]))
@example(["東京\tLOC", "一丁目\tLOC", "京都\tLOC"], "le")  # a CJK dictionary: 15 NULs on ASCII, 1 under "一"
@settings(max_examples=60, deadline=None)
def test_wide_text_without_a_mark_is_named_whatever_its_script(lines, order):
    """Generated lines (CJK with few ASCII characters, "一" U+4E00 and "Ā" U+0100 put a NUL on the other byte of
    their pair, emoji take surrogate pairs): UTF-16 without a mark is named with its byte order, UTF-32 without
    a mark is a NUL-byte error, and the same text in UTF-8 reads as UTF-8."""
    from eer_plugin.corpus.formats.files import UTF16_MIN_NULS, text_codec

    text = "\n".join(lines) + "\n"
    wide16, wide32 = text.encode(f"utf-16-{order}"), text.encode(f"utf-32-{order}")
    its_byte, other_byte = (wide16[1::2], wide16[0::2]) if order == "le" else (wide16[0::2], wide16[1::2])
    if (its_byte.count(0) >= 0.9 * len(its_byte) and other_byte.count(0) <= 0.1 * len(other_byte)) or (
        wide16.count(0) >= UTF16_MIN_NULS and its_byte.count(0) >= 0.9 * wide16.count(0)
    ):  # ASCII, or enough NULs on their byte (not a text of mostly U+xx00 characters, "一", "Ā")
        with pytest.raises(FormatError, match=rf"looks like UTF-16 \({order.upper()}\) text without a byte-order mark"):
            text_codec(wide16, "f.txt")
    if wide32.count(0) >= UTF16_MIN_NULS:  # fewer: a short text, too little to tell from stray NULs
        with pytest.raises(FormatError, match="holds NUL bytes"):
            text_codec(wide32, "f.txt")
    assert text_codec(text.encode("utf-8"), "f.txt") == "utf-8"


@pytest.mark.parametrize("reader", READERS)
def test_a_binary_file_is_no_text_to_any_reader(reader, tmp_path):
    """A file with NUL bytes on both bytes of its pairs (a model's weights, a spreadsheet's binary format
    given by mistake) is one error naming it, never a corpus of garbage words."""
    fixture, read = READERS[reader]
    path = tmp_path / Path(fixture).name
    path.write_bytes(bytes(range(256)) * 8)  # its NULs all on the first byte of a pair, as in UTF-16 BE text
    with pytest.raises(FormatError, match="holds NUL bytes") as error:
        read(path)
    assert str(error.value).startswith(str(path))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("reader", READERS)
def test_random_bytes_with_few_nuls_are_binary_data_to_any_reader(reader, seed, tmp_path):
    """Random bytes with fewer NULs than tell a binary file by themselves (a short binary file, an image) are
    binary data, named as such: never "a file of mixed encodings" or a corpus of garbage words."""
    import random

    fixture, read = READERS[reader]
    rng = random.Random(seed)
    data = bytearray(rng.randrange(1, 256) for _ in range(rng.choice([300, 3000, 9000])))
    for _ in range(rng.randrange(0, 8)):  # a few NULs, as a short binary file has
        data[rng.randrange(len(data))] = 0
    path = tmp_path / Path(fixture).name
    path.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=r"holds binary data \(\d+ control bytes") as error:
        read(path)
    assert str(error.value).startswith(str(path))


@pytest.mark.parametrize("escapes", [0, 30])
def test_text_with_a_few_stray_control_characters_or_ansi_colours_is_text(escapes, tmp_path):
    """Stray control characters (fewer than the binary rule's share) are text, replaced with a warning; ANSI
    colour codes (ESC) of a saved terminal log do not count."""
    from eer_plugin.corpus.formats.files import text_codec

    lines = ["\x1b[31mParis\x1b[0m\tLOC" for _ in range(escapes)] + [f"word{i}\x07\tO" for i in range(15)]
    lines += [f"filler{i}\tO" for i in range(200)]
    assert text_codec("\n".join(lines).encode("utf-8"), "f.tsv") == "utf-8"


#: bytes that no UTF-8 text holds alone: cp1252's right quote and en dash, latin-1's é, a lone continuation byte,
#: the start of a 3-byte character cut short
STRAY_BYTES = [b"\x92", b"\x96", b"\xe9", b"\x80", b"\xe2\x82"]
WORDS = st.lists(
    st.sampled_from(["Zürich", "café", "東京", "Ærø", "naïve", "Paris", "the", "🙂"]), min_size=2, max_size=12
)


def _mixed(words, stray, at, column_file):
    """UTF-8 ``words``, one a line (a CoNLL ``word O`` line, or the text of a .txt file), with ``stray`` pasted
    after the first character of the word on line ``at``."""
    lines = [f"{w} O" if column_file else w for w in words]
    data = [line.encode("utf-8") for line in lines]
    data[at] = lines[at][0].encode("utf-8") + stray + lines[at][1:].encode("utf-8")
    return b"\n".join(data) + b"\n"


@given(WORDS.filter(lambda w: not "".join(w).isascii()), st.sampled_from(STRAY_BYTES), st.data())
@settings(max_examples=40, deadline=None)
def test_a_utf8_file_with_stray_bytes_is_an_error_not_latin1_garbage(words, stray, data):
    """A UTF-8 file with a byte pasted from a latin-1 or Windows text (a file of mixed encodings): reading it as
    latin-1 would turn every UTF-8 character into others ('ü' as 'Ã¼') with no error, so every reader with the
    latin-1 fallback (column files, eer-dictionary's folder of .txt files) names the file, the stray byte's line
    and the fix; the file all in latin-1 still reads as latin-1."""
    import tempfile

    at = data.draw(st.integers(0, len(words) - 1))
    with tempfile.TemporaryDirectory() as tmp:
        conll, folder = Path(tmp) / "mixed.txt", Path(tmp) / "docs"
        conll.write_bytes(_mixed(words, stray, at, column_file=True))
        folder.mkdir()
        (folder / "a.txt").write_bytes(_mixed(words, stray, at, column_file=False))
        for path, read in ((conll, _documents), (folder, _raw_input)):
            with pytest.raises(FormatError, match="a file of mixed encodings") as error:
                read(path)
            assert error.value.line == at + 1 and error.value.path.endswith(("mixed.txt", "a.txt")), error.value
            assert "--file-encoding latin-1" in str(error.value)
        latin = [w for w in words if all(ord(c) < 256 for c in w)] or ["café"]
        conll.write_bytes("".join(f"{w} O\n" for w in latin).encode("latin-1"))
        assert _documents(conll)[0][0] == latin


def test_a_latin1_file_with_a_chance_utf8_pair_still_reads_as_latin1(tmp_path):
    """'Ñ' (0xd1) before 'º' (0xba) is a valid UTF-8 character by chance; among a latin-1 file's other accented
    letters it is no sign of mixed encodings."""
    words = ["Ñº"] + ["acción", "años", "Perú", "José"] * 10
    (tmp_path / "es.txt").write_bytes("".join(f"{w} O\n" for w in words).encode("latin-1"))
    assert _documents(tmp_path / "es.txt")[0][0] == words
