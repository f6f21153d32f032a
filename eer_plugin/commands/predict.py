"""``allennlp predict`` / ``eer-ner predict``: its arguments checked before the model loads (one line each), a
``--resume`` option, and the predict manager of :mod:`eer_plugin.predictors.predict_manager` installed
(:func:`install_predict_manager`, one of the patches the plugin installs when it registers)."""

import argparse
from typing import Optional

from allennlp.commands import predict as allennlp_predict
from allennlp.common import logging as common_logging

from eer_plugin.commands.overrides import check_overrides
from eer_plugin.common.errors import UserError, check_cuda_device
from eer_plugin.corpus import strict_json
from eer_plugin.predictors.predict_manager import LineReportingPredictManager, check_arguments


def check_predictor_name(name: Optional[str]) -> None:
    """:class:`UserError` for a ``--predictor`` name that no predictor is registered under (a dotted
    ``module.Class`` path is left to AllenNLP to import)."""
    from allennlp.predictors import Predictor

    if name is None or "." in name or name in Predictor.list_available():
        return
    raise UserError(
        f"--predictor {name}: no predictor is registered under this name; the registered ones are "
        f"{', '.join(Predictor.list_available())} (eer-ner's taggers: eer_tagger)"
    )


RESUME_HELP = (
    "continue a killed run with the same input and --output-file: keep the complete lines it wrote and tag only "
    "the rest of the input (eer_tagger, JSON output)"
)


def _predictor_class(name: Optional[str]):
    """The registered predictor class ``name`` (None: no name, or one AllenNLP does not know). A predictor
    checks its own ``--predictor-args`` before the model loads when it has ``check_predictor_args(**args)``."""
    from allennlp.predictors import Predictor

    return Predictor.resolve_class_name(name)[0] if name and name in Predictor.list_available() else None


def _checked(original):
    def _predict(args: argparse.Namespace) -> None:
        resume = getattr(args, "resume", False)
        if args.silent and not args.output_file:
            raise UserError(
                "--silent without --output-file would write nothing: give --output-file FILE, or leave out --silent "
                "to write the predictions to stdout"
            )
        if resume and not args.output_file:
            raise UserError("--resume needs --output-file: the output file of the killed run to continue")
        check_arguments(args.input_file, args.output_file, args.batch_size, args.archive_file, args.weights_file)
        check_predictor_name(args.predictor)
        check_cuda_device(getattr(args, "cuda_device", -1))
        if hasattr(args, "overrides"):  # read once: load_archive takes it as it is
            args.overrides = check_overrides(args.overrides)
        check = getattr(_predictor_class(args.predictor), "check_predictor_args", None)
        if check is not None and args.predictor_args.strip():
            try:
                check(**strict_json.loads(args.predictor_args))
            except (ValueError, TypeError) as error:
                raise UserError(f"--predictor-args {args.predictor_args}: {error}") from None
        if not resume:
            original(args)
            return
        common_logging.FILE_FRIENDLY_LOGGING = args.file_friendly_logging
        predictor = allennlp_predict._get_predictor(args)
        LineReportingPredictManager(
            predictor,
            args.input_file,
            args.output_file,
            args.batch_size,
            not args.silent,
            args.use_dataset_reader,
            args.multitask_head,
            resume=True,
        ).run()

    _predict.eer_checked = True  # type: ignore[attr-defined]
    return _predict


def _with_resume(original):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        subparser = original(self, parser)
        subparser.add_argument("--resume", action="store_true", help=RESUME_HELP)
        return subparser

    add_subparser.eer_resume = True  # type: ignore[attr-defined]
    add_subparser.__wrapped__ = original  # type: ignore[attr-defined]  (AllenNLP's own options: tests/commands)
    return add_subparser


def install_predict_manager() -> None:
    """Makes ``allennlp predict`` use :class:`LineReportingPredictManager`, and checks the
    arguments of ``predict`` commands parsed after this (``eer-ner predict``) first (idempotent)."""
    if allennlp_predict._PredictManager is not LineReportingPredictManager:
        allennlp_predict._PredictManager = LineReportingPredictManager  # type: ignore[misc]
    if not getattr(allennlp_predict._predict, "eer_checked", False):
        allennlp_predict._predict = _checked(allennlp_predict._predict)
    if not getattr(allennlp_predict.Predict.add_subparser, "eer_resume", False):
        allennlp_predict.Predict.add_subparser = _with_resume(allennlp_predict.Predict.add_subparser)  # type: ignore[method-assign]
