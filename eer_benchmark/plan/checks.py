"""The checks of plan values shared by :mod:`~eer_benchmark.plan.parse` (the plan, its data sets and
scenarios) and :mod:`~eer_benchmark.plan.parse_studies` (ratio grid, learning curve, ablations): each
raises :class:`~eer_benchmark.plan.plan.PlanError` naming the key, what was expected and the fix."""

import difflib
import os
import re
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from eer_benchmark.plan.approaches import KNOWN_APPROACHES, VARIANTS
from eer_benchmark.plan.plan import PlanError
from eer_benchmark.plan.scenario import READER_OPTION_VARIABLES
from eer_plugin.runtime.settings import BY_NAME, MACHINE_VARIABLES

#: EER_* variables the plan sets through its own keys, not through ``env``
CONTROLLED_VARIABLES = {
    "EER_TRAIN_DATA": "datasets[].train (simulated per scenario)",
    "EER_GOLD_TRAIN_DATA": "datasets[].train",
    "EER_DEV_DATA": "datasets[].dev (a partial dev set: an ablation setting's 'dev')",
    "EER_TEST_DATA": "datasets[].test",
    "EER_SEED": "seeds",
    **{variable: f"datasets[].{key}" for key, variable in READER_OPTION_VARIABLES.items()},
}
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def require(condition: bool, message: str) -> None:
    if not condition:
        raise PlanError(message)


def check_keys(data: Mapping, allowed: Sequence[str], where: str) -> None:
    unknown = [k for k in data if k not in allowed]
    require(not unknown, f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; expected {', '.join(allowed)}")


def check_names(values, where: str) -> List[str]:
    require(isinstance(values, list) and all(isinstance(v, str) for v in values), f"{where} must be a list of names")
    return list(values)


def check_env(data: Any, where: str) -> Dict[str, str]:
    require(isinstance(data, dict), f"{where} must be a mapping of environment variables to values")
    env = {}
    for key, value in data.items():
        require(isinstance(key, str) and bool(key), f"{where}: variable names must be strings")
        require(
            key not in CONTROLLED_VARIABLES,
            f"{where}: {key} is set by the runner from the plan's {CONTROLLED_VARIABLES.get(key)}; do not set it in env",
        )
        if key.startswith("EER_") and key not in BY_NAME and key not in MACHINE_VARIABLES:
            close = difflib.get_close_matches(key, list(BY_NAME), n=1)
            hint = f"did you mean {close[0]}?" if close else "eer-ner eer-settings lists them"
            raise PlanError(f"{where}: {key} is not a setting; {hint} (a misspelt setting would be ignored silently)")
        require(value is not None and not isinstance(value, (dict, list)), f"{where}: {key} must be a string or number")
        env[key] = str(value).lower() if isinstance(value, bool) else str(value)
        if key in BY_NAME and BY_NAME[key].is_hyperparameter:  # a value its config key takes (the runner's -o)
            try:
                BY_NAME[key].value(env[key], "eer", "short")
            except ValueError as error:
                raise PlanError(f"{where}: {error}") from None
    return env


def check_file(path: Any, where: str, check: bool) -> str:
    require(isinstance(path, str) and bool(path), f"{where} must be a file path")
    resolved = Path(path).expanduser()
    if not resolved.is_absolute():
        resolved = Path.cwd() / resolved
    resolved = Path(os.path.normpath(resolved))
    if check and not resolved.exists():
        raise PlanError(
            f"{where}: file not found: {resolved} (relative paths are relative to the current directory {Path.cwd()})"
        )
    return str(resolved)


def check_seeds(value: Any, where: str) -> List[int]:
    """``seeds`` of a plan, a scenario or a study: a non-empty list of distinct non-negative integers."""
    require(
        isinstance(value, list)
        and bool(value)
        and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value),
        f"{where} must be a non-empty list of non-negative integers, got {value!r}",
    )
    require(len(set(value)) == len(value), f"{where} lists a seed twice")
    return list(value)


def check_min_steps(value: Any, where: str) -> int:
    """``min_steps`` of a plan or scenario: a positive integer, passed to the runs as EER_MIN_STEPS (the
    trainer then makes the epochs longer until epochs x batches per epoch reaches it)."""
    require(
        isinstance(value, int) and not isinstance(value, bool) and value >= 1,
        f"{where} must be a positive integer (the least number of optimizer steps of a run), got {value!r}",
    )
    return value


def check_epochs(value: Any, where: str) -> Dict[str, int]:
    """``epochs`` of a plan or scenario: one positive integer for every variant, or a mapping from
    variant (all, short, shortest) to a positive integer (a variant left out keeps the config default,
    the paper's 20 for all and 50 for short and shortest)."""

    def positive(number: Any) -> bool:
        return isinstance(number, int) and not isinstance(number, bool) and number >= 1

    if isinstance(value, dict):
        for key, number in value.items():
            require(key in VARIANTS, f"{where}: unknown variant {key!r}; expected {', '.join(VARIANTS)}")
            require(positive(number), f"{where}: {key!r} must be a positive integer, got {number!r}")
        return dict(value)
    require(
        positive(value),
        f"{where} must be a positive integer or a mapping like {{all: 2, short: 10, shortest: 10}}, got {value!r}",
    )
    return dict.fromkeys(VARIANTS, value)


def check_approaches(values: Any, where: str) -> List[str]:
    names = check_names(values, where)
    for name in names:
        require(
            name in KNOWN_APPROACHES,
            f"{where}: unknown approach {name!r}; known approaches: {', '.join(KNOWN_APPROACHES)}",
        )
    require(len(set(names)) == len(names), f"{where}: an approach is listed twice")
    return names


def check_subset(values: Any, known: List[str], where: str) -> Optional[List[str]]:
    """A study's list of data set or scenario names (each one the plan has); None when not given."""
    if values is None:
        return None
    names = check_names(values, where)
    for name in names:
        require(name in known, f"{where}: unknown name {name!r}; the plan has {', '.join(known)}")
    return names
