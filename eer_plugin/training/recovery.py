"""``--recover``: what a serialization directory must hold to be continued, checked before anything in it is
written, on the one path every recovered training takes (``eer-ner train``, ``allennlp train`` with the plugin,
``train_model``, CBL's rounds, the benchmark's resumes).

AllenNLP's ``train --recover`` compares the configuration with the run's ``config.json``, writes ``config.json`` and
``meta.json`` again, builds the vocabulary from the training data and writes it over ``vocabulary/``, and only then
looks for a checkpoint: none found, it trains from the start in the old directory as if it resumed; a damaged one
is a traceback after the overwrites. :func:`install` wraps ``allennlp.training.util.create_serialization_dir`` (the
first thing every training does) with :func:`check_recovery`, which reads and changes nothing of the directory but
stops with one :class:`~eer_plugin.training.checkpoint_files.CheckpointError` line (the file, what is wrong, the
fix) when

* ``-s`` does not exist, is empty, or holds no ``config.json`` (only metrics, say: not a training's directory);
* ``config.json`` may not be read, is not JSON, or differs from this command's configuration (named: the first
  settings that differ, with both values);
* the run has finished (``model.tar.gz`` written after ``metrics.json``) and its checkpoints were removed: nothing to
  recover, nothing changed (with its last checkpoint, a finished run recovers to the same metrics and weights: a
  command repeated with ``--recover`` after it succeeded succeeds again);
* no checkpoint can be used: every one is damaged
  (:meth:`~eer_plugin.training.checkpointer.AtomicCheckpointer.newest_usable`; a damaged newer one is passed over,
  with a warning, for the newest that can be used), or there is none while the directory holds what trained epochs
  leave (``best.th``, later epochs' metrics: their checkpoints were removed, and AllenNLP would train from the start
  over them as if it resumed). A run stopped before its first checkpoint trains from the start, saying so;
* the best epoch's weights (``best.th``) are damaged or missing and cannot be restored from a checkpoint;
* a file of ``vocabulary/`` may not be read or is not text.

It also wraps ``Vocabulary.save_to_files``: a directory that already holds a vocabulary keeps it when the run's is
the same and is never overwritten with another one (:func:`vocabulary_difference`: the training data changed since
the run began, or the file is damaged; the tags of a checkpoint mean what that vocabulary says). A checkpoint that
belongs to another model is found when the model is built (the checkpointer's load).

The same wrapper refuses a CBL config given to ``train``, recovered or not
(:func:`~eer_plugin.training.settings_checks.check_not_cbl_config`).
"""

import logging
import os
from typing import Dict, Optional

from eer_plugin.common.wording import counted
from eer_plugin.runtime.archive import CONFIG_NAME, training_finished
from eer_plugin.training.checkpoint_files import START_AGAIN, CheckpointError, best_weights_source, unreadable
from eer_plugin.training.settings_checks import check_not_cbl_config

logger = logging.getLogger(__name__)

#: the subdirectory of a serialization directory that holds the vocabulary (AllenNLP's name)
VOCABULARY_DIR = "vocabulary"
#: AllenNLP's list of the namespaces without padding and unknown token, in a vocabulary directory
NON_PADDED = "non_padded_namespaces.txt"


def _shown(names) -> str:
    names = sorted(names)
    return ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")


def _read_text(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise unreadable(path, error) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CheckpointError(
            f"{path}: not UTF-8 text (byte {error.start}): the file is damaged; {_damaged_fix(path)}"
        ) from None


def _vocabulary_fix(directory: str) -> str:
    """The fix for a vocabulary directory that is not the run's: it is written again from the data."""
    return (
        f"if the training data is the one the run began with, delete {directory} (it is written again from the "
        f"data) and recover again; otherwise {START_AGAIN}"
    )


def _damaged_fix(path: str) -> str:
    """The fix for a damaged file of the run (a vocabulary file: :func:`_vocabulary_fix`)."""
    directory = os.path.dirname(path)
    if os.path.basename(directory) == VOCABULARY_DIR:
        return _vocabulary_fix(directory)
    return f"restore it, or {START_AGAIN}; nothing was changed"


def _saved_config(path: str) -> dict:
    from eer_plugin.corpus import strict_json

    try:
        config = strict_json.loads(_read_text(path))
    except strict_json.JsonError as error:
        raise CheckpointError(
            f"{path}: not the JSON the run wrote ({error}): it is damaged; {_damaged_fix(path)}"
        ) from None
    if not isinstance(config, dict):
        raise CheckpointError(f"{path}: holds a {type(config).__name__}, not a configuration; {_damaged_fix(path)}")
    return config


def _check_same_settings(params, saved: dict, path: str) -> None:
    """AllenNLP's comparison of ``params`` with the run's configuration, its differences named in one line."""
    from allennlp.common import Params

    now, then = params.as_flat_dict(), Params(saved).as_flat_dict()
    differing = sorted(key for key in set(now) | set(then) if now.get(key, "(unset)") != then.get(key, "(unset)"))
    if not differing:
        return
    shown = "; ".join(
        f"{key}: {then.get(key, '(unset)')!r} in the run, {now.get(key, '(unset)')!r} now" for key in differing[:3]
    )
    more = f" (and {counted(len(differing) - 3, 'other setting')})" if len(differing) > 3 else ""
    raise CheckpointError(
        f"{path}: the run began with other settings ({shown}{more}): recover with the config, -o overrides and "
        f"EER_* settings it began with, or {START_AGAIN}; nothing was changed"
    )


def _check_vocabulary_files(directory: str) -> Dict[str, str]:
    """``{file name: text}`` of the vocabulary directory's files (a :class:`CheckpointError` for one that may not be
    read or is not text)."""
    texts = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            texts[name] = _read_text(path)
    return texts


def _trained(name: str) -> bool:
    """Whether a file of this name in a run's directory shows that epochs were trained there: ``best.th``, the final
    metrics or archive, the metrics of any epoch but the first (whose file the trainer writes just before the first
    checkpoint: a kill in between leaves it alone)."""
    if name in ("best.th", "metrics.json", "model.tar.gz"):
        return True
    return name.startswith("metrics_epoch_") and name.endswith(".json") and name != "metrics_epoch_0.json"


def _check_nothing_trained(directory: str, names) -> None:
    """A directory without a checkpoint: one whose run stopped before its first (only its configuration, vocabulary,
    log) trains from the start, saying so (nothing is lost: the run repeats exactly); one that holds what trained
    epochs leave (their checkpoints removed) stops, since training from the start would write over it."""
    trained = sorted(name for name in names if _trained(name))
    if trained:
        raise CheckpointError(
            f"{directory}: no checkpoint to continue from (no model_state_e*_b*.th with its training_state), but "
            f"{_shown(trained)} of trained epochs: the checkpoints were removed, and --recover would train from the "
            f"start over them; {START_AGAIN}"
        )
    logger.warning(
        "%s: no checkpoint yet (the run stopped before its first one): --recover trains the run from the start",
        directory,
    )


def check_recovery(params, serialization_dir) -> None:
    """A :class:`CheckpointError` when ``serialization_dir`` cannot be continued with ``params`` (see the module
    docstring); reads the directory, changes nothing."""
    directory = str(serialization_dir)
    names = os.listdir(directory) if os.path.isdir(directory) else []
    if not names:
        state = "an empty directory" if os.path.isdir(directory) else "no such directory"
        raise CheckpointError(f"-s {directory}: {state}: there is no run to recover; leave out --recover to start one")
    config_path = os.path.join(directory, CONFIG_NAME)
    if not os.path.isfile(config_path):
        raise CheckpointError(
            f"{config_path}: missing ({directory} holds {_shown(names)}): it is not a training's serialization "
            f"directory, or the run's {CONFIG_NAME} was removed; give the run's directory, or {START_AGAIN}"
        )
    saved = _saved_config(config_path)
    _check_same_settings(params, saved, config_path)
    from eer_plugin.training.checkpointer import AtomicCheckpointer

    found = AtomicCheckpointer(directory).newest_usable(mmap=True, quiet=True)  # the load says what it passes over
    if found is None and training_finished(directory):  # with its last checkpoint, it ends again as it ended
        raise CheckpointError(
            f"{directory}: the run has finished ({os.path.join(directory, 'model.tar.gz')} is its model) and its "
            "checkpoints were removed: there is nothing to recover, and nothing was changed; to train it again, add "
            "--force instead of --recover (it replaces the directory) or train into a new directory"
        )
    if found is None:
        _check_nothing_trained(directory, names)
    else:
        model_path, _, training_state = found
        best_weights_source(directory, training_state, model_path)
    vocabulary = os.path.join(directory, VOCABULARY_DIR)
    if os.path.isdir(vocabulary):
        _check_vocabulary_files(vocabulary)


# ----------------------------------------------------------------------------------------- the vocabulary


def _tokens(vocab, namespace: str) -> list:
    return [vocab.get_token_from_index(i, namespace) for i in range(vocab.get_vocab_size(namespace))]


def vocabulary_difference(vocab, directory: str) -> Optional[str]:
    """Why the vocabulary saved in ``directory`` is not ``vocab`` (the first entry that differs, its file), or None."""
    from allennlp.data import Vocabulary

    files = _check_vocabulary_files(directory)
    if NON_PADDED not in files:
        return f"{directory}: no {NON_PADDED}, so it holds no whole vocabulary"
    try:
        saved = Vocabulary.from_files(directory, padding_token=vocab._padding_token, oov_token=vocab._oov_token)
    except Exception as error:  # noqa: BLE001  (AllenNLP's reader of a damaged directory)
        return f"{directory}: cannot be read as a vocabulary ({error})"
    for namespace in sorted(set(vocab.get_namespaces()) | set(saved.get_namespaces())):
        mine, theirs = _tokens(vocab, namespace), _tokens(saved, namespace)
        if mine == theirs:
            continue
        path = os.path.join(directory, f"{namespace}.txt")
        first = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
        there = repr(theirs[first]) if first < len(theirs) else "nothing"
        here = repr(mine[first]) if first < len(mine) else "nothing"
        return (
            f"{path}: holds another vocabulary than the training data gives now (entry {first}: {there} there, "
            f"{here} now; {counted(len(theirs), 'entry', 'entries')} there, {len(mine)} now): the data changed since the run began, or "
            "the file is damaged"
        )
    return None


def _guarded_save(original):
    def save_to_files(self, directory: str) -> None:
        if os.path.isdir(directory) and os.listdir(directory):
            problem = vocabulary_difference(self, directory)
            if problem is None:
                logger.info("%s: the vocabulary saved there is this run's; kept as it is", directory)
                return
            raise CheckpointError(f"{problem}; {_vocabulary_fix(directory)}")
        original(self, directory)

    save_to_files.eer_guarded = True  # type: ignore[attr-defined]
    save_to_files.__doc__ = original.__doc__
    return save_to_files


def _checked_serialization_dir(original):
    def create_serialization_dir(params, serialization_dir, recover: bool, force: bool) -> None:
        check_not_cbl_config(params)  # a CBL config given to train: before --force removes anything
        if recover and not force:
            check_recovery(params, serialization_dir)
        original(params, serialization_dir, recover, force)

    create_serialization_dir.eer_checked = True  # type: ignore[attr-defined]
    return create_serialization_dir


def install() -> None:
    """:func:`check_recovery` before every recovered training, and the vocabulary never overwritten with another
    (idempotent; see the module docstring)."""
    from allennlp.data import Vocabulary
    from allennlp.training import util as training_util

    if not getattr(training_util.create_serialization_dir, "eer_checked", False):
        training_util.create_serialization_dir = _checked_serialization_dir(training_util.create_serialization_dir)
    if not getattr(Vocabulary.save_to_files, "eer_guarded", False):
        Vocabulary.save_to_files = _guarded_save(Vocabulary.save_to_files)
