"""int8 tagging (issue 52): ``Tagger.load(..., precision="int8")``, the exported model and the
``eer_tagger`` predictor quantize the encoder's linear layers (dynamic quantization, one weight scale per
output channel, 8-bit activations where the CPU has VNNI) and keep the tag scorer and the CRF in float32;
the archive and the export give the same int8 output; the tag scores stay close to fp32, closer than
torch's default quantization (by a quarter with VNNI, a little without); the full-range layer is exact where its inputs are exactly representable,
at the extremes where a 16-bit accumulation would saturate; int8 is refused off the CPU. Speed and
CoNLL-2003 F1: docs/speed.md."""

import warnings

import pytest
import torch
from inference.test_exported import assert_same_outputs, export, fixture_documents
from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear

from eer_plugin.api import as_predict_input
from eer_plugin.inference.documents import parse_input
from eer_plugin.inference.exported import ExportedTagger
from eer_plugin.inference.precision import (
    FullRangeDynamicLinear,
    cpu_has_vnni,
    quantize_encoder,
    set_tagging_precision,
)
from eer_plugin.runtime.setting_values import TAGGING_PRECISIONS

#: the layer int8 tagging puts in place of each of the encoder's linear layers on this CPU
INT8_LINEAR = FullRangeDynamicLinear if cpu_has_vnni() else DynamicLinear


@pytest.fixture(scope="module")
def exported(archive, tmp_path_factory):
    return export(archive, tmp_path_factory.mktemp("export-int8") / "tagger")


def linear_kinds(module):
    return {type(m) for m in module.modules() if isinstance(m, (torch.nn.Linear, DynamicLinear))}


def per_channel_symmetric(layer):
    """Whether ``layer``'s int8 weight has one scale per output row and zero points 0 (torch stores it as affine)."""
    weight = layer.weight()
    return (
        weight.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric)
        and weight.q_per_channel_scales().numel() == layer.out_features
        and not weight.q_per_channel_zero_points().any()
    )


def test_int8_quantizes_the_encoder_only_and_archive_and_export_agree(archive, exported):
    from eer_plugin import Tagger

    int8_archive, int8_export = Tagger.load(archive, precision="int8"), Tagger.load(exported, precision="int8")
    model = int8_archive._model._model
    assert linear_kinds(model.text_field_embedder) == {INT8_LINEAR}
    assert linear_kinds(int8_export._model.encoder) == {INT8_LINEAR}
    assert all(per_channel_symmetric(m) for m in int8_export._model.encoder.modules() if isinstance(m, DynamicLinear))
    for tagger_model in (model, int8_export._model):
        assert (
            type(tagger_model.tag_scorer) is torch.nn.Linear and tagger_model.tag_scorer.weight.dtype == torch.float32
        )
        assert tagger_model.precision == "fp32"  # no autocast around the quantized encoder
    documents = fixture_documents()
    assert_same_outputs(list(int8_archive.pipe(documents)), list(int8_export.pipe(documents)))
    fp32 = Tagger.load(exported)
    assert linear_kinds(fp32._model.encoder) == {torch.nn.Linear}  # loading int8 changed no other model


def test_int8_tag_scores_stay_close_to_fp32_and_closer_than_torchs_default(exported):
    fp32, int8 = ExportedTagger.load(exported), ExportedTagger.load(exported, precision="int8")
    default = ExportedTagger.load(exported)  # torch's quantize_dynamic as it comes: per tensor, 7-bit activations
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.ao.quantization.quantize_dynamic(default.encoder, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)
    documents = [parse_input(as_predict_input(d, "test"))[0] for d in fixture_documents()[:3]]
    chunks = [chunk for doc in documents for chunk in fp32.chunk(doc)]
    with torch.inference_mode():
        batch = fp32.subwords.tensorize(chunks, torch.device("cpu"))
        ref, mask = fp32.scores(batch)
        errors = {
            name: (model.scores(batch)[0] - ref)[mask.bool()].abs()
            for name, model in (("int8", int8), ("default", default))
        }
    spread = ref[mask.bool()].std()
    assert 0 < errors["int8"].max() < 0.1 * spread  # quantized (not the same numbers), but close
    # with VNNI the 8-bit activations halve the rounding step; without, only the per-channel weights help
    # (measured on an AVX2-only EPYC: 0.00477 against 0.00485)
    margin = 0.75 if cpu_has_vnni() else 1.0
    assert errors["int8"].mean() < margin * errors["default"].mean()


@pytest.mark.parametrize("full_range", [False, True])
def test_the_quantized_layer_does_not_overflow_at_the_extremes(full_range):
    """Inputs at the top of their range against rows of equal-sign weights at the top of theirs: where pairs of
    uint8 x int8 products summed in 16 bits would saturate (2 x 255 x 127 > 32767, an error of about half the
    output) the layer stays within 1% of float32."""
    if full_range and not cpu_has_vnni():
        pytest.skip("the full 8-bit activation range needs an int8 dot product with 32-bit sums (VNNI)")
    gen = torch.Generator().manual_seed(0)
    linear = torch.nn.Linear(64, 8)
    with torch.no_grad():
        signs = torch.where(torch.rand(8, 64, generator=gen) < 0.5, -1.0, 1.0)
        signs[:2] = 1.0  # all-positive rows
        linear.weight.copy_(signs * torch.linspace(0.5, 2.0, 8)[:, None])
        linear.bias.zero_()
    x = torch.where(torch.rand(5, 64, generator=gen) < 0.8, 3.0, 0.0)
    x[0] = 3.0  # every input at the top level
    expected = linear(x).detach()
    layer = quantize_encoder(torch.nn.Sequential(linear), full_range=full_range)[0]
    assert type(layer) is (FullRangeDynamicLinear if full_range else DynamicLinear)
    assert ((layer(x) - expected).abs() <= 0.01 * expected.abs().max()).all()


def test_full_range_halves_the_activation_step():
    if not cpu_has_vnni():
        pytest.skip("the full 8-bit activation range needs VNNI")
    gen = torch.Generator().manual_seed(1)
    linear = torch.nn.Linear(256, 256)
    x = torch.randn(64, 256, generator=gen)
    expected = linear(x).detach()
    errors = {}
    for full_range in (False, True):
        import copy

        layer = quantize_encoder(torch.nn.Sequential(copy.deepcopy(linear)), full_range=full_range)[0]
        errors[full_range] = (layer(x) - expected).abs().mean()
    assert errors[True] < 0.7 * errors[False]


def test_the_predictor_takes_a_precision_and_bad_ones_are_refused(archive):
    from allennlp.models.archival import load_archive

    from eer_plugin.predictors.tagger import DocumentTaggerPredictor

    loaded = load_archive(str(archive))
    predictor = DocumentTaggerPredictor(loaded.model, loaded.validation_dataset_reader, precision="int8")
    assert linear_kinds(predictor._model.text_field_embedder) == {INT8_LINEAR}
    assert "int8" in TAGGING_PRECISIONS
    with pytest.raises(ValueError, match="precision must be one of"):
        set_tagging_precision(loaded.model, loaded.model.text_field_embedder, "int4", torch.device("cpu"))
    with pytest.raises(ValueError, match="CPU only"):
        set_tagging_precision(loaded.model, loaded.model.text_field_embedder, "int8", torch.device("cuda", 0))
