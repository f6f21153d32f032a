"""The token trie of dictionary labelling (:mod:`eer_plugin.annotation.dictionary`, ``eer-dictionary``; no
AllenNLP): dictionary forms as word lists, matched leftmost-longest.

**Matching** (:class:`Matcher`): in each sentence, left to right, the longest dictionary form that starts at a
word and ends at a word (never inside one, never across a sentence end) is a span; the scan goes on after it.
``case_insensitive`` compares ``str.casefold`` forms; a form on the stop list (same folding) is never matched.
Words are compared without their invisible format characters (soft hyphens, zero-width joiners, bidi marks:
:func:`~eer_plugin.corpus.tokenizer.without_format_characters`) and in one Unicode normal form, in the forms and
in the text, so a name copied from a web page matches the plain text, a composed ``José`` (NFC, as databases
store it) the decomposed one (NFD, as macOS file names and some editors write it), and the other way round; the
span's offsets still index the text as it is.

**One form, two types** (the same folded form listed under different types, in one dictionary or across them):
``ambiguous="skip"`` (the default) matches it under no type, ``"first"`` keeps the first listing with a
warning; either way every such form is counted (:attr:`Matcher.ambiguous`). The same form with the same type
twice keeps the first listing's source (counted as a duplicate).

**Memory.** The trie stores words as integer ids and its edges in one flat ``dict`` (parent node and word
id packed in one integer), the per-node and per-entry data in ``array``s: memory grows linearly, about 320
bytes per entry (``benchmarks/dictionary_speed.py``: one million entries, 318 MB at the peak of the build).
"""

import unicodedata
from array import array
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from eer_plugin.corpus.tokenizer import without_format_characters

#: the rules for a form listed under two types
AMBIGUOUS_RULES = ("skip", "first")
DEFAULT_AMBIGUOUS = "skip"
#: packs (parent node, word id) into one edge key
_STRIDE = 1 << 32
_NONE, _AMBIGUOUS = -1, -2


class Matcher:
    """A token trie of dictionary forms with leftmost-longest matching (see the module docstring).

    ``add`` entries, then ``match`` word lists; :attr:`ambiguous`, :attr:`duplicates` and :attr:`stopped`
    say what the entries did."""

    def __init__(
        self,
        case_insensitive: bool = False,
        ambiguous: str = DEFAULT_AMBIGUOUS,
        stop_list: Iterable[Sequence[str]] = (),
    ):
        if ambiguous not in AMBIGUOUS_RULES:
            raise ValueError(f"ambiguous must be one of {', '.join(AMBIGUOUS_RULES)}, got {ambiguous!r}")
        self.case_insensitive = case_insensitive
        self.rule = ambiguous
        self.fold = str.casefold if case_insensitive else None
        self.stop = {tuple(self._folded(form)) for form in stop_list}
        self.vocab: Dict[str, int] = {}
        self.edges: Dict[int, int] = {}
        self.value = array("q", [_NONE])  # per node: entry index, _NONE, or _AMBIGUOUS (skipped)
        self.entry_type = array("i")
        self.entry_source = array("i")
        self.entry_line = array("l")
        self.types: List[str] = []
        self._type_ids: Dict[str, int] = {}
        #: (name, path) of every source, by source id
        self.sources: List[Tuple[str, str]] = []
        #: node -> entry indices of every form listed under more than one type
        self.ambiguous: Dict[int, List[int]] = {}
        self.duplicates = 0
        self.stopped = 0
        self._forms: Dict[int, Tuple[str, ...]] = {}  # the form of each ambiguous node, for reports

    def key(self, word: str) -> str:
        """``word`` as it is compared: without invisible format characters, in one Unicode normal form (NFD) and
        case-folded under ``case_insensitive`` (Unicode's canonical caseless match)."""
        if word.isascii():
            return self.fold(word) if self.fold else word
        word = unicodedata.normalize("NFD", without_format_characters(word))
        return unicodedata.normalize("NFD", word.casefold()) if self.fold else word

    def _folded(self, tokens: Sequence[str]) -> List[str]:
        return [self.key(t) for t in tokens]

    def _keys(self, tokens: Sequence[str]) -> Iterable[str]:
        """The words of ``tokens`` as they are compared (all-ASCII text, the common case, needs one call)."""
        if "".join(tokens).isascii():
            return map(self.fold, tokens) if self.fold else tokens
        return map(self.key, tokens)

    def add_source(self, name: str, path: str = "") -> int:
        self.sources.append((name, path))
        return len(self.sources) - 1

    def add(self, tokens: Sequence[str], type: str, source: int, line: int = 0) -> str:
        """Adds one entry; returns ``added``, ``duplicate``, ``ambiguous`` or ``stopped``."""
        folded = self._folded(tokens)
        if tuple(folded) in self.stop:
            self.stopped += 1
            return "stopped"
        vocab, edges, value = self.vocab, self.edges, self.value
        node = 0
        for token in folded:
            word = vocab.get(token)
            if word is None:
                word = vocab[token] = len(vocab)
            key = node * _STRIDE + word
            child = edges.get(key)
            if child is None:
                child = edges[key] = len(value)
                value.append(_NONE)
            node = child
        type_id = self._type_ids.get(type)
        if type_id is None:
            type_id = self._type_ids[type] = len(self.types)
            self.types.append(type)
        entry = len(self.entry_type)
        self.entry_type.append(type_id)
        self.entry_source.append(source)
        self.entry_line.append(line)
        current = value[node]
        if current == _NONE:
            value[node] = entry
            return "added"
        if node in self.ambiguous:
            self.ambiguous[node].append(entry)
            return "ambiguous"
        if self.entry_type[current] == type_id:
            self.duplicates += 1
            return "duplicate"
        self.ambiguous[node] = [current, entry]
        self._forms[node] = tuple(tokens)
        if self.rule == "skip":
            value[node] = _AMBIGUOUS
        return "ambiguous"

    def __len__(self) -> int:
        return len(self.entry_type)

    def match(
        self, tokens: Sequence[str], sentence_ends: Optional[Sequence[int]] = None
    ) -> List[Tuple[int, int, str, str]]:
        """``(start, end, type, source name)`` of every match in ``tokens`` (leftmost-longest, within sentences)."""
        return [
            (s, e, self.types[self.entry_type[entry]], self.sources[self.entry_source[entry]][0])
            for s, e, entry in self.match_entries(tokens, sentence_ends)
        ]

    def match_entries(
        self, tokens: Sequence[str], sentence_ends: Optional[Sequence[int]] = None
    ) -> List[Tuple[int, int, int]]:
        """``(start, end, entry index)`` of every match (the fast path of :meth:`match`)."""
        get, edges, value = self.vocab.get, self.edges.get, self.value
        ids = [get(t, -1) for t in self._keys(tokens)]
        found = []
        start = 0
        for end in sentence_ends if sentence_ends is not None else (len(ids),):
            i = start
            while i < end:
                word = ids[i]
                node = edges(word) if word >= 0 else None
                if node is None:
                    i += 1
                    continue
                best_end, best = (i + 1, value[node]) if value[node] >= 0 else (-1, -1)
                j = i + 1
                while j < end:
                    word = ids[j]
                    if word < 0:
                        break
                    node = edges(node * _STRIDE + word)
                    if node is None:
                        break
                    j += 1
                    if value[node] >= 0:
                        best_end, best = j, value[node]
                if best >= 0:
                    found.append((i, best_end, best))
                    i = best_end
                else:
                    i += 1
            start = end
        return found

    def ambiguous_forms(self) -> List[dict]:
        """Every form listed under two or more types: its text, the rule's outcome and each listing."""
        forms = []
        for node, entries in self.ambiguous.items():
            listings = [
                {
                    "type": self.types[self.entry_type[e]],
                    "source": self.sources[self.entry_source[e]][0],
                    "where": f"{self.sources[self.entry_source[e]][1]}:{self.entry_line[e]}",
                }
                for e in entries
            ]
            kept = None if self.rule == "skip" else listings[0]["type"]
            forms.append({"form": " ".join(self._forms[node]), "kept": kept, "listings": listings})
        return forms
