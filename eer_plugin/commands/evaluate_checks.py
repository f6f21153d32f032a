"""``eer-ner evaluate`` under the output policy (:mod:`eer_plugin.runtime.outputs`): an ``--output-file``
or ``--predictions-output-file`` that is the same file as the archive, the weights or an evaluation
file (each comma-separated list split as AllenNLP splits it) is a one-line error before the model
is loaded, so ``evaluate model.tar.gz test.txt --output-file test.txt`` no longer replaces the test
data with metrics. :func:`install` wraps ``allennlp.commands.evaluate.evaluate_from_args``, which
the ``evaluate`` subparser binds when it is built: commands parsed after the plugin is imported
(``eer-ner``) are checked."""
import argparse

from allennlp.commands import evaluate as allennlp_evaluate

from eer_plugin.runtime.errors import check_outputs


def _files(value) -> list:
    return [path for path in (value or "").split(",") if path]


def _checked(original):
    def evaluate_from_args(args: argparse.Namespace):
        inputs = [("the model archive", args.archive_file), ("--weights-file", args.weights_file)]
        inputs += [("the evaluation data", path) for path in _files(args.input_file)]
        outputs = [("--output-file", path) for path in _files(args.output_file)]
        outputs += [("--predictions-output-file", path) for path in _files(args.predictions_output_file)]
        check_outputs(inputs, outputs)
        return original(args)

    evaluate_from_args.eer_checked = True  # type: ignore[attr-defined]
    return evaluate_from_args


def install() -> None:
    """Checks the outputs of ``evaluate`` commands parsed after this (idempotent)."""
    if not getattr(allennlp_evaluate.evaluate_from_args, "eer_checked", False):
        allennlp_evaluate.evaluate_from_args = _checked(allennlp_evaluate.evaluate_from_args)
