"""The benchmark's tests (``eer_benchmark``) share the product tests' fixtures and helpers: ``tests/conftest.py``
(the tiny encoder, the fixture data's environment, the logging reset) is loaded here under its own name, and
``tests/`` is on the path for the helper modules (``untrained_tagger``, ``oracles``)."""

import importlib.util
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
_spec = importlib.util.spec_from_file_location("eer_product_conftest", TESTS / "conftest.py")
_product = sys.modules.get("eer_product_conftest")
if _product is None:
    _product = importlib.util.module_from_spec(_spec)
    sys.modules["eer_product_conftest"] = _product
    _spec.loader.exec_module(_product)

from eer_product_conftest import *  # noqa: E402,F401,F403  (REPO, FIXTURES, hyper, the fixtures)
from eer_product_conftest import _root_logging_restored  # noqa: E402,F401  (autouse)
