"""Dictionary (gazetteer) labelling: lists of names matched over text become partial annotations
(``eer-ner eer-dictionary``; no AllenNLP). This module labels documents and sums up what it did
(:func:`label_file`, :func:`label_documents`, :class:`Summary`); the token trie is
:mod:`eer_plugin.annotation.dictionary_matcher`, the reading and checking of the files
:mod:`eer_plugin.annotation.dictionary_files` (their names can be imported from here too).

**Dictionaries.** A TSV file, one ``surface form<TAB>TYPE`` per line (``#`` starts a comment line, blank
lines are skipped; a cell in quotes, as a spreadsheet's tab-delimited export writes one with a comma or a
quote, is unquoted; a header row as for CSV), a ``.csv`` file (a spreadsheet saved as CSV: ``surface form,TYPE``, or ``;`` where the
first lines say so, :func:`csv_delimiter`; quoted cells, an optional header row whose type cell is one of
:data:`CSV_HEADER_TYPES`, trailing empty cells ignored), JSON lines ``{"text": "New York", "type": "LOC"}``
(a ``.jsonl``/``.json`` name, or a first entry that starts with ``{``), or an Excel workbook (the extra
``eer-ner[xlsx]``: its first sheet's first two columns, a row an entry, a header row as for CSV;
:mod:`eer_plugin.corpus.formats.spreadsheet`). Files are UTF-8, or UTF-16/32 with a
byte-order mark, and may be gzip-, bzip2- or xz-compressed; they are read line by line. Several
dictionaries can be used at once; each has a name (default: the file stem without a compression suffix,
white space as ``_``; ``NAME=FILE`` names it), kept as the ``source`` of every span it labels.
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

**Types.** A type is an entity type name under the rule of every reader
(:func:`~eer_plugin.corpus.documents.type_problem`): not ``O``, white space at its ends dropped, a plain space inside
kept (``Product Name``, an annotation tool's label), other white space inside refused. A type listed on one line only
in dictionaries of at least :data:`TYPO_CHECK_ENTRIES` entries is almost always a typo (``PRE`` for ``PER``): a
warning names its file and line (a warning, not an error: a rare type can be real); beyond :data:`TYPO_WARNINGS`
such types (a column of ids read as types), the others are counted in one warning.
When the input documents already carry spans, a dictionary type none of them uses gets a warning too.

**Input documents.** JSON lines with ``"text"`` (raw text: tokenized, character offsets kept; optional
``"id"``), JSON lines with ``"tokens"`` (pre-tokenized or partial-annotation documents, whose spans and
provenance are kept: this command's own output can be labelled again with another dictionary), a folder of
``.txt`` files (one raw-text document per file, named by its path; :func:`~eer_plugin.annotation.dictionary_input.read_text_folder`), or a
CoNLL/OntoNotes file whose tags are ignored. A match never overrides an annotated span: a
match that overlaps one (or a negative span) is dropped and counted; complete documents are left as they
are (their unmarked words are observed ``O``). A document without words (empty text or tokens) is skipped and listed
(``Summary.skipped_without_words``); an input without any words is an error.

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
The input is read and written one document at a time (:func:`label_stream`), so a corpus of any size is
labelled in the memory of its largest document (a CoNLL input too: its reader makes a first pass that keeps no
token).
"""

import dataclasses
import itertools
import json
import logging
from collections import Counter
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from tqdm import tqdm

from eer_plugin.annotation.dictionary_files import (
    PROPAGATE_SOURCE,
    DictionaryError,
    dictionary_specs,
    load_dictionary,
    read_stop_list,
    type_warnings,
)
from eer_plugin.annotation.dictionary_input import Read, read_input
from eer_plugin.annotation.dictionary_matcher import AMBIGUOUS_RULES, DEFAULT_AMBIGUOUS, Matcher  # noqa: F401
from eer_plugin.common.outputs import check_outputs, writing
from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats import write_jsonl

logger = logging.getLogger(__name__)

#: how many of the most matched forms the summary keeps (:attr:`Summary.most_matched`)
MOST_MATCHED = 10


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
    #: the forms that labelled the most spans (at most :data:`MOST_MATCHED`): ``{"form", "type", "source",
    #: "matches"}``, most first; a common word among them labels it everywhere (a stop-list candidate)
    most_matched: List[dict] = dataclasses.field(default_factory=list)
    documents_without_match: int = 0
    skipped_without_words: List[str] = dataclasses.field(default_factory=list)
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
            f"eer-dictionary: {counted(self.documents, 'document')} ({self.input_kind}, {counted(self.words, 'word')}), "
            f"{counted(self.entries, 'dictionary entry')} from {counted(len(self.dictionaries), 'dictionary')} "
            f"({', '.join(d['name'] for d in self.dictionaries)})",
            f"matches: {self.matches} (per type: {counts(self.matches_per_type)}; per dictionary: {counts(self.matches_per_dictionary)})",
            f"documents with no match: {self.documents_without_match} of {self.documents} ({self.share_without_match:.1%})",
            "most matched forms: "
            + (
                ", ".join(f"{m['form']!r} {m['type']} {m['matches']}" for m in self.most_matched[:shown])
                + " (a common word among them? list it in a --stop-list file)"
                if self.most_matched
                else "none"
            ),
            f"ambiguous forms (listed under two or more types, rule '{self.ambiguous_rule}'): {len(self.ambiguous)}"
            + "".join(
                f"; {a['form']!r} " + "/".join(listing["type"] for listing in a["listings"])
                for a in self.ambiguous[:shown]
            )
            + ("; ..." if len(self.ambiguous) > shown else ""),
            f"duplicate entries (same form and type): {self.duplicates}; stop-listed entries: {self.stopped}",
        ]
        if self.skipped_without_words:
            lines.append(
                f"skipped {counted(len(self.skipped_without_words), 'document')} without words (not written): "
                + ", ".join(self.skipped_without_words[:shown])
                + (", ..." if len(self.skipped_without_words) > shown else "")
            )
        if self.complete_documents_kept or self.overlaps_dropped or self.conflicts:
            lines.append(
                f"kept as annotated: {counted(self.complete_documents_kept, 'complete document')}; matches dropped for overlapping "
                f"an annotated or negative span: {self.overlaps_dropped}; conflicts: {len(self.conflicts)}"
                + "".join(f"; {c}" for c in self.conflicts[:shown])
            )
        if self.output:
            lines.append(f"wrote {counted(self.documents, 'document')} -> {self.output}")
        return lines


def propagation_forms(documents: Iterable[Document]) -> Iterator[Tuple[List[str], str, int]]:
    """``(words, type, input line or 0)`` of every annotated span of ``documents`` (for ``propagate``)."""
    for document in documents:
        line = (document.source or "").rsplit(":", 1)[-1]
        for start, end, label in document.spans:
            yield document.tokens[start:end], label, int(line) if line.isdigit() else 0


def label_stream(
    reads: Iterable[Read], matcher: Matcher, summary: Summary, progress: bool = False, total: Optional[int] = None
) -> Iterator[Document]:
    """Each ``(document, words' (start, end) or None)`` of ``reads`` with the matcher's matches added as spans
    (never over an annotated or negative span; complete documents unchanged) and a ``provenance`` object per
    new span, with character offsets into :attr:`Document.text` where the words' offsets are given; one
    document at a time, the counts going into ``summary``. ``progress``: a progress bar on stderr when it is a
    terminal, out of ``total`` documents at most where that is known."""
    forms: Counter = Counter()  # (matched text, type, source) -> spans it labelled
    with tqdm(
        total=total, desc="eer-dictionary: labelling", unit=" documents", disable=None if progress else True
    ) as shown:
        for labelled in _labelled(reads, matcher, summary, forms):
            shown.update()
            yield labelled
        shown.total = shown.n  # documents without words are not labelled: the bar ends full
    summary.most_matched = [
        {"form": form, "type": label, "source": source, "matches": count}
        for (form, label, source), count in sorted(forms.items(), key=lambda item: (-item[1], item[0]))[:MOST_MATCHED]
    ]


def _labelled(reads: Iterable[Read], matcher: Matcher, summary: Summary, forms: Counter) -> Iterator[Document]:
    """:func:`label_stream` without the progress bar; ``forms`` counts the spans of each matched form."""
    for document, words in reads:
        summary.documents += 1
        summary.words += len(document.tokens)
        if document.is_complete:
            summary.complete_documents_kept += 1
            summary.documents_without_match += 1
            yield document
            continue
        taken = [False] * len(document.tokens)
        for start, end, *_ in list(document.spans) + [n for n in document.negative_spans if len(n) == 2]:
            taken[start:end] = [True] * (end - start)
        annotated = {(s, e): t for s, e, t in document.spans}
        rejected = {tuple(n) for n in document.negative_spans if len(n) == 3}
        spans = list(document.spans)
        provenance = list(document.provenance or [])
        added = 0
        for start, end, label, source in matcher.match(document.tokens, document.sentence_ends):
            if not any(taken[start:end]) and (start, end, label) not in rejected:
                spans.append((start, end, label))
                item = {"start": start, "end": end, "type": label, "source": source}
                if words is not None and document.text is not None:
                    char_start, char_end = words[start][0], words[end - 1][1]
                    item.update(char_start=char_start, char_end=char_end, text=document.text[char_start:char_end])
                forms[item.get("text") or " ".join(document.tokens[start:end]), label, source] += 1
                provenance.append(item)
                summary.matches_per_type[label] = summary.matches_per_type.get(label, 0) + 1
                summary.matches_per_dictionary[source] = summary.matches_per_dictionary.get(source, 0) + 1
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
        yield dataclasses.replace(document, spans=spans, provenance=provenance or None)


def label_documents(
    documents: Sequence[Document],
    matcher: Matcher,
    summary: Optional[Summary] = None,
    offsets: Optional[Sequence[Optional[Sequence[Tuple[int, int]]]]] = None,
    progress: bool = False,
) -> Tuple[List[Document], Summary]:
    """:func:`label_stream` of a list: the labelled documents and the summary (``offsets``: each document's
    words' ``(start, end)`` in its text, or None)."""
    summary = summary or Summary()
    reads = zip(documents, offsets if offsets is not None else [None] * len(documents))
    return list(label_stream(reads, matcher, summary, progress)), summary


def build_matcher(
    dictionaries: Sequence[Tuple[str, str]],
    case_insensitive: bool = False,
    stop_list: Optional[str] = None,
    ambiguous: str = DEFAULT_AMBIGUOUS,
    propagate_from: Optional[Tuple[str, Iterable[Document]]] = None,
    progress: bool = False,
) -> Tuple[Matcher, List[dict]]:
    """A :class:`Matcher` of the ``(name, path)`` dictionaries (after the spans of ``propagate_from``'s
    ``(path, documents)``, read once, as dictionary :data:`PROPAGATE_SOURCE`) and the per-dictionary counts
    (``progress``: a bar per dictionary)."""
    matcher = Matcher(case_insensitive, ambiguous, read_stop_list(stop_list) if stop_list else ())
    loaded = []
    if propagate_from is not None:
        path, documents = propagate_from
        source = matcher.add_source(PROPAGATE_SOURCE, path)
        per_type: Counter = Counter()
        for words, label, line in propagation_forms(documents):
            matcher.add(words, label, source, line)
            per_type[label] += 1
        if not per_type:
            raise DictionaryError("--propagate: no document of the input has an annotated span to propagate", path)
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
        loaded.append(load_dictionary(matcher, name, path, progress))
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
    progress: bool = False,
) -> Summary:
    """``eer-dictionary``: labels INPUT with the ``--dictionary`` arguments (``FILE`` or ``NAME=FILE``) and
    writes OUTPUT (partial-annotation JSON lines) and, with ``report``, the summary as JSON; returns the
    :class:`Summary`. INPUT is read one document at a time (twice with ``propagate``), so memory does not grow
    with the corpus. Bad input raises :class:`DictionaryError` (or
    :class:`~eer_plugin.corpus.formats.FormatError`): OUTPUT is written under a temporary name and renamed at
    the end, so an error on any line leaves no OUTPUT, or the one there before; an output that is an input raises :class:`~eer_plugin.common.outputs.OutputError`. ``progress``: progress bars
    on stderr (reading each dictionary, labelling) when it is a terminal."""
    if ambiguous not in AMBIGUOUS_RULES:
        raise DictionaryError(f"--ambiguous must be one of {', '.join(AMBIGUOUS_RULES)}, got {ambiguous!r}", input)
    specs = dictionary_specs(dictionaries)
    if not specs and not propagate:
        raise DictionaryError(
            "no dictionary: give --dictionary FILE (or --propagate to use the input's own spans)", input
        )
    inputs = [("INPUT", input), ("--stop-list", stop_list)] + [(f"--dictionary {name}", path) for name, path in specs]
    check_outputs(inputs, [("OUTPUT", output), ("--report", report)])
    read = read_input(input)
    corpus_types: set = set()  # the types of the input's own spans

    def typed(reads: Iterable[Read]) -> Iterator[Read]:
        for document, words in reads:
            corpus_types.update(label for _, _, label in document.spans)
            yield document, words

    if propagate:  # a first pass: the annotated spans become a dictionary
        annotated = (document for document, _ in typed(read.documents(offsets=False)) if document.spans)
        matcher, loaded = build_matcher(
            specs, case_insensitive, stop_list, ambiguous, (str(input), annotated), progress=progress
        )
        reads: Iterator[Read] = iter(read)
    else:
        reads = iter(read)
        first = next(reads, None)  # the input's first document: a bad input fails before the dictionaries load
        matcher, loaded = build_matcher(specs, case_insensitive, stop_list, ambiguous, progress=progress)
        reads = typed(itertools.chain([first] if first is not None else [], reads))
    summary = Summary(
        dictionaries=[{k: v for k, v in d.items() if k not in ("first_line", "notes")} for d in loaded],
        entries=len(matcher),
        duplicates=matcher.duplicates,
        stopped=matcher.stopped,
        ambiguous_rule=ambiguous,
        ambiguous=matcher.ambiguous_forms(),
        output=str(output),
    )
    write_jsonl(label_stream(reads, matcher, summary, progress, read.documents_at_most()), output)
    summary.input_kind = read.kind
    summary.skipped_without_words = read.without_words
    summary.warnings = read.warnings + [note for d in loaded for note in d.get("notes", ())]
    summary.warnings += type_warnings([d for d in loaded if d["name"] != PROPAGATE_SOURCE], sorted(corpus_types))
    if ambiguous == "first":
        summary.warnings += [
            f"{a['listings'][1]['where']}: {a['form']!r} is listed as {a['listings'][0]['type']} ({a['listings'][0]['where']}) "
            f"and as {a['listings'][1]['type']}; kept {a['kept']} (--ambiguous first)"
            for a in summary.ambiguous
        ]
    if report:
        with writing(report) as handle:
            handle.write(json.dumps(summary.to_json(), indent=1, ensure_ascii=False) + "\n")
    return summary
