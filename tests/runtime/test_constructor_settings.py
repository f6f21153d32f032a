"""Every setting that eer-ner's registered classes take from a config or an ``-o`` override is checked by the class
when it is built (:mod:`eer_plugin.runtime.setting_values`): bad values generated for each (another JSON type, out of
range, an unknown choice, a near miss such as another case) are a :class:`SettingError` at construction, one line
naming the key as the config writes it and the value; every good value is still taken. Then the path a user takes:
``eer-ner train`` with such an ``-o`` stops with that line and trains nothing."""

import json
from typing import Any, Callable, Dict, List, Optional, Sequence

import pytest
import setting_edges
from conftest import FIXTURES, eer_ner

from eer_plugin.common.errors import SettingError, UserError
from eer_plugin.core import tags
from eer_plugin.core.ranges import RANGES, RATIO_CONTROLS
from eer_plugin.models.sns import OPTIONAL_RATIO
from eer_plugin.runtime.setting_values import RULES, Rule

#: a value of every JSON type: each setting's wrong types are among them
JSON_VALUES = (7, 1.5, True, "7", [1], {"a": 1}, None)


class Setting:
    """One checked argument: its ``key`` as the config writes it, the values it must take (``good``) and how its bad
    values are generated: from the rule's bounds (a number), near misses of ``near`` (a choice), ``bad`` as given."""

    def __init__(self, key: str, good: Sequence[Any], near: Sequence[str] = (), bad: Sequence[Any] = (), rule=None):
        self.key, self.good, self.near, self.extra = key, list(good), list(near), list(bad)
        self.rule: Optional[Rule] = rule or RULES.get(key)

    @property
    def name(self) -> str:
        return self.key.rsplit(".", 1)[-1].split("]")[-1]

    def bad(self) -> List[Any]:
        bounds = self.rule.bounds if self.rule is not None else None
        if bounds is None:  # the JSON types the good values are not of
            values = [v for v in JSON_VALUES if type(v) not in {type(g) for g in self.good}]
        else:  # generated from the range's one declaration: no number, not finite, just outside each end
            values = setting_edges.outside(bounds)
        for choice in self.near:  # unknown choices and near misses: another case, a letter less or more, a space
            values += [choice.upper(), choice.title(), choice.lower(), choice[:-1], choice + "x", " " + choice]
        values += self.extra + ["nonsense"] * bool(self.near)
        return [v for v in _unique(values) if not any(_same(v, g) for g in self.good)]

    def good_values(self) -> List[Any]:
        """The good values given, and those just inside each end of a range (the end itself where it is taken)."""
        bounds = self.rule.bounds if self.rule is not None else None
        return _unique(self.good + (setting_edges.inside(bounds) if bounds is not None else []))


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _unique(values: List[Any]) -> List[Any]:
    seen: List[Any] = []
    for value in values:
        if not any(_same(value, s) or (value != value and s != s) for s in seen):
            seen.append(value)
    return seen


def _refused(build: Callable[[Any], Any], setting: Setting, value: Any) -> None:
    with pytest.raises(SettingError) as raised:
        build(value)
    message = str(raised.value)
    assert isinstance(raised.value, UserError) and isinstance(raised.value, ValueError)
    assert message.startswith(f"{setting.key} ") and " must be " in message, message
    assert message.endswith(f"got {value!r}") and "\n" not in message, message
    if setting.rule is not None and setting.rule.expected:  # the rule's own line, word for word
        assert message == setting.rule.problem(setting.key, value), message


def _sweep(build: Callable[[str, Any], Any], settings: Sequence[Setting]) -> int:
    """Each setting's bad values refused and good values taken by ``build(name, value)``; how many bad values."""
    refused = 0
    for setting in settings:
        bad = setting.bad()
        assert len(bad) >= 5, setting.key
        for value in bad:
            _refused(lambda v, s=setting: build(s.name, v), setting, value)
        for value in setting.good_values():
            build(setting.name, value)
        refused += len(bad)
    return refused


def _cased(names) -> List[str]:
    return sorted({form for name in names for form in (name, name.lower(), name.title())})


# ----------------------------------------------------------------------------------------- the dataset reader
SCHEMES = ["auto", *_cased(tags._ENCODING_ALIASES)]
READER = [
    Setting("dataset_reader.model_name", ["words"], bad=["", "  "]),
    Setting("dataset_reader.format", ["auto", "conll", "ontonotes", "jsonl"], near=["conll", "jsonl", "auto"]),
    Setting(
        "dataset_reader.tag_scheme", SCHEMES, near=["auto", *tags.ENCODINGS, "IOB2"], bad=["BMES", "IO", "B-I-O-X"]
    ),
    Setting("dataset_reader.encoding", SCHEMES, near=["auto", "BIO"], bad=["BMES"]),
    Setting("dataset_reader.sentences_per_document", [None, 1, 2, 10]),
    Setting("dataset_reader.tag_column", [-1, -2, 1, 2], bad=[0]),
    Setting("dataset_reader.variant", ["all", "short", "shortest"], near=["all", "short", "shortest"]),
    Setting("dataset_reader.assume_complete", [True, False], bad=[0, 1, "true", "false"]),
    Setting("dataset_reader.sentence_level", [True, False], bad=[0, 1, "false"]),
    Setting(
        "dataset_reader.file_encoding",
        ["auto", "utf-8", "UTF-8", "utf8", "latin-1", "Latin-1", "cp1252", "utf_16"],
        near=["auto"],
        bad=["utf9", "rot13", "hex", "base64", "zlib", "klingon", ""],
    ),
]


def test_every_reader_setting_is_checked_when_the_reader_is_built():
    from allennlp.data.token_indexers import SingleIdTokenIndexer

    from eer_plugin.data.reader import MAX_LENGTH, PartialDocumentReader

    def build(name: str, value: Any):  # word-level: no tokenizer to load
        return PartialDocumentReader(**{"model_name": "words", "token_indexers": {"tokens": SingleIdTokenIndexer()}, name: value})  # fmt: skip

    max_length = Setting("dataset_reader.max_length", [3, 4, 128, 512], rule=MAX_LENGTH)
    assert _sweep(build, READER + [max_length]) > 150
    # the allowed sets are the corpus's own: what the reader takes, it reads
    assert build("tag_scheme", "bio").format_options()["encoding"] == "bio"
    with pytest.raises(SettingError) as raised:
        build("tag_scheme", "BMES")
    assert str(raised.value) == (
        "dataset_reader.tag_scheme must be auto, or one of IOB1, BIO (alias IOB2), BIOUL (alias BILOU, BILUO), BIOES "
        "(alias IOBES) in any case (EER_TAG_SCHEME), got 'BMES'"
    )


# ----------------------------------------------------------------------------------------- the models
TYPES = ["LOC", "PER"]
ENTITY_TYPES = Setting(
    "model.entity_types",
    [None, ["LOC", "PER"], ["PER", "LOC"], ["PER", "LOC", "ORG"]],
    bad=[["PER"], ["loc", "per"], ["LOC", "PER", "PER"], ["LOC", 7, "PER"], [], ["LOC", "PER", ""], "LOC"],
    rule=Rule("", lambda v: False),
)
PRECISION = ["fp32", "bf16", "auto"]
MODELS = [
    Setting("model.dropout", [0, 0.2, 0.5, 0.999]),
    Setting("model.precision", PRECISION, near=PRECISION, bad=["fp16", "int8"]),
    ENTITY_TYPES,
]
TAGGER = MODELS + [
    Setting("model.entity_ratio", [0.01, 0.15, 0.99]),
    Setting("model.ratio_margin", [0, 0.05, 1]),
    Setting("model.ratio_loss_weight", [0, 10, 1e3]),
    Setting("model.ratio_control", list(RATIO_CONTROLS), near=list(RATIO_CONTROLS)),
    Setting("model.price_rate", [0, 1.0, 5]),
    Setting("model.price_penalty", [1e-3, 10.0]),
    Setting("model.o_cost", [-2.0, 0, 1.5, 10**30]),
    *(
        Setting(f"model.{flag}", [True, False], bad=[0, 1, "false"])
        for flag in ("per_sequence_ratio", "ratio_counts_bookends", "train_constraints")
    ),  # fmt: skip
]
SPAN_MODEL = MODELS + [
    Setting("model.max_width", [1, 10]),
    Setting("model.negative_rate", [0, 0.35, 2]),
    Setting("model.hidden_dim", [1, 256]),
    Setting("model.seed", [0, -1, 2**40]),
    Setting("model.entity_ratio", [None, 0.01, 0.15], rule=OPTIONAL_RATIO),  # rho, or null: no estimated precision
]


@pytest.fixture(scope="module")
def vocab_and_embedder():
    from allennlp.data import Vocabulary
    from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
    from allennlp.modules.token_embedders import Embedding

    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["O", "_"] + [f"{p}-{t}" for t in TYPES for p in "BILU"], "labels")
    vocab.add_tokens_to_namespace(["a", "b"], "tokens")
    return vocab, BasicTextFieldEmbedder({"tokens": Embedding(embedding_dim=4, vocab=vocab)})


@pytest.mark.parametrize("model, settings", [("eer_tagger", TAGGER), ("sns_tagger", SPAN_MODEL)])
def test_every_model_setting_is_checked_when_the_model_is_built(model, settings, vocab_and_embedder):
    from allennlp.models import Model

    vocab, embedder = vocab_and_embedder
    cls = Model.by_name(model)

    def build(name: str, value: Any):  # the price's settings are checked with the fixed ratio control too
        return cls(vocab=vocab, text_field_embedder=embedder, **{name: value})

    assert _sweep(build, settings) > 100
    # the types of the data, in a near miss of case: named with the types it must hold
    with pytest.raises(SettingError) as raised:
        build("entity_types", ["loc", "per"])
    assert str(raised.value) == (
        "model.entity_types must be a list of distinct entity types holding every type of the training data's tags "
        "(LOC, PER), or null (those types, sorted), got ['loc', 'per']"
    )


# ----------------------------------------------------------------------------------------- the trainer's parts
TRAINER = [
    Setting("trainer.min_steps", [0, 1, 500]),
    Setting("trainer.deterministic", [True, False], bad=[0, 1, "true"]),
    Setting("trainer.dropout_seed", [None, 0, 7, 2**32 - 1]),
]
CHECKPOINTER = [
    Setting("trainer.checkpointer.save_completed_epochs", [True, False], bad=[0, "false"]),
    Setting("trainer.checkpointer.save_every_num_seconds", [None, 0.5, 600]),
    Setting("trainer.checkpointer.save_every_num_batches", [None, 1, 100]),
    Setting("trainer.checkpointer.keep_most_recent_by_count", [None, 1, 2]),
    Setting("trainer.checkpointer.keep_most_recent_by_age", [None, 1, 3600]),
]
CALLBACK = [
    Setting("trainer.callbacks[eer_ratio_init].sample_chunks", [1, 128]),
    Setting("trainer.callbacks[eer_ratio_init].tolerance", [1e-6, 1e-3, 0.5]),
]


def test_every_trainer_checkpointer_and_callback_setting_is_checked_when_built(tmp_path, monkeypatch):
    from allennlp.training import GradientDescentTrainer

    from eer_plugin.training import trainer
    from eer_plugin.training.checkpointer import AtomicCheckpointer
    from eer_plugin.training.ratio_init import RatioInitCallback

    # the trainer's good values go no further than its checks: AllenNLP's trainer and what changes global state stubbed
    built: Dict[str, Any] = {}
    monkeypatch.setattr(GradientDescentTrainer, "from_partial_objects", classmethod(lambda cls, **kw: built.update(kw)))
    for name in ("make_deterministic", "reseed_dropout", "apply_budget", "warn_about_run"):
        monkeypatch.setattr(trainer, name, lambda *args: None)
    builders = {
        "trainer": lambda name, value: trainer.EERTrainer.from_partial_objects(**{name: value}),
        "checkpointer": lambda name, value: AtomicCheckpointer(str(tmp_path), **{name: value}),
        "callback": lambda name, value: RatioInitCallback(str(tmp_path), **{name: value}),
    }
    for part, settings in (("trainer", TRAINER), ("checkpointer", CHECKPOINTER), ("callback", CALLBACK)):
        assert _sweep(builders[part], settings) >= 8 * len(settings), part


SWEPT = READER + TAGGER + SPAN_MODEL + TRAINER + CHECKPOINTER + CALLBACK


def test_the_sweeps_cover_every_rule_of_an_eer_ner_class():
    """Each key of :data:`RULES` that a class of eer-ner checks is swept above (the others are AllenNLP's: the
    learning rates, ``trainer.patience``, the seeds of the run, the batch sizes, which ``eer-ner train`` checks)."""
    allennlp = {"trainer.optimizer.lr", "trainer.patience", "trainer.grad_norm", "trainer.num_epochs"}
    allennlp |= {"trainer.num_gradient_accumulation_steps", "random_seed", "numpy_seed", "pytorch_seed"}
    allennlp |= {key for key in RULES if "batch_size" in key}
    swept = {s.key for s in SWEPT} - {"model.entity_types"}  # the types of the data: no rule of the table
    assert set(RULES) - allennlp == swept


def test_the_ratio_settings_rules_are_the_maths_own_ranges():
    """The rules of rho, gamma, lambda_u, eta and c are built from the ranges the maths declares and checks
    (:mod:`eer_plugin.core.ranges`): the same range object, the same line but for the key's ``model.``, at every
    edge (tests/core/test_ratio_control.py probes the maths' checks with the same edges)."""
    from eer_plugin.core.ratio_control import check_ratio_control

    held = [name for name in RANGES if f"model.{name}" in RULES]
    assert held == ["entity_ratio", "ratio_margin", "ratio_loss_weight", "price_rate", "price_penalty"]
    for name in held:
        rule, bounds = RULES[f"model.{name}"], RANGES[name]
        assert rule.bounds is bounds and rule.null is None
        for value in setting_edges.outside(bounds):
            assert rule.problem(f"model.{name}", value) == f"model.{bounds.problem(name, value)}"
        assert all(rule.takes(v) and bounds.holds(v) for v in setting_edges.inside(bounds))
    assert RULES["model.ratio_control"].choices == RATIO_CONTROLS
    with pytest.raises(ValueError) as raised:
        check_ratio_control("adaptive")
    assert f"model.{raised.value}" == RULES["model.ratio_control"].problem("model.ratio_control", "adaptive")


def _config_at(key: str, value: Any) -> Dict[str, Any]:
    """A config that holds ``value`` at ``key`` (``trainer.callbacks[eer_ratio_init].tolerance``: in the list's item
    of that type)."""
    inner = value
    for part in reversed(key.split(".")):
        name, _, of_type = part.rstrip("]").partition("[")
        inner = {name: [{"type": of_type, **inner}] if of_type else inner}
    return inner


def test_train_checks_the_same_rules_before_it_builds_anything():
    """The check of a training config wherever it is read, before anything is built (``runtime.config_checks``, in
    ``Params.from_file``), reads the same rules: the first bad value of each swept setting is one line naming it there
    too (the validation reader's as such); AllenNLP's ``from_params`` raised a ``TypeError`` traceback for the wrong types before the class saw them."""
    from eer_plugin.runtime.config_checks import _rule_problems

    for setting in (s for s in SWEPT if s.key in RULES):
        value = setting.bad()[0]
        keys = [setting.key] + ["validation_" + setting.key] * setting.key.startswith("dataset_reader.")
        for key in keys:
            assert list(_rule_problems(_config_at(key, value))) == [RULES[setting.key].problem(key, value)], key


# ----------------------------------------------------------------------------------------- eer-ner train
def _no_model(directory) -> bool:
    return not directory.exists() or not [p for p in directory.iterdir() if p.suffix == ".th" or p.name == "model.tar.gz"]  # fmt: skip


@pytest.mark.integration  # a process of its own: the installed eer-ner, as a user runs it (about 15 s)
def test_eer_ner_train_refuses_a_bad_tag_scheme_in_one_line_and_trains_nothing(tiny_env, tmp_path, monkeypatch):
    """``-o '{"dataset_reader": {"tag_scheme": "BMES"}}'``: before, nothing refused it with JSON-lines training data
    (the reader stored it; only a column file's reading would have), and the run trained."""
    monkeypatch.setenv("EER_TRAIN_DATA", str(FIXTURES / "partial_tiny.jsonl"))
    monkeypatch.delenv("EER_DEV_DATA", raising=False)
    monkeypatch.delenv("EER_TEST_DATA", raising=False)
    run = tmp_path / "run"
    overrides = json.dumps({"dataset_reader": {"tag_scheme": "BMES"}, "trainer.num_epochs": 1})
    done = eer_ner("train", "eer_short.jsonnet", "-s", run, "-o", overrides, capture_output=True, text=True)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert lines[-1].startswith("eer-ner train: error: dataset_reader.tag_scheme must be auto, or one of IOB1, ")
    assert lines[-1].endswith(", got 'BMES'") and len([line for line in lines if "error" in line]) == 1
    assert _no_model(run)


@pytest.mark.integration  # trains up to the model and the trainer (tiny encoder, 3 documents)
@pytest.mark.parametrize(
    "overrides, message",
    [
        # no check before the vocabulary is read: the model refuses it when it is built
        ({"model.entity_types": ["per", "loc", "org"]}, "model.entity_types must be a list of distinct entity types"),
        # a wrong type: a TypeError traceback from AllenNLP's from_params before the callback saw it
        (
            {"trainer.callbacks": [{"type": "eer_ratio_init", "sample_chunks": "all"}]},
            "trainer.callbacks[eer_ratio_init].sample_chunks must be an integer of at least 1",
        ),
    ],
    ids=["entity_types", "callback"],
)
def test_eer_ner_train_refuses_a_model_or_callback_setting_and_trains_nothing(
    overrides, message, tiny_env, tmp_path, monkeypatch, capsys
):
    from eer_plugin import cli

    monkeypatch.setenv("EER_TRAIN_DATA", str(FIXTURES / "partial_tiny.jsonl"))
    monkeypatch.delenv("EER_DEV_DATA", raising=False)
    monkeypatch.delenv("EER_TEST_DATA", raising=False)
    run = tmp_path / "run"
    status = cli.main(["train", "eer_short.jsonnet", "-s", str(run), "-o", json.dumps({"trainer.num_epochs": 1, **overrides})])  # fmt: skip
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error: " in line]
    assert status == 1 and "Traceback" not in err and len(lines) == 1, err[-2000:]
    assert lines[0].startswith(f"eer-ner train: error: {message}"), lines[0]
    assert _no_model(run)


@pytest.mark.integration  # trains one epoch of the tiny encoder on 3 documents
def test_eer_ner_train_takes_good_values_of_the_checked_settings(tiny_env, tmp_path, monkeypatch):
    """Values at the edges of their rules, in other cases and forms, train as before."""
    from eer_plugin import cli

    monkeypatch.setenv("EER_TRAIN_DATA", str(FIXTURES / "partial_tiny.jsonl"))
    monkeypatch.setenv("EER_DEV_DATA", str(FIXTURES / "conll2003_tiny_dev.txt"))
    monkeypatch.delenv("EER_TEST_DATA", raising=False)
    overrides = {
        "trainer.num_epochs": 1,
        "dataset_reader.tag_scheme": "bio",
        "validation_dataset_reader.tag_scheme": "iob1",
        "validation_dataset_reader.file_encoding": "UTF-8",
        "validation_dataset_reader.sentences_per_document": 1,
        "dataset_reader.format": "jsonl",
        "model.dropout": 0,
        "model.entity_types": ["PER", "LOC", "ORG", "MISC"],
        "trainer.callbacks": [{"type": "eer_ratio_init", "sample_chunks": 1, "tolerance": 0.5}],
        "trainer.checkpointer.keep_most_recent_by_count": None,
    }
    run = tmp_path / "run"
    assert cli.main(["train", "eer_short.jsonnet", "-s", str(run), "-o", json.dumps(overrides)]) == 0
    assert (run / "model.tar.gz").exists()


def test_the_commands_reader_options_take_what_the_reader_takes(capsys):
    """``eer-inspect``, ``eer-estimate-ratio`` and ``eer-simulate`` build the reader (or read the corpus) from
    ``--tag-column``, ``--file-encoding`` and ``--max-length``: argparse refuses what the reader's rules refuse,
    naming the option (not ``dataset_reader.tag_column``, a key the command line has none of)."""
    import argparse

    from eer_plugin.commands.reader_options import add_max_length_argument, add_reader_arguments

    parser = argparse.ArgumentParser(prog="eer-inspect")
    add_reader_arguments(parser)
    add_max_length_argument(parser)
    bad = [("--tag-column", "0"), ("--tag-column", "last"), ("--file-encoding", "rot13"), ("--file-encoding", "utf9")]
    for option, text in bad + [("--max-length", "2"), ("--max-length", "-5"), ("--max-length", "many")]:
        with pytest.raises(SystemExit):
            parser.parse_args([option, text])
        assert f"argument {option}: expected " in capsys.readouterr().err
    args = parser.parse_args(["--tag-column", "2", "--file-encoding", "latin-1", "--max-length", "3"])
    assert (args.tag_column, args.file_encoding, args.max_length) == (2, "latin-1", 3)
    assert parser.parse_args([]).file_encoding == "auto"
