"""Partial-annotation JSON lines: the format the simulators and importers write and the training
reader consumes (see :meth:`eer_plugin.corpus.documents.Document.from_json`)."""

import logging
from typing import Dict, Iterable, Iterator, List, Tuple

from eer_plugin.common.outputs import writing
from eer_plugin.core.tags import OUTSIDE
from eer_plugin.corpus import strict_json
from eer_plugin.corpus.documents import Document, DocumentError, unknown_keys_message
from eer_plugin.corpus.formats.decoding import DecodedLines, decoded_lines
from eer_plugin.corpus.formats.files import AUTO_FILE_ENCODING, FormatError, PathLike
from eer_plugin.corpus.tag_like import TagLikeTypes
from eer_plugin.corpus.text import normalise_value, replaced_id_note

logger = logging.getLogger(__name__)


def _spread_hint(text: str) -> str:
    """What a line that opens a JSON value and does not close it means (a pretty-printed JSON file)."""
    if text.strip() not in ("[", "{"):
        return ""
    return (
        "; the file is one JSON document spread over many lines (a Label Studio JSON export? import it with "
        "`eer-ner eer-import label-studio`), not JSON lines: one object per line"
    )


def json_lines(
    path: PathLike, file_encoding: str = AUTO_FILE_ENCODING, error=FormatError
) -> Iterator[Tuple[int, object]]:
    """``(line number, parsed value)`` of every non-blank line of a JSON lines file; a line that is
    not JSON, repeats a key in an object or nests too deeply (:mod:`eer_plugin.corpus.strict_json`) raises
    ``error`` (a :class:`FormatError` class) naming the line and the column or key. Strings
    are normalised (:mod:`eer_plugin.corpus.text`: lone surrogates, control characters), and a warning says so once
    per file (how many lines, the first one)."""
    yield from _values(_decoded(path, file_encoding)[0], path, error)


def _decoded(path: PathLike, file_encoding: str) -> Tuple[DecodedLines, Tuple[str, str]]:
    """The lines of a JSON lines file (read as iterated) and ``(codec used, why)``, logged."""
    lines, (codec, why) = decoded_lines(path, file_encoding, json_lines=True)
    logger.info("%s: character encoding %s (%s)", path, codec, why)
    return lines, (codec, why)


def _values(lines: Iterable[Tuple[int, str]], path: PathLike, error) -> Iterator[Tuple[int, object]]:
    """The parsed values of :func:`json_lines` from its decoded ``lines``."""
    replaced: List[int] = []  # the lines whose strings held lone surrogates or control characters
    for number, text in lines:
        if not text.strip():
            continue
        try:
            value = strict_json.loads(text)
        except strict_json.JsonError as err:
            raise error(str(err) + _spread_hint(text), path, number) from None
        cleaned = normalise_value(value)
        if cleaned != value:
            replaced.append(number)
        yield number, cleaned
    if (
        replaced
    ):  # once per file: NUL, ESC, ... inside tokens or text (escaped as \u0000 in JSON) are never kept silently
        logger.warning(
            "%s: lone surrogates or control characters (NUL, ESC, ...) in the strings of %d line(s), first on line %d, "
            "replaced by U+FFFD, one character for one (tokens and offsets keep their length)",
            path,
            len(replaced),
            replaced[0],
        )


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
    return list(jsonl_documents(path, file_encoding)[0])


def jsonl_documents(
    path: PathLike, file_encoding: str = AUTO_FILE_ENCODING
) -> Tuple[Iterator[Document], Tuple[str, str]]:
    """The documents of :func:`read_jsonl`, read one line at a time as they are iterated (what stays is each
    id's line, to refuse an id twice), and ``(codec used, why)``, decided first."""
    lines, codec = _decoded(path, file_encoding)
    return _documents(lines, path), codec


def _documents(lines: Iterable[Tuple[int, str]], path: PathLike) -> Iterator[Document]:
    first_line: Dict[str, int] = {}
    complete = 0
    tag_like = TagLikeTypes()  # types named like tags, warned about once per file
    for number, data in _values(lines, path, FormatError):
        try:
            if isinstance(data, dict) and ("gold_annotations" in data or "uid" in data):
                data = _from_authors_format(data)
            document = Document.from_json(data)
        except DocumentError as err:
            raise FormatError(str(err), path, number) from None
        if document.id in first_line:
            raise FormatError(
                f"document id {document.id!r} already used on line {first_line[document.id]}"
                + replaced_id_note(document.id),
                path,
                number,
            )
        first_line[document.id] = number
        _warn_tag_like(document, f"{path}:{number}", tag_like)
        document.source = f"{path}:{number}"
        complete += document.is_complete
        yield document
    if not first_line:
        raise FormatError("no documents; expected one JSON object per line", path)
    logger.info(
        "%s: %d documents, one per JSON line (%d complete); spans as word offsets, no tag scheme",
        path,
        len(first_line),
        complete,
    )


def _warn_tag_like(document: Document, where: str, tag_like: TagLikeTypes) -> None:
    """A warning (logged) for each type of ``document`` named like a tag that the file had not shown before."""
    labels = [label for _, _, label in document.spans] + [n[2] for n in document.negative_spans if len(n) == 3]
    for label in labels:
        warning = tag_like.check(label, f"{where}: document {document.id!r}")
        if warning:
            logger.warning("%s", warning)


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

    The file is written under a temporary name and renamed (:func:`eer_plugin.common.outputs.writing`),
    so a failure leaves the previous file, never a partial one.
    """
    count = 0
    with writing(path) as out:
        for document in documents:
            out.write(jsonl_line(document))
            count += 1
    return count


def jsonl_line(document: Document) -> str:
    """The line of :func:`write_jsonl` for ``document``, validated (UTF-8 JSON, its line break included)."""
    return strict_json.dumps(document.validate().to_json()) + "\n"
