"""Import-only stand-in for torchvision (see allennlp-torchvision-stub).

allennlp 2.10.1 imports ``torchvision`` and ``torchvision.ops.boxes`` at module level
(allennlp/data/image_loader.py, allennlp/modules/vision/*) but only *uses* them in its
vision models. No real torchvision wheel on PyPI imports on the CPU build of torch 2.13,
so this stub satisfies the imports and fails loudly if vision code is actually used.
"""

__version__ = "0.0.0+stub"


def __getattr__(name):
    raise AttributeError(
        f"torchvision.{name} is unavailable: this environment has an import-only torchvision stub "
        "(allennlp-torchvision-stub); allennlp's vision components cannot be used."
    )
