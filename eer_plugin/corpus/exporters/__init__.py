"""Exporters of a model's predictions to annotation tools' import formats: pre-annotations that the
annotator corrects (no AllenNLP import). The counterpart of :mod:`eer_plugin.corpus.importers`.

Input: the JSON lines of ``eer-ner predict --predictor eer_tagger`` (:mod:`eer_plugin.predictors.tagger`).
Each document becomes a text with character spans:

* a raw-text prediction (it has ``text`` and the spans' ``char_start``/``char_end``) keeps its text and
  offsets exactly, so that importing the corrected annotation tokenizes the same text into the same
  words (:func:`eer_plugin.corpus.importers.to_document` uses the predictor's tokenizer);
* a token prediction (pre-split ``tokens``) gets the text of its tokens joined by one space, its
  sentences by a line break; importing it gives the same words when the tokenizer keeps each token
  whole (CoNLL-style tokens do; ``U.S.-based`` would be split);
* error records (``{"line": 7, "error": ...}``) are skipped and counted;
* a span's type is refused, naming the line and the span, where every importer would refuse it
  (:func:`span_type_problem`: not a string, blank or ``O``, white space at its ends or other than a space
  inside), so that no format writes a type that ``eer-import`` cannot read back; nothing is written then.

Document ids must be unique (the importers refuse an id twice); an empty id becomes
``<file stem>-<line>``, as the importers name documents without an id. Formats (module, what it
writes): ``doccano`` (JSONL), ``label-studio`` (JSON tasks with ``predictions``), ``prodigy``
(JSONL tasks with ``spans``, ``tokens`` and each document's own hashes), ``brat`` (a directory of ``.txt`` +
``.ann``).
"""

import dataclasses
import importlib
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from eer_plugin.common.outputs import writing
from eer_plugin.core.ranges import is_integer
from eer_plugin.corpus import strict_json
from eer_plugin.corpus.documents import json_repr, no_entity_type, type_problem
from eer_plugin.corpus.formats import AUTO_FILE_ENCODING, FormatError, PathLike, json_lines
from eer_plugin.corpus.importers.shapes import DOCCANO_SPAN_KEYS
from eer_plugin.corpus.text import replaced_id_note
from eer_plugin.corpus.tokenizer import trim_span

#: format name -> module (under ``eer_plugin.corpus.exporters``)
FORMAT_MODULES = {"doccano": "doccano", "label-studio": "label_studio", "prodigy": "prodigy", "brat": "brat"}
EXPORT_FORMATS = tuple(FORMAT_MODULES)


class PredictionsError(FormatError):
    """A predictions file that cannot be exported; names the file, the line and what was expected."""


@dataclasses.dataclass
class PredictedSpan:
    start: int  # character offsets into the document's text, end exclusive
    end: int
    type: str
    probability: float


@dataclasses.dataclass
class PredictedDocument:
    id: str
    text: str
    #: character ``(start, end)`` of every word
    words: List[Tuple[int, int]]
    #: word ``(start, end)`` (end exclusive) of each span, in the order of ``spans``
    word_spans: List[Tuple[int, int]]
    spans: List[PredictedSpan]
    #: where it came from, for messages
    path: str
    line: int


def _word_offsets(text: str, tokens: Sequence[str], path: PathLike, line: int) -> List[Tuple[int, int]]:
    """The character offsets of ``tokens`` in ``text``: each the next word, after characters that belong to no word
    as the tokenizer cuts text (white space and invisible format characters: :func:`trim_span` leaves none)."""
    offsets, position = [], 0
    for index, token in enumerate(tokens):
        start = text.find(token, position)
        if start < 0 or len(set(trim_span(text, position, start))) > 1:
            raise PredictionsError(f"token {index} {token!r} is not the next word of the document's text", path, line)
        offsets.append((start, start + len(token)))
        position = start + len(token)
    return offsets


#: why a type is refused: ``eer-import`` would refuse it, so the export would not import back
_NOT_IMPORTED = "eer-import refuses such a type, so the export would not import back"


def span_type_problem(label: Any) -> str:
    """What is wrong with a predicted span's type, or "": exactly what every importer refuses
    (:meth:`eer_plugin.corpus.documents.Document.validate`), so that every export imports back. A type must be a
    string, not blank nor ``O`` (:func:`~eer_plugin.corpus.documents.no_entity_type`), and without white space at
    its ends or white space other than a space inside (:func:`~eer_plugin.corpus.documents.type_problem`). A type
    named like a tag (``B-PER``) is a name: the importers take it, with a warning (:mod:`eer_plugin.corpus.tag_like`)."""
    if not isinstance(label, str):
        return f"the type must be a string (an entity type's name), got {json_repr(label)}; {_NOT_IMPORTED}"
    if no_entity_type(label):
        return (
            f"type {label!r} is no entity type (blank, or O: the tag of words outside every entity); {_NOT_IMPORTED}: "
            "remove the span from the predictions file"
        )
    problem = type_problem(label)
    return f"{problem} ({_NOT_IMPORTED})" if problem else ""


def _document(record: Dict[str, Any], path: PathLike, line: int) -> PredictedDocument:
    tokens, spans, ends = record.get("tokens"), record.get("spans"), record.get("sentence_ends")
    if not (isinstance(tokens, list) and isinstance(spans, list) and isinstance(ends, list)):
        raise PredictionsError(
            'expected a prediction of eer-ner predict: "tokens", "spans" and "sentence_ends" lists', path, line
        )
    if not tokens or not all(isinstance(t, str) and t and not any(c.isspace() for c in t) for t in tokens):
        raise PredictionsError(
            '"tokens" must be non-empty strings without white space (as eer-ner predict writes them)', path, line
        )
    if not all(is_integer(e) for e in ends):
        raise PredictionsError('"sentence_ends" must be a list of integers', path, line)
    text = record.get("text")
    if text is None:  # pre-split tokens: one space between words, a line break between sentences
        breaks = set(ends)
        text = "".join(token + ("\n" if i + 1 in breaks else " ") for i, token in enumerate(tokens))[:-1]
    elif not isinstance(text, str):
        raise PredictionsError(f'"text" must be a string, got {type(text).__name__}', path, line)
    words = _word_offsets(text, tokens, path, line)
    predicted, word_spans = [], []
    for index, span in enumerate(spans):
        try:
            start, end, label, probability = span["start"], span["end"], span["type"], float(span["probability"])
        except (KeyError, TypeError, ValueError, OverflowError):
            raise PredictionsError(f"spans[{index}] needs start, end, type and probability", path, line) from None
        if not all(is_integer(x) for x in (start, end)):
            raise PredictionsError(f"spans[{index}]: start and end must be word indices", path, line)
        problem = span_type_problem(label)
        if problem:
            raise PredictionsError(f"spans[{index}]: {problem}", path, line)
        if not 0.0 <= probability <= 1.0:
            raise PredictionsError(
                f"spans[{index}]: probability must be between 0 and 1, got {probability}", path, line
            )
        if not 0 <= start < end <= len(words):
            raise PredictionsError(
                f"spans[{index}] covers words {start}-{end} of a document of {len(words)} words", path, line
            )
        word_spans.append((start, end))
        predicted.append(PredictedSpan(words[start][0], words[end - 1][1], label, probability))
    doc_id = record.get("id")
    if doc_id is not None and (isinstance(doc_id, bool) or not isinstance(doc_id, (str, int))):
        raise PredictionsError(
            f'"id" must be a string, an integer or null (as eer-ner predict writes it), got {doc_id!r}', path, line
        )
    # an id of 0 is an id (predict's input takes integer ids); none, or "", is named by the file and line
    return PredictedDocument("" if doc_id is None else str(doc_id), text, words, word_spans, predicted, str(path), line)


#: the fix when a line is a document without predictions (predict's input, or annotations)
TAG_FIRST = (
    "eer-export reads eer-ner predict's output: tag the file first (eer-ner predict MODEL FILE --predictor eer_tagger "
    "--output-file predictions.jsonl) and export predictions.jsonl"
)


def _what_it_is(record: Dict[str, Any]) -> Optional[str]:
    """What a line that is not a prediction looks like (no ``tags`` and no span probabilities: predict writes
    both), or None."""
    spans = record.get("spans")
    if (
        "tags" in record
        or isinstance(spans, list)
        and spans
        and all(isinstance(x, dict) and "probability" in x for x in spans)
    ):
        return None
    if any(key in record for key in DOCCANO_SPAN_KEYS):
        return (
            "an annotation tool's record (its labels, no model probabilities), not a prediction; import it with "
            "eer-ner eer-import TOOL first"
        )
    if "spans" in record or "gold_annotations" in record:
        return "annotations (eer-import's or eer-dictionary's training format: spans without probabilities)"
    if "text" in record or "tokens" in record:
        return "a document without predictions (eer-ner predict's input)"
    return None


def _json_lines(path: PathLike, file_encoding: str):
    """:func:`json_lines` of a predictions file; a first line that is not JSON (and no JSON document spread over
    lines) says that eer-export reads predict's JSON lines, not its CoNLL output nor a column file."""
    try:
        yield from json_lines(path, file_encoding, PredictionsError)
    except PredictionsError as error:
        if error.line != 1 or not error.reason.startswith("invalid JSON") or "not JSON lines" in error.reason:
            raise
        raise PredictionsError(
            f"{error.reason}: not JSON lines; eer-export reads the JSON lines of eer-ner predict (its default "
            "output_format json, not conll)",
            path,
            error.line,
        ) from None


@dataclasses.dataclass
class Exported:
    """What an export read: the predicted documents, their spans and the error records of predict skipped."""

    documents: int = 0
    spans: int = 0
    errors: int = 0


def read_predictions(path: PathLike, file_encoding: str = AUTO_FILE_ENCODING) -> Tuple[List[PredictedDocument], int]:
    """The predicted documents of a predictions file (:func:`predicted_documents`, as a list) and the number of
    error records skipped."""
    exported = Exported()
    return list(predicted_documents(path, exported, file_encoding)), exported.errors


def predicted_documents(
    path: PathLike, exported: Exported, file_encoding: str = AUTO_FILE_ENCODING
) -> Iterator[PredictedDocument]:
    """The predicted documents of a predictions file, one line at a time (what stays is each id's line, to refuse
    an id twice), counted in ``exported``."""
    seen: Dict[str, int] = {}
    stem = Path(path).name.split(".")[0] or "predictions"
    for line, record in _json_lines(path, file_encoding):
        if not isinstance(record, dict):
            raise PredictionsError("expected a JSON object (a line of eer-ner predict output)", path, line)
        if "error" in record:
            exported.errors += 1
            continue
        try:
            document = _document(record, path, line)
        except PredictionsError:
            found = _what_it_is(record)
            if found is None:
                raise
            raise PredictionsError(f"{found}; {TAG_FIRST}", path, line) from None
        document.id = document.id or f"{stem}-{line}"
        if document.id in seen:
            raise PredictionsError(
                f"document id {document.id!r} is also the id of line {seen[document.id]}: the importers need unique ids; "
                'give each predict input line its own "id"' + replaced_id_note(document.id),
                path,
                line,
            )
        seen[document.id] = line
        exported.documents += 1
        exported.spans += len(document.spans)
        yield document
    if not exported.documents:
        raise PredictionsError(
            "no predicted documents in this file" + (f" ({exported.errors} error records)" if exported.errors else ""),
            path,
        )


def export(format: str, predictions: PathLike, output: PathLike, **options) -> Tuple[int, int, int]:
    """Writes ``predictions`` as ``format`` to ``output``, one document at a time (the output appears whole when
    the last one is written); returns (documents, spans, error records skipped). ``options`` go to the format
    module (``model_version``, ``from_name``, ``to_name`` for Label Studio)."""
    if format not in FORMAT_MODULES:
        raise PredictionsError(f"unknown export format {format!r}; expected one of {', '.join(EXPORT_FORMATS)}", output)
    module = importlib.import_module(f"{__name__}.{FORMAT_MODULES[format]}")
    exported = Exported()
    module.write(predicted_documents(predictions, exported), output, **options)
    return exported.documents, exported.spans, exported.errors


def rounded(probability: float) -> float:
    """A probability as written to the tools (6 decimals: JSON stays short, ranking unchanged)."""
    return round(probability, 6)


def lowest_probability(document: PredictedDocument) -> Optional[float]:
    """The probability of the document's least certain span (None without spans): a document score
    by which the tools that take one can sort documents for review."""
    return rounded(min(s.probability for s in document.spans)) if document.spans else None


def write_json_lines(records, path: PathLike) -> None:
    """One JSON object per line (UTF-8), written atomically (:func:`eer_plugin.common.outputs.writing`)."""
    with writing(path) as out:
        for record in records:
            out.write(strict_json.dumps(record) + "\n")
