"""int8 tagging (issue 52): ``Tagger.load(..., precision="int8")``, the exported model and the
``eer_tagger`` predictor quantize the encoder's linear layers (dynamic quantization) and keep the tag
scorer and the CRF in float32; the archive and the export give the same int8 output; the tag scores
stay close to fp32; int8 is refused off the CPU. Speed and CoNLL-2003 F1: docs/speed.md."""

import pytest
import torch
from inference.test_exported import assert_same_outputs, export, fixture_documents
from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear

from eer_plugin.api import as_predict_input
from eer_plugin.inference.documents import parse_input
from eer_plugin.inference.exported import ExportedTagger
from eer_plugin.inference.precision import TAGGING_PRECISIONS, set_tagging_precision


@pytest.fixture(scope="module")
def exported(archive, tmp_path_factory):
    return export(archive, tmp_path_factory.mktemp("export-int8") / "tagger")


def linear_kinds(module):
    return {type(m) for m in module.modules() if isinstance(m, (torch.nn.Linear, DynamicLinear))}


def test_int8_quantizes_the_encoder_only_and_archive_and_export_agree(archive, exported):
    from eer_plugin import Tagger

    int8_archive, int8_export = Tagger.load(archive, precision="int8"), Tagger.load(exported, precision="int8")
    model = int8_archive._model._model
    assert linear_kinds(model.text_field_embedder) == {DynamicLinear}
    assert linear_kinds(int8_export._model.encoder) == {DynamicLinear}
    for tagger_model in (model, int8_export._model):
        assert (
            type(tagger_model.tag_scorer) is torch.nn.Linear and tagger_model.tag_scorer.weight.dtype == torch.float32
        )
        assert tagger_model.precision == "fp32"  # no autocast around the quantized encoder
    documents = fixture_documents()
    assert_same_outputs(list(int8_archive.pipe(documents)), list(int8_export.pipe(documents)))
    fp32 = Tagger.load(exported)
    assert linear_kinds(fp32._model.encoder) == {torch.nn.Linear}  # loading int8 changed no other model


def test_int8_tag_scores_stay_close_to_fp32(exported):
    fp32, int8 = ExportedTagger.load(exported), ExportedTagger.load(exported, precision="int8")
    documents = [parse_input(as_predict_input(d, "test"))[0] for d in fixture_documents()[:3]]
    chunks = [chunk for doc in documents for chunk in fp32.chunk(doc)]
    with torch.inference_mode():
        batch = fp32.subwords.tensorize(chunks, torch.device("cpu"))
        ref, mask = fp32.scores(batch)
        got, _ = int8.scores(batch)
    error = (got - ref)[mask.bool()].abs().max()
    spread = ref[mask.bool()].std()
    assert 0 < error < 0.2 * spread  # quantized (not the same numbers), but close


def test_the_predictor_takes_a_precision_and_bad_ones_are_refused(archive):
    from allennlp.models.archival import load_archive

    from eer_plugin.predictors.tagger import DocumentTaggerPredictor

    loaded = load_archive(str(archive))
    predictor = DocumentTaggerPredictor(loaded.model, loaded.validation_dataset_reader, precision="int8")
    assert linear_kinds(predictor._model.text_field_embedder) == {DynamicLinear}
    assert "int8" in TAGGING_PRECISIONS
    with pytest.raises(ValueError, match="precision must be one of"):
        set_tagging_precision(loaded.model, loaded.model.text_field_embedder, "int4", torch.device("cpu"))
    with pytest.raises(ValueError, match="CPU only"):
        set_tagging_precision(loaded.model, loaded.model.text_field_embedder, "int8", torch.device("cuda", 0))
