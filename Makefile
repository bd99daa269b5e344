# dynid: `make demo`, `make test`, `make bench` each create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/dynid demo

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests bench

test: lint
	$(BIN)/python -m pytest

bench: $(VENV)/.installed
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
