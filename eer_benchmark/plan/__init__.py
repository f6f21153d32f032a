"""Plan: what a benchmark runs. The approaches, data sets and annotation scenarios, the plan language and its
checks, the expansion of a plan into runs, and the selection of runs (shards, ``--runs``, the dry run)."""
