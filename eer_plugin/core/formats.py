"""Readers and writers between corpus files and :class:`~eer_plugin.core.documents.Document` lists.

Formats:

* **CoNLL column files** (:func:`read_conll`): one token per line, the tag in the last column
  (or ``tag_column``), blank lines between sentences, optional ``-DOCSTART-`` lines between
  documents. Covers CoNLL-2003 (English/German, IOB1), CoNLL-2002 (Spanish/Dutch, IOB2), WNUT and
  any ``token ... tag`` file, space- or tab-separated.
* **OntoNotes 5 / CoNLL-2012** (:func:`read_ontonotes`): ``*_conll`` / ``*.gold_conll`` files with
  bracketed named entities, one document per ``#begin document`` part.
* **Partial-annotation JSON lines** (:func:`read_jsonl` / :func:`write_jsonl`): the format
  simulators write and the training reader consumes (see :meth:`Document.from_json`).

Every reader reads the whole input before returning, and any problem raises :class:`FormatError`
naming the file, the line and what was expected, so a corpus is never half-read silently.
"""
import codecs
import json
import logging
import os
import re
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Tuple, Union

from eer_plugin.core.documents import Document, DocumentError, Span, unknown_keys_message
from eer_plugin.core.tags import OUTSIDE, TagSequenceError, detect_encoding, normalize_encoding, tags_to_spans

PathLike = Union[str, "os.PathLike[str]"]
logger = logging.getLogger(__name__)

#: sentences grouped into one document when a CoNLL file has no ``-DOCSTART-`` line
DEFAULT_SENTENCES_PER_DOCUMENT = 10
DOCSTART = "-DOCSTART-"
#: the 18 OntoNotes 5 named-entity types
ONTONOTES_TYPES = (
    "PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE",
    "DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL",
)  # fmt: skip
FORMATS = ("auto", "conll", "ontonotes", "jsonl")


class FormatError(DocumentError):
    """A corpus file that cannot be read; ``path`` and ``line`` (1-based, or None) locate the problem."""

    def __init__(self, message: str, path: PathLike, line: Optional[int] = None):
        self.path = str(path)
        self.line = line
        self.reason = message
        super().__init__(f"{self.path}:{line}: {message}" if line is not None else f"{self.path}: {message}")


# --------------------------------------------------------------------------------------- lines
#: ``file_encoding`` value that reads UTF-8 and falls back to latin-1 for column files that are not valid UTF-8
AUTO_FILE_ENCODING = "auto"
#: line breaks of column files: LF, CRLF, CR alone (old Mac files) and the Unicode line/paragraph separators
_LINE_BREAKS = re.compile("\r\n|\r|\n|\u2028|\u2029")
#: line breaks of JSON lines files (U+2028 may stand unescaped inside a JSON string, a raw CR may not)
_JSON_LINE_BREAKS = re.compile("\r\n|\r|\n")


def _line_of_byte(data: bytes, offset: int) -> Tuple[int, int]:
    """(1-based line number, byte offset within that line) of a byte offset, lines split at LF/CR."""
    line_start = max(data.rfind(b"\n", 0, offset), data.rfind(b"\r", 0, offset)) + 1
    line = 1 + len(re.findall(rb"\r\n|\r|\n", data[:line_start]))
    return line, offset - line_start


def decode_file(path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, fallback: bool = True) -> str:
    """The text of ``path`` decoded with ``file_encoding`` (any Python codec name, e.g. ``latin-1``).

    ``auto`` reads UTF-8 (a leading byte-order mark is dropped); when the bytes are not valid UTF-8
    and ``fallback`` is true, the file is read as latin-1 (ISO-8859-1, the encoding of the CoNLL-2002
    Spanish/Dutch distribution) and a warning says so. Without the fallback, or with an explicit
    encoding, an undecodable byte raises :class:`FormatError` naming its line and offset.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise FormatError(f"cannot read file: {err.strerror or err}", path) from None
    codec = "utf-8" if file_encoding == AUTO_FILE_ENCODING else file_encoding
    try:
        codecs.lookup(codec)
    except LookupError:
        raise FormatError(f"unknown file encoding {file_encoding!r}; expected 'auto' or a codec name such as utf-8 or latin-1", path) from None
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as err:
        line, column = _line_of_byte(data, err.start)
        if file_encoding == AUTO_FILE_ENCODING and fallback:
            logger.warning(
                "%s is not valid UTF-8 (byte 0x%02x on line %d); reading it as latin-1 "
                "(set file_encoding / --file-encoding to choose another encoding)",
                path, data[err.start], line,
            )
            return data.decode("latin-1")
        name = "UTF-8" if codecs.lookup(codec).name == "utf-8" else codec
        hint = "" if file_encoding == AUTO_FILE_ENCODING and fallback else " (set file_encoding / --file-encoding, e.g. latin-1)"
        raise FormatError(
            f"invalid {name} byte 0x{data[err.start]:02x} at byte {column} of the line "
            f"(byte {err.start} of the file); expected {name} text{hint}",
            path,
            line,
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


def _read_lines(path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, json_lines: bool = False) -> Iterator[Tuple[int, str]]:
    """Yields ``(line number, text without the line break)`` of the whole decoded file (see
    :func:`decode_file`; JSON lines files must be UTF-8 unless ``file_encoding`` says otherwise,
    so they get no latin-1 fallback). Lines end at LF, CRLF, a lone CR, and in column files also at
    U+2028 / U+2029."""
    text = decode_file(path, file_encoding, fallback=not json_lines)
    breaks = _JSON_LINE_BREAKS if json_lines else _LINE_BREAKS
    lines = breaks.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        yield number, line


# --------------------------------------------------------------------------------------- CoNLL
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
    for number, text in _read_lines(path, file_encoding):
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


# --------------------------------------------------------------------------------------- OntoNotes
_BEGIN_DOCUMENT = re.compile(r"^#begin document \((?P<name>[^)]*)\);\s*part\s+(?P<part>\d+)\s*$")
_NAME_BRACKET = re.compile(r"^(?:\((?P<type>[A-Z_]+)\*?(?P<single>\))?|\*(?P<close>\))?)$")
#: column holding the named entities in CoNLL-2012 files (0-based)
ONTONOTES_NE_COLUMN = 10


def is_ontonotes_file(path: PathLike) -> bool:
    """True for OntoNotes CoNLL-2012 file names (``*_conll``, which includes ``*.gold_conll``)."""
    return Path(path).name.endswith("_conll")


def read_ontonotes(path_or_dir: PathLike, file_encoding: str = AUTO_FILE_ENCODING) -> List[Document]:
    """Reads OntoNotes 5 CoNLL-2012 files (a file, or every ``*_conll`` file below a directory in
    sorted path order) into complete documents, one per ``(document, part)``.

    Token lines have at least 11 white-space separated columns; column 11 holds the named entities
    in bracket notation (``(PERSON*``, ``*``, ``*)``, ``(GPE)``) over the 18 OntoNotes types.
    Document ids are ``<document path>-<part>`` (``nw/wsj/00/wsj_0001-000``).
    """
    root = Path(path_or_dir)
    if root.is_dir():
        files = sorted(p for p in root.rglob("*") if p.is_file() and is_ontonotes_file(p))
        if not files:
            raise FormatError("no *_conll or *.gold_conll files below this directory", root)
    else:
        files = [root]
    documents: List[Document] = []
    seen: Dict[str, str] = {}
    for file in files:
        for document in _read_ontonotes_file(file, file_encoding):
            if document.id in seen:
                raise FormatError(f"document {document.id!r} appears twice (first at {seen[document.id]})", file)
            seen[document.id] = str(document.source)
            documents.append(document)
    return documents


def _read_ontonotes_file(path: Path, file_encoding: str = AUTO_FILE_ENCODING) -> Iterator[Document]:
    begin_line: Optional[int] = None
    doc_id = ""
    tokens: List[str] = []
    sentence_ends: List[int] = []
    spans: List[Span] = []
    open_entity: Optional[Tuple[int, str, int]] = None  # (start token, type, line)
    found_any = False

    def end_sentence(line: int) -> None:
        if open_entity is not None:
            raise FormatError(
                f"unbalanced brackets: entity {open_entity[1]} opened here is not closed before the end of its "
                f"sentence (line {line})",
                path,
                open_entity[2],
            )
        if tokens and (not sentence_ends or sentence_ends[-1] != len(tokens)):
            sentence_ends.append(len(tokens))

    for number, text in _read_lines(path, file_encoding):
        stripped = text.strip()
        if stripped.startswith("#begin document"):
            match = _BEGIN_DOCUMENT.match(stripped)
            if not match:
                raise FormatError(f"expected '#begin document (name); part NNN', got {stripped!r}", path, number)
            if begin_line is not None:
                raise FormatError(
                    f"'#begin document' inside the document begun on line {begin_line} (no '#end document')",
                    path,
                    number,
                )
            begin_line, doc_id = number, f"{match['name']}-{match['part']}"
            tokens, sentence_ends, spans = [], [], []
        elif stripped.startswith("#end document"):
            if begin_line is None:
                raise FormatError("'#end document' without '#begin document'", path, number)
            end_sentence(number)
            if not tokens:
                raise FormatError(f"empty document {doc_id!r}: no token lines", path, begin_line)
            found_any = True
            source = f"{path}:{begin_line}"
            yield Document(doc_id, tokens, sentence_ends, spans, is_complete=True, source=source).validate()
            begin_line = None
        elif not stripped:
            if begin_line is not None:
                end_sentence(number)
        else:
            if begin_line is None:
                raise FormatError("token line outside '#begin document' ... '#end document'", path, number)
            fields = stripped.split()
            if len(fields) <= ONTONOTES_NE_COLUMN:
                raise FormatError(
                    f"expected at least {ONTONOTES_NE_COLUMN + 1} columns (CoNLL-2012), got {len(fields)}", path, number
                )
            position = len(tokens)
            tokens.append(fields[3])
            bracket = fields[ONTONOTES_NE_COLUMN]
            match = _NAME_BRACKET.match(bracket)
            if not match:
                raise FormatError(
                    f"expected a named-entity bracket like '(PERSON*', '*', '*)' or '(GPE)', got {bracket!r}",
                    path,
                    number,
                )
            if match["type"]:
                if match["type"] not in ONTONOTES_TYPES:
                    raise FormatError(
                        f"unknown OntoNotes entity type {match['type']!r}; expected one of {', '.join(ONTONOTES_TYPES)}",
                        path,
                        number,
                    )
                if open_entity is not None:
                    raise FormatError(
                        f"unbalanced brackets: {bracket!r} opens an entity inside {open_entity[1]} "
                        f"opened on line {open_entity[2]}",
                        path,
                        number,
                    )
                open_entity = (position, match["type"], number)
            if match["single"] or match["close"]:
                if open_entity is None:
                    raise FormatError(f"unbalanced brackets: {bracket!r} closes no open entity", path, number)
                spans.append((open_entity[0], position + 1, open_entity[1]))
                open_entity = None
    if begin_line is not None:
        raise FormatError(f"document {doc_id!r} has no '#end document' line", path, begin_line)
    if not found_any:
        raise FormatError("no '#begin document' found; expected an OntoNotes CoNLL-2012 file", path)


# --------------------------------------------------------------------------------------- JSON lines
def json_lines(path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, error=FormatError) -> Iterator[Tuple[int, object]]:
    """``(line number, parsed value)`` of every non-blank line of a JSON lines file; a line that is
    not JSON raises ``error`` (a :class:`FormatError` class) naming the line and column."""
    for number, text in _read_lines(path, file_encoding, json_lines=True):
        if not text.strip():
            continue
        try:
            yield number, json.loads(text)
        except json.JSONDecodeError as err:
            raise error(f"invalid JSON at column {err.colno}: {err.msg}", path, number) from None


#: keys of the authors' format (``ml/dataset_readers/partial_jsonl_reader.py``)
AUTHORS_JSON_KEYS = ("uid", "id", "tokens", "sentence_ends", "gold_annotations", "is_complete")


def read_jsonl(path: PathLike, file_encoding: str = AUTO_FILE_ENCODING) -> List[Document]:
    """Reads partial-annotation JSON lines, one document per line (blank lines are skipped)::

        {"id": "doc-1", "tokens": ["Peter", "Blackburn", "said", "."], "sentence_ends": [4],
         "spans": [[0, 2, "PER"]], "is_complete": false, "negative_spans": [[2, 4]]}

    ``sentence_ends`` defaults to one sentence, ``is_complete`` to false, ``spans`` and
    ``negative_spans`` to none; span ends are exclusive. A negative span ``[start, end]`` holds no
    entity; ``[start, end, type]`` is not an entity of that type (e.g. a Prodigy binary reject). Lines in the authors' format
    (``uid``, ``gold_annotations: [{"start", "end", "type", ...}]``) are accepted too; their
    annotations of type ``O`` become negative spans. Every document is validated; errors name the
    file and line.
    """
    documents: List[Document] = []
    first_line: Dict[str, int] = {}
    for number, data in json_lines(path, file_encoding):
        try:
            if isinstance(data, dict) and ("gold_annotations" in data or "uid" in data):
                data = _from_authors_format(data)
            document = Document.from_json(data)
        except DocumentError as err:
            raise FormatError(str(err), path, number) from None
        if document.id in first_line:
            raise FormatError(
                f"document id {document.id!r} already used on line {first_line[document.id]}", path, number
            )
        first_line[document.id] = number
        document.source = f"{path}:{number}"
        documents.append(document)
    if not documents:
        raise FormatError("no documents; expected one JSON object per line", path)
    return documents


def _from_authors_format(data: dict) -> dict:
    """Converts a record of the authors' format to :meth:`Document.to_json` form."""
    unknown = sorted(set(data) - set(AUTHORS_JSON_KEYS))
    if unknown:
        raise DocumentError(unknown_keys_message(unknown, AUTHORS_JSON_KEYS))
    converted = {k: data[k] for k in ("tokens", "sentence_ends", "is_complete") if k in data}
    if "id" in data or "uid" in data:
        converted["id"] = data["id"] if "id" in data else data["uid"]
    annotations = data.get("gold_annotations", [])
    if not isinstance(annotations, list):
        raise DocumentError(f"'gold_annotations' must be a list of objects, got {type(annotations).__name__}")
    spans, negative_spans = [], []
    for index, annotation in enumerate(annotations):
        if not isinstance(annotation, dict) or not {"start", "end", "type"} <= set(annotation):
            raise DocumentError(f"gold_annotations[{index}] must be an object with 'start', 'end' and 'type'")
        if annotation.get("kind", "entity") != "entity":
            raise DocumentError(
                f"gold_annotations[{index}] has kind {annotation['kind']!r}; only 'entity' is supported"
            )
        if annotation["type"] == OUTSIDE:
            negative_spans.append([annotation["start"], annotation["end"]])
        else:
            spans.append([annotation["start"], annotation["end"], annotation["type"]])
    converted["spans"] = spans
    if negative_spans:
        converted["negative_spans"] = negative_spans
    return converted


def write_jsonl(documents: Iterable[Document], path: PathLike) -> int:
    """Validates and writes documents as JSON lines (UTF-8, one per line); returns how many.

    The file is written under a temporary name and renamed, so a failure leaves no partial file.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".tmp")
    count = 0
    try:
        with open(temporary, "w", encoding="utf-8") as out:
            for document in documents:
                out.write(json.dumps(document.validate().to_json(), ensure_ascii=False) + "\n")
                count += 1
        os.replace(temporary, target)
    finally:
        if temporary.exists():
            temporary.unlink()
    return count


# --------------------------------------------------------------------------------------- dispatch
def detect_format(path: PathLike, file_encoding: str = AUTO_FILE_ENCODING) -> str:
    """``jsonl``, ``ontonotes`` or ``conll`` from the path: a directory or ``*_conll`` name is
    OntoNotes, ``.jsonl``/``.json`` is JSON lines; otherwise the first non-blank line decides
    (``{`` → jsonl, ``#begin document`` → ontonotes, anything else → conll)."""
    p = Path(path)
    if p.is_dir() or is_ontonotes_file(p):
        return "ontonotes"
    if p.suffix in (".jsonl", ".json"):
        return "jsonl"
    try:
        data = p.read_bytes()
    except OSError as err:
        raise FormatError(f"cannot read file: {err.strerror or err}", p) from None
    codec = "utf-8" if file_encoding == AUTO_FILE_ENCODING else file_encoding
    try:
        text = data.decode(codec, errors="replace")  # only sniffed here; the reader reports bad bytes
    except LookupError:
        raise FormatError(f"unknown file encoding {file_encoding!r}; expected 'auto' or a codec name such as utf-8 or latin-1", p) from None
    for line in _LINE_BREAKS.split(text.lstrip("\ufeff")):
        stripped = line.strip()
        if stripped:
            if stripped.startswith("{"):
                return "jsonl"
            if stripped.startswith("#begin document"):
                return "ontonotes"
            break
    return "conll"


def read_documents(
    path: PathLike,
    format: str = "auto",
    encoding: str = "auto",
    sentences_per_document: Optional[int] = None,
    tag_column: int = -1,
    file_encoding: str = AUTO_FILE_ENCODING,
) -> List[Document]:
    """Reads ``path`` in ``format`` (``auto`` uses :func:`detect_format`).

    ``encoding``, ``sentences_per_document`` and ``tag_column`` are the options of
    :func:`read_conll`; the other formats carry their own annotation and ignore them, so one
    reader configuration can read a JSON-lines training file and a CoNLL dev file.
    ``file_encoding`` is the character encoding of every format (see :func:`decode_file`).
    """
    if format not in FORMATS:
        raise FormatError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}", path)
    if format == "auto":
        format = detect_format(path, file_encoding)
    if format == "jsonl":
        return read_jsonl(path, file_encoding)
    if format == "ontonotes":
        return read_ontonotes(path, file_encoding)
    return read_conll(
        path, encoding=encoding, sentences_per_document=sentences_per_document, tag_column=tag_column,
        file_encoding=file_encoding,
    )  # fmt: skip
