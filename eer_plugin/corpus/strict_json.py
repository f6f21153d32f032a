"""The one JSON parser of every file eer-ner reads as data, and the one writer of a JSON line (:func:`dumps`; no
AllenNLP import).

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

:func:`list_elements` reads a file's one JSON list (Label Studio's export) one element at a time, from its text in
blocks, each element parsed by the same rules, with the errors, lines and columns of the text parsed whole.
Callers add the file and line (``FILE:LINE: repeated key "spans" ...``). :class:`JsonError` is a
``ValueError``, so code that catches ``ValueError`` / ``json.JSONDecodeError``'s base keeps working.
"""

import dataclasses
import json
import re
import sys
from typing import IO, Any, Iterable, Iterator, List, Optional, Tuple

#: a run of more digits than Python converts to an int (``sys.get_int_max_str_digits()``, 4300 by default)
_LONG_DIGITS = re.compile("(?<![0-9])[0-9]{%d,}" % (sys.get_int_max_str_digits() + 1))  # tried at a run's start only


class JsonError(ValueError):
    """Text that is not JSON, repeats a key in an object, or nests too deeply; ``line`` (1-based) is where,
    when known (for a file parsed whole, or read by :func:`list_elements`)."""

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


def _too_deep(text: str, depth: int = 0) -> Tuple[int, int]:
    """(1-based line, column) of the bracket where ``text`` first nests :data:`TOO_DEEP` arrays or objects deep
    (strings skipped; ``depth``: how deep the text's value stands in the text it comes from): where to look in a
    value Python's parser gave up on (``(1, 1)`` if none does)."""
    for position, token in _scan(text):
        if token in ("[", "{"):
            depth += 1
            if depth >= TOO_DEEP:
                return _line_and_column(text, position)
        elif token in ("]", "}"):
            depth -= 1
    return 1, 1


@dataclasses.dataclass(frozen=True)
class _Origin:
    """Where a text parsed alone stands in the whole text it was cut from: the line and column of its first
    character, and the path and depth of its value there (``$[3]`` and 1 for a list's fourth element)."""

    line: int = 1
    column: int = 1
    path: str = "$"
    depth: int = 0

    def place(self, line: int, column: int) -> Tuple[int, int]:
        """The whole text's line and column of the text's ``line`` and ``column``."""
        return self.line + line - 1, column + (self.column - 1 if line == 1 else 0)


#: the line breaks that JSON leaves as they are inside strings, but at which ``str.splitlines`` (and JavaScript
#: before ES2019) ends a line: U+0085, U+2028, U+2029
_LINE_BREAKS_IN_STRINGS = {ord(c): f"\\u{ord(c):04x}" for c in "\x85\u2028\u2029"}


def dumps(value: Any) -> str:
    """``value`` as the JSON text of one line, the one writer of every JSON line eer-ner writes (training data,
    predictions, exports, ids in comments): UTF-8 as it is (``ensure_ascii=False``), but U+0085, U+2028 and U+2029
    escaped, so that a reader that splits lines with ``str.splitlines`` still reads one record per line."""
    return json.dumps(value, ensure_ascii=False).translate(_LINE_BREAKS_IN_STRINGS)


def loads(text: str) -> Any:
    """``json.loads(text)`` that refuses repeated keys and deep nesting (:class:`JsonError`)."""
    return _loads(text, _Origin())


def _invalid(message: str, line: int, column: int) -> JsonError:
    """The :class:`JsonError` of text that Python's parser refuses (``message``: its message)."""
    return JsonError(f"invalid JSON at column {column}: {message}", line)


def _loads(text: str, origin: _Origin) -> Any:
    """:func:`loads` of a text cut from a whole text at ``origin``: its errors name the whole text's line, column
    and path."""
    try:
        return json.loads(text, object_pairs_hook=_object)
    except _RepeatedKey as repeated:
        where, position = _where(text, repeated.key)
        where = origin.path + where[1:]
        inside = "the top-level object" if where == "$" else f"the object at {where}"
        line, column = origin.place(*_line_and_column(text, position))
        raise JsonError(
            f"repeated key {json.dumps(repeated.key, ensure_ascii=False)} at column {column} in {inside}: JSON would keep "
            "only the last value and silently drop the others; keep one",
            line,
        ) from None
    except json.JSONDecodeError as error:
        raise _invalid(error.msg, *origin.place(error.lineno, error.colno)) from None
    except ValueError:  # an integer beyond Python's conversion limit (not a JSONDecodeError)
        found = _LONG_DIGITS.search(text)
        if found is None:
            raise
        line, column = origin.place(*_line_and_column(text, found.start()))
        raise JsonError(
            f"a number of {len(found.group())} digits at column {column}: more than the {sys.get_int_max_str_digits()} "
            "digits Python reads, and no offset, id or count has that many; check the value",
            line,
        ) from None
    except RecursionError:
        line, column = origin.place(*_too_deep(text, origin.depth))
        raise JsonError(
            f"nested too deeply from column {column} (arrays or objects inside each other beyond Python's recursion "
            "limit); not an eer-ner input",
            line,
        ) from None


def load(handle: IO[str]) -> Any:
    """:func:`loads` of an open text file."""
    return loads(handle.read())


# ------------------------------------------------------------------------------- a list, one element at a time
#: JSON's white space
_WHITESPACE = re.compile(r"[ \t\n\r]*")
#: a JSON string, whole; possessive: no backtracking
_STRING_TEXT = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
#: a JSON string, whole (no match: its closing quote is not in the text)
_STRING = re.compile(_STRING_TEXT, re.DOTALL)
#: other characters and whole strings up to the next bracket outside strings; group 1: that bracket, or the quote of
#: a string whose closing quote is not in the text, or "" where the text ends
_TO_BRACKET = re.compile(r'[^"\[\]{}]*+(?:' + _STRING_TEXT + r'[^"\[\]{}]*+)*+([\[\]{}"]|\Z)', re.DOTALL)
#: a number or a named constant, as far as Python's parser reads it (it takes NaN and Infinity)
_SCALAR = re.compile(r"null|true|false|NaN|Infinity|-Infinity|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def _trailing_comma_message() -> Optional[str]:
    """What Python's parser says of a list's comma before its closing bracket where it names the comma (Python
    3.13 on); None where it says "Expecting value" at the bracket."""
    try:
        json.loads("[0,]")
    except json.JSONDecodeError as error:
        return error.msg if error.pos == 2 else None
    return None  # pragma: no cover - a parser that takes the comma


_TRAILING_COMMA = _trailing_comma_message()
#: the parser of :func:`loads`, for a value that stands whole in a longer text
_DECODER = json.JSONDecoder(object_pairs_hook=_object)


class _Text:
    """A JSON text given in blocks, read as far as needed: ``text`` holds it from ``at`` (the next character to
    read, or the start of the value being read) on."""

    def __init__(self, blocks: Iterable[str]) -> None:
        self._blocks = iter(blocks)
        self.text, self.at = "", 0
        self._line, self._counted, self._line_start = 1, 0, 0  # the line at index _counted; where that line starts

    def _more(self) -> bool:
        """Reads on (at least as much as is held from ``at``, so that a value over many blocks is joined a linear
        number of times) and drops what stands before ``at``; False at the text's end."""
        wanted, read, size = max(len(self.text) - self.at, 1), [], 0
        for block in self._blocks:
            read.append(block)
            size += len(block)
            if size >= wanted:
                break
        if not size:
            return False
        self.place(self.at)
        self.text = self.text[self.at :] + "".join(read)
        self._counted -= self.at
        self._line_start -= self.at
        self.at = 0
        return True

    def place(self, index: int) -> Tuple[int, int]:
        """The 1-based line and column in the whole text of the held text's ``index`` (asked in the text's order)."""
        self._line += self.text.count("\n", self._counted, index)
        newline = self.text.rfind("\n", self._counted, index)
        if newline >= 0:
            self._line_start = newline + 1
        self._counted = index
        return self._line, index - self._line_start + 1

    def error(self, message: str) -> JsonError:
        """Python's parser's error ``message`` at ``at``."""
        return _invalid(message, *self.place(self.at))

    def skip(self) -> str:
        """Moves ``at`` past white space; the character there ("" at the text's end)."""
        while True:
            self.at = _WHITESPACE.match(self.text, self.at).end()
            if self.at < len(self.text) or not self._more():
                return self.text[self.at : self.at + 1]

    def value(self, path: str, depth: int) -> Tuple[int, Any]:
        """(first line, value) of the JSON value at ``at`` (``path``, ``depth``: where it stands in the whole text),
        parsed by :func:`loads`'s rules; ``at`` moves past it."""
        line, column = self.place(self.at)
        if self.text[self.at : self.at + 1] in ("[", "{", '"'):
            try:  # most often the value is whole in the held text: parsed where it stands, by loads's parser
                value, self.at = _DECODER.raw_decode(self.text, self.at)
                return line, value
            except (ValueError, RecursionError, _RepeatedKey):  # cut by the held text's end, or not JSON
                pass
        end = self._end()  # read on to the value's end, then parse it alone: loads's error, as the whole text's
        value = _loads(self.text[self.at : end], _Origin(line, column, path, depth))
        self.at = end
        return line, value

    def _end(self) -> int:
        """Where the value at ``at`` ends: after its closing bracket or quote (where the text ends, if it does
        first), or after its number or constant."""
        first = self.text[self.at : self.at + 1]
        if first in ("[", "{"):
            return self._closing_bracket()
        if first == '"':
            while True:
                found = _STRING.match(self.text, self.at)
                if found or not self._more():
                    return found.end() if found else len(self.text)
        while True:  # read on while the held text's end may cut a number (1.5, 1e-5) or a constant (-Infinity)
            found = _SCALAR.match(self.text, self.at)
            left = len(self.text) - (found.end() if found else self.at)
            if left >= (3 if found else len("-Infinity")) or not self._more():
                break
        if found is None:
            raise self.error("Expecting value")
        return found.end()

    def _closing_bracket(self) -> int:
        """The end of the array or object at ``at``: after the bracket that closes it (counting brackets outside
        strings), or where the text ends."""
        depth, position = 0, self.at
        while True:
            found = _TO_BRACKET.match(self.text, position)
            token = found.group(1)
            if token and token in "[{":
                depth += 1
            elif token and token in "]}":
                depth -= 1
                if depth == 0:
                    return found.end()
            else:  # a string that the held text cuts, or the held text's end: read on, then from there again
                offset = found.start(1) - self.at
                if not self._more():
                    return len(self.text)
                position = self.at + offset
                continue
            position = found.end()


def list_elements(blocks: Iterable[str]) -> Tuple[bool, Iterator[Tuple[int, Any]]]:
    """Whether the JSON text that ``blocks`` make (a file's text, a block at a time) holds a list, and its elements
    as ``(first line, value)``, read one at a time (or, for any other value, that one value): memory holds one
    element, not the text.

    Each element is parsed where it stands in the text held (a block or more) by :func:`loads`'s parser; one that
    the held text cuts, or that is not JSON, is read to its end (a compiled pattern counts the brackets outside
    strings) and parsed alone by :func:`loads`. Every error is :func:`loads`'s of the whole text, with the same
    message, line and column (a repeated key names its path, ``$[3].data``), raised where the reading comes to it:
    the elements before it are given first."""
    text = _Text(blocks)
    first = text.skip()
    if first == "\ufeff" and text.place(text.at) == (1, 1):
        loads(first)  # Python's parser refuses text that starts with a byte-order mark
    if first != "[":
        return False, _one_value(text)
    return True, _elements(text)


def _one_value(text: _Text) -> Iterator[Tuple[int, Any]]:
    """The text's one value, once nothing but white space is seen to follow it."""
    value = text.value("$", 0)
    _end_of_text(text)
    yield value


def _elements(text: _Text) -> Iterator[Tuple[int, Any]]:
    """The elements of the list that starts at ``text.at``, then the check that nothing but white space follows."""
    text.at += 1
    index = 0
    if text.skip() != "]":
        while True:
            yield text.value(f"$[{index}]", 1)
            following = text.skip()
            if following == "]":
                break
            if following != ",":
                raise text.error("Expecting ',' delimiter")
            comma = text.place(text.at)
            text.at += 1
            if text.skip() == "]" and _TRAILING_COMMA:
                raise _invalid(_TRAILING_COMMA, *comma)
            index += 1
    text.at += 1
    _end_of_text(text)


def _end_of_text(text: _Text) -> None:
    if text.skip():
        raise text.error("Extra data")
