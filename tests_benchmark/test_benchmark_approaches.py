"""The approach registry (eer_benchmark/plan/approaches.py): one table from which the runner's commands,
the resume, the plan's units, the report's labels and the paper's row names follow."""

from test_benchmark import plan_data

from eer_benchmark import Runner, parse_plan
from eer_benchmark.analyse.paper import paper_row_label
from eer_benchmark.plan.approaches import FAMILIES, GOLD_APPROACHES, KNOWN_APPROACHES, RATIO_APPROACHES, approach_label
from eer_benchmark.run.resume import resumable


def test_every_approach_has_a_packaged_config_and_a_label():
    assert GOLD_APPROACHES == ("gold", "gold_sns") and RATIO_APPROACHES == ("eer_all", "eer_short", "eer_shortest")
    assert len(KNOWN_APPROACHES) == 2 + 6 * 3 and KNOWN_APPROACHES[:3] == ("gold", "gold_sns", "raw_all")
    for family in FAMILIES.values():
        for variant in family.variants:
            assert family.config_file(variant).is_file(), (family.name, variant)
    assert [approach_label(a) for a in ("gold", "gold_sns", "raw_cd_shortest", "cbl_bert_short", "eer_all")] == [
        "Gold-all",
        "Gold-SNS-all",
        "Raw+CD-shortest",
        "CBL-BERT-short",
        "EER-all",
    ]
    # the paper's rows: CBL-BERT is the paper's CBL, and its CBL-LSTM rows name no encoder
    assert [paper_row_label(a) for a in ("cbl_bert_short", "cbl_lstm_all", "gold_sns")] == [
        ("CBL", "short"),
        ("CBL-LSTM", "all"),
        ("Gold-SNS", "all"),
    ]


def test_what_each_family_supports():
    supports = {
        name: {
            trait
            for trait in ("ratio", "gold", "tunes_o_cost", "cbl_rounds", "resumable", "distributed")
            if getattr(family, trait)
        }
        for name, family in FAMILIES.items()
    }
    trained = {"resumable", "distributed"}  # one `allennlp train` into the run directory
    assert supports == {
        "gold": {"gold"} | trained,
        "gold_sns": {"gold"} | trained,
        "raw": trained,
        "raw_cd": {"tunes_o_cost", "resumable"},
        "cbl_lstm": {"cbl_rounds", "resumable"},
        "cbl_bert": {"cbl_rounds", "resumable"},
        "sns": trained,
        "eer": {"ratio"} | trained,
    }
    assert FAMILIES["raw_cd"].tunes == "raw" and all(f.tunes is None for n, f in FAMILIES.items() if n != "raw_cd")


def test_the_runner_and_the_resume_follow_the_table(tmp_path):
    approaches = ["gold_sns", "raw_short", "raw_cd_short", "raw_cd_all", "cbl_lstm_shortest", "sns_all", "eer_short"]
    plan = parse_plan(plan_data(approaches=approaches)).expand()
    runner = Runner(plan, str(tmp_path / "bench"))
    by_approach = {run.approach: run for run in plan.runs}
    commands = {a: [(c[1], c[2].rsplit("/", 1)[-1]) for c in runner.commands(run)] for a, run in by_approach.items()}
    assert commands["gold_sns"] == [("train", "gold_sns.jsonnet")] and commands["eer_short"] == [
        ("train", "eer_short.jsonnet")
    ]
    assert commands["cbl_lstm_shortest"] == [("cbl", "cbl_lstm_shortest.jsonnet")]
    assert commands["raw_cd_short"] == [("tune-o-cost", "model.tar.gz")]  # tunes the plan's raw_short run
    assert runner.commands(by_approach["raw_cd_short"])[0][2] == str(
        runner.run_dir(by_approach["raw_short"]) / "model.tar.gz"
    )
    assert commands["raw_cd_all"] == [
        ("train", "raw_all.jsonnet"),
        ("tune-o-cost", "model.tar.gz"),
    ]  # no raw_all run: its own
    assert [r.approach for r in plan.units()[1]] == ["raw_short", "raw_cd_short"]  # the tuned run first, one unit
    assert plan.tuned_run(by_approach["raw_cd_all"]) is None
    # every approach: raw_cd_short tunes the plan's raw_short run (its search runs again), raw_cd_all
    # continues its own Raw training, CBL its rounds
    assert {a for a, run in by_approach.items() if resumable(run)} == set(approaches)
    assert {a for a, run in by_approach.items() if run.trains_with_ratio} == {"eer_short"}
