"""Counts in messages are singular for one and regular plurals otherwise."""

import pytest

from eer_plugin.common.wording import counted, plural


@pytest.mark.parametrize(
    "noun, many",
    [("document", "documents"), ("entry", "entries"), ("dictionary", "dictionaries"), ("match", "matches"),
     ("day", "days"), ("epoch", "epochs"), ("box", "boxes"), ("class", "classes"), ("GPU", "GPUs"), ("id", "ids")],
)  # fmt: skip
def test_plural_of_regular_nouns(noun, many):
    assert plural(noun) == many


@pytest.mark.parametrize("count", [0, 1, 2, 11, 1000])
def test_counted_is_singular_for_one_only_and_pluralises_the_last_word(count):
    assert counted(count, "output line") == f"{count} output line" + ("" if count == 1 else "s")
    assert counted(count, "character", "characters of text") == (
        "1 character" if count == 1 else f"{count} characters of text"
    )
