"""The plan language: reading a plan file (jsonnet, JSON or YAML) and checking every key, with errors
(:class:`~eer_benchmark.plan.plan.PlanError`) that name the key, what was expected and the fix. The
checks of single values are in :mod:`~eer_benchmark.plan.checks`, the studies' keys (ratio grid,
learning curve, ablations) in :mod:`~eer_benchmark.plan.parse_studies`."""

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from eer_benchmark.plan.approaches import GOLD_APPROACHES, KNOWN_APPROACHES
from eer_benchmark.plan.checks import (
    NAME_PATTERN,
    check_approaches,
    check_env,
    check_epochs,
    check_file,
    check_keys,
    check_min_steps,
    check_names,
    check_seeds,
    require,
)
from eer_benchmark.plan.parse_studies import (
    check_ablations,
    check_blocks,
    check_curve_settings,
    check_learning_curve,
    check_ratio_grid,
)
from eer_benchmark.plan.plan import ABLATIONS_DIR, GOLD_SCENARIO, Plan, PlanError, slug
from eer_benchmark.plan.scenario import (
    READER_OPTION_VARIABLES,
    SCENARIO_PARAMETERS,
    SCENARIO_TYPES,
    Dataset,
    Scenario,
    dataset_reader_options,
)
from eer_plugin.runtime.encoders import config_defaults
from eer_plugin.runtime.settings import unset_defaults

PLAN_KEYS = (
    "name",
    "description",
    "datasets",
    "scenarios",
    "approaches",
    "encoders",
    "seeds",
    "epochs",
    "env",
    "reference",
    "ratio_grid",
    "learning_curve",
    "bootstrap",
    "min_steps",
    "ablations",
    "blocks",
)


def read_plan_file(path: str) -> Any:
    """A plan file as Python data: ``.yaml``/``.yml`` with PyYAML, anything else as jsonnet (which
    includes JSON; ``std.extVar(NAME)`` reads environment variables, or an ``EER_*`` setting's default)."""
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
        # the environment, and the settings' defaults for the EER_* variables it does not set
        text = _jsonnet.evaluate_file(str(p), ext_vars={**unset_defaults(), **os.environ})
    except RuntimeError as err:
        raise PlanError(f"{p}: invalid jsonnet: {err}") from None
    return json.loads(text)


def load_plan(path: str, check_files: bool = True) -> Plan:
    """Reads and validates a plan (relative data paths are relative to the current directory)."""
    return parse_plan(read_plan_file(path), str(path), check_files).expand()


def check_scenario(data: Any, index: int) -> Scenario:
    where = f"scenarios[{index}]"
    require(isinstance(data, dict), f"{where} must be a mapping with 'name' and 'type'")
    name, kind = data.get("name"), data.get("type")
    require(
        isinstance(name, str) and bool(NAME_PATTERN.match(name or "")),
        f"{where}: 'name' must be a name like 'EE-1000' (letters, digits, . _ + -), got {name!r}",
    )
    where = f"scenario {name!r}"
    require(name != GOLD_SCENARIO, f"{where}: the name 'gold' is reserved for the gold approaches' runs")
    require(name != ABLATIONS_DIR, f"{where}: the name 'ablations' is reserved for the ablation study's runs")
    require(kind in SCENARIO_TYPES, f"{where}: unknown type {kind!r}; expected one of {', '.join(SCENARIO_TYPES)}")
    defaults = SCENARIO_PARAMETERS[kind]
    check_keys(data, ["name", "type", "env", "epochs", "min_steps", "seeds", "approaches", *defaults], where)
    params = {}
    for key, default in defaults.items():
        value = data.get(key, default)
        require(value is not None, f"{where}: type {kind!r} needs {key!r}")
        if key in ("budget", "max_per_document", "max_fp_length"):
            require(
                isinstance(value, int) and not isinstance(value, bool) and value >= 1,
                f"{where}: {key!r} must be a positive integer, got {value!r}",
            )
        else:
            require(
                isinstance(value, (int, float)) and 0 < value <= 1,
                f"{where}: {key!r} must be a number in (0, 1], got {value!r}",
            )
            value = float(value)
        params[key] = value
    env = check_env(data.get("env", {}), f"{where}: env")
    require("EER_EPOCHS" not in env, f"{where}: set epochs with the scenario's 'epochs', not env.EER_EPOCHS")
    epochs = check_epochs(data["epochs"], f"{where}: 'epochs'") if "epochs" in data else {}
    require(
        "EER_MIN_STEPS" not in env,
        f"{where}: set the step budget with the scenario's 'min_steps', not env.EER_MIN_STEPS",
    )
    min_steps = check_min_steps(data["min_steps"], f"{where}: 'min_steps'") if "min_steps" in data else None
    seeds = tuple(check_seeds(data["seeds"], f"{where}: 'seeds'")) if "seeds" in data else None
    approaches = _scenario_approaches(data["approaches"], where) if "approaches" in data else None
    items = (tuple(sorted(params.items())), tuple(sorted(env.items())), tuple(sorted(epochs.items())))
    return Scenario(name, kind, *items, min_steps=min_steps, seeds=seeds, approaches=approaches)


def _scenario_approaches(value: Any, where: str) -> Tuple[str, ...]:
    """A scenario's own ``approaches``: a non-empty list of distinct partial-annotation approaches (the gold
    approaches ignore the scenario: their runs are the plan's, shown in every scenario's block)."""
    approaches = check_approaches(value, f"{where}: 'approaches'")
    require(bool(approaches), f"{where}: 'approaches' is empty; leave it out to train the plan's approaches")
    gold = [a for a in approaches if a in GOLD_APPROACHES]
    require(
        not gold,
        f"{where}: 'approaches' lists {', '.join(gold)}, which ignores the scenario's data; put it in the plan's 'approaches'",
    )
    return tuple(approaches)


def parse_plan(data: Any, path: str = "<plan>", check_files: bool = True) -> Plan:
    """Validates plan data (see the module docstring); errors are :class:`PlanError` naming the key."""
    try:
        return _parse_plan(data, path, check_files)
    except PlanError as err:
        raise PlanError(f"plan {path}: {err}") from None


def _parse_plan(data: Any, path: str, check_files: bool) -> Plan:
    require(isinstance(data, dict), "the plan must be a mapping (jsonnet/JSON object or YAML mapping)")
    check_keys(data, PLAN_KEYS, "plan")
    env = check_env(data.get("env", {}), "env")
    datasets = _datasets(data.get("datasets"), check_files)
    approaches, scenarios = _approaches_and_scenarios(data)
    encoders = _encoders(data, env)
    seeds = check_seeds(data.get("seeds", [0]), "'seeds'")
    epochs, min_steps = _epochs(data, env), _min_steps(data, env)
    _check_ratio_numbers(env, datasets, scenarios)
    reference = _reference(data.get("reference"), approaches)
    dataset_names, scenario_names = [d.name for d in datasets], [s.name for s in scenarios]
    grid = (
        check_ratio_grid(data["ratio_grid"], scenarios, dataset_names, scenario_names)
        if data.get("ratio_grid") is not None
        else None
    )
    curve = (
        check_learning_curve(data["learning_curve"], dataset_names) if data.get("learning_curve") is not None else None
    )
    ablations = (
        check_ablations(data["ablations"], dataset_names, scenario_names) if data.get("ablations") is not None else None
    )
    blocks = (
        check_blocks(data["blocks"], ablations, scenario_names, reference, seeds)
        if data.get("blocks") is not None
        else []
    )
    if curve is not None:
        check_curve_settings(curve, ablations)
    return Plan(
        path=str(path),
        name=str(data.get("name") or Path(path).stem),
        datasets=datasets,
        scenarios=scenarios,
        approaches=approaches,
        encoders=encoders,
        encoder_slugs=_encoder_slugs(encoders, ablations, blocks, curve),
        seeds=list(seeds),
        env=env,
        epochs=epochs,
        reference=reference,
        ratio_grid=grid,
        learning_curve=curve,
        bootstrap=_bootstrap(data.get("bootstrap")),
        min_steps=min_steps,
        ablations=ablations,
        blocks=blocks,
    )


def _datasets(items: Any, check_files: bool) -> List[Dataset]:
    """``datasets: [{name, train, dev, test, env}]``: a non-empty list, distinct names."""
    datasets: List[Dataset] = []
    require(isinstance(items, list) and items, "'datasets' must be a non-empty list of {name, train, dev, test}")
    for index, item in enumerate(items):
        require(isinstance(item, dict), f"datasets[{index}] must be a mapping with name, train, dev, test")
        name = item.get("name")
        require(
            isinstance(name, str) and bool(NAME_PATTERN.match(name or "")),
            f"datasets[{index}]: 'name' must be a name like 'eng-c', got {name!r}",
        )
        where = f"dataset {name!r}"
        check_keys(item, ["name", "train", "dev", "test", "env", *READER_OPTION_VARIABLES], where)
        for key in ("train", "dev", "test"):
            require(key in item, f"{where}: missing key {key!r} (a gold data file)")
        files = {key: check_file(item[key], f"{where}: {key!r}", check_files) for key in ("train", "dev", "test")}
        dataset_env = check_env(item.get("env", {}), f"{where}: env")
        try:
            reader = tuple(sorted(dataset_reader_options(item).items()))
        except ValueError as err:
            raise PlanError(f"{where}: {err}") from None
        datasets.append(
            Dataset(name, files["train"], files["dev"], files["test"], tuple(sorted(dataset_env.items())), reader)
        )
    require(len({d.name for d in datasets}) == len(datasets), "two datasets have the same name")
    return datasets


def _approaches_and_scenarios(data: Dict[str, Any]) -> Tuple[List[str], List[Scenario]]:
    require("approaches" in data, f"'approaches' is missing; known approaches: {', '.join(KNOWN_APPROACHES)}")
    approaches = check_approaches(data["approaches"], "approaches")
    require(bool(approaches), "'approaches' is empty")
    scenarios = [check_scenario(item, i) for i, item in enumerate(data.get("scenarios") or [])]
    require(len({s.name for s in scenarios}) == len(scenarios), "two scenarios have the same name")
    for scenario in scenarios:
        missing = [a for a in scenario.approaches or () if a not in approaches]
        require(
            not missing,
            f"scenario {scenario.name!r}: 'approaches' lists {', '.join(missing)}, not among the plan's 'approaches'; add it there",
        )
    require(
        bool(scenarios) or all(a in GOLD_APPROACHES for a in approaches),
        f"'scenarios' is empty, but approaches other than {' and '.join(GOLD_APPROACHES)} need one",
    )
    return approaches, scenarios


def _encoders(data: Dict[str, Any], env: Dict[str, str]) -> List[str]:
    """``encoders``, else env.EER_ENCODER, else the config default (taken out of ``env``)."""
    if "encoders" in data:
        require("EER_ENCODER" not in env, "set the encoder either with 'encoders' or with env.EER_ENCODER, not both")
        encoders = check_names(data["encoders"], "encoders")
        require(bool(encoders), "'encoders' is empty")
    else:
        encoders = [env.pop("EER_ENCODER", config_defaults()["EER_ENCODER"])]
    env.pop("EER_ENCODER", None)
    return encoders


def _epochs(data: Dict[str, Any], env: Dict[str, str]) -> Dict[str, int]:
    """``epochs``, else env.EER_EPOCHS (taken out of ``env``); {}: the configs' defaults."""
    if "epochs" in data:
        require("EER_EPOCHS" not in env, "set epochs either with 'epochs' or with env.EER_EPOCHS, not both")
        return check_epochs(data["epochs"], "'epochs'")
    if "EER_EPOCHS" in env:
        require(
            env["EER_EPOCHS"].isdigit() and int(env["EER_EPOCHS"]) >= 1,
            f"env: EER_EPOCHS must be a positive integer, got {env['EER_EPOCHS']!r}",
        )
        return check_epochs(int(env.pop("EER_EPOCHS")), "env: EER_EPOCHS")
    return {}


def _min_steps(data: Dict[str, Any], env: Dict[str, str]) -> Optional[int]:
    if "min_steps" not in data:
        return None
    require(
        "EER_MIN_STEPS" not in env, "set the step budget either with 'min_steps' or with env.EER_MIN_STEPS, not both"
    )
    return check_min_steps(data["min_steps"], "'min_steps'")


def _check_ratio_numbers(env: Dict[str, str], datasets: List[Dataset], scenarios: List[Scenario]) -> None:
    """EER_ENTITY_RATIO and EER_RATIO_MARGIN are numbers wherever the plan sets them."""
    for key in ("EER_ENTITY_RATIO", "EER_RATIO_MARGIN"):
        places = [("env", env)] + [(f"dataset {d.name!r}: env", dict(d.env)) for d in datasets]
        places += [(f"scenario {s.name!r}: env", dict(s.env)) for s in scenarios]
        for where, values in places:
            if key in values:
                try:
                    float(values[key])
                except ValueError:
                    raise PlanError(f"{where}: {key} must be a number, got {values[key]!r}") from None


def _reference(reference: Any, approaches: List[str]) -> Optional[str]:
    if reference is not None:
        require(
            isinstance(reference, str) and reference in KNOWN_APPROACHES,
            f"'reference': unknown approach {reference!r}; known approaches: {', '.join(KNOWN_APPROACHES)}",
        )
        require(
            reference in approaches and reference not in GOLD_APPROACHES,
            f"'reference' {reference!r} must be one of the plan's approaches other than {' and '.join(GOLD_APPROACHES)}",
        )
    return reference


def _encoder_slugs(
    encoders: List[str],
    ablations: Optional[Dict[str, Any]],
    blocks: List[Dict[str, Any]],
    curve: Optional[Dict[str, Any]] = None,
) -> Dict[str, str]:
    """The directory names of the plan's encoders and of the ablation settings', blocks' and learning-curve
    cells' own (distinct)."""
    own_encoders = [setting["encoder"] for setting in (ablations or {}).get("settings", []) if setting["encoder"]]
    own_encoders += [block["encoder"] for block in blocks]
    own_encoders += [cell["encoder"] for cell in (curve or {}).get("cells", []) if cell.get("encoder")]
    slugs = {e: slug(e) for e in dict.fromkeys(encoders + own_encoders)}
    require(len(set(slugs.values())) == len(slugs), f"two encoders share the directory name: {slugs}")
    return slugs


def _bootstrap(given: Any) -> Dict[str, Any]:
    bootstrap = {"resamples": 100_000, "confidence": 0.99, "seed": 0}
    if given is not None:
        require(isinstance(given, dict), "'bootstrap' must be a mapping with resamples, confidence, seed")
        check_keys(given, list(bootstrap), "bootstrap")
        bootstrap.update(given)
        require(
            isinstance(bootstrap["resamples"], int) and bootstrap["resamples"] >= 1,
            "bootstrap: 'resamples' must be a positive integer",
        )
        require(
            isinstance(bootstrap["confidence"], float) and 0 < bootstrap["confidence"] < 1,
            "bootstrap: 'confidence' must be in (0, 1)",
        )
        require(isinstance(bootstrap["seed"], int), "bootstrap: 'seed' must be an integer")
    return bootstrap
