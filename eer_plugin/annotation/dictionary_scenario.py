"""The dictionary annotation scenario (``eer-simulate dictionary``, benchmark scenarios of ``type: 'dictionary'``):
distant supervision from a list of names, simulated on a gold corpus.

1. **The dictionary.** The distinct gold entity surface forms of the corpus (a span's words, as a tuple)
   that a list of names would hold (:func:`listable`), sorted, of which ``coverage * forms`` (halves rounded up, at least one) are drawn with ``random.Random(seed)``. Each
   drawn form is listed under its most frequent gold type (ties: the first type in sorted order), as a
   gazetteer lists ``Washington`` once; forms that carry several gold types are counted. Left out: forms
   without a letter and single English function words (:data:`FUNCTION_WORDS`, the stop list a user of
   ``eer-dictionary --stop-list`` would give). CoNLL-2003's training set has five such gold forms, each an
   annotation slip or a short form (``3`` ORG, ``1,000`` MISC, ``The`` LOC, ``An`` PER, ``OR`` LOC, Oregon),
   and drawn, ``3`` matched 930 numbers and ``The`` 1121 sentence starts: about half of a 20% dictionary's
   false positives from one form, so one coin flip per seed would decide the scenario's precision.
2. **The labels.** That dictionary is matched over every document's words by the library matcher of
   ``eer-dictionary`` (:class:`eer_plugin.annotation.dictionary_matcher.Matcher`: leftmost-longest, on word
   boundaries, within sentences, case-sensitive), so its false positives are real: a form of another type
   here (``Washington`` the person), a form inside a longer name that is not listed, a name used as a
   common word.

Statistics are those of :mod:`eer_plugin.annotation.simulators` (precision and recall of the labels
against gold, ``kept_spans`` = true positives, ``false_positives``) plus ``coverage``, ``dictionary_forms``,
``distinct_gold_forms`` (the listable ones), ``unlisted_gold_forms`` and ``ambiguous_gold_forms``.
"""

import random
from collections import Counter, defaultdict
from fractions import Fraction
from typing import Dict, List, Sequence, Tuple

from eer_plugin.annotation.dictionary_matcher import Matcher
from eer_plugin.annotation.simulators import SimulationError, Stats, _annotated, _copy, _stats
from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import Document

#: the coverage ``eer-simulate dictionary`` uses when none is given
DEFAULT_COVERAGE = 0.5
#: the source name of the scenario's spans
SCENARIO_SOURCE = "gold-forms"


def gold_forms(docs: Sequence[Document]) -> Dict[Tuple[str, ...], Counter]:
    """Every distinct gold surface form (a tuple of words) and how often it carries each type."""
    forms: Dict[Tuple[str, ...], Counter] = defaultdict(Counter)
    for document in docs:
        for start, end, label in document.spans:
            forms[tuple(document.tokens[start:end])][label] += 1
    return forms


#: English function words: a single-word form among them (compared case-folded) stays out of the dictionary
FUNCTION_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not of off on
    once only or other our ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves""".split()
)


def listable(form: Sequence[str]) -> bool:
    """Whether a list of names would hold this surface form: it has a letter (``3`` and ``1,000`` have none)
    and is not a single function word (``The``, ``OR``)."""
    has_letter = any(character.isalpha() for word in form for character in word)
    return has_letter and not (len(form) == 1 and form[0].casefold() in FUNCTION_WORDS)


def draw_dictionary(
    docs: Sequence[Document], coverage: float, seed: int = 0
) -> Tuple[List[Tuple[Tuple[str, ...], str]], Dict[str, int]]:
    """``([(form, type)], counts)``: the scenario's dictionary (module docstring, step 1)."""
    if not 0.0 < coverage <= 1.0:
        raise SimulationError(f"coverage must be in (0, 1], got {coverage}")
    forms = gold_forms(docs)
    ordered = sorted(form for form in forms if listable(form))
    if not ordered:
        raise SimulationError(
            "the corpus has no gold entity form a list of names would hold (all are numbers or function words)"
        )
    wanted = max(1, int(Fraction(str(coverage)) * len(ordered) + Fraction(1, 2)))
    chosen = sorted(random.Random(seed).sample(ordered, wanted))
    entries = [(form, min(forms[form].items(), key=lambda item: (-item[1], item[0]))[0]) for form in chosen]
    counts = {
        "distinct_gold_forms": len(ordered),
        "unlisted_gold_forms": len(forms) - len(ordered),
        "dictionary_forms": len(entries),
        "ambiguous_gold_forms": sum(1 for form in chosen if len(forms[form]) > 1),
    }
    return entries, counts


def dictionary_matcher(entries: Sequence[Tuple[Sequence[str], str]]) -> Matcher:
    matcher = Matcher()
    source = matcher.add_source(SCENARIO_SOURCE)
    for line, (form, label) in enumerate(entries, start=1):
        matcher.add(form, label, source, line)
    return matcher


def _label(docs: Sequence[Document], matcher: Matcher) -> Tuple[List[Document], int, int]:
    """The documents labelled by ``matcher``, the true positives and the false positives."""
    output, true, false = [], 0, 0
    for document in docs:
        spans = [(s, e, t) for s, e, t, _ in matcher.match(document.tokens, document.sentence_ends)]
        gold = set(document.spans)
        hits = sum(1 for span in spans if span in gold)
        true, false = true + hits, false + len(spans) - hits
        output.append(_annotated(document, spans))
    return output, true, false


def dictionary_annotation(
    docs: Sequence[Document], coverage: float = DEFAULT_COVERAGE, seed: int = 0
) -> Tuple[List[Document], Stats]:
    """The dictionary scenario (module docstring): every document, in input order, labelled by a dictionary
    of ``coverage`` of the corpus's distinct gold forms."""
    entries, counts = draw_dictionary(docs, coverage, seed)
    output, true, false = _label(docs, dictionary_matcher(entries))
    stats = _stats(docs, output, true, false)
    stats.update(coverage=coverage, **counts)
    return output, stats


def dictionary_with_complete_documents(
    docs: Sequence[Document], coverage: float = DEFAULT_COVERAGE, complete_documents: int = 20, seed: int = 0
) -> Tuple[List[Document], Stats]:
    """The dictionary scenario with ``complete_documents`` random documents annotated completely (gold,
    ``is_complete``; drawn as :func:`~eer_plugin.annotation.simulators.ee_with_complete_documents` draws them)
    and the dictionary's labels on the others (the same dictionary as :func:`dictionary_annotation` with
    this seed). The complete documents come first. Statistics count both parts, plus ``complete_documents``,
    ``complete_spans`` and ``complete_ids``."""
    if not 1 <= complete_documents <= len(docs):
        raise SimulationError(
            f"complete_documents must be between 1 and the corpus's {counted(len(docs), 'document')}, got {complete_documents}"
        )
    chosen = sorted(random.Random(f"complete-documents-{seed}").sample(range(len(docs)), complete_documents))
    chosen_set = set(chosen)
    complete = [_copy(docs[i], spans=list(docs[i].spans), is_complete=True, negative_spans=[]) for i in chosen]
    entries, counts = draw_dictionary(docs, coverage, seed)
    rest, true, false = _label([d for i, d in enumerate(docs) if i not in chosen_set], dictionary_matcher(entries))
    complete_spans = sum(len(d.spans) for d in complete)
    output = complete + rest
    stats = _stats(docs, output, complete_spans + true, false)
    stats.update(
        coverage=coverage,
        complete_documents=complete_documents,
        complete_spans=complete_spans,
        complete_ids=[d.id for d in complete],
        **counts,
    )
    return output, stats
