"""The benchmark's dictionary scenario (``type: 'dictionary'``, issue 48): its data made by the library's
dictionary simulator, its complete-document variant, and the plan's checks of ``coverage``."""

import json

import pytest
from conftest import FIXTURES
from test_benchmark import plan_data

from eer_benchmark import PlanError, Runner, parse_plan
from eer_plugin.annotation.dictionary_scenario import dictionary_annotation
from eer_plugin.corpus.formats import read_conll

TINY = FIXTURES / "conll2003_tiny.txt"


def test_benchmark_scenario_of_type_dictionary(tmp_path):
    settings = [
        {
            "name": "estimate, then bind",
            "estimate_ratio": {"complete_documents": 1},
            "env": {"EER_RATIO_CONTROL": "bind"},
        }
    ]
    data = plan_data(
        scenarios=[{"name": "Dict-50", "type": "dictionary", "coverage": 0.5}],
        approaches=["sns_shortest", "eer_short"],
        ablations={"approach": "eer_short", "scenarios": ["Dict-50"], "seeds": [0], "settings": settings},
    )
    plan = parse_plan(data).expand()
    [scenario] = plan.scenarios
    assert (
        scenario.get("coverage") == 0.5
        and "50% of the training set's distinct gold entity forms" in scenario.describe()
    )
    runner = Runner(plan, str(tmp_path / "bench"), echo=lambda *_: None)
    runner.prepare_data(plan.runs)
    root = tmp_path / "bench" / "data" / "fx"
    stats = json.loads((root / "Dict-50" / "seed0.stats.json").read_text())
    assert (
        stats["precision"] == dictionary_annotation(read_conll(TINY), 0.5, 0)[1]["precision"]
        and stats["type"] == "dictionary"
    )
    complete = json.loads((root / "_complete1-Dict-50" / "seed0.stats.json").read_text())
    assert complete["complete_documents"] == 1 and complete["coverage"] == 0.5
    with pytest.raises(PlanError, match=r"'coverage' must be a number in \(0, 1\]"):
        parse_plan(plan_data(scenarios=[{"name": "D", "type": "dictionary", "coverage": 2}]))
    with pytest.raises(PlanError, match=r"type 'dictionary' needs 'coverage'"):
        parse_plan(plan_data(scenarios=[{"name": "D", "type": "dictionary"}]))
