"""Importers from annotation-tool exports to partial-annotation documents (no AllenNLP import).

Every tool exports *character* offsets over a raw text; eer-ner trains on *words*. One format
module per tool parses its export into :class:`RawDocument` objects (text, character spans, a
completeness flag); :func:`to_document` then tokenizes the text with the word tokenizer that the
predictor uses on raw text (passed in as ``tokenize``), so that predictions on the same text map
back to the same characters, and maps the spans to words:

* an **entity span** becomes the words it touches (white space and invisible format characters around it are
  trimmed silently); when its characters do not start and end exactly at word boundaries it is *snapped* to
  the covering words with a warning naming the document, the span and both texts;
* a **negative span** (known to hold no entity, or no entity of one type) becomes the words lying
  wholly inside it, with a warning when it had to shrink (growing it could swallow an entity);
* two entity spans that overlap after this (or a negative span overlapping an entity) are an
  :class:`AnnotationImportError` naming both.

Formats (module, what it reads): ``doccano`` (sequence-labelling JSONL), ``label-studio`` (JSON
export), ``brat`` (standoff ``.txt`` + ``.ann``), ``prodigy`` (JSONL), ``spacy`` (``.spacy`` DocBin;
needs spaCy, imported only there). See each module's docstring for the exact rules.

:func:`imported_documents` runs one format end to end, one document at a time, and fills an
:class:`ImportReport` (documents, spans, complete documents, negative spans, skipped items,
warnings); :func:`import_documents` returns them as a list. Each format is read in parts (doccano's and
Prodigy's lines, a Label Studio export's tasks, brat's file pairs, a DocBin's docs).
"""

import dataclasses
import importlib
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import Document, DocumentError, clashing_span, json_repr
from eer_plugin.corpus.formats import FormatError, PathLike, decode_file
from eer_plugin.corpus.importers.offsets import words_of
from eer_plugin.corpus.importers.report import ImportReport, ShownIds
from eer_plugin.corpus.text import normalise, normalise_text, normalise_value, replaced_id_note
from eer_plugin.corpus.tokenizer import trim_span

#: ``tokenize(text) -> (words, (start, end) character offsets of the words, sentence ends)``
Tokenizer = Callable[[str], Tuple[List[str], List[Tuple[int, int]], List[int]]]

#: format name -> module (under ``eer_plugin.corpus.importers``)
FORMAT_MODULES = {
    "doccano": "doccano",
    "label-studio": "label_studio",
    "brat": "brat",
    "prodigy": "prodigy",
    "spacy": "spacy_docbin",
}
IMPORT_FORMATS = tuple(FORMAT_MODULES)


class AnnotationImportError(FormatError):
    """An export that cannot be imported (bad structure, overlapping spans, offsets out of range);
    names the file, the line when there is one, the document and the span(s)."""


class UnknownIdsError(AnnotationImportError):
    """``--complete-ids`` names ids that no document of the export has (``missing``)."""

    def __init__(self, reason: str, path: PathLike, missing: List[str]) -> None:
        super().__init__(reason, path)
        self.missing = missing


@dataclasses.dataclass
class RawSpan:
    """A character span ``[start, end)`` of a :class:`RawDocument`."""

    start: int
    end: int
    #: entity type; for a negative span the type it is known not to be, or None for "no entity"
    label: Optional[str]
    #: how the export names it, for messages (``T3``, ``label[1]``, ``result 'x1' of annotation 7``)
    ref: str
    negative: bool = False
    #: the export's line of the span, when it has one of its own (a brat ``T`` line, a merged Prodigy task)
    line: Optional[int] = None


@dataclasses.dataclass
class RawDocument:
    """One document of an export, before tokenization."""

    id: str
    text: str
    spans: List[RawSpan] = dataclasses.field(default_factory=list)
    #: the export says every entity is marked (Prodigy manual accept, spaCy without missing tags)
    complete: bool = False
    #: where it came from (``file:line`` or ``file``), for messages
    source: str = ""
    #: the export's line of the document, when it is a line-based file (for errors)
    line: Optional[int] = None
    path: str = ""
    #: nobody annotated it (a Label Studio task without a non-cancelled annotation): never complete,
    #: whatever ``--complete`` / ``--complete-ids`` say (its entities would all be taught as ``O``)
    unannotated: bool = False
    #: regions that an annotator marked without giving them a label (a Label Studio result whose ``value.labels``
    #: is empty): skipped with a warning, an error in a complete document (:func:`to_document`)
    unlabelled: List[RawSpan] = dataclasses.field(default_factory=list)


# ------------------------------------------------------------------------------ characters -> words
def _quote(text: str, limit: int = 40) -> str:
    text = " ".join(text.split()) or text  # white space alone is shown as it is
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _describe(raw: RawDocument, span: RawSpan) -> str:
    kind = "negative span" if span.negative else "span"
    label = f" {span.label}" if span.label else ""
    return f"{kind} {span.ref} [{span.start}, {span.end}){label} {_quote(raw.text[span.start : span.end])}"


def _place(raw: RawDocument, span: RawSpan) -> str:
    """``file:line`` of a span (the span's own line, else its document's), or the document's source, for a warning."""
    line = span.line or raw.line
    return f"{raw.path}:{line}" if raw.path and line else raw.source


def _unlabelled(raw: RawDocument, report: ImportReport) -> None:
    """Skips the regions of ``raw`` without a label, each with a warning (counted): their words stay unannotated.
    In a complete document, where every unannotated word is taught as ``O``, such a region is an error."""
    for span in raw.unlabelled:
        region = f"region {span.ref} [{span.start}, {span.end}) {_quote(raw.text[span.start : span.end])} has no label"
        if raw.complete:
            raise _error(
                raw,
                f"{region}, and the document is complete: its words would be taught as O (no entity); "
                "label the region or delete it",
            )
        report.warn(
            f"{_place(raw, span)}: document {raw.id!r}: {region}; skipped (its words stay unannotated): "
            "label the region or delete it"
        )
        report.skip("regions without a label")


def _error(raw: RawDocument, message: str) -> AnnotationImportError:
    return AnnotationImportError(f"document {raw.id!r}: {message}", raw.path or raw.source, raw.line)


def _snap(raw, span, words_in, start, end, starts, ends, action: str, empty: str, report) -> Optional[Tuple[int, int]]:
    """Word range ``(first, last + 1)`` of ``words_in``, warning when it does not match the span's
    characters exactly; None (with a warning) when ``words_in`` is empty."""
    where = f"{raw.source}: document {raw.id!r}: {_describe(raw, span)}"
    if not words_in:
        report.warn(f"{where} {empty}; skipped")
        report.skip(f"{'negative spans' if span.negative else 'spans'} without a {'whole ' * span.negative}word")
        return None
    first, last = words_in[0], words_in[-1]
    if (starts[first], ends[last]) != (start, end):
        report.warn(
            f"{where} does not align with word boundaries; {action} words {first}-{last + 1} "
            f"{_quote(raw.text[starts[first] : ends[last]])}"
        )
        report.snapped_spans += 1
    return first, last + 1


def to_document(raw: RawDocument, tokenize: Tokenizer, report: ImportReport) -> Optional[Document]:
    """Tokenizes ``raw.text`` and maps its character spans to words (see the module docstring).

    Returns None (with a warning) for a document without any word. The id, text and labels are
    normalised first (:mod:`eer_plugin.corpus.text`; offsets stay valid), with a warning when the
    text changed.
    """
    raw.id = normalise_value(raw.id)
    if isinstance(raw.text, str):
        raw.text, replaced = normalise_text(raw.text)
        if replaced:
            report.warn(
                f"{raw.source}: document {raw.id!r}: {counted(replaced, 'lone surrogate or control character', 'lone surrogates or control characters')} replaced by U+FFFD"
            )
    for span in raw.spans:
        if not isinstance(span.label, str) and not (span.negative and span.label is None):
            hint = (
                " (a label id? export the label names)"
                if isinstance(span.label, int)
                else " (a list of labels? a span takes one type: give one label's name)"
                if isinstance(span.label, list)
                else ""
            )
            raise _error(
                raw,
                f"{'negative span' if span.negative else 'span'} {span.ref}: the type must be a string (the label's "
                f"name), got {json_repr(span.label)}{hint}",
            )
        span.label = normalise_value(span.label)
        where = f"{_place(raw, span)}: document {raw.id!r}: {'negative span' if span.negative else 'span'} {span.ref}"
        warning = report.tag_like.check(span.label, where)  # once per type named like a tag (B-PER)
        if warning:
            report.warn(warning)
    _unlabelled(raw, report)
    words, offsets, sentence_ends = tokenize(raw.text)
    if not words:
        report.warn(f"{raw.source}: document {raw.id!r} has no words; skipped")
        report.skip("documents without words")
        return None
    starts = [a for a, _ in offsets]
    ends = [b for _, b in offsets]
    ordered = all(a <= b for a, b in zip(starts, starts[1:])) and all(a <= b for a, b in zip(ends, ends[1:]))
    entities: List[Tuple[int, int, str, RawSpan]] = []
    negatives: List[Tuple[Tuple, RawSpan]] = []
    for span in raw.spans:
        if not (
            isinstance(span.start, int) and isinstance(span.end, int) and 0 <= span.start < span.end <= len(raw.text)
        ):
            raise _error(
                raw,
                f"{'negative span' if span.negative else 'span'} {span.ref} [{span.start}, {span.end}) is out of "
                f"range: the text has {len(raw.text)} characters (offsets are characters, end exclusive)",
            )
        start, end = trim_span(raw.text, span.start, span.end)
        if start == end:
            blank = raw.text[span.start : span.end]
            what = "white space" if blank.isspace() else "white space and invisible format characters"
            report.warn(f"{raw.source}: document {raw.id!r}: {_describe(raw, span)} covers only {what}; skipped")
            report.skip("white-space spans")
            continue
        if span.negative:  # the words wholly inside (growing it could swallow an entity)
            words_in = words_of(start, end, starts, ends, ordered, whole=True)
            snapped = _snap(raw, span, words_in, start, end, starts, ends, "shrunk to", "holds no whole word", report)
            if snapped is not None:
                negatives.append((snapped + ((span.label,) if span.label else ()), span))
            continue
        # the words it touches (a tokenizer that leaves characters out of every word may leave none)
        words_in = words_of(start, end, starts, ends, ordered, whole=False)
        snapped = _snap(raw, span, words_in, start, end, starts, ends, "snapped to", "covers no word", report)
        if snapped is None:
            continue
        first, last = snapped[0], snapped[1] - 1
        entities.append((first, last + 1, span.label or "", span))

    # the same span twice (two annotators, or a binary accept of a manual span) counts once
    unique: Dict[Tuple[int, int, str], RawSpan] = {}
    for s, e, label, span in sorted(entities, key=lambda x: x[:3]):
        unique.setdefault((s, e, label), span)
    previous: Optional[Tuple[Tuple[int, int, str], RawSpan]] = None
    for key, span in unique.items():
        if previous is not None and key[:2] == previous[0][:2]:  # one span, two types: no overlap to look for
            raise _error(
                raw,
                f"{_describe(raw, previous[1])} and {_describe(raw, span)} give words {key[0]}-{key[1]} two types "
                f"({previous[0][2]}, {key[2]}); a span takes one type: keep one of them",
            )
        if previous is not None and key[0] < previous[0][1]:
            raise _error(
                raw,
                f"overlapping spans: {_describe(raw, previous[1])} and {_describe(raw, span)} (words "
                f"{previous[0][0]}-{previous[0][1]} and {key[0]}-{key[1]}); nested or overlapping entities are not supported",
            )
        if previous is None or key[1] > previous[0][1]:
            previous = (key, span)
    unique_negatives: Dict[Tuple, RawSpan] = {}
    for key, span in sorted(negatives, key=lambda x: (x[0][0], x[0][1], x[0][2:])):
        unique_negatives.setdefault(key, span)
    keys = list(unique)  # sorted, not overlapping (checked above)
    key_ends = [e for _, e, _ in keys]
    for key, negative in unique_negatives.items():
        clash = clashing_span(key, keys, key_ends)
        if clash is not None:
            raise _error(
                raw,
                f"{_describe(raw, negative)} {'overlaps' if len(key) == 2 else 'contradicts'} {_describe(raw, unique[keys[clash]])}",
            )
    document = Document(
        id=raw.id,
        tokens=words,
        sentence_ends=sentence_ends,
        spans=list(unique),
        is_complete=raw.complete,
        negative_spans=list(unique_negatives),
    )
    try:
        document.validate()  # without its source, which the error names once (_error)
    except DocumentError as err:  # e.g. a tokenizer returning a word with white space, a type that is no name
        raise AnnotationImportError(str(err), raw.path or raw.source, raw.line) from None
    document.source = raw.source
    return document


# ------------------------------------------------------------------------------ one import
def read_ids(path: PathLike) -> Dict[str, int]:
    """Document ids, one per line (blank lines and ``#`` comments skipped), for ``--complete-ids``; each with the
    line that names it first. A file that names none is an :class:`AnnotationImportError`."""
    text = decode_file(path, fallback=False)  # a FormatError names the file, the line and the fix
    ids: Dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            ids.setdefault(line.strip(), number)
    if not ids:  # an empty or all-comment file: the wrong file, or a list not written yet; never "no document complete"
        raise AnnotationImportError(
            "--complete-ids names no document id (the file is empty, or only blank lines and # comments); list the "
            "ids of the complete documents, one per line, or leave out --complete-ids",
            path,
        )
    return ids


def read_raw_documents(format: str, path: PathLike, report: ImportReport, **options) -> Iterable[RawDocument]:
    """The :class:`RawDocument` objects of an export (the format module's ``read``; read one at a time where the
    format allows it)."""
    if format not in FORMAT_MODULES:
        raise AnnotationImportError(
            f"unknown import format {format!r}; expected one of {', '.join(IMPORT_FORMATS)}", path
        )
    module = importlib.import_module(f"{__name__}.{FORMAT_MODULES[format]}")
    return module.read(path, report, **options)


def import_documents(
    format: str,
    path: PathLike,
    tokenize: Tokenizer,
    complete: bool = False,
    complete_ids: Optional[Iterable[str]] = None,
    **options,
) -> Tuple[List[Document], ImportReport]:
    """Reads an export of ``format`` and returns its documents (validated) and the import report
    (:func:`imported_documents`, as a list)."""
    report = ImportReport(format)
    documents = list(imported_documents(format, path, tokenize, report, complete, complete_ids, **options))
    return documents, report


def imported_documents(
    format: str,
    path: PathLike,
    tokenize: Tokenizer,
    report: ImportReport,
    complete: bool = False,
    complete_ids: Optional[Iterable[str]] = None,
    **options,
) -> Iterator[Document]:
    """The documents (validated) of an export of ``format``, one at a time as they are read; ``report`` is the
    import report, complete when the documents are.

    ``complete`` marks every document complete (the annotators marked every entity);
    ``complete_ids`` only the documents with these ids (an id not in the export is an error, raised after the
    last document, so a typo does not silently leave a document partial). Other ``options`` go to the format
    module (``file_encoding`` for every format; ``annotators`` for Label Studio; ``text_key`` for Label
    Studio; ``incorrect_spans_key`` for spaCy). Document ids must be unique: what stays in memory is each id's
    source, to refuse one twice.
    """
    # ids compared as they are written (normalised: a Label Studio, brat or spaCy id is raw until here)
    wanted = {normalise(i) for i in complete_ids} if complete_ids is not None else set()
    seen: Dict[str, str] = {}
    not_complete = ShownIds()  # unannotated documents that --complete / --complete-ids would have made complete
    for raw in read_raw_documents(format, path, report, **options):
        raw.id = normalise(raw.id)
        if raw.id in seen:
            raise AnnotationImportError(
                f"document id {raw.id!r} of {raw.source} is already used by {seen[raw.id]}{replaced_id_note(raw.id)}",
                path,
                raw.line,
            )
        seen[raw.id] = raw.source
        if (complete or raw.id in wanted) and raw.unannotated:
            not_complete.add(raw.id)
        elif complete or raw.id in wanted:
            raw.complete = True
        document = to_document(raw, tokenize, report)
        if document is not None:
            report.add(document)
            report.unannotated_documents += int(raw.unannotated)
            yield document
    missing = sorted(wanted - set(seen))
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise UnknownIdsError(
            f"--complete-ids names {counted(len(missing), 'document')} not in the export: {shown}", path, missing
        )
    if not_complete.count:
        report.warn(
            f"{path}: {counted(not_complete.count, 'document')} without any human annotation ({not_complete}) imported "
            f"as unannotated, not complete, although {'--complete' if complete else '--complete-ids'} says so "
            "(predictions are no annotation)"
        )
    if not report.documents:
        raise AnnotationImportError(f"no documents with text found in this {format} export", path)


__all__: Sequence[str] = (
    "AnnotationImportError",
    "IMPORT_FORMATS",
    "ImportReport",
    "RawDocument",
    "RawSpan",
    "Tokenizer",
    "UnknownIdsError",
    "import_documents",
    "imported_documents",
    "read_ids",
    "to_document",
)
