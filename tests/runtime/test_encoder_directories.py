"""An encoder that names a local path which is no transformers model (``EER_ENCODER``, ``--encoder``, an archive's
``model_name``): one line naming the directory, what it lacks and the fix, on every path that loads an encoder
(``eer-ner train`` before ``-s`` is made, the reader, the embedder, ``eer-estimate-ratio``, the model commands and
``Tagger.load`` of an archive), never transformers' ``OSError`` traceback.

The broken directories are generated from the tiny test encoder: every combination of its parts removed (its
config, its weights, its tokenizer files), every way its ``config.json`` can be unreadable, each of its files given
in place of the directory, TensorFlow-only weights, and paths that are not there."""

import itertools
import os
import shutil
from pathlib import Path

import pytest
from test_model_checks import relabelled

from eer_plugin.common.errors import ArchiveError
from eer_plugin.runtime.encoders import ALL_PARTS, EncoderError, check_encoder

#: the tiny encoder's files by part (tests/conftest.py: build_tiny_encoder)
PARTS = {
    "config": ["config.json"],
    "weights": ["model.safetensors"],
    "tokenizer": ["tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"],
}
#: what a message says for each defect
SAYS = {
    "config": "no config.json",
    "weights": "no weights (model.safetensors or pytorch_model.bin)",
    "tokenizer": "no tokenizer files",
    "everything": "an empty directory",
    "unreadable config": "its config.json cannot be read as JSON",
    "config of another JSON type": "its config.json holds a JSON",
    "file": "a file, not a directory",
    "missing": "no such directory",
}
#: contents of a config.json that is no model's settings
BAD_CONFIGS = {
    "truncated": '{"model_type": ',
    "empty": "",
    "binary": b"\x89PNG\r\n\x1a\n\x00\x00",
    "a list": "[1, 2]",
    "a string": '"bert"',
    "null": "null",
}


def _broken_encoders(encoder: Path, root: Path):
    """``(name, path, defects)`` for each broken encoder made from ``encoder`` under ``root``: ``defects`` are keys
    of :data:`SAYS`, one of which its message must name."""
    cases = []
    for count in range(1, len(PARTS) + 1):
        for removed in itertools.combinations(PARTS, count):
            directory = root / ("without-" + "-".join(removed))
            shutil.copytree(encoder, directory)
            for part in removed:
                for name in PARTS[part]:
                    (directory / name).unlink()
            defects = ["everything"] if len(removed) == len(PARTS) else list(removed)
            cases.append((directory.name, directory, defects))
    for name, content in BAD_CONFIGS.items():
        directory = root / f"config-{name.replace(' ', '-')}"
        shutil.copytree(encoder, directory)
        path = directory / "config.json"
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
        defect = "config of another JSON type" if name in ("a list", "a string", "null") else "unreadable config"
        cases.append((directory.name, directory, [defect]))
    tensorflow = root / "tensorflow-weights-only"
    shutil.copytree(encoder, tensorflow)
    (tensorflow / "model.safetensors").rename(tensorflow / "tf_model.h5")
    cases.append((tensorflow.name, tensorflow, ["weights"]))
    for name in sorted(os.listdir(encoder)):
        cases.append((f"the file {name}", encoder / name, ["file"]))
    cases.append(("a path that is not there", root / "no" / "such" / "encoder", ["missing"]))
    return cases


@pytest.fixture(scope="module")
def broken(tiny_encoder, tmp_path_factory):
    return _broken_encoders(Path(tiny_encoder), tmp_path_factory.mktemp("broken-encoders"))


def _one_line_naming(message: str, path: Path, defects) -> None:
    assert "\n" not in message and "Traceback" not in message, message
    assert str(path) in message, message
    assert any(SAYS[d] in message for d in defects), (defects, message)
    assert "huggingface.co" not in message and "Incorrect path_or_model_id" not in message, message


def test_every_broken_encoder_is_one_encoder_error_naming_it_and_what_it_lacks(broken, monkeypatch):
    monkeypatch.setenv("EER_ENCODER", "all-MiniLM-L6-v2")  # named "the encoder", not the setting
    for _, path, defects in broken:
        with pytest.raises(EncoderError) as raised:
            check_encoder(str(path), ALL_PARTS)
        _one_line_naming(str(raised.value), path, defects)
        assert str(raised.value).startswith(f"the encoder {path}: ")
        assert "give the directory of a transformers model" in str(raised.value)


def test_the_reader_and_the_embedder_build_or_name_what_the_encoder_lacks(broken, monkeypatch):
    """What ``train``, ``evaluate``, ``predict``, ``eer-estimate-ratio`` and ``eer-inspect`` build from a config: the
    reader needs the tokenizer only (it may build from a directory without weights), the embedder the config and
    the weights; neither raises anything but one EncoderError line naming the setting."""
    from allennlp.common import Params
    from allennlp.data import DatasetReader
    from allennlp.modules.token_embedders import TokenEmbedder

    for _, path, defects in broken:
        monkeypatch.setenv("EER_ENCODER", str(path))
        try:
            DatasetReader.from_params(Params({"type": "eer_documents", "model_name": str(path)}))
        except EncoderError as error:
            _one_line_naming(str(error), path, defects)
            assert str(error).startswith(f"EER_ENCODER {path}: ")
        else:
            assert not {"tokenizer", "everything", "file", "missing"} & set(defects), path
        with pytest.raises(EncoderError) as raised:
            TokenEmbedder.from_params(Params({"type": "eer_transformer", "model_name": str(path)}))
        _one_line_naming(str(raised.value), path, defects)


def _cli(argv, capsys):
    from eer_plugin import cli

    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as ended:  # the plugin's own AllenNLP subcommands exit with their status
        status = ended.code
    err = capsys.readouterr().err
    named = f"eer-ner {argv[0]}: error:"  # the form of every command's error line
    return status, [line for line in err.splitlines() if line.startswith(named) or "Traceback" in line], err


@pytest.mark.integration  # loads every command or model once per case
def test_train_refuses_a_broken_encoder_before_making_its_directory(broken, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name, path, defects in broken:
        monkeypatch.setenv("EER_ENCODER", str(path))
        run = tmp_path / name.replace(" ", "-")
        status, lines, err = _cli(["train", "eer_short.jsonnet", "-s", run], capsys)
        assert status == 1 and len(lines) == 1, (name, err[-2000:])
        _one_line_naming(lines[0], path, defects)
        assert lines[0].startswith(f"eer-ner train: error: EER_ENCODER {path}: ") and not run.exists(), (name, lines)


@pytest.mark.integration  # loads every command or model once per case
def test_estimate_ratio_with_a_broken_encoder_is_one_line(broken, monkeypatch, capsys):
    data = Path(__file__).resolve().parents[2] / "fixtures" / "conll2003_tiny_dev.txt"
    for name, path, defects in broken:
        monkeypatch.setenv("EER_ENCODER", str(path))
        status, lines, err = _cli(["eer-estimate-ratio", data, "--resamples", "10"], capsys)
        if status == 0:  # it splits words only: an encoder without weights or config.json still has a tokenizer
            assert not {"tokenizer", "everything", "file", "missing"} & set(defects), (name, err[-2000:])
            continue
        assert status == 1 and len(lines) == 1, (name, err[-2000:])
        _one_line_naming(lines[0], path, defects)


def _encoder_at(path: Path):
    def edit(config):
        config["dataset_reader"]["model_name"] = str(path)
        config["model"]["text_field_embedder"]["token_embedders"]["tokens"]["model_name"] = str(path)

    return edit


@pytest.mark.integration  # loads every command or model once per case
def test_an_archive_whose_encoder_is_broken_names_the_archive_the_directory_and_what_it_lacks(
    broken, archive, tmp_path, capsys
):
    """The model commands and the Python API load archives the same way (``load_archive``, checked)."""
    from eer_plugin.api import Tagger

    data = tmp_path / "docs.jsonl"
    data.write_text('{"id": "a", "text": "John Smith visited London."}\n')
    for index, (name, path, defects) in enumerate(broken):
        edited = relabelled(archive, tmp_path, f"edited{index}", _encoder_at(path))
        with pytest.raises(ArchiveError) as raised:
            Tagger.load(edited)
        message = str(raised.value)
        _one_line_naming(message, path, defects)
        assert message.startswith(f"{edited}: the encoder its config.json names, {path}: "), message
        assert "must be where it was" in message
        for argv in (["evaluate", edited, data], ["predict", edited, data, "--predictor", "eer_tagger"]):
            status, lines, err = _cli(argv, capsys)
            assert status == 1 and lines == [f"eer-ner {argv[0]}: error: {message}"], (name, argv[0], err[-2000:])


def test_an_encoder_cache_that_cannot_hold_the_assembled_encoders_is_one_line(tmp_path, monkeypatch):
    """``EER_MODEL_CACHE`` naming a file, or a directory without write permission (as a user, not root)."""
    from eer_plugin.runtime.encoder_packages import EncoderPackageError, check_cache_dir

    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("EER_MODEL_CACHE", str(tmp_path / "a-file"))
    for directory in (tmp_path / "a-file", tmp_path / "a-file" / "below"):
        with pytest.raises(EncoderPackageError, match=r"^EER_MODEL_CACHE=.*: cannot hold the encoders assembled"):
            check_cache_dir(directory)
    check_cache_dir(tmp_path / "new" / "cache")
    assert (tmp_path / "new" / "cache").is_dir()


def test_the_checks_leave_working_encoders_alone(tiny_encoder, monkeypatch):
    monkeypatch.setenv("EER_ENCODER", tiny_encoder)
    assert check_encoder(tiny_encoder) == tiny_encoder
    assert os.path.isdir(check_encoder("all-MiniLM-L6-v2"))  # the packaged copy
    assert check_encoder("org/model-name") == "org/model-name"  # a hub id: transformers' to load
