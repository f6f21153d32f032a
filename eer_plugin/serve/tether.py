"""A training's processes, tied to the ``eer-ner serve`` that started them: each one ends when the server ends,
killed (``kill -9``, out of memory) or not, instead of training on as an orphan that holds the CPU and writes
into the work directory after a new server took it over.

:func:`tethered` starts ``python -m eer_plugin.serve.tether FD PID ARGS...`` in a session of its own (Ctrl-C in
the server's terminal does not reach it); that process runs ``eer-ner ARGS`` (:func:`eer_plugin.cli.main`)
after :func:`tie`, ``PID`` the server's process id and ``FD`` the reading end of a pipe whose writing end only the
server holds. The process learns that the server ended

* on Linux at once: ``prctl(PR_SET_PDEATHSIG, SIGHUP)`` has the kernel send it SIGHUP when the server's thread
  that started it ends (that thread waits for the process, so it ends with the server; the process leads a session
  without a terminal, so no other SIGHUP comes);
* on every system: a thread of it reads the pipe, which gives end-of-file as soon as the system has closed the
  server's end, however the server ended.

Either way it writes one ``eer-ner train: error: ...`` line (the form of every command's errors) to its log and kills its process group (itself and its own children) with
SIGKILL: never a ``KeyboardInterrupt``, on which AllenNLP's ``train`` would archive its best epoch so far as
``model.tar.gz``, a half-trained model that looks finished. The server's own SIGTERM
(:meth:`eer_plugin.serve.models.Trainer.stop`, when it shuts down) ends it the same way.
"""

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from typing import Any, Iterator, List, Optional, Sequence

#: the module run as the training's process (``python -m``)
MODULE = "eer_plugin.serve.tether"
#: prctl's option that asks for a signal when the parent ends (linux/prctl.h)
PR_SET_PDEATHSIG = 1
#: why the process ends: its server ended (killed or not), or stopped it (shutting down: SIGTERM)
ENDED = "the eer-ner serve that started this training (pid {parent}) ended"
STOPPED = "eer-ner serve (pid {parent}) stopped this training as it shut down"
_ending = threading.Lock()
#: the command the process runs, as its error lines name it (:func:`eer_plugin.cli.command_name`)
_command = ["eer-ner"]


@contextlib.contextmanager
def tethered(arguments: Sequence[str], **options: Any) -> Iterator[subprocess.Popen]:
    """``eer-ner ARGUMENTS`` as a process tied to this one (:class:`subprocess.Popen` ``options``: its environment
    and streams); the tie holds until the block ends, so leave it after the process ended: cut earlier, the process
    ends itself."""
    read_end, write_end = os.pipe()  # neither end is inherited, except the one passed
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", MODULE, str(read_end), str(os.getpid()), *arguments],
            pass_fds=(read_end,),
            start_new_session=True,
            **options,
        )
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    try:
        yield process
    finally:
        os.close(write_end)


def _death_signal() -> bool:
    """Asks Linux for SIGHUP when the parent ends; False where there is no ``prctl``."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGHUP), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def end(why: str) -> None:
    """Ends this process and its process group: ``why`` as an error line of its command (``eer-ner train: error:
    ...``) on stderr (the training's log), then SIGKILL."""
    if not _ending.acquire(blocking=False):  # the other way of learning it is ending the process already
        return
    with contextlib.suppress(OSError):  # os.write: no buffered stream, which a signal may have interrupted mid-write
        os.write(2, f"{_command[0]}: error: {why}; it stops unfinished, without a model.tar.gz\n".encode())
    if os.getpgrp() == os.getpid():  # the leader of its own group (tethered's new session): its children too
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


def _watch(fd: int, parent: int) -> None:
    with contextlib.suppress(OSError):
        while os.read(fd, 1):  # the server writes nothing: end-of-file when its end is closed
            pass
    end(ENDED.format(parent=parent))


def tie(fd: int, parent: int) -> None:
    """Ends this process (:func:`end`) when the process ``parent`` ends, or has ended already, or sends SIGTERM;
    ``fd``: the pipe :func:`tethered` passed."""
    ended = ENDED.format(parent=parent)
    signal.signal(signal.SIGHUP, lambda *_: end(ended))
    signal.signal(signal.SIGTERM, lambda *_: end(ended if os.getppid() != parent else STOPPED.format(parent=parent)))
    _death_signal()
    threading.Thread(target=_watch, args=(fd, parent), name="eer-serve-tether", daemon=True).start()
    if os.getppid() != parent:  # it ended before the signal was asked for
        end(ended)


def main(argv: Optional[List[str]] = None) -> int:
    """``FD PID ARGS...``: :func:`tie`, then ``eer-ner ARGS``."""
    from eer_plugin.cli import command_name
    from eer_plugin.cli import main as eer_ner

    arguments = list(sys.argv[1:] if argv is None else argv)
    _command[0] = command_name(arguments[2:])
    tie(int(arguments[0]), int(arguments[1]))

    return eer_ner(arguments[2:])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
