"""The CoNLL reader's work stays bounded on a long first line: what such a line looks like (a dictionary entry, for
the fix it gets) is decided by a pattern without nested guessing, which matches exactly the lines it matched."""

import random
import re

import pytest

from eer_plugin.corpus.formats import FormatError, read_conll
from eer_plugin.corpus.formats.columns import _DICTIONARY_ENTRY

#: the pattern before: the form's one non-space character was tried at every place of the line (quadratic)
OLD_DICTIONARY_ENTRY = re.compile(r"[^\t,;]*\S[^\t,;]*[\t,;][ \t]*[\w-]+[ \t]*")
ALPHABET = list(" \t,;aZ9-._") + ["\u00a0", "\u3000", "é", "中"]


def test_the_pattern_matches_the_lines_it_matched():
    rng = random.Random(0)
    matched = 0
    for _ in range(60000):
        line = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))
        old = OLD_DICTIONARY_ENTRY.fullmatch(line) is not None
        assert (_DICTIONARY_ENTRY.fullmatch(line) is not None) == old, repr(line)
        matched += old
    assert matched > 1000
    for entry in ("New York\tLOC", "Apple, Inc.,ORG", "Paris;LOC", "x ,a ;B-I"):
        assert _DICTIONARY_ENTRY.fullmatch(entry) and OLD_DICTIONARY_ENTRY.fullmatch(entry)


def test_a_long_first_line_without_a_separator(tmp_path):
    """400,000 characters of text without a space, a tab, a comma or a semicolon (a paragraph of Chinese): the pattern
    before tried every pair of places (32,000 characters took 5.6 s, this line about a quarter of an hour); now one
    pass."""
    path = tmp_path / "chinese.txt"
    path.write_text("中文" * 200_000 + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match="expected at least 2 columns"):
        read_conll(path)
