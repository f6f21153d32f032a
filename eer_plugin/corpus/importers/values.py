"""Values of an export that the format modules read alike: character offsets, document ids, and which of a tool's
alternative keys holds the annotation."""

import json
from typing import Dict, List, Optional, Sequence

from eer_plugin.core.ranges import is_integer
from eer_plugin.corpus.formats import PathLike
from eer_plugin.corpus.importers import AnnotationImportError


def _integral(value) -> bool:
    """Whether a parsed JSON value is a whole number: an integer, or a float such as ``3.0`` (never ``true``, ``NaN``
    or ``Infinity``)."""
    return is_integer(value) or isinstance(value, float) and value.is_integer()  # NaN and inf are not


def check_offsets(value, what: str, raw_id: str, path: PathLike, line: Optional[int]) -> int:
    """An integer offset (JSON numbers such as ``3.0`` accepted), or an error naming it (also for ``NaN`` and
    ``Infinity``, which Python's JSON parser reads as floats, and for ``true``)."""
    if not _integral(value):
        raise AnnotationImportError(
            f"document {raw_id!r}: {what} must be an integer character offset, got {value!r}", path, line
        )
    return int(value)


def as_id(
    value,
    fallback: str,
    path: PathLike,
    line: Optional[int] = None,
    key: str = "id",
    unnamed: str = "its file and line",
) -> str:
    """A document's id: the export's ``value`` as text (a string, or an integer: ``3.0`` is ``3``), or ``fallback``
    (file and line) when it has none. Any other value (``true``, a list, an object, ``1.5``) is an error naming the
    document: written as text it would be an id no tool shows (``True``, ``[1]``), and ``--complete-ids`` could not
    name it. ``key``: how the error names the value (``data.eer_id``), ``unnamed``: what names a document without
    it."""
    if value is None or value == "":
        return fallback
    if isinstance(value, str):
        return value
    if _integral(value):
        return str(int(value))
    raise AnnotationImportError(
        f"document {fallback}: its {key} must be a string or an integer, got {json.dumps(value)[:60]}; give it one of "
        f"those or leave it out (the document is then named by {unnamed})",
        path,
        line,
    )


def filled_keys(data: Dict, keys: Sequence[str]) -> List[str]:
    """The keys among ``keys`` (a tool's names for the same annotation, of which it writes one) that ``data`` holds
    with anything but an empty list (``null`` counts: the reader's type check names it). Two of them is an error of
    the reader's own wording: reading one would drop the other's annotation unseen."""
    return [key for key in keys if key in data and data[key] != []]
