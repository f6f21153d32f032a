"""Label Studio tasks with pre-annotations (JSON; "Import" in a project whose labelling config has
``<Labels name="label" toName="text">`` over ``<Text name="text" value="$text"/>``)::

    [{"data": {"text": "EU rejects German call", "eer_id": "d1"},
      "predictions": [{"model_version": "eer-ner", "score": 0.91,
                       "result": [{"id": "1-0", "from_name": "label", "to_name": "text", "type": "labels",
                                   "value": {"start": 0, "end": 2, "text": "EU", "labels": ["ORG"]},
                                   "score": 0.91}]}]}]

Each span is a ``labels`` result with its CRF probability as ``score``; the prediction's ``score``
is the lowest span probability (Label Studio can sort tasks by it: least certain first), absent
without spans. ``from_name`` / ``to_name`` must be the names of the project's ``Labels`` and
``Text`` tags. The text is ``data.text`` (``$text``), our document id ``data.eer_id``: Label Studio
numbers the tasks itself on import but keeps their data, and the importer
(:mod:`eer_plugin.corpus.importers.label_studio`) names a document by its ``data.eer_id``, so the ids come back.
"""

from typing import Iterable

from eer_plugin.common.outputs import writing
from eer_plugin.corpus import strict_json
from eer_plugin.corpus.exporters import PredictedDocument, lowest_probability, rounded
from eer_plugin.corpus.formats import PathLike


def task(number: int, document: PredictedDocument, model_version: str, from_name: str, to_name: str) -> dict:
    results = [
        {
            "id": f"{number}-{index}",
            "from_name": from_name,
            "to_name": to_name,
            "type": "labels",
            "value": {"start": s.start, "end": s.end, "text": document.text[s.start : s.end], "labels": [s.type]},
            "score": rounded(s.probability),
        }
        for index, s in enumerate(document.spans)
    ]
    prediction = {"model_version": model_version, "result": results}
    score = lowest_probability(document)
    if score is not None:
        prediction["score"] = score
    return {"data": {"text": document.text, "eer_id": document.id}, "predictions": [prediction]}


def write(
    documents: Iterable[PredictedDocument],
    path: PathLike,
    model_version: str = "eer-ner",
    from_name: str = "label",
    to_name: str = "text",
) -> None:
    with writing(path) as out:  # a JSON list, one task per line, written as the documents come
        out.write("[\n")
        for number, document in enumerate(documents, start=1):
            line = strict_json.dumps(task(number, document, model_version, from_name, to_name))
            out.write(line if number == 1 else ",\n" + line)
        out.write("\n]\n")
