"""Prodigy JSONL export (``prodigy db-out DATASET > data.jsonl``), one task per line::

    {"text": "EU rejects German call", "_input_hash": 11, "_task_hash": 21, "_view_id": "ner_manual",
     "tokens": [{"text": "EU", "start": 0, "end": 2, "id": 0}, ...],
     "spans": [{"start": 0, "end": 2, "token_start": 0, "token_end": 0, "label": "ORG"}],
     "answer": "accept"}

* spans use character ``start``/``end`` (end exclusive); without them, ``token_start`` /
  ``token_end`` (**inclusive**) index the task's ``tokens``, whose character offsets are used;
* ``answer: "ignore"`` tasks are skipped (counted);
* manual views (``_view_id`` other than ``"ner"``: ``ner_manual``, ``spans_manual``, ``blocks``):
  ``accept`` means the annotator marked every entity, so the document is **complete**; ``reject``
  means the example was rejected as a whole: skipped (counted);
* the binary view (``_view_id: "ner"``, ``ner.teach`` / ``ner.correct`` binary decisions): each
  span of an ``accept`` is an entity (the document stays partial); each span of a ``reject`` is a
  **negative span** of that type (``[start, end, type]``: not an entity of this type here).

A line with none of Prodigy's keys (``answer``, ``_view_id``, ``_input_hash``, ``_task_hash``, ``spans``) is
an error naming what it looks like (a doccano line, this package's JSON lines), never a complete document
(:mod:`eer_plugin.corpus.importers.shapes`); so is a task without ``answer`` (no annotator saw it: Prodigy's input,
such as ``eer-ner eer-export prodigy``'s pre-annotations, whose spans are a model's guesses).

The document id is ``meta.id`` or ``id`` when present, else ``_input_hash``, else ``<file stem>-<line>``.
Tasks of one input and one document are merged into one document, where its first task stands (binary decisions
on one sentence, a manual pass and binary ones, the answers of several annotators): tasks of the same input (the
same ``_input_hash``, else the same text) that name the same document id (``meta.id`` / ``id``), or name none.
Tasks of one input that name different ids are different documents: ``eer-export prodigy`` writes a document id
into each task's ``meta`` (and, since it writes hashes, an ``_input_hash`` of its own to each document), so
documents with the same text exported before that, which Prodigy hashed alike, stay apart. Every merge is reported:
one warning per file naming the documents merged and their lines.
"""

import dataclasses
import hashlib
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from eer_plugin.common.wording import counted
from eer_plugin.corpus.formats import AUTO_FILE_ENCODING, PathLike, json_lines
from eer_plugin.corpus.importers import AnnotationImportError, ImportReport, RawDocument, RawSpan
from eer_plugin.corpus.importers.report import SHOWN_IDS
from eer_plugin.corpus.importers.shapes import PRODIGY_KEYS, kind_of, text_problem, written_by
from eer_plugin.corpus.importers.values import as_id, check_offsets

BINARY_VIEW = "ner"
#: the lines of a merged document named in the merge warning
SHOWN_LINES = 5


def _char_offsets(span: dict, index: int, task: dict, doc_id: str, path: PathLike, line: int):
    if "start" in span and "end" in span:
        return (
            check_offsets(span["start"], f"spans[{index}].start", doc_id, path, line),
            check_offsets(span["end"], f"spans[{index}].end", doc_id, path, line),
        )
    if "token_start" in span and "token_end" in span:
        tokens = task.get("tokens")
        first = check_offsets(span["token_start"], f"spans[{index}].token_start", doc_id, path, line)
        last = check_offsets(span["token_end"], f"spans[{index}].token_end", doc_id, path, line)
        if not isinstance(tokens, list) or not 0 <= first <= last < len(tokens):
            raise AnnotationImportError(
                f"document {doc_id!r}: spans[{index}] has token_start {first} / token_end {last} (inclusive) but the task has "
                f"{len(tokens) if isinstance(tokens, list) else 'no'} tokens with character offsets",
                path,
                line,
            )
        if not all(isinstance(tokens[t], dict) and {"start", "end"} <= set(tokens[t]) for t in (first, last)):
            raise AnnotationImportError(
                f"document {doc_id!r}: tokens need 'start' and 'end' character offsets", path, line
            )
        return (
            check_offsets(tokens[first]["start"], f"tokens[{first}].start", doc_id, path, line),
            check_offsets(tokens[last]["end"], f"tokens[{last}].end", doc_id, path, line),
        )
    raise AnnotationImportError(
        f"document {doc_id!r}: spans[{index}] needs start/end (characters) or token_start/token_end (tokens, inclusive)",
        path,
        line,
    )


@dataclasses.dataclass
class _Task:
    """One line's task, checked: its document (key, id, text), its answer and view, where it stands."""

    task: dict
    #: its input: ``_input_hash``, else the text
    key: object
    doc_id: str
    answer: str
    binary: bool
    number: int
    #: the document id that the task names (``meta.id`` / ``id``), None when it names none
    named: Optional[str] = None

    @property
    def document(self) -> Tuple[object, Optional[str]]:
        """What the tasks of one document share: the input (a digest of the text where there is no hash) and the
        id the task names."""
        return (_digest(self.key) if isinstance(self.key, str) else self.key), self.named

    @property
    def skipped(self) -> Optional[str]:
        """Why the task adds nothing (counted in the report), or None."""
        if self.answer == "ignore":
            return "ignored tasks"
        return "rejected manual tasks" if self.answer == "reject" and not self.binary else None

    def spans(self, path: PathLike) -> List[RawSpan]:
        spans = self.task.get("spans", [])
        if not isinstance(spans, list):
            raise AnnotationImportError(f"document {self.doc_id!r}: 'spans' must be a list", path, self.number)
        raws = []
        for index, span in enumerate(spans):
            if not isinstance(span, dict) or "label" not in span:
                raise AnnotationImportError(
                    f"document {self.doc_id!r}: spans[{index}] must be an object with a label", path, self.number
                )
            start, end = _char_offsets(span, index, self.task, self.doc_id, path, self.number)
            negative = self.binary and self.answer == "reject"
            ref = f"spans[{index}] (line {self.number}, {self.answer})"
            raws.append(RawSpan(start, end, span["label"], ref, negative=negative, line=self.number))
        return raws


def _task(number: int, task: object, path: PathLike, stem: str) -> _Task:
    """The line's task, its Prodigy keys and answer checked (an error names the line)."""
    other = written_by(task)
    prodigy = kind_of(task) == "prodigy"
    if not isinstance(task, dict) or not isinstance(task.get("text"), str):
        raise AnnotationImportError(
            'expected a Prodigy task: a JSON object with a "text" string'
            + (f"; the line looks like {other}" if other and not prodigy else text_problem(task)),
            path,
            number,
        )
    if not prodigy:  # read as a manual accept, another tool's line would be a complete document without entities
        raise AnnotationImportError(
            f"not a Prodigy task: the line is {other}"
            if other
            else f"not a Prodigy task: none of {', '.join(PRODIGY_KEYS)} or spans (prodigy db-out writes an "
            "'answer' on every task)",
            path,
            number,
        )
    meta = task.get("meta") if isinstance(task.get("meta"), dict) else {}
    given = meta.get("id", task.get("id"))  # the document id the task names
    named = given is not None and given != ""
    doc_id = as_id(given if named else task.get("_input_hash"), f"{stem}-{number}", path, number)
    if "answer" not in task:  # read as a manual accept, unchecked pre-annotations would be a complete document
        raise AnnotationImportError(
            f"document {doc_id!r}: no 'answer', so no annotator saw this task: Prodigy's input (with a model's "
            "'spans', such as `eer-ner eer-export prodigy` writes), not its annotations; annotate it in Prodigy and "
            "import `prodigy db-out DATASET`, which writes an 'answer' on every task",
            path,
            number,
        )
    answer = task["answer"]
    if answer not in ("accept", "reject", "ignore"):
        raise AnnotationImportError(
            f"document {doc_id!r}: answer must be accept, reject or ignore, got {answer!r}", path, number
        )
    key = task.get("_input_hash", task["text"])
    checked = _Task(task, key, doc_id, answer, task.get("_view_id") == BINARY_VIEW, number, doc_id if named else None)
    if checked.skipped is None and (isinstance(key, bool) or not isinstance(key, (int, str))):
        raise AnnotationImportError(  # Prodigy's hashes are integers
            f"document {doc_id!r}: '_input_hash' must be an integer (Prodigy's hash of the input), got {key!r}",
            path,
            number,
        )
    return checked


@dataclasses.dataclass
class _Merged:
    """What the tasks of one document make of it beside its first task: the first task's line and a digest of its
    text, whether a manual accept makes it complete, its id, the spans and lines of its later tasks."""

    line: int
    text: bytes
    complete: bool
    #: the document's id (its first task's), for the merge warning
    doc_id: str
    later: List[RawSpan] = dataclasses.field(default_factory=list)
    later_lines: List[int] = dataclasses.field(default_factory=list)


def _digest(value: str) -> bytes:
    return hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _merge(path: PathLike, report: ImportReport, file_encoding: str, stem: str) -> Dict[object, _Merged]:
    """The first pass: every task checked (and the skipped ones counted), and of each document (keyed by its
    ``_input_hash``, or a digest of its text, and the id it names: :attr:`_Task.document`), what its tasks make of it
    (:class:`_Merged`): no text is kept. The documents merged from several tasks are one warning."""
    merged: Dict[object, _Merged] = {}
    for number, line in json_lines(path, file_encoding, AnnotationImportError):
        task = _task(number, line, path, stem)
        if task.skipped:
            report.skip(task.skipped)
            continue
        first = merged.get(task.document)
        if first is None:
            first = merged[task.document] = _Merged(number, _digest(task.task["text"]), False, task.doc_id)
        elif first.text != _digest(task.task["text"]):
            raise AnnotationImportError(
                f"document {task.doc_id!r}: same _input_hash as line {first.line} but another text", path, number
            )
        first.complete = first.complete or not task.binary  # a manual accept: every entity is marked
        spans = task.spans(path)
        if first.line != number:
            first.later.extend(spans)
            first.later_lines.append(number)
    _warn_merged(merged, path, report)
    return merged


def _warn_merged(merged: Dict[object, _Merged], path: PathLike, report: ImportReport) -> None:
    """One warning naming the documents merged from several tasks (the first
    :data:`~eer_plugin.corpus.importers.report.SHOWN_IDS` of them, each with its id and lines), none when no document
    was."""
    groups = [m for m in merged.values() if m.later_lines]
    if not groups:
        return
    shown = []
    for m in groups[:SHOWN_IDS]:
        lines = [m.line, *m.later_lines]
        more = f" and {len(lines) - SHOWN_LINES} more" if len(lines) > SHOWN_LINES else ""
        shown.append(f"{m.doc_id!r} (lines {', '.join(map(str, lines[:SHOWN_LINES]))}{more})")
    more = f" and {len(groups) - SHOWN_IDS} more" if len(groups) > SHOWN_IDS else ""
    tasks = sum(1 + len(m.later_lines) for m in groups)
    report.warn(
        f"{path}: {counted(tasks, 'task')} merged into {counted(len(groups), 'document')} (tasks of one input and one "
        f"document id are answers on one document, their spans taken together): {', '.join(shown)}{more}"
    )


def read(path: PathLike, report: ImportReport, file_encoding: str = AUTO_FILE_ENCODING) -> Iterator[RawDocument]:
    """The documents of the export, one at a time, each where its first task stands: a first pass checks every
    task and gathers what a document's later tasks add (their spans, a manual accept; no text), the second
    reads each document's first task again."""
    stem = Path(path).name.split(".")[0] or "prodigy"
    merged = _merge(path, report, file_encoding, stem)
    for number, line in json_lines(path, file_encoding, AnnotationImportError):
        task = _task(number, line, path, stem)
        first = None if task.skipped else merged[task.document]
        if first is None or first.line != number:  # skipped, or merged into the document of its first task
            continue
        text = task.task["text"]
        raw = RawDocument(task.doc_id, text, source=f"{path}:{number}", line=number, path=str(path))
        raw.complete = first.complete
        raw.spans = task.spans(path) + first.later
        yield raw
