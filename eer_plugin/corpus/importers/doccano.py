"""doccano sequence-labelling export (JSONL, one document per line; the ``.jsonl`` inside the export zip).

Accepted line shapes (character offsets, end exclusive)::

    {"id": 7, "text": "EU rejects German call", "label": [[0, 2, "ORG"], [11, 17, "MISC"]]}
    {"id": 8, "text": "...", "entities": [{"id": 1, "label": "ORG", "start_offset": 0, "end_offset": 2}],
     "relations": []}

``label`` (also spelled ``labels``) holds ``[start, end, type]`` triples; ``entities`` is the
variant of projects with relations. doccano writes one of them: spans under two of these keys are an error (one
would be dropped unread); an empty list beside the one that holds spans is ignored. Other keys (``Comments``, ``relations``, metadata) are ignored, but a
line with another tool's spans and no ``label`` (a Prodigy task, this package's own JSON lines) is an error
naming the format that reads it (:mod:`eer_plugin.corpus.importers.shapes`), never an unannotated document.
The document id is ``id`` when present, else ``<file stem>-<line>``. doccano exports no
completeness flag: use ``--complete`` or ``--complete-ids``.
"""

from pathlib import Path
from typing import Iterator

from eer_plugin.corpus.formats import AUTO_FILE_ENCODING, PathLike, json_lines
from eer_plugin.corpus.importers import AnnotationImportError, ImportReport, RawDocument, RawSpan
from eer_plugin.corpus.importers.shapes import DOCCANO_SPAN_KEYS, kind_of, text_problem, written_by
from eer_plugin.corpus.importers.values import as_id, check_offsets, filled_keys


def read(path: PathLike, report: ImportReport, file_encoding: str = AUTO_FILE_ENCODING) -> Iterator[RawDocument]:
    """The documents of the export, one line at a time."""
    if Path(path).suffix == ".zip":
        raise AnnotationImportError(
            "this is the export zip; unzip it and import the .jsonl inside (all.jsonl or <user>.jsonl)", path
        )
    stem = Path(path).name.split(".")[0] or "doccano"
    for number, data in json_lines(path, file_encoding, AnnotationImportError):
        other = written_by(data)
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            raise AnnotationImportError(
                'expected a JSON object with a "text" string (doccano sequence labelling)'
                + (f"; the line looks like {other}" if other and kind_of(data) != "doccano" else text_problem(data)),
                path,
                number,
            )
        doc_id = as_id(data.get("id"), f"{stem}-{number}", path, number)
        if other and not any(key in data for key in DOCCANO_SPAN_KEYS):  # its spans would be lost unread
            raise AnnotationImportError(
                f"document {doc_id!r}: no doccano 'label' or 'entities'; the line is {other}", path, number
            )
        raw = RawDocument(doc_id, data["text"], source=f"{path}:{number}", line=number, path=str(path))
        filled = filled_keys(data, DOCCANO_SPAN_KEYS)
        if len(filled) > 1:  # doccano writes one of them; reading one would drop the other's spans unseen
            raise AnnotationImportError(
                f"document {doc_id!r}: spans under both {filled[0]!r} and {filled[1]!r}; doccano writes one of them: "
                "keep the one that holds the annotation (or merge them into it)",
                path,
                number,
            )
        key = filled[0] if filled else None
        if key == "entities":
            entities = data["entities"]
            if not isinstance(entities, list):
                raise AnnotationImportError(f"document {doc_id!r}: 'entities' must be a list", path, number)
            for index, entity in enumerate(entities):
                if not isinstance(entity, dict) or not {"start_offset", "end_offset", "label"} <= set(entity):
                    raise AnnotationImportError(
                        f"document {doc_id!r}: entities[{index}] must have start_offset, end_offset and label",
                        path,
                        number,
                    )
                start = check_offsets(entity["start_offset"], f"entities[{index}].start_offset", doc_id, path, number)
                end = check_offsets(entity["end_offset"], f"entities[{index}].end_offset", doc_id, path, number)
                ref = f"entities[{index}]" + (f" (id {entity['id']})" if "id" in entity else "")
                raw.spans.append(RawSpan(start, end, entity["label"], ref))
        elif key:
            labels = data[key]
            if not isinstance(labels, list):
                raise AnnotationImportError(
                    f"document {doc_id!r}: {key!r} must be a list of [start, end, type]", path, number
                )
            for index, item in enumerate(labels):
                if isinstance(item, str):
                    raise AnnotationImportError(
                        f"document {doc_id!r}: {key}[{index}] is the category {item!r}: this is a text classification "
                        "export; expected [start, end, type] spans (sequence labelling)",
                        path,
                        number,
                    )
                if not isinstance(item, list) or len(item) != 3:
                    raise AnnotationImportError(
                        f"document {doc_id!r}: {key}[{index}] must be [start, end, type], got {item!r}", path, number
                    )
                start = check_offsets(item[0], f"{key}[{index}] start", doc_id, path, number)
                end = check_offsets(item[1], f"{key}[{index}] end", doc_id, path, number)
                raw.spans.append(RawSpan(start, end, item[2], f"{key}[{index}]"))
        yield raw
