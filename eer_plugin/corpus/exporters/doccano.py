"""doccano sequence labelling import (JSONL, "Import Dataset" of a sequence labelling project)::

    {"id": "d1", "text": "EU rejects German call", "label": [[0, 2, "ORG"], [11, 17, "MISC"]]}

``label`` holds ``[start, end, type]`` character spans (end exclusive). doccano has no score field:
the probabilities are not written (the other tools' exports carry them). doccano keeps keys other
than ``text`` and ``label`` (here ``id``) as the example's metadata.
"""

from typing import Iterable

from eer_plugin.corpus.exporters import PredictedDocument, write_json_lines
from eer_plugin.corpus.formats import PathLike


def write(documents: Iterable[PredictedDocument], path: PathLike) -> None:
    write_json_lines(
        ({"id": d.id, "text": d.text, "label": [[s.start, s.end, s.type] for s in d.spans]} for d in documents), path
    )
