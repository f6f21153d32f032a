"""CoNLL column files: one token per line, the tag in the last column (or ``tag_column``), blank
lines between sentences, optional ``-DOCSTART-`` lines between documents. Covers CoNLL-2003
(English/German, IOB1), CoNLL-2002 (Spanish/Dutch, IOB2), WNUT and any ``token ... tag`` file."""
import logging
import re
from pathlib import Path
from typing import List, Optional, Tuple

from eer_plugin.core.documents import Document, Span
from eer_plugin.core.formats.files import AUTO_FILE_ENCODING, FormatError, PathLike, read_lines
from eer_plugin.core.tags import TagSequenceError, detect_encoding, normalize_encoding, tags_to_spans

logger = logging.getLogger(__name__)

#: sentences grouped into one document when a CoNLL file has no ``-DOCSTART-`` line
DEFAULT_SENTENCES_PER_DOCUMENT = 10
DOCSTART = "-DOCSTART-"


class _Sentence:
    """Tokens, tags and source line numbers of one sentence of a column file."""

    __slots__ = ("tokens", "tags", "lines")

    def __init__(self) -> None:
        self.tokens: List[str] = []
        self.tags: List[str] = []
        self.lines: List[int] = []


class _ConllDocument:
    """Sentences of one document of a column file and the line it starts on."""

    def __init__(self, line: int, starts_with_docstart: bool) -> None:
        self.line = line
        self.starts_with_docstart = starts_with_docstart
        self.sentences: List[_Sentence] = []


_TAG_PATTERN = re.compile(r"^(O|[BILU]-\S+)$")


def read_conll(
    path: PathLike,
    encoding: str = "auto",
    sentences_per_document: Optional[int] = None,
    tag_column: int = -1,
    file_encoding: str = AUTO_FILE_ENCODING,
) -> List[Document]:
    """Reads a CoNLL column file into complete (gold) documents.

    Parameters
    ----------
    path :
        Column file: one token per line with the token in the first column and the tag in
        ``tag_column`` (default: the last), columns separated by spaces or tabs; a blank line (or
        one holding only white space, such as the lone TAB of WNUT files) ends a sentence.
    encoding :
        ``auto`` (guessed over the whole file with :func:`~eer_plugin.core.tags.detect_encoding`:
        BIOUL if any ``L-``/``U-`` occurs, IOB1 if an entity starts with ``I-``, otherwise BIO),
        or ``IOB1``, ``BIO``/``IOB2`` or ``BIOUL``/``BILOU``.
    sentences_per_document :
        How many consecutive sentences make one document when the file has no ``-DOCSTART-``
        line at all (CoNLL-2002 Spanish, WNUT). None means
        :data:`DEFAULT_SENTENCES_PER_DOCUMENT` (10). Ignored when the file has ``-DOCSTART-``
        lines, which then delimit the documents.
    tag_column :
        Index of the tag column (Python-style, negative counts from the end).
    file_encoding :
        Character encoding of the file: ``auto`` (UTF-8, or latin-1 with a warning when the file is
        not valid UTF-8, as the CoNLL-2002 distribution) or a codec name (``latin-1``, ``cp1252``).

    Lines end at LF, CRLF, a lone CR or U+2028/U+2029. ``-DOCSTART-`` lines may start documents
    (CoNLL-2003) or end them (some distributions): tokens before the first one form a document,
    and a ``-DOCSTART-`` followed by no token at the end of the file is dropped with a warning
    (an empty document elsewhere is an error).
    Every token line must have the same number of columns as the first one (``-DOCSTART-`` lines
    are exempt: CoNLL-2002 Dutch writes ``-DOCSTART- -DOCSTART- O``). Documents get ids
    ``<file stem>-<index>`` (zero-padded) and sources ``<file>:<line of their first line>``.
    """
    try:
        encoding = "auto" if encoding == "auto" else normalize_encoding(encoding)
    except ValueError as err:
        raise FormatError(str(err), path) from None
    if sentences_per_document is not None and sentences_per_document < 1:
        raise FormatError(f"sentences_per_document must be at least 1, got {sentences_per_document}", path)

    documents = _read_conll_documents(path, tag_column, file_encoding)
    if documents and documents[-1].starts_with_docstart and not documents[-1].sentences:
        logger.warning(
            "%s:%d: %s at the end of the file is followed by no tokens; dropping that empty document",
            path, documents[-1].line, DOCSTART,
        )
        documents.pop()
    if not documents:
        raise FormatError("no tokens found; expected CoNLL column lines 'token ... tag'", path)
    for document in documents:
        if document.starts_with_docstart and not document.sentences:
            raise FormatError(f"empty document: {DOCSTART} is followed by no tokens", path, document.line)
    if not any(d.starts_with_docstart for d in documents):
        documents = _group_sentences(documents[0].sentences, sentences_per_document or DEFAULT_SENTENCES_PER_DOCUMENT)

    if encoding == "auto":
        encoding = detect_encoding(s.tags for d in documents for s in d.sentences)
    stem = Path(path).name.split(".")[0] or "document"
    width = len(str(len(documents) - 1))
    return [
        _to_document(d, f"{stem}-{index:0{width}d}", path, encoding).validate()
        for index, d in enumerate(documents)
    ]


def _read_conll_documents(path: PathLike, tag_column: int, file_encoding: str = AUTO_FILE_ENCODING) -> List[_ConllDocument]:
    """Splits a column file into documents (at ``-DOCSTART-``) and sentences, checking columns
    and tag shapes."""
    documents: List[_ConllDocument] = []
    sentence: Optional[_Sentence] = None
    columns: Optional[Tuple[int, int]] = None  # (column count, line that set it)
    for number, text in read_lines(path, file_encoding):
        fields = text.split()
        if not fields:
            sentence = None
            continue
        if fields[0] == DOCSTART:
            documents.append(_ConllDocument(number, starts_with_docstart=True))
            sentence = None
            continue
        if columns is None:
            if len(fields) < 2:
                raise FormatError(
                    f"expected at least 2 columns (token and tag), got {len(fields)}: {text!r}", path, number
                )
            if not -len(fields) <= tag_column < len(fields):
                raise FormatError(
                    f"tag column {tag_column} does not exist in a line of {len(fields)} columns", path, number
                )
            columns = (len(fields), number)
        elif len(fields) != columns[0]:
            raise FormatError(
                f"expected {columns[0]} columns (as on line {columns[1]}), got {len(fields)}: {text!r}", path, number
            )
        tag = fields[tag_column]
        if not _TAG_PATTERN.match(tag):
            raise FormatError(
                f"expected a tag 'O' or B-/I-/L-/U-TYPE in column {tag_column}, got {tag!r}", path, number
            )
        if not documents:
            documents.append(_ConllDocument(number, starts_with_docstart=False))
        if sentence is None:
            sentence = _Sentence()
            documents[-1].sentences.append(sentence)
        sentence.tokens.append(fields[0])
        sentence.tags.append(tag)
        sentence.lines.append(number)
    return documents


def _group_sentences(sentences: List[_Sentence], size: int) -> List[_ConllDocument]:
    groups = []
    for start in range(0, len(sentences), size):
        group = _ConllDocument(sentences[start].lines[0], starts_with_docstart=False)
        group.sentences = sentences[start : start + size]
        groups.append(group)
    return groups


def _to_document(document: _ConllDocument, doc_id: str, path: PathLike, encoding: str) -> Document:
    tokens: List[str] = []
    sentence_ends: List[int] = []
    spans: List[Span] = []
    for sentence in document.sentences:
        try:
            sentence_spans = tags_to_spans(sentence.tags, encoding)
        except TagSequenceError as err:
            line = sentence.lines[min(err.position, len(sentence.lines) - 1)]
            raise FormatError(f"{err} (reading the tags as {encoding})", path, line) from None
        offset = len(tokens)
        spans.extend((offset + s, offset + e, t) for s, e, t in sentence_spans)
        tokens.extend(sentence.tokens)
        sentence_ends.append(len(tokens))
    return Document(
        id=doc_id, tokens=tokens, sentence_ends=sentence_ends, spans=spans, is_complete=True,
        source=f"{path}:{document.line}",
    )  # fmt: skip
