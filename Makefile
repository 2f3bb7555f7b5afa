# agentui — every target installs what it needs into a local virtualenv first.
# The two commands a newcomer needs: `make run` and `make test`.

SHELL := /bin/bash
VENV ?= .venv
# First Python >= 3.11 found on PATH (override with `make PYTHON=/path/to/python3.12`).
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then echo $$p; break; fi; done)
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
LOCAL_STAMP := $(VENV)/.installed-local

.PHONY: install run test test-live bench heldout lint typecheck check demo screenshots clean

$(STAMP): pyproject.toml
	@if [ -z "$(PYTHON)" ]; then echo "agentui needs Python >= 3.11 on PATH (python3.11, python3.12 or python3.13)"; exit 2; fi
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $@

install: $(STAMP)

# `make run WORKSPACE=~/project` opens the UI on that directory (default: here)
run: $(STAMP)
	$(VENV)/bin/agentui $(if $(WORKSPACE),--workspace "$(WORKSPACE)")

# pytest exits 5 when it collects no test; that is not a failure of the suite.
test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider; rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; exit $$rc

$(LOCAL_STAMP): $(STAMP)
	CMAKE_ARGS="$${CMAKE_ARGS:--DGGML_NATIVE=OFF}" $(PY) -m pip install --quiet -e '.[dev,local]'
	@touch $@

test-live: $(LOCAL_STAMP)
	$(PY) scripts/fetch_model.py
	$(PY) -m pytest -q -p no:cacheprovider -m live tests/live; rc=$$?; if [ $$rc -eq 5 ]; then echo "no live tests collected"; rc=0; fi; exit $$rc

bench: $(STAMP)
	$(PY) -m benchmarks

# Black-box corpora written by outside testers from the issue texts alone (#12, #13, #15, #16); slow, not
# part of `make test`. Each prints PASS/FAIL per case and `total: P/N`.
# A FAIL listed in heldout/known.txt is a documented disagreement with the tester (see that file).
heldout: $(STAMP)
	@rc=0; for f in heldout/issue12/run_cases.py heldout/issue13/run_cases.py heldout/issue13/run_cases2.py \
	    heldout/issue13/run_cases3.py heldout/issue13/run_cases4.py heldout/issue13/run_cases5.py heldout/issue13/run_cases6.py heldout/issue13/run_cases7.py heldout/issue13/run_cases8.py heldout/issue13/run_cases9.py heldout/issue13/run_cases10.py heldout/issue13/run_cases11.py heldout/issue13/run_cases12.py heldout/issue13/run_cases13.py heldout/issue13/run_cases14.py heldout/issue13/run_cases15.py heldout/issue13/run_cases16.py \
	    heldout/issue15/run_cases.py heldout/issue16/run_cases.py heldout/issue36/run_cases.py; do \
	  out=$$($(PY) $$f $(abspath $(VENV))/bin/agentui 2>/dev/null); \
	  echo "== $$f: $$(echo "$$out" | tail -n 1)"; \
	  new=$$(echo "$$out" | grep '^FAIL' | grep -v -F -f <(grep -v '^#' heldout/known.txt | cut -d' ' -f1 | sed 's/$$/:/; s/^/FAIL /')); \
	  if [ -n "$$new" ]; then echo "$$new"; rc=1; fi; \
	done; exit $$rc

# ruff: style, imports, lines of at most 120 columns, complexity at most 20 (pyproject.toml [tool.ruff])
lint: $(STAMP)
	$(VENV)/bin/ruff check agentui tests benchmarks scripts

# mypy --strict on the core: contracts, bus, roles, memory, llm, tools (pyproject.toml [tool.mypy])
typecheck: $(STAMP)
	$(VENV)/bin/mypy

check: lint typecheck
	$(MAKE) test

# the recorded task at its own pace (about 11 s; `make demo SPEED=0.5` is slower still)
SPEED ?= 1
demo: $(STAMP)
	$(VENV)/bin/agentui replay --speed $(SPEED) demo/recording.jsonl

screenshots: $(STAMP)
	$(PY) scripts/screenshots.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
