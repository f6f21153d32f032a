"""Documents in, tagged documents out: the input rules and the output of ``eer-ner predict``, with any
tagger of chunks (no AllenNLP import).

:func:`parse_input` reads one input (``{"text": ...}`` or ``{"tokens": [...], "sentence_ends": [...]}``,
optionally ``"id"``; the rules are in :mod:`eer_plugin.predictors.tagger`'s docstring) and raises
:class:`InputError` saying what is wrong with it. :func:`tag_documents` tags the chunks of several
documents together, ``size`` per model call, longest first, and stitches each document's spans back
into the output of ``predict`` (:func:`document_output`). The AllenNLP predictor
(:class:`~eer_plugin.predictors.tagger.DocumentTaggerPredictor`) and the exported model
(:class:`~eer_plugin.inference.exported.ExportedTagger`) both tag through it; each brings its
``tag_chunks(chunks)``: per chunk, ``((start, end, type), probability)`` of every entity in chunk word
positions (:meth:`~eer_plugin.inference.decoding.SpanDecoder.chunk_entities`).
"""

import json
import unicodedata
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from eer_plugin.core.ranges import is_integer
from eer_plugin.core.spans import Span
from eer_plugin.core.tags import spans_to_biluo
from eer_plugin.corpus.documents import Document, DocumentError, unknown_keys_message
from eer_plugin.corpus.formats.decoding import decode_file
from eer_plugin.corpus.formats.files import FormatError, text_files
from eer_plugin.corpus.importers.shapes import DESCRIPTIONS, IMPORTED_KINDS, kind_of
from eer_plugin.corpus.tokenizer import tokenize_text
from eer_plugin.inference.chunking import Chunk

#: Key of the input line number in a loaded JSON object of predict's input (removed before the document is read).
LINE_KEY = "_eer_line"
#: Key of the reason in a line of predict's input that could not be read (answered by an error record).
ERROR_KEY = "_eer_error"

#: the keys of one input: ``text`` or ``tokens`` (with ``sentence_ends``), and ``id``; any other key is refused,
#: except the annotations of a line in the training format (:data:`ANNOTATION_KEYS`)
INPUT_KEYS = ("id", "text", "tokens", "sentence_ends")
#: the keys of a training-format document (:attr:`Document.JSON_KEYS`: what eer-dictionary, eer-simulate and the
#: importers write) that predict ignores: such a file is tagged as it is, its words by its ``tokens``
ANNOTATION_KEYS = tuple(key for key in Document.JSON_KEYS if key not in INPUT_KEYS)
#: per chunk, ``((start, end, type), probability)`` of its entities (chunk word positions)
ChunkTagger = Callable[[Sequence[Chunk]], List[List[Tuple[Span, float]]]]


class InputError(ValueError):
    """A predict input that cannot be tagged; reported as an error record for its line."""


class ParsedDocument(NamedTuple):
    """One input, read and chunked: the document, the character offsets of its words (raw text only),
    the raw text (or None) and its chunks."""

    doc: Document
    offsets: List[Tuple[int, int]]
    text: Optional[str]
    chunks: List[Chunk]


def describe(value: Any) -> str:
    """``value`` as JSON, cut to 40 characters (for error messages); white space other than the space and
    invisible characters are escaped (a no-break space shows as ``\\u00a0``, not as a space)."""
    text = "".join(
        f"\\u{ord(c):04x}" if (c.isspace() and c != " ") or unicodedata.category(c) in ("Cf", "Co", "Cn") else c
        for c in json.dumps(value, ensure_ascii=False)
    )
    return text if len(text) <= 40 else text[:37] + "..."


def parse_input(data: Any) -> Tuple[Document, List[Tuple[int, int]], Optional[str]]:
    """``(document, character offsets of its words (raw text only), text)`` of one input object,
    or :class:`InputError` saying what is wrong with it."""
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {describe(data)}{_looks_like(data)}")
    unknown = sorted(str(key) for key in data if key not in INPUT_KEYS + ANNOTATION_KEYS)
    if unknown:  # a misspelt "sentence_end" would otherwise tag the document as one sentence
        raise InputError(unknown_keys_message(unknown, INPUT_KEYS + ANNOTATION_KEYS) + _looks_like(data))
    if any(key in data for key in ANNOTATION_KEYS) and "tokens" in data:
        return _annotated_input(data)
    if ("text" in data) == ("tokens" in data):
        raise InputError('needs exactly one of "text" (a string) or "tokens" (a list of strings)')
    doc_id = data.get("id")
    doc_id = "" if doc_id is None else doc_id
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
        raise InputError(f'"id" must be a string or an integer, got {describe(doc_id)}')
    offsets: List[Tuple[int, int]] = []
    text = None
    if "text" in data:
        text = _checked_text(data["text"])
        if "sentence_ends" in data:
            raise InputError('"sentence_ends" goes with "tokens"; raw "text" is split into sentences by the tokenizer')
        words, offsets, ends = tokenize_text(text)
        if not words:
            if text.strip():
                raise InputError('"text" holds no word: only white space and invisible format characters')
            raise InputError('"text" is empty or only white space')
    else:
        words = data["tokens"]
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise InputError(f'"tokens" must be a list of strings, got {describe(words)}')
        if not words:
            raise InputError('"tokens" is empty')
        bad = [i for i, w in enumerate(words) if not w or any(c.isspace() for c in w)]
        if bad:
            raise InputError(
                f'"tokens"[{bad[0]}] is {describe(words[bad[0]])}: tokens must be non-empty, without white space'
            )
        ends = data.get("sentence_ends", [len(words)])
        if not isinstance(ends, list) or not all(is_integer(e) for e in ends):
            raise InputError(f'"sentence_ends" must be a list of integers, got {describe(ends)}')
        if not ends or ends[-1] != len(words) or any(b <= a for a, b in zip([0] + ends, ends)):
            raise InputError(
                f'"sentence_ends" must increase strictly from above 0 and end at {len(words)} (the number of tokens), '
                f"got {describe(ends)}"
            )
    try:
        doc = Document(id=str(doc_id), tokens=list(words), sentence_ends=list(ends), is_complete=False).validate()
    except DocumentError as err:
        raise InputError(str(err)) from err
    return doc, offsets, text


def _looks_like(data: Any) -> str:
    """What a line that is no input looks like, with what predict reads instead ("" when nothing known)."""
    if isinstance(data, dict) and "tags" in data:
        return "; the line is predict's own output (its 'tags'): give predict the documents it tagged"
    kind = kind_of(data)
    return (
        f"; the line looks like {DESCRIPTIONS[kind]}, then predict the imported file" if kind in IMPORTED_KINDS else ""
    )


def _checked_text(text: Any) -> str:
    if not isinstance(text, str):
        raise InputError(f'"text" must be a string, got {describe(text)}')
    return text


def _annotated_input(data: dict) -> Tuple[Document, List[Tuple[int, int]], Optional[str]]:
    """A line in the training format: its annotations are ignored and its ``tokens`` (with ``sentence_ends``)
    are the words; where it has the ``text`` they were cut from (eer-dictionary's raw-text output), the output
    keeps it and the spans' character offsets."""
    words = {key: data[key] for key in ("id", "tokens", "sentence_ends") if key in data}
    doc, _, _ = parse_input(words)
    text = data.get("text")
    if text is None:
        return doc, [], None
    cut, offsets, _ = tokenize_text(_checked_text(text))
    if cut != doc.tokens:
        raise InputError(
            '"tokens" are not the words of "text" (as the tokenizer cuts it): give one of them, or both as '
            "eer-dictionary writes them"
        )
    return doc, offsets, text


def chunk_batches(documents: Sequence[ParsedDocument], size: int) -> Iterator[List[Tuple[int, Chunk]]]:
    """The chunks of all ``documents`` as ``(document index, chunk)``, ``size`` per batch, longest first."""
    items = [(d, chunk) for d, document in enumerate(documents) for chunk in document.chunks]
    order = sorted(range(len(items)), key=lambda i: -len(items[i][1].subword_ids))
    for first in range(0, len(order), size):
        yield [items[i] for i in order[first : first + size]]


def tag_documents(documents: Sequence[ParsedDocument], size: int, tag_chunks: ChunkTagger) -> List[Dict[str, Any]]:
    """The outputs of ``documents``, their chunks tagged together by ``tag_chunks``, ``size`` per call, longest first."""
    spans_of: List[List[Tuple[int, Dict[str, Any]]]] = [[] for _ in documents]  # (chunk order, span)
    for batch in chunk_batches(documents, size):
        for (d, chunk), entities in zip(batch, tag_chunks([chunk for _, chunk in batch])):
            offset = chunk.word_start
            spans_of[d].extend(
                (chunk.index, {"type": label, "start": start + offset, "end": end + offset, "probability": probability})
                for (start, end, label), probability in entities
            )
    return [
        document_output(document, [span for _, span in sorted(spans_of[d], key=lambda x: x[0])])
        for d, document in enumerate(documents)
    ]


def uncertain_entity_tags(
    documents: Sequence[ParsedDocument], size: int, entity_probabilities: Callable[[Sequence[Chunk]], List[List[float]]]
) -> List[float]:
    """Per document, the expected number of uncertain entity tags: the sum over its words of ``min(p, 1 - p)``,
    ``p`` the CRF marginal probability that the word's first subword has an entity tag (not ``O``);
    ``entity_probabilities(chunks)`` gives ``p`` of every word of each chunk
    (:meth:`~eer_plugin.inference.decoding.SpanDecoder.word_entity_probabilities`). It is the expected number
    of words whose entity-or-not call by the marginals is wrong: the documents to annotate next rank highest."""
    totals = [0.0] * len(documents)
    for batch in chunk_batches(documents, size):
        for (d, _), probabilities in zip(batch, entity_probabilities([chunk for _, chunk in batch])):
            totals[d] += sum(min(p, 1.0 - p) for p in probabilities)
    return totals


def document_output(document: ParsedDocument, chunk_spans: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The ``predict`` output of one document from its spans (document word positions, in order)."""
    doc, offsets, text = document.doc, document.offsets, document.text
    spans = []
    for span in chunk_spans:
        start, end = span["start"], span["end"]
        span["text"] = " ".join(doc.tokens[start:end])
        if offsets:
            span.update(char_start=offsets[start][0], char_end=offsets[end - 1][1])
            span["text"] = text[span["char_start"] : span["char_end"]]  # type: ignore[index]
        spans.append(span)
    tags = spans_to_biluo([(s["start"], s["end"], s["type"]) for s in spans], len(doc.tokens))
    output = {
        "id": doc.id,
        "tokens": list(doc.tokens),
        "tags": tags,
        "spans": spans,
        "sentence_ends": list(doc.sentence_ends),
    }
    if text is not None:  # raw text: the characters the offsets index (eer-export writes them to the annotation tools)
        output["text"] = text
    return output


def output_mismatch(record: Any, input_line: str, line: int) -> Optional[str]:
    """Why ``record`` (one output JSON object of ``predict``) is not the output of the input line ``input_line``
    (line number ``line``), or None when it is: a tagged document must have that input's ``id`` and its ``text``
    or ``tokens``; an error record must name that line. Used to verify kept output (``--resume``, ``eer-merge``)
    before it is trusted: the input's own content is the fingerprint of each output record."""
    from eer_plugin.corpus import strict_json
    from eer_plugin.corpus.text import normalise_value

    if not isinstance(record, dict):
        return "not a JSON object"
    if "error" in record:
        return None if record.get("line") == line else f"an error record of line {record.get('line')!r}"
    try:
        data = normalise_value(strict_json.loads(input_line))
    except strict_json.JsonError:
        return "a tagged document, but the input line is not JSON"
    if not isinstance(data, dict):
        return "a tagged document, but the input line is not a JSON object"
    doc_id = data.get("id")
    if str("" if doc_id is None else doc_id) != record.get("id"):
        return f"id {describe(record.get('id'))}, the input's is {describe(doc_id)}"
    if "text" in data:
        if record.get("text") != data["text"]:
            return f"text {describe(record.get('text'))}, the input's is {describe(data['text'])}"
    elif record.get("tokens") != data.get("tokens"):
        return f"tokens {describe(record.get('tokens'))}, the input's are {describe(data.get('tokens'))}"
    return None


class UnreadableDocument(str):
    """A document of a folder input that cannot be read: its error record's reason, and its id."""

    def __new__(cls, reason: str, doc_id: str):
        line = super().__new__(cls, reason)
        line.doc_id = doc_id
        return line


def folder_input_lines(root: str) -> Iterator[str]:
    """A folder of ``.txt`` files as input lines, one ``{"id": path in the folder, "text": ...}`` per file in
    path order (:func:`~eer_plugin.corpus.formats.files.text_files`); a file that cannot be decoded is an
    :class:`UnreadableDocument` (its error record), the others are still tagged."""
    from eer_plugin.corpus import strict_json

    for doc_id, path in text_files(root)[0]:
        try:
            yield strict_json.dumps({"id": doc_id, "text": decode_file(path)}) + "\n"
        except FormatError as err:
            yield UnreadableDocument(err.reason, doc_id)
