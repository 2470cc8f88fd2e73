# winviz — set-up and test entry points. Every target that needs Python runs `setup` first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: setup lab test test-fast test-flink lint bench conformance clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

lab: setup
	$(VENV)/bin/jupyter lab notebooks/

lint: setup
	$(VENV)/bin/ruff check winviz tests bench
	$(VENV)/bin/ruff format --check winviz tests bench

conformance: setup
	$(PY) -m winviz.conformance run tests/conformance

test: setup lint conformance
	$(PY) -m pytest -n 2 --dist loadfile --nbval-lax tests notebooks

test-fast: setup
	$(PY) -m pytest -x -q tests

# The differential tier against real Flink (needs a JDK; downloads apache-flink-libraries).
test-flink: setup
	$(MAKE) -C tests/flink run PY=$(abspath $(PY))

bench: setup
	$(PY) bench/run.py $(BENCH_ARGS)
	$(PY) bench/viz_bench.py

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache
