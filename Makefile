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

# make test: every behaviour at a small size, on both cores (pytest-xdist), within CI's 15 minutes.
# make test-all: the same tests with the long campaigns at full length (DATALOG_TEST_LONG=1: the
# 1,000-round Spark chain, full refresh streams, more examples and kills) and the docs' Spark blocks.
TESTS := tests datalog lftj maintenance
PYTEST_OPTS := -n 2 --dist loadgroup --durations=10

test: $(VENV)/.installed
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest $(PYTEST_OPTS) $(TESTS)

test-all: $(VENV)/.installed
	$(VENV)/bin/lint-imports --no-cache
	DATALOG_TEST_LONG=1 DATALOG_DOCS_SPARK=1 $(PY) -m pytest $(PYTEST_OPTS) $(TESTS)

bench: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[dev,spark,notebook,bench]'
	$(PY) -m bench static

clean:
	rm -rf $(VENV) build *.egg-info
