"""OntoNotes 5 / CoNLL-2012 ``*_conll`` / ``*.gold_conll`` files: bracketed named entities, one
document per ``#begin document`` part."""

import logging
import re
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import RAW_TEXT_FIX, Document, Span
from eer_plugin.corpus.formats.decoding import decoded_lines
from eer_plugin.corpus.formats.files import AUTO_FILE_ENCODING, FormatError, PathLike
from eer_plugin.corpus.text import replaced_id_note

logger = logging.getLogger(__name__)

#: the 18 OntoNotes 5 named-entity types
ONTONOTES_TYPES = (
    "PERSON",
    "NORP",
    "FAC",
    "ORG",
    "GPE",
    "LOC",
    "PRODUCT",
    "EVENT",
    "WORK_OF_ART",
    "LAW",
    "LANGUAGE",
    "DATE",
    "TIME",
    "PERCENT",
    "MONEY",
    "QUANTITY",
    "ORDINAL",
    "CARDINAL",
)

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
    return list(ontonotes_documents(path_or_dir, file_encoding))


def ontonotes_documents(path_or_dir: PathLike, file_encoding: str = AUTO_FILE_ENCODING) -> Iterator[Document]:
    """The documents of :func:`read_ontonotes`, read one at a time (what stays is each id's source, to refuse
    a document twice)."""
    root = Path(path_or_dir)
    if root.is_dir():
        files = sorted(p for p in root.rglob("*") if p.is_file() and is_ontonotes_file(p))
        if not files:
            texts = sum(1 for p in root.rglob("*.txt") if p.is_file())
            raw = f", only raw text ({counted(texts, '.txt file')}), not training data. {RAW_TEXT_FIX}" if texts else ""
            raise FormatError(f"no *_conll or *.gold_conll files below this directory{raw}", root)
    else:
        files = [root]
    seen: Dict[str, str] = {}
    for file in files:
        for document in _read_ontonotes_file(file, file_encoding):
            if document.id in seen:
                first, note = seen[document.id], replaced_id_note(document.id)
                raise FormatError(f"document {document.id!r} appears twice (first at {first}){note}", file)
            seen[document.id] = str(document.source)
            yield document


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

    lines, (codec, why) = decoded_lines(path, file_encoding)
    logger.info("%s: character encoding %s (%s)", path, codec, why)
    parts = 0
    for number, text in lines:
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
            parts += 1
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
    logger.info(
        "%s: %d documents from '#begin document' parts; entities from bracket column %d, no tag scheme",
        path,
        parts,
        ONTONOTES_NE_COLUMN + 1,
    )


# --------------------------------------------------------------------------------------- JSON lines
