"""Errors meant for the person at the command line, and how they are shown.

Every check of this package that fails because of what the user gave it (a path that is no model
archive, an unsafe archive, data with an entity type the model does not know) raises a
:class:`UserError`. It is an AllenNLP ``ConfigurationError``, so code that catches those keeps
working (without AllenNLP, as when an exported model is loaded, it is a plain ``Exception``). Uncaught, it is printed as one line, ``error: <message>``, instead of a traceback (exit
status 1): :func:`report` is the one printer (also of Ctrl-C, a closed pipe, a full disk, input nested too
deeply, memory exhausted), used by ``eer-ner``'s ``main``, every subcommand's ``main`` and, through
:func:`install_excepthook` (called when the plugin is imported), ``sys.excepthook``; every other exception
keeps its full traceback. Set ``EER_TRACEBACK=1`` to see the traceback of these too.

One exit convention for every command: an error in the user's input is one line written by
:func:`print_error` and exit status 1 (:data:`INPUT_ERROR`); a command line that argparse cannot parse
is argparse's own usage message and status 2.
"""
import os
import re
import sys
from typing import Iterable, List, Optional

try:
    from allennlp.common.checks import ConfigurationError
except ImportError:  # an exported model used without AllenNLP (eer_plugin.inference): the same message attribute

    class ConfigurationError(Exception):  # type: ignore[no-redef]
        def __init__(self, message: str) -> None:
            super().__init__(message)
            self.message = message


from eer_plugin.corpus.documents import DocumentError


class UserError(ConfigurationError):
    """A failure caused by the user's input, explained in one line."""

    def __str__(self) -> str:  # ConfigurationError's __str__ is repr(message) (quotes and escapes)
        return str(self.message)


class ArchiveError(UserError):
    """A model archive that is missing, is no archive, or is unsafe to extract."""


class DataFileError(UserError, DocumentError):
    """A data file that is missing or cannot be read (also a ``DocumentError``, which one-shot commands catch)."""


class UnknownEntityTypeError(UserError):
    """Evaluation data with an entity type that the model was not trained on."""


def check_outputs(inputs, outputs) -> None:
    """:func:`eer_plugin.runtime.outputs.check_outputs`, its :class:`OutputError` as a :class:`UserError`."""
    from eer_plugin.runtime.outputs import OutputError, check_outputs as check

    try:
        check(inputs, outputs)
    except OutputError as error:
        raise UserError(str(error)) from None


def check_cuda_device(cuda_device, what: str = "--cuda-device") -> None:
    """:class:`UserError` unless ``cuda_device`` (an index, -1 or None for the CPU, or a ``cuda:N`` / ``cpu``
    device) is a GPU this process can use."""
    text = str(cuda_device)
    if text in ("None", "cpu") or text.lstrip("-").isdigit() and int(text) < 0:
        return
    index = int(text.split(":", 1)[1]) if text.startswith("cuda:") and text.split(":", 1)[1].isdigit() else 0 if text == "cuda" else None
    if index is None:
        if not text.lstrip("-").isdigit():
            raise UserError(f"{what} {text}: expected a GPU index (0, 1, ...) or -1 for the CPU")
        index = int(text)
    import torch

    if not torch.cuda.is_available():
        raise UserError(f"{what} {text}: no GPU is available to this process (torch finds no CUDA device); use -1 for the CPU")
    if index >= torch.cuda.device_count():
        raise UserError(f"{what} {text}: this machine has {torch.cuda.device_count()} GPU(s), numbered from 0; use one of them or -1 for the CPU")


#: the exit status of a command stopped by an error in its input (argparse's usage errors: 2)
INPUT_ERROR = 1


def print_error(error: BaseException, command: Optional[str] = None) -> None:
    """The one error printer: ``error: <message>`` (``<command>: error: <message>`` with ``command``, as
    argparse writes it) on stderr."""
    print(f"{command + ': ' if command else ''}error: {error}", file=sys.stderr)


#: the exit status after Ctrl-C (128 + SIGINT, as the shell reports a command Ctrl-C ended)
INTERRUPTED = 130
#: the exit status when stdout's reader went away (128 + SIGPIPE, as ``yes | head -1`` ends ``yes``)
BROKEN_PIPE = 141
INTERRUPTED_MESSAGE = (
    "interrupted (Ctrl-C): every output is written whole or not at all, so the files this run was writing are as "
    "they were before it (predict --output-file: run it again with --resume to continue; training: --recover)"
)


def _silence_stdout() -> None:
    """Points stdout at /dev/null, so that the interpreter's last flush of a closed pipe raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no file descriptor behind stdout
        pass


def report(error: BaseException, command: Optional[str] = None) -> Optional[int]:
    """The one error printer of every command, for what ends a command however it was started (``eer-ner``,
    a subcommand's ``main``, ``python -m``): prints the error's one line (none for a closed pipe) and returns the
    exit status, or returns None for an error that is not the user's (a bug: its traceback is shown).

    * :class:`UserError`, AllenNLP's ``ConfigurationError`` and the output policy's ``OutputError``: ``error: <message>``
      on one line, status 1;
    * Ctrl-C (``KeyboardInterrupt``): one line saying the data is safe, status 130;
    * a closed pipe (``BrokenPipeError``, ``eer-ner eer-inspect FILE | head -2``): quiet, status 141, as Unix tools;
    * a full disk or quota (``OSError`` ENOSPC / EDQUOT): the file and the reason, status 1;
    * ``RecursionError`` (input nested too deeply) and ``MemoryError`` (input too large to hold): one line, status 1.
    ``EER_TRACEBACK=1`` shows the traceback instead (None)."""
    import errno

    from eer_plugin.runtime.outputs import OutputError

    if os.environ.get("EER_TRACEBACK", "") not in ("", "0"):
        return None
    if isinstance(error, (UserError, OutputError)):
        print_error(error, command)
        return INPUT_ERROR
    if isinstance(error, ConfigurationError):  # AllenNLP's own error of a config or argument: its message, one line
        print_error(" ".join(str(getattr(error, "message", error)).split()), command)
        return INPUT_ERROR
    if isinstance(error, KeyboardInterrupt):
        print(f"\n{command + ': ' if command else ''}{INTERRUPTED_MESSAGE}", file=sys.stderr)
        return INTERRUPTED
    if isinstance(error, BrokenPipeError):
        _silence_stdout()
        return BROKEN_PIPE
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        where = f"{error.filename}: " if error.filename else ""
        print_error(f"{where}{error.strerror}: free space (or choose another disk) and run again; every output is "
                    "written whole or not at all, so no file was left half-written", command)
        return INPUT_ERROR
    if isinstance(error, RecursionError):
        print_error("the input is nested too deeply to read (arrays or objects inside each other thousands of levels "
                    "deep); it is not an eer-ner input", command)
        return INPUT_ERROR
    if isinstance(error, MemoryError):
        print_error("out of memory: an input is too large to hold (or endless, such as /dev/zero); give a regular file "
                    "of a size this machine can hold, or split it (eer-ner eer-shard)", command)
        return INPUT_ERROR
    return None


def _excepthook(previous):
    def hook(kind, value, traceback):
        if report(value) is not None:
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


def unknown_type_message(tag: str, data_path: Optional[str], known: Iterable[str]) -> str:
    where = f"{data_path}: " if data_path else ""
    known = ", ".join(known) or "none"
    return (
        f"{where}entity type {entity_type_of(tag)!r} (tag {tag!r}) is not known to the model: it was "
        f"trained on the types {known}. Evaluate on data with the model's types, or train a model on this one."
    )


def translate_label_error(error: KeyError, vocab, data_path: Optional[str]) -> Optional[UnknownEntityTypeError]:
    """The clear error for AllenNLP's ``'B-X' not found in vocab namespace 'labels'`` KeyError, or None."""
    match = _LABEL_MISS.search(str(error))
    if match is None or not match.group("namespace").endswith("labels"):
        return None
    return UnknownEntityTypeError(
        unknown_type_message(match.group("label"), data_path, known_entity_types(vocab, match.group("namespace")))
    )


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
        try:
            original(self, vocab)
        except KeyError as error:
            clear = translate_label_error(error, vocab, getattr(self, "data_path", None))
            if clear is None:
                raise
            raise clear from None

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
