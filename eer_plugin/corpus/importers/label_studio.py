"""Label Studio JSON export (the "JSON" export: a list of tasks).

A task::

    {"id": 12, "data": {"text": "EU rejects German call"},
     "annotations": [{"id": 31, "completed_by": 1, "was_cancelled": false,
                      "result": [{"id": "a1", "from_name": "label", "to_name": "text", "type": "labels",
                                  "value": {"start": 0, "end": 2, "text": "EU", "labels": ["ORG"]}}]}],
     "predictions": []}

* the text is ``data[text_key]``; by default ``data["text"]``, or the only string in ``data``;
* results of ``type: "labels"`` are entity spans (``value.start``/``value.end``: characters, end
  exclusive; ``value.labels``: a list of one label, as Label Studio writes the labels selected on a region); a
  region without a label (``[]``) is skipped with a warning and counted, an error in a complete document (its words
  would be taught as ``O``); a region with several labels (``choice="multiple"``) or labels that are no list are
  errors, as a span takes one type; other result types (choices, relations, ...)
  and ``predictions`` are ignored; older exports' ``completions`` are read like ``annotations`` (a task with
  both is an error: one would be dropped unread);
* cancelled (skipped) annotations (``was_cancelled: true``) are skipped and counted; a task whose
  annotations are all cancelled, or that has none (also one holding only ``predictions``), is imported
  without spans and is *never complete*, whatever ``--complete`` / ``--complete-ids`` say (nobody
  annotated it: its words stay latent; the report counts these as unannotated, with a warning when
  a completeness option named them);
* several annotators: ``annotators="first"`` keeps the first non-cancelled annotation,
  ``"union"`` the union of all of them (the same span twice counts once; overlapping spans from
  different annotators are an error naming both).

The document id (:func:`document_id`, the one rule: the importer, ``--complete-ids`` and the ML backend's
complete tasks) is ``data.eer_id`` where the task holds one: the id of the document that ``eer-ner eer-export
label-studio`` wrote the task from, which Label Studio keeps in the task's data, so a corpus exported, annotated
and imported keeps its ids; else the task ``id`` (Label Studio's number); else ``task-<index>``. Each is checked
as every importer checks an id (:func:`~eer_plugin.corpus.importers.values.as_id`) and an id twice is an error
(:func:`~eer_plugin.corpus.importers.imported_documents`). Messages name a task by Label Studio's number. Label
Studio has no completeness flag: use ``--complete`` or ``--complete-ids``.
"""

from typing import Any, Dict, Iterator, Optional, Tuple

from eer_plugin.corpus import strict_json
from eer_plugin.corpus.documents import json_repr
from eer_plugin.corpus.formats import AUTO_FILE_ENCODING, PathLike
from eer_plugin.corpus.formats.decoding import decoding_of, text_blocks
from eer_plugin.corpus.importers import AnnotationImportError, ImportReport, RawDocument, RawSpan
from eer_plugin.corpus.importers.values import as_id, check_offsets, filled_keys

ANNOTATORS = ("first", "union")
#: the data key that holds a task's text unless told otherwise (else the data's only string)
TEXT_KEY = "text"
#: the data key of our own document id (``eer-ner eer-export label-studio`` writes it; Label Studio keeps it)
ID_KEY = "eer_id"


def task_name(task: dict, index: int, path: PathLike, line: Optional[int] = None) -> str:
    """How Label Studio names the export's task number ``index`` (from 0): its ``id``, else ``task-<index>``."""
    return as_id(task.get("id"), f"task-{index}", path, line)


def document_id(task: dict, index: int, path: PathLike = "", line: Optional[int] = None) -> str:
    """The id of the document of the export's task number ``index`` (from 0): ``data.eer_id`` (:data:`ID_KEY`,
    the id ``eer-ner eer-export label-studio`` wrote) where the task holds one, else :func:`task_name`. A value
    that is no id is an :class:`AnnotationImportError` naming the task (``path``, ``line``)."""
    data = task.get("data")
    given = data.get(ID_KEY) if isinstance(data, dict) else None
    return as_id(given, task_name(task, index, path, line), path, line, key=f"data.{ID_KEY}", unnamed="its task id")


def _text(task: dict, text_key: Optional[str], task_id: str, path: PathLike, line: Optional[int]) -> str:
    data = task.get("data")
    if not isinstance(data, dict):
        hint = " (this looks like the JSON_MIN export; export 'JSON' instead)" if "text" in task else ""
        raise AnnotationImportError(f"task {task_id!r} has no 'data' object holding its text{hint}", path, line)
    if text_key is not None:
        if not isinstance(data.get(text_key), str):
            raise AnnotationImportError(
                f"task {task_id!r}: data[{text_key!r}] is not a string (data keys: {sorted(data)})", path, line
            )
        return data[text_key]
    if isinstance(data.get(TEXT_KEY), str):
        return data[TEXT_KEY]
    strings = [k for k, v in data.items() if isinstance(v, str)]
    if len(strings) == 1:
        return data[strings[0]]
    if TEXT_KEY in data and not strings:  # not "which key?": the text is there, of another type
        raise AnnotationImportError(
            f"task {task_id!r}: data['text'] must be the task's text, a string, got {json_repr(data[TEXT_KEY])}",
            path,
            line,
        )
    raise AnnotationImportError(
        f"task {task_id!r}: cannot tell which of data's keys {sorted(data)} holds the text; pass --text-key", path, line
    )


def annotation_key(task: Dict[str, Any]) -> str:
    """The key of a task's annotations: ``annotations``, or the older exports' ``completions`` where only those are
    given (:func:`~eer_plugin.corpus.importers.values.filled_keys`). Both is a ``ValueError`` (reading one would drop
    the other's annotations unseen)."""
    filled = filled_keys(task, ("annotations", "completions"))
    if len(filled) > 1:
        raise ValueError(
            "both 'annotations' and 'completions' (the older exports' name); keep the one that holds the annotation "
            "(or merge them into it)"
        )
    return filled[0] if filled else "annotations"


def read(
    path: PathLike,
    report: ImportReport,
    file_encoding: str = AUTO_FILE_ENCODING,
    annotators: str = "first",
    text_key: Optional[str] = None,
) -> Iterator[RawDocument]:
    """The documents of the export, one task at a time: the JSON list is read in blocks and each task parsed alone
    (:func:`~eer_plugin.corpus.strict_json.list_elements`), so memory holds one task, not the export. A file that
    is not JSON is an error naming its line, as the file parsed whole would name it, once the tasks before it
    are read (the import writes its outputs whole or not at all)."""
    if annotators not in ANNOTATORS:
        raise AnnotationImportError(f"annotators must be one of {', '.join(ANNOTATORS)}, got {annotators!r}", path)
    for index, (line, task) in enumerate(_tasks(path, file_encoding)):
        yield task_document(task, index, report, path, annotators, text_key, line)


def _tasks(path: PathLike, file_encoding: str) -> Iterator[Tuple[int, dict]]:
    """The task objects of the export (a list of them, or a single task object), one at a time, each with the
    line it starts on."""
    blocks = text_blocks(path, decoding_of(path, file_encoding, json=True))
    try:
        is_list, values = strict_json.list_elements(blocks)
        for line, task in values:
            if not isinstance(task, dict) or not is_list and "annotations" not in task:
                raise AnnotationImportError("expected the Label Studio JSON export: a list of task objects", path, line)
            yield line, task
    except strict_json.JsonError as err:
        lines = (
            "; the file is JSON lines (a value per line), not Label Studio's JSON export (one list of tasks): a doccano "
            "or Prodigy export is imported with that format"
        )
        raise AnnotationImportError(
            f"{err}" + (lines if "Extra data" in str(err) else ""),
            path,
            err.line,
        ) from None


def task_document(
    task: dict,
    index: int,
    report: ImportReport,
    path: PathLike,
    annotators: str,
    text_key: Optional[str],
    line: Optional[int] = None,
) -> RawDocument:
    """The document of the export's task number ``index`` (from 0), which starts on ``line``: its text and the
    spans of its annotations (``annotators``: the first or all of them); cancelled annotations are skipped and
    counted in ``report``. Its errors name the file and that line."""
    task_id = task_name(task, index, path, line)  # Label Studio's name of the task: what messages call it
    doc_id = document_id(task, index, path, line)
    text = _text(task, text_key, task_id, path, line)
    raw = RawDocument(doc_id, text, source=f"{path}: task {task_id}", line=line, path=str(path))
    try:
        key = annotation_key(task)
    except ValueError as error:
        raise AnnotationImportError(f"task {task_id!r}: {error}", path, line) from None
    annotations = task.get(key, [])
    if not isinstance(annotations, list):
        raise AnnotationImportError(f"task {task_id!r}: {key!r} must be a list", path, line)
    kept = []
    for annotation in annotations:
        if not isinstance(annotation, dict):
            raise AnnotationImportError(f"task {task_id!r}: every annotation must be an object", path, line)
        cancelled = annotation.get("was_cancelled", False)
        if cancelled is not None and not isinstance(cancelled, bool):  # "false" is true: never read by truth
            raise AnnotationImportError(
                f"task {task_id!r}: annotation {annotation.get('id', '?')}: 'was_cancelled' must be true or false, "
                f"got {cancelled!r}",
                path,
                line,
            )
        if cancelled:
            report.skip("cancelled annotations")
            continue
        kept.append(annotation)
    raw.unannotated = not kept
    if annotators == "first" and len(kept) > 1:
        report.skip("annotations of other annotators (--annotators first)", len(kept) - 1)
        kept = kept[:1]
    for annotation in kept:
        name = f"annotation {annotation.get('id', '?')}"
        results = annotation.get("result", [])
        if not isinstance(results, list):
            raise AnnotationImportError(f"task {task_id!r}: {name}: 'result' must be a list", path, line)
        for position, result in enumerate(results):
            if not isinstance(result, dict) or result.get("type") != "labels":
                continue
            value = result.get("value")
            if not isinstance(value, dict) or not {"start", "end", "labels"} <= set(value):
                raise AnnotationImportError(
                    f"task {task_id!r}: {name}: result {position} of type 'labels' needs value.start, value.end and value.labels",
                    path,
                    line,
                )
            start = check_offsets(value["start"], f"{name} result {position} value.start", doc_id, path, line)
            end = check_offsets(value["end"], f"{name} result {position} value.end", doc_id, path, line)
            ref = f"result {result.get('id', position)!r} of {name}"
            _warn_if_moved(
                value.get("text"),
                text,
                start,
                end,
                f"{path}:{line}: task {task_id!r}: {ref}" if line else f"{path}: task {task_id!r}: {ref}",
                report,
            )
            region = _region(value["labels"], RawSpan(start, end, None, ref), doc_id, path, line)
            (raw.spans if value["labels"] else raw.unlabelled).append(region)
    return raw


def _warn_if_moved(marked: Any, text: str, start: int, end: int, where: str, report: ImportReport) -> None:
    """A warning when a region's ``value.text`` (``marked``: what the annotator marked) is not the task's text at its
    checked offsets ``[start, end)``, white space aside: the task's text was changed after it was annotated (Label
    Studio keeps the offsets), so the region would teach other words."""
    if isinstance(marked, str) and 0 <= start < end <= len(text) and marked.split() != text[start:end].split():
        report.warn(
            f"{where}: the region {marked[:40]!r} [{start}, {end}) reads {text[start:end][:40]!r}: the task's text "
            "changed after it was annotated"
        )


def _region(labels: Any, region: RawSpan, doc_id: str, path: PathLike, line: Optional[int]) -> RawSpan:
    """``region`` with its one label from ``labels`` (a result's ``value.labels``), or without one when the list is
    empty (an annotator's region left without a label: skipped with a warning, :func:`to_document`). Label Studio
    writes a list (the labels selected on the region); a string, another value or several labels is an error."""
    where = f"document {doc_id!r}: {region.ref}"
    if not isinstance(labels, list):
        example = json_repr([labels if isinstance(labels, str) else "PER"])
        raise AnnotationImportError(
            f"{where}: value.labels must be a list of one label, such as {example}, got {json_repr(labels)} (Label "
            "Studio writes a list; another value comes from a task written by hand or by a script)",
            path,
            line,
        )
    if len(labels) > 1:
        shown = ", ".join(json_repr(label, 30) for label in labels[:5]) + (", ..." if len(labels) > 5 else "")
        raise AnnotationImportError(
            f"{where} carries {len(labels)} labels ({shown}) on one region; a span takes one type: keep one label on "
            'the region (the labelling config\'s choice="multiple" allows several)',
            path,
            line,
        )
    region.label = labels[0] if labels else None
    return region
