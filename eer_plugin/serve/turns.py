"""Taking turns at the served model: a lock handed to its waiters in the order they asked for it.

The backend runs one model call at a time (two would only share the same cores), and holds the lock for one
model call, not for a whole request: chunking one document, tagging one batch of chunks, or their marginals
(:meth:`eer_plugin.Tagger.taking_turns`). A request of 200,000 words and a request of one short task, sent
together, then take turns call by call: the short one waits for the call that runs and for one call of each
request ahead of it, not for the long request to end (docs/label-studio.md, "Fair turns").

:class:`threading.Lock` would not do that: a thread that releases it and asks for it again at once usually gets
it back before a waiting thread wakes, so the long request would keep the model to itself. :class:`TurnLock`
hands the lock over, first come first served. When the server stops (Ctrl-C, SIGTERM) it is closed: the requests
end at their next turn (:class:`Stopping`), so the server stops after the model call under way, not after the
longest request.
"""

import collections
import threading
from typing import Deque, Optional


class Stopping(BaseException):
    """A turn asked for after :meth:`TurnLock.close`: the server is stopping. A ``BaseException``, as
    ``SystemExit``: not an error of the request, and the tagger's error wrappers (``except Exception``) let it
    through to the backend, which answers it (503)."""


class TurnLock:
    """A lock that its waiters get in the order they asked for it (FIFO); a context manager, as
    :class:`threading.Lock`. Not reentrant."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._held = False
        self._waiting: Deque[threading.Event] = collections.deque()
        self._closed: Optional[str] = None

    def acquire(self) -> None:
        """Waits for this thread's turn; :class:`Stopping` once the lock is closed, also while waiting."""
        with self._guard:
            if self._closed is not None:
                raise Stopping(self._closed)
            if not self._held:
                self._held = True
                return
            turn = threading.Event()
            self._waiting.append(turn)
        turn.wait()  # set by release(), which hands the lock over (it stays held, now by this thread), or by close()
        if self._closed is not None:
            raise Stopping(self._closed)

    def release(self) -> None:
        with self._guard:
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._held = False

    def close(self, reason: str) -> None:
        """No more turns: every waiting and later :meth:`acquire` raises :class:`Stopping` (``reason``); the holder
        ends its call."""
        with self._guard:
            self._closed = reason
            while self._waiting:
                self._waiting.popleft().set()

    def __enter__(self) -> "TurnLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
