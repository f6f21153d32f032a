"""Test-only: the work a call does, counted without a clock, for the tests that bound it (a count at n and at 4n
grows about four times where the work is linear, sixteen times where it is quadratic): the Python lines it runs,
and the peak of the memory it allocates."""

import sys
import tracemalloc
from typing import Any, Callable, Tuple


def lines_run(function) -> int:
    """How many Python lines ``function()`` runs (the line events of a tracer; C code such as ``bisect`` counts as
    the one line that calls it)."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        count += event == "line"
        return tracer

    sys.settrace(tracer)
    try:
        function()
    finally:
        sys.settrace(None)
    return count


def peak_memory(function: Callable[..., Any], *args, **kwargs) -> Tuple[Any, int]:
    """``function(*args, **kwargs)``'s result and the peak of the memory Python allocated while it ran (bytes,
    tracemalloc)."""
    tracemalloc.start()
    try:
        result = function(*args, **kwargs)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
