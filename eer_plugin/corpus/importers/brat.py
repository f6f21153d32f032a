"""brat standoff: a directory of ``X.txt`` + ``X.ann`` pairs (searched recursively), or one ``.ann`` file.

``.ann`` lines (TAB-separated)::

    T1	Organization 0 2	EU
    T2	Person 30 43;50 58	Peter ... Blackburn
    A1	Negated T1
    #1	AnnotatorNotes T1	a note

* ``T`` lines are entity spans: ``type start end`` in characters of the ``.txt`` (end exclusive),
  then the covered text, which is checked against the ``.txt`` (as it is, or with its line breaks as spaces, as
  ``eer-export brat`` writes it; a mismatch is a warning: the offsets are then probably counted in another encoding
  or newline convention). Offsets count a byte-order mark that starts the ``.txt``, as brat's do (:func:`brat_text`);
* discontinuous spans (fragments ``start end;start end``) are reported and skipped;
* every other line type (``A``/``M`` attributes, ``R`` relations, ``E`` events, ``N``
  normalizations, ``*`` equivalences, ``#`` notes) is ignored.

The document id is the ``.ann`` path relative to the directory, without the suffix
(``news/doc1``). brat has no completeness flag: use ``--complete`` or ``--complete-ids``.

A brat type is one word of letters, digits, ``_`` and ``-`` (:mod:`eer_plugin.corpus.brat_names`). A document's
``visual.conf`` is the one brat uses for it: the nearest, in the document's own directory or the first directory above
it that has one, up to the imported directory (brat looks further up, to its installation directory, and falls back
to its own defaults; a ``visual.conf`` above the imported directory is not read). Where that file names a type by a
first display name that ``eer-export brat`` writes as that type (``Product_Name | Product Name``, ``A_B | A:B``,
``Unicode | Ünïcode``), the type is read by that name, so an exported type comes back as it was; other display names
(``PER | Person``) change nothing. ``visual.conf`` is read as brat reads it (comments, ``-`` separators, macros, a
leading ``!``, indentation, every section parsed, ``[labels]`` read); where brat would not read it at all (an
undefined ``<macro>``, a ``[drawing]`` setting that is no ``KEY:VALUE``) the import is refused naming the line, when a
document uses that file (brat does not fall back to a ``visual.conf`` further up). ``annotation.conf`` is not read:
the ``.ann`` lines hold the types (its aliases and ``!`` abstract types name no span).
"""

import codecs
import re
from pathlib import Path
from typing import Dict, Iterator, Optional, Tuple

from eer_plugin.corpus.brat_names import VISUAL_CONF, covered_text, storage_form, type_names
from eer_plugin.corpus.formats import AUTO_FILE_ENCODING, PathLike, decode_file
from eer_plugin.corpus.formats.decoding import decode_file_as
from eer_plugin.corpus.formats.files import input_blocks
from eer_plugin.corpus.importers import AnnotationImportError, ImportReport, RawDocument, RawSpan

#: more digits than any character offset has (and beyond 4300 Python refuses to convert them)
MAX_OFFSET_DIGITS = 18
_T_LINE = re.compile(r"^(?P<id>T\S*)\t(?P<type>\S+) (?P<offsets>[0-9]+ [0-9]+(?:;[0-9]+ [0-9]+)*)(?:\t(?P<text>.*))?$")


#: a T line whose type holds spaces (written by hand or by another tool)
_SPACED_TYPE = re.compile(r"^T\S*\t(?P<type>\S+(?: \S+)+) [0-9]+ [0-9]+(?:;[0-9]+ [0-9]+)*(?:\t.*)?$")


def read(path: PathLike, report: ImportReport, file_encoding: str = AUTO_FILE_ENCODING) -> Iterator[RawDocument]:
    """The documents of the export, one ``.txt`` + ``.ann`` pair at a time."""
    root = Path(path)
    if root.is_dir():
        files = sorted(root.rglob("*.ann"))
        if not files:
            raise AnnotationImportError("no .ann files below this directory (brat standoff: X.txt + X.ann)", root)
    elif root.suffix == ".ann":
        files, root = [root], root.parent
    else:
        raise AnnotationImportError("expected a brat directory (X.txt + X.ann files) or an .ann file", root)
    nearest: Dict[Path, Optional[Path]] = {}  # a directory -> the visual.conf of its documents
    names: Dict[Optional[Path], Dict[str, str]] = {None: {}}  # a visual.conf -> its type names (read when used)
    for ann in files:
        if ann.parent not in nearest:
            nearest[ann.parent] = nearest_visual_conf(ann.parent, root)
        conf = nearest[ann.parent]
        if conf not in names:
            names[conf] = type_names(conf, file_encoding)
        document = _read_pair(ann, root, report, file_encoding)
        for span in document.spans:
            span.label = names[conf].get(span.label, span.label)
        yield document


def nearest_visual_conf(directory: Path, root: Path) -> Optional[Path]:
    """The ``visual.conf`` that brat uses for the documents of ``directory`` (``root`` or below it): the file so named
    in it, else in the nearest directory above it, up to ``root``; None when there is none."""
    parts = directory.relative_to(root).parts
    for depth in range(len(parts), -1, -1):
        conf = root.joinpath(*parts[:depth], VISUAL_CONF)
        if conf.is_file():
            return conf
    return None


def brat_text(txt: Path, file_encoding: str) -> str:
    """The text of a ``.txt`` file as brat counts its offsets: as every reader decodes it (:func:`decode_file_as`), but
    a UTF-8 byte-order mark at its start stays, as U+FEFF: brat's server decodes with Python's ``utf8`` codec, which
    keeps the mark, so brat's offsets (and ``eer-export brat``'s, of a text that starts with one) count it."""
    text, codec, _ = decode_file_as(txt, file_encoding)
    if codecs.lookup(codec).name == "utf-8" and next(input_blocks(txt), b"").startswith(codecs.BOM_UTF8):
        text = "\ufeff" + text
    return text


def covered(text: str, start: int, end: int) -> Tuple[str, ...]:
    """The covered texts that a ``T`` line over ``[start, end)`` of ``text`` may hold without a warning: the characters
    as they are, or with their line breaks as spaces, as ``eer-export brat`` writes them
    (:func:`~eer_plugin.corpus.brat_names.covered_text`: an ``.ann`` line holds no line break)."""
    return text[start:end], covered_text(text, start, end)


def _read_pair(ann: Path, root: Path, report: ImportReport, file_encoding: str) -> RawDocument:
    txt = ann.with_suffix(".txt")
    if not txt.exists():
        raise AnnotationImportError(f"no text file {txt.name} next to this annotation file", ann)
    text = brat_text(txt, file_encoding)
    doc_id = ann.relative_to(root).with_suffix("").as_posix()
    raw = RawDocument(doc_id, text, source=str(ann), path=str(ann))
    # split on LF only: CR / U+2028 may sit inside the covered text of a T line
    for number, line in enumerate(decode_file(ann, file_encoding).split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.startswith("T"):
            continue  # A, M, R, E, N, *, # lines and blank lines
        match = _T_LINE.match(line)
        if not match:
            spaced = _SPACED_TYPE.match(line)
            hint = (
                f" (the type {spaced['type']!r} holds a space, which brat types cannot: write it "
                f"{storage_form(spaced['type'])!r}, and name it in visual.conf's [labels])"
                if spaced
                else ""
            )
            raise AnnotationImportError(
                f"document {doc_id!r}: expected a text-bound annotation 'T<id><TAB><type> <start> <end><TAB><text>', "
                f"got {line!r}{hint}",
                ann,
                number,
            )
        if any(len(offset) > MAX_OFFSET_DIGITS for offset in re.split("[ ;]", match["offsets"])):
            raise AnnotationImportError(
                f"document {doc_id!r}: {match['id']} has an offset of more than {MAX_OFFSET_DIGITS} digits, beyond any "
                "text; expected character offsets into the .txt file",
                ann,
                number,
            )
        fragments = [tuple(int(x) for x in part.split()) for part in match["offsets"].split(";")]
        if len(fragments) > 1:
            shown = ";".join(f"{s} {e}" for s, e in fragments)
            report.warn(
                f"{ann}:{number}: document {doc_id!r}: {match['id']} {match['type']} is discontinuous ({shown}); skipped"
            )
            report.skip("discontinuous spans")
            continue
        start, end = fragments[0]
        if match["text"] is not None and end <= len(text) and match["text"] not in covered(text, start, end):
            report.warn(
                f"{ann}:{number}: document {doc_id!r}: {match['id']} text {match['text']!r} differs from the .txt "
                f"characters [{start}, {end}) {text[start:end]!r} (offsets counted in another encoding or newline convention?)"
            )
        raw.spans.append(RawSpan(start, end, match["type"], f"{match['id']} (line {number})", line=number))
    return raw
