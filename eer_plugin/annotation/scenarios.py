"""One simulated annotation scenario as ``eer-simulate`` runs it: the scenario's simulator
(:mod:`eer_plugin.annotation.simulators`) with the options given, every option left out (None) taking the
simulator's own default (read from its signature, declared once there), the learning curve's budgets and the
output file of each."""

import inspect
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from eer_plugin.annotation import dictionary_scenario, simulators
from eer_plugin.common.outputs import check_outputs
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats import read_documents, write_jsonl

SCENARIOS = ("ee", "nns", "random", "gold", "dictionary")


def _default(function: Callable, parameter: str) -> Any:
    return inspect.signature(function).parameters[parameter].default


#: the simulators' defaults, by option (what ``eer-simulate --help`` shows)
DEFAULTS: Dict[str, Any] = {
    "budget": _default(simulators.exploratory_expert, "budget"),
    "keep_probability": _default(simulators.exploratory_expert, "keep_probability"),
    "max_per_document": _default(simulators.exploratory_expert, "max_per_document"),
    "seed": _default(simulators.exploratory_expert, "seed"),
    "recall": _default(simulators.non_native_speaker, "recall"),
    "precision": _default(simulators.non_native_speaker, "precision"),
    "max_fp_length": _default(simulators.non_native_speaker, "max_fp_length"),
    "coverage": _default(dictionary_scenario.dictionary_annotation, "coverage"),
    "variant": simulators.DEFAULT_VARIANT,
}
#: the options that only make sense with some scenarios
SCENARIO_OPTIONS = {
    "budget": ("ee",),
    "learning_curve": ("ee",),
    "complete_documents": ("ee", "dictionary"),
    "max_per_document": ("ee",),
    "keep_probability": ("ee", "random"),
    "recall": ("nns",),
    "precision": ("nns",),
    "max_fp_length": ("nns",),
    "coverage": ("dictionary",),
    "seed": ("ee", "nns", "random", "dictionary"),
}


class UsageError(ValueError):
    """Options that do not fit together."""


def check_options(scenario: str, **options: Any) -> None:
    """:class:`UsageError` for options (:data:`SCENARIO_OPTIONS`, None or False: not given) that do not fit
    ``scenario`` or each other, named by their ``eer-simulate`` flags."""
    for option, scenarios in SCENARIO_OPTIONS.items():
        value = options.get(option)
        if value not in (None, False) and scenario not in scenarios:
            flag = "--" + option.replace("_", "-")
            raise UsageError(f"{flag} does not apply to scenario {scenario!r} (only to {', '.join(scenarios)})")
    if scenario == "random" and options.get("keep_probability") is None:
        raise UsageError("scenario 'random' needs --keep-probability")
    if options.get("learning_curve") and options.get("budget") is not None:
        raise UsageError("--learning-curve runs every budget; do not give --budget")
    if options.get("learning_curve") and options.get("complete_documents") is not None:
        raise UsageError("--complete-documents takes one --budget; it does not combine with --learning-curve")


def learning_curve_path(output: str, budget: int) -> Path:
    """``runs/ee.jsonl`` -> ``runs/ee_M1000.jsonl``."""
    path = Path(output)
    return path.with_name(f"{path.stem}_M{budget}{path.suffix}")


def output_paths(output: str, learning_curve: bool = False) -> List[Union[str, Path]]:
    """The files a scenario writes: ``output`` as given, or one per learning-curve budget."""
    if learning_curve:
        return [learning_curve_path(output, budget) for budget in simulators.learning_curve_budgets]
    return [output]


def _given(**options: Any) -> Dict[str, Any]:
    return {name: value for name, value in options.items() if value is not None}


def simulate(
    scenario: str,
    docs: Sequence[Document],
    output: str,
    budget: Optional[int] = None,
    learning_curve: bool = False,
    complete_documents: Optional[int] = None,
    max_per_document: Optional[int] = None,
    keep_probability: Optional[float] = None,
    recall: Optional[float] = None,
    precision: Optional[float] = None,
    max_fp_length: Optional[int] = None,
    coverage: Optional[float] = None,
    seed: Optional[int] = None,
) -> List[Tuple[Path, List[Document], Dict]]:
    """Runs ``scenario`` (one of :data:`SCENARIOS`) on the gold ``docs``; returns ``(output path, documents,
    statistics)`` per output file (one per budget with ``learning_curve``). ``random`` needs ``keep_probability``.
    With ``learning_curve``, a budget's per-document cap is the authors' for that budget unless given."""
    if scenario == "ee":
        budgets = (
            simulators.learning_curve_budgets if learning_curve else (DEFAULTS["budget"] if budget is None else budget,)
        )
        runs = []
        for each, path in zip(budgets, output_paths(output, learning_curve)):
            cap = max_per_document
            if cap is None and learning_curve:
                cap = simulators.learning_curve_max_per_document(each, DEFAULTS["max_per_document"])
            options = _given(keep_probability=keep_probability, max_per_document=cap, seed=seed)
            if complete_documents is not None:
                documents, stats = simulators.ee_with_complete_documents(
                    docs, each, complete_documents=complete_documents, **options
                )
            else:
                documents, stats = simulators.exploratory_expert(docs, each, **options)
            runs.append((Path(path), documents, stats))
        return runs
    if scenario == "nns":
        options = _given(recall=recall, precision=precision, seed=seed, max_fp_length=max_fp_length)
        documents, stats = simulators.non_native_speaker(docs, **options)
    elif scenario == "random":
        documents, stats = simulators.random_drop(docs, keep_probability, **_given(seed=seed))
    elif scenario == "dictionary":
        options = _given(coverage=coverage, seed=seed)
        if complete_documents is not None:
            documents, stats = dictionary_scenario.dictionary_with_complete_documents(
                docs, complete_documents=complete_documents, **options
            )
        else:
            documents, stats = dictionary_scenario.dictionary_annotation(docs, **options)
    else:
        documents, stats = simulators.gold(docs)
    return [(Path(output), documents, stats)]


def simulate_file(
    scenario: str,
    input: str,
    output: str,
    variant: str = DEFAULTS["variant"],
    reader_options: Optional[Dict[str, Any]] = None,
    **options: Any,
) -> Iterator[Dict]:
    """``eer-simulate``: checks the options (:func:`check_options`) and the outputs against the input, reads the
    gold documents of ``input`` (``reader_options``: of :func:`~eer_plugin.corpus.formats.read_documents`),
    simulates ``scenario`` (``options``: of :func:`simulate`), applies the train-data ``variant`` and writes
    each output file; yields the statistics of each file once it is written.

    Raises :class:`~eer_plugin.corpus.documents.DocumentError` (bad input),
    :class:`~eer_plugin.annotation.simulators.SimulationError`, :class:`UsageError` or
    :class:`~eer_plugin.common.outputs.OutputError` (an output that is the input: nothing is read or written)."""
    check_options(scenario, **options)
    check_outputs(
        [("INPUT", input)], [("OUTPUT", path) for path in output_paths(output, options.get("learning_curve", False))]
    )
    docs = read_documents(input, **(reader_options or {}))
    try:
        for path, documents, stats in simulate(scenario, docs, output, **options):
            documents = simulators.variant(documents, variant)
            written = write_jsonl(documents, path)
            yield dict(stats, variant=variant, documents_written=written, output=str(path))
    except simulators.CorpusSimulationError as err:  # what the corpus cannot supply: name it
        raise simulators.CorpusSimulationError(f"{input}: {err}") from None
