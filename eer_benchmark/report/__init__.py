"""Report: ``results.md`` and ``results.csv`` of a benchmark directory, their sections, tables and figures,
``docs/results.md`` and the guide (``docs/which-approach.md``), the control study's table, and block runs trained again elsewhere."""
