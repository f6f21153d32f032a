"""What a model path must hold before and after AllenNLP opens it, each gap one :class:`ArchiveError` line
naming the archive (never its temporary extraction directory) and the fix.

* before: the path given as the model (:func:`checked_cached_path`, wrapping ``archival.cached_path``): a
  missing path, an exported model, a folder of archives, any other folder, a run directory copied in part;
* after extraction (:func:`check_extracted`): the archive's ``config.json`` and ``vocabulary/``;
* while the model is built (:func:`checked_load`, wrapping ``archival._load_model`` and
  ``_load_dataset_readers``): a config that does not build it (another model type, an edited config), an
  encoder that is not where it was, weights that do not fit the model (a tensor missing or left over, another
  shape). AllenNLP 2.10.1 drops every missing weight from its check as soon as a module authorizes one (its
  filter keeps only keys under that module's prefix, and slices the pattern by the prefix's length), so an
  archive without ``tag_scorer.bias`` loaded with a random one: :func:`report_missing_weights` turns that
  filter off (transformers 4.43 keeps ``position_ids``, the one key it authorized, out of the state dict).
"""

import glob
import os
import re
from typing import Dict, Optional

from eer_plugin.common.errors import ArchiveError, one_line
from eer_plugin.runtime.config_overrides import override_error
from eer_plugin.runtime.encoders import EncoderError

CONFIG_NAME = "config.json"  # allennlp.models.archival.CONFIG_NAME
#: the settings file of an exported model (eer_plugin.inference.exported.SETTINGS_FILE, a layer above)
EXPORT_SETTINGS = "eer_tagger.json"
#: temporary extraction directory -> the model archive it came from (for error messages)
_EXTRACTED_FROM: Dict[str, str] = {}
USE_THE_TRAINED_ARCHIVE = "use the model.tar.gz that eer-ner train wrote"
#: the fix for a model whose encoder cannot be loaded from where its config names it
ENCODER_FIX = (
    "the encoder it was trained with (EER_ENCODER) must be where it was; or tag with an export of the model "
    "(eer-ner eer-export-model, run where the encoder is), which holds it"
)


def archive_named(directory: str) -> str:
    """The model a user gave for ``directory``: the archive it was extracted from, else ``directory`` itself."""
    return _EXTRACTED_FROM.get(str(directory), str(directory))


def check_extracted(directory: str, archive_path) -> None:
    """:class:`ArchiveError` unless the extracted archive in ``directory`` holds a config and a vocabulary."""
    if not os.path.isfile(os.path.join(directory, CONFIG_NAME)):
        raise ArchiveError(f"{archive_path}: not a model archive (no {CONFIG_NAME} in it)")
    if not os.path.isdir(os.path.join(directory, "vocabulary")):
        raise ArchiveError(
            f"{archive_path}: a model archive without its vocabulary/ (the tag set): packed by hand or damaged? "
            + USE_THE_TRAINED_ARCHIVE
        )


def _check_model_directory(path: str) -> None:
    """:class:`ArchiveError` for a directory given as the model that is no serialization directory: a folder that
    holds model archives (named, to give one of them), any other folder, or a run directory without its
    ``vocabulary/`` (copied in part)."""
    if not os.path.isfile(os.path.join(path, CONFIG_NAME)):
        archives = sorted(
            glob.glob(os.path.join(path, "model.tar.gz")) + glob.glob(os.path.join(path, "*", "model.tar.gz"))
        )
        if archives:
            shown = ", ".join(archives[:3]) + (", ..." if len(archives) > 3 else "")
            raise ArchiveError(f"{path}: a folder that holds model archives, not one model: give one of them ({shown})")
        raise ArchiveError(
            f"{path}: is a directory, not a model archive (model.tar.gz) nor a serialization directory (no "
            f"{CONFIG_NAME}) nor an exported model (no {EXPORT_SETTINGS}); give the model.tar.gz that eer-ner train wrote"
        )
    if not os.path.isdir(os.path.join(path, "vocabulary")):
        raise ArchiveError(
            f"{path}: a serialization directory without its vocabulary/ folder (copied in part?): copy the whole "
            "directory, or give its model.tar.gz"
        )


def checked_cached_path(original):
    def cached_path(url_or_filename, *args, **kwargs):
        text = str(url_or_filename)
        if "://" not in text and not os.path.exists(text):
            raise ArchiveError(f"{text}: no such file (expected a model archive, model.tar.gz)")
        if os.path.isdir(text) and os.path.isfile(os.path.join(text, EXPORT_SETTINGS)):
            raise ArchiveError(
                f"{text}: an exported model (eer-ner eer-export-model), which tags from Python only: "
                f"Tagger.load({text!r}) or the spaCy component; this command needs the model.tar.gz it was exported from"
            )
        if "://" not in text and os.path.isdir(text):
            _check_model_directory(text)
        return original(url_or_filename, *args, **kwargs)

    cached_path.eer_checked = True  # type: ignore[attr-defined]
    return cached_path


def _member_lacking(error: OSError, directory: str) -> Optional[str]:
    """The path, inside the extracted archive ``directory``, of the file whose absence ``error`` reports (AllenNLP's
    vocabulary files), or None for a file elsewhere (the encoder's)."""
    for text in (getattr(error, "filename", None), *re.findall(r"(/\S+)", str(error))):
        if text and str(text).startswith(directory.rstrip("/") + "/"):
            return os.path.relpath(str(text).rstrip("'\".,:"), directory)
    return None


def _weights_misfit(error: BaseException) -> bool:
    """Whether ``error`` is torch's or AllenNLP's refusal of weights that do not fit the model built."""
    text = str(error)
    return isinstance(error, RuntimeError) and ("Error loading state dict" in text or "size mismatch" in text)


def _archive_error(error: BaseException, part: str, serialization_dir: str, declared: str) -> ArchiveError:
    """The :class:`ArchiveError` naming the archive for ``error``, raised while its config built its ``part``."""
    where = archive_named(serialization_dir)
    if isinstance(error, EncoderError):  # the encoder directory it names is gone, or no longer a transformers model
        return ArchiveError(
            f"{where}: the encoder its {CONFIG_NAME} names, {error.name}: {error.problem}: {ENCODER_FIX}"
        )
    if isinstance(error, OSError):  # transformers' "couldn't connect to huggingface.co", AllenNLP's vocabulary files
        lacking = _member_lacking(error, serialization_dir)
        if lacking:
            return ArchiveError(
                f"{where}: a model archive (or serialization directory) without its {lacking}: packed by hand, or "
                f"copied in part? {USE_THE_TRAINED_ARCHIVE}"
            )
        return ArchiveError(
            f"{where}: the encoder its {CONFIG_NAME} names cannot be loaded ({type(error).__name__}: "
            f"{(str(error).strip().splitlines() or [''])[0][:160]}): {ENCODER_FIX}"
        )
    if _weights_misfit(error):
        return ArchiveError(
            f"{where}: its weights do not fit the model its {CONFIG_NAME} builds ({one_line(error)[:300]}): "
            f"the weights or the vocabulary of another model, or damaged; {USE_THE_TRAINED_ARCHIVE}"
        )
    reason = str(getattr(error, "message", error)).strip().splitlines()
    return ArchiveError(
        f"{where}: its {CONFIG_NAME} does not build its {part.replace('_', ' ')} (type {declared!r}; "
        f"{type(error).__name__}: {(reason[-1] if reason else '')[:160]}): an archive of another model type, or one "
        f"whose config was edited; {USE_THE_TRAINED_ARCHIVE}"
    )


def checked_load(original, part: str):
    """``archival._load_model`` / ``_load_dataset_readers`` (which every ``load_archive`` calls) turning the errors
    of a config that does not build its ``part`` (an archive of another model type, a relabelled or edited
    ``config.json``, weights of another shape, an encoder no longer where it names it) into one
    :class:`ArchiveError` naming the archive; a ``part`` that ``-o/--overrides`` changed is the overrides' error
    (:func:`eer_plugin.runtime.config_overrides.override_error`), never the archive's."""
    from allennlp.common.checks import ConfigurationError

    def load(config, *args):
        serialization_dir = str(args[1] if part == "model" else args[0])
        try:
            declared = config.as_dict(quiet=True).get(part, {}).get("type", "?")
        except Exception:  # noqa: BLE001  (only for the message)
            declared = "?"
        try:
            return original(config, *args)
        except ArchiveError:
            raise
        except Exception as error:  # noqa: BLE001  (an override's value may fail anywhere the part is built)
            blamed = override_error(config, part, error, archive_named(serialization_dir))
            if blamed is not None:
                raise blamed from None
            if not isinstance(
                error, (OSError, ConfigurationError, TypeError, KeyError, ValueError, RuntimeError, AttributeError)
            ):
                raise
            raise _archive_error(error, part, serialization_dir, declared) from None

    load.eer_checked = True  # type: ignore[attr-defined]
    return load


def report_missing_weights() -> None:
    """Makes AllenNLP's ``Model._load`` report every weight the archive lacks (see the module docstring)."""
    from allennlp.modules.token_embedders.pretrained_transformer_embedder import PretrainedTransformerEmbedder

    PretrainedTransformerEmbedder.authorized_missing_keys = None
