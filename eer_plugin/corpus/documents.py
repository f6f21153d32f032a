"""The in-memory document every reader produces and every simulator transforms.

A :class:`Document` is a whole document of words with its sentence boundaries and its *partial*
annotation: the entity spans someone marked (high precision, unknown recall), optionally spans
known to hold no entity (``(start, end)``) or known not to be an entity of one type
(``(start, end, type)``: a rejected suggestion, e.g. a Prodigy binary ``reject``), and a flag saying whether the annotation is complete (then every unmarked
word is observed ``O``, as in gold data).
"""

import dataclasses
import difflib
import unicodedata
from bisect import bisect_left, bisect_right
from typing import List, Optional, Sequence, Tuple

from eer_plugin.common.errors import UserError
from eer_plugin.core.ranges import is_integer

Span = Tuple[int, int, str]  # (start, end exclusive, entity type), in words

#: what to do with raw text where training data (words and their annotations) was expected: every reader
#: of training data says it when its input looks like raw text
RAW_TEXT_FIX = (
    "Fix: label raw text first (`eer-ner eer-dictionary INPUT out.jsonl --dictionary names.tsv`, or an annotation "
    "tool's export through `eer-ner eer-import`); `eer-ner predict` tags it as it is"
)
#: what a line of ``eer-ner predict``'s JSON output (``tokens`` with ``tags``) is, where annotations are expected
PREDICTIONS_FIX = (
    "a line of `eer-ner predict`'s output (its 'tags'), not annotations. Fix: give the annotated file (from "
    "`eer-ner eer-import` or `eer-ner eer-dictionary`), or the documents that predict tagged; to correct "
    "predictions, send them to an annotation tool (`eer-ner eer-export`) and import its export"
)


class DocumentError(ValueError):
    """Invalid document content; the message names the source (file and line) when known."""


class DataFileError(UserError, DocumentError):
    """A data file that is missing or cannot be read (a user error, and a ``DocumentError``, which one-shot
    commands catch)."""


@dataclasses.dataclass
class Document:
    id: str
    tokens: List[str]
    #: exclusive end index of every sentence, increasing, the last one equal to ``len(tokens)``
    sentence_ends: List[int]
    #: annotated entity spans (sorted, non-overlapping)
    spans: List[Span] = dataclasses.field(default_factory=list)
    #: True when every unmarked word is known to be ``O`` (gold data)
    is_complete: bool = False
    #: word spans ``(start, end)`` known to contain no entity (observed ``O``), and ``(start, end, type)``
    #: spans known not to be an entity of that type exactly there (kept, not yet used as training evidence)
    negative_spans: List[Tuple] = dataclasses.field(default_factory=list)
    #: where the document came from, e.g. ``"train.txt:1043"`` (used in error messages)
    source: Optional[str] = None
    #: optional per-word weight of ``O`` for unannotated words (soft evidence; the CBL baseline)
    o_weights: Optional[List[float]] = None
    #: the raw text the document was tokenized from, when it was (what ``provenance`` character offsets index)
    text: Optional[str] = None
    #: where spans came from (``eer-dictionary``): objects ``{"start", "end", "type", "source"}``, each naming a
    #: span of ``spans``, with ``char_start``/``char_end``/``text`` into :attr:`text` for raw-text documents;
    #: metadata only (training ignores it), written for the spans that are still there
    provenance: Optional[List[dict]] = None

    def __post_init__(self):
        self.spans = sorted((int(s), int(e), str(t)) for s, e, t in self.spans)
        self.negative_spans = sorted((int(n[0]), int(n[1])) + tuple(str(t) for t in n[2:]) for n in self.negative_spans)
        self.sentence_ends = [int(e) for e in self.sentence_ends]

    def validate(self) -> "Document":
        """Raises :class:`DocumentError` (naming :attr:`source`) unless the document is consistent."""
        where = f"{self.source}: " if self.source else ""
        n = len(self.tokens)
        if n == 0:
            raise DocumentError(
                f"{where}document {self.id!r} is empty: a document needs at least one word; remove its line"
            )
        if any(not isinstance(t, str) or not t or any(c.isspace() for c in t) for t in self.tokens):
            raise DocumentError(f"{where}document {self.id!r} has an empty token or a token with white space")
        ends = self.sentence_ends
        if not ends or ends[-1] != n or any(b <= a for a, b in zip([0] + ends, ends)):
            raise DocumentError(
                f"{where}document {self.id!r}: sentence_ends must increase strictly and end at {n} tokens, got {ends}"
            )
        previous_end = 0
        for start, end, label in self.spans:
            if not 0 <= start < end <= n:
                raise DocumentError(
                    f"{where}document {self.id!r}: span ({start}, {end}, {label}) is out of range [0, {n})"
                )
            if start < previous_end:
                raise DocumentError(
                    f"{where}document {self.id!r}: span ({start}, {end}, {label}) overlaps the span before it"
                )
            if no_entity_type(label):
                raise DocumentError(f"{where}document {self.id!r}: span ({start}, {end}) has no entity type")
            problem = type_problem(label)
            if problem:
                raise DocumentError(f"{where}document {self.id!r}: span ({start}, {end}): {problem}")
            previous_end = end
        if self.o_weights is not None and (
            len(self.o_weights) != n or not all(0.0 <= float(w) <= 1.0 for w in self.o_weights)
        ):
            raise DocumentError(f"{where}document {self.id!r}: o_weights must be {n} numbers in [0, 1]")
        span_ends = [e for _, e, _ in self.spans]
        for negative in self.negative_spans:
            start, end = negative[0], negative[1]
            if len(negative) not in (2, 3) or len(negative) == 3 and no_entity_type(negative[2]):
                raise DocumentError(
                    f"{where}document {self.id!r}: negative span {negative} must be (start, end) or (start, end, type)"
                )
            problem = type_problem(negative[2]) if len(negative) == 3 else ""
            if problem:
                raise DocumentError(f"{where}document {self.id!r}: negative span ({start}, {end}): {problem}")
            if not 0 <= start < end <= n:
                raise DocumentError(
                    f"{where}document {self.id!r}: negative span ({start}, {end}) is out of range [0, {n})"
                )
            clash = clashing_span(negative, self.spans, span_ends)
            if clash is not None:
                s, e, label = self.spans[clash]
                raise DocumentError(
                    f"{where}document {self.id!r}: negative span {tuple(negative)} "
                    + ("overlaps entity" if len(negative) == 2 else "contradicts entity")
                    + f" ({s}, {e}, {label})"
                )
        return self

    def sentences(self) -> List[Tuple[int, int]]:
        """``(start, end)`` word range of every sentence."""
        return list(zip([0] + self.sentence_ends[:-1], self.sentence_ends))

    def to_json(self) -> dict:
        data = {
            "id": self.id,
            "tokens": self.tokens,
            "sentence_ends": self.sentence_ends,
            "spans": [[s, e, t] for s, e, t in self.spans],
            "is_complete": self.is_complete,
        }
        if self.negative_spans:
            data["negative_spans"] = [list(n) for n in self.negative_spans]
        if self.o_weights is not None:
            data["o_weights"] = [float(w) for w in self.o_weights]
        if self.text is not None:
            data["text"] = self.text
        spans = set(self.spans)
        provenance = [p for p in self.provenance or () if (p["start"], p["end"], p["type"]) in spans]
        if provenance:
            data["provenance"] = provenance
        return data

    #: keys of the JSON object written by :meth:`to_json` and read by :meth:`from_json`
    JSON_KEYS = (
        "id",
        "tokens",
        "sentence_ends",
        "spans",
        "is_complete",
        "negative_spans",
        "o_weights",
        "text",
        "provenance",
    )

    @classmethod
    def from_json(cls, data: dict, source: Optional[str] = None) -> "Document":
        """Inverse of :meth:`to_json`, checking keys and value types, then :meth:`validate`.

        ``id`` and ``tokens`` are required; ``sentence_ends`` defaults to one sentence,
        ``is_complete`` to False and ``spans`` / ``negative_spans`` to none. Unknown keys are an
        error (so a typo such as ``"span"`` does not silently drop the annotation).
        """
        where = f"{source}: " if source else ""
        if not isinstance(data, dict):
            raise DocumentError(f"{where}expected a JSON object, got {type(data).__name__}")
        unknown = sorted(set(data) - set(cls.JSON_KEYS))
        if unknown == ["tags"] and "tokens" in data:
            raise DocumentError(where + PREDICTIONS_FIX)
        if unknown:
            raise DocumentError(where + unknown_keys_message(unknown, cls.JSON_KEYS))
        if "tokens" not in data and "text" in data:
            raise DocumentError(
                f'{where}a line of raw text ("text" without "tokens"), not training data. {RAW_TEXT_FIX}'
            )
        for key in ("id", "tokens"):
            if key not in data:
                raise DocumentError(
                    f"{where}missing key {key!r}"
                    + (' (every line needs a document id of its own, e.g. "id": "doc-1")' if key == "id" else "")
                )

        def check(ok: bool, key: str, expected: str) -> None:
            if not ok:
                raise DocumentError(f"{where}{key!r} must be {expected}, got {json_repr(data[key])}")

        check(isinstance(data["id"], str), "id", "a string")
        tokens = data["tokens"]
        check(isinstance(tokens, list) and all(isinstance(t, str) for t in tokens), "tokens", "a list of strings")
        sentence_ends = data.get("sentence_ends", [len(tokens)])
        if "sentence_ends" in data:
            check(
                isinstance(sentence_ends, list) and all(map(is_integer, sentence_ends)),
                "sentence_ends",
                "a list of integers",
            )
        spans = data.get("spans", [])
        if "spans" in data:
            check(
                isinstance(spans, list)
                and all(
                    isinstance(s, list)
                    and len(s) == 3
                    and is_integer(s[0])
                    and is_integer(s[1])
                    and isinstance(s[2], str)
                    for s in spans
                ),
                "spans",
                "a list of [start, end, type] triples",
            )
        negative_spans = data.get("negative_spans", [])
        if "negative_spans" in data:
            check(
                isinstance(negative_spans, list)
                and all(
                    isinstance(s, list)
                    and len(s) in (2, 3)
                    and is_integer(s[0])
                    and is_integer(s[1])
                    and (len(s) == 2 or isinstance(s[2], str))
                    for s in negative_spans
                ),
                "negative_spans",
                "a list of [start, end] pairs (no entity) or [start, end, type] triples (not this type)",
            )
        is_complete = data.get("is_complete", False)
        if "is_complete" in data:
            check(isinstance(is_complete, bool), "is_complete", "true or false")
        o_weights = data.get("o_weights")
        if o_weights is not None:
            check(
                isinstance(o_weights, list)
                and all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in o_weights),
                "o_weights",
                "a list of numbers",
            )
        if "text" in data:
            check(isinstance(data["text"], str), "text", "a string (the raw text)")
        provenance = data.get("provenance")
        if provenance is not None:
            check_provenance(provenance, data.get("text"), {tuple(s) for s in spans}, where)
        document = cls(
            id=data["id"],
            tokens=list(tokens),
            sentence_ends=sentence_ends,
            spans=[tuple(s) for s in spans],
            is_complete=is_complete,
            negative_spans=[tuple(s) for s in negative_spans],
            source=source,
            o_weights=o_weights,
            text=data.get("text"),
            provenance=provenance,
        )
        return document.validate()


def clashing_span(negative: Tuple, spans: Sequence[Span], span_ends: Sequence[int]) -> Optional[int]:
    """The index of the first of ``spans`` (sorted and not overlapping; ``span_ends`` their ends) that a negative
    span ``(start, end)`` overlaps, or that ``(start, end, type)`` is (the entity it says is none), or None. By
    binary search: a document's negative spans cost O(negatives log spans), not O(negatives x spans)."""
    if len(negative) == 2:
        index = bisect_right(span_ends, negative[0])  # the first span that ends after the negative starts
        return index if index < len(spans) and spans[index][0] < negative[1] else None
    index = bisect_left(spans, tuple(negative))
    return index if index < len(spans) and spans[index] == tuple(negative) else None


def no_entity_type(label: str) -> bool:
    """True when ``label`` names no entity type: blank, or ``O`` (the tag of the words outside every entity)."""
    return not label.strip() or label == "O"


def type_problem(label: str) -> str:
    """What is wrong with the entity type ``label`` (not empty and not ``O``), or "": white space at either end
    (``"PER "`` would be a type of its own beside ``PER``) or white space other than a space inside (a tab or a
    line break: every tag is one line, one column of CoNLL output). A space inside is a type's own
    (``Product Name``, a label of an annotation tool)."""
    if label != label.strip():
        return (
            f"entity type {label!r} has white space at its start or end, which would make it another type than "
            f"{label.strip()!r}; remove it"
        )
    others = sorted({c for c in label if c.isspace() and c != " "})
    if others:
        which = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'white space')}" for c in others)
        return (
            f"entity type {label!r} holds white space other than a space ({which}): a tab or a line break would split "
            "one line of output, and one that looks like a space would be a type of its own; write a plain space"
        )
    return ""


#: keys of one ``provenance`` object (the last three only for raw-text documents)
PROVENANCE_KEYS = ("start", "end", "type", "source", "char_start", "char_end", "text")


def check_provenance(provenance, text: Optional[str], spans, where: str = "") -> None:
    """:class:`DocumentError` unless ``provenance`` is a list of objects each naming one of ``spans``
    (``(start, end, type)`` triples) with a string ``source``, and, with ``char_start``/``char_end``,
    offsets into ``text`` whose text is the object's ``text``."""
    if not isinstance(provenance, list):
        raise DocumentError(f"{where}'provenance' must be a list of objects, got {json_repr(provenance)}")
    for index, item in enumerate(provenance):
        name = f"{where}provenance[{index}]"
        if not isinstance(item, dict) or not {"start", "end", "type", "source"} <= set(item):
            raise DocumentError(
                f"{name} must be an object with 'start', 'end', 'type' and 'source', got {json_repr(item)}"
            )
        unknown = sorted(set(item) - set(PROVENANCE_KEYS))
        if unknown:
            raise DocumentError(f"{name}: " + unknown_keys_message(unknown, PROVENANCE_KEYS))
        if not (
            all(is_integer(item[k]) for k in ("start", "end"))
            and all(isinstance(item[k], str) for k in ("type", "source"))
        ):
            raise DocumentError(
                f"{name}: 'start' and 'end' must be integers and 'type' and 'source' strings, got "
                + json_repr({k: item[k] for k in ("start", "end", "type", "source")}, 120)
            )
        if (item["start"], item["end"], item["type"]) not in spans:
            raise DocumentError(f"{name} ({item['start']}, {item['end']}, {item['type']!r}) names no span of 'spans'")
        if "char_start" in item or "char_end" in item:
            start, end = item.get("char_start"), item.get("char_end")
            if (
                not isinstance(text, str)
                or not all(is_integer(v) for v in (start, end))
                or not 0 <= start < end <= len(text)
                or item.get("text", text[start:end]) != text[start:end]
            ):
                raise DocumentError(
                    f"{name}: char_start/char_end must index the document's 'text' and give the span's 'text'"
                )


def unknown_keys_message(unknown: Sequence[str], known: Sequence[str]) -> str:
    """Names unknown keys, suggesting the closest known one (``'span' (did you mean 'spans'?)``)."""
    hints = []
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1)
        hints.append(f"{key!r} (did you mean {close[0]!r}?)" if close else repr(key))
    return f"unknown key(s) {', '.join(hints)}; expected keys among {', '.join(known)}"


def json_repr(value, limit: int = 60) -> str:
    """A short JSON-ish rendering of ``value`` for error messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
