"""What the readers make of a corpus file, for ``eer-inspect`` (no AllenNLP, no tokenizer here).

:func:`inspect_file` reads a file as training would (:func:`~eer_plugin.corpus.formats.read_documents`
with the same options) and reports its character encoding and tag scheme with what decided them,
where its documents came from (``-DOCSTART-`` lines or groups of sentences), the numbers of
documents, sentences, tokens and entity spans per type, chunks that start with ``I-`` after ``O``
or another type (line numbers), the longest sentence and document in words, and for partial JSON
lines the annotated and negative spans and the complete documents. Entity spans are counted on the
documents as read: for IOB1 and IOB2/BIO files that is conlleval's rule (a chunk starts at ``B-``, or
at ``I-`` after ``O`` or after another type). :class:`SubwordCounts` adds the longest sentence
and document in subword tokens, given a tokenizer, beside the chunk size. Both count one document at a time:
memory does not grow with the file.
"""

from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats import AUTO_FILE_ENCODING, detect_format, ontonotes_documents
from eer_plugin.corpus.formats.conll import conll_documents
from eer_plugin.corpus.formats.decoding import decoding_of
from eer_plugin.corpus.formats.jsonl import jsonl_documents


def inspect_file(
    path: str,
    format: str = "auto",
    encoding: str = "auto",
    sentences_per_document: Optional[int] = None,
    tag_column: int = -1,
    file_encoding: str = AUTO_FILE_ENCODING,
    each: Optional[Callable[[Document], None]] = None,
) -> Dict[str, Any]:
    """The report of one file read with the options of :func:`~eer_plugin.corpus.formats.read_documents`, one
    document at a time (memory does not grow with the file); ``each`` gets every document as it is read. Raises
    the reader's :class:`FormatError` on a broken file."""
    report, docs = _reading(path, format, encoding, sentences_per_document, tag_column, file_encoding)
    counts = Counts()
    for doc in docs:
        counts.add(doc)
        if each is not None:
            each(doc)
    report.update(counts.result())
    report["warnings"] = warnings(report)
    return report


def _reading(
    path: str, format: str, encoding: str, sentences_per_document: Optional[int], tag_column: int, file_encoding: str
) -> Tuple[Dict[str, Any], Iterator[Document]]:
    """What the reader decided about the file (the report's first keys) and its documents, read as iterated."""
    if format == "auto":
        format = detect_format(path, file_encoding)
    report: Dict[str, Any] = {"file": str(path), "format": format}
    if format == "conll":
        docs, reading = conll_documents(path, encoding, sentences_per_document, tag_column, file_encoding)
        report.update(
            file_encoding=reading.file_encoding,
            file_encoding_reason=reading.file_encoding_reason,
            tag_scheme=reading.tag_scheme,
            tag_scheme_reason=reading.tag_scheme_reason,
            documents_from=reading.documents_from,
            group_size=reading.group_size,
            i_starts=reading.i_starts,
            i_start_lines=[
                {"line": line, "tag": tag, "after": previous or "sentence start"}
                for line, tag, previous in reading.first_i_starts
            ],
            named_documents=reading.ids,
            error_records=reading.error_records,
        )
        if reading.error_records:
            report["error_records_skipped"] = reading.error_records_skipped()
    elif format == "jsonl":
        docs, (codec, why) = jsonl_documents(path, file_encoding)
        report.update(
            file_encoding=codec,
            file_encoding_reason=why,
            tag_scheme=None,
            tag_scheme_reason="spans as word offsets",
            documents_from="json_lines",
            group_size=None,
        )
    elif format == "ontonotes":
        docs = ontonotes_documents(path, file_encoding)
        if Path(path).is_dir():
            codec, why = (
                ("utf-8" if file_encoding == AUTO_FILE_ENCODING else file_encoding),
                "every *_conll file below the directory",
            )
        else:
            decoding = decoding_of(path, file_encoding)
            codec, why = decoding.codec, decoding.why
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
    return report, docs


class Counts:
    """What the report counts, one document at a time (:meth:`add`; :meth:`result`): documents, sentences,
    tokens, spans per type (sorted by type) and the longest sentence and document in words (the first of the
    longest); with partial documents also negative spans and complete documents."""

    def __init__(self) -> None:
        self.documents = self.sentences = self.tokens = self.complete = self.negative_spans = 0
        self.spans: Counter = Counter()
        self.longest_sentence: Dict[str, Any] = {}
        self.longest_document: Dict[str, Any] = {}

    def add(self, doc: Document) -> None:
        self.documents += 1
        self.sentences += len(doc.sentence_ends)
        self.tokens += len(doc.tokens)
        self.complete += doc.is_complete
        self.negative_spans += len(doc.negative_spans)
        self.spans.update(label for _, _, label in doc.spans)
        for start, end in doc.sentences():
            if end - start > self.longest_sentence.get("words", -1):
                self.longest_sentence = {"words": end - start, "document": doc.id, "source": doc.source}
        if len(doc.tokens) > self.longest_document.get("words", -1):
            self.longest_document = {"words": len(doc.tokens), "document": doc.id, "source": doc.source}

    def result(self) -> Dict[str, Any]:
        result: Dict[str, Any] = {
            "documents": self.documents,
            "sentences": self.sentences,
            "tokens": self.tokens,
            "spans": dict(sorted(self.spans.items())),
            "spans_total": sum(self.spans.values()),
            "complete_documents": self.complete,
            "longest_sentence_words": self.longest_sentence,
            "longest_document_words": self.longest_document,
        }
        if self.complete < self.documents:
            result["negative_spans"] = self.negative_spans
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
    if report.get("error_records"):
        messages.append(report["error_records_skipped"])
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


class SubwordCounts:
    """The longest sentence and document in subword tokens (without the two bookends) beside a chunk's
    ``max_length - 2`` content positions, how many sentences do not fit in one chunk (the reader cuts those
    at word boundaries), and, given the tokenizer's ``unknown_id``, the words that reach the encoder only as
    that unknown subword (``[UNK]``: characters outside its vocabulary, or words it drops, such as invisible
    ones), one document at a time (:meth:`add`; :meth:`result`)."""

    def __init__(
        self,
        tokenize_words: Callable[[List[str]], List[List[int]]],
        max_length: int = 512,
        unknown_id: Optional[int] = None,
    ) -> None:
        self.tokenize_words, self.budget, self.unknown_id = tokenize_words, max_length - 2, unknown_id
        self.longest_sentence: Dict[str, Any] = {"subwords": 0, "document": None}
        self.longest_document: Dict[str, Any] = {"subwords": 0, "document": None}
        self.too_long = 0
        self.words = 0
        self.unknown: Dict[str, Any] = {"words": 0, "first": None}

    def add(self, doc: Document) -> None:
        ids = self.tokenize_words(doc.tokens)
        pieces = [len(p) for p in ids]
        for start, end in doc.sentences():
            length = sum(pieces[start:end])
            self.too_long += length > self.budget
            if length > self.longest_sentence["subwords"]:
                self.longest_sentence = {"subwords": length, "document": doc.id, "source": doc.source}
        if sum(pieces) > self.longest_document["subwords"]:
            self.longest_document = {"subwords": sum(pieces), "document": doc.id, "source": doc.source}
        self.words += len(ids)
        if self.unknown_id is not None:
            unknown = [i for i, p in enumerate(ids) if p == [self.unknown_id]]
            self.unknown["words"] += len(unknown)
            if unknown and self.unknown["first"] is None:
                word = doc.tokens[unknown[0]]
                self.unknown["first"] = {"word": word, "position": unknown[0], "document": doc.id, "source": doc.source}

    def result(self) -> Dict[str, Any]:
        result = {
            "chunk_subwords": self.budget,
            "longest_sentence_subwords": self.longest_sentence,
            "longest_document_subwords": self.longest_document,
            "sentences_over_chunk": self.too_long,
        }
        if self.unknown_id is not None:
            result["unknown_words"] = self.unknown
        return result

    def warnings(self, encoder: str) -> List[str]:
        """What deserves a look in the subword counts: words that reach ``encoder`` only as its unknown subword."""
        count, first = self.unknown["words"], self.unknown["first"]
        if not count:
            return []
        word = first["word"]
        codes = " ".join(f"U+{ord(char):04X}" for char in word[:4]) + (" ..." if len(word) > 4 else "")
        shown = f"'{word}' ({codes})" if word.isprintable() else codes  # an invisible word by its code points
        return [
            f"{count} of {self.words} words ({count / self.words:.1%}) reach{'es' if count == 1 else ''} {encoder} only as its unknown "
            f"subword (its tokenizer has none for their characters, or drops them), first {shown} at word "
            f"{first['position']} of document {first['document']} ({first['source']}): the model tags such a word "
            "from its neighbours alone; replace or remove the characters, or choose an encoder whose vocabulary "
            "covers them (--encoder)"
        ]
