# dynid: `make demo`, `make test`, `make bench`, `make docs` each create .venv on first use, with
# the exact versions of constraints.txt (`make lock` refreshes them; `make test-latest` tries the
# newest in a venv of its own).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CONSTRAINTS := constraints.txt
PIP_INSTALL = python -m pip install --quiet -c $(CONSTRAINTS)
# the newest versions pyproject.toml allows, for `make test-latest` (inside .venv: ignored, and
# `make clean` removes it)
LATEST := $(VENV)/latest
PLATFORM := import platform as p; print('Python', p.python_version(), 'on', p.system(), p.machine())

.PHONY: demo test lint fuzz bench docs clean lock lock-check test-latest

$(VENV)/.installed: pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/$(PIP_INSTALL) --upgrade pip
	$(BIN)/$(PIP_INSTALL) -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/$(PIP_INSTALL) --upgrade pip
	$(BIN)/$(PIP_INSTALL) -e '.[test]'
	touch $(VENV)/.installed $(VENV)/.installed-docs $@

# the test extra includes the docs extra: a test install serves `make docs` too
$(VENV)/.installed-docs: pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/$(PIP_INSTALL) --upgrade pip
	$(BIN)/$(PIP_INSTALL) -e '.[docs]'
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/dynid demo

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests bench docs

test: lint
	$(BIN)/python -m pytest

# the hostile-input properties of tests/test_hostile_inputs.py and the model round trips of
# tests/test_model_roundtrip.py with a large budget; the counts of tried inputs by outcome go to
# fuzz-report.json
fuzz: $(VENV)/.installed-test
	DYNID_FUZZ_EXAMPLES=$${DYNID_FUZZ_EXAMPLES:-500} DYNID_FUZZ_REPORT=fuzz-report.json \
		$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_hostile_inputs.py \
		tests/test_model_roundtrip.py
	cat fuzz-report.json

bench: $(VENV)/.installed
	$(BIN)/python bench/run.py

# the site in docs/_build/html; the worked examples run while it builds; warnings are errors
docs: $(VENV)/.installed-docs
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

# constraints.txt anew: a fresh temporary venv, dynid[test] installed unpinned (the newest
# versions pyproject.toml allows), frozen; review the diff, run `make test`, commit
lock:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(PYTHON) -m venv "$$tmp/venv"; \
	"$$tmp/venv/bin/python" -m pip install --quiet --upgrade pip; \
	"$$tmp/venv/bin/python" -m pip install --quiet -e '.[test]'; \
	python=$$("$$tmp/venv/bin/python" -c "$(PLATFORM)"); \
	{ sed -n '/^#/!q;p' $(CONSTRAINTS) | grep -v '^# Frozen with'; \
	  echo "# Frozen with $$python (pip freeze --all --exclude-editable, less setuptools)."; \
	  "$$tmp/venv/bin/python" -m pip freeze --all --exclude-editable | grep -v '^setuptools=='; \
	} > "$$tmp/constraints.txt"; \
	mv "$$tmp/constraints.txt" $(CONSTRAINTS); \
	echo "$(CONSTRAINTS): $$(grep -c '==' $(CONSTRAINTS)) packages pinned ($$python)"

# every package installed in .venv is pinned in constraints.txt at that very version (a new
# dependency without `make lock` shows here); CI runs it
lock-check: $(VENV)/.installed-test
	@grep -v '^#' $(CONSTRAINTS) | grep . > $(VENV)/pins.txt
	@unpinned=$$($(BIN)/python -m pip freeze --all --exclude-editable \
		| grep -v '^setuptools==' | grep -vxFf $(VENV)/pins.txt || true); \
	if [ -n "$$unpinned" ]; then \
		echo "installed but not pinned in $(CONSTRAINTS) (run make lock):"; \
		echo "$$unpinned"; exit 1; \
	fi; echo "$(CONSTRAINTS): every installed package is pinned"

# the suite against the newest versions pyproject.toml allows, in $(LATEST) (upgraded on every
# run): drift seen on purpose, before `make lock` takes it; lists what differs from the pins
test-latest:
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST)/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager -e '.[test]'
	@$(LATEST)/bin/python -m pip freeze --all --exclude-editable | grep -v '^setuptools==' \
		> $(LATEST)/freeze.txt
	@echo "newer than $(CONSTRAINTS) (or not in it):"; \
		grep -v '^#' $(CONSTRAINTS) | grep . | grep -vxFf - $(LATEST)/freeze.txt || echo "  none"
	$(LATEST)/bin/ruff check src tests bench docs
	$(LATEST)/bin/python -m pytest

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .ruff_cache
	rm -rf docs/_build docs/auto_examples docs/api/generated docs/sg_execution_times.rst
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
