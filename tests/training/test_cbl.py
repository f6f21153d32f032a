"""CBL (constrained binary learning): the schedule, the relabelling step and an end-to-end run."""

import json
import random
import shutil
from pathlib import Path

import pytest
import setting_edges

from eer_plugin.annotation import cbl
from eer_plugin.common.errors import SettingError
from eer_plugin.corpus.documents import Document


def docs():
    a = Document(id="a", tokens=list("abcdefghij"), sentence_ends=[10], spans=[(0, 2, "PER")])
    b = Document(id="b", tokens=list("klmnopqrst"), sentence_ends=[5, 10], spans=[(4, 5, "LOC")])
    return [a, b]


def test_ratio_schedule_steps_to_the_target():
    assert cbl.ratio_schedule(0.05, 0.2, 0.02) == pytest.approx([0.07, 0.09, 0.11, 0.13, 0.15, 0.17, 0.19, 0.2])
    assert cbl.ratio_schedule(0.3, 0.2) == [0.2]
    with pytest.raises(ValueError, match=r"^step must be a number in \(0, 1\) \(the target ratio's rise per round\), got 0$"):  # fmt: skip
        cbl.ratio_schedule(0.1, 0.2, 0)
    with pytest.raises(ValueError, match=r"^entity_ratio must be a number in \(0, 1\) .*, got 1.5$"):
        cbl.ratio_schedule(0.1, 1.5)
    with pytest.raises(ValueError, match=r"^clip must be a number in \[0, 1\] .*, got 2$"):
        cbl.relabel(docs(), [[0.5] * 10] * 2, 0.3, clip=2)


# ------------------------------------------------------------------------------------------ the cbl block's settings
@pytest.mark.parametrize("key", list(cbl.RANGES))
def test_each_setting_of_the_cbl_block_is_refused_at_the_edges_of_its_one_range(key):
    """The values just outside the declared range (tests/setting_edges.py: another JSON type, NaN, infinities, each
    end's neighbour) are one line naming ``cbl.<key>``, the value and the range; those just inside and the default are
    taken, the other settings at their defaults."""
    bounds = cbl.RANGES[key]
    for value in setting_edges.outside(bounds):
        with pytest.raises(SettingError) as raised:
            cbl.block_settings({key: value})
        assert str(raised.value) == f"cbl.{bounds.problem(key, value)}" == f"cbl.{key} must be {bounds.expected}, got {value!r}"  # fmt: skip
    for value in setting_edges.inside(bounds) + [cbl.DEFAULTS[key]]:
        assert cbl.block_settings({key: value}) == {**cbl.DEFAULTS, key: value}


@pytest.mark.parametrize(
    "block, line",
    [
        (
            {"entity_ratio": 1.5},
            "cbl.entity_ratio must be a number in (0, 1) (b: the share of entity words to reach), got 1.5",
        ),  # fmt: skip
        (
            {"entity_ratio": -1},
            "cbl.entity_ratio must be a number in (0, 1) (b: the share of entity words to reach), got -1",
        ),  # fmt: skip
        ({"step": 0}, "cbl.step must be a number in (0, 1) (the target ratio's rise per round), got 0"),
        (
            {"clip": 2},
            "cbl.clip must be a number in [0, 1] (an unannotated word's O weight is 1 - min(p, clip)), got 2",
        ),  # fmt: skip
        (
            {"round_epochs": 0},
            "cbl.round_epochs must be an integer of at least 1 (epochs of each binary round), got 0",
        ),  # fmt: skip
        (
            {"round_epochs": 2.0},
            "cbl.round_epochs must be an integer of at least 1 (epochs of each binary round), got 2.0",
        ),  # fmt: skip
        ({"step": "0.02"}, "cbl.step must be a number in (0, 1) (the target ratio's rise per round), got '0.02'"),
        (
            {"clip": float("nan")},
            "cbl.clip must be a number in [0, 1] (an unannotated word's O weight is 1 - min(p, clip)), got nan",
        ),  # fmt: skip
        (
            {"steps": 0.1},
            "cbl.steps is not a setting of the cbl block (did you mean cbl.step?); its settings are entity_ratio, step, clip, round_epochs",
        ),  # fmt: skip
        (5, "cbl must be an object of the settings entity_ratio, step, clip, round_epochs, got 5"),
    ],
)
def test_a_bad_cbl_block_is_one_line(block, line):
    with pytest.raises(SettingError) as raised:
        cbl.block_settings(block)
    assert str(raised.value) == line


def test_the_defaults_are_in_their_ranges_and_fill_what_a_block_leaves_out():
    assert set(cbl.DEFAULTS) == set(cbl.RANGES)
    assert all(cbl.RANGES[key].holds(value) for key, value in cbl.DEFAULTS.items())
    assert cbl.block_settings({}) == cbl.DEFAULTS
    assert cbl.block_settings({"step": 0.05}) == {**cbl.DEFAULTS, "step": 0.05}


BAD_RUNS = [{"cbl.entity_ratio": 1.5}, {"cbl.step": 0}, {"cbl.clip": 2}, {"cbl.round_epochs": 0}, {"cbl.step": "x"}]


@pytest.mark.parametrize("overrides", BAD_RUNS, ids=lambda o: json.dumps(o))
def test_a_bad_cbl_setting_stops_the_run_before_the_serialization_directory_gets_a_file(overrides, tmp_path):
    """A new directory is not created; a run already there is neither removed by --force nor touched by --recover."""
    from conftest import REPO

    from eer_plugin.training.cbl_rounds import run_cbl_file

    config = str(REPO / "training_configs" / "cbl_bert_all.jsonnet")
    ((key, value),) = overrides.items()
    expected = f"{key} must be {cbl.RANGES[key[4:]].expected}, got {value!r}"
    with pytest.raises(SettingError) as raised:
        run_cbl_file(config, str(tmp_path / "new"), json.dumps(overrides))
    assert str(raised.value) == expected and not (tmp_path / "new").exists()
    held = tmp_path / "held"
    (held / "round_0").mkdir(parents=True)
    (held / "round_0" / "best.th").write_bytes(b"weights")
    for options in ({"force": True}, {"recover": True}):
        with pytest.raises(SettingError):
            run_cbl_file(config, str(held), json.dumps(overrides), **options)
        assert [p.relative_to(held).as_posix() for p in held.rglob("*")] == ["round_0", "round_0/best.th"]


def test_eer_ner_cbl_says_a_bad_setting_in_one_line_and_writes_nothing(tmp_path, capsys):
    from conftest import REPO

    from eer_plugin import cli

    config = REPO / "training_configs" / "cbl_lstm_short.jsonnet"
    try:
        status = cli.main(["cbl", str(config), "-s", str(tmp_path / "run"), "-o", '{"cbl": {"clip": -0.5}}'])
    except SystemExit as exit:
        status = exit.code
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert status == 1 and lines == [
        "eer-ner cbl: error: cbl.clip must be a number in [0, 1] (an unannotated word's O weight is 1 - min(p, clip)), "
        "got -0.5"
    ]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("target", [0.15, 0.3, 0.5])
def test_relabel_hits_the_target_ratio(target):
    documents = docs()
    probabilities = [[0.9, 0.9, 0.2, 0.8, 0.1, 0.6, 0.0, 0.3, 0.7, 0.05], [0.4] * 10]
    weights, hard = cbl.relabel(documents, probabilities, target, clip=0.5)
    annotated = sum(sum(cbl.annotated_words(d)) for d in documents)
    entity_words = annotated + sum(w == 0.0 for row in weights for w in row)
    assert entity_words == max(annotated, round(target * 20))
    assert hard == entity_words - annotated
    # the relabelled words are the most entity-like unannotated ones; the rest are clipped
    if target == 0.3:
        assert [i for i, w in enumerate(weights[0]) if w == 0.0] == [3, 5, 8]
    for doc, row, probs in zip(documents, weights, probabilities):
        for marked, w, p in zip(cbl.annotated_words(doc), row, probs):
            assert w == 1.0 if marked else w in (0.0, pytest.approx(1 - min(p, 0.5)))


def test_binary_collapses_types():
    assert [t for _, _, t in cbl.binary(docs()[0]).spans] == ["ENT"]


@pytest.mark.integration
def test_cbl_end_to_end_on_the_fixture(tiny_env, monkeypatch, tmp_path, capsys):
    from allennlp.common import Params
    from allennlp.models.archival import load_archive
    from conftest import REPO, hyper

    from eer_plugin.training import trainer
    from eer_plugin.training.cbl_rounds import run_cbl

    # the step budget (min_steps 7) is the final tagger's, not the rounds'
    overrides = hyper("cbl_bert_all", EER_EPOCHS=1, EER_CBL_ROUND_EPOCHS=1, EER_MIN_STEPS=7)

    budgets = []  # (min_steps, the data's batches, batches per epoch) of every trainer given a budget
    original = trainer.batches_for_budget

    def recorded(epochs, min_steps, batches, accumulation=1):
        budgets.append((min_steps, batches, original(epochs, min_steps, batches, accumulation)))
        return budgets[-1][2]

    monkeypatch.setattr(trainer, "batches_for_budget", recorded)
    params = Params.from_file(str(REPO / "training_configs" / "cbl_bert_all.jsonnet"), overrides)
    log = run_cbl(params, str(tmp_path / "cbl"), ["eer_plugin"])
    assert all(len(list(r.glob("metrics_epoch_*.json"))) == 1 for r in (tmp_path / "cbl").glob("round_*") if r.is_dir())
    assert len(list((tmp_path / "cbl" / "final").glob("metrics_epoch_*.json"))) == 1
    (budget,) = budgets  # the final tagger only: its one epoch is 7 batches long, the data cycled
    assert budget[0] == 7 and budget[1] < 7 == budget[2]
    defaults = cbl.DEFAULTS
    assert len(log["rounds"]) == len(cbl.ratio_schedule(log["annotated_ratio"], defaults["entity_ratio"], defaults["step"])) >= 2  # fmt: skip
    # the plan, then each round as it starts, on stdout (under eer-ner no log line shows before the first training)
    rounds = len(log["rounds"])
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("CBL")]
    assert said[0] == (
        f"CBL: 4 documents, annotated ratio {log['annotated_ratio']:.4f}: {rounds} binary rounds of 1 epoch to the "
        "ratio 0.2 in steps of 0.02, then the final tagger"
    )
    started = [
        f"CBL round {k} of {rounds} (round_{k}): target ratio {entry['target_ratio']:.3f}"
        for k, entry in enumerate(log["rounds"], start=1)
    ]
    assert said[1:-1] == started
    # the record counts as the printed lines and the directories do, and holds the plan
    record = json.loads((tmp_path / "cbl" / "cbl_rounds.json").read_text())
    assert record == log and record["total_seconds"] > 0
    assert record["planned_rounds"] == rounds and record["round_epochs"] == 1
    assert record["ratio_schedule"] == [entry["target_ratio"] for entry in log["rounds"]]
    assert [(e["round"], e["directory"]) for e in log["rounds"]] == [(k, f"round_{k}") for k in range(1, rounds + 1)]
    made = sorted(p.name for p in (tmp_path / "cbl").glob("round_*") if p.is_dir())
    assert made == sorted(f"round_{k}" for k in range(1, rounds + 1))
    final = tmp_path / "cbl" / "round_2_train.jsonl"
    weights = [w for line in final.read_text().splitlines() for w in json.loads(line)["o_weights"]]
    assert 0.0 in weights and min(weights) >= 0.0 and max(weights) <= 1.0
    model = load_archive(str(tmp_path / "cbl" / "final" / "model.tar.gz")).model
    assert model.scheme.entity_types == ["LOC", "MISC", "ORG", "PER"]


@pytest.mark.integration
def test_cbl_lstm_word_level_on_the_fixture(tiny_env, monkeypatch, tmp_path):
    """CBL-LSTM: word-level positions (no subword tokenizer), BiLSTM over trainable embeddings."""
    from allennlp.common import Params
    from allennlp.models.archival import load_archive
    from conftest import FIXTURES, REPO, hyper

    from eer_plugin.training.cbl_rounds import run_cbl

    overrides = hyper("cbl_lstm_shortest", EER_EPOCHS=1, EER_CBL_ROUND_EPOCHS=1)
    params = Params.from_file(str(REPO / "training_configs" / "cbl_lstm_shortest.jsonnet"), overrides)
    log = run_cbl(params, str(tmp_path / "cbl"), ["eer_plugin"])
    assert log["rounds"]
    archive = load_archive(str(tmp_path / "cbl" / "final" / "model.tar.gz"))
    reader = archive.validation_dataset_reader
    instances = list(reader.read(str(FIXTURES / "conll2003_tiny_dev.txt")))
    meta = instances[0]["metadata"].metadata
    assert len(instances[0]["tokens"]) == len(meta["words"]) + 2  # one position per word plus bookends
    assert archive.model.encoder is not None
    outputs = archive.model.forward_on_instances(instances)
    assert len(outputs) == len(instances)


def as_older_run(directory: Path) -> None:
    """``directory``, a CBL run stopped after some rounds, as eer-ner left it before the rounds were counted from 1:
    directories and data ``round_0``, ... (their configs naming that data), the state without ``first_round``, the
    log's rounds counted from 0 without their directories, and no plan in it."""
    for number in sorted(int(p.name[6:]) for p in directory.glob("round_*") if p.is_dir()):
        new, old = f"round_{number}", f"round_{number - 1}"
        (directory / new).rename(directory / old)
        (directory / f"{new}_train.jsonl").rename(directory / f"{old}_train.jsonl")
        config = directory / old / "config.json"
        config.write_text(config.read_text().replace(f"{new}_train.jsonl", f"{old}_train.jsonl"))
    state = json.loads((directory / "cbl_state.json").read_text())
    del state["first_round"]
    for key in ("planned_rounds", "ratio_schedule", "round_epochs"):
        del state["log"][key]
    for entry in state["log"]["rounds"]:
        entry["round"] -= 1
        del entry["directory"]
    (directory / "cbl_state.json").write_text(json.dumps(state))
    (directory / "cbl_rounds.json").write_text(json.dumps(state["log"], indent=2))


@pytest.mark.parametrize("seed", range(5))
def test_an_older_runs_log_is_counted_from_1_each_round_naming_its_directory(seed):
    """Generated logs of older runs (rounds counted from 0, the number of their directories): counted from 1, each
    naming its directory; an entry already counted from 1 (a log renumbered before) is kept as it is."""
    from eer_plugin.training.cbl_rounds import numbered_log

    draw = random.Random(seed)
    count = draw.randint(0, 8)
    targets = [draw.random() for _ in range(count)]
    older = {"entity_ratio": 0.2, "rounds": [{"round": k, "target_ratio": t} for k, t in enumerate(targets)]}
    expected = [{"round": k + 1, "target_ratio": t, "directory": f"round_{k}"} for k, t in enumerate(targets)]
    assert numbered_log(older)["rounds"] == expected
    assert numbered_log(older)["rounds"] == expected  # once only


def test_the_first_rounds_directory_is_round_1_unless_an_older_run_made_round_0(tmp_path):
    from eer_plugin.training.cbl_rounds import FIRST_ROUND, first_round_number

    assert FIRST_ROUND == 1 and first_round_number(tmp_path, None) == 1  # a new run, or one stopped in round 1
    assert first_round_number(tmp_path, {"rounds_done": 2, "first_round": 1}) == 1
    assert first_round_number(tmp_path, {"rounds_done": 2}) == 0  # an older run's state
    (tmp_path / "round_0").mkdir()  # an older run stopped in its first round, before any state
    assert first_round_number(tmp_path, None) == 0


def test_the_plan_is_recorded_and_round_1_printed_before_the_first_round_trains(
    tiny_env, monkeypatch, tmp_path, capsys
):
    """Stopped as the first round starts training (Ctrl-C), a run has printed its plan and "CBL round 1 of N
    (round_1)", and its record holds the plan: the rounds planned, each one's target ratio, the epochs of each."""
    from allennlp.common import Params
    from conftest import REPO

    from eer_plugin.training import cbl_rounds

    def interrupted(params, directory, include_package, resume):
        raise KeyboardInterrupt

    monkeypatch.setattr(cbl_rounds, "train_or_resume", interrupted)
    params = Params.from_file(str(REPO / "training_configs" / "cbl_bert_all.jsonnet"), '{"cbl.step": 0.06}')
    with pytest.raises(KeyboardInterrupt):
        cbl_rounds.run_cbl(params, str(tmp_path / "cbl"), ["eer_plugin"])
    record = json.loads((tmp_path / "cbl" / "cbl_rounds.json").read_text())
    plan = cbl.round_plan(record["annotated_ratio"], {**cbl.DEFAULTS, "step": 0.06})
    assert record["planned_rounds"] == len(plan) >= 2 and record["ratio_schedule"] == plan and record["rounds"] == []
    assert record["round_epochs"] == cbl.DEFAULTS["round_epochs"]
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("CBL")]
    assert said[-1] == f"CBL round 1 of {len(plan)} (round_1): target ratio {plan[0]:.3f}"
    assert (tmp_path / "cbl" / "round_1_train.jsonl").is_file() and not (tmp_path / "cbl" / "round_0_train.jsonl").exists()  # fmt: skip


def test_a_cbl_run_never_overwrites_a_directory_without_force(tmp_path):
    from eer_plugin.common.errors import UserError
    from eer_plugin.training.cbl_rounds import prepare_directory

    out = tmp_path / "cbl"
    with pytest.raises(UserError, match="nothing to recover .* leave out --recover"):
        prepare_directory(out, recover=True, force=False)
    assert prepare_directory(out, recover=False, force=False) is None and out.is_dir()  # new: created
    (out / "round_0").mkdir()
    (out / "round_0" / "best.th").write_bytes(b"weights")
    with pytest.raises(UserError, match="already holds files .* --recover to continue that run, --force to replace it"):
        prepare_directory(out, recover=False, force=False)
    assert (out / "round_0" / "best.th").read_bytes() == b"weights"
    with pytest.raises(UserError, match="give one of them"):
        prepare_directory(out, recover=True, force=True)
    assert prepare_directory(out, recover=True, force=False) is None  # no round finished yet: round 0 goes on
    (out / "cbl_state.json").write_text(json.dumps({"rounds_done": 1}))
    assert prepare_directory(out, recover=True, force=False) == {"rounds_done": 1}
    assert prepare_directory(out, recover=False, force=True) is None and list(out.iterdir()) == []


@pytest.mark.integration
def test_an_interrupted_cbl_run_recovers_to_the_uninterrupted_model(tiny_env, monkeypatch, tmp_path, capsys):
    """Stopped twice (while relabelling after round 2, whose training had finished; then in the final
    tagger after its first epoch) and recovered each time, a CBL run ends with the uninterrupted run's
    relabelling and final weights. So does the same run stopped as a run of an older eer-ner left it (rounds and
    their directories counted from 0, no plan in the record): it goes on in its own directories, its record counting
    from 1."""
    import torch
    from allennlp.common import Params
    from conftest import REPO, hyper

    from eer_plugin.common.errors import UserError
    from eer_plugin.training import cbl_rounds
    from eer_plugin.training.checkpointer import AtomicCheckpointer

    config = str(REPO / "training_configs" / "cbl_bert_all.jsonnet")
    # three rounds of one epoch (a larger ratio step), a final tagger of two
    overrides = json.dumps(
        {**json.loads(hyper("cbl_bert_all", EER_EPOCHS=2, EER_CBL_ROUND_EPOCHS=1)), "cbl.step": 0.06}
    )

    def run(directory, changes=None, **options):
        params = Params.from_file(config, json.dumps({**json.loads(overrides), **(changes or {})}))
        return cbl_rounds.run_cbl(params, str(tmp_path / directory), ["eer_plugin"], **options)

    whole = run("whole")
    score, save, calls = cbl_rounds.word_entity_probabilities, AtomicCheckpointer.save_checkpoint, []

    def stops_after_round_1(model, reader, docs, **options):
        calls.append(len(calls))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return score(model, reader, docs, **options)

    monkeypatch.setattr(cbl_rounds, "word_entity_probabilities", stops_after_round_1)
    with pytest.raises(KeyboardInterrupt):
        run("resumed")
    out = tmp_path / "resumed"
    assert (
        json.loads((out / "cbl_state.json").read_text())["rounds_done"] == 1
        and (out / "round_2" / "metrics.json").is_file()
    )
    with pytest.raises(UserError, match="--recover"):
        run("resumed")  # a new run does not overwrite it
    with pytest.raises(UserError, match="another config, settings or training data; use --force"):
        run("resumed", {"cbl.clip": 0.4}, recover=True)  # the finished round was relabelled with clip 0.5
    monkeypatch.setattr(cbl_rounds, "word_entity_probabilities", score)

    older = tmp_path / "older"
    shutil.copytree(out, older)
    as_older_run(older)
    capsys.readouterr()
    resumed_older = run("older", recover=True)
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("CBL round")]
    assert said == [  # round 2 relabels from its finished training, round 3 trains
        f"CBL round {k} of 3 (round_{k - 1}): target ratio {whole['rounds'][k - 1]['target_ratio']:.3f}" for k in (2, 3)
    ]
    assert [(e["round"], e["directory"]) for e in resumed_older["rounds"]] == [(1, "round_0"), (2, "round_1"), (3, "round_2")]  # fmt: skip
    assert json.loads((older / "cbl_rounds.json").read_text()) == resumed_older
    assert resumed_older["planned_rounds"] == 3 and resumed_older["ratio_schedule"] == whole["ratio_schedule"]
    assert sorted(p.name for p in older.glob("round_*") if p.is_dir()) == ["round_0", "round_1", "round_2"]
    assert json.loads((older / "cbl_state.json").read_text())["first_round"] == 0
    assert [r["relabelled_entity_words"] for r in resumed_older["rounds"]] == [
        r["relabelled_entity_words"] for r in whole["rounds"]
    ]
    older_weights = torch.load(older / "final" / "best.th", weights_only=True)
    whole_weights = torch.load(tmp_path / "whole" / "final" / "best.th", weights_only=True)
    assert all(torch.equal(older_weights[k], whole_weights[k]) for k in whole_weights)

    def stops_in_the_final_tagger(self, trainer):
        save(self, trainer)
        if Path(self._serialization_dir).name == "final":
            raise KeyboardInterrupt

    monkeypatch.setattr(AtomicCheckpointer, "save_checkpoint", stops_in_the_final_tagger)
    with pytest.raises(KeyboardInterrupt):
        run("resumed", recover=True)
    assert not (out / "final" / "metrics.json").exists() and (out / "final" / "model_state_e1_b0.th").is_file()
    monkeypatch.setattr(AtomicCheckpointer, "save_checkpoint", save)
    resumed = run("resumed", recover=True)

    assert [r["relabelled_entity_words"] for r in resumed["rounds"]] == [
        r["relabelled_entity_words"] for r in whole["rounds"]
    ]
    assert len(whole["rounds"]) == 3 and resumed["total_seconds"] > 0
    assert (out / "round_2_train.jsonl").read_text() == (tmp_path / "whole" / "round_2_train.jsonl").read_text()
    weights = [torch.load(tmp_path / d / "final" / "best.th", weights_only=True) for d in ("whole", "resumed")]
    assert weights[0].keys() == weights[1].keys() and all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    metrics = [json.loads((tmp_path / d / "final" / "metrics.json").read_text()) for d in ("whole", "resumed")]
    assert metrics[0]["best_validation_f1-measure-overall"] == metrics[1]["best_validation_f1-measure-overall"]


@pytest.mark.integration
def test_a_cbl_run_stopped_inside_an_epoch_of_a_round_recovers_to_the_uninterrupted_run(
    tiny_env, monkeypatch, tmp_path
):
    """Checkpoints inside epochs (EER_CHECKPOINT_SECONDS in the benchmark, here every 2 batches): stopped right after
    one inside round 1's epoch and recovered, a CBL run ends with the uninterrupted run's relabelling, final weights
    and the round's metrics, its training loss included (training/epoch_state.py)."""
    import torch
    from allennlp.common import Params
    from conftest import REPO, hyper

    from eer_plugin.training import cbl_rounds
    from eer_plugin.training.checkpointer import AtomicCheckpointer

    config = str(REPO / "training_configs" / "cbl_bert_all.jsonnet")
    overrides = json.dumps(
        {
            **json.loads(hyper("cbl_bert_all", EER_EPOCHS=1, EER_CBL_ROUND_EPOCHS=1)),
            "cbl.step": 0.06,
            "trainer.checkpointer.save_every_num_batches": 2,
        }
    )

    def run(directory, **options):
        return cbl_rounds.run_cbl(
            Params.from_file(config, overrides), str(tmp_path / directory), ["eer_plugin"], **options
        )

    whole = run("whole")
    save = AtomicCheckpointer.save_checkpoint

    def stops_inside_round_0(self, trainer):
        save(self, trainer)
        if Path(self._serialization_dir).name == "round_1" and trainer._batches_in_epoch_completed == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(AtomicCheckpointer, "save_checkpoint", stops_inside_round_0)
    with pytest.raises(KeyboardInterrupt):
        run("resumed")
    assert (tmp_path / "resumed" / "round_1" / "model_state_e0_b2.th").is_file()
    monkeypatch.setattr(AtomicCheckpointer, "save_checkpoint", save)
    resumed = run("resumed", recover=True)
    assert [r["relabelled_entity_words"] for r in resumed["rounds"]] == [
        r["relabelled_entity_words"] for r in whole["rounds"]
    ]
    weights = [torch.load(tmp_path / d / "final" / "best.th", weights_only=True) for d in ("whole", "resumed")]
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])

    def training_metrics(directory):
        metrics = json.loads((tmp_path / directory / "round_1" / "metrics.json").read_text())
        return {
            k: v for k, v in metrics.items() if k.startswith("training_") and "duration" not in k and "memory" not in k
        }

    assert training_metrics("whole")["training_loss"] > 0
    assert training_metrics("resumed") == training_metrics("whole")
