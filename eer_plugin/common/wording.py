"""Counts in messages: ``1 document``, ``2 documents`` (never ``1 documents`` or ``document(s)``); the line for a key
that is no setting (:func:`not_a_setting`)."""

import difflib
from typing import Optional, Sequence

#: nouns whose plural the rules below get wrong (a hard "ch")
_IRREGULAR = {"epoch": "epochs"}


def plural(noun: str) -> str:
    """The English plural of ``noun`` (regular forms: ``entry`` -> ``entries``, ``match`` -> ``matches``)."""
    if noun in _IRREGULAR:
        return _IRREGULAR[noun]
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def counted(count: int, noun: str, many: Optional[str] = None) -> str:
    """``count`` and ``noun``, singular for one: ``counted(1, "file") == "1 file"``; ``many`` overrides the plural
    (``counted(2, "output line")`` pluralises the last word: ``2 output lines``)."""
    if count == 1:
        return f"{count} {noun}"
    if many is not None:
        return f"{count} {many}"
    head, _, last = noun.rpartition(" ")
    return f"{count} {head + ' ' if head else ''}{plural(last)}"


def not_a_setting(prefix: str, key: str, known: Sequence[str], of: str) -> str:
    """The line for a config key that is none of ``known``: ``cbl.steps is not a setting of the cbl block (did you
    mean cbl.step?); its settings are entity_ratio, step, clip, round_epochs`` (``prefix`` ``cbl``, ``of`` ``the cbl
    block``; the closest of ``known`` where one is close)."""
    close = difflib.get_close_matches(key, list(known), n=1)
    hint = f" (did you mean {prefix}.{close[0]}?)" if close else ""
    return f"{prefix}.{key} is not a setting of {of}{hint}; its settings are {', '.join(known)}"
