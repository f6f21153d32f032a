"""The one text normalisation of eer-ner's inputs, shared by the corpus readers, the importers and
the predictor (no AllenNLP import).

**Rule: normalise, one character for one.** Every *lone surrogate* (U+D800..U+DFFF, which valid
JSON can spell as ``"\\ud800"`` but no UTF-8 file can hold) and every *control character* that is
not white space (Unicode category ``Cc`` except tab, line breaks and the others for which
``str.isspace`` is true, e.g. NUL, BEL, ESC, DEL) becomes U+FFFD, the Unicode replacement
character. Nothing else changes: no case folding, no NFC/NFKC, no removal. As the replacement
keeps the length of the text, character offsets stay exact (importers' spans, the predictor's
``char_start``/``char_end``), and the output can always be written as UTF-8.

Normalising rather than rejecting means one stray byte never ends a corpus read or a predict batch;
:func:`normalise_text` also returns how many characters were replaced, so callers can warn.

Document ids are normalised too, so two ids that differ only in such characters (``"a\\u0000"`` and ``"a\\u0001"``)
become one (``a\\ufffd``): every check of an id used twice (importers, readers, ``eer-dictionary``'s input, a folder's
file names, ``eer-export``'s predictions) ends its error with :func:`replaced_id_note`, the one wording of why and the
fix.
"""

import re
from typing import Any, Tuple

REPLACEMENT = "\ufffd"

_CONTROL = "".join(chr(c) for c in list(range(0x20)) + list(range(0x7F, 0xA0)) if not chr(c).isspace())
#: characters replaced by :data:`REPLACEMENT`: lone surrogates and control characters that are not white space
BAD_CHARACTERS = re.compile(f"[\ud800-\udfff{re.escape(_CONTROL)}]")


def normalise_text(text: str) -> Tuple[str, int]:
    """``(text with every bad character replaced by U+FFFD, number replaced)``."""
    cleaned, count = BAD_CHARACTERS.subn(REPLACEMENT, text)
    return cleaned, count


def normalise(text: str) -> str:
    """:func:`normalise_text` without the count."""
    return BAD_CHARACTERS.sub(REPLACEMENT, text)


def normalise_value(value: Any) -> Any:
    """``value`` (parsed JSON) with every string in it, keys included, normalised."""
    if isinstance(value, str):
        return normalise(value)
    if isinstance(value, list):
        return [normalise_value(v) for v in value]
    if isinstance(value, dict):
        return {normalise(k) if isinstance(k, str) else k: normalise_value(v) for k, v in value.items()}
    return value


def replaced_id_note(doc_id: str) -> str:
    """The end of the error of a document id used twice when ``doc_id`` holds U+FFFD (what every replaced character
    becomes, so the two ids may have differed only there): why the ids are the same and the fix; "" otherwise."""
    if REPLACEMENT not in doc_id:
        return ""
    return (
        "; the id holds U+FFFD, which every control character and lone surrogate (NUL, ESC, \\ud800, ...) becomes "
        "when read, so ids that differ only in such characters are the same id here: give the ids distinct printable "
        "text"
    )
