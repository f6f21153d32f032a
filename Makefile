# Thin wrappers: each target calls one script, so `make test` and `bash scripts/test.sh` are the same thing.
# make test PYTEST_ARGS="-k crf"   passes arguments through to pytest.
VENV ?= .venv
export VENV
PYTEST_ARGS ?=

.PHONY: setup test test-all bench demo

setup:
	bash scripts/setup_env.sh

# scripts/test.sh re-checks the setup (a no-op when up to date), then runs the fast tests (no training, no
# subprocess) with $(VENV)/bin/python -m pytest -q -m "not slow and not integration" -n auto (every core), offline
# (HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false)
test: setup
	bash scripts/test.sh $(PYTEST_ARGS)

# every test but the slow real-data runs: also those that train a model or start a process (marked
# integration), as CI runs them
test-all: setup
	bash scripts/test.sh --all $(PYTEST_ARGS)

# one speed report (CRF loss, prediction, bf16 step), also written to benchmarks/speed_report.json
# and into docs/speed.md's generated block; BENCH_ARGS="--threads 2" on an idle machine
BENCH_ARGS ?=
bench: setup
	$(VENV)/bin/python benchmarks/speed_report.py --json benchmarks/speed_report.json --doc docs/speed.md $(BENCH_ARGS)

demo: setup
	bash scripts/demo.sh
