# dynid: `make demo`, `make test`, `make bench`, `make docs` each create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint fuzz bench docs clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(VENV)/.installed $(VENV)/.installed-docs $@

# the test extra includes the docs extra: a test install serves `make docs` too
$(VENV)/.installed-docs: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/dynid demo

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests bench docs

test: lint
	$(BIN)/python -m pytest

# the hostile-input properties of tests/test_hostile_inputs.py with a large budget; the counts of
# tried inputs by outcome go to fuzz-report.json
fuzz: $(VENV)/.installed-test
	DYNID_FUZZ_EXAMPLES=$${DYNID_FUZZ_EXAMPLES:-500} DYNID_FUZZ_REPORT=fuzz-report.json \
		$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_hostile_inputs.py
	cat fuzz-report.json

bench: $(VENV)/.installed
	$(BIN)/python bench/run.py

# the site in docs/_build/html; the worked examples run while it builds; warnings are errors
docs: $(VENV)/.installed-docs
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .ruff_cache
	rm -rf docs/_build docs/auto_examples docs/api/generated docs/sg_execution_times.rst
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
