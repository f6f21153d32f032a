"""Shared test fixtures: a tiny BERT built locally from a config (random weights, no download)."""

import importlib.util
import logging
import os
import string
import subprocess
import sys
from pathlib import Path

import pytest


def pytest_configure(config):
    """Torch's settings and the AllenNLP registrations, in every process that runs tests; not in pytest-xdist's
    controller (``make test``'s ``-n auto``), which only hands tests out: importing torch and AllenNLP there
    would delay every worker's start by its cost (about 10 s on 2 cores)."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    import torch

    # Triton (the fused CRF kernels, eer_plugin/core/fused.py) decides between its interpreter and its compiler
    # for the whole process when it is first imported, and torch may import it along the way: where no GPU is,
    # the suite runs the kernels in the interpreter from the start (on a GPU machine, compiled)
    if importlib.util.find_spec("triton") is not None and not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    # under pytest-xdist the workers share the cores: each worker's torch takes its share of them
    if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    import eer_plugin.allennlp_plugin  # noqa: F401  (registers the AllenNLP components; the configs' defaults come from eer_plugin/runtime/settings.py)

    _walk_each_package_once()


def _walk_each_package_once() -> None:
    """AllenNLP's ``main`` imports every submodule of allennlp and of allennlp_models (``import_plugins``) on each
    call: 1.5-3 s (513 ``importlib.invalidate_caches``) even when all are imported, which the suite's hundreds of
    in-process ``cli.main`` calls paid again and again. In a test process nothing is installed between two calls,
    so the second walk of a package imports nothing new: it is skipped (the rest of ``import_plugins``, the
    ``.allennlp_plugins`` file of the working directory, runs every time; ``--include-package`` walks as before)."""
    from allennlp.common import plugins

    walk, walked = plugins.import_module_and_submodules, set()

    def walk_once(package_name: str, exclude=None) -> None:
        key = (package_name, frozenset(exclude or ()))
        if key not in walked:
            walk(package_name, exclude=exclude)
            walked.add(key)

    plugins.import_module_and_submodules = walk_once


# the encoder in float32 whatever the CPU (the default `auto` would pick bf16 on AMX / AVX-512 BF16 machines),
# so the suite computes the same numbers everywhere; tests of bf16 and `auto` ask for them explicitly
os.environ.setdefault("EER_PRECISION", "fp32")

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
#: the data of the fixture runs, named explicitly: the configs have no data defaults (a test of a user's
#: own data removes these, see test_own_data.py)
FIXTURE_DATA = {
    "EER_TRAIN_DATA": str(FIXTURES / "conll2003_tiny_partial.jsonl"),
    "EER_DEV_DATA": str(FIXTURES / "conll2003_tiny_dev.txt"),
    "EER_TEST_DATA": str(FIXTURES / "conll2003_tiny_dev.txt"),
    "EER_GOLD_TRAIN_DATA": str(FIXTURES / "conll2003_tiny.txt"),
}
for _name, _path in FIXTURE_DATA.items():
    os.environ.setdefault(_name, _path)
CONLL_EN = REPO.parent / "shared" / "data" / "conll2003-en"


def build_tiny_encoder(directory: Path, hidden_size: int = 32) -> Path:
    """A 2-layer, 32-dim (``hidden_size``) BERT with a character-level WordPiece vocabulary (any text tokenizes)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    directory.mkdir(parents=True, exist_ok=True)
    chars = string.ascii_lowercase + string.digits + string.punctuation
    words = ["the", "of", "in", "and", "to", "said", "new", "york", "john", "smith", "london"]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list(chars) + ["##" + c for c in chars] + words
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(directory / "vocab.txt"), do_lower_case=True, model_max_length=512)
    tokenizer.save_pretrained(directory)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=hidden_size,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    BertModel(config).save_pretrained(directory)
    return directory


@pytest.fixture(autouse=True)
def _root_logging_restored():
    """AllenNLP's training (prepare_global_logging) puts handlers on the root logger that write to the
    streams pytest captured for that test, closed after it; a later test whose code logs at INFO (the
    readers do, once per file) would get '--- Logging error ---' on its stderr. Each test ends with the
    root logger's level and handlers as they were (pytest's own capture handlers left alone)."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    for handler in list(root.handlers):
        if handler not in handlers and not type(handler).__module__.startswith("_pytest"):
            root.removeHandler(handler)
            handler.close()
    for handler in handlers:
        if handler not in root.handlers and not type(handler).__module__.startswith("_pytest"):
            root.addHandler(handler)
    root.setLevel(level)


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory) -> str:
    return str(build_tiny_encoder(tmp_path_factory.mktemp("tiny-bert")))


@pytest.fixture
def tiny_env(tiny_encoder, monkeypatch):
    """Environment settings for quick fixture runs with the tiny encoder (train with ``-o`` :func:`hyper`'s
    overrides, e.g. ``hyper("eer_short", EER_EPOCHS=2)``: hyperparameters are no environment variables)."""
    monkeypatch.setenv("EER_ENCODER", tiny_encoder)
    monkeypatch.setenv("EER_MAX_LENGTH", "128")
    return tiny_encoder


@pytest.fixture
def configs_evaluated_once(monkeypatch):
    """Each config file evaluated by jsonnet once in the test: the same file in the same environment evaluates to
    the same JSON (about 0.3 s a time on 2 cores, paid once per override by a sweep); ``Params.from_file`` still
    merges the overrides and checks the config (``eer_plugin/runtime/config_checks.py``) every time."""
    import json

    from allennlp.common import params

    evaluated, evaluate_file = {}, params.evaluate_file

    def evaluate_once(filename, ext_vars=None):
        key = (filename, json.dumps(ext_vars, sort_keys=True))
        if key not in evaluated:
            evaluated[key] = evaluate_file(filename, ext_vars=ext_vars)
        return evaluated[key]

    monkeypatch.setattr(params, "evaluate_file", evaluate_once)


def hyper(config: str, **values) -> str:
    """The ``-o`` overrides of hyperparameters given by their ``EER_*`` names for ``config`` (the table's
    conversion, as the benchmark passes a plan's settings)."""
    import json

    from eer_plugin.runtime.settings import config_approach, overrides

    return json.dumps(overrides({k: str(v) for k, v in values.items()}, *config_approach(config)))


requires_conll = pytest.mark.skipif(not (CONLL_EN / "train.txt").exists(), reason="CoNLL-2003 English not present")


# the untrained tagger of tests/untrained_tagger.py, archived once per module that uses it
@pytest.fixture(scope="module")
def archive(tmp_path_factory, tiny_encoder):
    from untrained_tagger import build_archive

    return build_archive(tmp_path_factory.mktemp("untrained"), tiny_encoder)


@pytest.fixture(scope="module")
def predictor(archive):
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    return Predictor.from_archive(load_archive(str(archive)), "eer_tagger")


def eer_ner(*argv, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    """Runs the installed ``eer-ner`` command offline, one thread, with a limit of ``timeout`` seconds."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [str(Path(sys.executable).parent / "eer-ner"), *map(str, argv)], env=env, timeout=timeout, **kwargs
    )
