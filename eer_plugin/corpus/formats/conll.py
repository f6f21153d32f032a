"""CoNLL column files: one token per line, the tag in the last column (or ``tag_column``), blank
lines between sentences, optional ``-DOCSTART-`` lines between documents, each optionally followed by its
document's id (``# id = d1``: :mod:`~eer_plugin.corpus.formats.columns`). Covers CoNLL-2003
(English/German, IOB1), CoNLL-2002 (Spanish/Dutch, IOB2), WNUT, ``eer-ner predict``'s CoNLL output and any
``token ... tag`` file, in IOB1, BIO, BIOUL or BIOES tags."""

import dataclasses
import logging
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from eer_plugin.common.wording import counted
from eer_plugin.core.tags import TagSequenceError, ending_scheme, i_chunk_starts, normalize_encoding, tags_to_spans
from eer_plugin.corpus.documents import Document, Span
from eer_plugin.corpus.formats.columns import DOCSTART, ErrorRecord, IdComment, Part, Sentence, column_parts
from eer_plugin.corpus.formats.decoding import decoded_lines
from eer_plugin.corpus.formats.files import AUTO_FILE_ENCODING, FormatError, PathLike
from eer_plugin.corpus.text import replaced_id_note

logger = logging.getLogger(__name__)

#: sentences grouped into one document when a CoNLL file has no ``-DOCSTART-`` line
DEFAULT_SENTENCES_PER_DOCUMENT = 10
#: the chunks that start with ``I-`` whose lines a reading keeps (``eer-inspect`` shows them)
FIRST_I_STARTS = 5


class _ConllDocument:
    """Sentences of one document of a column file and the line it starts on."""

    def __init__(self, line: int) -> None:
        self.line = line
        self.sentences: List[Sentence] = []
        #: the id its ``# id =`` line names, and that line
        self.id: Optional[str] = None
        self.id_line = 0


@dataclasses.dataclass
class ConllReading:
    """What :func:`read_conll` decided about a file, and what it saw that made it decide."""

    #: the codec the file was decoded with, and why (``auto: valid UTF-8``, ``given``, ...)
    file_encoding: str
    file_encoding_reason: str
    #: ``IOB1``, ``BIO``, ``BIOUL`` or ``BIOES``, and why (``given`` or what ``auto`` saw)
    tag_scheme: str
    tag_scheme_reason: str
    #: ``docstart`` (``-DOCSTART-`` lines delimit the documents) or ``grouped`` (``group_size`` sentences each)
    documents_from: str
    group_size: Optional[int]
    documents: int
    sentences: int
    #: how many chunks start with ``I-`` after ``O``, another type or at a sentence start (conlleval's rule),
    #: and ``(line, tag, previous tag or None at a sentence start)`` of the first :data:`FIRST_I_STARTS`
    i_starts: int
    first_i_starts: List[Tuple[int, str, Optional[str]]]
    #: line of the first tag only BIOUL or BIOES writes (``L-``/``U-``, ``S-``/``E-``; None: none)
    first_ending_line: Optional[int] = None
    #: documents named by a ``# id =`` line (the others are ``<file stem>-<index>``)
    ids: int = 0
    #: ``eer-ner predict``'s error records (input lines it could not tag) skipped, and the line of the first
    error_records: int = 0
    first_error_record: Optional[int] = None

    def log_lines(self, path: PathLike) -> List[Tuple[int, str]]:
        """``(logging level, message)``: the scheme, the character encoding and the documents, one line
        each at INFO, and a WARNING with the fix when sentences were grouped into documents."""
        lines = [
            (logging.INFO, f"{path}: tag scheme {self.tag_scheme} ({self.tag_scheme_reason})"),
            (logging.INFO, f"{path}: character encoding {self.file_encoding} ({self.file_encoding_reason})"),
        ]
        if self.documents_from == "docstart":
            named = f", {self.ids} named by '# id =' lines" if self.ids else ""
            lines.append(
                (
                    logging.INFO,
                    f"{path}: {counted(self.documents, 'document')} from {DOCSTART} lines ({counted(self.sentences, 'sentence')}{named})",
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
        if self.error_records:
            lines.append((logging.WARNING, f"{path}: {self.error_records_skipped()}"))
        return lines

    def error_records_skipped(self) -> str:
        """What became of the file's error records (the log's and ``eer-inspect``'s warning)."""
        return (
            f"{counted(self.error_records, 'error record')} of eer-ner predict skipped, first on line "
            f"{self.first_error_record} (input lines it could not tag: no documents here)"
        )


def read_conll(path: PathLike, **options) -> List[Document]:
    """Reads a CoNLL column file into complete (gold) documents (:func:`iter_conll`, as a list); ``options`` and
    the rules of the file: :func:`conll_documents`."""
    return list(iter_conll(path, **options))


def iter_conll(path: PathLike, **options) -> Iterator[Document]:
    """The documents of :func:`conll_documents` (``options``: its own), one at a time; its log lines
    (:meth:`ConllReading.log_lines`) come when the first pass has decided them, before the first document."""
    documents, reading = conll_documents(path, **options)
    for level, message in reading.log_lines(path):
        logger.log(level, message)
    yield from documents


def conll_documents(
    path: PathLike,
    encoding: str = "auto",
    sentences_per_document: Optional[int] = None,
    tag_column: int = -1,
    file_encoding: str = AUTO_FILE_ENCODING,
) -> Tuple[Iterator[Document], ConllReading]:
    """The complete (gold) documents of a CoNLL column file, read one at a time as they are iterated, and the
    :class:`ConllReading`, decided first: a first pass over the file checks every line and counts what decides
    the tag scheme, the documents and their ids (nothing of the file is kept); the second pass reads one
    document at a time (a tag sequence the scheme does not allow is an error there).

    Parameters
    ----------
    path :
        Column file: one token per line with the token in the first column and the tag in
        ``tag_column`` (default: the last), columns separated by spaces or tabs; a blank line (or
        one holding only white space, such as the lone TAB of WNUT files) ends a sentence.
    encoding :
        ``auto`` (guessed over the whole file with :func:`~eer_plugin.core.tags.detect_encoding`:
        BIOUL if ``L-``/``U-`` occurs first, BIOES if ``S-``/``E-`` does, IOB1 if an entity starts with ``I-``,
        otherwise BIO), or ``IOB1``, ``BIO``/``IOB2``, ``BIOUL``/``BILOU`` or ``BIOES``/``IOBES``.
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
    are exempt: CoNLL-2002 Dutch writes ``-DOCSTART- -DOCSTART- O``). A document gets the id that a
    ``# id = ...`` line after its ``-DOCSTART-`` line names (:mod:`~eer_plugin.corpus.formats.columns`; as
    ``eer-ner predict`` writes them), else ``<file stem>-<index>`` (zero-padded), and the source
    ``<file>:<line of its first line>``; an id twice is an error naming both lines, raised when the reading
    reaches the second. ``eer-ner predict``'s error records (``# error: line 7, ...``: input lines it could not
    tag) are skipped, counted in the :class:`ConllReading` (a warning in the log).

    :func:`iter_conll` and :func:`read_conll` log, once per file, the tag scheme, the character encoding and the
    documents it settled on (one line each at INFO, with what ``auto`` saw), and a warning when sentences were
    grouped into documents (:meth:`ConllReading.log_lines`); here the :class:`ConllReading` says it instead.
    """
    try:
        encoding = "auto" if encoding == "auto" else normalize_encoding(encoding)
    except ValueError as err:
        raise FormatError(str(err), path) from None
    if sentences_per_document is not None and sentences_per_document < 1:
        raise FormatError(f"sentences_per_document must be at least 1, got {sentences_per_document}", path)
    lines, (codec, codec_reason) = decoded_lines(path, file_encoding)
    survey = _survey(column_parts(lines, path, tag_column), path)
    group_size = None if survey.docstart else sentences_per_document or DEFAULT_SENTENCES_PER_DOCUMENT
    documents = survey.documents if survey.docstart else -(-survey.sentences // group_size)
    encoding, reason = _scheme(encoding, survey)
    reading = ConllReading(
        codec,
        codec_reason,
        encoding,
        reason,
        "grouped" if group_size else "docstart",
        group_size,
        documents,
        survey.sentences,
        survey.i_starts,
        survey.first_i_starts,
        survey.first_ending[0] if survey.first_ending else None,
        survey.ids,
        survey.error_records,
        survey.first_error_record,
    )
    return _documents(lines, path, tag_column, reading), reading


@dataclasses.dataclass
class _Survey:
    """What the first pass over a column file counts (:func:`_survey`)."""

    #: the documents (one per ``-DOCSTART-`` line, and one for tokens before the first) and whether a
    #: ``-DOCSTART-`` line delimits them
    documents: int = 0
    docstart: bool = False
    sentences: int = 0
    #: chunks that start with ``I-`` (conlleval's rule), the first :data:`FIRST_I_STARTS` of them (line, tag,
    #: previous tag or None at a sentence start), the line and scheme of the first tag only one scheme writes
    #: (``L-``/``U-``: BIOUL, ``S-``/``E-``: BIOES), any entity tag at all
    i_starts: int = 0
    first_i_starts: List[Tuple[int, str, Optional[str]]] = dataclasses.field(default_factory=list)
    first_ending: Optional[Tuple[int, str]] = None
    tagged: bool = False
    ids: int = 0
    error_records: int = 0
    first_error_record: Optional[int] = None

    def count(self, sentence: Sentence) -> None:
        self.sentences += 1
        starts = i_chunk_starts(sentence.tags)
        self.i_starts += len(starts)
        for i in starts[: FIRST_I_STARTS - len(self.first_i_starts)]:
            self.first_i_starts.append((sentence.lines[i], sentence.tags[i], sentence.tags[i - 1] if i else None))
        if self.first_ending is None:
            schemes = ((line, ending_scheme(tag)) for line, tag in zip(sentence.lines, sentence.tags))
            self.first_ending = next(((line, scheme) for line, scheme in schemes if scheme), None)
        self.tagged = self.tagged or any(tag != "O" for tag in sentence.tags)


def _survey(parts: Iterable[Part], path: PathLike) -> _Survey:
    """The first pass: :class:`_Survey` of the file's parts (:func:`_parts`). A ``-DOCSTART-`` followed by no
    token is an error, but at the end of the file, where it is dropped with a warning."""
    survey = _Survey()
    empty: Optional[int] = None  # the line of the last -DOCSTART- while no token follows it
    first_empty: Optional[int] = None  # ... of the first -DOCSTART- that another one follows before any token
    for part in parts:
        if isinstance(part, int):  # a -DOCSTART- line
            first_empty = first_empty or empty
            survey.documents, survey.docstart, empty = survey.documents + 1, True, part
            continue
        if isinstance(part, IdComment):
            survey.ids += 1
            continue
        if isinstance(part, ErrorRecord):
            survey.error_records += 1
            survey.first_error_record = survey.first_error_record or part.line
            continue
        survey.documents = survey.documents or 1  # tokens before the first -DOCSTART-
        empty = None
        survey.count(part)
    if empty is not None:
        logger.warning(
            "%s:%d: %s at the end of the file is followed by no tokens; dropping that empty document",
            path,
            empty,
            DOCSTART,
        )
        survey.documents -= 1
    if not survey.documents:
        raise FormatError("no tokens found; expected CoNLL column lines 'token ... tag'", path)
    if first_empty is not None:
        raise FormatError(f"empty document: {DOCSTART} is followed by no tokens", path, first_empty)
    return survey


def _scheme(encoding: str, survey: _Survey) -> Tuple[str, str]:
    """The tag scheme (``encoding`` as given, or what ``auto`` makes of the survey) and why."""
    if encoding != "auto":
        return encoding, "given"
    if survey.first_ending is not None:
        line, scheme = survey.first_ending
        return scheme, f"auto: {'L-/U-' if scheme == 'BIOUL' else 'S-/E-'} tags, first on line {line}"
    if survey.i_starts:
        starts = "1 chunk starts" if survey.i_starts == 1 else f"{survey.i_starts} chunks start"
        return "IOB1", f"auto: {starts} with I- after O or another type, first on line {survey.first_i_starts[0][0]}"
    return "BIO", "auto: every chunk starts with B-" if survey.tagged else "auto: no entity tags"


def _documents(
    lines: Iterable[Tuple[int, str]], path: PathLike, tag_column: int, reading: ConllReading
) -> Iterator[Document]:
    """The second pass: the documents, one at a time, with the ids their ``# id =`` lines name, else
    ``<file stem>-<index>`` zero-padded to the count; an id twice is an error naming both lines."""
    parts = (part for part in column_parts(lines, path, tag_column) if not isinstance(part, ErrorRecord))
    grouped = _grouped(parts, reading.group_size) if reading.group_size else _delimited(parts)
    stem = Path(path).name.split(".")[0] or "document"
    width = len(str(reading.documents - 1))
    seen: Dict[str, int] = {}  # id -> the line that gave it
    for index, document in enumerate(grouped):
        doc_id = document.id if document.id is not None else f"{stem}-{index:0{width}d}"
        line = document.id_line or document.line
        if doc_id in seen:
            raise FormatError(
                f"document id {doc_id!r} already used by the document of line {seen[doc_id]}{replaced_id_note(doc_id)}",
                path,
                line,
            )
        seen[doc_id] = line
        yield _to_document(document, doc_id, path, reading.tag_scheme).validate()


def _delimited(parts: Iterable[Part]) -> Iterator[_ConllDocument]:
    """The documents that ``-DOCSTART-`` lines delimit (tokens before the first one make one too), with the ids
    that their ``# id =`` lines name."""
    document: Optional[_ConllDocument] = None
    for part in parts:
        if isinstance(part, int):
            if document is not None and document.sentences:
                yield document
            document = _ConllDocument(part)
            continue
        if isinstance(part, IdComment):  # only after a -DOCSTART- line (column_parts)
            if document is not None:
                document.id, document.id_line = part.value, part.line
            continue
        document = document or _ConllDocument(part.lines[0])
        document.sentences.append(part)
    if document is not None and document.sentences:  # not the empty one at the end (dropped)
        yield document


def _grouped(sentences: Iterable[Sentence], size: int) -> Iterator[_ConllDocument]:
    """A file without ``-DOCSTART-``: documents of ``size`` consecutive sentences."""
    group: Optional[_ConllDocument] = None
    for sentence in sentences:
        group = group or _ConllDocument(sentence.lines[0])
        group.sentences.append(sentence)
        if len(group.sentences) == size:
            yield group
            group = None
    if group is not None:
        yield group


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
