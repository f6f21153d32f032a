"""The simulated partial data of a benchmark (``OUTDIR/data/DATASET/DATA/seedN.jsonl`` and its
``.stats.json``): a scenario's training data, a ratio-estimate run's training data with complete
documents, an ablation's partial dev data. Each file is made once per (dataset, data, seed), written
atomically (statistics first, data last: the data file's existence means both are complete)."""

import json
import os
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

from eer_benchmark.plan.plan import Run
from eer_plugin.common.atomic import atomic_write_text
from eer_plugin.common.outputs import replacing


class SimulatedData:
    """Makes and finds the simulated data files under ``outdir / "data"``.

    Args:
        outdir: the benchmark directory.
        echo: where one line per simulated file goes.
        workdir: the statistics name the dev file relative to this directory (default: the current one).
    """

    def __init__(self, outdir: Path, echo: Callable[[str], Any] = print, workdir: Optional[Path] = None):
        self.outdir = outdir
        self.workdir = workdir or Path.cwd()
        self.echo = echo
        self.errors: Dict[Path, str] = {}  # data file -> why it could not be made (fails its runs, not the benchmark)
        self._gold_cache: Dict[tuple, list] = {}

    def path(self, dataset: str, data: str, seed: int, suffix: str = ".jsonl") -> Path:
        """The data file (``.jsonl``) or its statistics (``.stats.json``)."""
        return self.outdir / "data" / dataset / data / f"seed{seed}{suffix}"

    def make(self, needed: Dict[Path, Tuple[str, Run]]) -> None:
        """Simulates every missing file of ``needed`` (path -> (``train`` or ``dev``, a run that needs it))."""
        for path, (kind, run) in needed.items():
            if path.exists():
                continue
            label = f"{run.dataset.name}/{path.parent.name}/seed{run.seed}"
            try:
                docs, stats = self._simulate(kind, run)
                self._write(path, docs, stats)
                self.echo(
                    f"simulated {label}: recall {stats['recall']:.3f}, precision {stats['precision']:.3f}, "
                    f"{stats['kept_spans']} spans in {stats['documents_touched']} documents"
                    + (f", {stats['complete_documents']} of them complete" if "complete_documents" in stats else "")
                )
            except Exception as err:  # noqa: BLE001 - a failed simulation fails its runs, not the benchmark
                self.errors[path] = f"simulating {label} failed: {err}"
                self.echo(self.errors[path])

    def _gold(self, path: str, dataset) -> list:
        """The gold documents of one of ``dataset``'s files, read with the entry's reader options."""
        from eer_plugin.corpus.formats import read_documents

        key = (path, dataset.reader)
        if key not in self._gold_cache:
            self._gold_cache[key] = read_documents(path, **dataset.read_options())
        return self._gold_cache[key]

    def _simulate(self, kind: str, run: Run) -> Tuple[list, dict]:
        """(documents, statistics) of one simulated data file of ``run`` (``kind``: train or dev)."""
        from eer_plugin.annotation import simulators

        scenario = run.scenario
        common = dict(scenario=scenario.name, type=scenario.type, params=dict(scenario.params), seed=run.seed)
        if kind == "dev":
            p = dict(run.dev)
            dev = self._gold(run.dataset.dev, run.dataset)
            budget = p["budget"]
            extra: Dict[str, Any] = {}
            if budget == "proportional":
                dev_tokens = sum(len(d.tokens) for d in dev)
                train_tokens = sum(len(d.tokens) for d in self._gold(run.dataset.train, run.dataset))
                budget = max(1, round(scenario.get("budget") * dev_tokens / train_tokens))
                extra = {
                    "proportional_to": scenario.get("budget"),
                    "dev_tokens": dev_tokens,
                    "train_tokens": train_tokens,
                }
            docs, stats = simulators.exploratory_expert(
                dev, budget, p["keep_probability"], p["max_per_document"], run.seed
            )
            shown = os.path.relpath(
                run.dataset.dev, self.workdir
            )  # the statistics are kept in docs/: no path of this machine
            return docs, dict(stats, **common, data="dev", file=shown, budget=budget, dev_params=p, **extra)
        gold = self._gold(run.dataset.train, run.dataset)
        if run.complete_documents is not None:
            docs, stats = scenario.simulate_with_complete_documents(gold, run.seed, run.complete_documents)
        else:
            docs, stats = scenario.simulate(gold, run.seed)
        return docs, dict(stats, **common)

    def _write(self, path: Path, docs: list, stats: dict) -> None:
        from eer_plugin.corpus.formats import write_jsonl

        path.parent.mkdir(parents=True, exist_ok=True)
        with replacing(str(path)) as temporary:  # the data appears last, after its statistics; on an error, nothing
            write_jsonl(docs, temporary)
            atomic_write_text(path.with_suffix(".stats.json"), json.dumps(stats, indent=1))
