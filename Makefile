# Two commands set everything up: `make run` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: run test test-all bench clean

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,spark,notebook]'
	@touch $@

run: $(VENV)/.installed
	$(VENV)/bin/datalog run programs/transitive_closure/prog.dl -F programs/transitive_closure/facts -D -

test: $(VENV)/.installed
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest tests datalog lftj maintenance

test-all: $(VENV)/.installed
	$(VENV)/bin/lint-imports --no-cache
	DATALOG_LONG=1 $(PY) -m pytest tests datalog lftj maintenance

bench: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[dev,spark,notebook,bench]'
	$(PY) -m bench static

clean:
	rm -rf $(VENV) build *.egg-info
