"""Turns at the served model: :class:`TurnLock` hands the lock over first come, first served (a thread that
releases it and asks again at once queues behind the waiting ones), and :meth:`Tagger.taking_turns` tags as the
tagger does, each model call holding the lock for that call only. The served process under load:
tests/serve/test_serve_load.py."""

import threading
import time

from eer_plugin.api import Tagger
from eer_plugin.serve.turns import TurnLock


def test_the_lock_goes_to_its_waiters_in_the_order_they_asked():
    lock, order = TurnLock(), []
    lock.acquire()

    def take(name: str) -> None:
        with lock:
            order.append(name)

    waiters = []
    for name in ("first", "second", "third"):
        waiters.append(threading.Thread(target=take, args=(name,)))
        waiters[-1].start()
        deadline = time.monotonic() + 10
        while len(lock._waiting) < len(waiters):  # queued before the next one starts
            assert time.monotonic() < deadline
            time.sleep(0.001)
    lock.release()
    for waiter in waiters:
        waiter.join(10)
    assert order == ["first", "second", "third"]


def test_a_thread_that_asks_again_at_once_queues_behind_the_waiting_one():
    lock, turns = TurnLock(), []
    lock.acquire()
    other = threading.Thread(target=lambda: (lock.acquire(), turns.append("other"), lock.release()))
    other.start()
    deadline = time.monotonic() + 10
    while not lock._waiting:
        assert time.monotonic() < deadline
        time.sleep(0.001)
    lock.release()
    lock.acquire()  # what a long request does between two model calls
    turns.append("long")
    lock.release()
    other.join(10)
    assert turns == ["other", "long"]


class CountingLock:
    """A lock that counts its turns and says whether it is held."""

    def __init__(self) -> None:
        self.turns, self.held = 0, False

    def __enter__(self) -> None:
        assert not self.held  # one model call at a time, never nested
        self.turns, self.held = self.turns + 1, True

    def __exit__(self, *exc) -> None:
        self.held = False


def test_a_tagger_taking_turns_tags_the_same_one_call_per_turn(archive):
    tagger, lock = Tagger.load(str(archive)), CountingLock()
    turns = tagger.taking_turns(lock)
    texts = ["John Smith visited New York. " * 20, "He met the mayor of London!", "Paris."]
    assert list(turns.pipe(texts, batch_size=2)) == list(tagger.pipe(texts, batch_size=2))
    tagged = lock.turns
    assert tagged > len(texts) + 2  # each document's chunking, then each batch of chunks: no turn for a whole pipe
    assert turns.rank(texts) == tagger.rank(texts) and lock.turns > tagged
    assert turns.entity_types == tagger.entity_types and not lock.held
