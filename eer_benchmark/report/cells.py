"""The cells of a block's tables: a block's runs (of one setting) and the finished records of one approach and
scenario among them (used by :mod:`eer_benchmark.report.blocks` and :mod:`eer_benchmark.report.reproduction`)."""


def runs_of(plan, block, setting=None) -> list:
    return [
        run for b, s, run in plan.block_entries if b is block and (s or {}).get("slug") == (setting or {}).get("slug")
    ]


def cell(report, runs, approach: str, scenario: str) -> tuple:
    """(finished records by seed, "k of n" seeds) of a block's runs of one approach and scenario."""
    mine = [r for r in runs if r.approach == approach and r.scenario_name == scenario]
    done = {r.seed: report.records[r.key] for r in mine if report.records[r.key].get("status") == "done"}
    return done, f"{len(done)} of {len(mine)}"
