"""The benchmark's subcommands: ``eer-benchmark`` (:mod:`eer_benchmark.commands.benchmark`) and ``eer-records``
(:mod:`eer_benchmark.commands.eer_records`); they parse arguments and call the benchmark's layers below."""
