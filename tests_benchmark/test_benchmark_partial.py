"""Issue 12's benchmark rows: checkpoint selection on a partial dev set (an ablation setting's ``dev``)
and "EER-short, ratio estimated from N complete training documents" (``estimate_ratio``): the
simulator that puts the complete documents inside the budget, the plan keys, the simulated data,
the run steps and the Ablations section on fabricated runs. The end-to-end run with the tiny encoder
is marked slow."""

import json
import os
from pathlib import Path

import pytest
from test_benchmark import fabricate, plan_data, read_csv

from eer_benchmark import PlanError, Report, Runner, parse_plan
from eer_benchmark.analyse.studies import ablation_notes, setting_text
from eer_benchmark.plan.selection import block_counts, dry_run
from eer_plugin.annotation import simulators
from eer_plugin.annotation.simulators import SimulationError
from eer_plugin.corpus.documents import Document

PARTIAL_DEV = {
    "name": "partial dev set",
    "dev": {"type": "ee", "budget": "proportional"},
    "env": {"EER_VALIDATION_METRIC": "+partial-f1"},
}
ESTIMATE = {
    "name": "ratio estimated from 2 complete documents",
    "estimate_ratio": {"complete_documents": 2},
    "seeds": [0, 1],
}


def corpus(documents: int = 60) -> list:
    """Documents with 1 to 12 spans each, one word apart."""
    docs = []
    for index in range(documents):
        count = 1 + index % 12
        tokens = [f"w{index}_{i}" for i in range(2 * count + 1)]
        spans = [(2 * i + 1, 2 * i + 2, "PER" if i % 2 else "LOC") for i in range(count)]
        docs.append(Document(f"d{index}", tokens, [len(tokens)], spans, is_complete=True))
    return docs


# ----------------------------------------------------------------------------------- the simulator
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_complete_documents_count_in_the_budget(seed):
    gold = corpus()
    by_id = {d.id: d for d in gold}
    docs, stats = simulators.ee_with_complete_documents(gold, budget=250, complete_documents=20, seed=seed)
    assert sum(len(d.spans) for d in docs) == 250 == stats["kept_spans"]  # the complete documents' spans included
    complete = [d for d in docs if d.is_complete]
    assert len(complete) == 20 == stats["complete_documents"] and [d.id for d in complete] == stats["complete_ids"]
    assert all(d.spans == by_id[d.id].spans for d in complete)  # exhaustively annotated: every gold span
    assert (
        stats["complete_spans"] == sum(len(d.spans) for d in complete)
        and stats["ee_budget"] == 250 - stats["complete_spans"]
    )
    assert sorted(d.id for d in docs) == sorted(by_id)  # every document once
    for d in docs:
        assert set(d.spans) <= set(by_id[d.id].spans) and not d.negative_spans
        assert d.is_complete or len(d.spans) <= 10  # the EE part keeps its per-document cap
    again, _ = simulators.ee_with_complete_documents(gold, budget=250, complete_documents=20, seed=seed)
    assert [(d.id, d.spans, d.is_complete) for d in again] == [(d.id, d.spans, d.is_complete) for d in docs]


def test_complete_documents_choice_depends_on_the_seed_and_errors():
    gold = corpus()
    chosen = {
        seed: simulators.ee_with_complete_documents(gold, 250, 20, seed=seed)[1]["complete_ids"] for seed in (0, 1)
    }
    assert chosen[0] != chosen[1]
    # the budget exactly spent by the complete documents: the rest stays unannotated
    docs, stats = simulators.ee_with_complete_documents(gold[:3], budget=1 + 2 + 3, complete_documents=3, seed=0)
    assert stats["ee_budget"] == 0 and all(d.is_complete for d in docs) and stats["kept_spans"] == 6
    with pytest.raises(SimulationError, match="hold .* spans, more than the budget of 5"):
        simulators.ee_with_complete_documents(gold[:3], budget=5, complete_documents=3, seed=0)
    with pytest.raises(SimulationError, match="only 3 documents"):
        simulators.ee_with_complete_documents(gold[:3], budget=50, complete_documents=4, seed=0)
    with pytest.raises(SimulationError, match="complete_documents must be at least 1"):
        simulators.ee_with_complete_documents(gold, budget=50, complete_documents=0, seed=0)


# ----------------------------------------------------------------------------------- plan keys
def name(run) -> str:
    """The run's name without the encoder directory."""
    return run.name.replace(f"/{run.encoder_slug}/", "/")


def partial_plan(**changes):
    data = plan_data(
        scenarios=[{"name": "EE", "type": "ee", "budget": 40}, {"name": "NNS", "type": "nns", "seeds": [0]}],
        approaches=["sns_shortest", "eer_short"],
        seeds=[0, 1],
        reference="sns_shortest",
        bootstrap={"resamples": 2000},
        ablations={"approach": "eer_short", "scenarios": ["EE"], "seeds": [0], "settings": [PARTIAL_DEV, ESTIMATE]},
    )
    data.update(changes)
    return data


def test_partial_dev_and_ratio_estimate_runs(tmp_path, capsys):
    plan = parse_plan(partial_plan()).expand()
    runner = Runner(plan, str(tmp_path / "bench"))
    ablations = {name(r): r for r in plan.runs if r.ablation}
    assert list(ablations) == [
        "fx/ablations/partial-dev-set/EE/eer_short/seed0",
        "fx/ablations/ratio-estimated-from-2-complete-documents/EE/eer_short/seed0",  # the setting's own seeds
        "fx/ablations/ratio-estimated-from-2-complete-documents/EE/eer_short/seed1",
    ]
    assert block_counts(plan.runs)["ablations"] == 3
    by_name = {name(r): r for r in plan.runs}
    base = by_name["fx/EE/eer_short/seed0"]
    dev_run = ablations["fx/ablations/partial-dev-set/EE/eer_short/seed0"]
    estimate_run = ablations["fx/ablations/ratio-estimated-from-2-complete-documents/EE/eer_short/seed1"]
    # partial dev: the scenario's training data, the simulated dev file, selection on partial-f1
    env, base_env = runner.run_settings(dev_run), runner.run_settings(base)
    data = tmp_path / "bench" / "data" / "fx"
    assert env["EER_TRAIN_DATA"] == base_env["EER_TRAIN_DATA"] and base_env["EER_DEV_DATA"].endswith(
        "conll2003_tiny_dev.txt"
    )
    assert env["EER_DEV_DATA"] == str(data / "_dev-ee-proportional40" / "seed0.jsonl")
    assert env["EER_VALIDATION_METRIC"] == "+partial-f1" and base_env["EER_VALIDATION_METRIC"] == "+f1-measure-overall"
    assert plan.reference_run(dev_run) is base and plan.reference_run(estimate_run) is by_name["fx/EE/eer_short/seed1"]
    # ratio estimate: its own training data, the estimate's suggestion (a placeholder until the step ran)
    env = runner.run_settings(estimate_run)
    assert (
        env["EER_TRAIN_DATA"] == str(data / "_complete2-EE" / "seed1.jsonl")
        and env["EER_DEV_DATA"] == base_env["EER_DEV_DATA"]
    )
    assert env["EER_ENTITY_RATIO"] == env["EER_RATIO_MARGIN"] == "<estimated>"
    command = runner.estimate_command(estimate_run)
    assert command[:3] == ["allennlp", "eer-estimate-ratio", os.path.relpath(env["EER_TRAIN_DATA"])] and command[
        -1
    ].endswith(".seed1.ratio_estimate.json")  # moved into the run directory after training
    # the subprocesses start in the caller's directory (or the runner's workdir) and are given paths relative to it
    elsewhere = Runner(plan, str(tmp_path / "bench"), workdir=str(tmp_path)).estimate_command(estimate_run)
    assert elsewhere[2] == os.path.relpath(env["EER_TRAIN_DATA"], tmp_path) == "bench/data/fx/_complete2-EE/seed1.jsonl"
    assert (
        "--variant" in command
        and command[command.index("--variant") + 1] == "short"
        and runner.estimate_command(dev_run) is None
    )
    runner.estimate_path(estimate_run).parent.mkdir(parents=True)
    runner.estimate_path(estimate_run).write_text(
        json.dumps(
            {
                "ratio": 0.21,
                "low": 0.18,
                "high": 0.25,
                "documents": 2,
                "suggested": {"entity_ratio": 0.215, "ratio_margin": 0.035},
            }
        )
    )
    assert (runner.settings(estimate_run)["EER_ENTITY_RATIO"], runner.settings(estimate_run)["EER_RATIO_MARGIN"]) == (
        "0.215",
        "0.035",
    )
    # the dry run shows the partial dev file and the estimate step
    dry_run(plan, runner, list(enumerate([[r] for r in plan.runs])))
    printed = capsys.readouterr().out
    assert (
        f"EER_DEV_DATA={data / '_dev-ee-proportional40' / 'seed0.jsonl'} (partial: EE on {plan.datasets[0].dev}, budget proportional)"
        in printed
    )
    assert "allennlp eer-estimate-ratio " in printed and "EER_VALIDATION_METRIC=+partial-f1" in printed


COMPLETE = {
    "name": "2 complete documents, plan's ratio",
    "complete_documents": 2,
    "approach": ["eer_short", "sns_shortest"],
}


def test_complete_documents_with_the_plan_s_ratio(tmp_path):
    """``complete_documents``: the estimate's training data (the same file), the plan's ratio, no estimate step;
    a setting with the reference approach compares EER with SNS on that data."""
    plan = parse_plan(
        partial_plan(ablations={"scenarios": ["EE"], "seeds": [0], "settings": [ESTIMATE, COMPLETE]})
    ).expand()
    runner = Runner(plan, str(tmp_path / "bench"))
    by_name = {name(r): r for r in plan.runs}
    eer = by_name["fx/ablations/2-complete-documents-plan-s-ratio/EE/eer_short/seed0"]
    sns = by_name["fx/ablations/2-complete-documents-plan-s-ratio/EE/sns_shortest/seed0"]
    estimate = by_name["fx/ablations/ratio-estimated-from-2-complete-documents/EE/eer_short/seed0"]
    assert (eer.complete_documents, eer.estimates_ratio, estimate.estimates_ratio) == (2, False, True)
    env, base_env = runner.run_settings(eer), runner.run_settings(by_name["fx/EE/eer_short/seed0"])
    assert (
        env["EER_TRAIN_DATA"]
        == runner.run_settings(estimate)["EER_TRAIN_DATA"]
        == runner.run_settings(sns)["EER_TRAIN_DATA"]
    )
    assert env["EER_TRAIN_DATA"].endswith("_complete2-EE/seed0.jsonl")
    assert (env["EER_ENTITY_RATIO"], env["EER_RATIO_MARGIN"]) == (
        base_env["EER_ENTITY_RATIO"],
        base_env["EER_RATIO_MARGIN"],
    )
    assert runner.estimate_command(eer) is None and runner.ratio_estimate(eer) is None
    assert plan.ratio_of(eer, {"entity_ratio": 0.3, "ratio_margin": 0.1}) == plan.ratio_of(
        by_name["fx/EE/eer_short/seed0"]
    )
    assert plan.reference_run(eer, "sns_shortest") is by_name["fx/EE/sns_shortest/seed0"]
    setting = next(s for s in plan.ablations["settings"] if s["name"] == COMPLETE["name"])
    assert setting_text(setting, eer) == "2 complete training documents (in the budget), the plan's ratio"
    assert setting_text(setting, sns) == "2 complete training documents (in the budget)"
    notes = ablation_notes([setting])
    assert "the CRF taggers observe their unmarked words as O" in notes and "eer-estimate-ratio" not in notes

    def fails(pattern, setting, scenarios=("EE",)):
        with pytest.raises(PlanError, match=pattern):
            parse_plan(partial_plan(ablations={"scenarios": list(scenarios), "settings": [setting]})).expand()

    fails(
        r"complete_documents must be a positive integer \(training documents annotated completely\), got 0",
        {**COMPLETE, "complete_documents": 0},
    )
    fails(
        r"give either 'estimate_ratio' .* or 'complete_documents' .*, not both", {**ESTIMATE, "complete_documents": 2}
    )
    fails(r"complete_documents needs an EE scenario .* not 'NNS' \(nns\)", COMPLETE, scenarios=["NNS"])


def test_simulated_partial_dev_and_complete_documents(tmp_path):
    plan = parse_plan(
        partial_plan(
            ablations={
                "scenarios": ["EE"],
                "seeds": [0],
                "settings": [
                    PARTIAL_DEV,
                    {**PARTIAL_DEV, "name": "fixed", "dev": {"budget": 5}},
                    {**ESTIMATE, "estimate_ratio": {"complete_documents": 1}},
                ],
            }
        )
    ).expand()
    runner = Runner(plan, str(tmp_path / "bench"), echo=lambda *_: None)
    runner.prepare_data(plan.runs)
    data = tmp_path / "bench" / "data" / "fx"
    proportional = json.loads((data / "_dev-ee-proportional40" / "seed0.stats.json").read_text())
    assert (proportional["dev_tokens"], proportional["train_tokens"]) == (98, 354)
    assert (
        proportional["budget"] == round(40 * 98 / 354) == proportional["kept_spans"] == 11
        and proportional["data"] == "dev"
    )
    assert json.loads((data / "_dev-ee-5" / "seed0.stats.json").read_text())["kept_spans"] == 5
    dev_docs = [json.loads(line) for line in (data / "_dev-ee-5" / "seed0.jsonl").read_text().splitlines()]
    assert sum(len(d["spans"]) for d in dev_docs) == 5 and not any(d.get("is_complete") for d in dev_docs)
    stats = json.loads((data / "_complete1-EE" / "seed0.stats.json").read_text())
    train = [json.loads(line) for line in (data / "_complete1-EE" / "seed0.jsonl").read_text().splitlines()]
    assert sum(len(d["spans"]) for d in train) == 40 == stats["kept_spans"]
    assert [d["id"] for d in train if d.get("is_complete")] == stats["complete_ids"] and stats[
        "complete_documents"
    ] == 1
    assert (data / "EE" / "seed0.jsonl").exists() and (data / "EE" / "seed1.jsonl").exists()
    # a setting whose data cannot be simulated fails its runs, not the benchmark
    plan = parse_plan(
        partial_plan(
            ablations={"scenarios": ["EE"], "settings": [{**ESTIMATE, "estimate_ratio": {"complete_documents": 3}}]}
        )
    ).expand()
    runner = Runner(plan, str(tmp_path / "bench2"), echo=lambda *_: None)
    run = next(r for r in plan.runs if r.ablation)
    runner.prepare_data([run])
    failure = runner.execute(run)
    assert (
        failure["status"] == "failed" and "more than the budget of 40" in failure["error"] and failure["attempts"] == 1
    )


def test_partial_dev_and_estimate_plan_errors():
    def fails(pattern, setting, **changes):
        with pytest.raises(PlanError, match=pattern):
            parse_plan(
                partial_plan(
                    ablations={"scenarios": changes.pop("scenarios", ["EE"]), "settings": [setting]}, **changes
                )
            ).expand()

    fails(r"a partial dev set needs env.EER_VALIDATION_METRIC '\+partial-f1'", {"name": "x", "dev": {"budget": 5}})
    fails(
        r"dev.budget must be a positive integer or 'proportional', got 'half'",
        {**PARTIAL_DEV, "dev": {"budget": "half"}},
    )
    fails(r"dev.type must be 'ee'", {**PARTIAL_DEV, "dev": {"type": "nns"}})
    fails(r"dev: unknown key\(s\) 'recall'", {**PARTIAL_DEV, "dev": {"recall": 0.5}})
    fails(
        r"estimate_ratio.complete_documents must be a positive integer",
        {"name": "x", "estimate_ratio": {"complete_documents": 0}},
    )
    fails(r"env.EER_ENTITY_RATIO comes from the ratio estimate", {**ESTIMATE, "env": {"EER_ENTITY_RATIO": "0.2"}})
    fails(r"estimate_ratio needs an EE scenario .* not 'NNS' \(nns\)", ESTIMATE, scenarios=["NNS"])
    fails(r"dev.budget 'proportional' needs an EE scenario", PARTIAL_DEV, scenarios=["NNS"])
    fails(
        r"env: EER_DEV_DATA is set by the runner from the plan's datasets\[\].dev \(a partial dev set: an ablation setting's 'dev'\)",
        {"name": "x", "env": {"EER_DEV_DATA": "dev.jsonl"}},
    )
    fails(r"'env' is missing", {"name": "x"})
    fails(r"seeds must be a non-empty list", {**ESTIMATE, "seeds": []})
    # a fixed budget needs no EE scenario
    plan = parse_plan(
        partial_plan(ablations={"scenarios": ["NNS"], "settings": [{**PARTIAL_DEV, "dev": {"budget": 5}}]})
    ).expand()
    assert [r.dev_data_name for r in plan.runs if r.ablation] == ["_dev-ee-5"]


# ----------------------------------------------------------------------------------- report
def test_ablations_section_shows_the_estimate_and_the_partial_dev_set(tmp_path):
    plan = parse_plan(partial_plan()).expand()
    runner = Runner(plan, str(tmp_path / "bench"))
    documents = 20
    for run in plan.runs:
        correct = {"partial-dev-set": 4, "ratio-estimated-from-2-complete-documents": 5 + run.seed}.get(run.ablation, 5)
        if run.approach == "sns_shortest":
            correct = 3
        if run.ablation and run.seed == 1:
            continue  # the estimate's seed 1: not run yet
        fabricate(runner, run, [(6, correct, 0)] * documents)
        if run.estimates_ratio:
            result_path = runner.run_dir(run) / "result.json"
            result = json.loads(result_path.read_text())
            result.update(
                entity_ratio=0.215,
                ratio_margin=0.035,
                ratio_estimate={
                    "ratio": 0.21,
                    "low": 0.18,
                    "high": 0.25,
                    "documents": 2,
                    "entity_ratio": 0.215,
                    "ratio_margin": 0.035,
                },
            )
            result_path.write_text(json.dumps(result))
    written = Report(plan, runner).write()
    section = Path(written["md"]).read_text().split("## Ablations")[1]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[0].startswith(
        "| setting | approach | seed | settings changed | P | R | F1 | estimated rho ± gamma | Δ F1 vs benchmark setting |"
    )
    f1 = lambda c: 100 * 2 * c / (c + 6)  # noqa: E731
    assert rows[1].startswith("| benchmark setting | EER-short | 0 | the plan's | 100.0 | 83.3 |")
    assert rows[2].startswith(
        "| benchmark setting | EER-short | 1 | the plan's |"
    )  # the estimate's seed 1 is compared with it
    assert rows[3].startswith(
        f"| partial dev set | EER-short | 0 | EER_VALIDATION_METRIC=+partial-f1, partial dev set (EE on the dev file, budget proportional to the dev file's size) "
        f"| 100.0 | 66.7 | {f1(4):.1f} | – | {f1(4) - f1(5):+.1f}‡ |"
    )
    estimate = [r for r in rows if r.startswith("| ratio estimated")]
    assert estimate[0].startswith(
        "| ratio estimated from 2 complete documents | EER-short | 0 | EER_ENTITY_RATIO / EER_RATIO_MARGIN estimated from 2 complete training documents "
        f"(in the budget) | 100.0 | 83.3 | {f1(5):.1f} | 0.215 ± 0.035 | +0.0 |"
    )
    assert (
        "| ratio estimated from 2 complete documents | EER-short | 1 |" in estimate[1]
        and "| not run | – |" in estimate[1]
    )
    text = Path(written["md"]).read_text()
    assert (
        "A partial dev set: the EE simulator's annotation of the dev file" in section
        and "Estimated rho ± gamma: `allennlp eer-estimate-ratio`" in section
    )
    assert "[0.18, 0.25]" in text  # the convergence table: the estimated band
    csv_rows = {(r["ablation"], r["seed"]): r for r in read_csv(written["csv"])}
    assert float(csv_rows[("ratio-estimated-from-2-complete-documents", "0")]["entity_ratio"]) == 0.215


def test_ablation_seeds_pooled_against_the_reference(tmp_path):
    """The claims paragraph's ablation comparison: one paired bootstrap per setting and approach over the
    seeds on which it and the reference finished, per-document counts summed (not one verdict per run)."""
    from eer_benchmark.analyse.studies import pooled_ablation_differences

    plan = parse_plan(partial_plan()).expand()
    runner = Runner(plan, str(tmp_path / "bench"))
    for run in plan.runs:
        correct = {(None, "sns_shortest"): 3}.get((run.ablation, run.approach), 5)
        if run.ablation == "ratio-estimated-from-2-complete-documents":
            correct = 5 if run.seed == 0 else 3
        fabricate(runner, run, [(6, correct, 0)] * 20)
    pooled = {e["setting"]["name"]: e for e in pooled_ablation_differences(Report(plan, runner))}
    assert list(pooled) == ["partial dev set", ESTIMATE["name"]]
    estimate = pooled[ESTIMATE["name"]]
    assert estimate["seeds"] == [0, 1] and estimate["run"].approach == "eer_short"
    # pooled over seeds 0 and 1, per document: EER tp 5 + 3 of 12 gold, SNS 3 + 3 of 12
    assert estimate["test"]["delta"] == pytest.approx(2 * 8 / (2 * 8 + 4) - 2 * 6 / (2 * 6 + 6))
    assert pooled["partial dev set"]["seeds"] == [0]
    # a setting that runs the reference approach too: its own reference run is not compared with itself
    plan = parse_plan(partial_plan(ablations={"scenarios": ["EE"], "seeds": [0], "settings": [COMPLETE]})).expand()
    runner = Runner(plan, str(tmp_path / "bench2"))
    for run in plan.runs:
        fabricate(runner, run, [(6, 4 if run.ablation else 5, 0)] * 20)
    (entry,) = pooled_ablation_differences(Report(plan, runner))
    assert entry["run"].approach == "eer_short" and entry["test"]["delta"] == pytest.approx(0.0)


# ----------------------------------------------------------------------------------- end to end
@pytest.mark.integration
@pytest.mark.slow
def test_partial_dev_and_estimate_end_to_end(tiny_encoder, tmp_path):
    """Both settings trained for real on the fixtures with the tiny encoder."""
    data = partial_plan(
        scenarios=[{"name": "EE", "type": "ee", "budget": 40}],
        approaches=["eer_short"],
        seeds=[0],
        reference=None,
        env={"EER_ENCODER": tiny_encoder, "EER_BATCH_SIZE": "4", "EER_MAX_LENGTH": "128"},
        ablations={
            "scenarios": ["EE"],
            "settings": [PARTIAL_DEV, {**ESTIMATE, "estimate_ratio": {"complete_documents": 1}, "seeds": [0]}],
        },
    )
    data.pop("reference")
    plan = parse_plan(data).expand()
    runner = Runner(plan, str(tmp_path / "bench"), echo=lambda *_: None, retries=0)
    runner.run_units(plan.units())
    records = {r.ablation: runner.record(r) for r in plan.runs}
    assert {k: v["status"] for k, v in records.items()} == {
        None: "done",
        "partial-dev-set": "done",
        "ratio-estimated-from-2-complete-documents": "done",
    }, records
    dev_run, estimate_run = (r for r in plan.runs if r.ablation)
    config = json.loads((runner.run_dir(dev_run) / "config.json").read_text())
    assert (
        config["validation_data_path"].endswith("_dev-ee-proportional40/seed0.jsonl")
        and config["trainer"]["validation_metric"] == "+partial-f1"
    )
    estimate = records["ratio-estimated-from-2-complete-documents"]["ratio_estimate"]
    written = json.loads(runner.estimate_path(estimate_run).read_text())  # in the run directory
    assert estimate["entity_ratio"] == written["suggested"]["entity_ratio"] and written["documents"] == 1
    config = json.loads((runner.run_dir(estimate_run) / "config.json").read_text())
    assert config["model"]["entity_ratio"] == pytest.approx(estimate["entity_ratio"])
    assert records["ratio-estimated-from-2-complete-documents"]["entity_ratio"] == estimate["entity_ratio"]
