"""brat's names of entity types: how ``eer-export brat`` writes a type and ``eer-import brat`` reads it back.

What brat takes (its server, ``server/src/projectconfig.py`` and ``annotation.py``):

* an ``.ann`` ``T`` line's type is everything up to the first space (``type, rest = data.split(' ', 1)``),
  and brat knows it when ``annotation.conf`` declares it. A type declared there is its *storage form*: brat
  replaces every character outside ``[a-zA-Z0-9_-]`` with ``_`` (``normalize_to_storage_form``, with the
  warning "term ... is not appropriate for storage"), so a type with any other character (``A|B``, ``Ünïcode``)
  is never the type brat declares. ``annotation.conf`` also reads a line of hyphens alone (``-``) as a separator,
  ``#`` at a line's start as a comment, a leading ``!`` as an abstract type, ``|`` between aliases, ``<NAME>`` as a
  macro and ``,``/``:`` in arguments; a storage form holds none of them but ``-``;
* ``visual.conf``'s ``[labels]`` give a type (its storage form) the names brat shows, the first one where there
  is room (``Product_Name | Product Name``): the names are split at ``|`` (the line ends at a tab), stripped, a
  leading ``!`` is dropped from each, ``<...>`` is a macro or a reserved name (one that is neither makes brat
  ignore the whole file) and ``<EMPTY>`` is an empty name. Any other text, spaces and ``#``, ``,``, ``:``,
  ``=``, ``-`` or non-ASCII letters included, is a name brat shows as it is.

So ``eer-export brat`` writes each type as :func:`storage_form` (``Product Name`` -> ``Product_Name``, ``A:B`` ->
``A_B``, ``Ünïcode`` -> ``Unicode``, ``人名`` -> ``u4EBAu540D``) and, where that differs, names it in
``visual.conf`` by the type itself, which brat shows; a type that ``visual.conf`` cannot carry (:func:`name_problem`:
``|``, a leading ``!``, a ``<...>`` that is no name brat reserves) is refused, as are two types written alike.
``eer-import brat`` reads a type by the first name ``visual.conf`` gives it when :func:`storage_form` of that name
is the type (:func:`type_names`); other display names (``PER | Person``) change nothing.
"""

import re
import unicodedata
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

from eer_plugin.corpus.formats import AUTO_FILE_ENCODING, decode_file
from eer_plugin.corpus.importers import AnnotationImportError

#: brat's display settings, beside the documents; its ``[labels]`` give types their names
VISUAL_CONF = "visual.conf"
#: the characters of a storage form, as brat's ``normalize_to_storage_form`` keeps them
_STORED = re.compile(r"[A-Za-z0-9_-]")
#: the names brat reserves, valid in ``<...>`` without a macro (projectconfig.py ``reserved_config_name``)
RESERVED = {
    f"<{name}>"
    for name in "ANY ENTITY RELATION EVENT NONE EMPTY REL-TYPE URL URLBASE UNICODE GLYPH-POS DEFAULT NORM OVERLAP "
    "OVL-TYPE INHERIT".split()
}
_SECTION = re.compile(r"^\s*\[(.*)\]\s*$")
_COMMENT = re.compile(r"^\s*#")
_SEPARATOR = re.compile(r"^\s*-+\s*$")
_MACRO_DEFINITION = re.compile(r"^<([a-zA-Z_-]+)>=\s*(.*?)\s*$")
_MACRO = re.compile(r"<.*?>")
#: a ``[labels]`` line: its indentation, its names (to a tab) and its settings (after the tab)
_LABELS_LINE = re.compile(r"^(\s*)([^\t]+)(?:\t(.*))?$")
_ARGUMENT = re.compile(r"^(\S*?):(\S*)$")


def _stored_character(character: str) -> str:
    if _STORED.match(character):
        return character
    if character.isspace():
        return "_"
    parts = unicodedata.normalize("NFKD", character)
    letters = "".join(c for c in parts if c.isascii() and c.isalnum())
    if letters and all(c.isascii() and c.isalnum() or unicodedata.combining(c) for c in parts):
        return letters  # a letter with accents, a ligature, a full-width letter: É -> E, ﬁ -> fi
    if unicodedata.category(character)[0] in "LNM":
        return f"u{ord(character):04X}"  # a letter of another script: 人 -> u4EBA
    return "_"  # punctuation, symbols: | # ! < : , = -> _


def storage_form(label: str) -> str:
    """The entity type ``label`` as ``eer-export brat`` writes it in ``annotation.conf`` and the ``.ann`` files: only
    letters, digits, ``_`` and ``-``, which brat stores as they are. White space becomes ``_`` (``Product Name`` ->
    ``Product_Name``); a letter with accents its letter (``É`` -> ``E``, the type taken in NFC); a letter or digit of
    another script ``u`` and its code point (``人`` -> ``u4EBA``), so that names in one script stay apart; any other
    character ``_`` (``A|B`` -> ``A_B``). Hyphens alone (``-``), a separator line in ``annotation.conf``, get a
    ``_`` in front."""
    form = "".join(_stored_character(c) for c in unicodedata.normalize("NFC", label))
    return "_" + form if form.strip("-") == "" else form


def name_problem(label: str) -> Optional[str]:
    """What ``visual.conf``'s ``[labels]`` does to the name ``label`` so that brat would show, and
    ``eer-import brat`` read, another name (``"separates a type's names by '|'"``), or None."""
    if label != label.strip() or not label:
        return "strips white space at a name's start and end"
    if len(label.splitlines()) > 1 or "\t" in label:
        return "ends a name at a tab or a line break"
    if "|" in label:
        return "separates a type's names by '|'"
    if label.startswith("!"):
        return "drops a leading '!' (it marks an abstract type)"
    macro = next((m for m in _MACRO.findall(label) if m not in RESERVED), None)
    if macro:
        return f"reads {macro!r} as a macro (an undefined one makes brat ignore the file)"
    if label == "<EMPTY>":
        return "reads '<EMPTY>' as an empty name"
    return None


def _brat_storage_form(term: str) -> str:
    """brat's own ``normalize_to_storage_form`` of a configured term (every character outside
    ``[a-zA-Z0-9_-]`` is ``_``)."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", term)


def label_lines(visual_conf: Path, file_encoding: str = AUTO_FILE_ENCODING) -> Dict[str, List[str]]:
    """``{brat type: its names}`` of the ``[labels]`` of ``visual_conf``, read as brat reads them (comments,
    separators, macros, ``!``, indentation; the last line of a type wins); :class:`AnnotationImportError`
    naming the line where brat would not read the file at all."""
    labels: Dict[str, List[str]] = {}
    section, macros, depths = "general", {}, set()
    for number, line in enumerate(decode_file(visual_conf, file_encoding).split("\n"), start=1):
        header = _SECTION.match(line)
        if header:
            section = header.group(1)
            continue
        if section != "labels" or not line.strip() or _COMMENT.match(line) or _SEPARATOR.match(line):
            continue
        definition = _MACRO_DEFINITION.match(line)
        if definition and f"<{definition.group(1)}>" not in RESERVED:
            macros[f"<{definition.group(1)}>"] = definition.group(2)
            continue
        for macro, value in macros.items():
            line = line.replace(macro, value)
        problem = _unread_line(line, depths, definition is not None)
        if problem:
            what, fix = problem
            raise AnnotationImportError(
                f"[labels] {what}, so brat does not read this visual.conf (it shows its default labels); {fix}",
                visual_conf,
                number,
            )
        indent, terms, _ = _LABELS_LINE.match(line).groups()
        depths.add(len(indent))
        names = [term.strip() for term in terms.split("|") if term.strip()]
        names = [name[1:] if name.startswith("!") else name for name in names]
        labels[_brat_storage_form(names[0])] = names[1:]
    return labels


def _unread_line(line: str, depths: Set[int], reserved_definition: bool) -> Optional[Tuple[str, str]]:
    """``(why brat would not read the [labels] line, the fix)`` of ``line`` (its macros expanded), or None:
    ``depths`` are the indentations of the lines above."""
    if reserved_definition:
        return f"redefines {line.split('=')[0]}, a name brat reserves", "name the macro otherwise"
    undefined = [m for m in _MACRO.findall(line) if m not in RESERVED]
    if undefined:
        return (
            f"uses {undefined[0]!r}, which is no macro defined above it (<NAME>=...) nor a name brat reserves",
            "define the macro or write the name without '<...>'",
        )
    parts = _LABELS_LINE.match(line)
    if not parts or not [term for term in parts.group(2).split("|") if term.strip()]:
        return "has a line without a name", "remove the line"
    indent, _, arguments = parts.groups()
    if indent and len(indent) - 1 not in depths:
        return "indents a line more than one deeper than the lines above it", "indent it less"
    bad = [a.strip() for a in (arguments or "").split(",") if a.strip() and not _ARGUMENT.match(a.strip())]
    if bad:
        return f"has {bad[0]!r} after a tab, where brat reads KEY:VALUE settings", "separate the names by ' | '"
    return None


def type_names(visual_conf: Path, file_encoding: str = AUTO_FILE_ENCODING) -> Dict[str, str]:
    """``{brat type: its name}`` for the types that ``visual_conf`` (if there is one) names by a first display name
    whose :func:`storage_form` is the type: what ``eer-export brat`` writes (``Product_Name | Product Name``,
    ``A_B | A:B``). Other display names (``PER | Person``) change nothing."""
    if not visual_conf.is_file():
        return {}
    return {
        written: names[0]
        for written, names in label_lines(visual_conf, file_encoding).items()
        if names and names[0] != written and names[0] != "<EMPTY>" and storage_form(names[0]) == written
    }
