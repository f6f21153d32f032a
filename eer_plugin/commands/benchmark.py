"""``allennlp eer-benchmark``: run a benchmark plan (the paper's results table and analyses) and
write the tables.

::

    allennlp eer-benchmark PLAN -o OUTDIR [--jobs N] [--shard i/n] [--dry-run] [--report-only]

PLAN is a jsonnet, JSON or YAML file (see README, "Reproducing the benchmark table")::

    {datasets: [{name: 'eng-c', train: '...', dev: '...', test: '...'}],
     scenarios: [{name: 'EE', type: 'ee', budget: 1000}, {name: 'NNS', type: 'nns'}],
     approaches: ['gold', 'raw_shortest', 'raw_cd_shortest', 'cbl_bert_shortest', 'sns_shortest',
                  'eer_all', 'eer_short', 'eer_shortest'],
     encoders: ['all-MiniLM-L6-v2'], seeds: [0, 1, 2], epochs: 10, env: {EER_BATCH_SIZE: '8'},
     reference: 'sns_shortest',                     // significance marks vs this approach
     ratio_grid: [[0.15, 0.15], [0.15, 0.0]],       // (rho, gamma) of eer_short
     learning_curve: {budgets: [100, 500, 1000], approaches: ['eer_short', 'raw_shortest']}}

A *run* is (dataset, scenario, approach, encoder, seed) plus, for the ratio grid, a (rho, gamma)
setting. Each run is an ordinary AllenNLP serialization directory
``OUTDIR/runs/<dataset>/<scenario>/<approach>/<encoder>/seed<k>`` made by a subprocess
(``allennlp train``, ``allennlp cbl``, ``allennlp tune-o-cost``), followed by a per-document
evaluation on the test data (:mod:`eer_plugin.evaluation`). Simulated partial training data is
written once per (dataset, scenario, seed) to ``OUTDIR/data``. A run is finished when its ``DONE``
marker exists (written last, atomically); finished runs are skipped, so an interrupted benchmark
resumes where it stopped. A failing run is retried once, then recorded as failed (``FAILED.json``,
its log under ``OUTDIR/logs``) and retried on the next invocation.

Outputs: ``OUTDIR/results.csv`` (one row per run of the plan, whatever its status) and
``OUTDIR/results.md`` (the tables), plus ``learning_curve.csv/.png`` and
``rho_hat_over_epochs.png`` when the plan asks for those analyses.
"""
import argparse
import csv
import dataclasses
import fnmatch
import io
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from eer_plugin.encoders import REPO_ROOT, config_defaults

CONFIG_DIR = REPO_ROOT / "training_configs"
FAMILIES = ("raw", "raw_cd", "cbl_lstm", "cbl_bert", "sns", "eer")
CBL_FAMILIES = ("cbl_lstm", "cbl_bert")  # run with `allennlp cbl`; the final model is in <run>/final
VARIANTS = ("all", "short", "shortest")
KNOWN_APPROACHES = ("gold",) + tuple(f"{family}_{variant}" for family in FAMILIES for variant in VARIANTS)
FAMILY_LABELS = {
    "gold": "Gold", "raw": "Raw", "raw_cd": "Raw+CD", "cbl_lstm": "CBL-LSTM", "cbl_bert": "CBL-BERT", "sns": "SNS", "eer": "EER",
}  # fmt: skip
SCENARIO_TYPES = ("ee", "nns", "random", "gold")
#: parameters of each scenario type and their defaults (None: required)
SCENARIO_PARAMETERS: Dict[str, Dict[str, Any]] = {
    "ee": {"budget": 1000, "keep_probability": 0.8, "max_per_document": 10},
    "nns": {"recall": 0.5, "precision": 0.9, "max_fp_length": 3},
    "random": {"keep_probability": None},
    "gold": {},
}
PLAN_KEYS = (
    "name", "description", "datasets", "scenarios", "approaches", "encoders", "seeds", "epochs", "env",
    "reference", "ratio_grid", "learning_curve", "bootstrap",
)  # fmt: skip
#: EER_* variables the plan sets through its own keys, not through ``env``
CONTROLLED_VARIABLES = {
    "EER_TRAIN_DATA": "datasets[].train (simulated per scenario)",
    "EER_GOLD_TRAIN_DATA": "datasets[].train",
    "EER_DEV_DATA": "datasets[].dev",
    "EER_TEST_DATA": "datasets[].test",
    "EER_SEED": "seeds",
}
#: settings compared between a finished run and the current plan (a mismatch is an error)
COMPARED_SETTINGS = (
    "EER_EPOCHS", "EER_BATCH_SIZE", "EER_LEARNING_RATE", "EER_MAX_LENGTH", "EER_ENTITY_RATIO", "EER_RATIO_MARGIN",
    "EER_RATIO_LOSS_WEIGHT", "EER_CBL_ROUND_EPOCHS",
)  # fmt: skip
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
GOLD_SCENARIO = "gold"  # directory of the gold approach's runs (it ignores the scenario)
EXHAUSTIVE_MAX_PER_DOCUMENT = 1_000_000_000
CSV_COLUMNS = (
    "dataset", "scenario", "approach", "encoder", "seed", "status", "precision", "recall", "f1", "rho_hat",
    "seconds", "run_dir", "log", "study", "entity_ratio", "ratio_margin", "rho_star", "tp", "fp", "fn",
    "eval_seconds", "o_cost", "error",
)  # fmt: skip


class PlanError(ValueError):
    """An invalid benchmark plan; the message names the key and what was expected."""


class StepFailed(RuntimeError):
    """A subprocess of a run exited with a non-zero status (or a run could not be set up)."""


# =============================================================================== plan
def split_approach(approach: str) -> Tuple[str, str]:
    """``raw_cd_shortest`` -> ``("raw_cd", "shortest")``; ``gold`` -> ``("gold", "all")``."""
    if approach == "gold":
        return "gold", "all"
    family, _, variant = approach.rpartition("_")
    return family, variant


def approach_label(approach: str) -> str:
    family, variant = split_approach(approach)
    return f"{FAMILY_LABELS[family]}-{variant}"


def slug(text: str) -> str:
    """A directory name for an encoder name or path (its last component)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", text.rstrip("/").split("/")[-1]) or "encoder"


def _number_text(value: float) -> str:
    return f"{float(value):g}"


@dataclasses.dataclass(frozen=True)
class Dataset:
    name: str
    train: str
    dev: str
    test: str
    env: Tuple[Tuple[str, str], ...] = ()


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    type: str
    params: Tuple[Tuple[str, Any], ...] = ()
    env: Tuple[Tuple[str, str], ...] = ()  # EER_* settings of this scenario's runs (over the plan's)
    epochs: Tuple[Tuple[str, int], ...] = ()  # variant -> epochs of this scenario's runs (over the plan's)

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
                    "whole documents" if p["max_per_document"] >= EXHAUSTIVE_MAX_PER_DOCUMENT
                    else f"at most {p['max_per_document']} per document"
                )  # fmt: skip
            return text + (f" ({', '.join(extras)})" if extras else "")
        if self.type == "nns":
            return f"Non-Native Speaker (NNS): recall {p['recall']:.0%}, precision {p['precision']:.0%}"
        if self.type == "random":
            return f"uniform drop: each entity kept with probability {p['keep_probability']:g}"
        return "complete annotation"

    def simulate(self, docs, seed: int):
        from eer_plugin.core import simulators

        p = dict(self.params)
        if self.type == "ee":
            return simulators.exploratory_expert(docs, p["budget"], p["keep_probability"], p["max_per_document"], seed)
        if self.type == "nns":
            return simulators.non_native_speaker(docs, p["recall"], p["precision"], seed, p["max_fp_length"])
        if self.type == "random":
            return simulators.random_drop(docs, p["keep_probability"], seed)
        return simulators.gold(docs)


@dataclasses.dataclass(eq=False)
class Run:
    dataset: Dataset
    scenario: Optional[Scenario]  # None for the gold approach
    approach: str
    encoder: str
    encoder_slug: str
    seed: int
    ratio: Optional[Tuple[float, float]] = None  # (rho, gamma) when it differs from the plan's
    studies: List[str] = dataclasses.field(default_factory=list)

    @property
    def scenario_name(self) -> str:
        return self.scenario.name if self.scenario is not None else GOLD_SCENARIO

    @property
    def key(self) -> Tuple:
        return (self.dataset.name, self.scenario_name, self.approach, self.encoder, self.seed, self.ratio)

    @property
    def family(self) -> str:
        return split_approach(self.approach)[0]

    @property
    def variant(self) -> str:
        return split_approach(self.approach)[1]

    @property
    def approach_dir(self) -> str:
        if self.ratio is None:
            return self.approach
        return f"{self.approach}_rho{_number_text(self.ratio[0])}_gamma{_number_text(self.ratio[1])}"

    @property
    def rel(self) -> Path:
        return Path(self.dataset.name) / self.scenario_name / self.approach_dir / self.encoder_slug / f"seed{self.seed}"

    @property
    def name(self) -> str:
        return str(self.rel)


@dataclasses.dataclass
class Plan:
    path: str
    name: str
    datasets: List[Dataset]
    scenarios: List[Scenario]
    approaches: List[str]
    encoders: List[str]
    encoder_slugs: Dict[str, str]
    seeds: List[int]
    env: Dict[str, str]
    epochs: Dict[str, int]  # variant -> epochs (empty: the config's defaults); scenarios may override
    reference: Optional[str]
    ratio_grid: Optional[Dict[str, Any]]
    learning_curve: Optional[Dict[str, Any]]
    bootstrap: Dict[str, Any]
    # filled by expand()
    runs: List[Run] = dataclasses.field(default_factory=list)
    ratio_entries: List[Tuple[Tuple, Tuple[float, float], Run]] = dataclasses.field(default_factory=list)
    lc_entries: List[Tuple[str, str, int, Run]] = dataclasses.field(default_factory=list)

    def dataset_env(self, dataset: Dataset) -> Dict[str, str]:
        return {**config_defaults(), **self.env, **dict(dataset.env)}

    def run_env(self, dataset: Dataset, scenario: Optional[Scenario], variant: str) -> Dict[str, str]:
        """The EER_* settings of a run: config defaults < plan env < dataset env < scenario env, and
        EER_EPOCHS from the scenario's or the plan's ``epochs`` for the run's variant."""
        env = self.dataset_env(dataset)
        epochs = dict(self.epochs)
        if scenario is not None:
            env.update(dict(scenario.env))
            epochs.update(dict(scenario.epochs))
        if variant in epochs:
            env["EER_EPOCHS"] = str(epochs[variant])
        return env

    def epochs_description(self) -> str:
        text = epochs_text(self.epochs)
        overrides = [f"{s.name}: {epochs_text({**self.epochs, **dict(s.epochs)})}" for s in self.scenarios if s.epochs]
        return text + (f" (scenario {'; '.join(overrides)})" if overrides else "")

    def base_ratio(self, dataset: Dataset) -> Tuple[float, float]:
        env = self.dataset_env(dataset)
        return float(env["EER_ENTITY_RATIO"]), float(env["EER_RATIO_MARGIN"])

    # ------------------------------------------------------------------ expansion
    def expand(self) -> "Plan":
        """The runs of the plan in a fixed order (benchmark, ratio grid, learning curve), each once."""
        by_key: Dict[Tuple, Run] = {}
        runs: List[Run] = []

        def add(dataset, scenario, approach, encoder, seed, study, ratio=None) -> Run:
            if ratio is not None and tuple(ratio) == self.base_ratio(dataset):
                ratio = None
            run = Run(dataset, scenario, approach, encoder, self.encoder_slugs[encoder], seed, ratio)
            existing = by_key.get(run.key)
            if existing is None:
                by_key[run.key] = existing = run
                runs.append(run)
            if study not in existing.studies:
                existing.studies.append(study)
            return existing

        for dataset in self.datasets:
            if "gold" in self.approaches:
                for encoder in self.encoders:
                    for seed in self.seeds:
                        add(dataset, None, "gold", encoder, seed, "benchmark")
            for scenario in self.scenarios:
                for approach in self.approaches:
                    if approach == "gold":
                        continue
                    for encoder in self.encoders:
                        for seed in self.seeds:
                            add(dataset, scenario, approach, encoder, seed, "benchmark")
        grid = self.ratio_grid
        if grid:
            for dataset in self._datasets(grid["datasets"]):
                for scenario in self._scenarios(grid["scenarios"]):
                    for encoder in self.encoders:
                        for rho, gamma in grid["settings"]:
                            for seed in self.seeds:
                                run = add(dataset, scenario, grid["approach"], encoder, seed, "ratio_grid", (rho, gamma))
                                self.ratio_entries.append(((dataset.name, scenario.name, encoder), (rho, gamma), run))
        curve = self.learning_curve
        if curve:
            by_spec = {s.spec: s for s in self.scenarios}
            names = {s.name for s in self.scenarios}
            for dataset in self._datasets(curve["datasets"]):
                for scheme in curve["schemes"]:
                    for budget in curve["budgets"]:
                        scenario = self._curve_scenario(scheme, budget, curve["keep_probability"], by_spec, names)
                        for approach in curve["approaches"]:
                            for encoder in self.encoders:
                                for seed in self.seeds:
                                    run = add(dataset, scenario, approach, encoder, seed, "learning_curve")
                                    self.lc_entries.append((dataset.name, scheme, budget, run))
        self.runs = runs
        return self

    def _curve_scenario(self, scheme, budget, keep, by_spec, names) -> Scenario:
        from eer_plugin.core.simulators import learning_curve_max_per_document

        if scheme == "ee":
            params = {"budget": budget, "keep_probability": keep, "max_per_document": learning_curve_max_per_document(budget)}
            name = f"EE-{budget}"
        else:  # exhaustive: linear annotation of whole documents in random order
            params = {"budget": budget, "keep_probability": 1.0, "max_per_document": EXHAUSTIVE_MAX_PER_DOCUMENT}
            name = f"Exh-{budget}"
        scenario = Scenario(name, "ee", tuple(sorted(params.items())))
        if scenario.spec in by_spec:
            return by_spec[scenario.spec]  # the same data as a benchmark scenario: share its runs
        if name in names:
            scenario = dataclasses.replace(scenario, name=f"{name}-lc")
        by_spec[scenario.spec] = scenario
        return scenario

    def _datasets(self, names: Optional[List[str]]) -> List[Dataset]:
        return [d for d in self.datasets if names is None or d.name in names]

    def _scenarios(self, names: Optional[List[str]]) -> List[Scenario]:
        if names is not None:
            return [s for s in self.scenarios if s.name in names]
        ee = [s for s in self.scenarios if s.type == "ee"]
        return ee or list(self.scenarios)

    def units(self) -> List[List[Run]]:
        """Runs grouped into independent units, in run order: a ``raw_cd_<v>`` run joins the unit of
        the ``raw_<v>`` run it tunes (when the plan has that run), so the two never run apart."""
        by_key = {run.key: run for run in self.runs}
        units: List[List[Run]] = []
        unit_of: Dict[Tuple, List[Run]] = {}
        for run in self.runs:
            if run.key in unit_of:
                continue
            unit = [run]
            unit_of[run.key] = unit
            if run.family in ("raw", "raw_cd"):
                partner_approach = f"raw_cd_{run.variant}" if run.family == "raw" else f"raw_{run.variant}"
                partner_key = (run.key[0], run.key[1], partner_approach) + run.key[3:]
                partner = by_key.get(partner_key)
                if partner is not None and partner.key not in unit_of:
                    unit.append(partner)
                    unit_of[partner.key] = unit
            unit.sort(key=lambda r: r.family != "raw")  # the raw run first
            units.append(unit)
        return units

    def raw_partner(self, run: Run) -> Optional[Run]:
        """The plan's ``raw_<v>`` run that a ``raw_cd_<v>`` run tunes, if the plan has it."""
        key = (run.key[0], run.key[1], f"raw_{run.variant}") + run.key[3:]
        return next((r for r in self.runs if r.key == key), None)


def read_plan_file(path: str) -> Any:
    """A plan file as Python data: ``.yaml``/``.yml`` with PyYAML, anything else as jsonnet (which
    includes JSON; ``std.extVar(NAME)`` reads environment variables)."""
    p = Path(path)
    if not p.is_file():
        raise PlanError(f"plan file not found: {p}")
    if p.suffix in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(p.read_text())
        except yaml.YAMLError as err:
            raise PlanError(f"{p}: invalid YAML: {err}") from None
    import _jsonnet

    try:
        text = _jsonnet.evaluate_file(str(p), ext_vars={k: v for k, v in os.environ.items()})
    except RuntimeError as err:
        raise PlanError(f"{p}: invalid jsonnet: {err}") from None
    return json.loads(text)


def load_plan(path: str, check_files: bool = True) -> Plan:
    """Reads and validates a plan (relative data paths are relative to the current directory)."""
    return parse_plan(read_plan_file(path), str(path), check_files).expand()


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise PlanError(message)


def _check_keys(data: Mapping, allowed: Sequence[str], where: str) -> None:
    unknown = [k for k in data if k not in allowed]
    _require(not unknown, f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; expected {', '.join(allowed)}")


def _names(values, where: str) -> List[str]:
    _require(isinstance(values, list) and all(isinstance(v, str) for v in values), f"{where} must be a list of names")
    return list(values)


def _env(data: Any, where: str) -> Dict[str, str]:
    _require(isinstance(data, dict), f"{where} must be a mapping of environment variables to values")
    env = {}
    for key, value in data.items():
        _require(isinstance(key, str) and bool(key), f"{where}: variable names must be strings")
        _require(
            key not in CONTROLLED_VARIABLES,
            f"{where}: {key} is set by the runner from the plan's {CONTROLLED_VARIABLES.get(key)}; do not set it in env",
        )
        _require(value is not None and not isinstance(value, (dict, list)), f"{where}: {key} must be a string or number")
        env[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return env


def _resolve(path: Any, where: str, check: bool) -> str:
    _require(isinstance(path, str) and bool(path), f"{where} must be a file path")
    resolved = Path(path).expanduser()
    if not resolved.is_absolute():
        resolved = Path.cwd() / resolved
    resolved = Path(os.path.normpath(resolved))
    if check and not resolved.exists():
        raise PlanError(f"{where}: file not found: {resolved} (relative paths are relative to the current directory {Path.cwd()})")
    return str(resolved)


def _scenario(data: Any, index: int) -> Scenario:
    where = f"scenarios[{index}]"
    _require(isinstance(data, dict), f"{where} must be a mapping with 'name' and 'type'")
    name, kind = data.get("name"), data.get("type")
    _require(isinstance(name, str) and bool(NAME_PATTERN.match(name or "")), f"{where}: 'name' must be a name like 'EE-1000' (letters, digits, . _ + -), got {name!r}")
    where = f"scenario {name!r}"
    _require(name != GOLD_SCENARIO, f"{where}: the name 'gold' is reserved for the gold approach's runs")
    _require(kind in SCENARIO_TYPES, f"{where}: unknown type {kind!r}; expected one of {', '.join(SCENARIO_TYPES)}")
    defaults = SCENARIO_PARAMETERS[kind]
    _check_keys(data, ["name", "type", "env", "epochs", *defaults], where)
    params = {}
    for key, default in defaults.items():
        value = data.get(key, default)
        _require(value is not None, f"{where}: type {kind!r} needs {key!r}")
        if key in ("budget", "max_per_document", "max_fp_length"):
            _require(isinstance(value, int) and not isinstance(value, bool) and value >= 1, f"{where}: {key!r} must be a positive integer, got {value!r}")
        else:
            _require(isinstance(value, (int, float)) and 0 < value <= 1, f"{where}: {key!r} must be a number in (0, 1], got {value!r}")
            value = float(value)
        params[key] = value
    env = _env(data.get("env", {}), f"{where}: env")
    _require("EER_EPOCHS" not in env, f"{where}: set epochs with the scenario's 'epochs', not env.EER_EPOCHS")
    epochs = _epochs(data["epochs"], f"{where}: 'epochs'") if "epochs" in data else {}
    return Scenario(name, kind, tuple(sorted(params.items())), tuple(sorted(env.items())), tuple(sorted(epochs.items())))


def _epochs(value: Any, where: str) -> Dict[str, int]:
    """``epochs`` of a plan or scenario: one positive integer for every variant, or a mapping from
    variant (all, short, shortest) to a positive integer (a variant left out keeps the config default,
    the paper's 20 for all and 50 for short and shortest)."""
    def positive(number: Any) -> bool:
        return isinstance(number, int) and not isinstance(number, bool) and number >= 1

    if isinstance(value, dict):
        for key, number in value.items():
            _require(key in VARIANTS, f"{where}: unknown variant {key!r}; expected {', '.join(VARIANTS)}")
            _require(positive(number), f"{where}: {key!r} must be a positive integer, got {number!r}")
        return dict(value)
    _require(positive(value), f"{where} must be a positive integer or a mapping like {{all: 2, short: 10, shortest: 10}}, got {value!r}")
    return {variant: value for variant in VARIANTS}


def epochs_text(epochs: Mapping[str, int]) -> str:
    """``{all: 2, short: 10, shortest: 10}`` -> ``'2 (all), 10 (short, shortest)'``; ``{}`` -> the config default."""
    if not epochs:
        return "config default (20 all / 50 short, shortest)"
    values = {epochs.get(v) for v in VARIANTS}
    if len(values) == 1 and None not in values:
        return str(values.pop())
    groups: Dict[Any, List[str]] = {}
    for variant in VARIANTS:
        groups.setdefault(epochs.get(variant, "default"), []).append(variant)
    return ", ".join(f"{number} ({', '.join(names)})" for number, names in groups.items())


def _approaches(values: Any, where: str) -> List[str]:
    names = _names(values, where)
    for name in names:
        _require(name in KNOWN_APPROACHES, f"{where}: unknown approach {name!r}; known approaches: {', '.join(KNOWN_APPROACHES)}")
    _require(len(set(names)) == len(names), f"{where}: an approach is listed twice")
    return names


def parse_plan(data: Any, path: str = "<plan>", check_files: bool = True) -> Plan:
    """Validates plan data (see the module docstring); errors are :class:`PlanError` naming the key."""
    try:
        return _parse_plan(data, path, check_files)
    except PlanError as err:
        raise PlanError(f"plan {path}: {err}") from None


def _parse_plan(data: Any, path: str, check_files: bool) -> Plan:
    _require(isinstance(data, dict), "the plan must be a mapping (jsonnet/JSON object or YAML mapping)")
    _check_keys(data, PLAN_KEYS, "plan")
    env = _env(data.get("env", {}), "env")

    datasets: List[Dataset] = []
    _require(isinstance(data.get("datasets"), list) and data["datasets"], "'datasets' must be a non-empty list of {name, train, dev, test}")
    for index, item in enumerate(data["datasets"]):
        _require(isinstance(item, dict), f"datasets[{index}] must be a mapping with name, train, dev, test")
        name = item.get("name")
        _require(isinstance(name, str) and bool(NAME_PATTERN.match(name or "")), f"datasets[{index}]: 'name' must be a name like 'eng-c', got {name!r}")
        where = f"dataset {name!r}"
        _check_keys(item, ["name", "train", "dev", "test", "env"], where)
        for key in ("train", "dev", "test"):
            _require(key in item, f"{where}: missing key {key!r} (a gold data file)")
        files = {key: _resolve(item[key], f"{where}: {key!r}", check_files) for key in ("train", "dev", "test")}
        dataset_env = _env(item.get("env", {}), f"{where}: env")
        datasets.append(Dataset(name, files["train"], files["dev"], files["test"], tuple(sorted(dataset_env.items()))))
    _require(len({d.name for d in datasets}) == len(datasets), "two datasets have the same name")

    _require("approaches" in data, f"'approaches' is missing; known approaches: {', '.join(KNOWN_APPROACHES)}")
    approaches = _approaches(data["approaches"], "approaches")
    _require(bool(approaches), "'approaches' is empty")
    scenarios = [_scenario(item, i) for i, item in enumerate(data.get("scenarios") or [])]
    _require(len({s.name for s in scenarios}) == len(scenarios), "two scenarios have the same name")
    _require(bool(scenarios) or approaches == ["gold"], "'scenarios' is empty, but approaches other than 'gold' need one")

    if "encoders" in data:
        _require("EER_ENCODER" not in env, "set the encoder either with 'encoders' or with env.EER_ENCODER, not both")
        encoders = _names(data["encoders"], "encoders")
        _require(bool(encoders), "'encoders' is empty")
    else:
        encoders = [env.pop("EER_ENCODER", config_defaults()["EER_ENCODER"])]
    env.pop("EER_ENCODER", None)
    slugs = {e: slug(e) for e in encoders}
    _require(len(set(slugs.values())) == len(slugs), f"two encoders share the directory name: {slugs}")

    seeds = data.get("seeds", [0])
    _require(
        isinstance(seeds, list) and seeds and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds),
        f"'seeds' must be a non-empty list of non-negative integers, got {seeds!r}",
    )
    _require(len(set(seeds)) == len(seeds), "'seeds' lists a seed twice")
    epochs: Dict[str, int] = {}
    if "epochs" in data:
        _require("EER_EPOCHS" not in env, "set epochs either with 'epochs' or with env.EER_EPOCHS, not both")
        epochs = _epochs(data["epochs"], "'epochs'")
    elif "EER_EPOCHS" in env:
        _require(env["EER_EPOCHS"].isdigit() and int(env["EER_EPOCHS"]) >= 1, f"env: EER_EPOCHS must be a positive integer, got {env['EER_EPOCHS']!r}")
        epochs = _epochs(int(env.pop("EER_EPOCHS")), "env: EER_EPOCHS")
    for key in ("EER_ENTITY_RATIO", "EER_RATIO_MARGIN"):
        places = [("env", env)] + [(f"dataset {d.name!r}: env", dict(d.env)) for d in datasets]
        places += [(f"scenario {s.name!r}: env", dict(s.env)) for s in scenarios]
        for where, values in places:
            if key in values:
                try:
                    float(values[key])
                except ValueError:
                    raise PlanError(f"{where}: {key} must be a number, got {values[key]!r}") from None

    reference = data.get("reference")
    if reference is not None:
        _require(isinstance(reference, str) and reference in KNOWN_APPROACHES, f"'reference': unknown approach {reference!r}; known approaches: {', '.join(KNOWN_APPROACHES)}")
        _require(reference in approaches and reference != "gold", f"'reference' {reference!r} must be one of the plan's approaches other than gold")

    dataset_names, scenario_names = [d.name for d in datasets], [s.name for s in scenarios]

    def subset(values, known, where):
        if values is None:
            return None
        names = _names(values, where)
        for name in names:
            _require(name in known, f"{where}: unknown name {name!r}; the plan has {', '.join(known)}")
        return names

    grid = data.get("ratio_grid")
    if grid is not None:
        if isinstance(grid, list):
            grid = {"settings": grid}
        _require(isinstance(grid, dict), "'ratio_grid' must be a list of [rho, gamma] pairs or a mapping with 'settings'")
        _check_keys(grid, ["settings", "approach", "datasets", "scenarios"], "ratio_grid")
        settings = grid.get("settings")
        _require(isinstance(settings, list) and settings, "ratio_grid: 'settings' must be a non-empty list of [rho, gamma] pairs")
        pairs = []
        for pair in settings:
            _require(
                isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in pair)
                and 0 <= pair[0] <= 1 and pair[1] >= 0,
                f"ratio_grid: each setting must be [rho, gamma] with 0 <= rho <= 1 and gamma >= 0, got {pair!r}",
            )  # fmt: skip
            pairs.append((float(pair[0]), float(pair[1])))
        approach = grid.get("approach", "eer_short")
        _require(approach in KNOWN_APPROACHES and split_approach(approach)[0] == "eer", f"ratio_grid: 'approach' must be an EER approach (eer_all, eer_short, eer_shortest), got {approach!r}")
        _require(bool(scenarios), "ratio_grid needs a scenario")
        grid = {
            "settings": pairs, "approach": approach,
            "datasets": subset(grid.get("datasets"), dataset_names, "ratio_grid.datasets"),
            "scenarios": subset(grid.get("scenarios"), scenario_names, "ratio_grid.scenarios"),
        }  # fmt: skip

    curve = data.get("learning_curve")
    if curve is not None:
        _require(isinstance(curve, dict), "'learning_curve' must be a mapping with 'budgets' and 'approaches'")
        _check_keys(curve, ["budgets", "approaches", "datasets", "schemes", "keep_probability"], "learning_curve")
        budgets = curve.get("budgets")
        _require(
            isinstance(budgets, list) and budgets and all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in budgets),
            f"learning_curve: 'budgets' must be a non-empty list of positive integers, got {budgets!r}",
        )
        lc_approaches = _approaches(curve.get("approaches", ["eer_short", "raw_shortest"]), "learning_curve.approaches")
        _require("gold" not in lc_approaches, "learning_curve.approaches: 'gold' ignores the budget; put it in 'approaches' (it is drawn as a line)")
        schemes = _names(curve.get("schemes", ["ee", "exhaustive"]), "learning_curve.schemes")
        for scheme in schemes:
            _require(scheme in ("ee", "exhaustive"), f"learning_curve.schemes: unknown scheme {scheme!r}; expected 'ee' or 'exhaustive'")
        keep = curve.get("keep_probability", 0.8)
        _require(isinstance(keep, (int, float)) and 0 < keep <= 1, f"learning_curve: 'keep_probability' must be in (0, 1], got {keep!r}")
        curve = {
            "budgets": sorted(set(budgets)), "approaches": lc_approaches, "schemes": schemes, "keep_probability": float(keep),
            "datasets": subset(curve.get("datasets"), dataset_names, "learning_curve.datasets"),
        }  # fmt: skip

    bootstrap = {"resamples": 100_000, "confidence": 0.99, "seed": 0}
    if data.get("bootstrap") is not None:
        _require(isinstance(data["bootstrap"], dict), "'bootstrap' must be a mapping with resamples, confidence, seed")
        _check_keys(data["bootstrap"], list(bootstrap), "bootstrap")
        bootstrap.update(data["bootstrap"])
        _require(isinstance(bootstrap["resamples"], int) and bootstrap["resamples"] >= 1, "bootstrap: 'resamples' must be a positive integer")
        _require(isinstance(bootstrap["confidence"], float) and 0 < bootstrap["confidence"] < 1, "bootstrap: 'confidence' must be in (0, 1)")
        _require(isinstance(bootstrap["seed"], int), "bootstrap: 'seed' must be an integer")
    return Plan(
        path=str(path), name=str(data.get("name") or Path(path).stem), datasets=datasets, scenarios=scenarios,
        approaches=approaches, encoders=encoders, encoder_slugs=slugs, seeds=list(seeds), env=env, epochs=epochs,
        reference=reference, ratio_grid=grid, learning_curve=curve, bootstrap=bootstrap,
    )  # fmt: skip


def parse_shard(text: str) -> Tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match or not 0 <= int(match[1]) < int(match[2]):
        raise argparse.ArgumentTypeError(f"--shard must be i/n with 0 <= i < n, e.g. 0/4; got {text!r}")
    return int(match[1]), int(match[2])


# =============================================================================== running
def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def _read_json(path: Path) -> Optional[dict]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


class Runner:
    """Executes the runs of a plan under ``outdir`` and reads their state back from disk."""

    def __init__(
        self, plan: Plan, outdir: str, jobs: int = 1, threads: Optional[int] = None, retries: int = 1, echo=print,
        keep_checkpoints: bool = False,
    ):  # fmt: skip
        self.plan = plan
        self.keep_checkpoints = keep_checkpoints
        self.outdir = Path(outdir).resolve()
        self.jobs = max(1, jobs)
        self.threads = threads or max(1, (os.cpu_count() or 1) // self.jobs)
        self.retries = retries
        self.echo = echo
        self._lock = threading.Lock()
        self._gold_cache: Dict[str, list] = {}
        self._data_errors: Dict[Tuple, str] = {}
        self._progress = None
        self._counter = 0
        self._total = 0
        self._stopping = False  # set on Ctrl-C / SIGTERM: no retry, no new run, no failure record
        self._children: set = set()  # running subprocesses of runs

    # ------------------------------------------------------------------ paths and state
    def run_dir(self, run: Run) -> Path:
        return self.outdir / "runs" / run.rel

    def log_path(self, run: Run) -> Path:
        return self.outdir / "logs" / run.rel.parent / f"{run.rel.name}.log"

    def data_path(self, run: Run) -> Path:
        return self.simulated_path(run.dataset.name, run.scenario_name, run.seed)

    def simulated_path(self, dataset: str, scenario: str, seed: int, suffix: str = ".jsonl") -> Path:
        """The simulated partial training data of a scenario (``.jsonl``) or its statistics (``.stats.json``)."""
        return self.outdir / "data" / dataset / scenario / f"seed{seed}{suffix}"

    def record(self, run: Run) -> dict:
        """The run's state on disk: its result (``done``), its failure record (``failed``) or ``missing``."""
        directory = self.run_dir(run)
        if (directory / "DONE").exists():
            result = _read_json(directory / "result.json")
            if result is not None:
                return result
        failure = _read_json(directory / "FAILED.json")
        if failure is not None:
            return failure
        return {"status": "missing", "run_dir": str(directory), "log": str(self.log_path(run))}

    def is_done(self, run: Run) -> bool:
        return (self.run_dir(run) / "DONE").exists()

    def settings(self, run: Run) -> Dict[str, str]:
        env = self.environment(run, for_settings=True)
        return {key: env.get(key, "") for key in COMPARED_SETTINGS}

    def stale_runs(self, runs: Iterable[Run]) -> List[str]:
        """Finished runs whose recorded settings differ from the plan's (e.g. other epochs)."""
        stale = []
        for run in runs:
            if not self.is_done(run):
                continue
            recorded = (self.record(run).get("settings") or {})
            current = self.settings(run)
            diff = [f"{k} {recorded.get(k)!r} (now {v!r})" for k, v in current.items() if k in recorded and recorded[k] != v]
            if diff:
                stale.append(f"{run.name}: {', '.join(diff)}")
        return stale

    # ------------------------------------------------------------------ environment and commands
    def environment(self, run: Run, for_settings: bool = False) -> Dict[str, str]:
        """The subprocess environment: the caller's environment without any EER_* variable, the
        config defaults, the plan's env, the dataset's env, then the run's own settings."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("EER_")}
        env.update(self.plan.run_env(run.dataset, run.scenario, run.variant))
        env.update(
            EER_TRAIN_DATA=str(self.data_path(run)) if run.scenario is not None else run.dataset.train,
            EER_GOLD_TRAIN_DATA=run.dataset.train,
            EER_DEV_DATA=run.dataset.dev,
            EER_TEST_DATA=run.dataset.test,
            EER_ENCODER=run.encoder,
            EER_SEED=str(run.seed),
        )
        if run.ratio is not None:
            env["EER_ENTITY_RATIO"], env["EER_RATIO_MARGIN"] = (_number_text(v) for v in run.ratio)
        if not for_settings:
            for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
                if key not in self.plan.env:
                    env[key] = str(self.threads)
            env.setdefault("TOKENIZERS_PARALLELISM", "false")
            env["PYTHONUNBUFFERED"] = "1"
        return env

    def commands(self, run: Run) -> List[List[str]]:
        """The main commands of a run (for --dry-run; see :meth:`_attempt` for the whole sequence)."""
        directory = self.run_dir(run)
        include = ["--include-package", "eer_plugin"]
        if run.family in CBL_FAMILIES:
            return [["allennlp", "cbl", str(CONFIG_DIR / f"{run.approach}.jsonnet"), "-s", str(directory), *include]]
        if run.family == "raw_cd":
            partner = self.plan.raw_partner(run)
            raw_dir = self.run_dir(partner) if partner else directory / "raw"
            commands = [] if partner else [["allennlp", "train", str(CONFIG_DIR / f"raw_{run.variant}.jsonnet"), "-s", str(raw_dir), *include]]
            return commands + [[
                "allennlp", "tune-o-cost", str(raw_dir / "model.tar.gz"), run.dataset.dev, "--test-file", run.dataset.test,
                "--seed", str(run.seed), "--output-archive", str(directory / "model_o_cost.tar.gz"), *include,
            ]]  # fmt: skip
        return [["allennlp", "train", str(CONFIG_DIR / f"{run.approach}.jsonnet"), "-s", str(directory), *include]]

    def _subprocess(self, command: List[str], env: Dict[str, str], log: Path, step: str) -> float:
        if command[0] == "allennlp":
            command = [sys.executable, "-m", "allennlp", *command[1:]]
        started = time.time()
        with open(log, "a") as handle:
            handle.write(f"\n--- {step}: {' '.join(command)}\n")
            handle.flush()
            process = subprocess.Popen(command, env=env, stdout=handle, stderr=subprocess.STDOUT, cwd=str(REPO_ROOT))
            with self._lock:
                self._children.add(process)
            try:
                code = process.wait()
            except BaseException:  # interrupted (Ctrl-C, SIGTERM): the run's subprocess stops with us
                process.kill()
                process.wait()
                raise
            finally:
                with self._lock:
                    self._children.discard(process)
            seconds = time.time() - started
            handle.write(f"--- {step}: exit status {code} after {seconds:.1f} s\n")
        if code != 0:
            raise StepFailed(f"{step} exited with status {code}")
        return seconds

    # ------------------------------------------------------------------ data
    def prepare_data(self, runs: Iterable[Run]) -> None:
        """Simulates the partial training data of every (dataset, scenario, seed) the runs need."""
        from eer_plugin.core.formats import read_documents, write_jsonl

        needed: Dict[Path, Run] = {}
        for run in runs:
            if run.scenario is not None and not self.is_done(run):
                needed.setdefault(self.data_path(run), run)
        for path, run in needed.items():
            if path.exists():
                continue
            key = (run.dataset.name, run.scenario_name, run.seed)
            try:
                if run.dataset.name not in self._gold_cache:
                    self._gold_cache[run.dataset.name] = read_documents(run.dataset.train)
                docs, stats = run.scenario.simulate(self._gold_cache[run.dataset.name], run.seed)
                stats = dict(stats, scenario=run.scenario_name, type=run.scenario.type, params=dict(run.scenario.params), seed=run.seed)
                temporary = path.with_name(f".{path.stem}.{os.getpid()}.jsonl")
                write_jsonl(docs, temporary)
                _write_atomic(self.simulated_path(*key, suffix=".stats.json"), json.dumps(stats, indent=1))
                os.replace(temporary, path)
                self.echo(
                    f"simulated {run.dataset.name}/{run.scenario_name}/seed{run.seed}: recall {stats['recall']:.3f}, "
                    f"precision {stats['precision']:.3f}, {stats['kept_spans']} spans in {stats['documents_touched']} documents"
                )
            except Exception as err:  # noqa: BLE001 - a failed simulation fails its runs, not the benchmark
                self._data_errors[key] = f"simulating {run.dataset.name}/{run.scenario_name}/seed{run.seed} failed: {err}"
                self.echo(self._data_errors[key])

    # ------------------------------------------------------------------ one run
    def _attempt(self, run: Run, log: Path) -> dict:
        directory = self.run_dir(run)
        env = self.environment(run)
        own_seconds = 0.0
        extra: Dict[str, Any] = {}
        if run.family == "raw_cd":
            partner = self.plan.raw_partner(run)
            directory.mkdir(parents=True, exist_ok=True)
            if partner is not None:
                partner_record = self.record(partner)
                if partner_record.get("status") != "done":
                    raise StepFailed(f"the Raw run it tunes did not finish ({partner_record.get('status')}; log {self.log_path(partner)})")
                raw_dir, raw_seconds = self.run_dir(partner), float(partner_record["seconds"])
            else:
                raw_dir = directory / "raw"
                raw_seconds = self._subprocess(self.commands(run)[0], env, log, f"train raw_{run.variant}")
                own_seconds += raw_seconds
            tune = self.commands(run)[-1]
            tune_seconds = self._subprocess(tune, env, log, "tune-o-cost")
            own_seconds += tune_seconds
            seconds = raw_seconds + tune_seconds
            shutil.copyfile(raw_dir / "o_cost.json", directory / "o_cost.json")
            extra["o_cost"] = json.loads((directory / "o_cost.json").read_text())["o_cost"]
            extra["raw_seconds"], extra["tune_seconds"], extra["raw_dir"] = raw_seconds, tune_seconds, str(raw_dir)
            archive, metrics_path = directory / "model_o_cost.tar.gz", raw_dir / "metrics.json"
        else:
            cbl = run.family in CBL_FAMILIES
            seconds = own_seconds = self._subprocess(self.commands(run)[0], env, log, "cbl" if cbl else "train")
            final = directory / "final" if cbl else directory
            archive, metrics_path = final / "model.tar.gz", final / "metrics.json"
        evaluate = [
            sys.executable, "-m", "eer_plugin.evaluation", str(archive), run.dataset.test, "-o", str(directory / "doc_counts.json"),
        ]  # fmt: skip
        if run.family == "eer":
            evaluate += ["--train", env["EER_TRAIN_DATA"], "--gold-train", run.dataset.train]
        eval_seconds = self._subprocess(evaluate, env, log, "per-document evaluation")
        counts = json.loads((directory / "doc_counts.json").read_text())
        metrics = _read_json(metrics_path) or {}
        summary = counts["summary"]
        ratio = counts.get("ratio", {})
        rho, gamma = run.ratio if run.ratio is not None else self.plan.base_ratio(run.dataset)
        return {
            "dataset": run.dataset.name, "scenario": run.scenario_name, "approach": run.approach, "encoder": run.encoder,
            "seed": run.seed, "status": "done",
            "precision": summary["precision"], "recall": summary["recall"], "f1": summary["f1"],
            "tp": summary["tp"], "fp": summary["fp"], "fn": summary["fn"],
            "rho_hat": metrics.get("training_rho_hat"), "rho_star": ratio.get("rho_star"), "rho_star_words": ratio.get("rho_star_words"),
            "entity_ratio": rho, "ratio_margin": gamma,
            "seconds": seconds, "own_seconds": own_seconds, "eval_seconds": eval_seconds,
            "allennlp_test_f1": metrics.get("test_f1-measure-overall"), "best_epoch": metrics.get("best_epoch"),
            "run_dir": str(directory), "log": str(log), "archive": str(archive), "settings": self.settings(run),
            "finished": time.strftime("%Y-%m-%d %H:%M:%S"), **extra,
        }  # fmt: skip

    def execute(self, run: Run) -> dict:
        """Runs one run (skipping it when done), retrying a failure ``self.retries`` times."""
        if self.is_done(run):
            return self.record(run)
        directory, log = self.run_dir(run), self.log_path(run)
        log.parent.mkdir(parents=True, exist_ok=True)
        attempts = self.retries + 1
        error = ""
        data_error = self._data_errors.get((run.dataset.name, run.scenario_name, run.seed))
        for attempt in range(1, attempts + 1):
            if self._stopping:
                return self.record(run)
            if directory.exists():
                shutil.rmtree(directory)
            with open(log, "a") as handle:
                handle.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {run.name}: attempt {attempt} of {attempts}\n")
                if data_error:
                    handle.write(data_error + "\n")
            if data_error:
                error = data_error
                break  # deterministic: no retry
            try:
                result = self._attempt(run, log)
            except Exception as err:  # noqa: BLE001 - any failure of a run is recorded, never raised
                if self._stopping:  # interrupted: the next invocation starts this run again
                    return self.record(run)
                error = f"{type(err).__name__}: {err}" if not isinstance(err, StepFailed) else str(err)
                with open(log, "a") as handle:
                    handle.write(f"=== attempt {attempt} failed: {error}\n")
                if attempt < attempts:
                    self._status(f"retry  {run.name}: {error} (log {log})")
                continue
            if not self.keep_checkpoints:
                self._remove_checkpoints(directory, log)
            _write_atomic(directory / "result.json", json.dumps(result, indent=1))
            _write_atomic(directory / "DONE", time.strftime("%Y-%m-%d %H:%M:%S\n"))
            return result
        failure = {
            "dataset": run.dataset.name, "scenario": run.scenario_name, "approach": run.approach, "encoder": run.encoder,
            "seed": run.seed, "status": "failed", "error": error, "attempts": attempts if not data_error else 1,
            "run_dir": str(directory), "log": str(log), "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
        }  # fmt: skip
        _write_atomic(directory / "FAILED.json", json.dumps(failure, indent=1))
        return failure

    @staticmethod
    def _remove_checkpoints(directory: Path, log: Path) -> None:
        """Deletes what only ``allennlp train --recover`` needs (the weights stay in model.tar.gz
        and best.th): trainer checkpoints, and the CBL rounds' best.th. A CBL run on MiniLM would
        otherwise keep several GB."""
        patterns = ["**/model_state_e*.th", "**/training_state_e*.th", "round_*/best.th"]
        freed = 0
        for pattern in patterns:
            for file in directory.glob(pattern):
                freed += file.stat().st_size
                file.unlink()
        with open(log, "a") as handle:
            handle.write(f"--- removed trainer checkpoints: {freed / 2**20:.1f} MB\n")

    def _status(self, message: str) -> None:
        with self._lock:
            if self._progress is not None:
                self._progress.write(message)
            else:
                self.echo(message)

    def _execute_unit(self, unit: List[Run]) -> None:
        for run in unit:
            if self.is_done(run) or self._stopping:
                continue
            with self._lock:
                self._counter += 1
                number = self._counter
            tag = f"[{number}/{self._total}]"
            self._status(f"start  {tag} {run.name}")
            started = time.time()
            result = self.execute(run)
            if result["status"] == "done":
                self._status(f"done   {tag} {run.name}: test F1 {100 * result['f1']:.2f} ({time.time() - started:.0f} s)")
            elif result["status"] == "failed":
                self._status(f"FAILED {tag} {run.name}: {result.get('error')} (log {result['log']})")
            else:
                self._status(f"stopped {tag} {run.name} (interrupted; it runs again next time)")
            with self._lock:
                if self._progress is not None:
                    self._progress.update()

    def run_units(self, units: List[List[Run]]) -> None:
        from tqdm import tqdm

        pending = [unit for unit in units if any(not self.is_done(r) for r in unit)]
        total_runs = sum(len(unit) for unit in units)
        self._total = sum(1 for unit in pending for r in unit if not self.is_done(r))
        self.echo(f"{total_runs - self._total} of {total_runs} runs done already; running {self._total} with {self.jobs} job(s), {self.threads} thread(s) each")
        if not pending:
            return
        self.prepare_data([r for unit in pending for r in unit])
        self._progress = tqdm(total=self._total, desc="benchmark runs", unit="run", file=sys.stderr)
        try:
            if self.jobs == 1:
                for unit in pending:
                    self._execute_unit(unit)
            else:
                with ThreadPoolExecutor(max_workers=self.jobs) as pool:
                    futures = [pool.submit(self._execute_unit, unit) for unit in pending]
                    try:
                        for future in futures:
                            future.result()
                    except KeyboardInterrupt:
                        self._stopping = True
                        with self._lock:  # a Ctrl-C reached them already; a SIGTERM to us alone did not
                            for process in self._children:
                                process.kill()
                        pool.shutdown(wait=True, cancel_futures=True)
                        raise
        finally:
            self._progress.close()
            self._progress = None


# =============================================================================== report
def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _std(values: Sequence[float]) -> Optional[float]:
    if len(values) < 2:
        return None
    m = _mean(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def _stderr(values: Sequence[float]) -> float:
    s = _std(values)
    return s / math.sqrt(len(values)) if s is not None else 0.0


def _points(value: Optional[float], digits: int = 1) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}"


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], align: Optional[Sequence[str]] = None) -> str:
    align = align or ["l"] + ["r"] * (len(header) - 1)
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


class Report:
    """Tables of a benchmark directory (every number comes from the runs' result files)."""

    def __init__(self, plan: Plan, runner: Runner):
        self.plan = plan
        self.runner = runner
        self.records = {run.key: runner.record(run) for run in plan.runs}
        self.by_key = {run.key: run for run in plan.runs}
        self._counts: Dict[Tuple, Optional[dict]] = {}
        self.bootstraps: List[dict] = []

    # ------------------------------------------------------------------ access
    def lookup(self, dataset: str, scenario: str, approach: str, encoder: str, seed: int, ratio=None) -> Optional[dict]:
        return self.records.get((dataset, scenario, approach, encoder, seed, ratio))

    def done(self, dataset, scenario, approach, encoder, ratio=None) -> Dict[int, dict]:
        """Seed -> result of the finished runs of one cell."""
        out = {}
        for seed in self.plan.seeds:
            record = self.lookup(dataset, scenario, approach, encoder, seed, ratio)
            if record and record.get("status") == "done":
                out[seed] = record
        return out

    def cell_status(self, dataset, scenario, approach, encoder, ratio=None) -> Dict[str, int]:
        counts = {"done": 0, "failed": 0, "missing": 0}
        for seed in self.plan.seeds:
            record = self.lookup(dataset, scenario, approach, encoder, seed, ratio)
            if record is not None:
                counts[record.get("status", "missing")] = counts.get(record.get("status", "missing"), 0) + 1
        return counts

    def doc_counts(self, key: Tuple) -> Optional[dict]:
        if key not in self._counts:
            data = _read_json(self.runner.run_dir(self.by_key[key]) / "doc_counts.json")
            self._counts[key] = data["counts"] if data else None
        return self._counts[key]

    def pair_counts(self, dataset, scenario, approach, encoder):
        """Per-document counts of ``approach`` and the reference, summed over their common seeds."""
        from eer_plugin.core.bootstrap import sum_over_runs

        reference = self.plan.reference
        mine, theirs = self.done(dataset, scenario, approach, encoder), self.done(dataset, scenario, reference, encoder)
        seeds = sorted(set(mine) & set(theirs))
        a = [self.doc_counts((dataset, scenario, approach, encoder, s, None)) for s in seeds]
        b = [self.doc_counts((dataset, scenario, reference, encoder, s, None)) for s in seeds]
        if not seeds or any(c is None for c in a + b):
            return None, seeds
        return (sum_over_runs(a), sum_over_runs(b)), seeds

    # ------------------------------------------------------------------ main table
    def row_specs(self) -> List[Tuple[Optional[Scenario], List[Tuple[str, str]]]]:
        """Groups of (label, approach, encoder) rows: gold first, then one group per scenario."""
        multi = len(self.plan.encoders) > 1

        def label(approach, encoder):
            return approach_label(approach) + (f" ({self.plan.encoder_slugs[encoder]})" if multi else "")

        groups = []
        if "gold" in self.plan.approaches:
            groups.append((None, [(label("gold", e), "gold", e) for e in self.plan.encoders]))
        for scenario in self.plan.scenarios:
            rows = [(label(a, e), a, e) for a in self.plan.approaches if a != "gold" for e in self.plan.encoders]
            groups.append((scenario, rows))
        return groups

    def significance(self, scenario: Scenario, approach: str, encoder: str, dataset: Optional[str]) -> Optional[dict]:
        """Bootstrap of ``approach`` vs the reference on one dataset (or pooled over all, ``None``)."""
        from eer_plugin.core.bootstrap import paired_bootstrap, pooled_bootstrap

        if self.plan.reference is None or approach in (self.plan.reference, "gold"):
            return None
        settings = dict(n_resamples=self.plan.bootstrap["resamples"], confidence=self.plan.bootstrap["confidence"], seed=self.plan.bootstrap["seed"])
        names = [dataset] if dataset is not None else [d.name for d in self.plan.datasets]
        pairs, seeds = [], {}
        for name in names:
            pair, common = self.pair_counts(name, scenario.name, approach, encoder)
            if pair is None:
                return None
            pairs.append(pair)
            seeds[name] = common
        result = paired_bootstrap(*pairs[0], **settings) if len(pairs) == 1 else pooled_bootstrap(pairs, **settings)
        result.update(scenario=scenario.name, approach=approach, encoder=encoder, dataset=dataset or "pooled", seeds=seeds)
        self.bootstraps.append(result)
        return result

    def main_table(self) -> str:
        datasets = [d.name for d in self.plan.datasets]
        header = ["Approach / dataset", *datasets, "avg"]
        lines = []
        for scenario, rows in self.row_specs():
            scenario_name = scenario.name if scenario else GOLD_SCENARIO
            if scenario is not None:
                lines.append([f"**{scenario.name}**: {scenario.describe()}{self._achieved(scenario)}"] + [""] * (len(header) - 1))
            cells: Dict[Tuple[int, int], Tuple[Optional[float], str, str]] = {}
            for r, (_, approach, encoder) in enumerate(rows):
                per_seed_avg: Dict[int, List[float]] = {}
                for c, dataset in enumerate(datasets):
                    done = self.done(dataset, scenario_name, approach, encoder)
                    values = [done[s]["f1"] for s in sorted(done)]
                    for s in done:
                        per_seed_avg.setdefault(s, []).append(done[s]["f1"])
                    mark = ""
                    if scenario is not None and values:
                        test = self.significance(scenario, approach, encoder, dataset)
                        mark = self._mark(test)
                    cells[(r, c)] = (_mean(values) if values else None, self._cell(values, self.cell_status(dataset, scenario_name, approach, encoder)), mark)
                complete = [v for s, v in per_seed_avg.items() if len(v) == len(datasets)]
                averages = [_mean(v) for v in complete]
                mark = ""
                if averages and scenario is not None and len(datasets) > 1:
                    mark = self._mark(self.significance(scenario, approach, encoder, None))
                elif averages and scenario is not None:
                    mark = cells[(r, 0)][2]
                cells[(r, len(datasets))] = (_mean(averages) if averages else None, self._cell(averages, None), mark)
            for c in range(len(datasets) + 1):
                best = max((cells[(r, c)][0] for r in range(len(rows)) if cells[(r, c)][0] is not None), default=None)
                for r in range(len(rows)):
                    value, text, mark = cells[(r, c)]
                    bold = best is not None and value is not None and abs(value - best) < 1e-12 and len(rows) > 1
                    cells[(r, c)] = (value, f"**{text}**{mark}" if bold else f"{text}{mark}", mark)
            for r, (label, _, _) in enumerate(rows):
                lines.append([label] + [cells[(r, c)][1] for c in range(len(datasets) + 1)])
        return _table(header, lines)

    def _achieved(self, scenario: Scenario) -> str:
        recalls, precisions = [], []
        for dataset in self.plan.datasets:
            for seed in self.plan.seeds:
                stats = _read_json(self.runner.simulated_path(dataset.name, scenario.name, seed, ".stats.json"))
                if stats:
                    recalls.append(stats["recall"])
                    precisions.append(stats["precision"])
        if not recalls:
            return ""
        return f" (simulated data: recall {_mean(recalls):.3f}, precision {_mean(precisions):.3f}, mean over data sets and seeds)"

    @staticmethod
    def _cell(values: List[float], status: Optional[Dict[str, int]]) -> str:
        if not values:
            if status and status.get("failed"):
                return "failed"
            return "–"
        text = _points(_mean(values))
        std = _std(values)
        if std is not None:
            text += f" ± {100 * std:.1f}"
        if status is not None:
            expected = sum(status.values())
            if len(values) < expected:
                text += f" ({len(values)}/{expected} seeds)"
        return text

    @staticmethod
    def _mark(test: Optional[dict]) -> str:
        if not test or not test["significant"]:
            return ""
        return "†" if test["delta"] > 0 else "‡"

    # ------------------------------------------------------------------ other sections
    def bootstrap_table(self) -> str:
        if not self.bootstraps:
            return ""
        confidence = self.plan.bootstrap["confidence"]
        rows = []
        for b in self.bootstraps:
            label = approach_label(b["approach"]) + (f" ({self.plan.encoder_slugs[b['encoder']]})" if len(self.plan.encoders) > 1 else "")
            seeds = sorted({s for v in b["seeds"].values() for s in v})
            rows.append([
                b["scenario"], label, b["dataset"], ",".join(map(str, seeds)), str(b["n_documents"]),
                _points(b["f1_a"], 2), _points(b["f1_b"], 2), f"{100 * b['delta']:+.2f}",
                f"[{100 * b['ci_low']:+.2f}, {100 * b['ci_high']:+.2f}]", f"{b['p_value']:.4f}",
                ("yes, better" if b["delta"] > 0 else "yes, worse") if b["significant"] else "no",
            ])  # fmt: skip
        header = [
            "scenario", "approach", "dataset", "seeds", "docs", "F1", f"F1 {approach_label(self.plan.reference)}", "Δ",
            f"{confidence:.0%} CI of Δ", "p", "significant",
        ]  # fmt: skip
        return _table(header, rows, ["l", "l", "l", "l", "r", "r", "r", "r", "r", "r", "l"])

    def time_table(self) -> Tuple[str, float]:
        per_approach: Dict[str, List[dict]] = {}
        total = 0.0
        for run in self.plan.runs:
            record = self.records[run.key]
            if record.get("status") != "done":
                continue
            per_approach.setdefault(run.approach, []).append(record)
            total += float(record.get("own_seconds", record["seconds"])) + float(record.get("eval_seconds") or 0)
        rows = []
        for approach in KNOWN_APPROACHES:
            records = per_approach.get(approach)
            if not records:
                continue
            seconds = [float(r["seconds"]) for r in records]
            evals = [float(r.get("eval_seconds") or 0) for r in records]
            rows.append([approach_label(approach), str(len(records)), _duration(_mean(seconds)), _duration(sum(seconds)), _duration(_mean(evals))])
        header = ["approach", "finished runs", "training time per run", "training time, total", "test evaluation per run"]
        return (_table(header, rows) if rows else ""), total

    def ratio_grid_table(self) -> str:
        if not self.plan.ratio_entries:
            return ""
        groups: Dict[Tuple, Dict[Tuple[float, float], Dict[int, dict]]] = {}
        for group, setting, run in self.plan.ratio_entries:
            record = self.records[run.key]
            cells = groups.setdefault(group, {}).setdefault(setting, {})
            if record.get("status") == "done":
                cells[run.seed] = record
        parts = []
        for (dataset, scenario, encoder), settings in groups.items():
            base = self.plan.base_ratio(next(d for d in self.plan.datasets if d.name == dataset))
            rho_stars = [r["rho_star"] for cells in settings.values() for r in cells.values() if r.get("rho_star") is not None]
            title = f"**{dataset}, scenario {scenario}, {approach_label(self.plan.ratio_grid['approach'])}**"
            if len(self.plan.encoders) > 1:
                title += f", encoder {encoder}"
            if rho_stars:
                title += f" (gold subword ratio of the training data rho* = {_mean(rho_stars):.3f}, mean over runs)"
            rows = []
            for (rho, gamma), cells in settings.items():
                label = f"[{rho - gamma:.2f}, {rho + gamma:.2f}] (rho {rho:g}, gamma {gamma:g})" + ("†" if (rho, gamma) == base else "")
                values = [cells[s]["f1"] for s in sorted(cells)]
                per_seed = [_points(cells[s]["f1"]) if s in cells else self._missing(dataset, scenario, encoder, s, (rho, gamma), base) for s in self.plan.seeds]
                rho_hats = [cells[s]["rho_hat"] for s in cells if cells[s].get("rho_hat") is not None]
                rows.append([label, *per_seed, self._cell(values, None), f"{_mean(rho_hats):.3f}" if rho_hats else "–"])
            header = ["[rho - gamma, rho + gamma]", *[f"seed {s}" for s in self.plan.seeds], "mean", "final rho_hat"]
            parts.append(title + "\n\n" + _table(header, rows))
        return "\n\n".join(parts) + "\n\n† the benchmark setting (the plan's EER_ENTITY_RATIO / EER_RATIO_MARGIN)."

    def _missing(self, dataset, scenario, encoder, seed, setting, base) -> str:
        record = self.lookup(dataset, scenario, self.plan.ratio_grid["approach"], encoder, seed, None if setting == base else setting)
        return "failed" if record and record.get("status") == "failed" else "–"

    def learning_curve(self) -> Tuple[str, List[dict]]:
        if not self.plan.lc_entries:
            return "", []
        cells: Dict[Tuple, List[float]] = {}
        expected: Dict[Tuple, int] = {}
        documents: Dict[Tuple, Dict[int, int]] = {}  # (dataset, scheme, budget) -> seed -> documents annotated
        for dataset, scheme, budget, run in self.plan.lc_entries:
            key = (dataset, scheme, run.approach, run.encoder, budget)
            expected[key] = expected.get(key, 0) + 1
            record = self.records[run.key]
            cells.setdefault(key, [])
            if record.get("status") == "done":
                cells[key].append(record["f1"])
            seeds = documents.setdefault((dataset, scheme, budget), {})
            if run.seed not in seeds:  # one statistics file per data set, scenario and seed, shared by the approaches
                stats = _read_json(self.runner.simulated_path(dataset, run.scenario_name, run.seed, ".stats.json"))
                seeds[run.seed] = stats.get("documents_touched") if stats else None
        rows = []
        for (dataset, scheme, approach, encoder, budget), values in cells.items():
            docs = [n for n in documents[(dataset, scheme, budget)].values() if n is not None]
            rows.append({
                "dataset": dataset, "scheme": "EE" if scheme == "ee" else "Exhaustive", "approach": approach, "encoder": encoder,
                "budget": budget, "seeds_done": len(values), "seeds_planned": expected[(dataset, scheme, approach, encoder, budget)],
                "mean_f1": _mean(values) if values else None, "std_error": _stderr(values) if values else None,
                "f1_per_seed": " ".join(f"{v:.4f}" for v in values),
                "documents_annotated": _mean(docs) if docs else None,
            })  # fmt: skip
        budgets = self.plan.learning_curve["budgets"]
        parts = []
        for dataset in dict.fromkeys(r["dataset"] for r in rows):
            table_rows = []
            for scheme, approach, encoder in dict.fromkeys((r["scheme"], r["approach"], r["encoder"]) for r in rows if r["dataset"] == dataset):
                label = f"{scheme} + {approach_label(approach)}" + (f" ({self.plan.encoder_slugs[encoder]})" if len(self.plan.encoders) > 1 else "")
                line = [label]
                for budget in budgets:
                    r = next(x for x in rows if (x["dataset"], x["scheme"], x["approach"], x["encoder"], x["budget"]) == (dataset, scheme, approach, encoder, budget))
                    if r["mean_f1"] is None:
                        line.append("–")
                    else:
                        line.append(f"{100 * r['mean_f1']:.1f} ± {100 * r['std_error']:.1f}" if r["seeds_done"] > 1 else _points(r["mean_f1"]))
                table_rows.append(line)
            # how many documents carry the budget's annotations: the data the short/shortest variants train on
            for scheme in dict.fromkeys(r["scheme"] for r in rows if r["dataset"] == dataset):
                line = [f"documents annotated ({scheme}, mean over seeds)"]
                for budget in budgets:
                    docs = next((x["documents_annotated"] for x in rows if (x["dataset"], x["scheme"], x["budget"]) == (dataset, scheme, budget)), None)
                    line.append("–" if docs is None else f"{docs:g}")
                table_rows.append(line)
            parts.append(f"**{dataset}** (test F1, mean ± standard error over seeds)\n\n" + _table(["annotation + training", *map(str, budgets)], table_rows))
        return "\n\n".join(parts), rows

    def plot_learning_curve(self, rows: List[dict], path: Path) -> bool:
        if not any(r["mean_f1"] is not None for r in rows):
            return False
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        datasets = list(dict.fromkeys(r["dataset"] for r in rows))
        figure, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4.5), squeeze=False)
        for axis, dataset in zip(axes[0], datasets):
            lines = dict.fromkeys((r["scheme"], r["approach"], r["encoder"]) for r in rows if r["dataset"] == dataset)
            for scheme, approach, encoder in lines:
                points = sorted(
                    (r["budget"], r["mean_f1"], r["std_error"]) for r in rows
                    if (r["dataset"], r["scheme"], r["approach"], r["encoder"]) == (dataset, scheme, approach, encoder) and r["mean_f1"] is not None
                )  # fmt: skip
                if not points:
                    continue
                x = [p[0] for p in points]
                y = [100 * p[1] for p in points]
                e = [100 * p[2] for p in points]
                label = f"{scheme} + {approach_label(approach)}" + (f" ({self.plan.encoder_slugs[encoder]})" if len(self.plan.encoders) > 1 else "")
                (line,) = axis.plot(x, y, marker="o", linestyle="-" if scheme == "EE" else "--", label=label)
                axis.fill_between(x, [a - b for a, b in zip(y, e)], [a + b for a, b in zip(y, e)], color=line.get_color(), alpha=0.2)
            for encoder in self.plan.encoders:
                gold = [r["f1"] for r in self.done(dataset, GOLD_SCENARIO, "gold", encoder).values()]
                if gold:
                    axis.axhline(100 * _mean(gold), color="black", linestyle=":", label="Gold-all (all annotations)")
            axis.set_xscale("log")
            budgets = self.plan.learning_curve["budgets"]
            axis.set_xticks(budgets)
            axis.set_xticklabels([f"{b:,}" for b in budgets])
            axis.minorticks_off()
            axis.set_xlabel("annotated entities (budget)")
            axis.set_ylabel("test F1")
            axis.set_title(dataset)
            axis.grid(alpha=0.3)
            axis.legend(fontsize=8)
        figure.tight_layout()
        figure.savefig(path, dpi=120)
        plt.close(figure)
        return True

    def convergence(self) -> str:
        groups: Dict[Tuple, List[dict]] = {}
        for run in self.plan.runs:
            record = self.records[run.key]
            if run.family != "eer" or record.get("status") != "done" or record.get("rho_hat") is None or record.get("rho_star") is None:
                continue
            groups.setdefault((run.dataset.name, run.scenario_name, run.approach, run.ratio, run.encoder), []).append(record)
        if not groups:
            return ""
        rows, all_errors, all_bound_errors = [], [], []
        # the paper's comparison: final EER-short models of the EE data sets, benchmark setting
        ee_scenarios = {s.name for s in self.plan.scenarios if s.type == "ee"}
        paper_errors, paper_bound_errors = [], []
        for (dataset, scenario, approach, ratio, encoder), records in groups.items():
            errors = [abs(r["rho_hat"] - r["rho_star"]) for r in records]
            bound_errors = [abs(r["entity_ratio"] + r["ratio_margin"] - r["rho_star"]) for r in records]
            all_errors += errors
            all_bound_errors += bound_errors
            if approach == "eer_short" and ratio is None and scenario in ee_scenarios:
                paper_errors += errors
                paper_bound_errors += bound_errors
            rho, gamma = records[0]["entity_ratio"], records[0]["ratio_margin"]
            rows.append([
                dataset, scenario, approach_label(approach) + (f" ({self.plan.encoder_slugs[encoder]})" if len(self.plan.encoders) > 1 else ""),
                f"{rho:g} ± {gamma:g}", str(len(records)), f"{_mean([r['rho_hat'] for r in records]):.3f}",
                f"{_mean([r['rho_star'] for r in records]):.3f}", f"{_mean(errors):.3f}", f"{_mean(bound_errors):.3f}",
            ])  # fmt: skip
        if paper_errors:
            rows.append([
                "**EER-short, EE scenarios, benchmark setting** (the paper's comparison)", "", "", "", str(len(paper_errors)), "", "",
                f"**{_mean(paper_errors):.3f}**", f"**{_mean(paper_bound_errors):.3f}**",
            ])  # fmt: skip
        rows.append(["**all EER runs**", "", "", "", str(len(all_errors)), "", "", f"**{_mean(all_errors):.3f}**", f"**{_mean(all_bound_errors):.3f}**"])
        header = ["dataset", "scenario", "approach", "rho ± gamma", "runs", "final rho_hat", "rho*", "MAE(rho_hat, rho*)", "MAE(rho + gamma, rho*)"]
        return _table(header, rows, ["l", "l", "l", "l", "r", "r", "r", "r", "r"])

    def plot_rho_hat(self, path: Path) -> bool:
        series = []
        for run in self.plan.runs:
            record = self.records[run.key]
            if run.family != "eer" or "benchmark" not in run.studies or record.get("status") != "done":
                continue
            directory = self.runner.run_dir(run)
            epochs = []
            for file in directory.glob("metrics_epoch_*.json"):
                data = _read_json(file)
                if data and data.get("training_rho_hat") is not None:
                    epochs.append((int(file.stem.rsplit("_", 1)[1]), data["training_rho_hat"]))
            if epochs:
                series.append((run, sorted(epochs), record))
        if not series:
            return False
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator

        panels = list(dict.fromkeys((run.dataset.name, run.scenario_name) for run, _, _ in series))
        columns = min(3, len(panels))
        rows_count = math.ceil(len(panels) / columns)
        figure, axes = plt.subplots(rows_count, columns, figsize=(5.5 * columns, 4 * rows_count), squeeze=False)
        colors: Dict[str, str] = {}
        for index, panel in enumerate(panels):
            axis = axes[index // columns][index % columns]
            labelled = set()
            for run, epochs, record in series:
                if (run.dataset.name, run.scenario_name) != panel:
                    continue
                label = approach_label(run.approach) + (f" ({run.encoder_slug})" if len(self.plan.encoders) > 1 else "")
                color = colors.setdefault(label, f"C{len(colors) % 10}")
                axis.plot(
                    [e + 1 for e, _ in epochs], [v for _, v in epochs], color=color, marker="o", markersize=3,
                    label=None if label in labelled else label, alpha=0.8,
                )  # fmt: skip
                labelled.add(label)
                if record.get("rho_star") is not None:
                    axis.axhline(record["rho_star"], color=color, linestyle=":", linewidth=1)
                rho, gamma = record["entity_ratio"], record["ratio_margin"]
            axis.axhspan(rho - gamma, rho + gamma, color="grey", alpha=0.15, label="[rho - gamma, rho + gamma]")
            axis.set_title(f"{panel[0]}, {panel[1]}")
            axis.xaxis.set_major_locator(MaxNLocator(integer=True))
            axis.set_xlabel("epoch")
            axis.set_ylabel("training rho_hat (dotted: rho*)")
            axis.grid(alpha=0.3)
            axis.legend(fontsize=8)
        for index in range(len(panels), rows_count * columns):
            axes[index // columns][index % columns].axis("off")
        figure.tight_layout()
        figure.savefig(path, dpi=120)
        plt.close(figure)
        return True

    # ------------------------------------------------------------------ outputs
    def csv_rows(self) -> List[Dict[str, Any]]:
        rows = []
        for run in self.plan.runs:
            record = self.records[run.key]
            rho, gamma = run.ratio if run.ratio is not None else self.plan.base_ratio(run.dataset)
            row = {
                "dataset": run.dataset.name, "scenario": run.scenario_name, "approach": run.approach, "encoder": run.encoder,
                "seed": run.seed, "status": record.get("status", "missing"), "run_dir": str(self.runner.run_dir(run)),
                "log": record.get("log") or str(self.runner.log_path(run)), "study": ";".join(run.studies),
                "entity_ratio": rho, "ratio_margin": gamma, "error": record.get("error", ""),
            }  # fmt: skip
            for key in ("precision", "recall", "f1", "rho_hat", "seconds", "rho_star", "tp", "fp", "fn", "eval_seconds", "o_cost"):
                value = record.get(key)
                row[key] = "" if value is None else value
            rows.append(row)
        return rows

    def write(self) -> Dict[str, str]:
        outdir = self.runner.outdir
        outdir.mkdir(parents=True, exist_ok=True)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.csv_rows())
        _write_atomic(outdir / "results.csv", buffer.getvalue())
        written = {"csv": str(outdir / "results.csv")}

        status = {"done": 0, "failed": 0, "missing": 0}
        for record in self.records.values():
            status[record.get("status", "missing")] = status.get(record.get("status", "missing"), 0) + 1
        plan = self.plan
        md = [f"# Benchmark: {plan.name}", ""]
        md.append(
            f"Plan `{plan.path}`; {len(plan.runs)} runs: {status['done']} finished, {status['failed']} failed, "
            f"{status['missing']} not run (yet). Encoder(s): {', '.join(plan.encoders)}; seeds {', '.join(map(str, plan.seeds))}; "
            f"epochs {plan.epochs_description()}. "
            "All numbers below are computed from the run directories by `allennlp eer-benchmark`."
        )  # fmt: skip
        md += ["", "## Test F1", ""]
        seeds_text = "mean ± standard deviation over seeds" if len(plan.seeds) > 1 else "one seed"
        md.append(
            f"Word-level span F1 × 100 on each data set's test file ({seeds_text}); **bold**: best of its scenario group. "
            "The Gold row is trained on the complete annotation and does not depend on the scenario. "
            "avg: mean over the data sets (only when every data set has a result)."
        )
        main_table = self.main_table()
        if plan.reference:
            confidence = plan.bootstrap["confidence"]
            md.append(
                f"† / ‡: significantly better / worse than {approach_label(plan.reference)} (paired percentile bootstrap over test "
                f"documents, {plan.bootstrap['resamples']:,} resamples, the two-sided {confidence:.0%} interval of the F1 difference "
                "excludes 0; with several seeds the per-document counts are summed over the seeds both runs finished; "
                "avg: the data sets' documents pooled)."
            )
        md += ["", main_table, ""]
        failed = [(run, self.records[run.key]) for run in plan.runs if self.records[run.key].get("status") == "failed"]
        if failed:
            md += ["### Failed runs", ""]
            md += [f"- `{run.name}`: {record.get('error')} (log `{record.get('log')}`)" for run, record in failed]
            md.append("")
        boot = self.bootstrap_table()
        if boot:
            md += ["## Significance (paired bootstrap)", "", f"Δ = F1(approach) − F1({approach_label(plan.reference)}), in F1 points; p: two-sided bootstrap share.", "", boot, ""]
        times, total = self.time_table()
        if times:
            md += [
                "## Wall time", "",
                f"Compute time of the finished runs: {_duration(total)} (training, decoding-cost search and test evaluation of "
                "every run directory once; runs in parallel with --jobs take less elapsed time). Training time per run is the "
                "wall time of its training subprocess(es); Raw+CD includes the training of its Raw model.", "", times, "",
            ]  # fmt: skip
        grid = self.ratio_grid_table()
        if grid:
            md += ["## EER hyperparameters (rho, gamma)", "", "Test F1 × 100 per seed.", "", grid, ""]
        curve, curve_rows = self.learning_curve()
        if curve:
            fields = ["dataset", "scheme", "approach", "encoder", "budget", "seeds_done", "seeds_planned", "mean_f1", "std_error", "f1_per_seed", "documents_annotated"]
            buffer = io.StringIO()
            writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
            writer.writeheader()
            writer.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in curve_rows)
            _write_atomic(outdir / "learning_curve.csv", buffer.getvalue())
            written["learning_curve_csv"] = str(outdir / "learning_curve.csv")
            md += [
                "## Learning curves: EE vs exhaustive annotation", "",
                "EE: the Exploratory Expert with the given budget; Exhaustive: whole documents annotated completely, in "
                "random order, until the budget is spent (EE with keep probability 1 and no per-document cap).", "", curve, "",
                "Data: `learning_curve.csv`.",
            ]  # fmt: skip
            if self.plot_learning_curve(curve_rows, outdir / "learning_curve.png"):
                written["learning_curve_png"] = str(outdir / "learning_curve.png")
                md += ["", "![learning curve](learning_curve.png)"]
            md.append("")
        convergence = self.convergence()
        if convergence:
            md += [
                "## Convergence of rho_hat towards rho*", "",
                "Final training rho_hat of every finished EER run against rho*, the share of entity subword tags in the gold "
                "annotation of the documents the run trained on (its train-data variant, tokenized by its encoder). "
                "MAE(rho + gamma, rho*) is the error of a model that would just settle at the top of the interval.", "",
                convergence, "",
            ]  # fmt: skip
            if self.plot_rho_hat(outdir / "rho_hat_over_epochs.png"):
                written["rho_hat_png"] = str(outdir / "rho_hat_over_epochs.png")
                md += ["![rho_hat over epochs](rho_hat_over_epochs.png)", ""]
        _write_atomic(outdir / "results.md", "\n".join(md))
        written["md"] = str(outdir / "results.md")
        return written


# =============================================================================== command
def select_shard(units: List[List[Run]], shard: Optional[Tuple[int, int]]) -> List[Tuple[int, List[Run]]]:
    """``(unit index, unit)`` of the units of shard ``i/n``: those whose index % n == i."""
    index, count = shard if shard is not None else (0, 1)
    return [(position, unit) for position, unit in enumerate(units) if position % count == index]


def select_runs(units: List[Tuple[int, List[Run]]], patterns: Optional[Sequence[str]]) -> List[Tuple[int, List[Run]]]:
    """The units with a run whose name (``dataset/scenario/approach/encoder/seedK``) matches one of
    the shell patterns (all units when there are none)."""
    if not patterns:
        return units
    return [(i, unit) for i, unit in units if any(fnmatch.fnmatchcase(run.name, p) for run in unit for p in patterns)]


def dry_run(plan: Plan, runner: Runner, units: List[Tuple[int, List[Run]]], echo=print) -> None:
    for position, unit in units:
        for run in unit:
            state = runner.record(run).get("status")
            echo(f"unit {position:4d}  {state:7s}  {run.name}  (studies: {', '.join(run.studies)})")
            env = runner.environment(run, for_settings=True)
            settings = " ".join(f"{k}={env[k]}" for k in ("EER_TRAIN_DATA", "EER_SEED", "EER_EPOCHS", "EER_ENTITY_RATIO", "EER_RATIO_MARGIN"))
            echo(f"             {settings}")
            for command in runner.commands(run):
                echo("             " + " ".join(command))
    runs = sum(len(u) for _, u in units)
    echo(f"{runs} runs in {len(units)} units (dry run: nothing was run)")


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def run_benchmark(args: argparse.Namespace) -> int:
    echo = print
    try:
        plan = load_plan(args.plan, check_files=True)
    except PlanError as err:
        print(f"eer-benchmark: error: {err}", file=sys.stderr)
        return 2
    runner = Runner(
        plan, args.output_dir, jobs=args.jobs, threads=args.threads, retries=args.retries, echo=echo,
        keep_checkpoints=args.keep_checkpoints,
    )  # fmt: skip
    units = plan.units()
    selected = select_runs(select_shard(units, args.shard), args.runs)
    if args.runs and not selected:
        print(f"eer-benchmark: error: no run of the plan matches --runs {' '.join(args.runs)}; run names look like {plan.runs[0].name}", file=sys.stderr)
        return 2
    count = f"{len(selected)} of {len(units)} units"
    shard = f"shard {args.shard[0]}/{args.shard[1]}" if args.shard else ""
    if args.runs:
        shard_text = (f" ({shard})" if shard else "") + f" (--runs: {count})"
    else:
        shard_text = f" ({shard}: {count})" if shard else ""
    echo(f"plan {plan.path}: {len(plan.runs)} runs{shard_text} -> {runner.outdir}")
    if args.dry_run:
        dry_run(plan, runner, selected, echo)
        return 0
    if not args.report_only:
        stale = runner.stale_runs(r for _, unit in selected for r in unit)
        if stale:
            print(
                "eer-benchmark: error: finished runs in this output directory were made with other settings than the plan's "
                "(use another -o, or delete those run directories):\n  " + "\n  ".join(stale[:10]),
                file=sys.stderr,
            )
            return 2
        runner.outdir.mkdir(parents=True, exist_ok=True)
        _write_atomic(runner.outdir / "plan.json", json.dumps(read_plan_file(args.plan), indent=1))
        started = time.time()
        # SIGTERM (kill, a batch scheduler) stops like Ctrl-C: running runs are killed and run again
        # next time; never retried or recorded as failed (AllenNLP's own handler raises an ordinary
        # exception, which would look like a failing run).
        in_main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _interrupt) if in_main_thread else None
        try:
            runner.run_units([unit for _, unit in selected])
        except KeyboardInterrupt:
            print("eer-benchmark: interrupted; finished runs are kept: run the same command to continue", file=sys.stderr)
            return 130
        finally:
            if in_main_thread:
                signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        echo(f"ran for {_duration(time.time() - started)}")
    written = Report(plan, runner).write()
    records = [runner.record(run) for run in plan.runs]
    failed = sum(1 for r in records if r.get("status") == "failed")
    missing = sum(1 for r in records if r.get("status") == "missing")
    echo(f"wrote {written['csv']} and {written['md']} ({len(records) - failed - missing} done, {failed} failed, {missing} not run)")
    return 1 if failed and not args.report_only else 0


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("plan", help="benchmark plan: jsonnet, JSON or YAML (see README, 'Reproducing the benchmark table')")
    parser.add_argument("-o", "--output-dir", required=True, help="benchmark directory (data, runs, logs, results.csv, results.md)")
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel (default 1); each gets cores // jobs torch threads")
    parser.add_argument("--threads", type=int, default=None, help="torch/OpenMP threads per run (default: cores // jobs)")
    parser.add_argument(
        "--shard", type=parse_shard, default=None,
        help="i/n: run only the units whose index %% n == i (split a plan across machines sharing OUTDIR)",
    )  # fmt: skip
    parser.add_argument(
        "--runs", nargs="+", metavar="PATTERN", default=None,
        help="run only the runs whose name matches a shell pattern, e.g. 'eng-c/EE/*' (names: dataset/scenario/approach/encoder/seedK)",
    )  # fmt: skip
    parser.add_argument("--retries", type=int, default=1, help="retries of a failing run before it is recorded as failed (default 1)")
    parser.add_argument(
        "--keep-checkpoints", action="store_true",
        help="keep the trainer's checkpoints (model_state_*.th, training_state_*.th, CBL rounds' best.th) of finished runs",
    )  # fmt: skip
    parser.add_argument("--dry-run", action="store_true", help="list the runs (and their commands) of this shard; run nothing")
    parser.add_argument("--report-only", action="store_true", help="run nothing; write results.csv and results.md from OUTDIR (merges shards)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = add_arguments(argparse.ArgumentParser(prog="eer-benchmark", description=DESCRIPTION))
    return run_benchmark(parser.parse_args(argv))


DESCRIPTION = "Run a benchmark plan (approaches x scenarios x datasets x encoders x seeds) and write the paper-style tables."

if __name__ != "__main__":  # as `python -m eer_plugin.commands.benchmark` the plugin import registered it already
    from allennlp.commands.subcommand import Subcommand

    @Subcommand.register("eer-benchmark")
    class Benchmark(Subcommand):
        def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
            subparser = parser.add_parser(self.name, description=DESCRIPTION, help=DESCRIPTION)
            add_arguments(subparser)
            subparser.set_defaults(func=lambda args: sys.exit(run_benchmark(args)))
            return subparser


if __name__ == "__main__":  # pragma: no cover
    from eer_plugin.commands.benchmark import main as registered_main  # one module object, as the plugin's

    sys.exit(registered_main())
