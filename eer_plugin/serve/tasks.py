"""Label Studio tasks in, Label Studio predictions out; which annotations say "complete".

A prediction (Label Studio's import format) for one task::

    {"model_version": "eer-v1", "score": 0.83,
     "result": [{"id": "eer-0", "from_name": "label", "to_name": "text", "type": "labels", "score": 0.97,
                 "value": {"start": 0, "end": 8, "text": "Fischler", "labels": ["PER"]}}]}

* each result is one predicted span: ``start`` / ``end`` are character offsets into the task's text exactly as
  Label Studio holds it (end exclusive), ``text`` is that slice, ``score`` the CRF marginal probability of
  exactly this span (:meth:`eer_plugin.Tagger.__call__`'s ``probability``);
* the prediction's ``score`` is :func:`certainty`: ``1 / (1 + u)``, ``u`` the task's expected number of uncertain
  entity tags (:meth:`eer_plugin.Tagger.rank`'s ``uncertain_tags``). It falls as ``u`` grows, so sorting tasks by
  prediction score ascending (or the project's "uncertainty sampling") shows them in ``Tagger.rank``'s order,
  most informative first.

Completeness: Label Studio has no flag for "every entity in this text is marked". The backend reads it from the
annotation: a task is *complete* when the annotation the importer keeps (the first one not cancelled) has a
``choices`` result whose choices include :data:`COMPLETE_CHOICE` (``<Choices name="complete" toName="text">
<Choice value="complete"/></Choices>`` in the label config); every other annotated task is partial.
"""

import json
import math
from typing import Any, Dict, List, Optional, Sequence

from eer_plugin.corpus.importers import AnnotationImportError
from eer_plugin.corpus.importers.label_studio import annotation_key, document_id
from eer_plugin.serve.label_config import LabelConfig

#: the choice an annotator ticks to say that every entity of the task is marked (case-insensitive)
COMPLETE_CHOICE = "complete"


class TaskError(ValueError):
    """A task the backend cannot read (no text under the label config's data key)."""


def task_text(task: Dict[str, Any], config: LabelConfig) -> str:
    """The task's text, ``data[config.data_key]``, or :class:`TaskError`."""
    if not isinstance(task, dict):
        shown = json.dumps(task, ensure_ascii=False)
        raise TaskError(
            f"a task is {shown if len(shown) <= 40 else shown[:37] + '...'}, not a task object "
            f'{{"id": ..., "data": {{"{config.data_key}": "..."}}}}'
        )
    data = task.get("data")
    if not isinstance(data, dict) or not isinstance(data.get(config.data_key), str):
        keys = sorted(data) if isinstance(data, dict) else []
        raise TaskError(
            f"task {task.get('id')}: no text at data[{config.data_key!r}] "
            f"(the label config's <Text value=\"${config.data_key}\">; the task's data keys: {keys})"
        )
    return data[config.data_key]


def certainty(uncertain_tags: float) -> float:
    """A task's prediction score: ``1 / (1 + uncertain_tags)``, 1 when the model is sure of every word."""
    return 1.0 / (1.0 + max(float(uncertain_tags), 0.0))


def results(
    tagged: Dict[str, Any], text: str, config: LabelConfig, type_to_label: Dict[str, str]
) -> List[Dict[str, Any]]:
    """The ``labels`` results of one tagged document (:class:`eer_plugin.Tagger`'s output for ``text``); spans of
    a type the project has no label for are left out."""
    found = []
    for span in tagged["spans"]:
        label = type_to_label.get(span["type"])
        if label is None:
            continue
        start, end = int(span["char_start"]), int(span["char_end"])
        found.append(
            {
                "id": f"eer-{len(found)}",
                "from_name": config.from_name,
                "to_name": config.to_name,
                "type": "labels",
                "origin": "prediction",
                "score": float(span["probability"]),
                "value": {"start": start, "end": end, "text": text[start:end], "labels": [label]},
            }
        )
    return found


def prediction(result: List[Dict[str, Any]], uncertain_tags: float, model_version: str) -> Dict[str, Any]:
    """One task's prediction: its results, :func:`certainty` as the score, the model version."""
    score = certainty(uncertain_tags)
    return {"result": result, "score": score if math.isfinite(score) else 0.0, "model_version": model_version}


def kept_annotation(task: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The annotation the Label Studio importer keeps (``annotators="first"``): the first not cancelled."""
    try:
        key = annotation_key(task)
    except ValueError:  # both 'annotations' and 'completions': the task is kept, and the importer's error names it
        key = "annotations"
    for annotation in task.get(key) or []:
        if isinstance(annotation, dict) and not annotation.get("was_cancelled"):
            return annotation
    return None


def is_complete(task: Dict[str, Any]) -> bool:
    """Whether the kept annotation ticks :data:`COMPLETE_CHOICE` (see the module docstring)."""
    annotation = kept_annotation(task)
    if annotation is None:
        return False
    for result in annotation.get("result", []) or []:
        if isinstance(result, dict) and result.get("type") == "choices":
            choices = (result.get("value") or {}).get("choices") or []
            if any(isinstance(c, str) and c.strip().lower() == COMPLETE_CHOICE for c in choices):
                return True
    return False


def complete_ids(tasks: Sequence[Dict[str, Any]]) -> List[str]:
    """The ids of the complete tasks, as the importer names their documents from ``tasks`` in this order (the
    export it imports): :func:`~eer_plugin.corpus.importers.label_studio.document_id`, ``data.eer_id`` else the task
    id. A task whose id the importer refuses is left out: the import's error names it, with its line."""
    ids = []
    for index, task in enumerate(tasks):
        if isinstance(task, dict) and is_complete(task):
            try:
                ids.append(document_id(task, index))
            except AnnotationImportError:
                continue
    return ids


def unannotated(tasks: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The tasks nobody annotated (no annotation that is not cancelled): what :meth:`Tagger.rank` orders."""
    return [task for task in tasks if kept_annotation(task) is None]
