"""An untrained ``eer_tagger`` archived without training, for the tests of prediction and of what uses it
(the predictor, the Python API, the spaCy component, the exporters): random scores and a large ``o_cost``
give many predicted spans, so no training run is needed. The fixtures ``archive`` and ``predictor`` are in
``conftest.py``."""

import json
from pathlib import Path
from typing import Sequence

import torch


def labels(types: Sequence[str]) -> list:
    """The BILUO labels of entity ``types``, in the model's order."""
    return ["O"] + [f"{p}-{t}" for t in types for p in "BILU"]


LABELS = labels(("PER", "LOC"))
TEXT = (
    "John Smith visited New York. He met the mayor of London! Then he left the U.S. for good; "
    "prices rose 3.5 percent. Angela Merkel and Emmanuel Macron met in Paris, Berlin and Rome."
)


def build_archive(
    directory: Path, encoder: str, max_length: int = 24, o_cost: float = -2.0, types: Sequence[str] = ("PER", "LOC")
) -> Path:
    """``model.tar.gz`` of an untrained ``eer_tagger`` (entity ``types``) on ``encoder``, chunks of ``max_length``."""
    from allennlp.common import Params
    from allennlp.data import Vocabulary
    from allennlp.models import Model
    from allennlp.models.archival import archive_model

    directory.mkdir(parents=True, exist_ok=True)
    vocab = Vocabulary(non_padded_namespaces=["labels"])
    vocab.add_tokens_to_namespace(labels(types), "labels")
    config = {
        "dataset_reader": {"type": "eer_documents", "model_name": encoder, "max_length": max_length},
        "model": {
            "type": "eer_tagger",
            "o_cost": o_cost,
            "text_field_embedder": {"token_embedders": {"tokens": {"type": "eer_transformer", "model_name": encoder}}},
        },
        "train_data_path": "unused",
        "data_loader": {"batch_size": 2},
        "trainer": {"optimizer": "adam", "num_epochs": 1},
    }
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=Params(json.loads(json.dumps(config["model"]))))
    with torch.no_grad():  # scores with some spread, so that spans and their probabilities vary
        model.tag_scorer.weight.mul_(30.0)
    (directory / "config.json").write_text(json.dumps(config))
    vocab.save_to_files(str(directory / "vocabulary"))
    torch.save(model.state_dict(), directory / "best.th")
    archive_model(str(directory))
    return directory / "model.tar.gz"
