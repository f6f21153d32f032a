"""brat standoff: a new directory with ``<id>.txt`` + ``<id>.ann`` per document, an ``annotation.conf`` declaring
the entity types and a ``visual.conf`` showing them (copy it into brat's data directory as a collection)::

    T1	ORG 0 2	EU
    #1	AnnotatorNotes T1	probability 0.91

brat has no score field; each span's probability is its ``AnnotatorNotes`` note (shown when the
mouse is over the span; the importer, :mod:`eer_plugin.corpus.importers.brat`, ignores notes). A
document id with ``/`` becomes subdirectories (``news/d1`` -> ``news/d1.txt``), the way the importer
names documents; an id that is no safe relative path (absolute, ``..``, empty parts) or that makes a file name
longer than file systems take (:data:`NAME_MAX` bytes) is an error, and so are two ids whose files would clash (a file
where another needs a directory: ``a`` and ``a.txt/b``; :func:`claim_paths`). Every file and directory is created
exclusively (:func:`new_file`, :func:`new_directory`), so none is ever overwritten or shared: on a file system that
does not tell apart names that differ in case or Unicode normalisation (macOS, Windows), ids ``A`` and ``a`` (or
``é`` composed and decomposed) are one error naming both (:func:`clash_error`), where the second document's files
silently replaced the first's.
A span whose text holds a line break is written as one fragment and its covered text with the
line breaks as spaces (brat draws it across the lines; :func:`~eer_plugin.corpus.brat_names.covered_text`).

A brat type is one word of letters, digits, ``_`` and ``-`` (brat stores no other character of a type declared in
``annotation.conf``): an entity type with spaces (``Product Name``, a label of an annotation tool) is written with
``_`` (``Product_Name``), one with other characters as :func:`eer_plugin.corpus.brat_names.storage_form` writes it
(``A:B`` -> ``A_B``, ``Ünïcode`` -> ``Unicode``, ``人名`` -> ``u4EBAu540D``), and ``visual.conf``'s ``[labels]`` gives
it its name back, which brat shows and ``eer-import brat`` reads (:mod:`eer_plugin.corpus.importers.brat`). Its
``[drawing]`` (which brat expects, warning where it is missing) holds brat's usual span default and a colour of
:data:`PALETTE` for each type, in the order of the written types. Both files sit at the top of the directory, so brat
uses them for the documents in its subdirectories too. Refused, naming the predictions line, before the directory
appears: two types that would be written alike, and a type that ``visual.conf`` cannot name (``|``, a leading ``!``,
``<...>``: :func:`~eer_plugin.corpus.brat_names.name_problem`). A type that no importer takes (white space at its
ends, or inside other than a space) is refused for every format by the predictions reader
(:func:`eer_plugin.corpus.exporters.span_type_problem`).

The directory is written whole or not at all: built under a temporary name beside it, then renamed.
It must not exist yet (or be empty), so no earlier annotation is ever overwritten.
"""

import os
import shutil
import unicodedata
from pathlib import Path, PurePosixPath
from typing import Dict, Iterable, List, Tuple

from eer_plugin.common.outputs import OutputError, fsync_directory, temporary_name
from eer_plugin.corpus.brat_names import VISUAL_CONF, covered_text, name_problem, storage_form
from eer_plugin.corpus.exporters import PredictedDocument, PredictionsError, rounded
from eer_plugin.corpus.formats import PathLike

#: the most bytes of one file name (each part of a path) that Linux, macOS and Windows file systems take
NAME_MAX = 255
#: the background colours of the types in brat, light under black text, taken in turn by the written types in order
#: (the 11th takes the first colour again; a type written ``SPAN_DEFAULT`` is drawn by the default)
PALETTE = ("#8fb2ff", "#ffccaa", "#f1f447", "#95dfff", "#c7f08f", "#e0b8ff", "#ffb3c6", "#9ee6c8", "#ffd966", "#d9c3a5")
#: brat's drawing of a span whose type has no line of its own (the default of brat's example configurations)
SPAN_DEFAULT = "SPAN_DEFAULT\tfgColor:black, bgColor:lightgreen, borderColor:darken"


def check_output_directory(path: PathLike) -> None:
    """:class:`OutputError` unless ``path`` is a directory that can be created (or an empty one)."""
    if os.path.exists(path) and not (os.path.isdir(path) and not os.listdir(path)):
        raise OutputError(
            f"OUT {path} already exists: brat output is a new directory (never merged into earlier annotation); "
            "remove it or name another directory"
        )


def file_stem(document: PredictedDocument) -> str:
    """The document's path below the output directory, without suffix: its id, when that is a safe relative path."""
    name = PurePosixPath(document.id)
    if (
        str(name) != document.id
        or name.is_absolute()
        or ".." in name.parts
        or "\\" in document.id
        or document.id == "."
    ):
        raise PredictionsError(
            f"document id {document.id!r} is no safe relative file name for brat (absolute, '..', '\\' or empty parts); "
            'give the document another "id" in the predict input',
            document.path,
            document.line,
        )
    longest = max(len(part.encode("utf-8")) for part in name.parts) + len(".ann")
    if longest > NAME_MAX:
        raise PredictionsError(
            f"document id {document.id!r} makes a file name of {longest} bytes (<id>.ann), more than the {NAME_MAX} "
            'a file name may have; give the document a shorter "id" in the predict input',
            document.path,
            document.line,
        )
    return document.id


def claim_paths(claimed: Dict[str, Tuple[bool, str]], stem: str, document: PredictedDocument) -> List[str]:
    """Adds the paths that the document's files need (``<stem>.txt``, ``<stem>.ann``, and each directory above them)
    to ``claimed`` (path -> whether it is a directory, and what needs it: a document id and its line, or the
    configuration) and raises :class:`PredictionsError` when one is already needed as the other kind (ids ``a`` and
    ``a.txt/b``: ``a.txt`` would be a file and a directory; ``visual.conf/b``: the configuration's file). Returns the
    directories that no document needed before, parents first: the ones to create."""
    parts = PurePosixPath(stem).parts
    needed = [("/".join(parts[: depth + 1]), True) for depth in range(len(parts) - 1)]
    needed += [(f"{stem}.txt", False), (f"{stem}.ann", False)]
    here = f"document id {document.id!r} (line {document.line})"
    new = [path for path, directory in needed if directory and path not in claimed]
    for path, directory in needed:
        other = claimed.setdefault(path, (directory, here))
        if other[0] != directory:
            kinds = ("a directory", "a file") if directory else ("a file", "a directory")
            raise PredictionsError(
                f"document id {document.id!r} needs {path!r} as {kinds[0]}, which {other[1]} needs as {kinds[1]} in "
                'brat\'s directory of files; give one of the documents another "id" in the predict input',
                document.path,
                document.line,
            )
    return new


def new_file(path: Path, text: str) -> None:
    """Writes ``text`` (UTF-8, line breaks as they are) to a file created exclusively: an error, never an
    overwrite, where the file system already holds that name, in whatever case or normalisation."""
    with open(path, "x", encoding="utf-8", newline="") as out:
        out.write(text)


def new_directory(path: Path) -> None:
    """Creates the directory ``path``, an error where the file system already holds that name (another spelling of
    it shares that directory, on a file system that does not tell them apart)."""
    os.mkdir(path)


def _folded(path: str) -> str:
    """``path`` as a file system that does not tell apart case or Unicode normalisation sees it."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", path).casefold())


def clash_error(
    error: OSError, root: Path, claimed: Dict[str, Tuple[bool, str]], needs: str, document
) -> PredictionsError:
    """The one line for a file or directory that could not be created exclusively (``error``) below ``root``: what
    ``needs`` it and the document id (or the configuration) whose path the file system took for the same name."""
    path = Path(os.path.relpath(str(error.filename), root)).as_posix()
    others = [(p, claimant) for p, (_, claimant) in claimed.items() if p != path and _folded(p) == _folded(path)]
    held = f"{others[0][1]} as {others[0][0]!r}" if others else "another document's file"
    return PredictionsError(
        f"{needs} needs {path!r}, which the file system already holds for {held}: it does not tell apart names that "
        "differ only in case or Unicode normalisation (as on macOS and Windows), and one would overwrite the other; "
        'give one of the documents another "id" in the predict input',
        document.path,
        document.line,
    )


def check_types(types: Dict[str, str], document: PredictedDocument) -> None:
    """Adds the document's types to ``types`` (brat's form -> the type) and raises :class:`PredictionsError` when
    two types share a brat form or ``visual.conf`` cannot name a type."""
    for span in document.spans:
        form = storage_form(span.type)
        if types.get(form) == span.type:
            continue
        problem = name_problem(span.type) if form != span.type else None
        if problem:
            raise PredictionsError(
                f"entity type {span.type!r} cannot be named in brat: it would be written {form!r} (brat's types are "
                f"letters, digits, _ and -), and visual.conf, which would give it its name back, {problem}; rename "
                "the type in the predictions file or export them in another format",
                document.path,
                document.line,
            )
        written = types.setdefault(form, span.type)
        if written != span.type:
            raise PredictionsError(
                f"entity types {written!r} and {span.type!r} would both be {form!r} in brat, whose types are letters, "
                "digits, _ and - only (spaces and other characters become _); rename one in the predictions file or "
                "export them in another format",
                document.path,
                document.line,
            )


def visual_conf(types: Dict[str, str]) -> str:
    """``visual.conf`` for ``types`` (brat's form -> the type): ``[labels]`` names each type written otherwise by the
    type (``a_b | a:b``), ``[drawing]`` gives brat's span default and each type its :data:`PALETTE` colour (a type
    written ``SPAN_DEFAULT`` is drawn by the default)."""
    written = sorted(types)
    labels = "".join(f"{form} | {types[form]}\n" for form in written if form != types[form])
    drawn = [form for form in written if form != "SPAN_DEFAULT"]
    colours = "".join(f"{form}\tbgColor:{PALETTE[number % len(PALETTE)]}\n" for number, form in enumerate(drawn))
    return f"[labels]\n{labels}[drawing]\n{SPAN_DEFAULT}\n{colours}"


def annotation_file(document: PredictedDocument) -> str:
    lines = []
    for number, span in enumerate(document.spans, start=1):
        covered = covered_text(document.text, span.start, span.end)
        lines.append(f"T{number}\t{storage_form(span.type)} {span.start} {span.end}\t{covered}")
        lines.append(f"#{number}\tAnnotatorNotes T{number}\tprobability {rounded(span.probability)}")
    return "".join(line + "\n" for line in lines)


def write(documents: Iterable[PredictedDocument], path: PathLike) -> None:
    """Writes each document's ``.txt`` and ``.ann`` as it comes, into a directory that appears whole (renamed
    from a temporary name beside ``path``) when the last one is written."""
    check_output_directory(path)
    temporary = temporary_name(os.path.abspath(path))
    try:
        root = Path(temporary)
        types: Dict[str, str] = {}  # brat's form -> the type
        claimed = dict.fromkeys(("annotation.conf", VISUAL_CONF), (False, "the configuration"))
        os.mkdir(root)
        last = None
        for document in documents:
            stem = file_stem(document)
            directories = claim_paths(claimed, stem, document)
            check_types(types, document)
            try:
                for directory in directories:
                    new_directory(root / directory)
                new_file(root / f"{stem}.txt", document.text)
                new_file(root / f"{stem}.ann", annotation_file(document))
            except (FileExistsError, IsADirectoryError, NotADirectoryError) as error:
                raise clash_error(error, root, claimed, f"document id {document.id!r}", document) from None
            last = document
        annotation_conf = (
            "[entities]\n" + "".join(t + "\n" for t in sorted(types)) + "[relations]\n[events]\n[attributes]\n"
        )
        try:
            new_file(root / "annotation.conf", annotation_conf)
            # brat shows, and eer-import reads, each type by its own name (brat reads its files as UTF-8)
            new_file(root / VISUAL_CONF, visual_conf(types))
        except (FileExistsError, IsADirectoryError, NotADirectoryError) as error:
            raise clash_error(error, root, claimed, "the configuration", last) from None
        if os.path.isdir(path):
            os.rmdir(path)  # the empty directory the check allowed
        os.replace(temporary, path)
        fsync_directory(os.path.dirname(os.path.abspath(path)))
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
