"""The runs of a benchmark plan: one :class:`Run` (a data set, scenario, approach, encoder and seed, and its
directory), the plan's constants and :class:`PlanError`. The plan itself is :mod:`eer_benchmark.plan.plan`."""

import dataclasses
import re
from pathlib import Path
from typing import Any, List, Optional, Tuple

from eer_benchmark.plan.approaches import FAMILIES, split_approach
from eer_benchmark.plan.scenario import Dataset, Scenario
from eer_plugin.core.ranges import RATIO_CONTROLS  # noqa: F401  (the ratio grid's controls: the tagger's own)

GOLD_SCENARIO = "gold"  # directory of the gold approaches' runs (they ignore the scenario)
#: a grid band of the ratio grid's controls (``EER_RATIO_CONTROL``, :data:`RATIO_CONTROLS`) trained with ``bind`` is
#: kept with the ablation setting of that name (``<dataset>/ablations/binding-ratio-control/...``): the same run
BIND_SLUG = "binding-ratio-control"
ABLATIONS_DIR = "ablations"  # <dataset>/ablations/<setting>/<scenario>/...: the ablation study's runs


class PlanError(ValueError):
    """An invalid benchmark plan; the message names the key and what was expected."""


def slug(text: str) -> str:
    """A directory name for an encoder name or path (its last component)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", text.rstrip("/").split("/")[-1]) or "encoder"


def setting_slug(name: str) -> str:
    """A directory name for an ablation setting: ``"paper's schedule (2e-5, 50 epochs)"`` ->
    ``'paper-s-schedule-2e-5-50-epochs'``."""
    return re.sub(r"[^a-z0-9.+]+", "-", name.lower()).strip("-.") or "setting"


def number_text(value: float) -> str:
    return f"{float(value):g}"


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
    ablation: Optional[str] = None  # the ablation setting's directory name (its slug); None: not an ablation run
    overrides: Tuple[Tuple[str, str], ...] = ()  # EER_* settings of this run over the plan's (ablations, study budgets)
    #: an ablation's partial dev set: (("budget", N | "proportional"), ("keep_probability", p), ("max_per_document", k));
    #: EER_DEV_DATA is then the EE simulator's output on the dataset's dev file (the run's seed)
    dev: Optional[Tuple[Tuple[str, Any], ...]] = None
    #: an ablation's complete documents: this many training documents annotated completely within the
    #: scenario's budget (``_complete<n>-<scenario>`` data)
    complete_documents: Optional[int] = None
    #: a ratio-estimate run: EER_ENTITY_RATIO / EER_RATIO_MARGIN from ``eer-estimate-ratio`` on its
    #: complete documents (else the plan's ratio)
    estimates_ratio: bool = False

    @property
    def dev_budget(self) -> Optional[Any]:
        return dict(self.dev)["budget"] if self.dev is not None else None

    @property
    def train_data_name(self) -> str:
        """The directory of the run's simulated training data under ``data/<dataset>/``: the scenario's,
        or ``_complete<n>-<scenario>``, the scenario's data with n complete documents."""
        if self.complete_documents is not None:
            return f"_complete{self.complete_documents}-{self.scenario_name}"
        return self.scenario_name

    @property
    def dev_data_name(self) -> Optional[str]:
        """The directory of the run's simulated partial dev data under ``data/<dataset>/``:
        ``_dev-ee-<budget>`` or ``_dev-ee-proportional<scenario budget>`` (plus the EE parameters
        when they are not the paper's); None: the dataset's dev file."""
        if self.dev is None:
            return None
        p = dict(self.dev)
        name = (
            f"_dev-ee-{p['budget']}"
            if p["budget"] != "proportional"
            else f"_dev-ee-proportional{self.scenario.get('budget')}"
        )
        if p["keep_probability"] != 0.8:
            name += f"-keep{number_text(p['keep_probability'])}"
        if p["max_per_document"] != 10:
            name += f"-max{p['max_per_document']}"
        return name

    @property
    def scenario_name(self) -> str:
        return self.scenario.name if self.scenario is not None else GOLD_SCENARIO

    @property
    def key(self) -> Tuple:
        """(dataset, scenario, approach, encoder, seed, ratio, ablation): what makes a run its own."""
        return (
            self.dataset.name,
            self.scenario_name,
            self.approach,
            self.encoder,
            self.seed,
            self.ratio,
            self.ablation,
        )

    @property
    def family(self) -> str:
        return split_approach(self.approach)[0]

    @property
    def variant(self) -> str:
        return split_approach(self.approach)[1]

    @property
    def trains_with_ratio(self) -> bool:
        """Its family trains with the expected entity ratio (rho_hat, rho*; :mod:`~eer_benchmark.plan.approaches`)."""
        return FAMILIES[self.family].ratio

    @property
    def approach_dir(self) -> str:
        if self.ratio is None:
            return self.approach
        return f"{self.approach}_rho{number_text(self.ratio[0])}_gamma{number_text(self.ratio[1])}"

    @property
    def rel(self) -> Path:
        """``<dataset>/<scenario>/<approach>/<encoder>/seed<k>``; an ablation run:
        ``<dataset>/ablations/<setting>/<scenario>/<approach>/<encoder>/seed<k>``."""
        tail = Path(self.scenario_name) / self.approach_dir / self.encoder_slug / f"seed{self.seed}"
        if self.ablation is not None:
            return Path(self.dataset.name) / ABLATIONS_DIR / self.ablation / tail
        return Path(self.dataset.name) / tail

    @property
    def name(self) -> str:
        return str(self.rel)
