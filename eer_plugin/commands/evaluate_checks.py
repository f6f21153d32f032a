"""``eer-ner evaluate`` under the output policy (:mod:`eer_plugin.common.outputs`): an ``--output-file``
or ``--predictions-output-file`` that is the same file as the archive, the weights or an evaluation
file (each comma-separated list split as AllenNLP splits it) is a one-line error before the model
is loaded, so ``evaluate model.tar.gz test.txt --output-file test.txt`` no longer replaces the test
data with metrics; so is an ``-o`` that is no JSON object and a ``--batch-size`` below 1. The named outputs are written whole or not at all: AllenNLP writes them under
temporary names beside them, renamed over the final names only when the evaluation finished, so a
crash or Ctrl-C mid-way leaves an earlier metrics or predictions file as it was. :func:`install` wraps ``allennlp.commands.evaluate.evaluate_from_args``, which
the ``evaluate`` subparser binds when it is built: commands parsed after the plugin is imported
(``eer-ner``) are checked."""

import argparse
import contextlib
import copy
import os
import sys
from typing import Optional

from allennlp.commands import evaluate as allennlp_evaluate

from eer_plugin.commands.overrides import check_overrides
from eer_plugin.common.errors import UserError, check_cuda_device
from eer_plugin.common.outputs import check_outputs, publish, replacing
from eer_plugin.common.wording import counted


def _files(value) -> list:
    return [path for path in (value or "").split(",") if path]


def _publish_written(temporary: str, path: str) -> None:
    if os.path.exists(temporary):
        publish(temporary, path, sync=True)


def _staged(stack: contextlib.ExitStack, value: Optional[str], named: bool) -> Optional[str]:
    """``value`` with each path replaced by a temporary one beside it (:func:`eer_plugin.common.outputs.replacing`,
    renamed over the path when ``stack`` closes without an error, else removed); ``named`` False: AllenNLP
    derives the names itself (``--auto-names``) and ``value`` is unused."""
    if not value or not named:
        return value
    return ",".join(stack.enter_context(replacing(path, _publish_written)) for path in _files(value))


def _check_counts(args: argparse.Namespace, auto_names: str) -> None:
    """:class:`UserError` unless there is an evaluation file, and one named output per evaluation file (AllenNLP
    asserted it, a traceback)."""
    data = _files(args.input_file)
    if not data:
        raise UserError(f"{args.input_file!r}: no evaluation data file; give a file, or several separated by commas")
    for what, value, derived in (
        ("--output-file", args.output_file, ("METRICS", "ALL")),
        ("--predictions-output-file", args.predictions_output_file, ("PREDS", "ALL")),
    ):
        if value and auto_names not in derived and len(_files(value)) != len(data):
            raise UserError(
                f"{what} {value}: {counted(len(_files(value)), 'file')} for {counted(len(data), 'evaluation file')}; "
                "give one per evaluation file, in the same order, separated by commas"
            )


def _checked(original):
    def evaluate_from_args(args: argparse.Namespace):
        inputs = [("the model archive", args.archive_file), ("--weights-file", args.weights_file)]
        inputs += [("the evaluation data", path) for path in _files(args.input_file)]
        outputs = [("--output-file", path) for path in _files(args.output_file)]
        outputs += [("--predictions-output-file", path) for path in _files(args.predictions_output_file)]
        check_outputs(inputs, outputs)
        check_cuda_device(args.cuda_device)
        overrides = check_overrides(args.overrides)  # read once: load_archive takes it as it is
        if args.batch_size is not None and not 1 <= args.batch_size <= sys.maxsize:  # 0 fell back to the config's
            raise UserError(f"--batch-size {args.batch_size}: give a number of instances from 1 to {sys.maxsize}")
        auto_names = getattr(args, "auto_names", None) or "NONE"
        _check_counts(args, auto_names)
        args = copy.copy(args)
        args.overrides = overrides
        with contextlib.ExitStack() as stack:
            args.output_file = _staged(stack, args.output_file, auto_names not in ("METRICS", "ALL"))
            args.predictions_output_file = _staged(
                stack, args.predictions_output_file, auto_names not in ("PREDS", "ALL")
            )
            return original(args)

    evaluate_from_args.eer_checked = True  # type: ignore[attr-defined]
    return evaluate_from_args


def install() -> None:
    """Checks the outputs of ``evaluate`` commands parsed after this (idempotent)."""
    if not getattr(allennlp_evaluate.evaluate_from_args, "eer_checked", False):
        allennlp_evaluate.evaluate_from_args = _checked(allennlp_evaluate.evaluate_from_args)
