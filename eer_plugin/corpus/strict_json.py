"""The one JSON parser of every file eer-ner reads as data (no AllenNLP import).

Python's ``json`` keeps the *last* value of a key that an object repeats (``{"spans": [..], "spans": [..]}``
silently loses the first list) and ends in a ``RecursionError`` on a line of deeply nested arrays. Every JSON
reader of the package (training data, predict input, importers' exports, predictions read back, shard
manifests, exported models' settings, ratio estimates, configs read as data) parses through :func:`loads`,
which refuses both:

* a **repeated key** at any nesting level is a :class:`JsonError` naming the key and where it is
  (``$.spans[0]`` style) and saying that JSON would keep only the last value;
* nesting too deep for Python's parser (a ``RecursionError``) is a :class:`JsonError`;
* text that is not JSON is a :class:`JsonError` with the column (``invalid JSON at column 7: ...``).

Callers add the file and line (``FILE:LINE: repeated key "spans" ...``). :class:`JsonError` is a
``ValueError``, so code that catches ``ValueError`` / ``json.JSONDecodeError``'s base keeps working.
"""

import json
from typing import IO, Any, List, Optional, Tuple


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


def _where(text: str, key: str) -> Tuple[str, int]:
    """Where ``key`` repeats: the path of the object holding its second occurrence (``$``, ``$.spans[0]``) and
    the position of that occurrence in ``text``."""
    path: List[List[Any]] = []  # per open container: [kind, current key or index, keys seen (objects)]
    in_string = escaped = False
    start, last_string = 0, None
    for position, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                try:
                    last_string = json.loads(text[start : position + 1])
                except ValueError:
                    last_string = None
        elif char == '"':
            in_string, start = True, position
        elif char in "[{":
            path.append(["[", 0, None] if char == "[" else ["{", None, set()])
        elif char == ":" and path and path[-1][0] == "{":
            if last_string == key and key in path[-1][2]:
                return "$" + "".join(f"[{p[1]}]" if p[0] == "[" else f".{p[1]}" for p in path[:-1]), start
            path[-1][1] = last_string
            path[-1][2].add(last_string)
        elif char == "," and path and path[-1][0] == "[":
            path[-1][1] += 1
        elif char in "]}" and path:
            path.pop()
    return "$", 0


def loads(text: str) -> Any:
    """``json.loads(text)`` that refuses repeated keys and deep nesting (:class:`JsonError`)."""
    try:
        return json.loads(text, object_pairs_hook=_object)
    except _RepeatedKey as repeated:
        where, position = _where(text, repeated.key)
        inside = "the top-level object" if where == "$" else f"the object at {where}"
        line = text.count("\n", 0, position) + 1
        column = position - (text.rfind("\n", 0, position) + 1) + 1
        raise JsonError(
            f"repeated key {json.dumps(repeated.key, ensure_ascii=False)} at column {column} in {inside}: JSON would keep "
            "only the last value and silently drop the others; keep one",
            line,
        ) from None
    except json.JSONDecodeError as error:
        raise JsonError(f"invalid JSON at column {error.colno}: {error.msg}", error.lineno) from None
    except RecursionError:
        raise JsonError(
            "nested too deeply (arrays or objects inside each other beyond Python's recursion limit); not an eer-ner input"
        ) from None


def load(handle: IO[str]) -> Any:
    """:func:`loads` of an open text file."""
    return loads(handle.read())
