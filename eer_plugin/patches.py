"""Every AllenNLP internal that eer-ner replaces when the plugin is imported: the list, and the one
:func:`install` that puts them in place (called once by ``eer_plugin.allennlp_plugin``; idempotent).

Each replacement lives beside the code it serves (the archive checks in
:mod:`eer_plugin.runtime.archive`, the atomic trainer outputs in :mod:`eer_plugin.training.checkpointer`,
...); this module only lists and installs them, in the order they were always installed. It sits in
the top layer of the import graph (``tests/test_import_graph.py``): it reaches every layer that
owns a patch. ``docs/architecture.md`` shows the same table.
"""

from typing import NamedTuple, Tuple


class Patch(NamedTuple):
    replaced: Tuple[str, ...]  #: the AllenNLP (or Python) names that are replaced or wrapped
    why: str
    installer: str  #: ``module:function`` that installs it


#: one line per installer, in installation order
PATCHES: Tuple[Patch, ...] = (
    Patch(
        ("allennlp.common.params.evaluate_file", "allennlp.common.params.Params.from_file"),
        "packaged configs by name, the EER_* defaults as jsonnet variables (no os.environ writes), one-line config errors",
        "eer_plugin.runtime.config_files:install",
    ),
    Patch(
        (
            "allennlp.models.archival.archive_model",
            "allennlp.models.archive_model",
            "allennlp.commands.train.archive_model",
            "allennlp.models.archival.extracted_archive",
            "allennlp.models.archival.cached_path",
            "allennlp.models.archival._load_model",
            "allennlp.models.archival._load_dataset_readers",
            "allennlp.nn.util.read_state_dict",
            "allennlp.modules.transformer.transformer_module.read_state_dict (if loaded)",
            "allennlp.modules.token_embedders.PretrainedTransformerEmbedder.authorized_missing_keys",
        ),
        "model.tar.gz written atomically; checked extraction (no ../, links or devices); weights-only torch.load; "
        "one-line errors of a model that does not build; every missing weight reported",
        "eer_plugin.runtime.archive:install",
    ),
    Patch(
        ("sys.excepthook",),
        "an uncaught UserError is one 'PROG: error: ...' line (exit status 1), not a traceback",
        "eer_plugin.runtime.errors:install_excepthook",
    ),
    Patch(
        ("allennlp.commands.import_module_and_submodules",),
        "--include-package of a package that is not there, or that raises while imported: one line, not a traceback",
        "eer_plugin.runtime.errors:install_include_package_check",
    ),
    Patch(
        ("allennlp.data.data_loaders.multiprocess_data_loader.MultiProcessDataLoader.index_with",),
        "evaluation data with an entity type the model never saw: a clear error instead of a KeyError",
        "eer_plugin.runtime.errors:install_unknown_type_check",
    ),
    Patch(
        (
            "allennlp.training.gradient_descent_trainer.GradientDescentTrainer._save_model_state",
            "allennlp.training.gradient_descent_trainer.GradientDescentTrainer._load_model_state",
            "allennlp.training.checkpointer.Checkpointer.load_checkpoint",
            "allennlp.training.gradient_descent_trainer.GradientDescentTrainer._try_train",
            "allennlp.training.gradient_descent_trainer.hardlink_or_copy",
            "allennlp.common.util.dump_metrics",
            "allennlp.training.util.dump_metrics",
        ),
        "atomic best.th and metrics*.json; best.th and the default checkpointer's files read weights-only; a "
        "recovered run with no epoch left keeps its last epoch's metrics",
        "eer_plugin.training.checkpointer:install",
    ),
    Patch(
        ("allennlp.training.util.create_serialization_dir", "allennlp.data.Vocabulary.save_to_files"),
        "--recover checks the directory before anything is written (a damaged or missing checkpoint, config, "
        "vocabulary or best.th, a finished run: one line); a saved vocabulary is never overwritten with another; a "
        "CBL config given to train is one line pointing at cbl",
        "eer_plugin.training.recovery:install",
    ),
    Patch(
        ("allennlp.training.util.get_metrics",),
        "a run resumed inside an epoch reports that epoch's training loss and metrics over all its batches",
        "eer_plugin.training.epoch_state:install",
    ),
    Patch(
        ("allennlp.commands.train._train_worker", "allennlp.commands.train.TrainModel.finish"),
        "each worker of distributed training destroys its process group when it has trained (no SIGABRT at "
        "exit), worker 0 before its test evaluation (evaluate_on_test no longer waits forever)",
        "eer_plugin.training.distributed:install",
    ),
    Patch(
        (
            "allennlp.commands.predict._PredictManager",
            "allennlp.commands.predict._predict",
            "allennlp.commands.predict.Predict.add_subparser",
        ),
        "predict survives bad lines (error records, exit status 1), writes its output atomically, checks its "
        "arguments before loading the model, and resumes with --resume",
        "eer_plugin.commands.predict:install_predict_manager",
    ),
    Patch(
        ("allennlp.commands.evaluate.evaluate_from_args",),
        "evaluate refuses an --output-file that is one of its inputs before the model loads",
        "eer_plugin.commands.evaluate_checks:install",
    ),
    Patch(
        ("allennlp.commands.train.Train.add_subparser",),
        "train --help lists the EER_* settings and the packaged configs",
        "eer_plugin.commands.eer_settings:install",
    ),
    Patch(
        ("the 'train' subcommand (Subcommand registry, exist_ok=True)",),
        "train --ratio-estimate JSON sets rho, gamma and the binding ratio control from eer-estimate-ratio",
        "eer_plugin.commands.train (registered when imported)",
    ),
)


def install() -> None:
    """Installs every patch of :data:`PATCHES`, in order (idempotent: each installer checks its own mark)."""
    from eer_plugin.commands import eer_settings, evaluate_checks, predict, train  # noqa: F401  (train: registered on import)
    from eer_plugin.runtime import archive, config_files, errors
    from eer_plugin.training import checkpointer, distributed, epoch_state, recovery

    installers = {
        "eer_plugin.runtime.config_files:install": config_files.install,
        "eer_plugin.runtime.archive:install": archive.install,
        "eer_plugin.runtime.errors:install_excepthook": errors.install_excepthook,
        "eer_plugin.runtime.errors:install_include_package_check": errors.install_include_package_check,
        "eer_plugin.runtime.errors:install_unknown_type_check": errors.install_unknown_type_check,
        "eer_plugin.training.checkpointer:install": checkpointer.install,
        "eer_plugin.training.recovery:install": recovery.install,
        "eer_plugin.training.epoch_state:install": epoch_state.install,
        "eer_plugin.training.distributed:install": distributed.install,
        "eer_plugin.commands.predict:install_predict_manager": predict.install_predict_manager,
        "eer_plugin.commands.evaluate_checks:install": evaluate_checks.install,
        "eer_plugin.commands.eer_settings:install": eer_settings.install,
    }
    for patch in PATCHES:
        if patch.installer in installers:
            installers[patch.installer]()
