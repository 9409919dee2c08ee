# Two commands: `make run` opens the GUI on a built-in example, `make test` runs the suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-app
# The extras `make test` installs: `make test TEST_EXTRAS=test,models` adds Flax, Equinox and
# optax, so the tests on real Flax and Equinox programs run instead of skipping (CI does).
TEST_EXTRAS ?= test
comma := ,
TEST_STAMP := $(VENV)/.installed-$(subst $(comma),-,$(TEST_EXTRAS))
EXAMPLE ?= example:mlp

.PHONY: run test lint bench clean

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] <= (3, 13) else "shardscope needs Python 3.11 to 3.13 (jax 0.10.2); found " + sys.version.split()[0] + ": install python3.11 and run make PYTHON=python3.11")'
	@$(PYTHON) -m venv $(VENV) || { echo "make: could not create $(VENV): on Debian/Ubuntu run 'sudo apt-get install python3-venv' and try again" >&2; rm -rf $(VENV); exit 1; }
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	@touch $@

$(TEST_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[$(TEST_EXTRAS)]"
	@touch $@ $(STAMP)

run: $(STAMP)
	$(PY) main.py gui $(EXAMPLE)

test: $(TEST_STAMP)
	$(PY) -m pytest -q

lint: $(TEST_STAMP)
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports

bench: $(TEST_STAMP)
	@for script in tests/benchmarks/bench_*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
