"""The root of eer-ner's user errors and how one is shown (no AllenNLP, no other eer-ner module).

Every check that fails because of what the user gave it raises a :class:`UserError` (or a kind of it:
:class:`ArchiveError` and :class:`SettingError` here, the corpus's ``DataFileError``, the output policy's ``OutputError``, the
runtime's ``UnknownEntityTypeError``). One exit convention for every command: an error in the user's input
is one line written by :func:`print_error` and exit status 1 (:data:`INPUT_ERROR`); a command line that
argparse cannot parse is argparse's own usage message and status 2. Uncaught, a :class:`UserError` is
printed the same way by the excepthook that the AllenNLP plugin installs
(:func:`eer_plugin.runtime.errors.install_excepthook`).

One form for every line that ends a command, argparse's: the command as argparse names it in its usage errors
(its ``prog``: ``eer-ner eer-split``, ``allennlp train``, ``python -m eer_plugin.commands.simulate``), then
``error: <message>`` for an error (``eer-ner eer-split: error: data.jsonl: no such file ...``, beside argparse's
``eer-ner eer-split: error: unrecognized arguments: --bogus``), or how it was stopped
(``eer-ner train: interrupted (Ctrl-C): ...``); a closed pipe ends quietly. :func:`command_name` names the
running command where no parser said it.
"""

import os
import re
import signal
import sys
from typing import Collection, Optional

from eer_plugin.common.wording import counted

#: the exit status of a command stopped by an error in its input (argparse's usage errors: 2)
INPUT_ERROR = 1


class UserError(Exception):
    """A failure caused by the user's input, explained in one line (``message``, also its ``str``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return str(self.message)


class SettingError(UserError, ValueError):
    """A setting that cannot work: a constructor argument that a config, an ``-o`` override or an ``EER_*`` variable
    gives (``model.ratio_control: 'foo'``, ``EER_MAX_LENGTH=2``), refused by the class that takes it. Printed as one
    line like every :class:`UserError` (not a traceback from inside AllenNLP's ``from_params``); still a
    ``ValueError`` for the code that calls the class directly."""


class ArchiveError(UserError):
    """A model archive (or exported model directory) that is missing, is no archive, or is unsafe to extract."""


def relative_paths_hint(path=None) -> str:
    """`` (relative paths start in CWD)`` for a message about a path not found, unless ``path`` is absolute
    (where the hint would say nothing)."""
    if path is not None and os.path.isabs(os.fspath(path)):
        return ""
    return f" (relative paths start in {os.getcwd()})"


#: the longest message :func:`shortened` leaves whole (a few lines of a terminal)
MESSAGE_LIMIT = 1000


def shortened(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """``message`` whole, or if longer than ``limit`` its start and end around a note of what was left out: an
    error quoting a value from the input (a 50 MB line without a line break, a 1 MB key or type) stays a line
    that names the file, the line and the fix, not the whole value."""
    if len(message) <= limit:
        return message
    head, tail = limit * 2 // 3, limit // 3
    left_out = len(message) - head - tail
    return f"{message[:head]} ... ({counted(left_out, 'character')} left out) ... {message[-tail:]}"


def one_line(text) -> str:
    """``text`` (another library's error message: a C++ trace, a JSON excerpt) as one line, its runs of white space
    one space each, so that an error quoting it stays one line of stderr or of an error record."""
    return " ".join(str(text).split())


#: characters a message must not print as they are: control characters (C0, DEL, C1: a line break, a carriage return
#: or an ANSI escape in a file name would break the one line or recolour the terminal), the line and paragraph
#: separators, and the bidirectional embeddings, overrides and isolates (they would reorder what the line shows)
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text) -> str:
    """``text`` (a message naming a file or quoting the input) with each character of :data:`_UNPRINTABLE` written
    as its Python escape (``\\n``, ``\\x1b``, ``\\u202e``), so that whatever a file name or a value holds, the
    message prints as one line that shows what is there; every other character (letters of any script) stays."""
    return _UNPRINTABLE.sub(lambda match: repr(match.group())[1:-1], str(text))


def print_warning(message: str) -> None:
    """The one warning printer of the commands: ``warning: <message>`` on stderr, :func:`printable`."""
    print(f"warning: {printable(message)}", file=sys.stderr)


def command_name(commands: Collection[str] = ()) -> str:
    """The running command as argparse names it in its usage errors: the program, argparse's own default ``prog``
    (the file name of ``sys.argv[0]``: ``allennlp``, ``tag.py``), then ``sys.argv[1]`` when that is one of its
    subcommands ``commands`` (``allennlp train``)."""
    import argparse

    program = argparse.ArgumentParser(add_help=False).prog or "python"
    return f"{program} {sys.argv[1]}" if len(sys.argv) > 1 and sys.argv[1] in commands else program


def print_error(error: BaseException, command: Optional[str] = None) -> None:
    """The one error printer: ``<command>: error: <message>`` on stderr, as argparse writes its usage errors,
    :func:`printable` and :func:`shortened`; ``command``: the command as its parser names it (``eer-ner eer-split``), the program
    (:func:`command_name`) unless given."""
    print(f"{command or command_name()}: error: {shortened(printable(error))}", file=sys.stderr)


def check_cuda_device(cuda_device, what: str = "--cuda-device") -> None:
    """:class:`UserError` unless ``cuda_device`` (an index, -1 or None for the CPU, or a ``cuda:N`` / ``cpu``
    device) is a GPU this process can use."""
    text = str(cuda_device)
    if text in ("None", "cpu") or text.lstrip("-").isdigit() and int(text) < 0:
        return
    index = (
        int(text.split(":", 1)[1])
        if text.startswith("cuda:") and text.split(":", 1)[1].isdigit()
        else 0
        if text == "cuda"
        else None
    )
    if index is None:
        if not text.lstrip("-").isdigit():
            raise UserError(f"{what} {text}: expected a GPU index (0, 1, ...) or -1 for the CPU")
        index = int(text)
    import torch

    if not torch.cuda.is_available():
        raise UserError(
            f"{what} {text}: no GPU is available to this process (torch finds no CUDA device); use -1 for the CPU"
        )
    if index >= torch.cuda.device_count():
        raise UserError(
            f"{what} {text}: this machine has {counted(torch.cuda.device_count(), 'GPU')}, numbered from 0; use one of them or -1 for the CPU"
        )


#: the exit status after Ctrl-C (128 + SIGINT, as the shell reports a command Ctrl-C ended)
INTERRUPTED = 130
#: the exit status when stdout's reader went away (128 + SIGPIPE, as ``yes | head -1`` ends ``yes``)
BROKEN_PIPE = 141
#: what every stopped command says after how it was stopped: nothing of what it was writing is left half-written
SAFE_OUTPUTS = (
    "every output is written whole or not at all, so the files this run was writing are as they were before it "
    "(predict --output-file: run it again with --resume to continue; training: --recover)"
)
INTERRUPTED_MESSAGE = f"interrupted (Ctrl-C): {SAFE_OUTPUTS}"
#: the exit status after SIGTERM (128 + SIGTERM, as the shell reports a command ``kill`` ended)
TERMINATED = 143
#: the signals that stop a command as Ctrl-C does (:func:`terminate_as_interrupt`), by number: their name and
#: what stopped it (SIGTERM: ``kill``, ``timeout``, a job scheduler's cancel; SIGHUP: the terminal or the ssh
#: session closed)
STOPPING_SIGNALS = {signal.SIGTERM: ("SIGTERM", "terminated"), signal.SIGHUP: ("SIGHUP", "hung up")}


class Terminated(KeyboardInterrupt):
    """A signal of :data:`STOPPING_SIGNALS` (SIGTERM by default) as an exception (:func:`terminate_as_interrupt`):
    the command stops as after Ctrl-C, its temporary files removed and its outputs as they were; exit status
    128 + the signal's number."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def message(self) -> str:
        name, what = STOPPING_SIGNALS.get(self.signum, (f"signal {self.signum}", "stopped"))
        return f"{what} ({name}): {SAFE_OUTPUTS}"


def _raise_terminated(signum, frame) -> None:
    raise Terminated(signum)


def terminate_as_interrupt() -> None:
    """Makes SIGTERM and SIGHUP raise :class:`Terminated` in this process (from its main thread; elsewhere nothing
    changes), so that a stopped command removes what it was writing instead of leaving a hidden temporary file and
    says so in one line; the one way every command (``eer-ner``, a subcommand's ``main``) is set up for them. A
    signal this process was started ignoring (``nohup`` ignores SIGHUP) stays ignored, and one that already has a
    handler keeps it (a training tied to ``eer-ner serve``, :mod:`eer_plugin.serve.tether`, must be killed, never
    interrupted into a half-trained ``model.tar.gz``)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    for signum in STOPPING_SIGNALS:
        if signal.getsignal(signum) is signal.SIG_DFL:  # ignored (nohup) or handled already: theirs to decide
            signal.signal(signum, _raise_terminated)


def _is_allennlp_sigterm(error: BaseException) -> bool:
    """AllenNLP's ``SigTermReceived``, raised by the SIGTERM handler of the ``allennlp`` command (by name: this
    layer imports no AllenNLP)."""
    return type(error).__name__ == "SigTermReceived" and type(error).__module__.startswith("allennlp")


def _silence_stdout() -> None:
    """Points stdout at /dev/null, so that the interpreter's last flush of a closed pipe raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no file descriptor behind stdout
        pass


def _is_allennlp_configuration_error(error: BaseException) -> bool:
    """AllenNLP's ``ConfigurationError`` (recognised by name and module: this layer imports no AllenNLP)."""
    return any(c.__name__ == "ConfigurationError" and c.__module__.startswith("allennlp") for c in type(error).__mro__)


def report(error: BaseException, command: Optional[str] = None) -> Optional[int]:
    """The one error printer of every command, for what ends a command however it was started (``eer-ner``,
    a subcommand's ``main``, ``python -m``): prints the error's one line (none for a closed pipe) and returns the
    exit status, or returns None for an error that is not the user's (a bug: its traceback is shown).

    Each line starts with ``command`` (the program, :func:`command_name`, unless given), as argparse's usage errors:

    * :class:`UserError` (the output policy's ``OutputError`` is one) and AllenNLP's ``ConfigurationError``:
      ``<command>: error: <message>`` on one line, status 1;
    * Ctrl-C (``KeyboardInterrupt``): one line saying the data is safe, ``<command>: interrupted (Ctrl-C): ...``
      (no ``error:``: nothing in the input was wrong), status 130; SIGTERM or SIGHUP in a command
      that :func:`terminate_as_interrupt` set up (:class:`Terminated`, or AllenNLP's ``SigTermReceived`` of the
      ``allennlp`` command): the same, status 143 (129 after SIGHUP);
    * a closed pipe (``BrokenPipeError``, ``eer-ner eer-inspect FILE | head -2``): quiet, status 141, as Unix tools;
    * a full disk or quota (``OSError`` ENOSPC / EDQUOT): the file and the reason, status 1;
    * ``RecursionError`` (input nested too deeply) and ``MemoryError`` (input too large to hold): one line, status 1.
    ``EER_TRACEBACK=1`` shows the traceback instead (None)."""
    import errno

    if os.environ.get("EER_TRACEBACK", "") not in ("", "0"):
        return None
    command = command or command_name()
    if isinstance(error, UserError):
        print_error(error, command)
        return INPUT_ERROR
    if _is_allennlp_configuration_error(error):  # AllenNLP's own error of a config or argument: one line
        print_error(one_line(getattr(error, "message", error)), command)
        return INPUT_ERROR
    if isinstance(error, Terminated) or _is_allennlp_sigterm(error):
        signum = getattr(error, "signum", signal.SIGTERM)
        print(f"{command}: {Terminated(signum).message}", file=sys.stderr)
        return 128 + signum
    if isinstance(error, KeyboardInterrupt):
        print(f"\n{command}: {INTERRUPTED_MESSAGE}", file=sys.stderr)
        return INTERRUPTED
    if isinstance(error, BrokenPipeError):
        _silence_stdout()
        return BROKEN_PIPE
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        where = f"{error.filename}: " if error.filename else ""
        print_error(
            f"{where}{error.strerror}: free space (or choose another disk) and run again; every output is "
            "written whole or not at all, so no file was left half-written",
            command,
        )
        return INPUT_ERROR
    if isinstance(error, RecursionError):
        print_error(
            "the input is nested too deeply to read (arrays or objects inside each other thousands of levels "
            "deep); it is not an eer-ner input",
            command,
        )
        return INPUT_ERROR
    if isinstance(error, MemoryError):
        print_error(
            "out of memory: an input is too large to hold (or endless, such as /dev/zero); give a regular file "
            "of a size this machine can hold, or split it (eer-ner eer-shard)",
            command,
        )
        return INPUT_ERROR
    return None
