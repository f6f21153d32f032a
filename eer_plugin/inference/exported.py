"""An exported model: a trained ``eer_tagger`` that runs with torch, transformers and safetensors only.

``eer-ner eer-export-model model.tar.gz DIR`` (:mod:`eer_plugin.models.export`) writes DIR:

* ``eer_tagger.json``: ``format`` (:data:`FORMAT`), ``format_version`` (:data:`FORMAT_VERSION`), the
  ``entity_types`` and the BILUO ``tags`` in the order of the tag scores, the CRF grammar
  (``allowed_transitions`` ``[from][to]``, ``allowed_start``, ``allowed_end``), the decoding cost
  ``o_cost`` (``b_O``), the encoder's ``precision``, the chunking (``max_length`` subwords per chunk with
  the bookends, ``sentence_level``), the ``encoder`` it was trained on (its name, for people) and the
  source archive;
* ``model.safetensors``: the weights, ``encoder.*`` (the transformer), ``tag_scorer.weight`` /
  ``tag_scorer.bias`` and ``crf.transitions``;
* ``encoder/``: the transformer's ``config.json`` and its tokenizer files (``save_pretrained``).

:meth:`ExportedTagger.load` reads it back without AllenNLP (nothing is downloaded, the encoder's
package is not needed) and tags exactly as the archive does: the same subword chunks
(:class:`~eer_plugin.inference.subwords.SubwordTokenizer`), the same forward (transformer in the
same precision, last hidden states, linear scores; dropout is off when tagging) and the same CRF
decoding (:class:`~eer_plugin.inference.decoding.SpanDecoder`). A directory that is not a complete
export of this format raises :class:`~eer_plugin.common.errors.ArchiveError` naming the file and the fix.
"""

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import torch

from eer_plugin.common.errors import ArchiveError, SettingError, check_cuda_device, one_line
from eer_plugin.core.crf import ConstrainedCRF
from eer_plugin.core.ranges import is_number
from eer_plugin.core.spans import Span
from eer_plugin.core.tags import BiluoScheme
from eer_plugin.corpus import strict_json
from eer_plugin.corpus.documents import Document
from eer_plugin.inference.chunking import MIN_CHUNK_LENGTH, Chunk
from eer_plugin.inference.decoding import SpanDecoder
from eer_plugin.inference.precision import check_precision, encoder_autocast, set_tagging_precision
from eer_plugin.inference.subwords import SubwordTokenizer
from eer_plugin.runtime.custom_code import ENCODER_CODE_FILES, asks_for_custom_code
from eer_plugin.runtime.encoders import EncoderError
from eer_plugin.runtime.setting_values import tagging_precision_problem

FORMAT = "eer-ner exported tagger"
FORMAT_VERSION = 1
SETTINGS_FILE = "eer_tagger.json"
WEIGHTS_FILE = "model.safetensors"
ENCODER_DIRECTORY = "encoder"
#: the fast tokenizer's file in ``encoder/`` (every export has it: the chunking needs a fast tokenizer)
TOKENIZER_FILE = "tokenizer.json"
#: the settings every export holds, with their types
SETTINGS = {
    "format": str,
    "format_version": int,
    "entity_types": list,
    "tags": list,
    "allowed_transitions": list,
    "allowed_start": list,
    "allowed_end": list,
    "o_cost": (int, float),
    "precision": str,
    "max_length": int,
    "sentence_level": bool,
    "encoder": str,
}
FIX = "export the model again with: eer-ner eer-export-model model.tar.gz DIR"


def is_export(path: Union[str, Path]) -> bool:
    """Whether ``path`` is a directory meant as an export (it holds :data:`SETTINGS_FILE` or :data:`WEIGHTS_FILE`)."""
    path = Path(path)
    return path.is_dir() and ((path / SETTINGS_FILE).exists() or (path / WEIGHTS_FILE).exists())


def check_not_a_transformers_model(path: Union[str, Path]) -> None:
    """:class:`ArchiveError` when ``path`` is a transformers model's directory (a ``config.json`` with a
    ``model_type``, as ``save_pretrained`` writes it: an encoder, not a tagger), which would otherwise be taken for
    a training run's serialization directory or an export."""
    config = Path(path) / "config.json"
    if not config.is_file():
        return
    try:
        data = strict_json.loads(config.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return  # not JSON: the loader that reads it says so
    if isinstance(data, dict) and "model_type" in data and not {"model", "dataset_reader"} & set(data):
        raise ArchiveError(
            f"{path}: the directory of a transformers model (its config.json has model_type {data['model_type']!r}), "
            "not an eer-ner tagger; load the model.tar.gz that eer-ner train wrote (or its serialization directory, or an export of "
            "it: eer-ner eer-export-model model.tar.gz DIR); an encoder is what a training starts from "
            "(EER_ENCODER)"
        )


def read_settings(directory: Path) -> Dict[str, Any]:
    """The checked settings of an export, or :class:`ArchiveError` naming the file and the fix."""
    path = directory / SETTINGS_FILE
    if not directory.exists():
        raise ArchiveError(f"{directory}: no such directory (expected an exported model's directory)")
    if not directory.is_dir():
        raise ArchiveError(
            f"{directory}: a file, not an exported model's directory; a model archive (model.tar.gz) loads with "
            f"Tagger.load({str(directory)!r}), or export it: eer-ner eer-export-model {directory} DIR"
        )
    check_not_a_transformers_model(directory)
    if not path.is_file() and (directory / "config.json").is_file():
        raise ArchiveError(
            f"{directory}: a training run's serialization directory, not an exported model; it loads with "
            f"Tagger.load({str(directory)!r}), or export it: eer-ner eer-export-model {directory} DIR"
        )
    if not path.is_file():
        raise ArchiveError(f"{path}: missing: {directory} is not a complete exported model; {FIX}")
    try:
        settings = strict_json.loads(path.read_text(encoding="utf-8"))
    except strict_json.JsonError as error:
        raise ArchiveError(
            f"{path}: not valid JSON (line {error.line}: {error}); the export is damaged; {FIX}"
        ) from None
    except (ValueError, UnicodeDecodeError, OSError) as error:
        raise ArchiveError(f"{path}: not valid JSON ({error}); the export is damaged; {FIX}") from None
    if not isinstance(settings, dict) or settings.get("format") != FORMAT:
        raise ArchiveError(f'{path}: not the settings of an exported eer-ner model (no "format": {FORMAT!r}); {FIX}')
    version = settings.get("format_version")
    if version != FORMAT_VERSION:
        raise ArchiveError(
            f"{path}: format_version {version!r}, this eer-ner reads version {FORMAT_VERSION}; {FIX} "
            "(with this version of eer-ner), or use the eer-ner version that wrote it"
        )
    for key, kind in SETTINGS.items():
        if (
            key not in settings
            or isinstance(settings[key], bool)
            and kind is not bool
            or not isinstance(settings[key], kind)
        ):
            raise ArchiveError(
                f"{path}: {key!r} is missing or not a {getattr(kind, '__name__', 'number')}; the export is damaged; {FIX}"
            )
    types = settings["entity_types"]
    try:
        if not all(isinstance(name, str) for name in types):
            raise ValueError(f"entity types must be strings: {types}")
        scheme = BiluoScheme(types)
    except ValueError as error:
        raise ArchiveError(f"{path}: 'entity_types': {error}; the export is damaged; {FIX}") from None
    if settings["tags"] != list(scheme.labels):
        raise ArchiveError(
            f"{path}: 'tags' {settings['tags']} are not the BILUO tags of {settings['entity_types']}; {FIX}"
        )
    size = len(scheme.labels)
    grammar = (settings["allowed_transitions"], settings["allowed_start"], settings["allowed_end"])
    biluo = [scheme.allowed_transitions().tolist(), scheme.allowed_start().tolist(), scheme.allowed_end().tolist()]
    if repr(list(grammar)) != repr(biluo):  # another grammar decodes tag sequences that are no spans
        raise ArchiveError(
            f"{path}: the CRF grammar (allowed_transitions, allowed_start, allowed_end) is not the BILUO grammar of "
            f"its {size} tags (true and false values, {size} x {size} and {size}, {size}); {FIX}"
        )
    numbers = [("o_cost", settings["o_cost"])] + [
        (key, settings.get(key)) for key in ("entity_ratio", "ratio_margin") if key in settings
    ]
    for key, value in numbers:
        if not is_number(value):
            raise ArchiveError(f"{path}: {key!r} is {value!r}, not a finite number: the export is damaged; {FIX}")
    if settings["max_length"] < MIN_CHUNK_LENGTH:
        raise ArchiveError(
            f"{path}: 'max_length' is {settings['max_length']}, a chunk needs at least {MIN_CHUNK_LENGTH} subwords (two bookends and a "
            f"word): the export is damaged; {FIX}"
        )
    try:
        check_precision(settings["precision"])
    except ValueError as error:
        raise ArchiveError(f"{path}: 'precision': {error}; the export is damaged; {FIX}") from None
    return settings


def check_no_custom_code(encoder_directory: Path) -> None:
    """:class:`ArchiveError` if the encoder's ``config.json`` or ``tokenizer_config.json`` asks transformers to run
    code from the directory (``auto_map``): an export holds none, and a model directory from someone else must not
    run any (transformers would ask on a terminal whether to run it)."""
    for name in ENCODER_CODE_FILES:
        path = encoder_directory / name
        try:
            data = strict_json.loads(path.read_text(encoding="utf-8"))
        except (strict_json.JsonError, ValueError, UnicodeDecodeError, OSError) as error:
            raise ArchiveError(f"{path}: not valid JSON ({error}); the export is damaged; {FIX}") from None
        if not isinstance(data, dict):
            raise ArchiveError(f"{path}: not a JSON object; the export is damaged; {FIX}")
        if asks_for_custom_code(data):
            raise ArchiveError(
                f'{path}: asks to run custom code from the model directory ("auto_map"), which eer-ner never does; '
                f"an export written by eer-ner has none: do not use a model directory of unknown origin; {FIX}"
            )


class ExportedTagger(torch.nn.Module, SpanDecoder):
    """An exported model, loaded (:meth:`load`); tags chunks like ``eer_tagger`` (:meth:`tag_chunks`)."""

    def __init__(self, settings: Dict[str, Any], encoder: torch.nn.Module, subwords: SubwordTokenizer) -> None:
        super().__init__()
        self.settings = settings
        self.scheme = BiluoScheme(settings["entity_types"])
        self.encoder = encoder
        self.tag_scorer = torch.nn.Linear(encoder.config.hidden_size, self.scheme.num_tags)
        self.crf = ConstrainedCRF(
            torch.tensor(settings["allowed_transitions"], dtype=torch.bool),
            torch.tensor(settings["allowed_start"], dtype=torch.bool),
            torch.tensor(settings["allowed_end"], dtype=torch.bool),
        )
        self.o_cost = float(settings["o_cost"])
        self.precision = settings["precision"]
        self.sentence_level = settings["sentence_level"]
        self.subwords = subwords

    @classmethod
    def load(
        cls, directory: Union[str, Path], device: Union[str, torch.device] = "cpu", precision: Optional[str] = None
    ) -> "ExportedTagger":
        """Reads an export (see the module docstring) onto ``device``, in evaluation mode; ``precision``
        (:data:`~eer_plugin.runtime.setting_values.TAGGING_PRECISIONS`, ``int8`` on the CPU) overrides the
        exported encoder precision (None: keep it)."""
        from safetensors import SafetensorError
        from safetensors.torch import load_file
        from transformers import AutoConfig, AutoModel

        problem = tagging_precision_problem(precision, device)
        if problem is not None:  # before anything is read (int8 on a GPU too)
            raise SettingError(problem)
        check_cuda_device(device, "device")
        directory = Path(directory)
        settings = read_settings(directory)
        encoder_directory = directory / ENCODER_DIRECTORY
        for name in ENCODER_CODE_FILES:
            if not (encoder_directory / name).is_file():
                raise ArchiveError(
                    f"{encoder_directory / name}: missing: the export has no encoder {name.split('.')[0]}; {FIX}"
                )
        check_no_custom_code(encoder_directory)
        weights_path = directory / WEIGHTS_FILE
        if not weights_path.is_file():
            raise ArchiveError(f"{weights_path}: missing: the export has no weights; {FIX}")
        try:
            weights = load_file(str(weights_path))
        except (SafetensorError, OSError, ValueError) as error:
            raise ArchiveError(f"{weights_path}: not a safetensors file ({one_line(error)}); {FIX}") from None
        try:
            subwords = SubwordTokenizer(str(encoder_directory), settings["encoder"], settings["max_length"])
        except Exception as error:  # noqa: BLE001  (transformers' errors of missing or edited files)
            if not (encoder_directory / TOKENIZER_FILE).is_file():  # the other files alone may rebuild it, or not
                raise ArchiveError(
                    f"{encoder_directory / TOKENIZER_FILE}: missing: the export has no tokenizer, and transformers "
                    f"cannot rebuild it from the other files ({type(error).__name__}); {FIX}"
                ) from None
            reason = error.problem if isinstance(error, EncoderError) else one_line(error)
            raise ArchiveError(
                f"{encoder_directory}: the encoder's tokenizer cannot be read ({reason}); {FIX}"
            ) from None
        try:
            config = AutoConfig.from_pretrained(str(encoder_directory), trust_remote_code=False)
            encoder = AutoModel.from_config(config, trust_remote_code=False)
        except Exception as error:  # noqa: BLE001  (transformers' errors of missing or edited files: OSError, ValueError, TypeError, ...)
            raise ArchiveError(
                f"{encoder_directory}: the encoder's config cannot be read ({one_line(error)}); {FIX}"
            ) from None
        if getattr(encoder, "pooler", None) is not None and not any(k.startswith("encoder.pooler.") for k in weights):
            encoder.pooler = None  # dropped when the model was built (eer_plugin.models.encoder_pooler)
        for name, tensor in weights.items():
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                raise ArchiveError(
                    f"{weights_path}: the weights {name!r} hold values that are not finite (NaN or inf): the export is "
                    f"damaged and would tag nothing; {FIX}"
                )
        for name in ("tag_scorer.weight", "crf.transitions"):  # both score the tags of the settings, in their order
            if name in weights and weights[name].shape[0] != len(settings["tags"]):
                raise ArchiveError(
                    f"{directory / SETTINGS_FILE}: {len(settings['tags'])} tags (entity types "
                    f"{', '.join(settings['entity_types'])}), but {weights_path} scores {weights[name].shape[0]}: the "
                    f"settings were edited or mixed with another export's; {FIX}"
                )
        model = cls(settings, encoder, subwords)
        try:
            missing, unexpected = model.load_state_dict(weights, strict=False)
        except RuntimeError as error:  # a tensor of another shape: edited config.json, or another model's weights
            raise ArchiveError(
                f"{weights_path}: the weights do not fit the encoder described by {encoder_directory / 'config.json'} "
                f"({str(error).splitlines()[-1].strip()[:200]}); the export was edited or mixed with another; {FIX}"
            ) from None
        if missing or unexpected:
            raise ArchiveError(
                f"{weights_path}: the weights do not fit the encoder of {encoder_directory} "
                f"(missing {sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]}); {FIX}"
            )
        problem = subwords.mismatch(model.encoder)
        if problem is not None:
            raise ArchiveError(f"{encoder_directory}: {problem}: the files do not go together (edited or mixed); {FIX}")
        model = model.to(device).eval()
        if precision is not None:
            set_tagging_precision(model, model.encoder, precision, model.device)
        return model

    @property
    def device(self) -> torch.device:
        return self.tag_scorer.weight.device

    def scores(self, tokens: Dict[str, torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
        """``(emissions, mask)`` of a batch (:meth:`SubwordTokenizer.tensorize`), as ``eer_tagger`` computes
        them: the transformer as AllenNLP's embedder calls it (float mask, no type ids), then the scorer in float32."""
        mask = tokens["mask"]
        with encoder_autocast(self.precision, self.device):
            hidden = self.encoder(input_ids=tokens["token_ids"], attention_mask=mask.float()).last_hidden_state
        return self.tag_scorer(hidden.float()), mask

    def chunk(self, doc: Document) -> List[Chunk]:
        """``doc`` cut into the chunks the model was trained on."""
        return self.subwords.chunk(doc, sentence_level=self.sentence_level)

    def tag_chunks(self, chunks: Sequence[Chunk]) -> List[List[Tuple[Span, float]]]:
        """Per chunk, ``((start, end, type), probability)`` of its entities (chunk word positions), one forward."""
        with torch.inference_mode():
            batch = self.subwords.tensorize(chunks, self.device)
            return self.chunk_entities(batch, [{"word_subwords": chunk.word_subwords} for chunk in chunks])

    def entity_probabilities(self, chunks: Sequence[Chunk]) -> List[List[float]]:
        """Per chunk, the CRF marginal probability that each word's first subword has an entity tag."""
        with torch.inference_mode():
            return self.chunk_entity_probabilities(
                self.subwords.tensorize(chunks, self.device), [chunk.word_subwords for chunk in chunks]
            )
