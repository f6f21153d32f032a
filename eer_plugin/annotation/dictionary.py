"""Dictionary (gazetteer) labelling: lists of names matched over text become partial annotations
(``eer-ner eer-dictionary``; no AllenNLP).

**Dictionaries.** A TSV file, one ``surface form<TAB>TYPE`` per line (``#`` starts a comment line, blank
lines are skipped), or JSON lines ``{"text": "New York", "type": "LOC"}`` (a ``.jsonl``/``.json`` name, or a
first entry that starts with ``{``). Files are UTF-8. Several dictionaries can be used at once; each has a
name (default: the file stem; ``NAME=FILE`` names it), kept as the ``source`` of every span it labels.
A surface form is split into words by the package's raw-text tokenizer (:mod:`eer_plugin.corpus.tokenizer`),
so it matches the words of raw text exactly as the predictor splits them (``Germany's`` -> ``Germany``, ``'s``).

**Matching** (:class:`Matcher`, a token trie): in each sentence, left to right, the longest dictionary form
that starts at a word and ends at a word (never inside one, never across a sentence end) is a span; the
scan goes on after it. ``case_insensitive`` compares ``str.casefold`` forms; a form on the stop list (same
folding) is never matched.

**One form, two types** (the same folded form listed under different types, in one dictionary or across
them): ``ambiguous="skip"`` (the default) matches it under no type, ``"first"`` keeps the first listing (in
``--dictionary`` order, then line order) with a warning. Either way every such form is counted and listed in
the summary, never silent. The same form with the same type twice keeps the first listing's source
(counted as a duplicate).

**Types.** A type is a name without white space, not ``O``. A type listed on one line only in dictionaries
of at least :data:`TYPO_CHECK_ENTRIES` entries is almost always a typo (``PRE`` for ``PER``): a warning names
its file and line (a warning, not an error: a rare type can be real).
When the input documents already carry spans, a dictionary type none of them uses gets a warning too.

**Input documents.** JSON lines with ``"text"`` (raw text: tokenized, character offsets kept; optional
``"id"``), JSON lines with ``"tokens"`` (pre-tokenized or partial-annotation documents, whose spans and
provenance are kept: this command's own output can be labelled again with another dictionary), or a CoNLL/OntoNotes file whose tags are ignored. A match never overrides an annotated span: a
match that overlaps one (or a negative span) is dropped and counted; complete documents are left as they
are (their unmarked words are observed ``O``).

**Propagate** (``propagate=True``): the spans annotated in the input become a dictionary named
:data:`PROPAGATE_SOURCE` (before the ``--dictionary`` files, so ``ambiguous="first"`` prefers a person's
label), applied to every document that is not complete, in the unannotated regions of annotated documents
too (the same name elsewhere in a partially annotated document is as likely an entity as in another
one); a form annotated under two types is handled by the ambiguity rule, and a match that would overlap
an annotated span differently (a different type or other boundaries) is reported as a conflict and dropped.

**Output.** Partial-annotation JSON lines (:meth:`eer_plugin.corpus.documents.Document.to_json`) that
``train`` reads unchanged: the word ``spans``, and a ``provenance`` object per new span with its
``source``, and, for raw text, ``char_start``/``char_end`` into the document's ``text``, whose slice is
exactly the matched text. Written through the output policy (checked first, atomic).

**Memory.** The trie stores words as integer ids and its edges in one flat ``dict`` (parent node and word
id packed in one integer), the per-node and per-entry data in ``array``s: memory grows linearly, about 320
bytes per entry (``benchmarks/dictionary_speed.py``: one million entries, 318 MB at the peak of the build).
"""

import dataclasses
import json
import logging
import re
from array import array
from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from eer_plugin.common.outputs import check_outputs, writing
from eer_plugin.corpus.documents import Document, DocumentError, unknown_keys_message
from eer_plugin.corpus.formats import FormatError, detect_format, read_documents, write_jsonl
from eer_plugin.corpus.text import normalise_text, normalise_value
from eer_plugin.corpus.tokenizer import tokenize_text

logger = logging.getLogger(__name__)

#: the rules for a form listed under two types
AMBIGUOUS_RULES = ("skip", "first")
DEFAULT_AMBIGUOUS = "skip"
#: the dictionary name of the spans propagated from the input's annotation
PROPAGATE_SOURCE = "propagate"
#: keys of a JSON-lines dictionary entry
DICTIONARY_JSON_KEYS = ("text", "type")
#: keys of a raw-text input line
TEXT_JSON_KEYS = ("id", "text")
_TYPE = re.compile(r"^[^\s]+$")
#: a type listed on one line only is reported as a likely typo in dictionaries of at least this many entries
TYPO_CHECK_ENTRIES = 20
#: packs (parent node, word id) into one edge key
_STRIDE = 1 << 32
_NONE, _AMBIGUOUS = -1, -2


class DictionaryError(FormatError):
    """A dictionary, stop list or input file that cannot be used; names the file and line."""


# ------------------------------------------------------------------------------- the matcher
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

    def _folded(self, tokens: Sequence[str]) -> List[str]:
        return [self.fold(t) for t in tokens] if self.fold else list(tokens)

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
        ids = [get(t, -1) for t in (map(self.fold, tokens) if self.fold else tokens)]
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


# ------------------------------------------------------------------------------- reading files
def _strict_object(pairs):
    """A JSON object hook: a key repeated in one object is an error (json.loads would keep the last)."""
    keys = [key for key, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise ValueError(f"key {repeated[0]!r} appears twice in one object; keep one")
    return dict(pairs)


def _json_value(text: str, path: str, line: int):
    try:
        return normalise_value(json.loads(text, object_pairs_hook=_strict_object))
    except json.JSONDecodeError as err:
        raise DictionaryError(f"invalid JSON at column {err.colno}: {err.msg}", path, line) from None
    except ValueError as err:
        raise DictionaryError(str(err), path, line) from None


def text_lines(path: str) -> Iterator[Tuple[int, str]]:
    """``(line number, text)`` of a UTF-8 file, read line by line (bounded memory); a byte that is not
    UTF-8 is a :class:`DictionaryError` naming its line, with the ``iconv`` command that converts the file."""
    try:
        handle = open(path, "rb")
    except OSError as err:
        raise DictionaryError(f"cannot read file: {err.strerror or err}", path) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.rstrip(b"\r\n").decode("utf-8")
            except UnicodeDecodeError as err:
                raise DictionaryError(
                    f"invalid UTF-8 byte 0x{raw[err.start]:02x} at byte {err.start} of the line; dictionaries are UTF-8: "
                    f"convert the file, e.g. iconv -f latin1 -t utf-8 {path} > {Path(path).stem}.utf8{Path(path).suffix}",
                    path,
                    number,
                ) from None
            yield number, normalise_text(text)[0]


def dictionary_lines(path: str) -> Iterator[Tuple[int, str, str]]:
    """``(line, surface form, type)`` of every entry of a TSV or JSON-lines dictionary (module docstring)."""
    as_json = Path(path).suffix in (".jsonl", ".json")
    first = True
    for number, text in text_lines(path):
        stripped = text.strip()
        if not stripped or (stripped.startswith("#") and not as_json):
            continue
        if first:
            as_json = as_json or stripped.startswith("{")
            first = False
        if as_json:
            data = _json_value(text, path, number)
            if not isinstance(data, dict):
                raise DictionaryError(
                    f'expected a JSON object {{"text": ..., "type": ...}}, got {type(data).__name__}', path, number
                )
            unknown = sorted(set(data) - set(DICTIONARY_JSON_KEYS))
            if unknown:
                raise DictionaryError(unknown_keys_message(unknown, DICTIONARY_JSON_KEYS), path, number)
            form, label = data.get("text"), data.get("type")
            if not isinstance(form, str) or not isinstance(label, str):
                raise DictionaryError(
                    'expected "text" and "type" strings, e.g. {"text": "New York", "type": "LOC"}', path, number
                )
        else:
            if "\t" not in text:
                raise DictionaryError(f"no TAB in {text[:60]!r}: expected 'surface form<TAB>TYPE'", path, number)
            if text.count("\t") > 1:
                raise DictionaryError(
                    f"{text.count(chr(9))} TABs in {text[:60]!r}: expected exactly one, 'surface form<TAB>TYPE'",
                    path,
                    number,
                )
            form, label = text.split("\t")
        form, label = form.strip(), label.strip()
        if not form:
            raise DictionaryError(
                f"empty surface form (type {label!r}): expected 'surface form<TAB>TYPE'", path, number
            )
        if not label or not _TYPE.match(label) or label == "O":
            raise DictionaryError(
                f"bad type {label!r} for {form!r}: expected a type name without white space, not 'O'", path, number
            )
        yield number, form, label


def read_stop_list(path: str) -> List[List[str]]:
    """The forms of a stop list: one surface form per line (``#`` comments, blank lines skipped)."""
    forms = [
        tokenize_text(text.strip())[0]
        for _, text in text_lines(path)
        if text.strip() and not text.strip().startswith("#")
    ]
    return [form for form in forms if form]


def dictionary_specs(arguments: Sequence[str]) -> List[Tuple[str, str]]:
    """``(name, path)`` of each ``--dictionary`` argument: ``FILE`` (named by its stem) or ``NAME=FILE``."""
    specs = []
    for argument in arguments:
        if "=" in argument and not Path(argument).exists():
            name, path = argument.split("=", 1)
        else:
            name, path = Path(argument).stem, argument
        if not name or not _TYPE.match(name):
            raise DictionaryError(
                f"bad dictionary name {name!r}: give NAME=FILE with a name without white space", argument
            )
        if name in (n for n, _ in specs) or name == PROPAGATE_SOURCE:
            raise DictionaryError(
                f"two dictionaries are named {name!r} (or it is the reserved {PROPAGATE_SOURCE!r}); name them with NAME=FILE",
                path,
            )
        specs.append((name, path))
    return specs


def load_dictionary(matcher: Matcher, name: str, path: str) -> Dict[str, object]:
    """Adds the entries of one dictionary file to ``matcher``; returns its counts (entries, per type,
    ``first_line`` per type). An empty dictionary is a :class:`DictionaryError`."""
    source = matcher.add_source(name, str(path))
    per_type: Counter = Counter()
    first_line: Dict[str, int] = {}
    for number, form, label in dictionary_lines(str(path)):
        tokens = tokenize_text(form)[0]
        matcher.add(tokens, label, source, number)
        per_type[label] += 1
        first_line.setdefault(label, number)
    if not per_type:
        raise DictionaryError(
            "empty dictionary: no entries; expected one 'surface form<TAB>TYPE' per line (or JSON lines)", path
        )
    return {
        "name": name,
        "path": str(path),
        "entries": sum(per_type.values()),
        "per_type": dict(sorted(per_type.items())),
        "first_line": first_line,
    }


def type_warnings(dictionaries: Sequence[Dict[str, object]], corpus_types: Sequence[str] = ()) -> List[str]:
    """Warnings for types listed on one line only (likely typos; dictionaries of :data:`TYPO_CHECK_ENTRIES` or more), and
    for dictionary types that the input's own annotation (``corpus_types``) does not use."""
    import difflib

    totals: Counter = Counter()
    for d in dictionaries:
        totals.update(d["per_type"])  # type: ignore[arg-type]
    warnings = []
    for d in dictionaries:
        for label in d["per_type"]:  # type: ignore[union-attr]
            where = f"{d['path']}:{d['first_line'][label]}"  # type: ignore[index]
            if totals[label] == 1 and sum(totals.values()) >= TYPO_CHECK_ENTRIES:
                close = difflib.get_close_matches(label, [t for t in totals if t != label], n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                warnings.append(
                    f"{where}: type {label!r} is listed on this line only, the other types on many{hint}; "
                    "check it is not a typo"
                )
            if corpus_types and label not in corpus_types:
                warnings.append(
                    f"{where}: type {label!r} is not used by the input's annotation ({', '.join(corpus_types)}); "
                    "the model will learn it as a new type"
                )
    return warnings


def read_input(path: str) -> Tuple[List[Document], str, List[Optional[List[Tuple[int, int]]]]]:
    """The documents of INPUT, its kind and each document's word character offsets (None without raw text).

    Kinds: ``text`` (JSON lines with raw text; :attr:`Document.text` set), ``tokens`` (JSON lines with
    words, partial annotation kept) or ``conll`` (a CoNLL/OntoNotes file, tags ignored). Every line of a
    JSON-lines file must be of one kind."""
    if not Path(path).exists():
        raise DictionaryError("input file not found; check the path", path)
    if detect_format(path) != "jsonl":
        gold = read_documents(path)
        return (
            [dataclasses.replace(d, spans=[], is_complete=False, negative_spans=[]) for d in gold],
            "conll",
            [None] * len(gold),
        )
    stem = Path(path).stem
    documents: List[Document] = []
    offsets: List[Optional[List[Tuple[int, int]]]] = []
    kinds = set()
    first_line: Dict[str, int] = {}
    for number, text in text_lines(path):
        if not text.strip():
            continue
        data = _json_value(text, path, number)
        if not isinstance(data, dict):
            raise DictionaryError(
                f'expected a JSON object with "text" or "tokens", got {type(data).__name__}', path, number
            )
        if "text" not in data and "tokens" not in data:
            raise DictionaryError(
                'expected "text" (raw text) or "tokens" (words, e.g. this command\'s own output)', path, number
            )
        if "id" in data and (not isinstance(data["id"], (str, int)) or isinstance(data["id"], bool)):
            raise DictionaryError(f"'id' must be a string or an integer, got {data['id']!r}", path, number)
        doc_id = str(data.get("id", f"{stem}-{number}"))
        try:
            if "tokens" not in data:
                kinds.add("text")
                unknown = sorted(set(data) - set(TEXT_JSON_KEYS))
                if unknown:
                    raise DocumentError(unknown_keys_message(unknown, TEXT_JSON_KEYS))
                if not isinstance(data["text"], str) or not data["text"].strip():
                    raise DocumentError("'text' must be a non-empty string")
                words, word_offsets, ends = tokenize_text(data["text"])
                document = Document(doc_id, words, ends, text=data["text"])
            else:  # words; with "text" (this command's output) the words' offsets when the text gives these words
                kinds.add("tokens")
                document = Document.from_json(dict(data, id=doc_id))
                word_offsets = None
                if document.text is not None:
                    words, word_offsets, _ = tokenize_text(document.text)
                    word_offsets = word_offsets if words == document.tokens else None
        except DocumentError as err:
            raise DictionaryError(str(err), path, number) from None
        if doc_id in first_line:
            raise DictionaryError(f"document id {doc_id!r} already used on line {first_line[doc_id]}", path, number)
        first_line[doc_id] = number
        document.source = f"{path}:{number}"
        documents.append(document)
        offsets.append(word_offsets)
    if not documents:
        raise DictionaryError('no documents; expected one JSON object per line with "text" or "tokens"', path)
    if len(kinds) > 1:
        raise DictionaryError('lines with "text" and lines with "tokens" in one file; give one kind per file', path)
    return documents, kinds.pop(), offsets


# ------------------------------------------------------------------------------- labelling
@dataclasses.dataclass
class Summary:
    """What a labelling run did (printed by the command; ``to_json`` for files)."""

    documents: int = 0
    input_kind: str = ""
    words: int = 0
    dictionaries: List[dict] = dataclasses.field(default_factory=list)
    entries: int = 0
    duplicates: int = 0
    stopped: int = 0
    ambiguous_rule: str = DEFAULT_AMBIGUOUS
    ambiguous: List[dict] = dataclasses.field(default_factory=list)
    matches_per_type: Dict[str, int] = dataclasses.field(default_factory=dict)
    matches_per_dictionary: Dict[str, int] = dataclasses.field(default_factory=dict)
    documents_without_match: int = 0
    complete_documents_kept: int = 0
    overlaps_dropped: int = 0
    conflicts: List[str] = dataclasses.field(default_factory=list)
    warnings: List[str] = dataclasses.field(default_factory=list)
    output: str = ""

    @property
    def matches(self) -> int:
        return sum(self.matches_per_type.values())

    @property
    def share_without_match(self) -> float:
        return self.documents_without_match / self.documents if self.documents else 0.0

    def to_json(self) -> dict:
        return dict(dataclasses.asdict(self), matches=self.matches, share_without_match=self.share_without_match)

    def lines(self, shown: int = 5) -> List[str]:
        counts = lambda c: ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "none"  # noqa: E731
        lines = [
            f"eer-dictionary: {self.documents} documents ({self.input_kind}, {self.words} words), "
            f"{self.entries} dictionary entries from {len(self.dictionaries)} dictionaries "
            f"({', '.join(d['name'] for d in self.dictionaries)})",
            f"matches: {self.matches} (per type: {counts(self.matches_per_type)}; per dictionary: {counts(self.matches_per_dictionary)})",
            f"documents with no match: {self.documents_without_match} of {self.documents} ({self.share_without_match:.1%})",
            f"ambiguous forms (listed under two or more types, rule '{self.ambiguous_rule}'): {len(self.ambiguous)}"
            + "".join(
                f"; {a['form']!r} " + "/".join(listing["type"] for listing in a["listings"])
                for a in self.ambiguous[:shown]
            )
            + ("; ..." if len(self.ambiguous) > shown else ""),
            f"duplicate entries (same form and type): {self.duplicates}; stop-listed entries: {self.stopped}",
        ]
        if self.complete_documents_kept or self.overlaps_dropped or self.conflicts:
            lines.append(
                f"kept as annotated: {self.complete_documents_kept} complete documents; matches dropped for overlapping "
                f"an annotated or negative span: {self.overlaps_dropped}; conflicts: {len(self.conflicts)}"
                + "".join(f"; {c}" for c in self.conflicts[:shown])
            )
        if self.output:
            lines.append(f"wrote {self.documents} documents -> {self.output}")
        return lines


def propagation_forms(documents: Sequence[Document]) -> Iterator[Tuple[List[str], str, int]]:
    """``(words, type, input line or 0)`` of every annotated span of ``documents`` (for ``propagate``)."""
    for document in documents:
        line = (document.source or "").rsplit(":", 1)[-1]
        for start, end, label in document.spans:
            yield document.tokens[start:end], label, int(line) if line.isdigit() else 0


def label_documents(
    documents: Sequence[Document],
    matcher: Matcher,
    summary: Optional[Summary] = None,
    offsets: Optional[Sequence[Optional[Sequence[Tuple[int, int]]]]] = None,
) -> Tuple[List[Document], Summary]:
    """The documents with the matcher's matches added as spans (never over an annotated or negative span;
    complete documents unchanged) and a ``provenance`` object per new span, with character offsets into
    :attr:`Document.text` where ``offsets`` gives the words' ``(start, end)``; the counts go into ``summary``."""
    summary = summary or Summary()
    per_type: Counter = Counter()
    per_source: Counter = Counter()
    output = []
    for index, document in enumerate(documents):
        summary.documents += 1
        summary.words += len(document.tokens)
        if document.is_complete:
            summary.complete_documents_kept += 1
            summary.documents_without_match += 1
            output.append(document)
            continue
        taken = [False] * len(document.tokens)
        for start, end, *_ in list(document.spans) + [n for n in document.negative_spans if len(n) == 2]:
            taken[start:end] = [True] * (end - start)
        annotated = {(s, e): t for s, e, t in document.spans}
        rejected = {tuple(n) for n in document.negative_spans if len(n) == 3}
        spans = list(document.spans)
        provenance = list(document.provenance or [])
        words = offsets[index] if offsets is not None else None
        added = 0
        for start, end, label, source in matcher.match(document.tokens, document.sentence_ends):
            if not any(taken[start:end]) and (start, end, label) not in rejected:
                spans.append((start, end, label))
                item = {"start": start, "end": end, "type": label, "source": source}
                if words is not None and document.text is not None:
                    char_start, char_end = words[start][0], words[end - 1][1]
                    item.update(char_start=char_start, char_end=char_end, text=document.text[char_start:char_end])
                provenance.append(item)
                per_type[label] += 1
                per_source[source] += 1
                added += 1
                continue
            if annotated.get((start, end)) == label:
                continue  # the annotated span itself
            summary.overlaps_dropped += 1
            if source == PROPAGATE_SOURCE or (start, end) in annotated:
                summary.conflicts.append(
                    f"{document.source or document.id}: {source} match ({start}, {end}, {label}) "
                    f"{' '.join(document.tokens[start:end])!r} overlaps an annotated or negative span; kept the annotation"
                )
        if added == 0:
            summary.documents_without_match += 1
        output.append(dataclasses.replace(document, spans=spans, provenance=provenance or None))
    for label, count in per_type.items():
        summary.matches_per_type[label] = summary.matches_per_type.get(label, 0) + count
    for source, count in per_source.items():
        summary.matches_per_dictionary[source] = summary.matches_per_dictionary.get(source, 0) + count
    return output, summary


def build_matcher(
    dictionaries: Sequence[Tuple[str, str]],
    case_insensitive: bool = False,
    stop_list: Optional[str] = None,
    ambiguous: str = DEFAULT_AMBIGUOUS,
    propagate_from: Sequence[Document] = (),
) -> Tuple[Matcher, List[dict]]:
    """A :class:`Matcher` of the ``(name, path)`` dictionaries (after the spans of ``propagate_from``, as
    dictionary :data:`PROPAGATE_SOURCE`) and the per-dictionary counts."""
    matcher = Matcher(case_insensitive, ambiguous, read_stop_list(stop_list) if stop_list else ())
    loaded = []
    if propagate_from:
        path = (propagate_from[0].source or "input").rsplit(":", 1)[0]
        source = matcher.add_source(PROPAGATE_SOURCE, path)
        per_type: Counter = Counter()
        for words, label, line in propagation_forms(propagate_from):
            matcher.add(words, label, source, line)
            per_type[label] += 1
        loaded.append(
            {
                "name": PROPAGATE_SOURCE,
                "path": path,
                "entries": sum(per_type.values()),
                "per_type": dict(sorted(per_type.items())),
                "first_line": {},
            }
        )
    for name, path in dictionaries:
        loaded.append(load_dictionary(matcher, name, path))
    return matcher, loaded


def label_file(
    input: str,
    output: str,
    dictionaries: Sequence[str] = (),
    case_insensitive: bool = False,
    stop_list: Optional[str] = None,
    ambiguous: str = DEFAULT_AMBIGUOUS,
    propagate: bool = False,
    report: Optional[str] = None,
) -> Summary:
    """``eer-dictionary``: labels INPUT with the ``--dictionary`` arguments (``FILE`` or ``NAME=FILE``) and
    writes OUTPUT (partial-annotation JSON lines) and, with ``report``, the summary as JSON; returns the
    :class:`Summary`. Bad input raises
    :class:`DictionaryError` (or :class:`~eer_plugin.corpus.formats.FormatError`) before anything is written;
    an output that is an input raises :class:`~eer_plugin.common.outputs.OutputError`."""
    if ambiguous not in AMBIGUOUS_RULES:
        raise DictionaryError(f"--ambiguous must be one of {', '.join(AMBIGUOUS_RULES)}, got {ambiguous!r}", input)
    specs = dictionary_specs(dictionaries)
    if not specs and not propagate:
        raise DictionaryError(
            "no dictionary: give --dictionary FILE (or --propagate to use the input's own spans)", input
        )
    inputs = [("INPUT", input), ("--stop-list", stop_list)] + [(f"--dictionary {name}", path) for name, path in specs]
    check_outputs(inputs, [("OUTPUT", output), ("--report", report)])
    documents, kind, offsets = read_input(input)
    annotated = [d for d in documents if d.spans]
    if propagate and not annotated:
        raise DictionaryError("--propagate: no document of the input has an annotated span to propagate", input)
    matcher, loaded = build_matcher(specs, case_insensitive, stop_list, ambiguous, annotated if propagate else ())
    corpus_types = sorted({t for d in documents for _, _, t in d.spans})
    summary = Summary(
        input_kind=kind,
        dictionaries=[{k: v for k, v in d.items() if k != "first_line"} for d in loaded],
        entries=len(matcher),
        duplicates=matcher.duplicates,
        stopped=matcher.stopped,
        ambiguous_rule=ambiguous,
        ambiguous=matcher.ambiguous_forms(),
        output=str(output),
    )
    summary.warnings = type_warnings([d for d in loaded if d["name"] != PROPAGATE_SOURCE], corpus_types)
    if ambiguous == "first":
        summary.warnings += [
            f"{a['listings'][1]['where']}: {a['form']!r} is listed as {a['listings'][0]['type']} ({a['listings'][0]['where']}) "
            f"and as {a['listings'][1]['type']}; kept {a['kept']} (--ambiguous first)"
            for a in summary.ambiguous
        ]
    labelled, summary = label_documents(documents, matcher, summary, offsets)
    write_jsonl(labelled, output)
    if report:
        with writing(report) as handle:
            handle.write(json.dumps(summary.to_json(), indent=1, ensure_ascii=False) + "\n")
    return summary
