"""Which tool wrote a JSON record: the hint when an export is given to ``eer-import`` under another format.

Every JSON-lines importer reads only the keys of its own tool and ignores the rest, so the wrong format can
read another tool's export without an error and lose what matters: a Prodigy export read as doccano has no
``label`` (every span dropped), a doccano export read as Prodigy has no ``answer`` (every document taken for a
manual accept: complete, with no entity). :func:`written_by` names the tool (or this package) whose record a
line looks like, so that the importer can refuse it with the command that reads it.
"""

from typing import Any

#: keys only Prodigy writes on a task (``prodigy db-out``)
PRODIGY_KEYS = ("answer", "_view_id", "_input_hash", "_task_hash")
#: the keys of doccano's spans (sequence labelling: ``label``, or ``entities`` in projects with relations)
DOCCANO_SPAN_KEYS = ("label", "labels", "entities")


def _words(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(word, str) for word in value)


#: what a record of each kind is, with the command that reads it (the importers' own kinds have ``eer-import``)
DESCRIPTIONS = {
    "label-studio-list": "a JSON list of tasks: Label Studio's JSON export? import it with "
    "`eer-ner eer-import label-studio`",
    "predictions": "`eer-ner predict`'s output (its 'tags'): predictions, not annotations (to correct them in an "
    "annotation tool: `eer-ner eer-export`)",
    "training": "this package's training data (word spans over 'tokens'): already imported, train on it as it is",
    "prodigy": "a Prodigy task: import it with `eer-ner eer-import prodigy`",
    "doccano": "a doccano line: import it with `eer-ner eer-import doccano`",
    "label-studio": "a Label Studio task: import the JSON export with `eer-ner eer-import label-studio`",
}
#: the kinds that an ``eer-ner eer-import`` format reads
IMPORTED_KINDS = ("label-studio-list", "prodigy", "doccano", "label-studio")


def kind_of(data: Any) -> str:
    """Which tool (or step of this package) wrote ``data``, one parsed line of an export: a key of
    :data:`DESCRIPTIONS`, or ``""`` when it looks like nothing known."""
    if isinstance(data, list):
        # a list of words or numbers is no tool's record
        return "label-studio-list" if data and all(isinstance(task, dict) for task in data) else ""
    if not isinstance(data, dict):
        return ""
    if "tags" in data and _words(data.get("tokens")):
        return "predictions"
    if "spans" in data and _words(data.get("tokens")):
        return "training"
    if any(key in data for key in PRODIGY_KEYS) or "spans" in data:
        return "prodigy"
    if any(key in data for key in DOCCANO_SPAN_KEYS):
        return "doccano"
    if isinstance(data.get("data"), dict) and ("annotations" in data or "predictions" in data):
        return "label-studio"
    return ""


def written_by(data: Any) -> str:
    """What ``data`` looks like, with the command that reads it (``a Prodigy task: import it with
    `eer-ner eer-import prodigy```), or ``""`` when it looks like nothing known (:func:`kind_of`)."""
    return DESCRIPTIONS.get(kind_of(data), "")


def text_problem(data: Any) -> str:
    """What a record lacks that has no ``"text"`` string, for an importer's error: ``, got 12``, or its keys and the
    closest one (``; its keys are 'id', 'txt', 'label' (did you mean 'text'?)``), or what else it is."""
    import difflib

    from eer_plugin.corpus.documents import json_repr

    if not isinstance(data, dict):
        return f", got {json_repr(data)}"
    if "text" in data:
        return f", got {json_repr(data['text'])}"
    keys = [json_repr(key, 40) for key in list(data)[:8]] + (["..."] if len(data) > 8 else [])
    close = difflib.get_close_matches("text", [key for key in data if len(key) < 40], n=1, cutoff=0.5)
    return f"; its keys are {', '.join(keys) or 'none'}" + (f" (did you mean {close[0]!r}?)" if close else "")
