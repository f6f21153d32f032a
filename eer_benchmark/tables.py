"""Small helpers of the benchmark: statistics and Markdown formatting of the report, and the
atomic file writes and tolerant JSON reads of run directories."""

import json
import math
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean of a non-empty sequence."""
    return sum(values) / len(values)


def std(values: Sequence[float]) -> Optional[float]:
    """Sample standard deviation (n - 1); None for fewer than two values."""
    if len(values) < 2:
        return None
    m = mean(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def stderr(values: Sequence[float]) -> float:
    """Standard error of the mean (0 for one value)."""
    s = std(values)
    return s / math.sqrt(len(values)) if s is not None else 0.0


def points(value: Optional[float], digits: int = 1) -> str:
    """A score in [0, 1] as F1 points (x 100); "–" for None."""
    return "–" if value is None else f"{100 * value:.{digits}f}"


def duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]], align: Optional[Sequence[str]] = None) -> str:
    """A Markdown table; ``align`` holds "l", "r" or "c" per column (default: first left, others right)."""
    align = align or ["l"] + ["r"] * (len(header) - 1)
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def mean_sd_cell(values: List[float], status: Optional[Dict[str, int]]) -> str:
    """Scores as "mean ± sd" F1 points ("–" or "failed" when empty); with the cell's run status counts
    (done/failed/missing), "(k/n seeds)" when some seeds did not finish."""
    if not values:
        if status and status.get("failed"):
            return "failed"
        return "–"
    text = points(mean(values))
    spread = std(values)
    if spread is not None:
        text += f" ± {100 * spread:.1f}"
    if status is not None:
        expected = sum(status.values())
        if len(values) < expected:
            text += f" ({len(values)}/{expected} seeds)"
    return text


def read_json(path: Path) -> Optional[dict]:
    """The JSON content of ``path``, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
