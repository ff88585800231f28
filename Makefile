# Two commands set everything up: `make run` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: run test test-all test-kernel-checked bench clean

$(VENV)/.installed: pyproject.toml setup.py lftj/kernel.py lftj/rowsets.py lftj/radix.py lftj/text.py   # compiled in the install
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
# Python's default bytecode cache (__pycache__, ignored by git), even where the environment turns
# it off (PYTHONDONTWRITEBYTECODE=1 here): else every process a test starts (the CLI, the Spark
# workers, kills and restarts) compiles the package's ~140 modules from source again.
unexport PYTHONDONTWRITEBYTECODE
PYTEST_OPTS := -n 2 --dist loadgroup --durations=10

test: $(VENV)/.installed
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest $(PYTEST_OPTS) $(TESTS)

test-all: $(VENV)/.installed
	$(VENV)/bin/lint-imports --no-cache
	DATALOG_TEST_LONG=1 DATALOG_DOCS_SPARK=1 $(PY) -m pytest $(PYTEST_OPTS) $(TESTS)

# The compiled modules' property tests (kernel, radix sort, text; and the engine's on them) on
# bounds-checked builds (boundscheck, wraparound and initializedcheck on), then the normal builds back in place. --force: the two builds share
# build/lib, and without it the second build of a warm tree found the first one's module up to
# date and copied it (the normal install was left bounds-checked, or the checked tests ran unchecked).
test-kernel-checked: $(VENV)/.installed
	DATALOG_KERNEL_CHECKS=1 $(PY) setup.py -q build_ext --inplace --force
	DATALOG_KERNEL_CHECKS=1 $(PY) -m pytest -x -q -p no:cacheprovider tests/test_kernel.py tests/test_rowsets.py tests/test_radix.py tests/test_text.py tests/test_columnar_eval.py; status=$$?; \
	  $(PY) setup.py -q build_ext --inplace --force && exit $$status

bench: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[dev,spark,notebook,bench]'
	$(PY) -m bench static

clean:
	rm -rf $(VENV) build *.egg-info lftj/*.so
