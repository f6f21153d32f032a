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

One module per format (``conll``, ``ontonotes``, ``jsonl``) and ``files`` for what they share
(character encodings, line breaks, :class:`FormatError`); this package re-exports their API.

Every reader reads the whole input before returning, and any problem raises :class:`FormatError`
naming the file, the line and what was expected, so a corpus is never half-read silently. Every
reader logs, once per file at INFO, what it settled on (tag scheme, character encoding, documents),
and the CoNLL reader warns when it grouped sentences into documents; ``eer-inspect``
(:mod:`eer_plugin.corpus.inspection`) shows all of it with counts.
"""

from pathlib import Path
from typing import List, Optional

from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats.conll import DEFAULT_SENTENCES_PER_DOCUMENT, DOCSTART, read_conll
from eer_plugin.corpus.formats.decoding import LINE_BREAKS, decode_file, read_lines
from eer_plugin.corpus.formats.files import AUTO_FILE_ENCODING, FormatError, PathLike, read_input_bytes, text_codec
from eer_plugin.corpus.formats.jsonl import AUTHORS_JSON_KEYS, json_lines, read_jsonl, write_jsonl
from eer_plugin.corpus.formats.ontonotes import ONTONOTES_TYPES, is_ontonotes_file, read_ontonotes

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
    "json_lines",
    "read_conll",
    "read_documents",
    "read_jsonl",
    "read_lines",
    "read_ontonotes",
    "write_jsonl",
]

FORMATS = ("auto", "conll", "ontonotes", "jsonl")


def detect_format(path: PathLike, file_encoding: str = AUTO_FILE_ENCODING) -> str:
    """``jsonl``, ``ontonotes`` or ``conll`` from the path: a directory or ``*_conll`` name is
    OntoNotes, ``.jsonl``/``.json`` is JSON lines; otherwise the first non-blank line decides
    (``{`` → jsonl, ``#begin document`` → ontonotes, anything else → conll)."""
    p = Path(path)
    if p.is_dir() or is_ontonotes_file(p):
        return "ontonotes"
    if p.suffix in (".jsonl", ".json"):
        return "jsonl"
    data = read_input_bytes(p)
    codec = text_codec(data, p) if file_encoding == AUTO_FILE_ENCODING else file_encoding
    try:
        text = data.decode(codec, errors="replace")  # only sniffed here; the reader reports bad bytes
    except LookupError:
        raise FormatError(
            f"unknown file encoding {file_encoding!r}; expected 'auto' or a codec name such as utf-8 or latin-1", p
        ) from None
    for line in LINE_BREAKS.split(text.lstrip("\ufeff")):
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
        path,
        encoding=encoding,
        sentences_per_document=sentences_per_document,
        tag_column=tag_column,
        file_encoding=file_encoding,
    )
