"""The corpus readers read a file in blocks and one document at a time (:func:`iter_documents`): their memory
does not grow with the corpus (read whole, a 293 MB file took 2.26 GB in eer-inspect), their lines are those of
the whole text wherever the blocks end, and ``eer-inspect`` counts one document at a time what it counted on the
whole corpus."""

import codecs
from collections import Counter

import pytest
from generated_corpora import conll_text, partial_lines
from work_counter import peak_memory

from eer_plugin.corpus.formats import FormatError, files, iter_documents, read_documents
from eer_plugin.corpus.formats.decoding import LINE_BREAKS, decode_file_as, read_lines
from eer_plugin.corpus.inspection import inspect_file

#: kind -> (file name, its text for a number of documents)
INPUTS = {
    "jsonl": ("in.jsonl", partial_lines),
    "conll": ("in.conll", conll_text),
    "grouped conll": ("in.txt", lambda documents: conll_text(documents, sentences=10, docstart=False)),
}
#: the numbers of documents compared: the peak of 80 documents is past the reading's blocks (64 KiB)
SIZES = (80, 320)


def _write(tmp_path, kind, documents):
    name, text = INPUTS[kind]
    path = tmp_path / f"{documents}-{name}"
    path.write_text(text(documents), encoding="utf-8")
    return str(path)


def _count(path):
    return sum(1 for _ in iter_documents(path))


def _per_document(peaks, sizes=SIZES):
    """The peak's growth per document from the fewer documents to the more."""
    return (peaks[sizes[1]] - peaks[sizes[0]]) / (sizes[1] - sizes[0])


@pytest.mark.integration  # memory measured over generated corpora: seconds each, not a unit test
@pytest.mark.parametrize("kind", INPUTS)
def test_reading_memory_does_not_grow_with_the_number_of_documents(tmp_path, kind):
    peaks = {}
    for documents in SIZES:
        count, peaks[documents] = peak_memory(_count, _write(tmp_path, kind, documents))
        assert count == documents
    # read whole, the text, its lines and every document stayed: 10-20 KB per document of 1-2 KB of text here;
    # one at a time, what stays is a JSON line's id (to refuse one twice): a few hundred bytes
    per_document = _per_document(peaks)
    assert per_document < 1000, (peaks, per_document)


@pytest.mark.integration  # memory measured over generated corpora: seconds each, not a unit test
@pytest.mark.parametrize("kind", INPUTS)
def test_inspect_counts_one_document_at_a_time_what_the_whole_corpus_has(tmp_path, kind):
    peaks = {}
    for documents in SIZES:
        path = _write(tmp_path, kind, documents)
        report, peaks[documents] = peak_memory(inspect_file, path)
        docs = read_documents(path)
        assert (report["documents"], report["complete_documents"]) == (len(docs), sum(d.is_complete for d in docs))
        assert report["sentences"] == sum(len(d.sentence_ends) for d in docs)
        assert report["tokens"] == sum(len(d.tokens) for d in docs)
        assert report["spans"] == dict(sorted(Counter(t for d in docs for _, _, t in d.spans).items()))
        longest = max(docs, key=lambda d: len(d.tokens))
        assert report["longest_document_words"] == {
            "words": len(longest.tokens),
            "document": longest.id,
            "source": longest.source,
        }
    per_document = _per_document(peaks)
    assert per_document < 1000, (peaks, per_document)


#: text that tries every line break where a block may end: CRLF, CR alone, LF, U+2028 (a column file's break,
#: not a JSON line's), a byte-order mark first, characters of 2, 3 and 4 bytes
TEXT = "\ufeffa\r\nbc\r\rd\n\ne\u2028f é\r\n€\n𝄞 g\r"


@pytest.mark.parametrize("block", [1, 2, 3, 5, 64])
def test_lines_are_those_of_the_whole_text_wherever_the_blocks_end(tmp_path, monkeypatch, block):
    monkeypatch.setattr(files, "BLOCK_BYTES", block)
    expected = LINE_BREAKS.split(TEXT[1:])[:-1]  # the mark dropped, no line after the last break
    for encoding in ("utf-8", "utf-16", "utf-32"):
        path = tmp_path / f"{encoding}.txt"
        path.write_bytes((TEXT if encoding == "utf-8" else TEXT[1:]).encode(encoding))
        assert [line for _, line in read_lines(path)] == expected, encoding
        assert decode_file_as(path)[0] == TEXT[1:]
    json_path = tmp_path / "lines.jsonl"
    json_path.write_bytes(TEXT.encode("utf-8"))
    assert [line for _, line in read_lines(json_path, json_lines=True)] == [
        "a",
        "bc",
        "",
        "d",
        "",
        "e\u2028f é",
        "€",
        "𝄞 g",
    ]


@pytest.mark.parametrize("block", [1, 3, 7, 64])
def test_an_undecodable_byte_is_named_by_its_line_wherever_the_blocks_end(tmp_path, monkeypatch, block):
    monkeypatch.setattr(files, "BLOCK_BYTES", block)
    path = tmp_path / "in.txt"
    path.write_bytes("Jos\u00e9 B-PER\r\n\r\nP\u00e9rez I-PER\n".encode("utf-8") + b"Garc\xeda O\n")
    with pytest.raises(FormatError) as error:
        list(read_lines(path, file_encoding="utf-8"))
    assert error.value.line == 4 and "invalid UTF-8 byte 0xed at byte 4 of the line (byte 32 of the file)" in str(
        error.value
    )
    with pytest.raises(FormatError, match="a file of mixed encodings") as error:  # auto: UTF-8 beside a latin-1 byte
        decode_file_as(path)
    assert error.value.line == 4 and "byte 0xed (byte 4 of the line)" in str(error.value)
    assert "2 UTF-8 characters beyond ASCII (the first, 'é', on line 1)" in str(error.value)
    path.write_bytes(b"Jose B-PER\r\n\r\nPerez I-PER\nGarc\xeda O\n")  # latin-1 alone
    _, codec, why = decode_file_as(path)  # auto: the latin-1 fallback names the same byte
    assert (codec, why) == ("latin-1", "auto: not valid UTF-8 (byte 0xed on line 4)")
    assert codecs.decode(path.read_bytes(), "latin-1") == decode_file_as(path)[0]


def test_a_bad_line_late_in_a_file_names_its_line_after_the_documents_before_it(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(partial_lines(300) + '{"tokens": "not a list"}\n', encoding="utf-8")
    read = []
    with pytest.raises(FormatError) as error:
        for document in iter_documents(str(path)):
            read.append(document.id)
    assert (error.value.path, error.value.line, len(read)) == (str(path), 301, 300)


def _ratio_and_inspection(path, encoder):
    from eer_plugin.data.corpus_counts import estimate_ratio, inspect_files

    (_, report, _), *_ = inspect_files([path], encoder)
    return estimate_ratio(path, encoder, partial=[path], resamples=20), report


@pytest.mark.integration  # memory measured over generated corpora: seconds each, not a unit test
def test_estimate_ratio_and_inspect_count_subwords_one_document_at_a_time(tmp_path, tiny_encoder):
    from eer_plugin.annotation import ratio_estimate
    from eer_plugin.data.reader import PartialDocumentReader

    reader = PartialDocumentReader(model_name=tiny_encoder)
    peaks = {}
    for documents in (60, 240):
        path = tmp_path / f"{documents}.jsonl"
        path.write_text(partial_lines(documents, sentences=2), encoding="utf-8")
        path = str(path)
        (result, report), peaks[documents] = peak_memory(_ratio_and_inspection, path, tiny_encoder)
        docs = reader.read_documents(path)  # the whole list, counted as the commands counted it before
        complete = [
            ratio_estimate.chunk_counts(d.id, (c.labels for c in reader.chunk(d))) for d in docs if d.is_complete
        ]
        partial = [
            ratio_estimate.chunk_counts(d.id, (c.labels for c in reader.chunk(d)), latent_is_entity=False)
            for d in docs
            if not d.is_complete
        ]
        assert (result["documents"], result["ratio"]) == (documents // 3, ratio_estimate.ratio(complete))
        assert (result["partial_documents"], result["partial_annotated_ratio"]) == (
            2 * len(partial),
            ratio_estimate.ratio(partial),
        )
        assert report["subword_entity_ratio"] == ratio_estimate.ratio(complete)
    # what stays is each complete document's counts (the bootstrap draws documents): under 1 KB
    per_document = _per_document(peaks, (60, 240))
    assert per_document < 1500, (peaks, per_document)
