"""The Constrained Binary Learning baseline (Mayhew et al. 2019) from a config: the rounds of
``allennlp cbl`` (:mod:`eer_plugin.commands.cbl` parses its arguments).

The config is an ordinary training config of the ``eer_tagger`` plus a top-level ``cbl`` block:
``entity_ratio`` (the target ratio ``b``; the paper used 0.2 for CBL), ``step`` (0.02),
``clip`` (0.5), ``round_epochs`` (epochs of every binary round). The rounds are counted from 1 wherever a user
sees them: round ``k`` of ``n`` is a plain AllenNLP training run in ``<serialization dir>/round_<k>`` (its data
``round_<k>_train.jsonl``); the final full-tag-set model is an ordinary serialization directory
``<serialization dir>/final`` (``final/model.tar.gz`` works with ``allennlp evaluate``/``predict`` like any other
model). ``cbl_rounds.json`` holds the plan (``planned_rounds``, ``ratio_schedule``: each round's target ratio,
``round_epochs``), written before the first round, then every round (``round``, its ``directory``, target ratio,
relabelled words, seconds) and the total wall time (written atomically, as every file of the rounds). See
:mod:`eer_plugin.annotation.cbl` for the relabelling rules. A config without a ``cbl`` block, a bad setting of it,
an ``-s`` that does not suit ``recover`` / ``force`` and a plan of more than
:data:`~eer_plugin.annotation.cbl.MAX_ROUNDS` rounds (the training data, read once, give its start) are each one line
before ``-s`` is created or anything in it removed; the run prints its plan, then each round as it starts
(``CBL round 2 of 3 (round_2): ...``).

Resume (``recover``): after every round ``cbl_state.json`` keeps the rounds done, the relabelled weights and
the log. An interrupted run continues from there: the first unfinished round (or the final tagger) goes on
from its latest epoch checkpoint (``allennlp train --recover``'s, exact), or, when its training had finished,
its archived model relabels. Every round is seeded by its own config, so the resumed run ends with the
uninterrupted one's model; the state is refused when the config (``cbl`` block, settings, data paths) or the
training data changed. A directory that holds a run is never overwritten unless ``force`` is given. After a
resume, ``total_seconds`` counts the finished rounds and this invocation, not the interrupted round's work
before the interruption (and ``final_seconds`` this invocation's part of the final tagger only). A run begun before
the rounds were counted from 1 (its directories ``round_0``, ...; its state without ``first_round``) resumes in its
own directories, its log's rounds renumbered from 1, each naming its directory (:func:`first_round_number`).
"""

import hashlib
import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import torch
from allennlp.commands.train import train_model
from allennlp.common import Params
from allennlp.data import DatasetReader

from eer_plugin.annotation import cbl
from eer_plugin.common.atomic import atomic_write_text
from eer_plugin.common.errors import UserError
from eer_plugin.common.wording import counted
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats import write_jsonl
from eer_plugin.inference.decoding import batches, tensorize_chunks
from eer_plugin.runtime.archive import load_model_archive, training_finished
from eer_plugin.runtime.config_files import packaged_configs, resolve_config

logger = logging.getLogger(__name__)

STATE = "cbl_state.json"  #: the rounds done, the weights after them and the log (what a resumed run needs)
LOG = "cbl_rounds.json"  #: the plan and the rounds, for the user
FIRST_ROUND = 1  #: the number of the first round, printed, in the log and in its directory's name


def first_round_number(out: Path, state: Optional[dict]) -> int:
    """The number in the name of the first round's directory in ``out``: :data:`FIRST_ROUND`, or 0 for a run begun
    when the directories were counted from 0 (its ``state`` has no ``first_round``; without a state, it made
    ``round_0``)."""
    if state is not None:
        return state.get("first_round", 0)
    return 0 if (out / "round_0").exists() else FIRST_ROUND


def numbered_log(log: dict) -> dict:
    """``log`` with its rounds counted from 1, each naming its directory: an older run's entries (no ``directory``)
    counted from 0, the number of their directories."""
    for entry in log["rounds"]:
        if "directory" not in entry:
            entry["directory"], entry["round"] = f"round_{entry['round']}", entry["round"] + 1
    return log


def word_entity_probabilities(model, reader, docs: List[Document], batch_size: int = 8) -> List[List[float]]:
    """``1 - p(O)`` of every word's first subword under ``model``'s CRF marginals."""
    probabilities = [[0.0] * len(d.tokens) for d in docs]
    chunks = [(d, chunk) for d, doc in enumerate(docs) for chunk in reader.chunk(doc)]
    device = next(model.parameters()).get_device()  # -1 on the CPU
    model.eval()
    with torch.no_grad():
        for part in batches(chunks, batch_size, desc="scoring training words"):
            batch = tensorize_chunks(model, reader, [chunk for _, chunk in part], device)
            emissions, mask = model.scores(batch["tokens"])
            entity = model.word_entity_probabilities(emissions, mask, [chunk.word_subwords for _, chunk in part])
            for (d, chunk), words in zip(part, entity):
                probabilities[d][chunk.word_start : chunk.word_start + len(words)] = words
    return probabilities


def check_directory(out: Path, recover: bool, force: bool) -> None:
    """A :class:`UserError` when ``out`` cannot take a new run (``force``: what is there would be replaced) or a resumed
    one; reads ``out``, changes nothing."""
    if recover and force:
        raise UserError(
            "--recover continues the run in the serialization directory and --force replaces it: give one of them"
        )
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} is a file, not a serialization directory: choose another -s")
    holds = out.is_dir() and any(out.iterdir())
    if force:
        return
    if recover and not holds:
        raise UserError(f"{out}: nothing to recover (no CBL run there); leave out --recover to start one")
    if holds and not recover:
        raise UserError(
            f"{out} already holds files (a CBL run?): add --recover to continue that run, --force to replace it, or choose a new -s directory"
        )


def prepare_directory(out: Path, recover: bool, force: bool) -> Optional[dict]:
    """Checks ``out`` for a new run (``force``: remove what is there) or a resumed one (:func:`check_directory`);
    returns the saved state of a resumed run (None: nothing finished yet, or a new run)."""
    check_directory(out, recover, force)
    if force and out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    if not recover or not (out / STATE).is_file():
        return None
    from eer_plugin.corpus import strict_json

    try:
        return strict_json.loads((out / STATE).read_text(encoding="utf-8"))
    except (strict_json.JsonError, UnicodeDecodeError) as error:
        raise UserError(
            f"{out / STATE}: the CBL state is damaged ({error}); use --force to start the run again"
        ) from None


def cbl_settings(params: Params, config: str) -> Dict[str, Any]:
    """The settings of the ``cbl`` block that :func:`run_cbl` pops from ``params`` (the config ``config``), checked
    (:func:`eer_plugin.annotation.cbl.block_settings`); a :class:`UserError` naming the config and the fix when it has
    no such block (a config of another approach, ``eer_short``, given to ``cbl``)."""
    if "cbl" not in params:
        packaged = ", ".join(name[: -len(".jsonnet")] for name in packaged_configs() if name.startswith("cbl_"))
        raise UserError(
            f"{config} has no cbl block, so it is no CBL config (cbl trains its binary relabelling rounds, then the "
            f"final tagger): give a packaged CBL config ({packaged}), or add to yours a top-level block "
            f'"cbl": {json.dumps(cbl.DEFAULTS)} (a key left out gets the value shown)'
        )
    block = params.pop("cbl")
    return cbl.block_settings(block.as_dict(quiet=True) if isinstance(block, Params) else block)


def has_checkpoint(directory: Path) -> bool:
    """Whether ``allennlp train --recover`` can continue in ``directory`` (an epoch checkpoint with both files)."""
    from eer_plugin.training.checkpointer import AtomicCheckpointer

    return directory.is_dir() and AtomicCheckpointer(str(directory)).find_latest_checkpoint() is not None


def train_or_resume(params: Params, directory: Path, include_package: List[str], resume: bool):
    """One training into ``directory``: continued from its checkpoint when ``resume`` and there is one (its
    finished model when it had finished), else from scratch."""
    if resume and training_finished(directory):
        device = params.get("trainer").get("cuda_device", -1)
        logger.info("CBL: %s finished before the interruption; using its model", directory)
        return load_model_archive(
            directory / "model.tar.gz", cuda_device=device if isinstance(device, int) else -1
        ).model
    if resume and has_checkpoint(directory):
        logger.info("CBL: continuing %s from its latest checkpoint", directory)
        return train_model(params, str(directory), include_package=include_package, recover=True)
    return train_model(params, str(directory), include_package=include_package, force=True)


def run_cbl_file(
    param_path: str,
    serialization_dir: str,
    overrides: Union[str, Dict[str, Any]] = "",
    include_package: Optional[List[str]] = None,
    recover: bool = False,
    force: bool = False,
) -> dict:
    """``allennlp cbl``: :func:`run_cbl` on the config file ``param_path`` with the ``overrides`` (JSON text, or as
    ``eer-ner cbl`` read them). ``param_path`` is a file or a packaged config by name (``cbl_bert_shortest``) from any
    directory; neither is :func:`~eer_plugin.runtime.config_files.resolve_config`'s one line."""
    params = Params.from_file(resolve_config(param_path), overrides)
    return run_cbl(params, serialization_dir, include_package or [], recover=recover, force=force, config=param_path)


def run_cbl(
    params: Params,
    serialization_dir: str,
    include_package: List[str],
    recover: bool = False,
    force: bool = False,
    config: str = "the config",
) -> dict:
    """The binary rounds, then the final tagger, into ``serialization_dir`` (new or empty; ``recover``:
    continue the interrupted run there; ``force``: replace what is there). Before anything is written or removed,
    each a :class:`UserError` line: ``params`` (the config ``config``) has a ``cbl`` block of good settings
    (:func:`cbl_settings`), ``-s`` suits ``recover`` and ``force`` (:func:`check_directory`), and the rounds
    planned from the training data (read here, once) are at most :data:`~eer_plugin.annotation.cbl.MAX_ROUNDS`
    (:func:`eer_plugin.annotation.cbl.round_plan`)."""
    out = Path(serialization_dir).resolve()  # the rounds' data paths in their configs: the same however -s is spelt
    fingerprint = hashlib.sha256(json.dumps(params.as_flat_dict(), sort_keys=True, default=str).encode()).hexdigest()
    settings = cbl_settings(params, config)
    entity_ratio, step, clip, round_epochs = (settings[key] for key in ("entity_ratio", "step", "clip", "round_epochs"))
    check_directory(out, recover, force)  # the command line's own errors before the data are read

    reader_params = params.get("dataset_reader").duplicate()
    reader: DatasetReader = DatasetReader.from_params(reader_params)
    docs = reader.read_documents(params.get("train_data_path"))  # type: ignore[attr-defined]
    weights = [[1.0] * len(d.tokens) for d in docs]  # round 0: every unannotated word is O (Raw)
    annotated = cbl.annotated_ratio(docs)
    schedule = cbl.round_plan(annotated, settings)  # a plan of too many rounds: refused before -s is touched
    state = prepare_directory(out, recover, force)
    plan = {"planned_rounds": len(schedule), "ratio_schedule": schedule, "round_epochs": round_epochs}
    log = {"entity_ratio": entity_ratio, "step": step, "clip": clip, "annotated_ratio": annotated, **plan, "rounds": []}
    done, started, first = 0, time.time(), first_round_number(out, state)
    if state is not None:  # resumed: the finished rounds' weights, log and seconds
        if state.get("config") != fingerprint or [len(row) for row in state["weights"]] != [
            len(d.tokens) for d in docs
        ]:
            raise UserError(
                f"{out / STATE}: the run there had another config, settings or training data; use --force to start again"
            )
        done, weights = state["rounds_done"], state["weights"]
        log = {**numbered_log(state["log"]), **plan}  # an older run's log gains the plan
        started -= state["seconds"]
    atomic_write_text(str(out / LOG), json.dumps(log, indent=2))  # the plan, before the first round
    # printed: under eer-ner nothing shows INFO lines before the first round's training sets up the log handlers
    rounds = f"{counted(len(schedule), 'binary round')} of {counted(round_epochs, 'epoch')}"
    print(
        f"CBL: {counted(len(docs), 'document')}, annotated ratio {annotated:.4f}: {rounds} to the ratio "
        f"{entity_ratio:g} in steps of {step:g}, then the final tagger" + (f" ({done} done)" if done else ""),
        flush=True,
    )

    def with_weights(documents, binary: bool) -> List[Document]:
        result = []
        for doc, w in zip(documents, weights):
            doc = cbl.binary(doc) if binary else doc
            result.append(Document(**{**doc.__dict__, "o_weights": w}))
        return result

    for k, target in enumerate(schedule):
        if k < done:
            continue
        round_started = time.time()
        round_dir = out / f"round_{k + first}"
        print(f"CBL round {k + 1} of {len(schedule)} ({round_dir.name}): target ratio {target:.3f}", flush=True)
        data = out / f"{round_dir.name}_train.jsonl"
        write_jsonl(with_weights(docs, binary=True), data)
        round_params = params.duplicate()
        round_params["train_data_path"] = str(data)
        round_params["dataset_reader"]["variant"] = "all"  # the variant was applied when reading
        round_params["model"]["entity_types"] = [cbl.BINARY_TYPE]
        for key in ("validation_data_path", "test_data_path", "validation_dataset_reader"):
            round_params.pop(key, None)
        round_params["evaluate_on_test"] = False
        round_params["trainer"]["num_epochs"] = round_epochs
        # a binary round is CBL's relabelling step, sized by round_epochs: the step budget
        # (EER_MIN_STEPS) applies to the final tagger, the run that is compared with the other approaches
        round_params["trainer"].pop("min_steps", None)
        round_params["trainer"].pop("patience", None)
        round_params["trainer"]["validation_metric"] = "-loss"
        model = train_or_resume(round_params, round_dir, include_package, resume=recover and k == done)
        probabilities = word_entity_probabilities(model, reader, docs)
        weights, hard = cbl.relabel(docs, probabilities, target, clip)
        entry = {
            "round": k + 1,
            "directory": round_dir.name,
            "target_ratio": target,
            "relabelled_entity_words": hard,
            "seconds": time.time() - round_started,
        }
        log["rounds"].append(entry)
        logger.info(
            "CBL round %d of %d (%s): target ratio %.3f, %d words relabelled as entities (%.0f s)",
            k + 1,
            len(schedule),
            round_dir.name,
            target,
            hard,
            entry["seconds"],
        )
        state = {
            "rounds_done": k + 1,
            "first_round": first,
            "config": fingerprint,
            "weights": weights,
            "log": log,
            "seconds": time.time() - started,
        }
        atomic_write_text(str(out / STATE), json.dumps(state))
        atomic_write_text(str(out / LOG), json.dumps(log, indent=2))

    final_started = time.time()
    data = out / "final_train.jsonl"
    write_jsonl(with_weights(docs, binary=False), data)
    params["train_data_path"] = str(data)
    params["dataset_reader"]["variant"] = "all"
    train_or_resume(params, out / "final", include_package, resume=recover and done == len(schedule))
    log["final_seconds"] = time.time() - final_started
    log["total_seconds"] = time.time() - started
    atomic_write_text(str(out / LOG), json.dumps(log, indent=2))
    print(f"CBL: {len(schedule)} binary rounds + final model in {log['total_seconds']:.0f} s -> {out / 'final'}")
    return log
