"""The runtime's user errors and the AllenNLP-facing error handling: the one-line excepthook, the unknown
entity type check (the root, :class:`~eer_plugin.common.errors.UserError`, and the printer are
:mod:`eer_plugin.common.errors`).

Uncaught, a :class:`UserError` is printed as one line, ``PROG: error: <message>``, instead of a traceback (exit
status 1), ``PROG`` the command as argparse names it in its usage errors (``allennlp train``, ``allennlp
evaluate``: :func:`running_command`): :func:`install_excepthook` (installed with the AllenNLP patches, :mod:`eer_plugin.patches`) wraps
``sys.excepthook`` with :func:`eer_plugin.common.errors.report`, the one printer (also of Ctrl-C, a closed pipe, a
full disk, input nested too deeply, memory exhausted); every other exception keeps its full traceback. Set
``EER_TRACEBACK=1`` to see the traceback of these too.
"""

import logging
import re
import sys
from typing import Iterable, List, Optional

from eer_plugin.common.errors import (  # noqa: F401  (report: the one printer)
    UserError,
    command_name,
    one_line,
    print_error,
    report,
)


class UnknownEntityTypeError(UserError):
    """Evaluation data with an entity type that the model was not trained on."""


def running_command() -> str:
    """The command this process runs, as argparse names it: ``allennlp train`` for ``allennlp train ...`` (its
    second argument an AllenNLP subcommand: the plugin's, ``train``, ``evaluate``, ``predict``, ...), else the
    program (a script: ``tag.py``)."""
    registry = sys.modules.get("allennlp.commands.subcommand")  # imported already where a subcommand runs
    commands = registry.Subcommand.list_available() if registry is not None else ()
    return command_name(commands)


def _excepthook(previous):
    def hook(kind, value, traceback):
        if report(value, running_command()) is not None:
            return  # the interpreter then exits with status 1 (the statuses of report() need eer-ner's main)
        previous(kind, value, traceback)

    hook.eer_user_errors = True  # type: ignore[attr-defined]
    return hook


def install_excepthook() -> None:
    """Prints an uncaught error that :func:`report` knows (a :class:`UserError`, Ctrl-C, a closed pipe, a full
    disk, ...) as its one line instead of a traceback (idempotent)."""
    if not getattr(sys.excepthook, "eer_user_errors", False):
        sys.excepthook = _excepthook(sys.excepthook)


# --------------------------------------------------------------------------- unknown entity types

_LABEL_MISS = re.compile(r"'(?P<label>[^']*)' not found in vocab namespace '(?P<namespace>[^']*)'")


def entity_type_of(tag: str) -> str:
    """``B-PER`` -> ``PER`` (any of the BIO/BIOUL/IOB1 prefixes); other strings unchanged."""
    return tag[2:] if len(tag) > 2 and tag[1] == "-" and tag[0] in "BIOULES" else tag


def known_entity_types(vocab, namespace: str = "labels") -> list:
    tags = vocab.get_token_to_index_vocabulary(namespace)
    return sorted({entity_type_of(t) for t in tags if t != "O" and entity_type_of(t) != t})


#: the tag of a word a partial document leaves unannotated (``inference.chunking.LATENT_LABEL``, a layer above)
UNANNOTATED = "_"


def unknown_type_message(tag: str, data_path: Optional[str], known: Iterable[str]) -> str:
    where = f"{data_path}: " if data_path else ""
    if tag == UNANNOTATED:
        return (
            f"{where}a partially annotated document (not marked is_complete: its unannotated words are tagged "
            f"{UNANNOTATED!r}), and this model was trained on complete data only, so it has no such tag: evaluate it "
            'on complete documents (gold CoNLL or OntoNotes, or JSON lines with "is_complete": true)'
        )
    known = ", ".join(known) or "none"
    return (
        f"{where}entity type {entity_type_of(tag)!r} (tag {tag!r}) is not known to the model: it was "
        f"trained on the types {known}. Evaluate on data with the model's types, or train a model on this one."
    )


def first_source(reader, data_path: Optional[str], entity_type: str) -> Optional[str]:
    """``file:line`` of the first document of ``data_path`` (read with ``reader``'s ``iter_documents``) with an
    entity of ``entity_type``; None when the reader cannot tell."""
    documents = getattr(reader, "iter_documents", None)
    if documents is None or not data_path:
        return None
    try:
        for doc in documents(data_path):
            if entity_type == UNANNOTATED and not doc.is_complete or any(span[2] == entity_type for span in doc.spans):
                return getattr(doc, "source", None)
    except Exception:  # noqa: BLE001  (only for the message: the file was read once already)
        return None
    return None


def translate_label_error(
    error: KeyError, vocab, data_path: Optional[str], reader=None
) -> Optional[UnknownEntityTypeError]:
    """The clear error for AllenNLP's ``'B-X' not found in vocab namespace 'labels'`` KeyError (naming the line
    of the first document with that type when ``reader`` reads ``data_path`` again), or None."""
    match = _LABEL_MISS.search(str(error))
    if match is None or not match.group("namespace").endswith("labels"):
        return None
    tag = match.group("label")
    where = first_source(reader, data_path, entity_type_of(tag)) or data_path
    return UnknownEntityTypeError(unknown_type_message(tag, where, known_entity_types(vocab, match.group("namespace"))))


class _LabelMissLines(logging.Filter):
    """Drops the two lines AllenNLP's vocabulary logs before the ``KeyError`` of a label it lacks (``Namespace:
    labels``, ``Token: U-ORG``): the error itself is one line naming the type, the file and its line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg not in ("Namespace: %s", "Token: %s")


def install_unknown_type_check() -> None:
    """AllenNLP's data loader indexes evaluation data with the model's vocabulary (``allennlp
    evaluate``); a tag the model never saw is a raw ``KeyError`` there. This wraps
    ``MultiProcessDataLoader.index_with`` to turn it into an :class:`UnknownEntityTypeError` naming
    the type and the file (idempotent)."""
    from allennlp.data.data_loaders.multiprocess_data_loader import MultiProcessDataLoader

    original = MultiProcessDataLoader.index_with
    if getattr(original, "eer_checked", False):
        return

    def index_with(self, vocab) -> None:
        quiet, logger = _LabelMissLines(), logging.getLogger("allennlp.data.vocabulary")
        logger.addFilter(quiet)
        try:
            original(self, vocab)
        except KeyError as error:
            clear = translate_label_error(error, vocab, getattr(self, "data_path", None), getattr(self, "reader", None))
            if clear is None:
                raise
            raise clear from None
        finally:
            logger.removeFilter(quiet)

    index_with.eer_checked = True  # type: ignore[attr-defined]
    index_with.__doc__ = original.__doc__
    MultiProcessDataLoader.index_with = index_with


def model_entity_types(model) -> Optional[List[str]]:
    """The entity types a loaded ``eer_tagger`` / ``sns_tagger`` predicts (None if unknown)."""
    types = getattr(model, "entity_types", None)
    if types is None and getattr(model, "scheme", None) is not None:
        types = getattr(model.scheme, "entity_types", None)
    return list(types) if types is not None else None


def check_entity_types(model, docs, data_path: str) -> None:
    """:class:`UnknownEntityTypeError` if a document of ``data_path`` has an entity of a type the
    model was not trained on (its F1 would silently count every such entity as missed)."""
    known = model_entity_types(model)
    if known is None:
        return
    for doc in docs:
        for span in doc.spans:
            if span[2] not in known:
                where = f"{doc.source}" if getattr(doc, "source", None) else f"{data_path} (document {doc.id!r})"
                raise UnknownEntityTypeError(
                    f"{where}: entity type {span[2]!r} is not known to the model: it was trained on the types "
                    f"{', '.join(known)}. Evaluate on data with the model's types, or train a model on this one."
                )


def check_unannotated_tag(model, docs, data_path: str) -> None:
    """:class:`UnknownEntityTypeError` naming the first partially annotated document of ``data_path`` (file and
    line) when the model has no tag for an unannotated word (trained on complete data only): the data loader
    would fail on it with a ``KeyError``."""
    labels = model.vocab.get_token_to_index_vocabulary(getattr(model, "label_namespace", "labels"))
    if UNANNOTATED in labels:
        return
    for doc in docs:
        if not doc.is_complete:
            where = doc.source or f"{data_path} (document {doc.id!r})"
            raise UnknownEntityTypeError(unknown_type_message(UNANNOTATED, where, []))


# --------------------------------------------------------------------------- --include-package


def _where_it_failed(error: BaseException) -> str:
    """`` (FILE:LINE)`` of the innermost frame of ``error`` outside Python's import machinery, or ``""``."""
    import traceback

    if isinstance(error, SyntaxError) and error.filename:  # raised by the parser, not by a frame of the module
        return f" ({error.filename}:{error.lineno})"
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith("<frozen")]
    return f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def include_package_error(package: str, error: BaseException) -> UserError:
    """The one line for ``--include-package PACKAGE`` that cannot be imported: not found (named with where Python
    looked), a module it imports that is not installed, or an error its code raised while it was imported."""
    if isinstance(error, ModuleNotFoundError) and error.name and (package + ".").startswith(error.name + "."):
        return UserError(
            f"--include-package {package}: no module named {error.name!r} in this Python ({sys.executable}; the "
            "working directory is searched too): check the name, or install the package that holds it"
        )
    if isinstance(error, ModuleNotFoundError):
        return UserError(
            f"--include-package {package}: importing it failed: it imports {error.name!r}, which is not "
            f"installed{_where_it_failed(error)}: install it, or leave out --include-package {package}"
        )
    reason = (one_line(error) or "no message")[:300]
    return UserError(
        f"--include-package {package}: importing it failed with {type(error).__name__}: {reason}"
        f"{_where_it_failed(error)}: fix that module, or leave out --include-package {package} (EER_TRACEBACK=1 "
        "shows the traceback)"
    )


def install_include_package_check() -> None:
    """AllenNLP's ``main`` imports each ``--include-package`` of any subcommand; a package that is not there, or that
    raises while it is imported, was a traceback. This wraps the function its loop calls
    (``allennlp.commands.import_module_and_submodules``) to make either one :class:`UserError` line naming the
    option (idempotent)."""
    from allennlp import commands

    original = commands.import_module_and_submodules
    if getattr(original, "eer_checked", False):
        return

    def import_module_and_submodules(package_name: str, *args, **kwargs) -> None:
        try:
            original(package_name, *args, **kwargs)
        except (UserError, KeyboardInterrupt, SystemExit):
            raise
        except Exception as error:  # noqa: BLE001  (whatever the package's code raises while it is imported)
            raise include_package_error(package_name, error) from None

    import_module_and_submodules.eer_checked = True  # type: ignore[attr-defined]
    import_module_and_submodules.__doc__ = original.__doc__
    commands.import_module_and_submodules = import_module_and_submodules
