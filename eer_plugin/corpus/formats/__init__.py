"""Readers and writers between corpus files and :class:`~eer_plugin.corpus.documents.Document` lists.

Formats:

* **CoNLL column files** (:func:`read_conll`): one token per line, the tag in the last column
  (or ``tag_column``), blank lines between sentences, optional ``-DOCSTART-`` lines between
  documents. Covers CoNLL-2003 (English/German, IOB1), CoNLL-2002 (Spanish/Dutch, IOB2), WNUT and
  any ``token ... tag`` file, space- or tab-separated.
* **OntoNotes 5 / CoNLL-2012** (:func:`read_ontonotes`): ``*_conll`` / ``*.gold_conll`` files with
  bracketed named entities, one document per ``#begin document`` part.
* **Partial-annotation JSON lines** (:func:`read_jsonl` / :func:`write_jsonl`): the format
  simulators write and the training reader consumes (see :meth:`Document.from_json`).

One module per format (``conll`` with ``columns``, ``ontonotes``, ``jsonl``), ``files`` and ``decoding`` for what
they share (the bytes in blocks, character encodings, line breaks, :class:`FormatError`); this package re-exports
their API.

Every reader reads a file in blocks and one document at a time (:func:`iter_documents`; memory holds one
document, not the corpus); :func:`read_documents` is their list. Any problem raises :class:`FormatError`
naming the file, the line and what was expected, so a corpus is never half-read silently (a command writes
its output whole or not at all, :mod:`eer_plugin.common.outputs`). Every
reader logs, once per file at INFO, what it settled on (tag scheme, character encoding, documents),
and the CoNLL reader warns when it grouped sentences into documents; ``eer-inspect``
(:mod:`eer_plugin.corpus.inspection`) shows all of it with counts.
"""

from pathlib import Path
from typing import Iterator, List, Optional

from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats.conll import DEFAULT_SENTENCES_PER_DOCUMENT, DOCSTART, iter_conll, read_conll
from eer_plugin.corpus.formats.decoding import codec_of, decode_file, read_lines, text_start
from eer_plugin.corpus.formats.files import AUTO_FILE_ENCODING, FormatError, PathLike
from eer_plugin.corpus.formats.jsonl import AUTHORS_JSON_KEYS, json_lines, jsonl_documents, read_jsonl, write_jsonl
from eer_plugin.corpus.formats.ontonotes import ONTONOTES_TYPES, is_ontonotes_file, ontonotes_documents, read_ontonotes

__all__ = [
    "AUTHORS_JSON_KEYS",
    "AUTO_FILE_ENCODING",
    "DEFAULT_SENTENCES_PER_DOCUMENT",
    "DOCSTART",
    "FORMATS",
    "FormatError",
    "ONTONOTES_TYPES",
    "PathLike",
    "decode_file",
    "detect_format",
    "is_ontonotes_file",
    "iter_documents",
    "json_lines",
    "read_conll",
    "read_documents",
    "read_jsonl",
    "read_lines",
    "read_ontonotes",
    "write_jsonl",
]

FORMATS = ("auto", "conll", "ontonotes", "jsonl")
#: how the first line of an OntoNotes file starts
ONTONOTES_START = "#begin document"


def detect_format(path: PathLike, file_encoding: str = AUTO_FILE_ENCODING) -> str:
    """``jsonl``, ``ontonotes`` or ``conll`` from the path: a directory or ``*_conll`` name is
    OntoNotes, ``.jsonl``/``.json`` is JSON lines; otherwise the first non-blank line decides
    (``{`` → jsonl, ``#begin document`` → ontonotes, anything else → conll)."""
    p = Path(path)
    if p.is_dir() or is_ontonotes_file(p):
        return "ontonotes"
    if p.suffix in (".jsonl", ".json"):
        return "jsonl"
    start = text_start(
        p, codec_of(p, file_encoding), len(ONTONOTES_START)
    )  # only sniffed here; the reader reports bad bytes
    if start.startswith("{"):
        return "jsonl"
    return "ontonotes" if start.startswith(ONTONOTES_START) else "conll"


def read_documents(path: PathLike, **options) -> List[Document]:
    """Reads ``path`` (:func:`iter_documents`, its ``options``), as a list."""
    return list(iter_documents(path, **options))


def iter_documents(
    path: PathLike,
    format: str = "auto",
    encoding: str = "auto",
    sentences_per_document: Optional[int] = None,
    tag_column: int = -1,
    file_encoding: str = AUTO_FILE_ENCODING,
) -> Iterator[Document]:
    """The documents of ``path`` in ``format`` (``auto`` uses :func:`detect_format`), read one at a time as they
    are iterated: memory holds one document (and each id, to refuse one twice), not the corpus. A bad line
    raises when the reading reaches it (a CoNLL file's structure and character encoding are checked before the
    first document).

    ``encoding``, ``sentences_per_document`` and ``tag_column`` are the options of
    :func:`~eer_plugin.corpus.formats.conll.conll_documents`; the other formats carry their own annotation and
    ignore them, so one reader configuration can read a JSON-lines training file and a CoNLL dev file.
    ``file_encoding`` is the character encoding of every format (see :func:`decode_file`).
    """
    if format not in FORMATS:
        raise FormatError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}", path)
    if format == "auto":
        format = detect_format(path, file_encoding)
    if format == "jsonl":
        yield from jsonl_documents(path, file_encoding)[0]
    elif format == "ontonotes":
        yield from ontonotes_documents(path, file_encoding)
    else:
        yield from iter_conll(
            path,
            encoding=encoding,
            sentences_per_document=sentences_per_document,
            tag_column=tag_column,
            file_encoding=file_encoding,
        )
