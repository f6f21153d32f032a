"""What the readers make of a corpus file, for ``eer-inspect`` (no AllenNLP, no tokenizer here).

:func:`inspect_file` reads a file as training would (:func:`~eer_plugin.corpus.formats.read_documents`
with the same options) and reports its character encoding and tag scheme with what decided them,
where its documents came from (``-DOCSTART-`` lines or groups of sentences), the numbers of
documents, sentences, tokens and entity spans per type, chunks that start with ``I-`` after ``O``
or another type (line numbers), the longest sentence and document in words, and for partial JSON
lines the annotated and negative spans and the complete documents. Entity spans are counted on the
documents as read: for IOB1 and IOB2/BIO files that is conlleval's rule (a chunk starts at ``B-``, or
at ``I-`` after ``O`` or after another type). :func:`subword_statistics` adds the longest sentence
and document in subword tokens, given a tokenizer, beside the chunk size.
"""

from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats import (
    AUTO_FILE_ENCODING,
    detect_format,
    read_ontonotes,
)
from eer_plugin.corpus.formats.conll import read_conll_reading
from eer_plugin.corpus.formats.decoding import decode_file_as
from eer_plugin.corpus.formats.jsonl import read_jsonl_reading

#: line numbers shown of the chunks that start with ``I-``
SHOWN_LINES = 5


def inspect_file(
    path: str,
    format: str = "auto",
    encoding: str = "auto",
    sentences_per_document: Optional[int] = None,
    tag_column: int = -1,
    file_encoding: str = AUTO_FILE_ENCODING,
) -> Tuple[Dict[str, Any], List[Document]]:
    """``(report, documents)`` of one file read with the options of
    :func:`~eer_plugin.corpus.formats.read_documents`; raises its :class:`FormatError` on a broken file."""
    if format == "auto":
        format = detect_format(path, file_encoding)
    report: Dict[str, Any] = {"file": str(path), "format": format}
    if format == "conll":
        docs, reading = read_conll_reading(path, encoding, sentences_per_document, tag_column, file_encoding)
        report.update(
            file_encoding=reading.file_encoding,
            file_encoding_reason=reading.file_encoding_reason,
            tag_scheme=reading.tag_scheme,
            tag_scheme_reason=reading.tag_scheme_reason,
            documents_from=reading.documents_from,
            group_size=reading.group_size,
            i_starts=len(reading.i_starts),
            i_start_lines=[
                {"line": line, "tag": tag, "after": previous or "sentence start"}
                for line, tag, previous in reading.i_starts[:SHOWN_LINES]
            ],
        )
    elif format == "jsonl":
        docs, (codec, why) = read_jsonl_reading(path, file_encoding)
        report.update(
            file_encoding=codec,
            file_encoding_reason=why,
            tag_scheme=None,
            tag_scheme_reason="spans as word offsets",
            documents_from="json_lines",
            group_size=None,
        )
    elif format == "ontonotes":
        docs = read_ontonotes(path, file_encoding)
        if Path(path).is_dir():
            codec, why = (
                ("utf-8" if file_encoding == AUTO_FILE_ENCODING else file_encoding),
                "every *_conll file below the directory",
            )
        else:
            codec, why = decode_file_as(path, file_encoding)[1:]
        report.update(
            file_encoding=codec,
            file_encoding_reason=why,
            tag_scheme=None,
            tag_scheme_reason="bracketed entities",
            documents_from="begin_document",
            group_size=None,
        )
    else:
        raise ValueError(f"unknown format {format!r}")
    report.update(counts(docs))
    report["warnings"] = warnings(report)
    return report, docs


def counts(docs: Sequence[Document]) -> Dict[str, Any]:
    """Documents, sentences, tokens, spans per type (sorted by type) and the longest sentence and
    document in words; with partial documents also negative spans and complete documents."""
    spans = Counter(label for doc in docs for _, _, label in doc.spans)
    sentence_words = [(end - start, doc) for doc in docs for start, end in doc.sentences()]
    longest_sentence = max(sentence_words, key=lambda item: item[0])
    longest_document = max(docs, key=lambda doc: len(doc.tokens))
    result: Dict[str, Any] = {
        "documents": len(docs),
        "sentences": sum(len(doc.sentence_ends) for doc in docs),
        "tokens": sum(len(doc.tokens) for doc in docs),
        "spans": dict(sorted(spans.items())),
        "spans_total": sum(spans.values()),
        "complete_documents": sum(doc.is_complete for doc in docs),
        "longest_sentence_words": {
            "words": longest_sentence[0],
            "document": longest_sentence[1].id,
            "source": longest_sentence[1].source,
        },
        "longest_document_words": {
            "words": len(longest_document.tokens),
            "document": longest_document.id,
            "source": longest_document.source,
        },
    }
    if result["complete_documents"] < len(docs):
        result["negative_spans"] = sum(len(doc.negative_spans) for doc in docs)
    return result


def warnings(report: Dict[str, Any]) -> List[str]:
    """What deserves a look in a report, each with the option that changes it."""
    messages = []
    if report.get("documents_from") == "grouped":
        messages.append(
            f"no -DOCSTART- line: the {counted(report['sentences'], 'sentence')} were grouped into "
            f"{counted(report['documents'], 'document')} of {counted(report['group_size'], 'sentence')}; grouping changes chunking, the EE simulator's per-document budget and the "
            "ratio estimate (choose the size with --sentences-per-document)"
        )
    stray = report.get("i_starts", 0)
    # IOB1 starts nearly every chunk with I- (B- only between two entities of one type); here most start with B-
    if (
        report.get("tag_scheme") == "IOB1"
        and report["tag_scheme_reason"].startswith("auto")
        and stray < report["spans_total"] / 2
    ):
        messages.append(
            f"only {stray} of {report['spans_total']} chunks start with I- after O or another type: the file looks like IOB2 "
            "with stray I- tags; it was read as IOB1, which starts a chunk at each of them as conlleval does "
            "(--tag-scheme IOB1 says so explicitly; --tag-scheme IOB2 makes them errors that name their lines)"
        )
    if report["spans_total"] == 0:
        messages.append(
            "no entity spans at all: is this the right file, and is the tag in the column read (--tag-column)?"
        )
    return messages


def subword_statistics(
    docs: Sequence[Document], tokenize_words: Callable[[List[str]], List[List[int]]], max_length: int = 512
) -> Dict[str, Any]:
    """The longest sentence and document in subword tokens (without the two bookends) beside a
    chunk's ``max_length - 2`` content positions, and how many sentences do not fit in one chunk
    (the reader cuts those at word boundaries)."""
    budget = max_length - 2
    longest_sentence = {"subwords": 0, "document": None}
    longest_document = {"subwords": 0, "document": None}
    too_long = 0
    for doc in docs:
        pieces = [len(p) for p in tokenize_words(doc.tokens)]
        for start, end in doc.sentences():
            length = sum(pieces[start:end])
            too_long += length > budget
            if length > longest_sentence["subwords"]:
                longest_sentence = {"subwords": length, "document": doc.id, "source": doc.source}
        if sum(pieces) > longest_document["subwords"]:
            longest_document = {"subwords": sum(pieces), "document": doc.id, "source": doc.source}
    return {
        "chunk_subwords": budget,
        "longest_sentence_subwords": longest_sentence,
        "longest_document_subwords": longest_document,
        "sentences_over_chunk": too_long,
    }
