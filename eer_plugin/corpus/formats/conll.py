"""CoNLL column files: one token per line, the tag in the last column (or ``tag_column``), blank
lines between sentences, optional ``-DOCSTART-`` lines between documents. Covers CoNLL-2003
(English/German, IOB1), CoNLL-2002 (Spanish/Dutch, IOB2), WNUT and any ``token ... tag`` file."""

import dataclasses
import logging
import re
from pathlib import Path
from typing import List, Optional, Tuple

from eer_plugin.common.wording import counted
from eer_plugin.core.tags import TagSequenceError, i_chunk_starts, normalize_encoding, tags_to_spans
from eer_plugin.corpus.documents import RAW_TEXT_FIX, Document, Span
from eer_plugin.corpus.formats.decoding import decoded_lines
from eer_plugin.corpus.formats.files import AUTO_FILE_ENCODING, FormatError, PathLike

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
#: a first token line of at least this many columns whose last is no tag reads as a line of plain text
PROSE_WORDS = 5
#: ... as does a shorter one whose "tag" is a word that ends a sentence ("Angela Merkel visited Paris.")
_SENTENCE_END = re.compile(r"\w[.!?]$")


#: a first line ``surface form<TAB>TYPE`` (or ``,``/``;``: a spreadsheet's CSV): a dictionary of names, not CoNLL.
#: The form: cells' text with a character that is no white space (the first one found where it is, never guessed at
#: each place: a long line without a separator took quadratic time) or with one ``,``/``;`` in it
_DICTIONARY_ENTRY = re.compile(r"(?:[^\S\t]*[^\s,;][^\t,;]*|[^\t,;]*[,;][^\t,;]*)[\t,;][ \t]*[\w-]+[ \t]*")
DICTIONARY_FIX = (
    "if the file is a dictionary of names ('surface form<TAB>TYPE' per line), it labels documents, it is no "
    "training data: `eer-ner eer-dictionary DOCUMENTS labelled.jsonl --dictionary FILE`"
)


def _looks_like(text: str, fields: List[str], prose: str, tag: Optional[str] = None) -> Tuple[Optional[str], str]:
    """What a file's first token line that is no CoNLL line seems to be (a :data:`LOOKS_LIKE` kind, or None), and
    what was seen (``prose`` for plain text): a dictionary entry, a line of plain text (a tag column that ends a
    sentence or a line of :data:`PROSE_WORDS` words or more; with no ``tag``: a line that ends a sentence)."""
    if _DICTIONARY_ENTRY.fullmatch(text.strip("\r\n")):
        return "dictionary", ""
    if tag is None and _SENTENCE_END.search(text):
        return "raw text", prose
    if tag is not None and (len(fields) >= PROSE_WORDS or _SENTENCE_END.search(tag)):
        return "raw text", prose
    return None, ""


def _hint(looks_like: Optional[str], seen: str) -> str:
    """The fix that ``read_conll`` gives for what a file looks like (training data expected)."""
    if looks_like == "dictionary":
        return f"; {DICTIONARY_FIX}"
    return f"; {seen}. {RAW_TEXT_FIX}" if looks_like == "raw text" else ""


def _space_hint(text: str) -> str:
    """The fix when a line's columns were cut at a white-space character other than a space or a tab (a no-break
    space in a token, U+0085 from a Windows-1252 ellipsis read as latin-1, an ideographic space), which Python
    splits at as at a space: "" when the line has none."""
    for position, char in enumerate(text):
        if char.isspace() and char not in " \t\r\n":
            return (
                f"; character {position + 1} is U+{ord(char):04X}, white space that separates columns as a space "
                "does (a token holds none): replace it in the file"
            )
    return ""


def _column_name(column: int, count: int) -> str:
    """``--tag-column`` as a reader counts: ``column 4 of 4 (the last)``."""
    number = column + 1 if column >= 0 else count + column + 1
    return f"column {number} of {count}" + (" (the last)" if number == count else "")


@dataclasses.dataclass
class ConllReading:
    """What :func:`read_conll` decided about a file, and what it saw that made it decide."""

    #: the codec the file was decoded with, and why (``auto: valid UTF-8``, ``given``, ...)
    file_encoding: str
    file_encoding_reason: str
    #: ``IOB1``, ``BIO`` or ``BIOUL``, and why (``given`` or what ``auto`` saw)
    tag_scheme: str
    tag_scheme_reason: str
    #: ``docstart`` (``-DOCSTART-`` lines delimit the documents) or ``grouped`` (``group_size`` sentences each)
    documents_from: str
    group_size: Optional[int]
    documents: int
    sentences: int
    #: ``(line, tag, previous tag or None at a sentence start)`` of every chunk that starts with ``I-``
    #: after ``O``, another type or at a sentence start (conlleval's rule)
    i_starts: List[Tuple[int, str, Optional[str]]]
    #: line of the first ``L-``/``U-`` tag (None: none)
    first_biluo_line: Optional[int] = None

    def log_lines(self, path: PathLike) -> List[Tuple[int, str]]:
        """``(logging level, message)``: the scheme, the character encoding and the documents, one line
        each at INFO, and a WARNING with the fix when sentences were grouped into documents."""
        lines = [
            (logging.INFO, f"{path}: tag scheme {self.tag_scheme} ({self.tag_scheme_reason})"),
            (logging.INFO, f"{path}: character encoding {self.file_encoding} ({self.file_encoding_reason})"),
        ]
        if self.documents_from == "docstart":
            lines.append(
                (
                    logging.INFO,
                    f"{path}: {counted(self.documents, 'document')} from {DOCSTART} lines ({counted(self.sentences, 'sentence')})",
                )
            )
        else:
            lines.append(
                (
                    logging.INFO,
                    f"{path}: {counted(self.documents, 'document')} of up to {counted(self.group_size, 'sentence')} "
                    f"({counted(self.sentences, 'sentence')}; "
                    f"no {DOCSTART} line, sentences grouped)",
                )
            )
            lines.append(
                (
                    logging.WARNING,
                    f"{path} has no {DOCSTART} line: its {counted(self.sentences, 'sentence')} were grouped into "
                    f"{counted(self.documents, 'document')} of {counted(self.group_size, 'consecutive sentence')}; the grouping changes chunking, the EE "
                    "simulator's per-document budget and the ratio estimate (set sentences_per_document / "
                    "--sentences-per-document to choose the size)",
                )
            )
        return lines


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

    Logs, once per file, the tag scheme, the character encoding and the documents it settled on (one
    line each at INFO, with what ``auto`` saw), and a warning when sentences were grouped into
    documents (:meth:`ConllReading.log_lines`); :func:`read_conll_reading` returns that instead.
    """
    documents, reading = read_conll_reading(path, encoding, sentences_per_document, tag_column, file_encoding)
    for level, message in reading.log_lines(path):
        logger.log(level, message)
    return documents


def read_conll_reading(
    path: PathLike,
    encoding: str = "auto",
    sentences_per_document: Optional[int] = None,
    tag_column: int = -1,
    file_encoding: str = AUTO_FILE_ENCODING,
) -> Tuple[List[Document], ConllReading]:
    """:func:`read_conll` without its log lines: the documents and the :class:`ConllReading`."""
    try:
        encoding = "auto" if encoding == "auto" else normalize_encoding(encoding)
    except ValueError as err:
        raise FormatError(str(err), path) from None
    if sentences_per_document is not None and sentences_per_document < 1:
        raise FormatError(f"sentences_per_document must be at least 1, got {sentences_per_document}", path)

    documents, (codec, codec_reason) = _read_conll_documents(path, tag_column, file_encoding)
    if documents and documents[-1].starts_with_docstart and not documents[-1].sentences:
        logger.warning(
            "%s:%d: %s at the end of the file is followed by no tokens; dropping that empty document",
            path,
            documents[-1].line,
            DOCSTART,
        )
        documents.pop()
    if not documents:
        raise FormatError("no tokens found; expected CoNLL column lines 'token ... tag'", path)
    for document in documents:
        if document.starts_with_docstart and not document.sentences:
            raise FormatError(f"empty document: {DOCSTART} is followed by no tokens", path, document.line)
    group_size = None
    if not any(d.starts_with_docstart for d in documents):
        group_size = sentences_per_document or DEFAULT_SENTENCES_PER_DOCUMENT
        documents = _group_sentences(documents[0].sentences, group_size)

    sentences = [s for d in documents for s in d.sentences]
    i_starts = [
        (s.lines[i], s.tags[i], s.tags[i - 1] if i else None) for s in sentences for i in i_chunk_starts(s.tags)
    ]
    first_biluo = next((line for s in sentences for line, tag in zip(s.lines, s.tags) if tag[:2] in ("L-", "U-")), None)
    if encoding != "auto":
        reason = "given"
    elif first_biluo is not None:
        encoding, reason = "BIOUL", f"auto: L-/U- tags, first on line {first_biluo}"
    elif i_starts:
        encoding = "IOB1"
        starts = "1 chunk starts" if len(i_starts) == 1 else f"{len(i_starts)} chunks start"
        reason = f"auto: {starts} with I- after O or another type, first on line {i_starts[0][0]}"
    else:
        encoding, reason = (
            "BIO",
            "auto: every chunk starts with B-"
            if any(t != "O" for s in sentences for t in s.tags)
            else "auto: no entity tags",
        )
    reading = ConllReading(
        codec,
        codec_reason,
        encoding,
        reason,
        "grouped" if group_size else "docstart",
        group_size,
        len(documents),
        len(sentences),
        i_starts,
        first_biluo,
    )
    stem = Path(path).name.split(".")[0] or "document"
    width = len(str(len(documents) - 1))
    return [
        _to_document(d, f"{stem}-{index:0{width}d}", path, encoding).validate() for index, d in enumerate(documents)
    ], reading


def _read_conll_documents(
    path: PathLike, tag_column: int, file_encoding: str = AUTO_FILE_ENCODING
) -> Tuple[List[_ConllDocument], Tuple[str, str]]:
    """Splits a column file into documents (at ``-DOCSTART-``) and sentences, checking columns
    and tag shapes; also returns the codec used and why."""
    documents: List[_ConllDocument] = []
    sentence: Optional[_Sentence] = None
    columns: Optional[Tuple[int, int]] = None  # (column count, line that set it)
    lines, codec = decoded_lines(path, file_encoding)
    for number, text in lines:
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
                looks_like, seen = _looks_like(text, fields, "a sentence is plain text, not CoNLL")
                raise FormatError(
                    f"expected at least 2 columns (token and tag), got {len(fields)}: {text!r}",
                    path,
                    number,
                    hint=_hint(looks_like, seen),
                    looks_like=looks_like,
                )
            if not -len(fields) <= tag_column < len(fields):
                raise FormatError(
                    f"tag column {tag_column} does not exist in a line of {len(fields)} columns", path, number
                )
            columns = (len(fields), number)
        elif len(fields) != columns[0]:
            raise FormatError(
                f"expected {columns[0]} columns (as on line {columns[1]}), got {len(fields)}: {text!r}",
                path,
                number,
                hint=_space_hint(text),
            )
        tag = fields[tag_column]
        if not _TAG_PATTERN.match(tag):
            seen = f"a line of {len(fields)} words is plain text, not CoNLL (one word per line)"
            looks_like, seen = _looks_like(text, fields, seen, tag) if number == columns[1] else (None, "")
            raise FormatError(
                f"expected a tag 'O' or B-/I-/L-/U-TYPE in {_column_name(tag_column, len(fields))}, got {tag!r}",
                path,
                number,
                hint=_hint(looks_like, seen),
                looks_like=looks_like,
            )
        if not documents:
            documents.append(_ConllDocument(number, starts_with_docstart=False))
        if sentence is None:
            sentence = _Sentence()
            documents[-1].sentences.append(sentence)
        sentence.tokens.append(fields[0])
        sentence.tags.append(tag)
        sentence.lines.append(number)
    return documents, codec


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
            hint = ""
            if encoding == "BIO" and sentence.tags[min(err.position, len(sentence.tags) - 1)].startswith("I-"):
                hint = "; to start a chunk there, as conlleval does, read the file as IOB1 (tag_scheme / --tag-scheme IOB1)"
            raise FormatError(f"{err} (reading the tags as {encoding}){hint}", path, line) from None
        offset = len(tokens)
        spans.extend((offset + s, offset + e, t) for s, e, t in sentence_spans)
        tokens.extend(sentence.tokens)
        sentence_ends.append(len(tokens))
    return Document(
        id=doc_id,
        tokens=tokens,
        sentence_ends=sentence_ends,
        spans=spans,
        is_complete=True,
        source=f"{path}:{document.line}",
    )
