"""Test-only: the work a call does, counted without a clock, for the tests that bound it (a count at n and at 4n
grows about four times where the work is linear, sixteen times where it is quadratic)."""

import sys


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
