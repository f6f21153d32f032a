"""One simulated annotation scenario as ``eer-simulate`` runs it: the scenario's simulator
(:mod:`eer_plugin.annotation.simulators`) with the options given, every option left out (None) taking the
simulator's own default (read from its signature, declared once there), the learning curve's budgets and the
output file of each."""

import inspect
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from eer_plugin.annotation import dictionary_scenario, simulators
from eer_plugin.corpus.documents import Document

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
    "variant": simulators.VARIANTS[0],
}


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
