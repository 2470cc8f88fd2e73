# winviz — set-up and test entry points. Every target that needs Python runs `setup` first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# tools/setup_venv.py builds .venv under a lock (make lab and make test started together: the
# second waits and says so), prints its progress and times; a stamp per install.
LAB_STAMP  := $(VENV)/.installed-lab
TEST_STAMP := $(VENV)/.installed-test
# The browser tests (tests/browser) drive Debian's Chromium with Playwright; never a browser
# downloaded by `playwright install`.
WINVIZ_CHROMIUM ?= /usr/bin/chromium
export WINVIZ_CHROMIUM

.PHONY: setup setup-test lab lab-reset test test-fast test-flink test-pyflink test-spark-cluster lint bench conformance clean browser lessons

# The learner's install: what the lessons need (pyproject's dependencies + the lab extra).
setup: $(LAB_STAMP)

# The lab install plus the test tools (pytest, Playwright, ruff, hypothesis, nbval).
setup-test: $(TEST_STAMP)

$(LAB_STAMP): pyproject.toml
	@$(PYTHON) tools/setup_venv.py $(VENV) lab

$(TEST_STAMP): pyproject.toml
	@$(PYTHON) tools/setup_venv.py $(VENV) test

# The learner's copies: `make lab` copies every lesson that is not in $(LAB_DIR)/ yet (it never
# overwrites one: delete a copy, or run `make lab-reset`, for a fresh one) and opens 00_tour
# there, so opening and running lessons never rewrites the tracked notebooks/. --allow-root
# only when running as root (containers); LAB_ARGS adds options, e.g. LAB_ARGS=--no-browser.
LAB_DIR  ?= lab
LAB_ARGS ?=
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
# The server gives each kernel CurveZMQ keys (ipykernel's kernelspec declares "curve"), so its
# TCP traffic is encrypted; without them every kernel start logs ipykernel's warning "Kernel is
# running over TCP without encryption", which a learner cannot act on.
LAB_KERNELS := --MappingKernelManager.transport_encryption=auto
# Offline, as the kit promises: no "get notified about official Jupyter news?" prompt (its
# "Yes" fetches jupyter.org's feed) and no check of PyPI for a newer JupyterLab (the settings
# tools/browser.py gives the browser tests' server).
# The prompt itself is a setting: tools/lab_overrides.json, installed as the venv's JupyterLab
# defaults (overrides.json; a learner can still turn news on in Settings). It also has JupyterLab
# save the widgets' state in the notebook, so that a lesson reopened draws its saved charts.
# The Extension Manager is read-only (no lookup of PyPI for extensions).
LAB_OFFLINE := --LabApp.news_url=None \
  --LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate \
  --LabApp.extension_manager=readonly
# The tour opens first, and the URL printed (LAB_ARGS=--no-browser) opens it too.
LAB_OPEN := --LabApp.default_url=/lab/tree/00_tour.ipynb
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json

$(LAB_OVERRIDES): tools/lab_overrides.json $(LAB_STAMP)
	@mkdir -p $(@D) && cp tools/lab_overrides.json $@

lab: setup $(LAB_OVERRIDES)
	@mkdir -p $(LAB_DIR)
	@for f in notebooks/*.ipynb; do \
	  [ -e "$(LAB_DIR)/$${f##*/}" ] || { cp "$$f" "$(LAB_DIR)/" && echo "copied $$f to $(LAB_DIR)/"; }; \
	done
	cd $(LAB_DIR) && $(abspath $(VENV))/bin/jupyter lab $(LAB_KERNELS) $(LAB_OFFLINE) $(LAB_OPEN) $(ALLOW_ROOT) $(LAB_ARGS)

# Fresh copies of every lesson in $(LAB_DIR)/ (your edits there are lost: it asks first).
lab-reset:
	@printf 'Replace every lesson in $(LAB_DIR)/ with a fresh copy (your edits are lost)? [y/N] '; \
	read answer; [ "$$answer" = y ] && rm -f $(LAB_DIR)/*.ipynb && echo "removed; run make lab"

lint: setup-test
	$(VENV)/bin/ruff check winviz tests bench tools
	$(VENV)/bin/ruff check notebooks  # lint only: the Flink-style chains are formatted by hand
	$(VENV)/bin/ruff format --check winviz tests bench tools

conformance: setup
	$(PY) -m winviz.conformance run tests/conformance

# Installs Debian's chromium when it is missing and we are root. If it cannot, the browser
# tests fail (they are not skipped) and say how to get it.
browser:
	@if [ -x "$(WINVIZ_CHROMIUM)" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium for the browser tests (apt's output: $${TMPDIR:-/tmp}/winviz-apt-chromium.log)"; \
	  ( apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium ) \
	    >"$${TMPDIR:-/tmp}/winviz-apt-chromium.log" 2>&1 \
	    && echo "installed $$($(WINVIZ_CHROMIUM) --version 2>/dev/null)" \
	    || { tail -n 20 "$${TMPDIR:-/tmp}/winviz-apt-chromium.log"; \
	         echo "warning: apt-get could not install chromium; the browser tests will fail"; }; \
	else \
	  echo "warning: $(WINVIZ_CHROMIUM) is missing and this user cannot install it: the" \
	    "browser tests will fail. As root: apt-get install chromium (or set WINVIZ_CHROMIUM)"; \
	fi

# Every lesson as a self-contained page (no external URL): build/lessons/index.html
lessons: setup
	$(PY) -m winviz.viz.lessons notebooks build/lessons --jobs 2

# make test runs in tiers, each with a header saying which and how far, and its time; pytest
# counts the tests it has run ([ 120/2000]).
PYTEST := $(PY) -m pytest -n 2 --dist loadfile -o console_output_style=count
define tier
	@printf '\n==== make test, tier %s: %s ====\n' '$(1)' '$(2)'
	@start=$$(date +%s); $(3); rc=$$?; \
	  echo "==== tier $(1) $(2): $$(( $$(date +%s) - start )) s ===="; exit $$rc
endef

test: setup-test browser
	$(call tier,1/5,lint,$(MAKE) --no-print-directory lint)
	$(call tier,2/5,conformance transcripts,$(MAKE) --no-print-directory conformance)
	$(call tier,3/5,unit and Spark tests (tests/),$(PYTEST) tests --ignore=tests/browser)
	$(call tier,4/5,browser tests (tests/browser; Chromium),$(PYTEST) tests/browser)
	$(call tier,5/5,every lesson on a clean kernel (nbval),$(PYTEST) --nbval-lax notebooks)

test-fast: setup-test browser
	$(PY) -m pytest -x -q tests

# A real standalone Spark cluster (a master and a worker started from the installed PySpark,
# on 127.0.0.1, stopped afterwards) runs every lesson's Spark twins; each is compared with
# local[*]. SPARK_CLUSTER_ARGS: e.g. --only 00_tour, or --master spark://host:7077 to use an
# existing cluster instead (docs/spark.md).
test-spark-cluster: setup
	$(PY) tests/spark_cluster/run.py $(SPARK_CLUSTER_ARGS)

# The differential tier against real Flink (needs a JDK; downloads apache-flink-libraries).
test-flink: setup
	$(MAKE) -C tests/flink run PY=$(abspath $(PY))

# The optional tier against real PyFlink 2.3 (installs apache-flink==2.3.0 in
# tests/pyflink/.venv; needs a JDK 17): the programs of tests/pyflink_programs on both.
test-pyflink: setup
	$(MAKE) -C tests/pyflink run PY=$(abspath $(PY))

bench: setup
	$(PY) bench/run.py $(BENCH_ARGS)
	$(PY) bench/trace_bench.py $(TRACE_BENCH_ARGS)
	$(PY) bench/parallel_bench.py $(PARALLEL_BENCH_ARGS)
	$(PY) bench/valve_bench.py
	$(PY) bench/viz_bench.py
	$(PY) bench/explore_bench.py
	$(PY) bench/explore_bench.py --events 20000 --changes 4
	$(PY) bench/spark_bench.py
	$(PY) bench/browser_bench.py
	$(PY) bench/lines.py

clean:
	rm -rf $(VENV) $(VENV).lock build .pytest_cache .ruff_cache  # never $(LAB_DIR)/: the learner's work
