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
#: a line of any other section: names to white space, then settings
_SPACED_LINE = re.compile(r"^(\s*)(\S+)(?:\s+(.*))?$")
#: a setting ``KEY:VALUE`` (values separated by ``|``), a key with its repetition (``Arg``, ``Arg?``, ``Arg{1-2}``)
_ARGUMENT = re.compile(r"^(\S*?):(\S*)$")
_KEY = re.compile(r"^(\S+?)(\{\S+\}|\?|\*|\+|)$")
_REPEAT = re.compile(r"^\{(\d+)(?:-(\d+))?\}$")


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


def covered_text(text: str, start: int, end: int) -> str:
    """The covered text of a ``T`` line for the characters ``[start, end)`` of ``text``, as ``eer-export brat`` writes
    it: the characters with each line break (and the white space that ``str.splitlines`` breaks at) as one space, as
    an ``.ann`` line holds no line break. ``eer-import brat`` takes it, or the characters as they are, as the
    ``.txt`` file's text."""
    return " ".join(text[start:end].splitlines())


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
    naming the line where brat would not read the file at all. brat parses every section alike (``[drawing]``,
    ``[options]``, one it does not know, the lines above the first), and a line it cannot parse in any of them
    makes it drop the whole file, so each is checked; only ``[labels]`` names types."""
    labels: Dict[str, List[str]] = {}
    section, state = "general", {}  # a section's macros and {depth: settings} (brat's per-section parse)
    for number, line in enumerate(decode_file(visual_conf, file_encoding).split("\n"), start=1):
        header = _SECTION.match(line)
        if header:
            section = header.group(1)
            continue
        if not line.strip() or _COMMENT.match(line) or _SEPARATOR.match(line):
            continue
        macros, depths = state.setdefault(section, ({}, {}))
        definition = _MACRO_DEFINITION.match(line)
        if definition and f"<{definition.group(1)}>" not in RESERVED:
            macros[f"<{definition.group(1)}>"] = definition.group(2)
            continue
        for macro, value in macros.items():
            line = line.replace(macro, value)
        indent, names, arguments = _split_line(line, section)
        problem = _unread_line(line, section, (indent, names, arguments), depths, definition is not None)
        if problem:
            what, fix = problem
            where = f"[{section}]" if section != "general" else "a line above the first [section]"
            raise AnnotationImportError(
                f"{where} {what}, so brat does not read this visual.conf (it shows its default labels); {fix}",
                visual_conf,
                number,
            )
        if section == "labels" and not indent:  # brat's labels are those of the top level (get_labels)
            names = [name[1:] if name.startswith("!") else name for name in names]
            labels[_brat_storage_form(names[0])] = names[1:]
    return labels


def _split_line(line: str, section: str) -> Tuple[str, List[str], List[str]]:
    """``(indentation, names, settings)`` of a line as brat splits it: names to a tab in ``[labels]``, to white
    space elsewhere, or to a tab where a setting would hold white space otherwise (brat's reading of older files)."""
    for pattern in (_LABELS_LINE if section == "labels" else _SPACED_LINE, _LABELS_LINE):
        parts = pattern.match(line)
        indent, terms, settings = parts.groups() if parts else ("", "", None)
        arguments = [a.strip() for a in (settings or "").split(",") if a.strip()]
        if "\t" not in line or not any(re.search(r"\s", a) for a in arguments):
            break
    return indent, [term.strip() for term in terms.split("|") if term.strip()], arguments


def _unread_line(
    line: str,
    section: str,
    parts: Tuple[str, List[str], List[str]],
    depths: Dict[int, List[str]],
    reserved_definition: bool,
) -> Optional[Tuple[str, str]]:
    """``(why brat would not read the line, the fix)`` of ``line`` (its macros expanded; ``parts`` as
    :func:`_split_line` gives them), or None. ``depths`` holds the settings of the last line read at each indentation
    (a line's ``<INHERIT>`` takes those of its parent); a line read adds its own."""
    if reserved_definition:
        return f"redefines {line.split('=')[0]}, a name brat reserves", "name the macro otherwise"
    undefined = [m for m in _MACRO.findall(line) if m not in RESERVED]
    if undefined:
        return (
            f"uses {undefined[0]!r}, which is no macro defined above it (<NAME>=...) nor a name brat reserves",
            "define the macro or write the name without '<...>'",
        )
    indent, names, arguments = parts
    if not names:
        return "has a line without a name", "remove the line"
    if indent and len(indent) - 1 not in depths:
        return "indents a line more than one deeper than the lines above it", "indent it less"
    if "<INHERIT>" in arguments and not indent:
        return "has <INHERIT> on a line indented under none", "indent it under the line to inherit from"
    arguments = [b for a in arguments for b in (depths.get(len(indent) - 1, []) if a == "<INHERIT>" else [a])]
    bad = _argument_problem(arguments)
    if bad and section == "labels" and not _ARGUMENT.match(bad[0]):
        return f"has {bad[0]!r} after a tab, where brat reads KEY:VALUE settings", "separate the names by ' | '"
    if bad:
        return f"has the setting {bad[0]!r}, which brat does not read ({bad[1]})", "write it KEY:VALUE"
    depths[len(indent)] = arguments
    return None


def _argument_problem(arguments: List[str]) -> Optional[Tuple[str, str]]:
    """``(the setting, what is wrong)`` of the first ``KEY:VALUE`` setting that brat cannot read, or None."""
    keys: Set[str] = set()
    for argument in arguments:
        parts = _ARGUMENT.match(argument)
        if not parts:
            return argument, "no KEY:VALUE"
        key, values = parts.groups()
        if key in RESERVED:
            continue
        counted = _KEY.match(key)
        if not counted:
            return argument, "an empty key"
        key, repeat = counted.groups()
        limits = _REPEAT.match(repeat) if repeat.startswith("{") else None
        if repeat.startswith("{") and (not limits or int(limits[1]) == 0 and not limits[2]):
            return argument, "a count other than {N} or {MIN-MAX}, N > 0"
        if limits and limits[2] and int(limits[1]) > int(limits[2]):
            return argument, "a range whose minimum is above its maximum"
        most = int(limits[2] or limits[1]) if limits else (1 if repeat in ("", "?") else 2)
        if most > 1 and key[-1].isdigit():
            return argument, "a key ending in a digit cannot repeat"
        if key in keys:
            return argument, f"{key!r} given twice"
        if any(not value.strip() for value in values.split("|")):
            return argument, "an empty value"
        keys.add(key)
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
