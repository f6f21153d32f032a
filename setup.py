"""Packaging for eer-ner (the ``eer_plugin`` AllenNLP plugin).

Why allennlp is NOT in install_requires
---------------------------------------
allennlp 2.10.1 / allennlp-models 2.10.1 (the last releases; AllenNLP is archived) pin torch<1.13,
transformers<4.21, spacy<3.4, protobuf<4 ... None of those pins can be installed on Python 3.11,
so pip's resolver fails if anything depends on ``allennlp``. The supported install therefore is
``bash scripts/setup_env.sh``: it installs the tested dependency set from constraints.txt first, then
``allennlp`` / ``allennlp-models`` with ``--no-deps``, and finally this package with
``pip install --no-deps -e .``. install_requires below only lists what the plugin itself imports and
pip can resolve on Python 3.11; extras add the dev/baseline/plot tools.
"""

import re
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
_init = (HERE / "eer_plugin" / "__init__.py").read_text(encoding="utf-8")
_match = re.search(r"""^__version__\s*=\s*["']([^"']+)["']""", _init, re.M)
if _match is None:
    raise RuntimeError("could not find __version__ in eer_plugin/__init__.py")
VERSION = _match.group(1)

README = HERE / "README.md"

setup(
    name="eer-ner",
    version=VERSION,
    description=(
        "AllenNLP plugin: NER taggers trained from partially annotated text with the "
        "Expected Entity Ratio loss (Effland & Collins, 2021)"
    ),
    long_description=README.read_text(encoding="utf-8") if README.exists() else "",
    long_description_content_type="text/markdown",
    # eer_benchmark: the benchmark beside the product (it imports eer_plugin, never the reverse); it registers
    # eer-benchmark and eer-records through the eer_ner.plugins entry point below
    packages=find_packages(include=["eer_plugin", "eer_plugin.*", "eer_benchmark", "eer_benchmark.*"]),
    package_data={
        "eer_plugin": ["**/*.json", "**/*.jsonnet", "**/*.libsonnet", "*.json", "*.jsonnet", "*.libsonnet"],
        "eer_benchmark": ["**/*.json"],
    },
    include_package_data=True,
    python_requires=">=3.11",
    # NOTE: no allennlp / allennlp-models here on purpose (see the module docstring).
    install_requires=[
        "torch>=2.0",
        "transformers>=4.30",
        "numpy>=1.24",
        "tqdm>=4.60",
        "safetensors>=0.4",  # the exported model (eer-export-model, Tagger.load(DIR))
    ],
    # `eer-ner`: AllenNLP's command line with the plugin registered, from any directory (eer_plugin/cli.py)
    # `eer_ner`: the spaCy pipeline component (nlp.add_pipe("eer_ner", config={"model": ...}); eer_plugin/spacy_component.py)
    entry_points={
        "console_scripts": ["eer-ner = eer_plugin.cli:main"],
        "spacy_factories": ["eer_ner = eer_plugin.spacy_component:make_eer_ner"],
        # what adds subcommands to the plugin (eer_plugin/allennlp_plugin.py loads the group): the benchmark beside
        # the product, and `eer-ner serve` (the Label Studio backend, whose app needs the `serve` extra only when it runs)
        "eer_ner.plugins": ["eer_benchmark = eer_benchmark.allennlp_plugin", "serve = eer_plugin.serve.command"],
    },
    extras_require={
        "dev": ["pytest>=8", "hypothesis>=6"],
        "baselines": ["scikit-optimize>=0.10"],
        "plots": ["matplotlib>=3.7"],
        # eer-dictionary --dictionary names.xlsx (an Excel workbook read as it is; without it: save as CSV)
        "xlsx": ["openpyxl>=3.1"],
        # `eer-ner serve`, the Label Studio ML backend (eer_plugin/serve/; pins in constraints.txt, requirements-serve.txt)
        "serve": ["fastapi>=0.110", "uvicorn>=0.27"],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3.11",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
