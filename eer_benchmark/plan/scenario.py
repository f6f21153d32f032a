"""The data of a benchmark plan: a data set (train/dev/test files) and an annotation scenario (which
simulator makes the partial training data, with which parameters).

Runs and the expansion of a plan into runs are in :mod:`eer_benchmark.plan.plan`."""

import dataclasses
from typing import Any, Dict, Optional, Tuple

SCENARIO_TYPES = ("ee", "nns", "random", "gold", "dictionary")
#: parameters of each scenario type and their defaults (None: required)
SCENARIO_PARAMETERS: Dict[str, Dict[str, Any]] = {
    "ee": {"budget": 1000, "keep_probability": 0.8, "max_per_document": 10},
    "nns": {"recall": 0.5, "precision": 0.9, "max_fp_length": 3},
    "random": {"keep_probability": None},
    "gold": {},
    # a dictionary of this share of the training set's distinct gold entity forms (eer_plugin.annotation.dictionary_scenario)
    "dictionary": {"coverage": None},
}
EXHAUSTIVE_MAX_PER_DOCUMENT = 1_000_000_000
#: reader options of a dataset entry (the names of eer-simulate's / eer-inspect's options) -> the config
#: variable that hands them to the training configs' ``eer_documents`` reader
READER_OPTION_VARIABLES = {
    "tag_scheme": "EER_TAG_SCHEME",
    "file_encoding": "EER_FILE_ENCODING",
    "sentences_per_document": "EER_SENTENCES_PER_DOCUMENT",
    "tag_column": "EER_TAG_COLUMN",
}


def dataset_reader_options(entry: Dict[str, Any]) -> Dict[str, Any]:
    """The reader options of a dataset entry, checked (the values eer-simulate / eer-inspect accept);
    a bad one raises ValueError naming the key."""
    from eer_plugin.core.tags import normalize_encoding

    options = {key: entry[key] for key in READER_OPTION_VARIABLES if key in entry}
    scheme = options.get("tag_scheme", "auto")
    if scheme != "auto":
        try:
            options["tag_scheme"] = normalize_encoding(scheme if isinstance(scheme, str) else repr(scheme))
        except ValueError as err:
            raise ValueError(f"'tag_scheme': {err}") from None
    for key, lowest, meaning in (
        ("sentences_per_document", 1, "at least 1"),
        ("tag_column", None, "0-based, -1: the last column"),
    ):
        value = options.get(key, 0 if lowest is None else lowest)
        if not isinstance(value, int) or isinstance(value, bool) or (lowest is not None and value < lowest):
            raise ValueError(f"{key!r} must be a whole number ({meaning}), got {value!r}")
    if not isinstance(options.get("file_encoding", "auto"), str) or not options.get("file_encoding", "auto"):
        raise ValueError("'file_encoding' must be 'auto' or a codec name such as latin-1")
    return options


@dataclasses.dataclass(frozen=True)
class Dataset:
    name: str
    train: str
    dev: str
    test: str
    env: Tuple[Tuple[str, str], ...] = ()
    #: reader options given in the entry (keys of :data:`READER_OPTION_VARIABLES`)
    reader: Tuple[Tuple[str, Any], ...] = ()

    def read_options(self) -> Dict[str, Any]:
        """Keyword arguments of :func:`~eer_plugin.corpus.formats.read_documents` for the gold files."""
        options = dict(self.reader)
        if "tag_scheme" in options:
            options["encoding"] = options.pop("tag_scheme")
        return options

    def reader_env(self) -> Dict[str, str]:
        """The config variables of the entry's reader options."""
        return {READER_OPTION_VARIABLES[key]: str(value) for key, value in self.reader}


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    type: str
    params: Tuple[Tuple[str, Any], ...] = ()
    env: Tuple[Tuple[str, str], ...] = ()  # EER_* settings of this scenario's runs (over the plan's)
    epochs: Tuple[Tuple[str, int], ...] = ()  # variant -> epochs of this scenario's runs (over the plan's)
    min_steps: Optional[int] = None  # least optimizer steps of this scenario's runs (over the plan's)
    seeds: Optional[Tuple[int, ...]] = None  # seeds of this scenario's runs (None: the plan's)
    approaches: Optional[Tuple[str, ...]] = None  # approaches of this scenario's runs (None: the plan's, gold aside)

    def get(self, key: str) -> Any:
        return dict(self.params)[key]

    @property
    def spec(self) -> Tuple:
        return (self.type, self.params)

    def describe(self) -> str:
        p = dict(self.params)
        if self.type == "ee":
            text = f"Exploratory Expert (EE): {p['budget']:,} annotations"
            extras = []
            if p["keep_probability"] != 0.8:
                extras.append(f"keep probability {p['keep_probability']:g}")
            if p["max_per_document"] != 10:
                extras.append(
                    "whole documents"
                    if p["max_per_document"] >= EXHAUSTIVE_MAX_PER_DOCUMENT
                    else f"at most {p['max_per_document']} per document"
                )
            return text + (f" ({', '.join(extras)})" if extras else "")
        if self.type == "nns":
            return f"Non-Native Speaker (NNS): recall {p['recall']:.0%}, precision {p['precision']:.0%}"
        if self.type == "random":
            return f"uniform drop: each entity kept with probability {p['keep_probability']:g}"
        if self.type == "dictionary":
            return f"dictionary of {p['coverage']:.0%} of the training set's distinct gold entity forms, matched over its text"
        return "complete annotation"

    def simulate(self, docs, seed: int):
        from eer_plugin.annotation import simulators

        p = dict(self.params)
        if self.type == "ee":
            return simulators.exploratory_expert(docs, p["budget"], p["keep_probability"], p["max_per_document"], seed)
        if self.type == "nns":
            return simulators.non_native_speaker(docs, p["recall"], p["precision"], seed, p["max_fp_length"])
        if self.type == "random":
            return simulators.random_drop(docs, p["keep_probability"], seed)
        if self.type == "dictionary":
            from eer_plugin.annotation.dictionary_scenario import dictionary_annotation

            return dictionary_annotation(docs, p["coverage"], seed)
        return simulators.gold(docs)

    def simulate_with_complete_documents(self, docs, seed: int, complete_documents: int):
        """This EE scenario's data with ``complete_documents`` documents annotated completely within its budget
        (a dictionary scenario: those documents complete, the dictionary's labels on the others)."""
        from eer_plugin.annotation import simulators

        p = dict(self.params)
        if self.type == "dictionary":
            from eer_plugin.annotation.dictionary_scenario import dictionary_with_complete_documents

            return dictionary_with_complete_documents(docs, p["coverage"], complete_documents, seed)
        return simulators.ee_with_complete_documents(
            docs, p["budget"], complete_documents, p["keep_probability"], p["max_per_document"], seed
        )
