"""What an import did (:class:`ImportReport`): counts, skipped items and warnings; ``eer-import`` prints it and
writes it as JSON (no AllenNLP import)."""

import dataclasses
from collections import Counter
from typing import List

from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.tag_like import TagLikeTypes

#: ids named in a message about many documents
SHOWN_IDS = 5


@dataclasses.dataclass
class ImportReport:
    """What an import did: counts, skipped items and warnings (each warning also logged by the command)."""

    format: str
    documents: int = 0
    spans: int = 0
    complete_documents: int = 0
    negative_spans: int = 0
    types: Counter = dataclasses.field(default_factory=Counter)
    #: reason -> count of items not imported (cancelled annotations, ignored answers, discontinuous spans, ...)
    skipped: Counter = dataclasses.field(default_factory=Counter)
    warnings: List[str] = dataclasses.field(default_factory=list)
    snapped_spans: int = 0
    #: documents without any human annotation (imported without spans, never complete)
    unannotated_documents: int = 0
    #: the types named like tags met so far, each warned about once (:mod:`eer_plugin.corpus.tag_like`)
    tag_like: TagLikeTypes = dataclasses.field(default_factory=TagLikeTypes, compare=False, repr=False)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def skip(self, reason: str, count: int = 1) -> None:
        self.skipped[reason] += count

    def add(self, document: Document) -> None:
        self.documents += 1
        self.spans += len(document.spans)
        self.complete_documents += int(document.is_complete)
        self.negative_spans += len(document.negative_spans)
        self.types.update(label for _, _, label in document.spans)

    def to_json(self) -> dict:
        return {
            "format": self.format,
            "documents": self.documents,
            "spans": self.spans,
            "complete_documents": self.complete_documents,
            "negative_spans": self.negative_spans,
            "types": dict(sorted(self.types.items())),
            "snapped_spans": self.snapped_spans,
            "unannotated_documents": self.unannotated_documents,
            "skipped": dict(sorted(self.skipped.items())),
            "warnings": len(self.warnings),
        }

    def summary(self) -> str:
        """One line: ``3 documents, 7 spans (LOC 2, ORG 2, PER 3), 1 complete, 1 negative span, 2 warnings``."""
        types = ", ".join(f"{t} {n}" for t, n in sorted(self.types.items()))
        parts = [
            f"{self.documents} document{'s' * (self.documents != 1)}",
            f"{self.spans} span{'s' * (self.spans != 1)}" + (f" ({types})" if types else ""),
            f"{self.complete_documents} complete",
            *([f"{self.unannotated_documents} unannotated (never complete)"] if self.unannotated_documents else []),
            f"{self.negative_spans} negative span{'s' * (self.negative_spans != 1)}",
            f"{len(self.warnings)} warning{'s' * (len(self.warnings) != 1)}",
        ]
        if self.skipped:
            parts.append("skipped: " + ", ".join(f"{n} {reason}" for reason, n in sorted(self.skipped.items())))
        return ", ".join(parts)


class ShownIds:
    """How many ids, and the first :data:`SHOWN_IDS` of them, shown as ``'a', 'b' and 3 more``."""

    def __init__(self) -> None:
        self.count, self.first = 0, []

    def add(self, doc_id: str) -> None:
        self.count += 1
        if len(self.first) < SHOWN_IDS:
            self.first.append(doc_id)

    def __str__(self) -> str:
        more = self.count - len(self.first)
        return ", ".join(repr(i) for i in self.first) + (f" and {more} more" if more else "")
