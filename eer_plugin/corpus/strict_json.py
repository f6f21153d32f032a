"""The one JSON parser of every file eer-ner reads as data (no AllenNLP import).

Python's ``json`` keeps the *last* value of a key that an object repeats (``{"spans": [..], "spans": [..]}``
silently loses the first list) and ends in a ``RecursionError`` on a line of deeply nested arrays. Every JSON
reader of the package (training data, predict input, importers' exports, predictions read back, shard
manifests, exported models' settings, ratio estimates, configs read as data) parses through :func:`loads`,
which refuses both:

* a **repeated key** at any nesting level is a :class:`JsonError` naming the key and where it is
  (``$.spans[0]`` style) and saying that JSON would keep only the last value;
* nesting too deep for Python's parser (a ``RecursionError``) is a :class:`JsonError`;
* an integer of more digits than Python converts (4300, ``sys.get_int_max_str_digits()``; its ``ValueError``
  is no ``JSONDecodeError``) is a :class:`JsonError` with the column;
* text that is not JSON is a :class:`JsonError` with the column (``invalid JSON at column 7: ...``).

Callers add the file and line (``FILE:LINE: repeated key "spans" ...``). :class:`JsonError` is a
``ValueError``, so code that catches ``ValueError`` / ``json.JSONDecodeError``'s base keeps working.
"""

import json
import math
import re
import sys
from typing import IO, Any, Iterator, List, Optional, Tuple

#: a run of more digits than Python converts to an int (``sys.get_int_max_str_digits()``, 4300 by default)
_LONG_DIGITS = re.compile("(?<![0-9])[0-9]{%d,}" % (sys.get_int_max_str_digits() + 1))  # tried at a run's start only


def is_integer(value: Any) -> bool:
    """Whether a parsed JSON value is an integer: an ``int`` and never a ``bool`` (``true`` is an ``int`` in Python),
    never a float such as ``1.0``."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether a parsed JSON value is a finite number: an ``int`` or ``float``, never a ``bool``, never ``NaN`` or
    ``Infinity`` (which Python's parser reads as floats, as it reads ``1e999``)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class JsonError(ValueError):
    """Text that is not JSON, repeats a key in an object, or nests too deeply; ``line`` (1-based) is where,
    when known (for a file parsed whole)."""

    def __init__(self, message: str, line: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _object(pairs: List[Tuple[str, Any]]) -> dict:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return value


def _scan(text: str) -> Iterator[Tuple[int, str]]:
    """``(position, token)`` of ``text``: each character outside strings, and each string whole (its JSON text,
    quotes included, at the position of its opening quote)."""
    in_string = escaped = False
    start = 0
    for position, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                yield start, text[start : position + 1]
        elif char == '"':
            in_string, start = True, position
        else:
            yield position, char


def _where(text: str, key: str) -> Tuple[str, int]:
    """Where ``key`` repeats: the path of the object holding its second occurrence (``$``, ``$.spans[0]``) and
    the position of that occurrence in ``text``."""
    path: List[List[Any]] = []  # per open container: [kind, current key or index, keys seen (objects)]
    start, last_string = 0, None
    for position, token in _scan(text):
        if len(token) > 1:  # a string
            start = position
            try:
                last_string = json.loads(token)
            except ValueError:
                last_string = None
        elif token in "[{":
            path.append(["[", 0, None] if token == "[" else ["{", None, set()])
        elif token == ":" and path and path[-1][0] == "{":
            if last_string == key and key in path[-1][2]:
                return "$" + "".join(f"[{p[1]}]" if p[0] == "[" else f".{p[1]}" for p in path[:-1]), start
            path[-1][1] = last_string
            path[-1][2].add(last_string)
        elif token == "," and path and path[-1][0] == "[":
            path[-1][1] += 1
        elif token in "]}" and path:
            path.pop()
    return "$", 0


#: how deep a value nests where :func:`_too_deep` says the nesting that Python's parser refused begins
TOO_DEEP = 100


def _line_and_column(text: str, position: int) -> Tuple[int, int]:
    """The 1-based line and column of ``position`` in ``text``."""
    return text.count("\n", 0, position) + 1, position - (text.rfind("\n", 0, position) + 1) + 1


def _too_deep(text: str) -> Tuple[int, int]:
    """(1-based line, column) of the bracket where ``text`` first nests :data:`TOO_DEEP` arrays or objects deep
    (strings skipped): where to look in a value Python's parser gave up on (``(1, 1)`` if none does)."""
    depth = 0
    for position, token in _scan(text):
        if token in ("[", "{"):
            depth += 1
            if depth >= TOO_DEEP:
                return _line_and_column(text, position)
        elif token in ("]", "}"):
            depth -= 1
    return 1, 1


def loads(text: str) -> Any:
    """``json.loads(text)`` that refuses repeated keys and deep nesting (:class:`JsonError`)."""
    try:
        return json.loads(text, object_pairs_hook=_object)
    except _RepeatedKey as repeated:
        where, position = _where(text, repeated.key)
        inside = "the top-level object" if where == "$" else f"the object at {where}"
        line, column = _line_and_column(text, position)
        raise JsonError(
            f"repeated key {json.dumps(repeated.key, ensure_ascii=False)} at column {column} in {inside}: JSON would keep "
            "only the last value and silently drop the others; keep one",
            line,
        ) from None
    except json.JSONDecodeError as error:
        raise JsonError(f"invalid JSON at column {error.colno}: {error.msg}", error.lineno) from None
    except ValueError:  # an integer beyond Python's conversion limit (not a JSONDecodeError)
        found = _LONG_DIGITS.search(text)
        if found is None:
            raise
        line, column = _line_and_column(text, found.start())
        raise JsonError(
            f"a number of {len(found.group())} digits at column {column}: more than the {sys.get_int_max_str_digits()} "
            "digits Python reads, and no offset, id or count has that many; check the value",
            line,
        ) from None
    except RecursionError:
        line, column = _too_deep(text)
        raise JsonError(
            f"nested too deeply from column {column} (arrays or objects inside each other beyond Python's recursion "
            "limit); not an eer-ner input",
            line,
        ) from None


def load(handle: IO[str]) -> Any:
    """:func:`loads` of an open text file."""
    return loads(handle.read())
