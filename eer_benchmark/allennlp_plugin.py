"""The benchmark's subcommands, ``eer-benchmark`` and ``eer-records``, registered with AllenNLP: importing this
module imports them. :mod:`eer_plugin.allennlp_plugin` loads it through the ``eer_ner.plugins`` entry point
(``setup.py``) when the benchmark is installed beside the product (``scripts/setup_env.sh``), so ``eer-ner
eer-benchmark``, ``allennlp eer-benchmark`` in the repository root and ``--include-package eer_plugin`` find
them; ``eer_plugin`` itself never imports the benchmark."""

from eer_benchmark.commands import benchmark, eer_records  # noqa: F401
