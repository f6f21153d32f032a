"""Counts in messages: ``1 document``, ``2 documents`` (never ``1 documents`` or ``document(s)``)."""

from typing import Optional

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
