"""The precision a model is loaded for tagging in is checked once, in one wording
(:func:`eer_plugin.runtime.setting_values.tagging_precision_problem`), at every entry point that takes one:
``Tagger.load`` (a model archive, an exported model, a path that is no model), ``ExportedTagger.load``, the
``eer_tagger`` predictor and its ``--predictor-args`` check in ``eer-ner predict``, and ``set_tagging_precision``.
Bad values are generated from the choices (another case, a space, a letter less or more) and from the other JSON
types; each entry point refuses each with the same line (after its own prefix) before it loads anything, int8 on a
GPU too; every good value passes."""

import json
import math

import pytest
import torch

from eer_plugin.common.errors import SettingError, UserError
from eer_plugin.runtime.setting_values import (
    PRECISIONS,
    TAGGING_PRECISION,
    TAGGING_PRECISIONS,
    tagging_precision_problem,
)

#: near misses of each choice, then other types (a bool is no string, a list of a choice is no choice)
BAD = list(
    dict.fromkeys(
        [
            near
            for choice in TAGGING_PRECISIONS
            for near in (choice.upper(), choice.title(), " " + choice, choice + " ", choice[:-1], choice + "x")
        ]
        + ["", "int4", "fp16", "float32", "none", "null"]
    )
) + [8, 16, 0, 1.5, math.nan, True, False, ["int8"], {"precision": "fp32"}, b"fp32"]
GOOD = [None, *TAGGING_PRECISIONS]


def _json(value) -> bool:
    """Whether ``value`` can be given in ``--predictor-args`` (JSON: no bytes, no NaN)."""
    return not isinstance(value, bytes) and not (isinstance(value, float) and math.isnan(value))


def test_the_one_line_names_the_value_the_choices_and_what_each_means():
    assert tagging_precision_problem("FP32") == (
        "precision must be one of fp32, bf16, auto, int8 (fp32: float32; bf16: bfloat16; auto: bf16 where native, "
        "else fp32; int8: quantized, CPU only), or null (the model's own), got 'FP32'"
    )
    assert tagging_precision_problem("int8", "cuda:0") == (
        "precision must be one of fp32, bf16, auto (on cuda:0: int8 runs on the CPU only), or null (the model's "
        "own), got 'int8'"
    )
    assert TAGGING_PRECISIONS == PRECISIONS + ("int8",) and TAGGING_PRECISION.choices == TAGGING_PRECISIONS
    for value in BAD:
        line = tagging_precision_problem(value)
        assert line == f"precision must be {TAGGING_PRECISION.describe()}, got {value!r}" and "\n" not in line
    long = tagging_precision_problem("x" * 100_000)
    assert len(long) < 1200 and long.endswith("x'")  # its start and end, not the whole value
    assert all(tagging_precision_problem(value) is None for value in GOOD)
    assert all(tagging_precision_problem(value, "cpu") is None for value in GOOD)
    assert all(tagging_precision_problem(value, torch.device("cpu")) is None for value in GOOD)
    for device in ("cuda:0", "cuda", torch.device("cuda", 1)):
        assert all(tagging_precision_problem(value, device) is None for value in GOOD if value != "int8")
        assert tagging_precision_problem("int8", device).endswith(f"(on {device}: int8 runs on the CPU only), or null (the model's own), got 'int8'")  # fmt: skip


class _Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(4, 4))
        self.precision = "bf16"


@pytest.mark.parametrize("value", BAD, ids=repr)
def test_set_tagging_precision_refuses_with_the_one_line_and_changes_nothing(value):
    from eer_plugin.inference.precision import set_tagging_precision

    model = _Model()
    with pytest.raises(SettingError) as raised:
        set_tagging_precision(model, model.encoder, value, torch.device("cpu"))
    assert str(raised.value) == tagging_precision_problem(value)
    assert model.precision == "bf16" and type(model.encoder[0]) is torch.nn.Linear


def test_set_tagging_precision_takes_the_good_values_and_refuses_int8_off_the_cpu():
    from eer_plugin.inference.precision import set_tagging_precision

    for value in GOOD:
        model = _Model()
        set_tagging_precision(model, model.encoder, value, torch.device("cpu"))
        assert model.precision == {None: "bf16", "int8": "fp32"}.get(value, value)  # None: the model's own
    model = _Model()
    with pytest.raises(SettingError) as raised:
        set_tagging_precision(model, model.encoder, "int8", torch.device("cuda", 0))
    assert str(raised.value) == tagging_precision_problem("int8", "cuda:0")
    assert model.precision == "bf16" and type(model.encoder[0]) is torch.nn.Linear  # nothing quantized


@pytest.fixture(scope="module")
def exported(archive, tmp_path_factory):
    from inference.test_exported import export

    return export(archive, tmp_path_factory.mktemp("export-precision") / "tagger")


def test_every_loader_refuses_each_bad_value_with_the_one_line_before_it_loads(archive, exported, tmp_path, monkeypatch):  # fmt: skip
    """``Tagger.load`` (an archive, an export, no model: nothing is read, so the line is the same for all three),
    ``ExportedTagger.load`` and the predictor, each with the same line; then the same for int8 on a GPU, which no
    machine here needs to have (refused before the device is looked at)."""
    from allennlp.models.archival import load_archive

    from eer_plugin import Tagger
    from eer_plugin.inference import exported as exported_module
    from eer_plugin.inference.exported import ExportedTagger
    from eer_plugin.predictors.tagger import DocumentTaggerPredictor, PredictorArgumentError, check_predictor_args

    loaded = load_archive(str(archive))
    monkeypatch.setattr(exported_module, "read_settings", lambda *a: pytest.fail("the export was read"))
    paths = (archive, exported, tmp_path / "no-model.tar.gz")
    for value in BAD:
        line = tagging_precision_problem(value)
        for path in paths:
            with pytest.raises(SettingError) as raised:
                Tagger.load(path, precision=value)
            assert str(raised.value) == f"Tagger.load: {line}", path
        with pytest.raises(SettingError) as raised:
            ExportedTagger.load(exported, "cpu", value)
        assert str(raised.value) == line
        with pytest.raises(PredictorArgumentError) as raised:
            check_predictor_args(precision=value)
        assert str(raised.value) == line
        with pytest.raises(PredictorArgumentError) as raised:
            DocumentTaggerPredictor(loaded.model, loaded.validation_dataset_reader, precision=value)
        assert str(raised.value) == line
    line = tagging_precision_problem("int8", "cuda:0")
    for path in paths:
        with pytest.raises(SettingError) as raised:
            Tagger.load(path, cuda_device=0, precision="int8")
        assert str(raised.value) == f"Tagger.load: {line}"
    with pytest.raises(SettingError) as raised:
        ExportedTagger.load(exported, "cuda:0", "int8")
    assert str(raised.value) == line
    for value in GOOD:
        check_predictor_args(precision=value)


@pytest.mark.parametrize("value", [v for v in BAD if _json(v)][::3] + [True, ["int8"]], ids=repr)
def test_predict_refuses_a_bad_precision_in_predictor_args_before_loading(value, archive, tmp_path, monkeypatch):
    from allennlp.commands import predict
    from predictors.test_predict_outputs import _args

    monkeypatch.setattr(predict, "_get_predictor", lambda args: pytest.fail("the model was loaded"), raising=True)
    (tmp_path / "in.jsonl").write_text('{"text": "Paris ."}\n')
    given = json.dumps({"precision": value})
    with pytest.raises(UserError) as raised:
        predict._predict(_args(archive, tmp_path / "in.jsonl", str(tmp_path / "out.jsonl"), predictor_args=given))
    assert str(raised.value) == f"--predictor-args {given}: {tagging_precision_problem(value)}"
    assert not (tmp_path / "out.jsonl").exists()


def test_an_unknown_predictor_argument_lists_the_precisions_in_the_one_wording(archive, tmp_path, monkeypatch):
    """A misspelt ``precison`` names the predictor's arguments, the precision with what it must be as the one line
    says it (no quoted ``'fp32'`` list of its own), in ``check_predictor_args`` and in ``eer-ner predict``."""
    from allennlp.commands import predict
    from predictors.test_predict_outputs import _args

    from eer_plugin.predictors.tagger import PredictorArgumentError, check_predictor_args

    with pytest.raises(PredictorArgumentError) as raised:
        check_predictor_args(precison="fp32")
    line = str(raised.value)
    assert line.startswith("unknown argument(s) 'precison'; the eer_tagger predictor takes ")
    assert line.endswith(f" and precision ({TAGGING_PRECISION.describe()})") and "'fp32'" not in line
    monkeypatch.setattr(predict, "_get_predictor", lambda args: pytest.fail("the model was loaded"), raising=True)
    (tmp_path / "in.jsonl").write_text('{"text": "Paris ."}\n')
    given = json.dumps({"precison": "fp32"})
    with pytest.raises(UserError) as raised:
        predict._predict(_args(archive, tmp_path / "in.jsonl", str(tmp_path / "out.jsonl"), predictor_args=given))
    assert str(raised.value) == f"--predictor-args {given}: {line}" and not (tmp_path / "out.jsonl").exists()
