"""Per-document evaluation (eer_benchmark.run.evaluation) and the benchmark runner (allennlp eer-benchmark):
plan validation, run grouping and shards, an end-to-end run on the fixtures with the tiny encoder
(resume, failure), and the report layout on fabricated run directories."""

import csv
import json
import re
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

import eer_plugin
from eer_benchmark import PlanError, Report, Runner, epochs_text, load_plan, parse_plan, select_shard
from eer_benchmark.commands import benchmark
from eer_benchmark.commands.benchmark import parse_shard

TRAIN, DEV = str(FIXTURES / "conll2003_tiny.txt"), str(FIXTURES / "conll2003_tiny_dev.txt")
SMOKE_PLAN = REPO / "benchmarks" / "plans" / "fixture_smoke.jsonnet"


PAPER_TABLE = r"""\begin{table*}\begin{tabular}{ll|c}
\toprule
Approach / Language & eng-c & avg\\
\midrule
Gold-BERT-all & 92.7 & 85.6\\
& \multicolumn{2}{c}{Non-Native Speaker Scenario (NNS): Recall=$50\%$ } \\
\cmidrule{2-3}
EER-BERT-all & \textbf{88.0} & 75.8\\
& \multicolumn{2}{c}{Exploratory Expert Scenario (EE): $1,000$ Annotations } \\
Raw-BERT-all      & 0.4  & 02.6 \\
Raw-BERT-shortest & 80.7 & 65.0\\
EER-BERT-short    & \textbf{89.0}$^\dagger$ & \:\,\textbf{71.7}$^\dagger$\\
\bottomrule
\end{tabular}
\caption{x}
\label{table:benchmark}
\end{table*}"""


PAPER_ROBUSTNESS = r"""\begin{table}[H]\begin{tabular}{lcccc}
\toprule
$[\rho-\gamma, \rho+\gamma]$& RS0 & RS1 & RS2 & Avg.\\
\midrule
$[0.23,0.23]^*$ & 86.8 & 87.4 & 87.0 & 87.1\\
$[0.30,0.30]$  & 79.1 & 79.4 & 79.7 & 79.4\\
$[0.10,0.20]^\dagger$ & 87.6 & 88.2 & 87.8 & 87.9\\
\bottomrule
\end{tabular}
\label{table:robustness}
\end{table}"""


def plan_data(**changes):
    data = {
        "datasets": [{"name": "fx", "train": TRAIN, "dev": DEV, "test": DEV}],
        "scenarios": [{"name": "EE-15", "type": "ee", "budget": 15}],
        "approaches": ["raw_shortest", "eer_short"],
        "seeds": [0],
        "epochs": 1,
    }
    data.update(changes)
    return data


def read_csv(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


# ----------------------------------------------------------------------------------- evaluation
@pytest.mark.integration
def status_of(main, argv) -> int:
    """The exit status of a command's ``main`` in this process (an input error exits from inside it)."""
    try:
        return main(argv)
    except SystemExit as exit_:
        return exit_.code


def test_document_counts_sum_to_the_evaluate_metrics(tiny_env, monkeypatch, tmp_path):
    """Per-document counts of a trained tagger (with and without an O-cost) and of SNS sum to the
    overall P/R/F1 of `allennlp evaluate`, and the counts JSON is what the runner reads."""
    from allennlp.commands.evaluate import evaluate_from_archive
    from allennlp.commands.train import train_model_from_file

    from eer_benchmark.run.evaluate_documents import main
    from eer_benchmark.run.evaluation import document_counts, gold_entity_ratio, load_model, summarize

    for config, o_cost in [("eer_short", None), ("eer_short", -1.5), ("sns_shortest", None)]:
        directory = tmp_path / config
        if not (directory / "model.tar.gz").exists():
            train_model_from_file(
                str(REPO / "training_configs" / f"{config}.jsonnet"),
                str(directory),
                overrides='{"trainer.num_epochs": 1}',
            )
        archive = str(directory / "model.tar.gz")
        counts = document_counts(archive, DEV, o_cost=o_cost)
        assert list(counts) == ["conll2003_tiny_dev-0", "conll2003_tiny_dev-1"]
        summary = summarize(counts)
        assert summary["tp"] + summary["fn"] == 26  # the gold spans of the dev fixture
        overrides = {"model.o_cost": o_cost} if o_cost is not None else ""
        metrics = evaluate_from_archive(archive, DEV, cmd_overrides=overrides)
        for ours, theirs in [
            ("precision", "precision-overall"),
            ("recall", "recall-overall"),
            ("f1", "f1-measure-overall"),
        ]:
            assert summary[ours] == pytest.approx(metrics[theirs], abs=1e-12), (config, o_cost, ours)
    # a negative cost favours O: no entity at all (the 1-epoch model tags almost everything)
    no_entities = document_counts(str(tmp_path / "eer_short" / "model.tar.gz"), DEV, o_cost=-1000.0)
    assert no_entities == {"conll2003_tiny_dev-0": [0, 0, 13], "conll2003_tiny_dev-1": [0, 0, 13]}
    # rho*: the gold subword ratio of the documents the run trains on (short: the annotated ones)
    _, _, archive = load_model(str(tmp_path / "eer_short" / "model.tar.gz"))
    ratio = gold_entity_ratio(archive.dataset_reader, str(FIXTURES / "conll2003_tiny_partial.jsonl"), TRAIN)
    assert 0 < ratio["rho_star"] < 1 and ratio["rho_star"] != ratio["rho_star_words"]
    output = tmp_path / "counts.json"
    main(
        [
            str(tmp_path / "eer_short" / "model.tar.gz"),
            DEV,
            "-o",
            str(output),
            "--train",
            str(FIXTURES / "conll2003_tiny_partial.jsonl"),
            "--gold-train",
            TRAIN,
        ]
    )
    written = json.loads(output.read_text())
    assert written["counts"] == document_counts(str(tmp_path / "eer_short" / "model.tar.gz"), DEV)
    assert written["ratio"] == ratio


# ----------------------------------------------------------------------------------- plans
def test_plan_validation_errors_are_clear(tmp_path):
    with pytest.raises(
        PlanError, match=r"unknown approach 'eer_fast'; known approaches: gold, gold_sns, raw_all, .*eer_shortest"
    ):
        parse_plan(plan_data(approaches=["eer_fast"]))
    missing = str(tmp_path / "nowhere" / "test.txt")
    with pytest.raises(PlanError, match=r"dataset 'fx': 'test': file not found: " + re.escape(missing)):
        parse_plan(plan_data(datasets=[{"name": "fx", "train": TRAIN, "dev": DEV, "test": missing}]))
    with pytest.raises(PlanError, match="dataset 'fx': missing key 'dev'"):
        parse_plan(plan_data(datasets=[{"name": "fx", "train": TRAIN, "test": DEV}]))
    with pytest.raises(PlanError, match=r"unknown key\(s\) 'epoch'; expected name, description, datasets"):
        parse_plan({**plan_data(), "epoch": 3})
    with pytest.raises(PlanError, match="scenario 'R': type 'random' needs 'keep_probability'"):
        parse_plan(plan_data(scenarios=[{"name": "R", "type": "random"}]))
    with pytest.raises(PlanError, match="scenario 'X': unknown type 'expert'; expected one of ee, nns, random, gold"):
        parse_plan(plan_data(scenarios=[{"name": "X", "type": "expert"}]))
    with pytest.raises(PlanError, match="EER_TRAIN_DATA is set by the runner"):
        parse_plan(plan_data(env={"EER_TRAIN_DATA": TRAIN}))
    # a hyperparameter's value is checked as the runner's -o will give it (its config key's type)
    with pytest.raises(PlanError, match=r"scenario 'N': env: EER_BATCH_SIZE must be an integer, got 'eight'"):
        parse_plan(plan_data(scenarios=[{"name": "N", "type": "nns", "env": {"EER_BATCH_SIZE": "eight"}}]))
    with pytest.raises(PlanError, match=r"^plan <plan>: env: EER_RATIO_INIT must be eer, all or none, got 'some'"):
        parse_plan(plan_data(env={"EER_RATIO_INIT": "some"}))
    with pytest.raises(PlanError, match="'reference' 'sns_shortest' must be one of the plan's approaches"):
        parse_plan(plan_data(reference="sns_shortest"))
    with pytest.raises(PlanError, match=r"ratio_grid: each setting must be \[rho, gamma\]"):
        parse_plan(plan_data(ratio_grid=[[0.15]]))
    with pytest.raises(PlanError, match="learning_curve.approaches: unknown approach 'eer'"):
        parse_plan(plan_data(learning_curve={"budgets": [5], "approaches": ["eer"]}))
    for text in ["2/2", "1", "a/b", "-1/3", "0/0"]:
        with pytest.raises(Exception, match=r"--shard must be i/n with 0 <= i < n"):
            parse_shard(text)
    assert parse_shard("1/4") == (1, 4)
    yaml_plan = tmp_path / "plan.yaml"
    yaml_plan.write_text(
        "datasets: [{name: fx, train: %s, dev: %s, test: %s}]\nscenarios: [{name: E, type: ee, budget: 15}]\n"
        "approaches: [eer_short, eer_fast]\n" % (TRAIN, DEV, DEV)
    )
    with pytest.raises(PlanError, match=f"plan {re.escape(str(yaml_plan))}: approaches: unknown approach 'eer_fast'"):
        load_plan(str(yaml_plan))


def test_bad_shard_and_plan_errors_from_the_command_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        benchmark.main([str(SMOKE_PLAN), "-o", str(tmp_path / "out"), "--shard", "3/2"])
    assert exit_info.value.code == 2  # argparse's usage error
    assert "--shard must be i/n with 0 <= i < n, e.g. 0/4; got '3/2'" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonnet"
    bad.write_text(json.dumps(plan_data(approaches=["cbl_shortest"])))
    assert status_of(benchmark.main, [str(bad), "-o", str(tmp_path / "out")]) == 1  # an input error: one line, status 1
    err = capsys.readouterr().err
    assert err.startswith("eer-benchmark: error: ") and "unknown approach 'cbl_shortest'; known approaches:" in err
    assert not (tmp_path / "out").exists()


def test_runs_units_shards_and_shared_runs():
    data = plan_data(
        datasets=[
            {"name": "a", "train": TRAIN, "dev": DEV, "test": DEV},
            {"name": "b", "train": TRAIN, "dev": DEV, "test": DEV},
        ],
        scenarios=[{"name": "EE-15", "type": "ee", "budget": 15}, {"name": "NNS", "type": "nns"}],
        approaches=["gold", "raw_shortest", "raw_cd_shortest", "raw_cd_short", "eer_short"],
        seeds=[0, 1],
        ratio_grid=[[0.15, 0.05], [0.2, 0.0]],
        learning_curve={"budgets": [10, 15], "approaches": ["eer_short"]},
    )
    plan = parse_plan(data).expand()
    keys = [run.key for run in plan.runs]
    assert len(keys) == len(set(keys))
    benchmark_runs = [r for r in plan.runs if "benchmark" in r.studies]
    assert len(benchmark_runs) == 2 * 2 + 2 * 2 * 4 * 2  # gold once per dataset and seed
    gold = [r for r in plan.runs if r.approach == "gold"]
    assert {r.scenario_name for r in gold} == {"gold"} and str(gold[0].rel) == "a/gold/gold/all-MiniLM-L6-v2/seed0"
    # the ratio grid's (0.15, 0.05) is the benchmark setting: the benchmark's eer_short runs, shared
    grid = [run for _, setting, run in plan.ratio_entries]
    assert len(grid) == 2 * 2 * 2  # datasets x settings x seeds, on the EE scenario only
    shared = [r for r in grid if r.ratio is None]
    assert shared and all({"benchmark", "ratio_grid"} <= set(r.studies) for r in shared)
    assert {r.approach_dir for r in grid if r.ratio} == {"eer_short_rho0.2_gamma0"}
    # the learning curve's EE-15 is the benchmark scenario (same simulation parameters): shared
    curve = [run for _, scheme, budget, run in plan.lc_entries]
    assert {r.scenario_name for r in curve} == {"EE-15", "EE-10", "Exh-10", "Exh-15"}
    assert all("benchmark" in r.studies for r in curve if r.scenario_name == "EE-15")
    # raw_cd_<v> joins the unit of raw_<v>; without raw_short, raw_cd_short is alone (trains its own)
    units = plan.units()
    assert sum(len(u) for u in units) == len(plan.runs)
    pairs = [u for u in units if len(u) > 1]
    assert pairs and all([r.approach for r in u] == ["raw_shortest", "raw_cd_shortest"] for u in pairs)
    assert all(len(u) == 1 for u in units if u[0].approach == "raw_cd_short")
    # shards partition the units deterministically
    shards = [select_shard(units, (i, 3)) for i in range(3)]
    assert sorted(p for shard in shards for p, _ in shard) == list(range(len(units)))
    assert select_shard(units, (1, 3)) == shards[1]
    runner = Runner(plan, "/tmp/unused-benchmark-dir")
    raw_cd = next(r for r in plan.runs if r.approach == "raw_cd_short")
    assert [c[1] for c in runner.commands(raw_cd)] == ["train", "tune-o-cost"]
    config = Path(runner.commands(raw_cd)[0][2])
    assert (
        config.parent == Path(eer_plugin.__file__).parent / "training_configs"
        and config.name == "raw_short.jsonnet"
        and config.is_file()
    )
    env = runner.run_settings(next(r for r in grid if r.ratio))
    assert (env["EER_ENTITY_RATIO"], env["EER_RATIO_MARGIN"], env["EER_EPOCHS"]) == ("0.2", "0", "1")


def test_a_gpu_run_searches_its_o_cost_and_evaluates_on_that_gpu(tmp_path, monkeypatch):
    """EER_CUDA_DEVICE reaches every step of a run, not only its training: on a lent H100 the test
    evaluation ran on the CPU (82 of 210 s) before it did."""
    from eer_benchmark.run.attempt import Attempt

    for device in ("-1", "0"):
        plan = parse_plan(
            plan_data(approaches=["raw_shortest", "raw_cd_shortest"], env={"EER_CUDA_DEVICE": device})
        ).expand()
        runner = Runner(plan, str(tmp_path / f"bench{device}"))
        raw_cd = next(r for r in plan.runs if r.approach == "raw_cd_shortest")
        search = runner.commands(raw_cd)[-1]
        assert search[1] == "tune-o-cost" and search[search.index("--cuda-device") + 1] == device
        seen = []
        monkeypatch.setattr(Attempt, "step", lambda self, command, env, name, seen=seen: seen.append(command) or 1.0)
        attempt = Attempt(runner, raw_cd, tmp_path / "log")
        attempt.directory.mkdir(parents=True)
        (attempt.directory / "doc_counts.json").write_text("{}")
        attempt.evaluate(runner.environment(raw_cd), attempt.directory / "model.tar.gz")
        assert "evaluate_documents" in seen[0][2] and seen[0][seen[0].index("--cuda-device") + 1] == device


def test_plan_files_in_the_repository_are_valid(monkeypatch):
    monkeypatch.chdir(REPO)
    smoke = load_plan(str(SMOKE_PLAN))
    assert [r.approach for r in smoke.runs] == ["raw_shortest", "eer_short"]
    conll = load_plan(str(REPO / "benchmarks" / "plans" / "conll_en_minilm.jsonnet"), check_files=False)
    assert [d.name for d in conll.datasets] == ["eng-c"] and [s.name for s in conll.scenarios] == [
        "EE",
        "NNS",
        "Dict-20",
        "Dict-50",
    ]
    assert conll.seeds == [0, 1, 2] and conll.reference == "sns_shortest"
    from eer_benchmark.plan.selection import block_counts

    # issue 11's rerun: Gold and Gold-SNS and the EE block on seeds 0, 1, 2, NNS on seed 0 (issue 48: seeds 0-2), the studies on seed 0
    # (ablations: 7 settings on seed 0, the estimated ratio on seeds 0-2, the mpnet encoder on three approaches,
    # the complete documents with the plan's ratio on EER-short and SNS-shortest, seeds 0-2, the ratio weight on EE and NNS,
    # the binding ratio control on EER-short and EER-shortest, EE and NNS, its EE EER-short run being the ratio
    # grid's plan band under bind; the grid: 4 bands besides the benchmark's, then all 5 under bind; estimate, then bind on seeds 0-2)
    # issue 27's block on all-mpnet-base-v2: Gold, Raw+CD, CBL-BERT, SNS, EER-short, EER-shortest on EE seeds 0-2, SNS and
    # EER-short on NNS seed 0, the recipe pair on seeds 0-2, EER-short under the binding control on NNS seed 0; the
    # ablation 'mpnet encoder' (seed 0) has 3 of its runs
    blocks = block_counts(conll.runs)
    assert (
        blocks
        == {
            "gold": 2 * 3,
            "benchmark EE": 8 * 3,
            "benchmark NNS": 8 * 3,
            # issue 48: the dictionary scenarios' own approaches (Raw, Raw+CD, SNS-shortest, EER-short, EER-shortest), seeds 0-2
            "benchmark Dict-20": 5 * 3,
            "benchmark Dict-50": 5 * 3,
            "ratio grid": 4 + 5,
            # issue 53: 3 seeds at 500 and 1,000 (EER-short, Raw-shortest, EER-shortest; EER-short under the binding
            # control) on both schemes, less the seed-0 runs of the first curve; mpnet at 1,000: 1 EE + 2 exhaustive
            "learning curve": 12 + (2 * 2 * 3 * 3 - 2 * 2 * 2) + 2 * 2 * 3 + 3 * 3,
            "ablations": 6
            + 1
            + 3
            + 3
            + 2 * 3
            + 2
            + 3
            + 3
            + 2
            + 3
            * 2
            * 2  # + EER-all under the binding control, EE and NNS; issue 48: the binding control's 3 approaches x 2 scenarios on seeds 1-2
            + 2 * 3  # issue 48: estimate, then bind on the two dictionary scenarios, seeds 0-2
            + 3,  # issue 53: another dropout stream (EER-short, EE, seeds 0-2)
            # issue 53: + the EE EER-short runs with another dropout stream, seeds 0-2
            "block": 3 + 5 * 3 + 2 + 2 * 3 + 1 - 3 + 3,
        }
    )
    mpnet = [(r.approach, r.seed) for r in conll.runs if r.encoder == "all-mpnet-base-v2" and "ablations" in r.studies]
    assert mpnet == [("eer_short", 0), ("eer_shortest", 0), ("sns_shortest", 0)]
    assert all(
        "block" in r.studies or r.studies == ["learning_curve"] for r in conll.runs if r.encoder == "all-mpnet-base-v2"
    )
    assert len(conll.runs) == 88 + 24 + 16 + 12 + 30 + 6 + 49 + 6  # issue 53: another dropout stream (6 runs)
    # the dictionary scenarios train their own approaches only, with NNS's budget
    dictionary = {(r.scenario_name, r.approach) for r in conll.runs if r.scenario and r.scenario.type == "dictionary"}
    assert {a for _, a in dictionary} == {
        "raw_shortest",
        "raw_cd_shortest",
        "sns_shortest",
        "eer_short",
        "eer_shortest",
    }
    # the learning curve's cells: the binding control in its setting's directory, mpnet at 1,000 only
    curve = {r.name for r in conll.runs if "learning_curve" in r.studies}
    assert "eng-c/ablations/binding-ratio-control/Exh-500/eer_short/all-MiniLM-L6-v2/seed2" in curve
    assert sorted(n.split("/")[1] for n in curve if "mpnet" in n) == ["EE-1000"] * 3 + ["Exh-1000"] * 6
    grid = sorted(r.ratio for r in conll.runs if r.ratio)
    assert grid == sorted(
        2 * [(0.05, 0.05), (0.15, 0.0), (0.25, 0.05), (0.3, 0.0)]
    )  # (0.15, 0.05): the EER-short runs of EE and the ablation
    assert {(r.scenario_name, r.approach) for r in conll.runs if r.ratio} == {("EE", "eer_short")}
    runner = Runner(conll, "/tmp/unused-benchmark-dir")
    settings = {
        r.name.split("/all-MiniLM")[0] + (f"/{r.seed}" if r.seed else ""): runner.settings(r) for r in conll.runs
    }
    # the ratio-weight setting on EE and NNS, each with its scenario's own settings (NNS: the step budget)
    weight = [(n, s["EER_RATIO_LOSS_WEIGHT"], s["EER_MIN_STEPS"]) for n, s in settings.items() if "ratio-weight" in n]
    assert weight == [
        ("eng-c/ablations/ratio-weight-100/EE/eer_short", "100", "0"),
        ("eng-c/ablations/ratio-weight-100/NNS/eer_short", "100", "786"),
    ]
    # the mpnet block's EER-short under the binding control on NNS: the NNS scenario's step budget, bind, mpnet
    bound = settings["eng-c/ablations/binding-ratio-control/NNS/eer_short/all-mpnet-base-v2/seed0"]
    assert (bound["EER_RATIO_CONTROL"], bound["EER_MIN_STEPS"], bound["EER_EPOCHS"]) == ("bind", "786", "2")
    assert runner.environment(
        next(
            r for r in conll.runs if r.name.startswith("eng-c/ablations/binding-ratio-control/NNS/eer_short/all-mpnet")
        )
    )["EER_ENCODER"].endswith("all-mpnet-base-v2")
    # epochs by data size: 2 on (nearly) the whole corpus (gold, EE all, every NNS variant), 10 on EE short/shortest
    epochs = {name: s["EER_EPOCHS"] for name, s in settings.items()}
    assert (
        epochs["eng-c/gold/gold"]
        == epochs["eng-c/gold/gold_sns/2"]
        == epochs["eng-c/EE/eer_all"]
        == epochs["eng-c/NNS/eer_shortest"]
        == "2"
    )
    assert (
        epochs["eng-c/EE/eer_short"] == epochs["eng-c/EE/sns_shortest"] == epochs["eng-c/EE-100/raw_shortest"] == "10"
    )
    assert {s["EER_CBL_ROUND_EPOCHS"] for n, s in settings.items() if "/NNS/" in n} == {"1"}
    assert settings["eng-c/EE/cbl_bert_shortest"]["EER_CBL_ROUND_EPOCHS"] == "3"
    assert {s["EER_LEARNING_RATE"] for n, s in settings.items() if "ablations/paper" not in n} == {"5e-5"}
    assert {s["EER_HEAD_LEARNING_RATE"] for n, s in settings.items() if "ablations/paper" not in n} == {"1e-3"}
    # step budgets: NNS 3 epochs' worth, the learning curve the EE-1000 EER-short run's steps (its own runs)
    steps = {name: s["EER_MIN_STEPS"] for name, s in settings.items()}
    assert (
        steps["eng-c/NNS/eer_short"] == "786"
        and steps["eng-c/EE/eer_short"] == steps["eng-c/EE/eer_short_rho0.3_gamma0"] == "0"
    )
    assert steps["eng-c/EE-1000/eer_short"] == steps["eng-c/Exh-100/raw_shortest"] == "310"
    assert steps["eng-c/Dict-20/eer_short"] == "786" and epochs["eng-c/Dict-50/sns_shortest/2"] == "2"
    assert settings["eng-c/ablations/binding-ratio-control/EE-500/eer_short/1"]["EER_RATIO_CONTROL"] == "bind"
    assert steps["eng-c/ablations/binding-ratio-control/EE-500/eer_short/1"] == "310"
    # the ablations: one setting changed each, against the EE block's run of the same approach
    ablations = {r.ablation: (r.approach, runner.settings(r)) for r in conll.runs if r.ablation}
    assert ablations["no-calibrated-start"] == (
        "eer_short",
        {**settings["eng-c/EE/eer_short"], "EER_RATIO_INIT": "none"},
    )
    assert ablations["bf16-encoder"] == ("eer_shortest", {**settings["eng-c/EE/eer_shortest"], "EER_PRECISION": "bf16"})
    # issue 53: only the dropout stream changes (compared, so a finished run under another seed is stale)
    assert ablations["another-dropout-stream"] == (
        "eer_short",
        {**settings["eng-c/EE/eer_short"], "EER_DROPOUT_SEED": "100"},
    )
    assert settings["eng-c/EE/eer_short"]["EER_DROPOUT_SEED"] == ""
    # issue 12: selection on a partial dev set (seed 0); rho estimated from 20 complete documents (the EE block's seeds)
    partial_dev = next(r for r in conll.runs if r.ablation == "partial-dev-set")
    assert (partial_dev.seed, partial_dev.dev_data_name) == (0, "_dev-ee-proportional1000")
    assert runner.run_settings(partial_dev)["EER_VALIDATION_METRIC"] == "+partial-f1"
    estimated = [r for r in conll.runs if r.ablation == "ratio-estimated-from-20-complete-training-documents"]
    assert [(r.seed, r.complete_documents, r.approach) for r in estimated] == [(s, 20, "eer_short") for s in (0, 1, 2)]
    complete = [
        r for r in conll.runs if r.complete_documents and not r.estimates_ratio and r.encoder == "all-MiniLM-L6-v2"
    ]
    assert [(r.seed, r.approach, r.train_data_name) for r in complete] == [
        (s, a, "_complete20-EE") for a in ("eer_short", "sns_shortest") for s in (0, 1, 2)
    ]
    assert runner.settings(complete[0])["EER_ENTITY_RATIO"] == settings["eng-c/EE/eer_short"]["EER_ENTITY_RATIO"]
    # issue 27: every run of the mpnet block has the settings of the MiniLM run it repeats (the encoder is no setting
    # compared here: it is in the run's directory), its recipe runs the recipe's data and settings
    minilm = {
        (r.dataset.name, r.scenario_name, r.approach, r.seed, r.ablation): r
        for r in conll.runs
        if r.encoder == "all-MiniLM-L6-v2" and not r.ratio
    }
    for _, setting, run in conll.block_entries:
        same = minilm[
            (run.dataset.name, run.scenario_name, run.approach, run.seed, setting["slug"] if setting else None)
        ]
        assert runner.settings(run) == runner.settings(same) and run.train_data_name == same.train_data_name, run.name
        assert run.estimates_ratio == same.estimates_ratio and run.encoder == "all-mpnet-base-v2"
    paper = ablations["paper-s-schedule-2e-5-50-epochs"][1]
    assert (paper["EER_LEARNING_RATE"], paper["EER_HEAD_LEARNING_RATE"], paper["EER_EPOCHS"]) == ("2e-5", "2e-5", "50")


def test_subprocess_environment_drops_the_callers_settings_but_keeps_machine_variables(tmp_path, monkeypatch):
    """A setting exported in the shell never changes a run; where the encoder cache is (EER_MODEL_CACHE) and
    EER_TRACEBACK reach the run (a GPU run with the cache elsewhere failed on every run without them)."""
    plan = parse_plan(plan_data(approaches=["eer_short"])).expand()
    monkeypatch.setenv("EER_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setenv("EER_TRACEBACK", "1")
    monkeypatch.setenv("EER_ENCODER", "some/other-encoder")
    monkeypatch.setenv("EER_LEARNING_RATE", "1.0")
    monkeypatch.setenv("EER_SEED", "99")
    run = plan.runs[0]
    env = Runner(plan, str(tmp_path / "out")).environment(run)
    assert env["EER_MODEL_CACHE"] == str(tmp_path / "models") and env["EER_TRACEBACK"] == "1"
    assert env["EER_ENCODER"] == run.encoder != "some/other-encoder"
    assert "EER_LEARNING_RATE" not in env and env["EER_SEED"] == str(run.seed)


def test_a_misspelt_setting_in_a_plan_is_an_error_that_names_the_setting():
    with pytest.raises(PlanError, match=r"env: EER_BATCH_SIZ is not a setting; did you mean EER_BATCH_SIZE\?"):
        parse_plan(plan_data(env={"EER_BATCH_SIZ": 2}))
    with pytest.raises(PlanError, match=r"scenario 'EE-15': env: EER_NOTHING_LIKE_IT is not a setting"):
        parse_plan(
            plan_data(scenarios=[{"name": "EE-15", "type": "ee", "budget": 15, "env": {"EER_NOTHING_LIKE_IT": 1}}])
        )
    plan = parse_plan(plan_data(env={"EER_MODEL_CACHE": "/models", "OMP_PROC_BIND": "true"}))  # not settings: kept
    assert plan.env["EER_MODEL_CACHE"] == "/models" and plan.env["OMP_PROC_BIND"] == "true"


def test_epochs_per_variant_and_per_scenario(tmp_path, capsys):
    data = plan_data(
        scenarios=[
            {"name": "EE-15", "type": "ee", "budget": 15},
            {"name": "N", "type": "nns", "epochs": {"short": 3}, "env": {"EER_BATCH_SIZE": 2}},
        ],
        approaches=["gold", "raw_shortest", "eer_short", "eer_all"],
        epochs={"all": 2, "short": 7},
    )
    plan = parse_plan(data).expand()
    runner = Runner(plan, str(tmp_path / "out"))
    got = {(r.scenario_name, r.approach): runner.run_settings(r) for r in plan.runs}
    assert got[("gold", "gold")]["EER_EPOCHS"] == "2" and got[("EE-15", "eer_all")]["EER_EPOCHS"] == "2"
    assert got[("EE-15", "eer_short")]["EER_EPOCHS"] == "7" and got[("N", "eer_short")]["EER_EPOCHS"] == "3"
    assert got[("EE-15", "raw_shortest")]["EER_EPOCHS"] == ""  # not given: the config's default (50)
    assert got[("N", "eer_all")]["EER_BATCH_SIZE"] == "2" and got[("EE-15", "eer_all")]["EER_BATCH_SIZE"] == "4"
    # the subprocesses get the environment settings only; the hyperparameters reach the training as -o
    by_key = {(r.scenario_name, r.approach): r for r in plan.runs}
    env = runner.environment(by_key[("N", "eer_short")])
    assert (
        env["EER_SEED"] == "0" and "EER_TRAIN_DATA" in env and "EER_EPOCHS" not in env and "EER_BATCH_SIZE" not in env
    )
    command = runner.commands(by_key[("N", "eer_short")])[0]
    overrides = json.loads(command[command.index("-o") + 1])
    assert overrides["trainer.num_epochs"] == 3 and overrides["data_loader.batch_sampler.batch_size"] == 2
    assert overrides["model.ratio_loss_weight"] == 10 and overrides["trainer.callbacks"] == [{"type": "eer_ratio_init"}]
    raw = runner.commands(by_key[("EE-15", "raw_shortest")])[0]
    raw_overrides = json.loads(raw[raw.index("-o") + 1])
    assert raw_overrides["trainer.num_epochs"] == 50 and "model.ratio_loss_weight" not in raw_overrides  # Raw's 0 stays
    assert (
        plan.epochs_description()
        == "2 (all), 7 (short), default (shortest) (scenario N: 2 (all), 3 (short), default (shortest))"
    )
    assert epochs_text({"all": 5, "short": 5, "shortest": 5}) == "5"
    with pytest.raises(PlanError, match=r"'epochs': unknown variant 'longest'; expected all, short, shortest"):
        parse_plan(plan_data(epochs={"longest": 3}))
    with pytest.raises(PlanError, match=r"'epochs' must be a positive integer or a mapping like"):
        parse_plan(plan_data(epochs=0))
    with pytest.raises(PlanError, match=r"scenario 'N': env: EER_SEED is set by the runner"):
        parse_plan(plan_data(scenarios=[{"name": "N", "type": "nns", "env": {"EER_SEED": 3}}]))
    with pytest.raises(PlanError, match=r"scenario 'N': set epochs with the scenario's 'epochs'"):
        parse_plan(plan_data(scenarios=[{"name": "N", "type": "nns", "env": {"EER_EPOCHS": 3}}]))
    # --runs selects units by run name (shell patterns); no match is an error
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(data))
    assert benchmark.main([str(plan_file), "-o", str(tmp_path / "out"), "--dry-run", "--runs", "fx/N/*"]) == 0
    printed = capsys.readouterr().out
    assert "fx/N/eer_short/" in printed and "fx/EE-15/" not in printed and "fx/gold/" not in printed
    assert status_of(benchmark.main, [str(plan_file), "-o", str(tmp_path / "out"), "--runs", "fx/NNS/*"]) == 1
    assert (
        "no run of the plan matches --runs fx/NNS/*; run names look like fx/gold/gold/all-MiniLM-L6-v2/seed0"
        in capsys.readouterr().err
    )


# ----------------------------------------------------------------------------------- end to end
@pytest.mark.integration
def test_runner_end_to_end_resume_and_report(tiny_encoder, monkeypatch, tmp_path, capsys):
    """The committed smoke plan with the tiny encoder: two runs in parallel, then a resume."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("EER_ENCODER", tiny_encoder)  # read by the plan's std.extVar
    monkeypatch.setenv("EER_RATIO_LOSS_WEIGHT", "0")  # ignored: a run's EER_* come from the plan only
    out = tmp_path / "bench"
    assert benchmark.main([str(SMOKE_PLAN), "-o", str(out), "--jobs", "2"]) == 0
    printed = capsys.readouterr().out
    assert "0 of 2 runs done already; running 2 with 2 jobs, 1 thread each" in printed
    assert re.search(r"start  \[\d/2\] fixture/EE-15/eer_short/", printed) and re.search(
        r"done   \[\d/2\] fixture/EE-15/raw_shortest/", printed
    )
    rows = read_csv(out / "results.csv")
    assert [(r["approach"], r["status"]) for r in rows] == [("raw_shortest", "done"), ("eer_short", "done")]
    for row in rows:
        run_dir = Path(row["run_dir"])
        assert (run_dir / "DONE").exists() and (run_dir / "model.tar.gz").exists()
        assert not list(run_dir.glob("training_state_*.th"))  # checkpoints removed
        config = json.loads((run_dir / "config.json").read_text())
        assert config["data_loader"]["batch_sampler"]["batch_size"] == 4
        assert config["model"]["ratio_loss_weight"] == (10 if row["approach"] == "eer_short" else 0)
        counts = json.loads((run_dir / "doc_counts.json").read_text())["counts"]
        assert [sum(c[i] for c in counts.values()) for i in range(3)] == [
            int(row["tp"]),
            int(row["fp"]),
            int(row["fn"]),
        ]
        assert 0 <= float(row["f1"]) <= 1 and float(row["seconds"]) > 0 and Path(row["log"]).exists()
        assert float(row["rho_hat"]) == json.loads((run_dir / "metrics.json").read_text())["training_rho_hat"]
        # the records kept across sessions (docs/results/records.jsonl) name no path of this machine
        record, doc_counts = (
            json.loads((run_dir / "result.json").read_text()),
            json.loads((run_dir / "doc_counts.json").read_text()),
        )
        for key in ("run_dir", "log", "archive"):
            assert not Path(record[key]).is_absolute() and (out / record[key]).exists(), (key, record[key])
        assert not Path(doc_counts["archive"]).is_absolute() and (REPO / doc_counts["archive"]).exists()
        assert str(tmp_path) not in json.dumps(record)
        assert (
            record["machine"]["gpu"] is None and record["machine"]["torch"] and record["machine"]["cores"] >= 1
        )  # the CPU it ran on
    assert rows[1]["rho_star"] and not rows[0]["rho_star"]  # rho* for EER runs
    data = out / "data" / "fixture" / "EE-15"
    assert (data / "seed0.jsonl").exists() and json.loads((data / "seed0.stats.json").read_text())["kept_spans"] == 15
    report = (out / "results.md").read_text()
    assert "| Approach / dataset | fixture | avg |" in report
    assert re.search(r"\| \*\*EE-15\*\*: Exploratory Expert \(EE\): 15 annotations", report)
    assert re.search(r"\| EER-short \| (\*\*)?\d+\.\d(\*\*)?†?‡? \|", report)
    assert "## Significance (paired bootstrap)" in report and "## Wall time" in report
    assert "## Convergence of rho_hat towards rho*" in report and (out / "rho_hat_over_epochs.png").exists()
    first = {r["approach"]: (Path(r["run_dir"]) / "result.json").stat().st_mtime_ns for r in rows}

    # resume: nothing runs again, the report is rewritten
    assert benchmark.main([str(SMOKE_PLAN), "-o", str(out)]) == 0
    assert "2 of 2 runs done already; running 0" in capsys.readouterr().out
    assert {
        r["approach"]: (Path(r["run_dir"]) / "result.json").stat().st_mtime_ns for r in read_csv(out / "results.csv")
    } == first
    # other settings with the same output directory are refused
    changed = tmp_path / "changed.yaml"
    changed.write_text(json.dumps({**json.loads((out / "plan.json").read_text()), "epochs": 2}))
    assert status_of(benchmark.main, [str(changed), "-o", str(out)]) == 1
    assert "EER_EPOCHS '1' (now '2')" in capsys.readouterr().err
    # report-only and dry-run touch no run
    (out / "results.md").unlink()
    assert benchmark.main([str(SMOKE_PLAN), "-o", str(out), "--report-only"]) == 0
    assert (out / "results.md").read_text() == report
    assert benchmark.main([str(SMOKE_PLAN), "-o", str(out), "--dry-run", "--shard", "1/2"]) == 0
    printed = capsys.readouterr().out
    assert "unit    1  done     fixture/EE-15/eer_short/" in printed and "raw_shortest/" not in printed

    # docs/results.md of these runs: the command, the hardware, our F1 beside the paper's (read from LaTeX)
    from eer_benchmark.report.docs import render

    tex = tmp_path / "paper.tex"
    tex.write_text(PAPER_TABLE + "\nSetup. We used a learning rate of $2\\times 10^{-5}$ with a schedule.")
    docs = render(str(SMOKE_PLAN), str(out), ["bash run-it.sh"], str(tex), str(tmp_path / "docs"), {"fixture": "eng-c"})
    text = docs.read_text()
    f1 = {r["approach"]: 100 * float(r["f1"]) for r in rows}
    assert "```\nbash run-it.sh\n```" in text and "torch 2." in text and '"We used a learning rate of 2x10^-5' in text
    assert f"| EE-15 | EER-short | {f1['eer_short']:.1f} | 1 |" in text and "| 89.0 | EER-BERT-short |" in text
    assert f"| EE-15 | EER-short − Raw-shortest | {f1['eer_short'] - f1['raw_shortest']:+.1f} | +8.3 |" in text
    assert (
        tmp_path / "docs" / "results" / "rho_hat_over_epochs.png"
    ).exists() and "](results/rho_hat_over_epochs.png)" in text
    assert (tmp_path / "docs" / "results" / "results.csv").read_text() == (out / "results.csv").read_text()


@pytest.mark.integration
def test_failing_run_is_retried_then_reported(tiny_encoder, tmp_path, capsys):
    broken = tmp_path / "broken_dev.txt"
    broken.write_text("-DOCSTART- -X- -X- O\n\nEU B-ORG\nrejects\n")  # a line with one column
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"datasets: [{{name: broken, train: {TRAIN}, dev: {broken}, test: {DEV}}}]\n"
        "scenarios: [{name: EE-5, type: ee, budget: 5}]\napproaches: [eer_short]\nepochs: 1\n"
        f"env: {{EER_ENCODER: {tiny_encoder}, EER_MAX_LENGTH: 128}}\n"
    )
    out = tmp_path / "bench"
    assert benchmark.main([str(plan), "-o", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "FAILED [1/1] broken/EE-5/eer_short/" in printed
    (row,) = read_csv(out / "results.csv")
    assert row["status"] == "failed" and row["f1"] == "" and "train exited with status" in row["error"]
    log = Path(row["log"]).read_text()
    assert "attempt 1 of 2" in log and "attempt 2 of 2" in log and "columns" in log  # the reader's error
    assert not (Path(row["run_dir"]) / "DONE").exists() and (Path(row["run_dir"]) / "FAILED.json").exists()
    report = (out / "results.md").read_text()
    assert "| EER-short | failed | – |" in report
    assert "### Failed runs" in report and row["log"] in report


# ----------------------------------------------------------------------------------- report layout
def fabricate(runner: Runner, run, f1_by_doc, rho_hat=0.2, rho_star=0.22, seconds=100.0, status="done"):
    """Writes the files of a finished (or failed) run: per-document (tp, fp, fn) from a list of
    (gold, correct, wrong) triples per document."""
    directory = runner.run_dir(run)
    directory.mkdir(parents=True, exist_ok=True)
    if status == "failed":
        (directory / "FAILED.json").write_text(
            json.dumps({"status": "failed", "error": "train exited with status 1", "log": "x.log"})
        )
        return
    counts = {f"d{i}": [correct, wrong, gold - correct] for i, (gold, correct, wrong) in enumerate(f1_by_doc)}
    tp, fp, fn = (sum(c[i] for c in counts.values()) for i in range(3))
    f1 = 2 * tp / (2 * tp + fp + fn)
    (directory / "doc_counts.json").write_text(json.dumps({"counts": counts}))
    for epoch, value in enumerate([0.5, 0.3, rho_hat]):
        (directory / f"metrics_epoch_{epoch}.json").write_text(json.dumps({"training_rho_hat": value}))
    rho, gamma = run.ratio or (0.15, 0.05)
    result = {
        "status": "done",
        "f1": f1,
        "precision": tp / (tp + fp),
        "recall": tp / (tp + fn),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "rho_hat": rho_hat if run.family == "eer" else None,
        "rho_star": rho_star if run.family == "eer" else None,
        "entity_ratio": rho,
        "ratio_margin": gamma,
        "seconds": seconds,
        "own_seconds": seconds,
        "eval_seconds": 5.0,
        "run_dir": str(directory),
        "log": "x.log",
    }
    (directory / "result.json").write_text(json.dumps(result))
    (directory / "DONE").write_text("")


def test_report_layout_on_fabricated_runs(tmp_path):
    data = plan_data(
        datasets=[
            {"name": "a", "train": TRAIN, "dev": DEV, "test": DEV},
            {"name": "b", "train": TRAIN, "dev": DEV, "test": DEV},
        ],
        scenarios=[{"name": "EE", "type": "ee", "budget": 15}, {"name": "NNS", "type": "nns"}],
        approaches=["gold", "raw_cd_shortest", "sns_shortest", "eer_short"],
        seeds=[0, 1],
        reference="sns_shortest",
        bootstrap={"resamples": 2000},
        ratio_grid=[[0.15, 0.05], [0.3, 0.0]],
        learning_curve={"budgets": [5, 15], "approaches": ["eer_short"]},
    )
    plan = parse_plan(data).expand()
    runner = Runner(plan, str(tmp_path / "bench"))
    documents = 40
    for run in plan.runs:
        seed_shift = run.seed  # seed 1 is one span better per document than seed 0
        if run.approach == "eer_short":
            quality = [(6, 5 + (seed_shift if run.ratio is None else 0), 0)] * documents  # clearly better than SNS
        elif run.approach == "sns_shortest":
            quality = [(6, 3, 2)] * documents
        else:
            quality = [(6, 4, 1)] * documents
        if run.key == ("b", "NNS", "raw_cd_shortest", "all-MiniLM-L6-v2", 1, None, None):
            fabricate(runner, run, quality, status="failed")
            continue
        if run.key == ("b", "NNS", "sns_shortest", "all-MiniLM-L6-v2", 1, None, None):
            continue  # not run yet
        fabricate(runner, run, quality, rho_hat=0.18 + 0.01 * run.seed, rho_star=0.22)
    for seed, touched in (
        (0, 3),
        (1, 4),
    ):  # the simulator's statistics of the learning curve's EE-15 data of data set a
        stats = runner.outdir / "data" / "a" / "EE" / f"seed{seed}.stats.json"
        stats.parent.mkdir(parents=True, exist_ok=True)
        stats.write_text(json.dumps({"recall": 0.1, "precision": 1.0, "documents_touched": touched}))
    written = Report(plan, runner).write()
    report = Path(written["md"]).read_text()
    lines = report.splitlines()
    header = lines.index("| Approach / dataset | a | b | avg |")
    table = lines[header : header + 12]
    f1 = lambda correct, wrong: 100 * 2 * correct / (2 * correct + wrong + (6 - correct))  # noqa: E731
    eer = [f1(5, 0), f1(6, 0)]
    mean, std = sum(eer) / 2, abs(eer[0] - eer[1]) / 2**0.5
    assert table[2].startswith("| Gold-all |")  # gold first, outside the scenario groups
    assert table[3].startswith("| **EE**: Exploratory Expert (EE): 15 annotations")
    assert (
        table[6]
        == f"| EER-short | **{mean:.1f} ± {std:.1f}**† | **{mean:.1f} ± {std:.1f}**† | **{mean:.1f} ± {std:.1f}**† |"
    )
    assert table[5] == f"| SNS-shortest | {f1(3, 2):.1f} ± 0.0 | {f1(3, 2):.1f} ± 0.0 | {f1(3, 2):.1f} ± 0.0 |"
    assert table[7].startswith("| **NNS**: Non-Native Speaker (NNS): recall 50%, precision 90%")
    # a failed seed and a missing seed: the cell says how many seeds it holds
    assert table[8] == f"| Raw+CD-shortest | {f1(4, 1):.1f} ± 0.0† | {f1(4, 1):.1f} (1/2 seeds)† | {f1(4, 1):.1f}† |"
    assert table[9] == f"| SNS-shortest | {f1(3, 2):.1f} ± 0.0 | {f1(3, 2):.1f} (1/2 seeds) | {f1(3, 2):.1f} |"
    assert table[10].startswith("| EER-short | **")
    # significance section: EER vs SNS per data set and pooled
    assert re.search(r"\| EE \| EER-short \| pooled \| 0,1 \| 80 \|.*\| yes, better \|", report)
    # ratio grid: the benchmark setting shares the benchmark runs and is marked
    assert (
        f"| [0.10, 0.20] (rho 0.15, gamma 0.05)† | {eer[0]:.1f} | {eer[1]:.1f} | {mean:.1f} ± {std:.1f} | 0.185 |"
        in report
    )
    assert f"| [0.30, 0.30] (rho 0.3, gamma 0) | {f1(5, 0):.1f} | {f1(5, 0):.1f} | {f1(5, 0):.1f} ± 0.0 |" in report
    # learning curve: CSV with mean and standard error over seeds, and the plot
    curve = read_csv(written["learning_curve_csv"])
    assert {(r["scheme"], r["budget"]) for r in curve} == {
        ("EE", "5"),
        ("EE", "15"),
        ("Exhaustive", "5"),
        ("Exhaustive", "15"),
    }
    ee15 = next(
        r for r in curve if (r["dataset"], r["scheme"], r["budget"]) == ("a", "EE", "15")
    )  # = the benchmark runs
    assert float(ee15["mean_f1"]) == pytest.approx(mean / 100) and float(ee15["std_error"]) == pytest.approx(
        std / 100 / 2**0.5
    )
    assert (
        float(ee15["documents_annotated"]) == 3.5
        and next(r for r in curve if r["scheme"] == "Exhaustive")["documents_annotated"] == ""
    )
    assert "| documents annotated (EE, mean over seeds) | – | 3.5 |" in report
    assert "| documents annotated (Exhaustive, mean over seeds) | – | – |" in report
    assert (
        Path(written["learning_curve_png"]).stat().st_size > 1000 and Path(written["rho_hat_png"]).stat().st_size > 1000
    )
    # convergence: |rho_hat - rho*| averaged over the EER runs
    assert re.search(r"\| a \| EE \| EER-short \| 0.15 ± 0.05 \| 2 \| 0.185 \| 0.220 \| 0.035 \| 0.020 \|", report)
    # the paper's MAE: EER-short on the EE scenarios in the benchmark setting only (not the grid or the learning curve)
    assert (
        "| **EER-short, EE scenarios, benchmark setting** (the paper's comparison) |  |  |  | 4 |  |  | **0.035** | **0.020** |"
        in report
    )
    rows = read_csv(written["csv"])
    assert len(rows) == len(plan.runs)
    assert {r["status"] for r in rows} == {"done", "failed", "missing"}
    assert next(r for r in rows if r["status"] == "failed")["error"] == "train exited with status 1"
    assert "## Wall time" in report and "| EER-short |" in report.split("## Wall time")[1]


@pytest.mark.integration
@pytest.mark.slow
def test_every_approach_and_analysis_on_the_fixture(tiny_encoder, tmp_path):
    """Gold, Raw+CD (training its own Raw model), CBL, SNS, EER, a ratio-grid setting and a learning
    curve point, 1 epoch each with the tiny encoder (a few minutes; `bash scripts/test.sh -m slow`)."""
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            plan_data(
                approaches=["gold", "raw_cd_shortest", "cbl_bert_shortest", "sns_shortest", "eer_short"],
                env={"EER_ENCODER": tiny_encoder, "EER_MAX_LENGTH": "128", "EER_CBL_ROUND_EPOCHS": "1"},
                reference="sns_shortest",
                bootstrap={"resamples": 2000},
                ratio_grid=[[0.3, 0.0]],
                learning_curve={"budgets": [5], "approaches": ["eer_short"]},
            )
        )
    )
    out = tmp_path / "bench"
    assert benchmark.main([str(plan), "-o", str(out), "--jobs", "2"]) == 0
    rows = read_csv(out / "results.csv")
    assert len(rows) == 8 and {r["status"] for r in rows} == {"done"}
    by_approach = {(r["scenario"], r["approach"]): r for r in rows}
    raw_cd = json.loads((Path(by_approach[("EE-15", "raw_cd_shortest")]["run_dir"]) / "o_cost.json").read_text())
    assert float(by_approach[("EE-15", "raw_cd_shortest")]["f1"]) == pytest.approx(raw_cd["test"]["f1-measure-overall"])
    assert (Path(by_approach[("EE-15", "cbl_bert_shortest")]["run_dir"]) / "final" / "model.tar.gz").exists()
    assert (
        by_approach[("gold", "gold")]["study"] == "benchmark"
        and by_approach[("EE-15", "sns_shortest")]["rho_hat"] == ""
    )
    report = (out / "results.md").read_text()
    for section in [
        "## Test F1",
        "## Significance",
        "## Wall time",
        "## EER hyperparameters",
        "## Learning curves",
        "## Convergence",
    ]:
        assert section in report
    assert (out / "learning_curve.png").exists() and (out / "learning_curve.csv").exists()


@pytest.mark.integration
def test_sigterm_stops_the_benchmark_without_retry_or_failure(tiny_encoder, tmp_path):
    """`kill <runner>` (SIGTERM to the runner alone, as a batch scheduler sends it) stops like Ctrl-C:
    the running run's subprocess is killed, nothing is retried or recorded as failed, exit 130.
    (AllenNLP's `allennlp` entry point installs a SIGTERM handler raising an ordinary exception,
    which the runner used to take for a failing run and retry.)"""
    import os
    import signal
    import subprocess
    import sys
    import time

    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"datasets: [{{name: fx, train: {TRAIN}, dev: {DEV}, test: {DEV}}}]\n"
        "scenarios: [{name: EE-15, type: ee, budget: 15}]\napproaches: [eer_short]\nepochs: 200\n"
        f"env: {{EER_ENCODER: {tiny_encoder}, EER_MAX_LENGTH: 128}}\n"
    )
    out = tmp_path / "bench"
    env = {k: v for k, v in os.environ.items() if not k.startswith("EER_")}
    runner = subprocess.Popen(
        [sys.executable, "-m", "allennlp", "eer-benchmark", str(plan), "-o", str(out)],
        cwd=str(REPO),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = out / "logs" / "fx" / "EE-15" / "eer_short" / Path(tiny_encoder).name / "seed0.log"
    deadline = time.time() + 180
    while time.time() < deadline and not (log.exists() and "Epoch 1/" in log.read_text()):
        time.sleep(0.5)
    assert log.exists() and "Epoch 1/" in log.read_text(), "the run did not start training"
    runner.send_signal(signal.SIGTERM)
    try:
        stdout, stderr = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
            for pid in [p for p in os.listdir("/proc") if p.isdigit() and str(out) in _cmdline(p)]:
                os.kill(int(pid), signal.SIGKILL)
    assert runner.returncode == 130, stderr[-2000:]
    # named as argparse names "python -m allennlp eer-benchmark" ("__main__.py eer-benchmark" before Python 3.14)
    assert " eer-benchmark: interrupted; finished runs are kept" in stderr.strip().splitlines()[-1]
    text = log.read_text()
    assert "attempt 1 of 2" in text and "attempt 2" not in text
    run_dir = out / "runs" / "fx" / "EE-15" / "eer_short" / Path(tiny_encoder).name / "seed0"
    assert not (run_dir / "FAILED.json").exists() and not (run_dir / "DONE").exists()
    time.sleep(1)
    children = [p for p in os.listdir("/proc") if p.isdigit() and str(run_dir) in _cmdline(p)]
    assert children == [], "the run's training subprocess outlived the runner"


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_the_benchmark_passes_the_interval_from_the_shell_and_records_no_such_setting(monkeypatch, tmp_path):
    from eer_plugin.runtime.settings import RESULT_NEUTRAL

    assert RESULT_NEUTRAL == ("EER_CHECKPOINT_SECONDS",)
    plan = parse_plan(
        {
            "name": "p",
            "datasets": [{"name": "d", "train": "t.txt", "dev": "d.txt", "test": "d.txt"}],
            "scenarios": [{"name": "EE", "type": "ee", "budget": 5}],
            "approaches": ["eer_short"],
            "encoders": ["e"],
            "seeds": [0],
        },
        check_files=False,
    ).expand()
    runner = Runner(plan, str(tmp_path))
    monkeypatch.setenv("EER_CHECKPOINT_SECONDS", "600")
    monkeypatch.setenv("EER_ENCODER", "stray")  # a setting the plan owns: never from the shell
    environment = runner.environment(plan.runs[0])
    assert environment["EER_CHECKPOINT_SECONDS"] == "600" and environment["EER_ENCODER"] == "e"
    assert "EER_CHECKPOINT_SECONDS" not in runner.settings(plan.runs[0])
