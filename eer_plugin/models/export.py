"""``eer-ner eer-export-model``: a model archive -> a directory that tags without AllenNLP.

:func:`export_model` loads ``model.tar.gz`` (checked, :mod:`eer_plugin.runtime.archive`) and writes
the format of :mod:`eer_plugin.inference.exported`: the settings JSON (tag set, CRF grammar, decoding
cost, precision, chunking, encoder name, format version), the weights as safetensors (the transformer,
the tag scorer, the CRF transitions) and the transformer's config and tokenizer files, so the export
needs no network and no encoder package. The directory appears whole or not at all: it is built in a
temporary directory beside it and renamed into place; an existing non-empty directory is replaced
only with ``force``, and never when it holds the model (its archive, a part of its serialization directory, the
encoder directory its config names). The models it exports are ``eer_tagger`` archives on a pretrained transformer
with nothing between the transformer and the tag scorer (EER, Raw, Gold, Raw+CD, CBL); others
(``sns_tagger``, CBL-LSTM's BiLSTM, word embeddings) raise :class:`ExportError` saying so.
"""

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, Dict, Union

import torch
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder

from eer_plugin.common.errors import UserError
from eer_plugin.common.outputs import temporary_name
from eer_plugin.inference.exported import (
    ENCODER_DIRECTORY,
    FORMAT,
    FORMAT_VERSION,
    SETTINGS_FILE,
    WEIGHTS_FILE,
    check_not_a_transformers_model,
)
from eer_plugin.models.tagger import EERTagger
from eer_plugin.runtime.archive import load_model_archive


class ExportError(UserError):
    """A model that cannot be exported, or an output directory that must not be replaced."""


def _transformer_embedder(model: EERTagger, archive_path: str) -> PretrainedTransformerEmbedder:
    embedders = [m for m in model.text_field_embedder.modules() if isinstance(m, PretrainedTransformerEmbedder)]
    if model.encoder is not None or len(embedders) != 1:
        raise ExportError(
            f"{archive_path}: only an eer_tagger whose tag scores come straight from one pretrained transformer can be "
            "exported (not a BiLSTM encoder or word embeddings); use this model with eer-ner predict or Tagger.load(archive)"
        )
    embedder = embedders[0]
    if embedder._max_length is not None or embedder._scalar_mix is not None:
        raise ExportError(
            f"{archive_path}: the transformer embedder folds long inputs or mixes layers (max_length / last_layer_only); not exportable"
        )
    return embedder


def export_settings(model: EERTagger, reader: Any, archive_path: str) -> Dict[str, Any]:
    """The settings JSON of the export of ``model`` (read with ``reader``)."""
    if not isinstance(model, EERTagger):
        raise ExportError(f"{archive_path}: a {type(model).__name__} model; only eer_tagger models can be exported")
    if getattr(reader, "subwords", None) is None:
        raise ExportError(
            f"{archive_path}: the reader does not tokenize into subwords (model_name 'words'); not exportable"
        )
    scheme, crf = model.scheme, model.crf
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "entity_types": list(scheme.entity_types),
        "tags": list(scheme.labels),
        "allowed_transitions": crf.allowed_transitions.bool().tolist(),
        "allowed_start": crf.allowed_start.bool().tolist(),
        "allowed_end": crf.allowed_end.bool().tolist(),
        "o_cost": float(model.o_cost),
        "precision": model.precision,
        "max_length": int(reader.max_length),
        "sentence_level": bool(reader.sentence_level),
        "encoder": str(reader.model_name),
        "source_archive": os.path.basename(str(archive_path)),
    }


def export_weights(model: EERTagger, embedder: PretrainedTransformerEmbedder) -> Dict[str, torch.Tensor]:
    """The exported tensors (own copies, contiguous, on the CPU: safetensors stores no shared memory)."""
    tensors = {f"encoder.{k}": v for k, v in embedder.transformer_model.state_dict().items()}
    tensors.update(
        {
            "tag_scorer.weight": model.tag_scorer.weight,
            "tag_scorer.bias": model.tag_scorer.bias,
            "crf.transitions": model.crf.transitions,
        }
    )
    return {name: tensor.detach().cpu().contiguous().clone() for name, tensor in tensors.items()}


def check_target(directory: Path, force: bool, archive_path: Union[str, Path, None] = None) -> None:
    """:class:`ExportError` when ``directory`` must not be (re)placed: a file, a non-empty directory without
    ``force``, or (even with ``force``) the directory that holds the model being exported, ``archive_path``."""
    if archive_path is not None:
        source, target = Path(archive_path).resolve(), directory.resolve()
        if source == target or target in source.parents:
            raise ExportError(
                f"{directory}: holds the model being exported ({archive_path}); the export would replace it and "
                "delete the model; choose a new directory for the export"
            )
        if source.is_dir() and source in target.parents and target.is_dir() and any(target.iterdir()):
            raise ExportError(
                f"{directory}: part of the serialization directory being exported ({archive_path}): replacing it "
                "would damage the model; choose a directory outside it for the export"
            )
    if directory.exists() and not directory.is_dir():
        raise ExportError(f"{directory}: exists and is not a directory; choose a new directory for the export")
    above = next((parent for parent in directory.absolute().parents if parent.exists()), None)
    if above is not None and not above.is_dir():
        raise ExportError(f"{directory}: {above} is a file, not a directory; choose a new directory for the export")
    if directory.is_dir() and any(directory.iterdir()) and not force:
        raise ExportError(
            f"{directory}: exists and is not empty; choose a new directory, or pass --force to replace it"
        )


def export_model(archive_path: Union[str, Path], directory: Union[str, Path], force: bool = False) -> Dict[str, Any]:
    """Writes the export of ``archive_path`` into ``directory`` (see the module docstring); returns its settings."""
    from safetensors.torch import save_file

    directory = Path(directory)
    check_target(directory, force, archive_path)
    check_not_a_transformers_model(archive_path)
    archive = load_model_archive(archive_path)
    model, reader = archive.model, archive.validation_dataset_reader
    settings = export_settings(model, reader, str(archive_path))
    embedder = _transformer_embedder(model, str(archive_path))
    encoder = Path(settings["encoder"])
    if encoder.is_dir() and (
        encoder.resolve() == directory.resolve() or directory.resolve() in encoder.resolve().parents
    ):
        raise ExportError(
            f"{directory}: holds the encoder the model was trained with ({settings['encoder']}), which the model "
            "needs to load; choose a new directory for the export"
        )
    directory.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(temporary_name(directory))  # PID, process mark and randomness: never another run's
    shutil.rmtree(temporary, ignore_errors=True)
    try:
        temporary.mkdir()
        save_file(export_weights(model, embedder), str(temporary / WEIGHTS_FILE), metadata={"format": FORMAT})
        embedder.transformer_model.config.save_pretrained(str(temporary / ENCODER_DIRECTORY))
        reader.subwords.tokenizer.save_pretrained(str(temporary / ENCODER_DIRECTORY))
        (temporary / SETTINGS_FILE).write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
        _publish(temporary, directory)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    return settings


def _publish(temporary: Path, directory: Path) -> None:
    """Renames ``temporary`` to ``directory``; a directory already there is moved aside first, removed after."""
    old = directory.parent / f".{directory.name}.eer-old-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    if directory.exists():
        os.replace(directory, old)
    os.replace(temporary, directory)
    shutil.rmtree(old, ignore_errors=True)
