"""The plan itself (its settings per run, seeds, step budgets, units); its runs are
:mod:`eer_benchmark.plan.runs`.

Data sets and annotation scenarios are in :mod:`eer_benchmark.plan.scenario`; parsing and validation
of plan files in :mod:`eer_benchmark.plan.parse`; the expansion of a plan into its runs (benchmark
table, ratio grid, learning curve, ablations) in :mod:`eer_benchmark.plan.expand`."""

import dataclasses
from typing import Any, Dict, List, Mapping, Optional, Tuple

from eer_benchmark.plan.approaches import FAMILIES, GOLD_APPROACHES, VARIANTS, approach_label
from eer_benchmark.plan.expand import Expansion
from eer_benchmark.plan.runs import (  # noqa: F401  (public here too)
    ABLATIONS_DIR,
    BIND_SLUG,
    GOLD_SCENARIO,
    RATIO_CONTROLS,
    PlanError,
    Run,
    number_text,
    setting_slug,
    slug,
)
from eer_benchmark.plan.scenario import Dataset, Scenario
from eer_plugin.runtime.encoders import config_defaults


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
    min_steps: Optional[int] = None  # least optimizer steps of every run (EER_MIN_STEPS); scenarios may override
    ablations: Optional[Dict[str, Any]] = (
        None  # {approach, datasets, scenarios, seeds, settings: [{name, slug, env, approaches, encoder, scenarios}]}
    )
    #: the benchmark table again on another encoder (issue 27): [{name, slug, encoder, approaches, seeds, scenarios, settings}]
    blocks: List[Dict[str, Any]] = dataclasses.field(default_factory=list)
    # filled by expand()
    runs: List[Run] = dataclasses.field(default_factory=list)
    ratio_entries: List[Tuple[Tuple, Tuple[float, float], Run]] = dataclasses.field(default_factory=list)
    #: the ratio grid's bands under the binding control, as ``ratio_entries`` (a grid with ``controls: [..., 'bind']``)
    bind_entries: List[Tuple[Tuple, Tuple[float, float], Run]] = dataclasses.field(default_factory=list)
    lc_entries: List[Tuple[str, str, int, Run]] = dataclasses.field(default_factory=list)
    ablation_entries: List[Tuple[Dict[str, Any], Run]] = dataclasses.field(default_factory=list)  # (setting, run)
    #: (block, the ablation setting run with the block's encoder or None for the block's own table, run)
    block_entries: List[Tuple[Dict[str, Any], Optional[Dict[str, Any]], Run]] = dataclasses.field(default_factory=list)

    def dataset_env(self, dataset: Dataset) -> Dict[str, str]:
        return {**config_defaults(), **self.env, **dict(dataset.env), **dataset.reader_env()}

    def run_env(self, dataset: Dataset, scenario: Optional[Scenario], variant: str) -> Dict[str, str]:
        """The EER_* settings of a run: config defaults < plan env < dataset env < scenario env,
        EER_EPOCHS from the scenario's or the plan's ``epochs`` for the run's variant, and
        EER_MIN_STEPS from the scenario's or the plan's ``min_steps`` (not set when neither has one)."""
        env = self.dataset_env(dataset)
        epochs = dict(self.epochs)
        min_steps = self.min_steps
        if scenario is not None:
            env.update(dict(scenario.env))
            epochs.update(dict(scenario.epochs))
            min_steps = scenario.min_steps if scenario.min_steps is not None else min_steps
        if variant in epochs:
            env["EER_EPOCHS"] = str(epochs[variant])
        if min_steps is not None:
            env["EER_MIN_STEPS"] = str(min_steps)
        return env

    def env_of(self, run: Run) -> Dict[str, str]:
        """The EER_* settings of one run: :meth:`run_env` and then the run's own overrides (an
        ablation setting's env, a study's step budget)."""
        env = self.run_env(run.dataset, run.scenario, run.variant)
        env.update(dict(run.overrides))
        return env

    def cuda_device(self, run: Run) -> str:
        """The GPU index of the run (``EER_CUDA_DEVICE``, "-1": the CPU): its training, its O-cost
        search and its test evaluation all use it."""
        return str(self.env_of(run).get("EER_CUDA_DEVICE", "-1"))

    def scenario_seeds(self, scenario: Optional[Scenario]) -> List[int]:
        """The seeds of a scenario's runs: its own ``seeds``, else the plan's (gold approaches: the plan's)."""
        if scenario is not None and scenario.seeds is not None:
            return list(scenario.seeds)
        return list(self.seeds)

    def scenario_approaches(self, scenario: Scenario) -> List[str]:
        """The partial-annotation approaches of a scenario's runs: its own ``approaches``, else the plan's
        (the gold approaches aside: their runs do not depend on the scenario)."""
        own = scenario.approaches if scenario.approaches is not None else self.approaches
        return [a for a in own if a not in GOLD_APPROACHES]

    @property
    def all_seeds(self) -> List[int]:
        """Every seed of any run of the plan, in order."""
        return sorted({run.seed for run in self.runs} | set(self.seeds))

    def effective_min_steps(self, scenario: Optional[Scenario]) -> Optional[int]:
        if scenario is not None and scenario.min_steps is not None:
            return scenario.min_steps
        return self.min_steps

    def epochs_description(self) -> str:
        text = epochs_text(self.epochs)
        overrides = [f"{s.name}: {epochs_text({**self.epochs, **dict(s.epochs)})}" for s in self.scenarios if s.epochs]
        return text + (f" (scenario {'; '.join(overrides)})" if overrides else "")

    def seeds_description(self) -> str:
        """``'0, 1, 2 (scenario NNS: 0)'``."""
        overrides = [
            f"{s.name}: {', '.join(map(str, s.seeds))}"
            for s in self.scenarios
            if s.seeds is not None and list(s.seeds) != self.seeds
        ]
        return ", ".join(map(str, self.seeds)) + (f" (scenario {'; '.join(overrides)})" if overrides else "")

    def min_steps_description(self) -> str:
        """``'at least 2000 optimizer steps per run (scenario NNS: 500; learning curve: 400)'``; ``''`` when
        the plan sets none."""
        overrides = [f"scenario {s.name}: {s.min_steps}" for s in self.scenarios if s.min_steps is not None]
        for study, label in ((self.ratio_grid, "ratio grid"), (self.learning_curve, "learning curve")):
            if study and study.get("min_steps") is not None:
                overrides.append(f"{label}: {study['min_steps']}")
        if self.min_steps is None and not overrides:
            return ""
        text = (
            f"at least {self.min_steps} optimizer steps per run"
            if self.min_steps is not None
            else "minimum optimizer steps"
        )
        return text + (f" ({'; '.join(overrides)})" if overrides else "")

    def base_ratio(self, dataset: Dataset) -> Tuple[float, float]:
        env = self.dataset_env(dataset)
        return float(env["EER_ENTITY_RATIO"]), float(env["EER_RATIO_MARGIN"])

    def expand(self) -> "Plan":
        """The runs of the plan in a fixed order (benchmark, ratio grid, learning curve, ablations, blocks), each
        once (:class:`~eer_benchmark.plan.expand.Expansion`); returns the plan."""
        return Expansion(self).expand()

    def label(self, approach: str, encoder: str) -> str:
        """An approach's row label: ``EER-short``; with several encoders ``EER-short (all-MiniLM-L6-v2)``."""
        return approach_label(approach) + (f" ({self.encoder_slugs[encoder]})" if len(self.encoders) > 1 else "")

    def ratio_of(self, run: Run, record: Optional[Mapping[str, Any]] = None) -> Tuple[float, float]:
        """(rho, gamma) a run trained with: a ratio-estimate run's estimate (from its record), the ratio
        grid's setting, else the plan's (dataset's)."""
        if run.estimates_ratio and record and record.get("entity_ratio") is not None:
            return float(record["entity_ratio"]), float(record["ratio_margin"])
        if run.ratio is not None:
            return run.ratio
        env = self.env_of(run)
        return float(env["EER_ENTITY_RATIO"]), float(env["EER_RATIO_MARGIN"])

    def reference_run(self, run: Run, approach: Optional[str] = None) -> Optional[Run]:
        """The benchmark block's run an ablation run is compared with: the same approach (or ``approach``),
        data, encoder and seed (the plan's first encoder for a setting with an encoder of its own)."""
        encoder = run.encoder if run.encoder in self.encoders else self.encoders[0]
        key = (run.dataset.name, run.scenario_name, approach or run.approach, encoder, run.seed, None, None)
        return next((r for r in self.runs if r.key == key), None)

    def units(self) -> List[List[Run]]:
        """Runs grouped into independent units, in run order: a run of a family that tunes another's model
        (``raw_cd_<v>``) joins the unit of the run it tunes (``raw_<v>``, when the plan has that run), so the
        two never run apart; the tuned run comes first."""
        tuned_by = {family.tunes: name for name, family in FAMILIES.items() if family.tunes}
        by_key = {run.key: run for run in self.runs}
        units: List[List[Run]] = []
        unit_of: Dict[Tuple, List[Run]] = {}
        for run in self.runs:
            if run.key in unit_of:
                continue
            unit = [run]
            unit_of[run.key] = unit
            partner_family = FAMILIES[run.family].tunes or tuned_by.get(run.family)
            if partner_family is not None:
                partner = by_key.get(self._same_run_of(run, partner_family))
                if partner is not None and partner.key not in unit_of:
                    unit.append(partner)
                    unit_of[partner.key] = unit
            unit.sort(key=lambda r: FAMILIES[r.family].tunes is not None)  # the tuned run first
            units.append(unit)
        return units

    @staticmethod
    def _same_run_of(run: Run, family: str) -> Tuple:
        """The key of the run of ``family`` with the same variant, data, encoder and seed as ``run``."""
        return (run.key[0], run.key[1], f"{family}_{run.variant}") + run.key[3:]

    def tuned_run(self, run: Run) -> Optional[Run]:
        """The plan's run that a run of a tuning family tunes (``raw_<v>`` for ``raw_cd_<v>``), if the plan has it."""
        key = self._same_run_of(run, FAMILIES[run.family].tunes)
        return next((r for r in self.runs if r.key == key), None)


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
