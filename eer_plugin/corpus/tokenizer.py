"""The raw-text tokenizer of the ``eer_tagger`` predictor (no model download, exact character offsets).

Tokens, tried in this order at each position (white space separates tokens and is never part of one):

1. **Abbreviation**: two or more ``letter.`` pairs, e.g. ``U.S.``, ``e.g.``, ``U.K.``, ``i.e.`` (not
   ``Ph.D.``, which gives ``Ph``, ``.``, ``D``, ``.``; a single initial ``F.`` is ``F``, ``.``).
2. **Word**: a run of letters, digits and ``_`` (Python's ``\\w``), in which an apostrophe (``'``,
   ``’``) or hyphen between two such characters, and a ``.`` or ``,`` between two digits
   (decimals and thousands: ``3.5``, ``1,000.25``, ``v1.2``), stay inside the word.
3. **Punctuation**: any other single character, e.g. ``.``, ``,``, ``(``, ``$``.

**English clitics** are then split off the end of a word as in CoNLL-2003 and the Penn Treebank
(and spaCy): ``'s``, ``'re``, ``'ve``, ``'ll``, ``'d``, ``'m`` and ``n't``, with ``'`` or ``’``, in any
case: ``Germany's`` -> ``Germany``, ``'s``; ``Commission’s`` -> ``Commission``, ``’s``; ``don't`` ->
``do``, ``n't``; ``can't`` -> ``ca``, ``n't``; ``O'Neill's`` -> ``O'Neill``, ``'s``. So an entity ends
before its possessive, in imported annotations and in predictions. The rule is the same for every
language: an apostrophe inside a word stays there (French ``aujourd'hui``, ``l'homme``, Italian
``dell'anno``, Irish ``O'Brien``), but a word that *ends* in one of these suffixes is split in any
language (Dutch plurals such as ``auto's`` give ``auto``, ``'s``). Both tokens keep their exact
character offsets.

Every letter, digit or punctuation character keeps the combining marks that follow it (Unicode
categories ``Mn``, ``Mc``, ``Me``: NFD accents ``José``, Devanagari vowel signs and virama ``हिन्दी``,
Thai vowels and tone marks ``ภาษาไทย``), so no token starts with a mark unless the mark follows
white space or starts the text (then the marks form a token of their own). Text is never
normalised: ``text[start:end]`` of each token's offsets is exactly the token.

**Invisible format characters** (Unicode category ``Cf``: the soft hyphen, the word joiner, the zero-width
joiner and non-joiner, a byte-order mark inside the text, the bidirectional marks and controls, ...; text copied
from web pages and PDFs holds them) never split a word, as in Unicode's word boundaries (UAX #29): a run of them
between two characters of a word stays inside it (``Brus\\u00adsels`` and ``Brus\\u2060sels`` are one word each,
``Loyola``'s span is not cut). Anywhere else (at a word's edge, after punctuation, alone between spaces) they
belong to no token, as white space does, so no token is invisible (an encoder's tokenizer drops them: such a
token had no subword of its own). The zero-width space U+200B separates words, as UAX #29 has it (a word break
in Thai, Khmer or Lao text), and is part of no token either. The few visible ``Cf`` characters (the Arabic
number signs and the other prepended concatenation marks: :data:`VISIBLE_FORMAT_CHARACTERS`) are punctuation.

**Bounded work on any text.** A run of more than :data:`LONGEST_RUN` characters without white space
(no word or name is that long: an inlined image, a hex dump) is cut into pieces of at most that many
characters, so time and memory grow linearly with the text (a single 10-million-character token took
the pattern about 2 GB before). Text without such a run is tokenized exactly as if it were not cut.

**Sentences** end after a ``!`` or ``?`` token, and after a ``.`` token, except that a ``.`` which is
the end of an abbreviation (``U.S.``) or a ``.`` token written right after a decimal number
(``3.5.``) ends a sentence only when white space and then an uppercase letter follow it, or only
white space until the end of the text. The text's last token always ends the last sentence.
"""

import re
import sys
import unicodedata
from functools import lru_cache
from typing import Callable, Iterator, List, Pattern, Tuple

SENTENCE_FINAL = {".", "!", "?"}
#: the longest run of characters without white space that stays in one piece (see the module docstring)
LONGEST_RUN = 1 << 16


#: the zero-width space: a word break (UAX #29), not one of the format characters that join a word
ZERO_WIDTH_SPACE = "\u200b"


def _is_mark(character: str) -> bool:
    return unicodedata.category(character).startswith("M")


#: the format characters (``Cf``) that are visible: signs drawn over the digits that follow them (Unicode's
#: Prepended_Concatenation_Mark: the Arabic number signs, the end of ayah, ...); the tokenizer treats them as
#: punctuation
VISIBLE_FORMAT_CHARACTERS = frozenset(
    map(chr, [*range(0x600, 0x606), 0x6DD, 0x70F, 0x890, 0x891, 0x8E2, 0x110BD, 0x110CD])
)


def _is_format(character: str) -> bool:
    """Is ``character`` an invisible format character (``Cf`` but for the visible ones)?"""
    return unicodedata.category(character) == "Cf" and character not in VISIBLE_FORMAT_CHARACTERS


def _is_joining_format(character: str) -> bool:
    return _is_format(character) and character != ZERO_WIDTH_SPACE


def trim_span(text: str, start: int, end: int) -> Tuple[int, int]:
    """``[start, end)`` of ``text`` without the characters at its edges that no token starts or ends with: white
    space and invisible format characters (the zero-width space included). Importers trim a span with it."""
    while start < end and (text[start].isspace() or _is_format(text[start])):
        start += 1
    while end > start and (text[end - 1].isspace() or _is_format(text[end - 1])):
        end -= 1
    return start, end


@lru_cache(maxsize=1)
def _format_characters() -> Pattern[str]:
    return re.compile(f"[{_ranges(_is_format)}]+")


def without_format_characters(word: str) -> str:
    """``word`` without its invisible format characters (``Cf``): how dictionary matching compares words, so
    ``Brus\\u00adsels`` in the text matches ``Brussels`` in a list of names (and the other way round)."""
    return word if word.isascii() else _format_characters().sub("", word)


def _ranges(belongs: Callable[[str], bool]) -> str:
    """A character-class body of every character for which ``belongs`` is true, as ranges."""
    ranges: List[List[int]] = []
    # every M* and Cf character lies below U+20000 or in plane 14 (tags, variation selectors: U+E0001..U+E01EF)
    for code in list(range(0x20000)) + list(range(0xE0000, 0xE1000)):
        if belongs(chr(code)):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


def _mark_ranges() -> str:
    """A character-class body of every Unicode combining mark (categories ``M*``), as ranges."""
    return _ranges(_is_mark)


@lru_cache(maxsize=1)
def token_pattern() -> Pattern[str]:
    """The compiled token pattern (built once, on first use: the two tables take ~100 ms)."""
    mark = f"[{_mark_ranges()}]*"
    joining_format = _ranges(_is_joining_format)
    letter = rf"[^\W\d_]{mark}"
    char = rf"\w{mark}"
    abbreviation = rf"(?:{letter}\.){{2,}}"
    # (?<=\d): the digit before any marks of its own; invisible format characters join the word around them
    joiner = rf"(?:['’\-]|(?<=\d)[.,](?=\d)|[{joining_format}]+)"
    word = rf"(?:{char})+(?:{joiner}(?:{char})+)*"
    # punctuation, or marks after white space / at the start; never a format character (no invisible token)
    other = rf"[^\s{joining_format}{ZERO_WIDTH_SPACE}]{mark}"
    return re.compile(f"(?P<abbreviation>{abbreviation})|(?P<word>{word})|(?P<other>{other})")


_DECIMAL = re.compile(r"\d[.,]\d")
#: an English clitic at the end of a word (its stem must not be empty)
_CLITIC = re.compile(r"(?<=\w)(?:n['’]t|['’](?:s|re|ve|ll|d|m))$", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def _ends_only_before_capital(text: str, end: int) -> bool:
    """For a ``.`` that may be an abbreviation's: does a sentence end at ``end`` (white space then an
    uppercase letter, or only white space to the end of the text)?"""
    gap = _SPACE.match(text, end)  # never a copy of the rest: this runs once per abbreviation
    after = gap.end() if gap else end
    return after == len(text) or (gap is not None and text[after].isupper())


def _pieces(text: str) -> Iterator[Tuple[int, int]]:
    """``(start, end)`` of consecutive pieces of ``text`` of at most :data:`LONGEST_RUN` characters, each
    cut at a white-space character where the window holds one (so no token crosses a cut), else after
    exactly :data:`LONGEST_RUN` characters."""
    start, size = 0, len(text)
    while size - start > LONGEST_RUN:
        end = cut = start + LONGEST_RUN
        if _SPACE.search(text, start, end):  # cut after the window's last white-space character
            while not text[cut - 1].isspace():
                cut -= 1
        yield start, cut
        start = cut
    yield start, size


def tokenize_text(text: str) -> Tuple[List[str], List[Tuple[int, int]], List[int]]:
    """Words, their character offsets ``(start, end)`` and the sentence ends (exclusive word
    indices) of raw text, by the rules of the module docstring."""
    words: List[str] = []
    offsets: List[Tuple[int, int]] = []
    ends: List[int] = []
    abbreviation_end = -1  # end offset of the last abbreviation or decimal token
    pattern = token_pattern()
    for match in (found for start, end in _pieces(text) for found in pattern.finditer(text, start, end)):
        token = match.group()
        start, end = match.span()
        clitic = _CLITIC.search(token) if match.lastgroup == "word" else None
        if clitic is not None:  # the stem, then the clitic
            words.append(token[: clitic.start()])
            offsets.append((start, start + clitic.start()))
            token, start = clitic.group(), start + clitic.start()
        words.append(token)
        offsets.append((start, end))
        if match.lastgroup == "abbreviation":
            if _ends_only_before_capital(text, end):
                ends.append(len(words))
            abbreviation_end = end
            continue
        if token in SENTENCE_FINAL:
            after_special = token == "." and start == abbreviation_end
            if not after_special or _ends_only_before_capital(text, end):
                ends.append(len(words))
        abbreviation_end = end if match.lastgroup == "word" and _DECIMAL.search(token) else -1
    if words and (not ends or ends[-1] != len(words)):
        ends.append(len(words))
    return words, offsets, ends


def _all_covered(belongs: Callable[[str], bool]) -> bool:  # pragma: no cover - used by the tests
    """Does the table of ``belongs`` hold every such character of Unicode (and nothing else)?"""
    pattern = re.compile(f"[{_ranges(belongs)}]")
    return all(bool(pattern.match(chr(c))) == belongs(chr(c)) for c in range(sys.maxunicode + 1))
