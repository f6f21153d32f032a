"""The in-memory document every reader produces and every simulator transforms.

A :class:`Document` is a whole document of words with its sentence boundaries and its *partial*
annotation: the entity spans someone marked (high precision, unknown recall), optionally spans
known to hold no entity, and a flag saying whether the annotation is complete (then every unmarked
word is observed ``O``, as in gold data).
"""
import dataclasses
from typing import List, Optional, Tuple

Span = Tuple[int, int, str]  # (start, end exclusive, entity type), in words


class DocumentError(ValueError):
    """Invalid document content; the message names the source (file and line) when known."""


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
    #: word spans ``(start, end)`` known to contain no entity
    negative_spans: List[Tuple[int, int]] = dataclasses.field(default_factory=list)
    #: where the document came from, e.g. ``"train.txt:1043"`` (used in error messages)
    source: Optional[str] = None

    def __post_init__(self):
        self.spans = sorted((int(s), int(e), str(t)) for s, e, t in self.spans)
        self.negative_spans = sorted((int(s), int(e)) for s, e in self.negative_spans)
        self.sentence_ends = [int(e) for e in self.sentence_ends]

    def validate(self) -> "Document":
        """Raises :class:`DocumentError` (naming :attr:`source`) unless the document is consistent."""
        where = f"{self.source}: " if self.source else ""
        n = len(self.tokens)
        if n == 0:
            raise DocumentError(f"{where}document {self.id!r} is empty")
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
                raise DocumentError(f"{where}document {self.id!r}: span ({start}, {end}, {label}) is out of range [0, {n})")
            if start < previous_end:
                raise DocumentError(f"{where}document {self.id!r}: span ({start}, {end}, {label}) overlaps the span before it")
            if not label or label == "O":
                raise DocumentError(f"{where}document {self.id!r}: span ({start}, {end}) has no entity type")
            previous_end = end
        for start, end in self.negative_spans:
            if not 0 <= start < end <= n:
                raise DocumentError(f"{where}document {self.id!r}: negative span ({start}, {end}) is out of range [0, {n})")
            for s, e, label in self.spans:
                if start < e and s < end:
                    raise DocumentError(
                        f"{where}document {self.id!r}: negative span ({start}, {end}) overlaps entity ({s}, {e}, {label})"
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
            data["negative_spans"] = [[s, e] for s, e in self.negative_spans]
        return data
